from __future__ import annotations

import os
import re
import time

from .authors import SESSION_WHO_COLUMNS, author_filter, row_recorded_by
from .caches import SPACED_FORMS, STAMP_SECONDS
from .code_refs import CodeReference, code_references
from .constants import (
    BM25_WEIGHT_CLAIM,
    BM25_WEIGHT_CODE,
    BM25_WEIGHT_DETAIL,
    BM25_WEIGHT_PATHS,
    BM25_WEIGHT_SUMMARY,
    BM25_WEIGHT_SYMBOLS,
    BM25_WEIGHT_SYMPTOM,
    CANDIDATE_FLOOR,
    CANDIDATE_WINDOW,
    EVIDENCE_KINDS,
    MATCH_COUNT_EXACT,
    MAX_LIMIT,
    MAX_QUERY_TERMS,
    RANK_CODE_SHARE,
    RANK_CONFIDENCE_WEIGHT,
    RANK_COVERAGE_POWER,
    RANK_FRESHNESS_PENALTY,
    RANK_KIND_BONUS,
    RANK_NAMED_BONUS,
    RANK_RECENCY_BONUS,
    RANK_RECENCY_HALF_LIFE_DAYS,
    RANK_SUMMARY_SHARE,
    RANK_TOPOLOGY_BONUS,
    RANK_WEAK_SHARE,
    RANK_WEIGHT_TEXT,
    STOP_WORDS,
    _lazy_pattern,
)
from .errors import NotFoundError, UsageError, WctxError
from .freshness import SEARCH_ANCHOR_COLUMNS, _load_anchors, freshness_of
from .git import GitRepo
from .helpers import is_utf8, split_identifier
from .records import _repo_containing, _repos, resolve_repo
from .repos import _workspace_id
from .topology import Topology, reach_text
from .words import (
    _term_forms,
    fts_query,
    identifier_words,
    index_text,
    match_forms,
    matched_word,
    query_terms,
    selecting_terms,
)

# ----------------------------------------------------------------------------------------------
# Search: scope -> candidates -> rerank -> explain
# ----------------------------------------------------------------------------------------------
# scope       which repositories a caller sees, and how each is related to the caller's (cached per
#             store generation: no query, no git, no file system walk per call once warm);
# candidates  FTS5 rows that match every used term first, then rows matching the rarest terms (a
#             bound keeps common words from adding their whole posting list), then items whose
#             session summary matches; each carries the facts the rerank reads;
# rerank      text strength (bm25) scaled by what the query names (repository, symbol, path) and,
#             mildly, by topology, freshness, confidence, kind and recency;
# explain     the one function that turns a result's facts into its reasons.

_STAMP_RE = _lazy_pattern(r"(\d{4})-(\d{1,2})-(\d{1,2})T(\d{1,2}):(\d{1,2}):(\d{1,2})Z\Z")


def _utc_day_seconds(y, mo, d):
    """Seconds since 1970-01-01 of 00:00 UTC on a proleptic Gregorian date (days-from-civil)."""
    yy = y - (mo <= 2)
    era = yy // 400
    yoe = yy - era * 400
    doy = (153 * (mo + (-3 if mo > 2 else 9)) + 2) // 5 + d - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    return days * 86400


def _stamp_seconds(stamp):
    """Seconds since the epoch of a stored UTC stamp (2026-03-01T12:00:00Z), or None."""
    return _text_stamp_seconds(stamp) if isinstance(stamp, str) else None


@STAMP_SECONDS
def _text_stamp_seconds(stamp):
    """_stamp_seconds of a string, remembered: search reads the same items' stamps query after
    query."""
    # Parsed by hand and converted as UTC (the stamp's Z), without time.strptime/mktime: search
    # scores every candidate, and those cost ~20 us a call.
    m = _STAMP_RE.match(stamp)
    if m is None:
        return None
    y, mo, d, hh, mi, ss = (int(g) for g in m.groups())
    if not (1 <= mo <= 12 and 1 <= d <= 31 and hh <= 23 and mi <= 59 and ss <= 61):
        return None
    return _utc_day_seconds(y, mo, d) + hh * 3600 + mi * 60 + ss


def _recency_bonus(created_at, now):
    ts = _stamp_seconds(created_at)
    if ts is None:
        return 0.0
    age_days = max(0.0, (now - ts) / 86400.0)
    return RANK_RECENCY_BONUS * (0.5 ** (age_days / RANK_RECENCY_HALF_LIFE_DAYS))


