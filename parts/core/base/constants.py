from __future__ import annotations

import re

# ----------------------------------------------------------------------------------------------
# Constants
# ----------------------------------------------------------------------------------------------

EVIDENCE_KINDS = ("finding", "decision", "dead_end", "question", "constraint", "known_issue", "note")
RELATION_KINDS = (
    "uses",
    "depends_on",
    "calls",
    "imports",
    "consumes_api",
    "provides_api",
    "shares_schema_with",
    "related",
)
# A relation FROM -> TO of these kinds makes FROM the consumer and TO the upstream side.
CONSUMER_RELATIONS = frozenset({"uses", "depends_on", "calls", "imports", "consumes_api"})
# FROM provides_api TO: FROM is upstream, TO consumes it.
PROVIDER_RELATIONS = frozenset({"provides_api"})
STATUSES = ("active", "superseded", "retracted")
VERDICTS = ("current", "possibly_stale", "stale", "unknown")
# When an item has several anchors, the item's verdict is the worst one in this order.
VERDICT_SEVERITY = {"current": 0, "unknown": 1, "possibly_stale": 2, "stale": 3}


class _lazy_pattern:
    """A regular expression compiled when first used. The module's own patterns took ~9 ms of
    every start-up to compile, most of them for commands other than the one running. Acts as
    the compiled pattern; after the first use its methods are plain attributes."""

    def __init__(self, pattern, flags=0):
        self._args = (pattern, flags)

    def __getattr__(self, name):
        compiled = re.compile(*self._args)
        for attr in dir(compiled):
            if not attr.startswith("_"):
                self.__dict__[attr] = getattr(compiled, attr)
        return getattr(compiled, name)


REPO_NAME_RE = _lazy_pattern(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
MAX_CLAIM_CHARS = 4000
MAX_DETAIL_CHARS = 65536
MAX_SUMMARY_CHARS = 8000
MAX_SYMPTOM_CHARS = 1000  # a line or two: how the problem shows itself, not its explanation
MAX_FILES_PER_ITEM = 50
MAX_ITEMS_PER_CAPTURE = 200
MAX_QUERY_TERMS = 32  # the rarest terms of a longer query are used
MAX_TERM_CHARS = 64
MAX_LIMIT = 200

# bm25 weights for the FTS5 columns, in column order. The claim is what an agent reads first and
# states the learning; symbol and path hits are precise anchors that a query naming them wants;
# the detail is long and matches many words loosely; the session summary is context, not content.
BM25_WEIGHT_CLAIM = 10.0
BM25_WEIGHT_SYMBOLS = 6.0
BM25_WEIGHT_PATHS = 4.0
BM25_WEIGHT_DETAIL = 2.0
# How the problem shows itself (the item's symptom) is written in the asker's words, as short as a
# claim and as deliberately worded: a query that describes what someone sees is the question it
# answers, so its words weigh what the claim's do. More would let a vague symptom outrank the item
# whose claim names the mechanism the asker typed.
BM25_WEIGHT_SYMPTOM = 10.0
BM25_WEIGHT_CODE = 0.5  # the words of the cited code (vocabulary.py): other authors' words, about it
BM25_WEIGHT_SUMMARY = 1.0  # session summaries live in their own table (session_fts), one row a session

# Ranking. Text strength (bm25 over the terms the item matched) decides; every other factor
# multiplies it by 1 + its value. What the query names about an item (its repository, a symbol or
# a file it cites) is text evidence and weighs most; topology, freshness, stated confidence, kind
# and recency only order near-equal matches: none of them can lift a one-common-word match over
# a match of the query's rare words, whatever repository either lives in.
RANK_WEIGHT_TEXT = 1.0
RANK_NAMED_BONUS = {"repository": 0.30, "symbol": 0.50, "file": 0.50}
RANK_TOPOLOGY_BONUS = {0: 0.20, 1: 0.12, 2: 0.06, 3: 0.03}  # same repo, direct, 2 hops, workspace
RANK_FRESHNESS_PENALTY = {"current": 0.0, "unknown": -0.03, "possibly_stale": -0.05, "stale": -0.15}
RANK_CONFIDENCE_WEIGHT = 0.10  # times (confidence - 0.5); items without a stated confidence get 0
RANK_KIND_BONUS = {"known_issue": 0.03, "decision": 0.02, "constraint": 0.02, "finding": 0.02}
RANK_RECENCY_BONUS = 0.05  # decays with a 90-day half-life
RANK_RECENCY_HALF_LIFE_DAYS = 90.0
# Text strength is scaled by coverage ** RANK_COVERAGE_POWER: the share of the query's terms an
# item holds (1.0 when it holds them all). A term only the item's session summary holds counts
# RANK_SUMMARY_SHARE of a term, the summary being context rather than content.
RANK_COVERAGE_POWER = 1.0
RANK_SUMMARY_SHARE = BM25_WEIGHT_SUMMARY / BM25_WEIGHT_DETAIL  # half a detail word's weight
RANK_CODE_SHARE = 0.25  # a term only the words of the cited code hold counts this share of a term
# A candidate holding less than this share of the query's words, weighed by their idf, matches only
# the query's common words: it ranks after every candidate holding a distinctive one, and says so.
RANK_WEAK_SHARE = 0.25
CANDIDATE_FLOOR = 50  # candidates ranked (the head a search pages through before the rest)
# FTS5 ranks its best CANDIDATE_WINDOW x (candidate count) matches on its own before the scope
# filter joins them; see _ranked_matches.
CANDIDATE_WINDOW = 4
MATCH_COUNT_EXACT = 1000  # rows the query words may hold for search to count its matches exactly

STOP_WORDS = frozenset(
    """a about above after again against all am an and any anyone anything are as at be because been
    before being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers him his how i if in into is it its itself just look
    looked looking me more most my no nor not now of off on once only or other our out over own same
    she should so some such than that the their them then there these they this those through to too
    under until up very was we were what when where which while who whom why will with would you your
    yours anybody someone something thing things please know knows tell""".split()
)

SCHEMA_APP_ID = 0x77637478  # "wctx", in PRAGMA application_id
