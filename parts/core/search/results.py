from __future__ import annotations

import time

from .authors import SESSION_WHO_COLUMNS, row_recorded_by
from .caches import STAMP_SECONDS
from .constants import RANK_RECENCY_BONUS, RANK_RECENCY_HALF_LIFE_DAYS, _lazy_pattern
from .topology import reach_text

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


def recency_bonus(created_at, now):
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
        files = anchor_files(row, anchors)
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


def anchor_files(row, anchors):
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


def _match_reasons(facts):
    """Why a result matched, or why it is shown without a match (explain's first reasons)."""
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
    return reasons


def explain(facts):
    """The reasons of one search result (or briefing entry), in a fixed order: why it matched (or
    why it is shown without a match), which phrasings found it, what of the query it is about,
    where it lives relative to the caller, who edited what it cites, its stated confidence, its
    status, its freshness and its age. The one function that turns facts into words."""
    reasons = _match_reasons(facts)
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