def _days_ago(stamp, now):
    ts = _stamp_seconds(stamp)
    if ts is None:
        return "at an unknown time"
    days = int(max(0.0, now - ts) // 86400)
    return "today" if days == 0 else "yesterday" if days == 1 else "%d days ago" % days


def age_text(created_at, confirmed_at, now=None):
    """How old an item is and when someone last confirmed it: "recorded 94 days ago, never
    confirmed". A fact, never a verdict: age alone says nothing about the cited code."""
    now = time.time() if now is None else now
    return "recorded %s, %s" % (
        _days_ago(created_at, now),
        "confirmed " + _days_ago(confirmed_at, now) if confirmed_at else "never confirmed",
    )


def _evidence_rows(store, rids):
    rows = {}
    rids = list(rids)
    for i in range(0, len(rids), 500):
        chunk = rids[i : i + 500]
        for row in store.all(
            "SELECT e.*, s.summary AS session_summary, %s FROM evidence e JOIN sessions s ON s.id = e.session_id "
            "WHERE e.rid IN (%s)" % (SESSION_WHO_COLUMNS, ",".join("?" * len(chunk))),
            chunk,
        ):
            rows[row["rid"]] = row
    return rows


# The fields of one evidence item as search, show, sessions and the overview return it (CLI --json
# and MCP), with their JSON types; wctx_mcp derives its result schemas from this.
RESULT_FIELDS = (
    ("id", "string"),
    ("kind", "string"),
    ("claim", "string"),
    ("detail", ["string", "null"]),
    ("symptom", ["string", "null"]),
    ("repo", ["string", "null"]),
    ("session", ["string", "null"]),
    ("created_at", ["string", "null"]),
    ("confidence", ["number", "null"]),
    ("status", ["string", "null"]),
    ("superseded_by", ["string", "null"]),
    ("files", "array"),
    ("confirmed_at", ["string", "null"]),
    ("age", "string"),
    ("recorded_by", "string"),
)
# What search adds to each result.
SEARCH_RESULT_FIELDS = RESULT_FIELDS + (("reasons", "array"), ("freshness", "object"))


def _result_dict(row, anchors, files=None, now=None):
    """One item as search, show, sessions and the overview return it (RESULT_FIELDS); ``files``
    when the caller has them from ``anchors`` already."""
    if files is None:
        files = _anchor_files(row, anchors)
    return {
        "id": row["id"],
        "kind": row["kind"],
        "claim": row["claim"],
        "detail": row["detail"],
        "symptom": row["symptom"],
        "repo": row["repo_name"],
        "session": row["session_id"],
        "created_at": row["created_at"],
        "confidence": row["confidence"],
        "status": row["status"],
        "superseded_by": row["superseded_by"],
        "files": files,
        "confirmed_at": row["confirmed_at"],
        "age": age_text(row["created_at"], row["confirmed_at"], now),
        "recorded_by": row_recorded_by(row),
    }


def _anchor_files(row, anchors):
    """An item's cited files as results list them: path#symbol, prefixed with the repository's
    name where it is not the item's own."""
    files = []
    for a in anchors:
        if a["path"]:
            spec = a["path"] + ("#" + a["symbol"] if a["symbol"] else "")
            if a["repo_name"] != row["repo_name"]:
                spec = a["repo_name"] + ":" + spec
            files.append(spec)
    return files


class SearchScope:
    """Who is asking and what they see: the origin repository (or None), its Topology, the
    repository ids in scope (None: every repository) and the names searched, in order."""

    __slots__ = ("origin", "topology", "repo_ids", "searched", "all_scope")

    def __init__(self, origin, topology, repo_ids, searched, all_scope):
        self.origin = origin
        self.topology = topology
        self.repo_ids = repo_ids
        self.searched = searched
        self.all_scope = all_scope


class Candidate:
    """One evidence item while search ranks it: the columns the rerank reads, the text strength
    of its match (bm25, positive, larger is better), the tier that found it and the score."""

    __slots__ = (
        "rid", "repo_id", "kind", "confidence", "created_at", "strength", "tier", "score", "named", "coverage",
        "text_hits", "weak", "band",
    )  # fmt: skip

    def __init__(self, rid, repo_id, kind, confidence, created_at, strength, tier):
        self.rid = rid
        self.repo_id = repo_id
        self.kind = kind
        self.confidence = confidence
        self.created_at = created_at
        self.strength = strength
        self.tier = tier  # "all" terms, "any" term, "summary", "tail" (paging), or a fallback kind
        self.score = strength
        self.coverage = 1.0  # share of the query's term weight the item holds (_query_coverage)
        self.named = ()  # what of the query this item is about: ("repository", name), ("symbol", s), ("file", p)
        self.text_hits = None  # the query terms its claim and detail hold, once known (_query_coverage)
        self.weak = False  # it holds only the query's common words (_query_coverage): ranked after the rest
        self.band = 1 if tier in ("all", "any") else 0  # 1: past the first CANDIDATE_FLOOR of its list


class Fallback:
    """Why an item is shown although the query matched nothing (or was not asked), as facts:
    ``how`` is "edited" (it cites ``path``, which the caller's working tree changed), "question"
    (an open question of the caller's repository), "recent" (recent in the caller's repository or,
    ``nearby``, a related one), "recorded" (recorded in ``repo`` by ``session`` of ``agent`` on
    ``at``), "arrived" (a teammate's, whose ``session`` arrived here on ``at``), "open" (an open
    question or known issue, by ``kind``) or "went_stale" (shown by a
    briefing on ``at``, ``verdict`` since)."""

    __slots__ = ("how", "path", "nearby", "repo", "session", "agent", "at", "kind", "verdict")

    def __init__(self, how, path=None, nearby=False, repo=None, session=None, agent=None, at=None, kind=None,
                 verdict=None):  # fmt: skip
        self.how = how
        self.path = path
        self.nearby = nearby
        self.repo = repo
        self.session = session
        self.agent = agent
        self.at = at
        self.kind = kind
        self.verdict = verdict


class ResultFacts:
    """Everything a result's reasons are made from; ``explain`` is the only reader. Matches are
    (query word, the word of the item it matched) pairs; ``reach`` a topology Reach (None: outside
    the caller's workspaces), ``fallback`` a Fallback, ``code_reference`` a CodeReference,
    ``found_by`` ((phrasing number, rank there), ...) when several phrasings were fused."""

    __slots__ = (
        "text_hits", "symbol_hits", "path_hits", "stem_hits", "code_hits", "summary_hits", "weak", "named", "fallback",
        "code_reference", "reach", "all_scope", "edited", "confidence", "status", "superseded_by", "freshness",
        "age", "found_by", "recorded_by", "symptom_hits",
    )  # fmt: skip

    def __init__(
        self, text_hits=(), symbol_hits=(), path_hits=(), stem_hits=(), code_hits=(), summary_hits=(), weak=False, named=(),
        fallback=None, code_reference=None, reach=None, all_scope=False, edited=None, confidence=None,
        status="active", superseded_by=None, freshness=None, age=None, found_by=(), recorded_by="you",
        symptom_hits=(),
    ):  # fmt: skip
        self.text_hits = text_hits
        self.symbol_hits = symbol_hits
        self.path_hits = path_hits
        self.stem_hits = stem_hits
        self.code_hits = code_hits
        self.summary_hits = summary_hits
        self.weak = weak
        self.named = named
        self.fallback = fallback
        self.code_reference = code_reference
        self.reach = reach
        self.all_scope = all_scope
        self.edited = edited
        self.confidence = confidence
        self.status = status
        self.superseded_by = superseded_by
        self.freshness = freshness
        self.age = age
        self.found_by = found_by
        self.recorded_by = recorded_by
        self.symptom_hits = symptom_hits  # query words only how the problem shows itself holds


def _freshness_reason(fresh):
    verdict = fresh["verdict"]
    first = fresh["reasons"][0] if fresh.get("reasons") else ""
    if verdict == "current":
        return (
            "current: cited code unchanged since capture"
            if "unchanged" in first or not first
            else "current: " + first
        )
    return "%s: %s" % (verdict.replace("_", " "), first)


def _pairs_text(pairs):
    """Query words beside the words they matched: "expiring as expired, token"."""
    return ", ".join(q if w is None or w.lower() == q else "%s as %s" % (q, w) for q, w in pairs[:8])


def _fallback_text(f):
    if f.how == "edited":
        return "cites %s, which has uncommitted changes in your working tree" % f.path
    if f.how == "question":
        return "open question recorded in this repository"
    if f.how == "recent":
        return "recent in %s" % ("a related repository" if f.nearby else "this repository")
    if f.how == "recorded":
        return "recorded in %s by session %s (%s, %s)" % (
            f.repo or "no registered repository", f.session, f.agent, (f.at or "")[:10],
        )  # fmt: skip
    if f.how == "arrived":
        return "a teammate's, arrived %s from session %s (%s)" % ((f.at or "")[:10], f.session, f.agent)
    if f.how == "open":
        return "open question" if f.kind == "question" else "known issue"
    return "%s when a briefing showed it on %s" % (f.verdict.replace("_", " "), (f.at or "")[:10])


def _found_by_text(found_by):
    """'found by phrasings 1 (rank 2) and 3 (rank 5)'."""
    said = ["%d (rank %d)" % pair for pair in found_by]
    if len(said) > 1:
        said = [", ".join(said[:-1]), said[-1]]
    return "found by phrasing%s %s" % ("s" if len(found_by) > 1 else "", " and ".join(said))


def explain(facts):
    """The reasons of one search result (or briefing entry), in a fixed order: why it matched (or
    why it is shown without a match), which phrasings found it, what of the query it is about,
    where it lives relative to the caller, who edited what it cites, its stated confidence, its
    status, its freshness and its age. The one function that turns facts into words."""
    reasons = []
    if facts.code_reference is not None:
        ref = (
            facts.code_reference
        )  # 'src/App.tsx (modified) calls uploadDocument; upload-sdk finding ev-… cites …'
        # Labelled by the item's own repository; cited code of another one is named with it.
        about = ref.item_repo or ref.cited_repo
        reasons.append(
            "%s (%s) %s %s; %s %s %s cites %s%s"
            % (ref.local_path, ref.local_status, ref.how, ref.name, about, ref.kind.replace("_", " "),
               ref.evidence_id, "" if about == ref.cited_repo else ref.cited_repo + ":", ref.cited_spec)
        )  # fmt: skip
    elif facts.fallback is not None:
        reasons.append(_fallback_text(facts.fallback))
    elif facts.weak:
        held = list(facts.text_hits) + list(facts.symptom_hits) + list(facts.code_hits)
        if held:
            reasons.append(
                "weak match: only the common word%s %s" % ("s" if len(held) > 1 else "", _pairs_text(held))
            )
        else:
            reasons.append("weak match: only its session summary shares %s" % _pairs_text(facts.summary_hits))
    else:
        if facts.text_hits:
            reasons.append("matches the query text (%s)" % _pairs_text(facts.text_hits))
        if facts.symptom_hits:
            reasons.append("matches how it shows itself (%s)" % _pairs_text(facts.symptom_hits))
        reasons.extend("matches symbol %s" % s for s in facts.symbol_hits)
        reasons.extend("matches file %s" % p for p in facts.path_hits)
        reasons.extend(
            "shares word stems with %s (%s)" % (n, _pairs_text(pairs)) for n, pairs in facts.stem_hits
        )
        if facts.code_hits:
            reasons.append("matches words of the cited code (%s)" % _pairs_text(facts.code_hits))
        if not reasons and facts.summary_hits:
            reasons.append("matches the session summary (%s)" % _pairs_text(facts.summary_hits))
    if facts.found_by:
        reasons.append(_found_by_text(facts.found_by))
    for what, name in facts.named or ():
        reasons.append("query names %s %s" % (what, name))
    if facts.reach is not None:
        reasons.append(reach_text(facts.reach))
    elif facts.all_scope:
        reasons.append("outside the caller's workspaces (--all)" if facts.all_scope == "origin" else
                       "searched all repositories (--all)")  # fmt: skip
    else:
        reasons.append("outside the workspace")
    if facts.edited:
        sid, agent, at, path, repo = facts.edited
        reasons.append("session %s (%s, %s) edited %s in %s" % (sid, agent, (at or "")[:10], path, repo))
    if facts.recorded_by != "you":  # a teammate's item says whose it is; one's own goes unsaid
        reasons.append("recorded by " + facts.recorded_by)
    if facts.confidence is not None:
        reasons.append("stated confidence %.2g" % facts.confidence)
    if facts.status != "active":
        reasons.append(facts.status + (" by " + facts.superseded_by if facts.superseded_by else ""))
    reasons.append(_freshness_reason(facts.freshness))
    if facts.age:
        reasons.append(facts.age)  # "recorded 94 days ago, never confirmed": a fact, not a verdict
    return reasons


# -- scope ---------------------------------------------------------------------------------------


def _search_origin(store, repo, cwd):
    """resolve_repo, with a registered name looked up in a map kept per store generation, and
    the repository holding the cwd among the repositories kept so (where it stands is looked up
    each time: a checkout may move)."""
    if repo:
        named = store.memo(("repo-by-name",), lambda: {r.name: r for r in _repos(store)}).get(repo)
        if named is not None:
            return named
    else:
        here = _repo_containing(store.memo(("repos",), lambda: _repos(store)), cwd or os.getcwd())
        if here is not None:
            return here
    return resolve_repo(store, repo, cwd=cwd)


def _search_scope(store, repo, cwd, all_scope, workspace):
    """The scope of one search; the Topology behind it is built once per store generation."""
    if workspace:
        _workspace_id(store, workspace, create=False)  # a misspelt workspace is an error, wherever
    if all_scope:
        try:
            origin = resolve_repo(store, repo, cwd=cwd)
        except NotFoundError:
            if repo:
                raise
            origin = None
    elif workspace and not repo and _repo_containing(_repos(store), cwd or os.getcwd()) is None:
        origin = None
    else:
        origin = _search_origin(store, repo, cwd)
    ws = None if all_scope or origin else workspace
    topology = store.memo(
        ("topology", origin.id if origin else None, ws), lambda: Topology(store, origin, ws)
    )
    if all_scope:
        names = store.memo(("repo-names",), lambda: sorted(r.name for r in _repos(store)))
        return SearchScope(origin, topology, None, names, True)
    ids = topology.repo_ids()
    every = store.memo(("repo-ids",), lambda: frozenset(r.id for r in _repos(store)))
    # A scope that holds every registered repository needs no filter in SQL, unless some evidence
    # waits for a repository not registered (removed, or imported before it was): that stays out.
    waiting = store.memo(
        ("waiting",), lambda: store.one("SELECT 1 FROM evidence WHERE repo_id IS NULL LIMIT 1")
    )
    unfiltered = every <= set(ids) and waiting is None
    return SearchScope(origin, topology, None if unfiltered else ids, topology.searched_names(), False)


# -- candidates ----------------------------------------------------------------------------------


def _form_docs(store, form):
    """How many items hold the index word ``form`` (the FTS5 vocabulary; for a phrase, an upper
    estimate), cached per store generation; None when the index would tokenize ``form`` otherwise (anything but lower-case
    ASCII letters and digits): then only FTS5 itself knows what it matches."""

    def build():
        if " " in form:  # an identifier's phrase: at most as many as hold its rarest word
            counts = [_form_docs(store, word) for word in form.split()]
            return None if None in counts else min(counts)
        if not (form.isascii() and form.isalnum() and form.lower() == form):
            return None
        store.db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.evidence_vocab USING fts5vocab(main, evidence_fts, row)"
        )
        row = store.db.execute("SELECT doc FROM temp.evidence_vocab WHERE term = ?", (form,)).fetchone()
        return row[0] if row else 0

    return store.memo(("form", form), build)


