from __future__ import annotations

import math
import os

from .code_refs import code_references
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
    MATCH_COUNT_EXACT,
    MAX_QUERY_TERMS,
)
from .errors import NotFoundError, WctxError
from .git import GitRepo
from .helpers import is_utf8
from .records import _repo_containing, _repos, resolve_repo
from .repos import _workspace_id
from .results import Fallback
from .topology import Topology
from .words import fts_query, match_forms

# -- scope ---------------------------------------------------------------------------------------


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


def search_scope(store, repo, cwd, all_scope, workspace):
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
        self.coverage = 1.0  # share of the query's term weight the item holds (query_coverage)
        self.named = ()  # what of the query this item is about: ("repository", name), ("symbol", s), ("file", p)
        self.text_hits = None  # the query terms its claim and detail hold, once known (query_coverage)
        self.weak = False  # it holds only the query's common words (query_coverage): ranked after the rest
        self.band = 1 if tier in ("all", "any") else 0  # 1: past the first CANDIDATE_FLOOR of its list


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


def doc_freqs(store, terms):
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
    df = doc_freqs(store, terms)
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


def scope_clause(scope, kinds, include_inactive, who=None):
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


def scope_test(scope, kinds, include_inactive, who=None):
    """The conditions of scope_clause as a test of a row of _rank_rows: True when the item is in
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
            for row in plain_rows(
                store,
                "SELECT %s, e.status FROM evidence e WHERE e.rid IN (%s)"
                % (_RANK_COLUMNS, ",".join("?" * len(chunk))),
                chunk,
            ):
                memo[row[0]] = row
    return memo


def plain_rows(store, sql, params):
    """``store.all`` as plain tuples: search reads these rows by position, and a sqlite3.Row
    for each of them costs about as much again as the lookup."""
    cursor = store.db.cursor()
    cursor.row_factory = None
    return cursor.execute(sql, params).fetchall()


def _ranked_matches(store, match, where, params, limit, tier, admits, require=None, terms=None):
    """(the ``limit`` best bm25 matches of ``match`` passing ``where``, as Candidates, best first;
    whether more in scope are known to match).

    FTS5 ranks its best CANDIDATE_WINDOW x ``limit`` matches on its own and only those are looked
    up and filtered; when that leaves fewer than ``limit`` although the window was full (a narrow
    scope), every match is joined: the result is always the joined query's. ``admits``
    (scope_test of the scope ``where`` states) filters the window's rows in memory (_rank_rows).
    ``require``: a second MATCH expression a row must match too (scored by ``match`` alone).
    ``terms``, when ``match`` is fts_query(terms): the rows of the rarer terms are ranked first, and
    when no row without them could reach the head found there, that head is the answer
    (_pruned_head)."""
    window = limit * CANDIDATE_WINDOW
    found = _pruned_head(store, terms, match, limit, window, admits) if terms and require is None else None
    if found is None:
        found = _full_head(store, match, where, params, limit, window, admits, require)
    found.sort()
    out = [Candidate(r[0], r[1], r[2], r[3], r[4], -score, tier) for score, _, r in found[:limit]]
    return out, len(found) > limit


def _full_head(store, match, where, params, limit, window, admits, require):
    """The matches _ranked_matches keeps, (bm25 score, -rid, rank row) each, from every row of
    ``match``."""
    bound, required = "", []
    if require is not None:
        bound = " AND rowid IN (SELECT rowid FROM evidence_fts WHERE evidence_fts MATCH ?)"
        required = [require]
    ranked = plain_rows(
        store,
        "SELECT rowid, %s AS score FROM evidence_fts WHERE evidence_fts MATCH ?%s ORDER BY score LIMIT ?"
        % (_bm25(), bound),
        [match] + required + [window],
    )
    found, _, _ = _admitted_head(store, ranked, limit, admits)
    if len(found) < limit and len(ranked) >= window:
        rows = plain_rows(
            store,
            "SELECT %s, %s AS score FROM evidence_fts JOIN evidence e ON e.rid = evidence_fts.rowid "
            "WHERE evidence_fts MATCH ?%s%s ORDER BY score LIMIT ?"
            % (_RANK_COLUMNS, _bm25(), bound.replace(" rowid IN", " evidence_fts.rowid IN"),
               "".join(" AND " + w for w in where)),
            [match] + required + list(params) + [limit],
        )  # fmt: skip
        found = [(r[5], -r[0], r) for r in rows]
    return found


def _admitted_head(store, ranked, limit, admits):
    """(the rows of ``ranked`` [(rid, bm25 score)], best first, that ``admits``, as (score, -rid,
    rank row), read until ``limit`` pass; whether a step stopped short at the end of ``ranked``; how
    many rows were read).

    Looked up best first, a little more than ``limit`` at a time, until ``limit`` pass the filter:
    an unfiltered search reads ~limit rows, not the window. A step ends after every row tied with
    its last score, so a sort of what was kept sees what it would over the whole window."""
    found, start, n, short = [], 0, len(ranked), False
    while start < n and len(found) < limit:
        step = start + max(limit - len(found) + 8, start)  # a narrow scope: doubling steps
        end = min(n, step)
        short = short or end < step
        while end < n and ranked[end][1] == ranked[end - 1][1]:
            end += 1
        chunk = ranked[start:end]
        held = _rank_rows(store, [r[0] for r in chunk])
        for rid, score in chunk:
            row = held.get(rid)
            if row is not None and admits(row):
                found.append((score, -rid, row))
        start = end
    return found, short, start


# FTS5's bm25 (fts5_aux.c) adds, for each phrase of the query, idf x f (k1 + 1) / (f + k1 (1 - b +
# b x row length / mean length)), f the phrase's weighted count in the row, idf log((N - n + 0.5) /
# (n + 0.5)) but at least 1e-6 (N rows, n of them holding the phrase): less than idf x (k1 + 1)
# whatever the row holds.
FTS5_BM25_K1 = 1.2
PRUNE_MARGIN = 1e-9  # relative: floating-point sums in C and here differ by far less
PRUNE_TRIES = 2  # rarer-term heads tried before the whole query is ranked (each walks every posting list)


def _term_ceilings(store, terms):
    """[(term, the most its phrases add to any row's plain bm25 score, or None when not known)],
    one per distinct term of fts_query(terms), rarest first (unknown ones first of all)."""
    total = store.memo(("items",), lambda: store.one("SELECT count(*) FROM evidence_fts")[0])
    out = {}
    for t in terms:
        ceiling = 0.0
        for form in match_forms(t):
            n = _form_docs(store, form) if " " not in form else None  # a phrase's count is a guess
            if n is None:
                ceiling = None
                break
            if n:  # a phrase no row holds adds nothing to any row
                ratio = (total - n + 0.5) / (n + 0.5)  # at most 1 where half the rows or more hold it
                ceiling += max(math.log(ratio) if ratio > 1.0 else 0.0, 1e-6) * (FTS5_BM25_K1 + 1.0)
        out.setdefault(fts_query([t]), (t, ceiling))
    return sorted(out.values(), key=lambda tc: -math.inf if tc[1] is None else -tc[1])


def _pruned_head(store, terms, match, limit, window, admits):
    """What _full_head keeps for ``match`` (fts_query(terms)), found among the rows of its rarer
    terms only, or None when that cannot be shown the same.

    The commonest terms, together, add at most ``rest`` to any row's score (_term_ceilings); the
    rarer ones are first the fewest, rarest first, whose items could fill the head. Every row
    holding a rarer term is scored as the whole query scores it (the common terms' posting lists are
    walked, never scored); when the last row read for the head scores above ``rest``, no row of the
    common terms alone could have been read before it, so the head is the one the whole query
    gives. When it scores lower, the next try takes as rarer terms the fewest whose ``rest`` is
    below that score (the head only gains rows); PRUNE_TRIES in all."""
    ceilings = _term_ceilings(store, terms)
    df = doc_freqs(store, [t for t, _ in ceilings])
    held = [sum(df[t] for t, _ in ceilings[:k]) for k in range(len(ceilings) + 1)]
    rests = {}  # {k: what the terms from the k-th on add at most} where known
    for k in range(len(ceilings) - 1, 0, -1):
        if ceilings[k][1] is None:
            break
        rests[k] = ceilings[k][1] + rests.get(k + 1, 0.0)
    # Worth a try where the rarer terms could fill the head and the common ones hold more rows.
    worth = [k for k in sorted(rests) if limit + 8 <= held[k] < held[-1] - held[k]]
    k = worth[0] if worth else None
    for _ in range(PRUNE_TRIES):
        if k is None:
            return None
        ranked = plain_rows(
            store,
            "SELECT rowid, %s AS score FROM evidence_fts WHERE evidence_fts MATCH ? "
            "AND +rowid IN (SELECT rowid FROM evidence_fts WHERE evidence_fts MATCH ?) ORDER BY score LIMIT ?"
            % _bm25(),
            [match, fts_query([t for t, _ in ceilings[:k]]), window],
        )
        found, short, read = _admitted_head(store, ranked, limit, admits)
        if len(found) < limit or short:
            return None
        last = -ranked[read - 1][1]
        if last > rests[k] * (1.0 + PRUNE_MARGIN) + PRUNE_MARGIN:
            return found
        k = next((j for j in worth if j > k and rests[j] * (1.0 + PRUNE_MARGIN) + PRUNE_MARGIN < last), None)
    return None


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


def text_candidates(store, terms, words, where, params, pool, rank, admits):
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
        store, fts_query(terms), where, params, pool, "any", admits, require=require, terms=terms
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


def fallback_candidates(store, scope, where, params, limit, files=None, cwd=None):
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


def tail_candidates(store, terms, where, params, before_rid, exclude, limit):
    """The pages after the ranked head: items matching any term, newest first, below ``before_rid``
    (None: from the newest), ``exclude`` (the head) left out. FTS5 walks its rowids in order, so a
    page costs the same however deep it is."""
    clause = "".join(" AND " + w for w in where)
    if exclude:
        clause += " AND e.rid NOT IN (%s)" % ",".join("?" * len(exclude))
    if before_rid is not None:
        clause = " AND f.rowid < ?" + clause
        params = [before_rid] + list(params)
    rows = plain_rows(
        store,
        "SELECT %s FROM evidence_fts f JOIN evidence e ON e.rid = f.rowid WHERE f.evidence_fts MATCH ?%s "
        "ORDER BY f.rowid DESC LIMIT ?" % (_RANK_COLUMNS, clause),
        [fts_query(terms)] + list(params) + list(exclude) + [limit],
    )
    return [Candidate(r[0], r[1], r[2], r[3], r[4], 0.0, "tail") for r in rows]


def more_matches(store, terms, where, params, cands, matches, exact):
    """True when some item in scope matches a term of the query besides the ranked ``cands``:
    known from an exact count of the matches (count_matches) when it exceeds the candidates, or
    when every candidate is a text match (so the count holds them all); else looked up."""
    if exact and matches > len(cands):
        return True
    if exact and all(c.tier in ("all", "any") for c in cands):
        return False
    # One term at a time, the commonest first: its newest rows almost always hold one past the
    # candidates, and one posting list is walked instead of every term's merged.
    df = doc_freqs(store, terms)
    seen = [c.rid for c in cands]
    return any(
        tail_candidates(store, [t], where, params, None, seen, 1) for t in sorted(terms, key=lambda t: -df[t])
    )


MATCH_COUNT_WALK = 2 * MATCH_COUNT_EXACT  # matching rows a filtered count walks before it estimates


def count_matches(store, terms, where, params):
    """(number of items in scope whose text matches any term, exact?). Counted when the terms'
    posting lists together hold at most MATCH_COUNT_EXACT rows, or, under a kind or a narrower
    scope, when at most MATCH_COUNT_WALK rows match; beyond that it is an estimate:
    the commonest term's rows over the whole store, scaled by the share of the store that the
    scope and filters admit (counted once per store generation), never a count that costs as much
    as ranking every row of a common word."""
    df = doc_freqs(store, terms)
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