def _doc_freqs(store, terms):
    """{term: number of items whose text holds a word the term matches}, from the FTS5 vocabulary
    (an upper estimate for a term of several forms: a row holding two of them counts twice),
    cached per store generation."""
    out = {}
    total = None
    for t in terms:
        hit = store.memo(("df", t), None)
        if hit is None:
            if total is None:
                total = store.memo(("items",), lambda: store.one("SELECT count(*) FROM evidence_fts")[0])
            df = sum(_form_docs(store, form) or 0 for form in match_forms(t))
            hit = store.memo(("df", t), lambda df=df, total=total: min(df, total))
        out[t] = hit
    return out


def select_terms(store, terms, limit=MAX_QUERY_TERMS):
    """The ``limit`` most informative terms (rarest in the store, the earlier on a tie), in
    query order. A pasted traceback keeps its decisive frame, not its first words."""
    if len(terms) <= limit:
        return list(terms)
    df = _doc_freqs(store, terms)
    # A term no item holds finds nothing; among the rest the rarest. A stable sort: earlier on a tie.
    keep = set(sorted(terms, key=lambda t: (df[t] == 0, df[t]))[:limit])
    return [t for t in terms if t in keep]


def _bm25():
    """The bm25 call of every ranked FTS5 query, the column weights as the constants say now."""
    return "bm25(evidence_fts, %s, %s, %s, %s, %s, %s)" % (
        BM25_WEIGHT_CLAIM, BM25_WEIGHT_SYMBOLS, BM25_WEIGHT_PATHS, BM25_WEIGHT_DETAIL, BM25_WEIGHT_CODE,
        BM25_WEIGHT_SYMPTOM,
    )  # fmt: skip


# The fifth column is when the item was last renewed: a confirmation counts as a recording for
# the mild recency preference (Candidate.created_at).
_RANK_COLUMNS = "e.rid, e.repo_id, e.kind, e.confidence, max(e.created_at, coalesce(e.confirmed_at, ''))"


def _scope_clause(scope, kinds, include_inactive, who=None):
    """(SQL conditions on evidence ``e``, parameters) for the scope and filters of a search;
    ``who``, an AuthorFilter (hidden items and authors, an author asked for)."""
    where, params = [], []
    if who is not None:
        where.extend(who.sql)
        params.extend(who.params)
    if not include_inactive:
        where.append("e.status = 'active'")
    if kinds:
        where.append("e.kind IN (%s)" % ",".join("?" * len(kinds)))
        params.extend(kinds)
    if scope.repo_ids is not None:
        where.append("e.repo_id IN (%s)" % ",".join("?" * len(scope.repo_ids)))
        params.extend(scope.repo_ids)
    return where, params


def _scope_test(scope, kinds, include_inactive, who=None):
    """The conditions of _scope_clause as a test of a row of _rank_rows: True when the item is in
    scope and passes the filters."""
    kinds = frozenset(kinds or ())
    repo_ids = None if scope.repo_ids is None else frozenset(scope.repo_ids)

    def admits(row):
        return (
            (include_inactive or row[5] == "active")
            and (not kinds or row[2] in kinds)
            and (repo_ids is None or row[1] in repo_ids)
            and (who is None or who.admits(row[0]))
        )

    return admits


RANK_ROWS_KEPT = 20000  # rows (~0.4 kB each) _rank_rows keeps for one store generation before starting over


def _rank_rows(store, rids):
    """{rid: (_RANK_COLUMNS..., status)} for these evidence rows, read once per store generation:
    the same matches come back query after query."""
    memo = store.memo(("rank-rows",), dict)
    missing = [rid for rid in rids if rid not in memo]
    if missing:
        if len(memo) + len(missing) > RANK_ROWS_KEPT:
            memo.clear()  # starting over: every row asked for is read, those it held too
            missing = list(dict.fromkeys(rids))
        for i in range(0, len(missing), 500):
            chunk = missing[i : i + 500]
            for row in _plain_rows(
                store,
                "SELECT %s, e.status FROM evidence e WHERE e.rid IN (%s)"
                % (_RANK_COLUMNS, ",".join("?" * len(chunk))),
                chunk,
            ):
                memo[row[0]] = row
    return memo


def _plain_rows(store, sql, params):
    """``store.all`` as plain tuples: search reads these rows by position, and a sqlite3.Row
    for each of them costs about as much again as the lookup."""
    cursor = store.db.cursor()
    cursor.row_factory = None
    return cursor.execute(sql, params).fetchall()


def _ranked_matches(store, match, where, params, limit, tier, admits, exclude=(), require=None):
    """(the ``limit`` best bm25 matches of ``match`` passing ``where``, as Candidates, best first;
    whether more in scope are known to match).

    FTS5 ranks its best CANDIDATE_WINDOW x ``limit`` matches on its own and only those are looked
    up and filtered; when that leaves fewer than ``limit`` although the window was full (a narrow
    scope), every match is joined: the result is always the joined query's. ``admits``
    (_scope_test of the scope ``where`` states) filters the window's rows in memory (_rank_rows).
    ``require``: a second MATCH expression a row must match too (scored by ``match`` alone)."""
    window = limit * CANDIDATE_WINDOW + len(exclude)
    bound, required = "", []
    if require is not None:
        bound = " AND rowid IN (SELECT rowid FROM evidence_fts WHERE evidence_fts MATCH ?)"
        required = [require]
    ranked = _plain_rows(
        store,
        "SELECT rowid, %s AS score FROM evidence_fts WHERE evidence_fts MATCH ?%s ORDER BY score LIMIT ?"
        % (_bm25(), bound),
        [match] + required + [window],
    )
    window_full = len(ranked) >= window
    if exclude:
        skip = set(exclude)
        ranked = [r for r in ranked if r[0] not in skip]
    if not ranked:
        return [], False
    # Looked up best first, a little more than ``limit`` at a time, until ``limit`` pass the
    # filter: an unfiltered search reads ~limit rows, not the window. A step ends after every row
    # tied with its last score, so the sort below sees what it would over the whole window.
    # Each match is kept as (bm25 score, -rid, rank row): sorted, best first, newest on a tie.
    found, start, n = [], 0, len(ranked)
    while start < n and len(found) < limit:
        end = min(n, start + max(limit - len(found) + 8, start))  # a narrow scope: doubling steps
        while end < n and ranked[end][1] == ranked[end - 1][1]:
            end += 1
        chunk = ranked[start:end]
        held = _rank_rows(store, [r[0] for r in chunk])
        for rid, score in chunk:
            row = held.get(rid)
            if row is not None and admits(row):
                found.append((score, -rid, row))
        start = end
    if len(found) < limit and window_full:
        clause = "".join(" AND " + w for w in where)
        if exclude:
            clause += " AND e.rid NOT IN (%s)" % ",".join("?" * len(exclude))
        rows = _plain_rows(
            store,
            "SELECT %s, %s AS score FROM evidence_fts JOIN evidence e ON e.rid = evidence_fts.rowid "
            "WHERE evidence_fts MATCH ?%s%s ORDER BY score LIMIT ?"
            % (_RANK_COLUMNS, _bm25(), bound.replace(" rowid IN", " evidence_fts.rowid IN"), clause),
            [match] + required + list(params) + list(exclude) + [limit],
        )
        found = [(r[5], -r[0], r) for r in rows]
    found.sort()
    out = [Candidate(r[0], r[1], r[2], r[3], r[4], -score, tier) for score, _, r in found[:limit]]
    return out, len(found) > limit


def _summary_matches(store, terms, where, params, limit, exclude):
    """Items whose session summary matches (a summary is indexed once per session), as weak
    Candidates: a summary is context for the items, not their content."""
    sessions = store.all(
        "SELECT session, bm25(session_fts) AS score FROM session_fts WHERE session_fts MATCH ? ORDER BY score LIMIT ?",
        (fts_query(terms), limit),
    )
    if not sessions:
        return []
    strength = {}
    for r in sessions:
        strength.setdefault(r[0], -r[1] * BM25_WEIGHT_SUMMARY / BM25_WEIGHT_CLAIM)
    clause = "".join(" AND " + w for w in where)
    if exclude:
        clause += " AND e.rid NOT IN (%s)" % ",".join("?" * len(exclude))
    rows = store.all(
        "SELECT %s, e.session_id FROM evidence e WHERE e.session_id IN (%s)%s ORDER BY e.rid DESC LIMIT ?"
        % (_RANK_COLUMNS, ",".join("?" * len(strength)), clause),
        list(strength) + list(params) + list(exclude) + [limit],
    )
    return [Candidate(r[0], r[1], r[2], r[3], r[4], strength[r[5]], "summary") for r in rows]


def _text_candidates(store, terms, words, where, params, pool, rank, admits):
    """(candidates for query ``terms``, best text match first, at most ``pool`` of each kind; whether
    more items in scope are known to match a term).

    ``--rank fts`` is plain FTS5: every term ORed, bm25 order. The default ranks the union of the
    rows holding every term and that same plain list, each its best ``pool``: whatever plain bm25
    ranks high is a candidate, so the rerank can only reorder it, never lose it. Both are one
    ranked FTS5 query each, as the plain search is. Still short of ``pool``, items whose session
    summary matches follow (newest first). A candidate past the first CANDIDATE_FLOOR of both lists
    is in the second band (Candidate.band): it ranks after them, so a larger limit adds results
    after the first ones and never changes them. A row must match one of ``words`` (the terms that
    select: selecting_terms); the others only score."""
    require = fts_query(words) if len(words) < len(terms) else None  # a short number alone selects nothing
    plain, beyond = _ranked_matches(
        store, fts_query(terms), where, params, pool, "any", admits, require=require
    )
    if rank == "fts":
        return plain, beyond
    every, beyond_all = (
        _ranked_matches(store, fts_query(terms, all_terms=True), where, params, pool, "all", admits)
        if len(terms) > 1 and not any(_matches_nothing(store, t) for t in terms)
        else ([], False)
    )
    found = {}
    for ranked in (every, plain):
        for n, c in enumerate(ranked):
            if c.rid not in found:
                found[c.rid] = c
            else:  # plain bm25 scores every term, an identifier's parts too: one scale for all
                found[c.rid].strength = found[c.rid].score = c.strength
            if n < CANDIDATE_FLOOR:
                found[c.rid].band = 0
    found = list(found.values())
    if len(found) < pool:
        seen = [c.rid for c in found]
        for c in _summary_matches(store, words, where, params, pool - len(found), seen):
            c.band = 0 if len(found) < CANDIDATE_FLOOR else 1
            found.append(c)
    return found, beyond or beyond_all


def _matches_nothing(store, term):
    """True when the index holds no word any form of ``term`` matches (known, not guessed)."""
    return all(_form_docs(store, form) == 0 for form in match_forms(term))


def _rows_by_rid(store, rids):
    """The rerank columns (_RANK_COLUMNS) of these evidence rows."""
    rows = []
    for i in range(0, len(rids), 500):
        chunk = rids[i : i + 500]
        rows.extend(
            store.all(
                "SELECT %s FROM evidence e WHERE e.rid IN (%s)" % (_RANK_COLUMNS, ",".join("?" * len(chunk))),
                chunk,
            )
        )
    return rows


def _fallback_candidates(store, scope, where, params, limit, files=None, cwd=None):
    """No usable query terms: evidence that the code being changed references (recall by code
    reference), evidence on files the caller is editing, then open questions of the caller's repo,
    then recent items nearest first. Scores keep that order; the tier carries why each is shown
    (a CodeReference for the first kind, a Fallback for the others)."""
    out = {}
    origin = scope.origin
    clause = "".join(" AND " + w for w in where)
    refs = code_references(store, origin, scope.topology.repo_ids(), files, cwd, where, params)[: limit * 5]
    if refs:
        rows = {r[0]: r for r in _rows_by_rid(store, [ref.rid for ref in refs])}
        for n, ref in enumerate(refs):
            row = rows[ref.rid]
            score = 4.0 + 0.5 * (len(refs) - n) / len(refs)  # in code_references' order
            out[ref.rid] = Candidate(row[0], row[1], row[2], row[3], row[4], score, ref)
    if origin is not None and os.path.isdir(origin.path):
        try:
            modified = GitRepo(origin.path).modified_paths()
        except WctxError:
            modified = []
        modified = [p for p in modified if is_utf8(p)]  # no cited path is anything else
        for i in range(0, len(modified), 500):
            chunk = modified[i : i + 500]
            for row in store.all(
                "SELECT DISTINCT %s, a.path FROM anchors a JOIN evidence e ON e.rid = a.evidence_rid "
                "WHERE a.repo_id = ? AND a.path IN (%s)%s ORDER BY e.created_at DESC LIMIT 200"
                % (_RANK_COLUMNS, ",".join("?" * len(chunk)), clause),
                [origin.id] + chunk + params,
            ):
                if row[0] not in out:
                    out[row[0]] = Candidate(
                        row[0], row[1], row[2], row[3], row[4], 3.0, Fallback("edited", row[5])
                    )
        for row in store.all(
            "SELECT %s FROM evidence e WHERE e.repo_id = ? AND e.kind = 'question'%s "
            "ORDER BY e.created_at DESC LIMIT ?" % (_RANK_COLUMNS, clause),
            [origin.id] + params + [limit],
        ):
            if row[0] not in out:
                out[row[0]] = Candidate(row[0], row[1], row[2], row[3], row[4], 2.0, Fallback("question"))
    for row in store.all(
        "SELECT %s FROM evidence e%s ORDER BY e.created_at DESC, e.rid DESC LIMIT ?"
        % (_RANK_COLUMNS, (" WHERE " + " AND ".join(where)) if where else ""),
        params + [max(limit * 5, 50)],
    ):
        if row[0] not in out:
            distance = scope.topology.reach.get(row[1], (4,))[0]
            recent = Fallback("recent", nearby=distance != 0)
            out[row[0]] = Candidate(row[0], row[1], row[2], row[3], row[4], 1.0 - 0.1 * distance, recent)
    return list(out.values())


def _tail_candidates(store, terms, where, params, before_rid, exclude, limit):
    """The pages after the ranked head: items matching any term, newest first, below ``before_rid``
    (None: from the newest), ``exclude`` (the head) left out. FTS5 walks its rowids in order, so a
    page costs the same however deep it is."""
    clause = "".join(" AND " + w for w in where)
    if exclude:
        clause += " AND e.rid NOT IN (%s)" % ",".join("?" * len(exclude))
    if before_rid is not None:
        clause = " AND f.rowid < ?" + clause
        params = [before_rid] + list(params)
    rows = _plain_rows(
        store,
        "SELECT %s FROM evidence_fts f JOIN evidence e ON e.rid = f.rowid WHERE f.evidence_fts MATCH ?%s "
        "ORDER BY f.rowid DESC LIMIT ?" % (_RANK_COLUMNS, clause),
        [fts_query(terms)] + list(params) + list(exclude) + [limit],
    )
    return [Candidate(r[0], r[1], r[2], r[3], r[4], 0.0, "tail") for r in rows]


def _more_matches(store, terms, where, params, cands, matches, exact):
    """True when some item in scope matches a term of the query besides the ranked ``cands``:
    known from an exact count of the matches (_count_matches) when it exceeds the candidates, or
    when every candidate is a text match (so the count holds them all); else looked up."""
    if exact and matches > len(cands):
        return True
    if exact and all(c.tier in ("all", "any") for c in cands):
        return False
    # One term at a time, the commonest first: its newest rows almost always hold one past the
    # candidates, and one posting list is walked instead of every term's merged.
    df = _doc_freqs(store, terms)
    seen = [c.rid for c in cands]
    return any(
        _tail_candidates(store, [t], where, params, None, seen, 1)
        for t in sorted(terms, key=lambda t: -df[t])
    )


MATCH_COUNT_WALK = 2 * MATCH_COUNT_EXACT  # matching rows a filtered count walks before it estimates


def _count_matches(store, terms, where, params):
    """(number of items in scope whose text matches any term, exact?). Counted when the terms'
    posting lists together hold at most MATCH_COUNT_EXACT rows, or, under a kind or a narrower
    scope, when at most MATCH_COUNT_WALK rows match; beyond that it is an estimate:
    the commonest term's rows over the whole store, scaled by the share of the store that the
    scope and filters admit (counted once per store generation), never a count that costs as much
    as ranking every row of a common word."""
    df = _doc_freqs(store, terms)
    clause = "".join(" AND " + w for w in where)
    match = fts_query(terms)
    if sum(df.values()) > MATCH_COUNT_EXACT:
        estimate = max(df.values())
        if [w for w in where if w != "e.status = 'active'"]:  # a kind or a narrower scope (the status
            # filter alone admits nearly every item, and counting it would cost a scan per write)
            # The first MATCH_COUNT_WALK matching rows, walked in one bounded pass: all of them
            # when there are no more (the count is exact), else the admitted ones are a floor
            # under the estimate (which assumes the filter admits matching rows as often as any).
            walked, hits = store.memo(
                ("match-walk", match, clause, tuple(params)),
                lambda: tuple(store.one(
                    "SELECT count(*), total(CASE WHEN 1%s THEN 1 END) FROM (SELECT rowid FROM evidence_fts "
                    "WHERE evidence_fts MATCH ? LIMIT ?) m JOIN evidence e ON e.rid = m.rowid" % clause,
                    list(params) + [match, MATCH_COUNT_WALK],
                )),
            )  # fmt: skip
            if walked < MATCH_COUNT_WALK:
                return int(hits), True
            total = store.memo(("items",), lambda: store.one("SELECT count(*) FROM evidence_fts")[0])
            admitted = store.memo(
                ("admitted", clause, tuple(params)),
                lambda: store.one("SELECT count(*) FROM evidence e WHERE 1%s" % clause, list(params))[0],
            )
            estimate = int(round(estimate * admitted / float(total))) if total else 0
            estimate = max(estimate, int(hits))
        return estimate, False
    n = store.memo(  # counted once per store generation
        ("match-count", match, clause, tuple(params)),
        lambda: store.one(
            "SELECT count(*) FROM evidence_fts f JOIN evidence e ON e.rid = f.rowid WHERE f.evidence_fts MATCH ?%s"
            % clause,
            [match] + list(params),
        )[0],
    )
    return n, True


# -- rerank --------------------------------------------------------------------------------------


def _symbol_words(symbol):
    """The lower-cased words of a cited symbol, as _query_names compares them with the query's
    terms (Client.uploadDocument -> client, upload, document); once per symbol."""
    parts = [p.lower() for p in re.split(r"[^\w]+|_", symbol) if p]
    return tuple(q.lower() for p in parts for q in (split_identifier(p) or [p]))


def _claim_text(row):
    """What of an item's own text search matches words in besides what it cites."""
    return (row["claim"] or "") + "\n" + (row["detail"] or "")


def _words_of(text):
    """The index words of ``text`` (index_text) between spaces, one space before and after: what
    _term_hits finds terms in, as compact as the text itself (a set of the words costs ten times
    the memory, for a process that keeps thousands of items' words)."""
    return " %s " % index_text(text) if text else ""


@SPACED_FORMS
def _spaced_forms(term):
    """The match forms of ``term`` (match_forms), each between spaces, as _words_of holds words."""
    return tuple(" %s " % form for form in _term_forms(term))


def _term_hits(terms, words):
    """The query terms matching an index word in ``words`` (_words_of): _word_hits on a text
    whose words are already known."""
    hits = []
    for t in terms:  # loops, not any() over a generator: search calls this for every result
        for form in _spaced_forms(t):
            if form in words:
                hits.append(t)
                break
    return hits


class ItemView:
    """What search reads of one evidence item, kept per store generation (_item_views): its row
    (with the session summary), its anchors (SEARCH_ANCHOR_COLUMNS), the index words of its
    claim and detail, of its symptom, of what it cites, of each cited symbol and path and of its
    session's summary, its result's file list, the latest imported session that edited a cited
    file and what a query may name of what it cites (_name_parts)."""

    __slots__ = (
        "row",
        "anchors",
        "code_words",
        "code_text",
        "text_words",
        "symptom_words",
        "cited_words",
        "anchor_words",
        "summary_words",
        "files",
        "edited",
        "names",
        "result",
    )

    def __init__(self, row, anchors, edited, summary_words, code=None):
        self.row = row
        self.anchors = anchors
        # The vocabulary of the cited code: its index words (as _words_of holds words) and as written.
        self.code_words = " %s " % code[0] if code and code[0] else ""
        self.code_text = code[1] if code and code[1] else ""
        self.text_words = _words_of(_claim_text(row))
        self.symptom_words = _words_of(row["symptom"])
        self.anchor_words = tuple(
            (a["symbol"], _words_of(a["symbol"]), a["path"], _words_of(a["path"])) for a in anchors
        )
        self.cited_words = " ".join(w for _, sw, _, pw in self.anchor_words for w in (sw, pw) if w)
        self.summary_words = summary_words
        self.files = _anchor_files(row, anchors)
        self.edited = edited
        self.names = tuple(map(_name_parts, anchors))
        self.result = None  # _result_dict of the item without its age, once a search shows it

    def result_dict(self, now):
        """The item as a search result shows it (_result_dict), its age as of ``now``: a new dict,
        built from one made once per store generation."""
        if self.result is None:
            self.result = _result_dict(self.row, None, files=self.files, now=now)
        item = dict(self.result)
        item["files"] = list(self.files)
        item["age"] = age_text(self.row["created_at"], self.row["confirmed_at"], now)
        return item


ITEM_VIEWS_KEPT = 5000  # item views (~3 kB each) a process keeps for a store generation before starting over


def _item_views(store, rids):
    """{rid: ItemView} for these evidence rows, read once per store generation: a later search
    over the same items (the usual case: a session asks about the same code again) reads no row,
    anchor or session of them again and splits none of their texts."""
    views = store.memo(("item-views",), dict)
    missing = [rid for rid in dict.fromkeys(rids) if rid not in views]
    if missing:
        if len(views) + len(missing) > ITEM_VIEWS_KEPT:
            views.clear()  # starting over: every view asked for is made, those it held too
            missing = list(dict.fromkeys(rids))
        rows = _evidence_rows(store, missing)
        anchors = _load_anchors(store, list(rows), SEARCH_ANCHOR_COLUMNS)
        edited = _session_edits(store, anchors)
        code = _code_words(store, list(rows))
        summaries = {}  # the items of one session share its summary's words
        for rid, row in rows.items():
            summary = row["session_summary"]
            if summary not in summaries:
                summaries[summary] = _words_of(summary)
            views[rid] = ItemView(row, anchors[rid], edited.get(rid), summaries[summary], code.get(rid))
    return {rid: views[rid] for rid in rids if rid in views}


def _code_words(store, rids):
    """{rid: (index words, words as written) of the vocabulary of the code it cites} (its search
    row's code columns), for the items that have one."""
    out = {}
    for i in range(0, len(rids), 500):
        chunk = rids[i : i + 500]
        for rid, code, written in _plain_rows(
            store,
            "SELECT rowid, code, code_words FROM evidence_fts WHERE rowid IN (%s) AND code != ''"
            % ",".join("?" * len(chunk)),
            chunk,
        ):
            out[rid] = (code, written)
    return out


def _query_names(store, scope, raw_query, terms, cands, views):
    """Mark each candidate with what of it the query names: its repository or one whose code it
    cites (the name as a word of the query), a symbol it cites (every part of the symbol among the
    query's terms), a file it cites (its path or file name in the query)."""
    text = raw_query.lower() if isinstance(raw_query, str) else ""
    term_set = set(terms)
    names = store.memo(("repo-by-id",), lambda: {r.id: r.name for r in _repos(store)})
    lowered = store.memo(
        ("repo-names-lowered",), lambda: [(rid, name.lower()) for rid, name in names.items()]
    )
    # The asker's own repository named in its own question ("flask ..." asked from flask) says
    # nothing about which item answers it: only another repository's name is a fact of the query.
    own = scope.origin.id if scope.origin is not None else None
    named_repos = {
        rid
        for rid, low in lowered
        if rid != own and low in text and re.search(r"(?<![\w.-])%s(?![\w-])" % re.escape(low), text)
    }
    for c in cands:
        named = []
        if c.repo_id in named_repos:
            named.append(("repository", names[c.repo_id]))
        view = views.get(c.rid)
        for repo_id, sym, needed, path, low, base in view.names if view is not None else ():
            if repo_id in named_repos and repo_id != c.repo_id:
                named.append(("repository", names[repo_id]))  # it cites that repository's code
            if needed is not None and term_set.issuperset(needed):
                named.append(("symbol", sym))
            if low and (low in text or (base and base in text)):
                named.append(("file", path))
        c.named = tuple(dict.fromkeys(named)) if named else ()


def _name_parts(anchor):
    """(repository id, symbol, the parts of the symbol a query must hold to name it or None, path,
    path lower-cased, file name lower-cased when it is distinctive enough to name alone or None):
    what _query_names compares a query with, once per cited anchor. A symbol with no part left
    once stop words are set aside (jinja's ``nodes.If``) is named by no query: every query holds
    all of nothing."""
    sym, path = anchor["symbol"], anchor["path"]
    needed = None
    if sym:
        parts = _symbol_words(sym)
        if parts:
            needed = (
                frozenset(p for p in selecting_terms(parts) if p not in STOP_WORDS and len(p) >= 2) or None
            )
    low = base = None
    if path:
        low = path.lower()
        base = low.rsplit("/", 1)[-1]
        base = base if "." in base and len(base) > 3 else None
    return (anchor["repo_id"], sym, needed, path, low, base)


def _query_coverage(terms, cands, views, idf):
    """Mark each candidate with the share of the query it answers and whether it is weak.

    The share: the number of the query's terms its claim, detail, symptom, cited symbols or cited
    paths hold, plus RANK_CODE_SHARE for each one only the words of its cited code hold and
    RANK_SUMMARY_SHARE for each one only its session summary holds, over the number of terms.
    bm25 adds up what an item matches with column weights, so one common word in a short claim can
    outscore every rare word of the query in a detail; coverage is what keeps that match below the
    fuller one. The share counts terms, not their idf: bm25 has weighed each by its rarity already,
    and weighing it again let one rare word matched anywhere outrank several of the query's words
    in a claim. The words of a repository the query names are its name, not content, for an item
    about that repository: the named factor counts them once for it (_query_names), so they weigh
    nothing in its share. Any other item holding them (an application's "require werkzeug >= 2.2")
    holds words of the question like any other, and they count as such: the name is counted
    once for every item, never for none.

    Weak: it holds only the query's common words. What it holds (a word only its session summary
    holds counting RANK_SUMMARY_SHARE; the name of a repository the query names, for an item
    about it) is less than RANK_WEAK_SHARE of the query's words weighed by ``idf`` ({term: inverse
    document frequency, 0 for a word no item holds}), and none of it outside its session summary
    is as distinctive as RANK_WEAK_SHARE of the query's most distinctive word: a rare word of the
    question it holds is evidence however many common ones it lacks. A weak match ranks after
    every candidate that is not, saying so, and is held back when one exists (search)."""
    whole_idf = sum(idf.get(t, 0.0) for t in terms)
    top_idf = max([idf.get(t, 0.0) for t in terms] or [0.0])
    plain = {t: 1.0 for t in terms}
    floor = 1.0 / len(terms) if terms else 1.0  # FTS5 matched it on something: at least one term
    for c in cands:
        if c.tier == "all":  # FTS5 matched every term: coverage 1.0, never weak
            continue
        view = views.get(c.rid)
        if view is None:
            continue
        name_words = {t for what, n in c.named if what == "repository" for t in query_terms(n)}
        weight = {t: 0.0 if t in name_words else 1.0 for t in terms} if name_words else plain
        whole = sum(weight.values())
        # The claim and detail apart from what it cites: the result's reasons name these hits.
        c.text_hits = _term_hits(terms, view.text_words)
        own = set(c.text_hits)
        if len(own) < len(terms) and view.symptom_words:  # the item's own words, the asker's kind
            own.update(_term_hits([t for t in terms if t not in own], view.symptom_words))
        if len(own) < len(terms):
            own.update(_term_hits([t for t in terms if t not in own], view.cited_words))
        share = sum(weight[t] for t in own)
        if len(own) < len(terms) and view.code_words:
            coded = [t for t in _term_hits(terms, view.code_words) if t not in own]
            share += RANK_CODE_SHARE * sum(weight[t] for t in coded)
            own.update(coded)
        own.update(name_words)  # the item is about the repository the query names
        held = sum(idf.get(t, 0.0) for t in own)
        best = max([idf.get(t, 0.0) for t in own] or [0.0])
        if len(own) < len(terms) and view.summary_words:
            summary = [t for t in _term_hits(terms, view.summary_words) if t not in own]
            share += RANK_SUMMARY_SHARE * sum(weight[t] for t in summary)
            held += RANK_SUMMARY_SHARE * sum(idf.get(t, 0.0) for t in summary)
        c.weak = whole_idf > 0 and held < RANK_WEAK_SHARE * whole_idf and best < RANK_WEAK_SHARE * top_idf
        if len(terms) > 1 and whole:
            c.coverage = max(floor, share / whole)


def _idf(store, terms):
    """{term: log((items + 1) / (items holding it + 0.5))}: how distinctive each query term is
    (0 for a term no item holds: it distinguishes nothing that is found)."""
    import math

    df = _doc_freqs(store, terms)
    total = store.memo(("items",), lambda: store.one("SELECT count(*) FROM evidence_fts")[0])
    return {t: math.log((total + 1.0) / (df[t] + 0.5)) if df.get(t) else 0.0 for t in terms}


def _rerank(cands, scope, now):
    """Score = text strength x query coverage x what the query names (once for each kind of fact:
    an item citing two symbols the query names is no likelier the answer than one citing one of
    them, and a product of their bonuses overrode the text) x (mildly) topology,
    confidence, kind and recency. Every factor but coverage and the named ones is within a few
    tens of percent, so a clearly stronger text match wins whatever repository it lives in; they
    order near-equals."""
    reach = scope.topology.reach
    for c in cands:
        score = RANK_WEIGHT_TEXT * c.strength * c.coverage**RANK_COVERAGE_POWER
        for what in dict.fromkeys(what for what, _ in c.named):  # each kind once: two symbols, one fact
            score *= 1.0 + RANK_NAMED_BONUS[what]
        distance = reach.get(c.repo_id, (None,))[0]
        score *= 1.0 + RANK_TOPOLOGY_BONUS.get(distance, 0.0)
        if c.confidence is not None:
            score *= 1.0 + RANK_CONFIDENCE_WEIGHT * (c.confidence - 0.5)
        score *= 1.0 + RANK_KIND_BONUS.get(c.kind, 0.0) + _recency_bonus(c.created_at, now)
        c.score = score


# -- the search service --------------------------------------------------------------------------

SEARCH_PAGE_RE = _lazy_pattern(r"^(?:o([0-9]{1,6})|r([0-9]{1,12}))$")


def search(
    store,
    query,
    repo=None,
    cwd=None,
    limit=10,
    kinds=None,
    all_scope=False,
    rank="topology",
    include_inactive=False,
    workspace=None,
    files=None,
    page=None,
    facts=None,
    author=None,
    include_hidden=False,
    all_matches=False,
):
    """Search evidence from the caller's repository outward (docs/commands.md describes the shape).

    ``workspace`` scopes a caller that stands in no registered repository (an MCP server started
    for a workspace, a shell outside every checkout) to that workspace's repositories; a caller
    inside a repository keeps its own scope. ``page`` is a ``next_page`` token from an earlier
    call with the same arguments: the ranked results continue, then every other match, newest
    first, so paging reaches the last match at a constant cost per page. ``files`` (paths in the
    caller's repository) join the working tree's changed files for recall by code reference
    when the query finds nothing. ``facts``, a dict, receives each result's ResultFacts by its id
    (search_phrasings explains a fused result again from them). ``author`` (``me``, or an author
    as typed: the whole "Name <email>", the name or the address) keeps only that person's items;
    what this person hid (wctx hide) stays out unless ``include_hidden``. A weak match (it holds
    only the query's common words) is held back when a stronger one exists, unless
    ``all_matches``: ``held_back`` counts those this page would have shown, and paging on reaches
    them among every other match."""
    started = time.perf_counter()
    if rank not in ("topology", "fts"):
        raise UsageError("unknown rank %r (topology or fts)" % rank)
    try:
        limit = int(limit)
    except (TypeError, ValueError):
        raise UsageError("limit must be a whole number") from None
    if not (1 <= limit <= MAX_LIMIT):
        raise UsageError("limit must be from 1 to %d" % MAX_LIMIT)
    kinds = list(kinds or [])
    for k in kinds:
        if k not in EVIDENCE_KINDS:
            raise UsageError("unknown kind %r (one of: %s)" % (k, ", ".join(EVIDENCE_KINDS)))
    offset, before = 0, None
    if page is not None:
        m = SEARCH_PAGE_RE.match(page) if isinstance(page, str) else None
        if m is None:
            raise UsageError("page %r is not one search issued; omit it to start from the top" % (page,))
        offset, before = (int(m.group(1)), None) if m.group(1) is not None else (None, int(m.group(2)))

    store.begin_read()
    scope = _search_scope(store, repo, cwd, all_scope, workspace)
    all_terms = query_terms(query)
    terms = select_terms(store, all_terms)
    words = selecting_terms(terms)  # what selects candidates; the rerank's coverage reads every term
    who = author_filter(store, author, include_hidden)
    where, params = _scope_clause(scope, kinds, include_inactive, who)

    # candidates
    head_size = max(CANDIDATE_FLOOR, limit)
    mode = "text"
    admits = _scope_test(scope, kinds, include_inactive, who)
    cands, beyond = (
        _text_candidates(store, terms, words, where, params, head_size, rank, admits)
        if terms
        else ([], False)
    )
    if not cands:
        mode = "fallback"  # no searchable words, or nothing matched them: still help
        cands = _fallback_candidates(store, scope, where, params, limit, files=files, cwd=cwd)

    # rerank
    views = {}
    anchors = {}
    if mode == "text" and rank != "fts":
        views = _item_views(store, [c.rid for c in cands])
        anchors = {rid: v.anchors for rid, v in views.items()}
        _query_names(store, scope, query, words, cands, views)
        _query_coverage(terms, cands, views, _idf(store, terms))
        _rerank(cands, scope, time.time())
    weak = [c for c in cands if c.weak]
    if weak and not all_matches and len(weak) < len(cands):
        cands = [c for c in cands if not c.weak]  # held back: stronger matches exist
    else:
        weak = []
    fresh = {}
    final = {}  # {rid: score with its freshness}, once known; the score alone until then
    below = _replacements(cands, views) if include_inactive else {}

    def order(c):
        # The first band before the second, weak matches after the rest; a superseded item never
        # above its replacement.
        score, is_weak = final.get(c.rid, c.score), c.weak
        replacement = below.get(c.rid)
        if replacement is not None:
            score = min(score, final.get(replacement.rid, replacement.score) * 0.999)
            is_weak = is_weak or replacement.weak
        return (c.band, is_weak, -score, -c.rid)

    # Freshness only lowers a score, so fetching it for the current top until the top is stable
    # gives the same order as fetching it for every candidate.
    want = min((offset or 0) + limit, head_size)
    heads = {}  # each checkout read once per search
    repos = store.memo(("repo-map",), lambda: {r.id: r for r in _repos(store)})
    first = True  # the page first; when freshness reorders it, as many again past it at once
    while True:
        ordered = sorted(cands, key=order)
        top = ordered[:want]
        missing = [c.rid for c in top if c.rid not in fresh]
        if not missing:
            break
        if not first:
            missing += [c.rid for c in ordered[want:] if c.rid not in fresh][: len(missing)]
        first = False
        more = [r for r in missing if r not in views]
        if more:
            views.update(_item_views(store, more))
            anchors.update((rid, views[rid].anchors) for rid in more if rid in views)
        fresh.update(freshness_of(store, missing, anchors=anchors, heads=heads, repos=repos))
        if rank == "fts":
            break
        for c in cands:
            if c.rid in fresh and c.rid not in final:
                final[c.rid] = c.score * (1.0 + RANK_FRESHNESS_PENALTY.get(fresh[c.rid]["verdict"], 0.0))

    if mode == "text":
        matches, exact = _count_matches(store, words, where, params)
    else:
        matches, exact = len(cands), True
    held_back = 0
    if before is None:
        page_cands = top[offset:]
        # The weak matches this page would have shown after the stronger ones (they sort last).
        end = min(offset + limit, len(cands) + len(weak))
        held_back = max(0, end - max(offset, len(cands)))
        after = ["o%d" % (offset + i + 1) for i in range(len(page_cands))]
        if want < len(ordered):
            next_page = "o%d" % want
        elif mode == "text" and (beyond or _more_matches(store, words, where, params, cands, matches, exact)):
            next_page = "r0"  # the ranked head is done; every other match follows, newest first
        else:
            next_page = None
    else:
        exclude = [c.rid for c in cands]
        page_cands = _tail_candidates(store, words, where, params, before or None, exclude, limit + 1)
        next_page = "r%d" % page_cands[limit - 1].rid if len(page_cands) > limit else None
        page_cands = page_cands[:limit]
        after = ["r%d" % c.rid for c in page_cands]
        more = [c.rid for c in page_cands if c.rid not in views]
        if more:
            views.update(_item_views(store, more))
            anchors.update((rid, views[rid].anchors) for rid in more if rid in views)
        missing = [c.rid for c in page_cands if c.rid not in fresh]
        fresh.update(freshness_of(store, missing, anchors=anchors, heads=heads, repos=repos))

    # explain
    results = []
    now = time.time()
    for c in page_cands:
        view = views[c.rid]
        item = view.result_dict(now)
        f = fresh.get(c.rid) or {"verdict": "unknown", "reasons": ["not checked"]}
        said = _result_facts(terms, view, c, scope, f, mode, item["age"])
        item["reasons"] = explain(said)
        if facts is not None:
            facts[item["id"]] = said
        item["freshness"] = {"verdict": f["verdict"], "reasons": f["reasons"]}
        results.append(item)
    if mode == "text":
        matches = max(matches, len(cands))
    return {
        "results": results,
        "fallback_reason": None
        if mode == "text"
        else ("no evidence matches the query words" if terms else "no searchable words in the query"),
        "candidates": matches,
        "candidates_exact": exact,
        "ranked": len(cands),
        "next_page": next_page,
        "after": after,
        "searched": scope.searched,
        "origin": scope.origin.name if scope.origin else None,
        "ms": round((time.perf_counter() - started) * 1000.0, 2),
        "held_back": held_back,
        "query_terms": terms,
        "query_terms_total": len(all_terms),
        "mode": mode,
        "rank": rank,
    }


def held_back_text(n, option):
    """What a reply says of the weak matches search held back, and how to get them (``option``:
    the CLI's flag or the MCP argument)."""
    return "%d weak match%s held back (%s shows them)" % (n, "" if n == 1 else "es", option)


MAX_PHRASINGS = 3  # phrasings of one question a search fuses
FUSION_RANK_OFFSET = 60  # reciprocal rank fusion: a result's share of one list is 1 / (this + its rank)


def search_phrasings(store, phrasings, limit=10, **kwargs):
    """One question asked in up to MAX_PHRASINGS phrasings (an agent asking can give two or three),
    each searched as ``search`` searches it and the lists fused by rank: an item scores the sum,
    over the lists, of 1 / (FUSION_RANK_OFFSET + its rank there), so an item near the top of
    several lists rises above one that a single phrasing found, and no phrasing's scores need be
    comparable with another's. A phrasing that matched nothing (its list shown for other reasons)
    is left out while another matched. Takes ``search``'s arguments but ``page`` (a fused list is
    one page) and returns its shape; each result's reasons start with the phrasings that found it
    and its rank in each, and ``phrasings`` gives each one's query words and mode."""
    if isinstance(phrasings, str):
        phrasings = [phrasings]
    if not isinstance(phrasings, (list, tuple)) or not phrasings:
        raise UsageError("phrasings must be a list of 1 to %d questions" % MAX_PHRASINGS)
    if len(phrasings) > MAX_PHRASINGS:
        raise UsageError("at most %d phrasings of one question (got %d)" % (MAX_PHRASINGS, len(phrasings)))
    if not all(isinstance(p, str) for p in phrasings):
        raise UsageError("each phrasing must be text")
    if kwargs.get("page") is not None:
        raise UsageError("a search of several phrasings is one page: ask with a larger limit instead")
    if len(phrasings) == 1:
        return search(store, phrasings[0], limit=limit, **kwargs)
    started = time.perf_counter()
    runs, facts = [], []
    for text in phrasings:
        facts.append({})
        runs.append(search(store, text, limit=limit, facts=facts[-1], **kwargs))
    fused = [n for n, run in enumerate(runs) if run["mode"] == "text"] or list(range(len(runs)))
    score, ranks = {}, {}
    for n in fused:
        for rank, item in enumerate(runs[n]["results"], 1):
            score[item["id"]] = score.get(item["id"], 0.0) + 1.0 / (FUSION_RANK_OFFSET + rank)
            ranks.setdefault(item["id"], []).append((n + 1, rank))
    results = []
    # Equal scores: the better rank first, then the earlier phrasing (the asker's first words).
    for item_id in sorted(score, key=lambda i: (-score[i], min((r, n) for n, r in ranks[i])))[:limit]:
        n, rank = min(ranks[item_id], key=lambda pair: pair[1])  # explained as its best list found it
        item = dict(runs[n - 1]["results"][rank - 1])
        said = facts[n - 1][item_id]
        said.found_by = tuple(ranks[item_id])
        item["reasons"] = explain(said)
        results.append(item)
    text_runs = [runs[n] for n in fused if runs[n]["mode"] == "text"]
    out = dict(runs[fused[0]])
    out.update(
        results=results,
        fallback_reason=None if text_runs else out["fallback_reason"],
        candidates=max(runs[n]["candidates"] for n in fused),
        held_back=max(runs[n]["held_back"] for n in fused),
        # The union of several phrasings' matches is at least the largest of them.
        candidates_exact=len(text_runs) <= 1 and all(runs[n]["candidates_exact"] for n in fused),
        ranked=sum(runs[n]["ranked"] for n in fused),
        next_page=None,
        after=[],
        ms=round((time.perf_counter() - started) * 1000.0, 2),
        query_terms=list(dict.fromkeys(t for n in fused for t in runs[n]["query_terms"])),
        query_terms_total=sum(run["query_terms_total"] for run in runs),
        phrasings=[
            {"query_terms": run["query_terms"], "mode": run["mode"], "fused": n in fused}
            for n, run in enumerate(runs)
        ],  # fmt: skip
    )
    return out


def _replacements(cands, views):
    """{rid of a superseded candidate: the candidate that replaced it}, where both are ranked."""
    by_id = {views[c.rid].row["id"]: c for c in cands if c.rid in views}
    out = {}
    for c in cands:
        view = views.get(c.rid)
        if view is not None and view.row["superseded_by"] in by_id:
            out[c.rid] = by_id[view.row["superseded_by"]]
    return out


def _result_facts(terms, view, cand, scope, fresh, mode, age):
    """The facts ``explain`` needs for one result (``view``: its ItemView)."""
    row = view.row
    text = symptom = symbols = paths = code = summary = ()
    stems = []
    fallback = code_reference = None
    if mode == "fallback" and isinstance(cand.tier, CodeReference):
        code_reference = cand.tier
    elif mode == "fallback":
        fallback = cand.tier
    else:
        hits = cand.text_hits if cand.text_hits is not None else _term_hits(terms, view.text_words)
        text = _pairs(hits, _claim_text(row))
        # A cited symbol or path matches a query word that is one of its whole words; one that only
        # shares a stem with a word of it is said to, with both words (never as a match).
        # A short number names no symbol or path (selecting_terms).
        named = selecting_terms(terms)
        symbols, stems = _cited_hits(named, [(sym, words) for sym, words, _, _ in view.anchor_words])
        paths, path_stems = _cited_hits(named, [(p, words) for _, _, p, words in view.anchor_words])
        paths = list(dict.fromkeys(paths))
        stems += [hit for hit in path_stems if hit not in stems]
        if view.code_words:
            code = _pairs([t for t in _term_hits(terms, view.code_words) if t not in hits], view.code_text)
        symptom = _pairs([t for t in _term_hits(terms, view.symptom_words) if t not in hits], row["symptom"])
        if not (text or symptom or symbols or paths or code):
            summary = _pairs(_term_hits(terms, view.summary_words), row["session_summary"])
    reach = scope.topology.reach.get(row["repo_id"])
    return ResultFacts(
        text_hits=text,
        symbol_hits=symbols,
        path_hits=paths,
        stem_hits=stems,
        code_hits=code,
        summary_hits=summary,
        weak=cand.weak,
        named=cand.named,
        fallback=fallback,
        code_reference=code_reference,
        reach=reach[1] if reach is not None else None,
        all_scope="origin" if scope.origin else "all",
        edited=view.edited,
        confidence=row["confidence"],
        status=row["status"],
        superseded_by=row["superseded_by"],
        freshness=fresh,
        age=age,
        recorded_by=row_recorded_by(row),
        symptom_hits=symptom,
    )


def _cited_hits(terms, cited):
    """(the names among ``cited`` [(symbol or path, its index words)] a query term is a whole word
    of (identifier_words), [(name, (term, word) pairs)] for the others a term matches by stem)."""
    whole, stems = [], []
    wanted = set(terms)
    for name, words in cited:
        if not name:
            continue
        if wanted & identifier_words(name):
            whole.append(name)
            continue
        hits = _term_hits(terms, words)
        if hits:
            stems.append((name, tuple(_pairs(hits, name))))
    return whole, stems


def _pairs(terms, text):
    """[(query term, the word of ``text`` as written it matched)] (matched_word), in term order."""
    return [(t, matched_word(t, text)) for t in terms]


def _session_edits(store, anchors_by_rid):
    """{rid: (session id, agent, when, path, repo name)} for results whose cited files an imported
    session edited: the most recent such session. One query."""
    pairs = {
        (a["repo_id"], a["path"])
        for anchors in anchors_by_rid.values()
        for a in anchors
        if a["path"] and a["repo_id"]
    }
    if not pairs:
        return {}
    pairs = sorted(pairs)[:400]
    latest = {}
    for row in store.all(
        "SELECT f.repo_id, f.path, f.repo_name, s.id, s.agent, coalesce(s.ended_at, s.started_at, s.created_at) AS at "
        "FROM session_files f JOIN sessions s ON s.id = f.session_id WHERE f.edits > 0 AND (f.repo_id, f.path) IN (%s)"
        % ",".join("(?, ?)" for _ in pairs),
        [v for pair in pairs for v in pair],
    ):
        key = (row["repo_id"], row["path"])
        if key not in latest or (row["at"] or "") > (latest[key]["at"] or ""):
            latest[key] = row
    out = {}
    for rid, anchors in anchors_by_rid.items():
        hits = [
            latest[(a["repo_id"], a["path"])]
            for a in anchors
            if a["path"] and (a["repo_id"], a["path"]) in latest
        ]
        if hits:
            h = max(hits, key=lambda r: r["at"] or "")
            out[rid] = (h["id"], h["agent"], h["at"], h["path"], h["repo_name"])
    return out
