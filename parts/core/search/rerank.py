from __future__ import annotations

import re

from .caches import SPACED_FORMS
from .candidates import doc_freqs, plain_rows
from .constants import (
    RANK_CODE_SHARE,
    RANK_CONFIDENCE_WEIGHT,
    RANK_COVERAGE_POWER,
    RANK_KIND_BONUS,
    RANK_NAMED_BONUS,
    RANK_PROXIMITY_BONUS,
    RANK_PROXIMITY_WINDOW,
    RANK_SUMMARY_SHARE,
    RANK_TOPOLOGY_BONUS,
    RANK_WEAK_SHARE,
    RANK_WEIGHT_TEXT,
    STOP_WORDS,
)
from .freshness import SEARCH_ANCHOR_COLUMNS, _load_anchors
from .helpers import split_identifier
from .records import _repos
from .results import _evidence_rows, _result_dict, age_text, anchor_files, recency_bonus
from .words import _term_forms, index_text, query_terms, selecting_terms

# -- rerank --------------------------------------------------------------------------------------


def _symbol_words(symbol):
    """The lower-cased words of a cited symbol, as query_names compares them with the query's
    terms (Client.uploadDocument -> client, upload, document); once per symbol."""
    parts = [p.lower() for p in re.split(r"[^\w]+|_", symbol) if p]
    return tuple(q.lower() for p in parts for q in (split_identifier(p) or [p]))


def claim_text(row):
    """What of an item's own text search matches words in besides what it cites."""
    return (row["claim"] or "") + "\n" + (row["detail"] or "")


def _words_of(text):
    """The index words of ``text`` (index_text) between spaces, one space before and after: what
    term_hits finds terms in, as compact as the text itself (a set of the words costs ten times
    the memory, for a process that keeps thousands of items' words)."""
    return " %s " % index_text(text) if text else ""


@SPACED_FORMS
def _spaced_forms(term):
    """The match forms of ``term`` (match_forms), each between spaces, as _words_of holds words."""
    return tuple(" %s " % form for form in _term_forms(term))


def term_hits(terms, words):
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
    """What search reads of one evidence item, kept per store generation (item_views): its row
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
        self.text_words = _words_of(claim_text(row))
        self.symptom_words = _words_of(row["symptom"])
        self.anchor_words = tuple(
            (a["symbol"], _words_of(a["symbol"]), a["path"], _words_of(a["path"])) for a in anchors
        )
        self.cited_words = " ".join(w for _, sw, _, pw in self.anchor_words for w in (sw, pw) if w)
        self.summary_words = summary_words
        self.files = anchor_files(row, anchors)
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


def item_views(store, rids):
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
        for rid, code, written in plain_rows(
            store,
            "SELECT rowid, code, code_words FROM evidence_fts WHERE rowid IN (%s) AND code != ''"
            % ",".join("?" * len(chunk)),
            chunk,
        ):
            out[rid] = (code, written)
    return out


def query_names(store, scope, raw_query, terms, cands, views):
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
        named = [("repository", names[c.repo_id])] if c.repo_id in named_repos else []
        view = views.get(c.rid)
        if view is not None:
            named += _cited_names(view, c.repo_id, named_repos, names, term_set, text)
        c.named = tuple(dict.fromkeys(named)) if named else ()


def _cited_names(view, repo_id_of_item, named_repos, names, term_set, text):
    """What of an item's citations the query names (query_names): another repository among
    ``named_repos`` whose code it cites, a symbol every part of which is among ``term_set``, a file
    whose path or name is in the query's ``text``."""
    named = []
    for repo_id, sym, needed, path, low, base in view.names:
        if repo_id in named_repos and repo_id != repo_id_of_item:
            named.append(("repository", names[repo_id]))  # it cites that repository's code
        if needed is not None and term_set.issuperset(needed):
            named.append(("symbol", sym))
        if low and (low in text or (base and base in text)):
            named.append(("file", path))
    return named


def _name_parts(anchor):
    """(repository id, symbol, the parts of the symbol a query must hold to name it or None, path,
    path lower-cased, file name lower-cased when it is distinctive enough to name alone or None):
    what query_names compares a query with, once per cited anchor. A symbol with no part left
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


def query_coverage(terms, cands, views, idf):
    """Mark each candidate with the share of the query it answers and whether it is weak.

    The share: the number of the query's terms its claim, detail, symptom, cited symbols or cited
    paths hold, plus RANK_CODE_SHARE for each one only the words of its cited code hold and
    RANK_SUMMARY_SHARE for each one only its session summary holds, over the number of terms.
    bm25 adds up what an item matches with column weights, so one common word in a short claim can
    outscore every rare word of the query in a detail; coverage is what keeps that match below the
    fuller one. The share counts terms, not their idf: bm25 has weighed each by its rarity already,
    and weighing it again let one rare word matched anywhere outrank several of the query's words
    in a claim. The words of a repository the query names are its name, not content, for an item
    about that repository: the named factor counts them once for it (query_names), so they weigh
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
        view = views.get(c.rid)
        if view is None:
            continue
        name_words, weight = _name_weights(terms, c.named, plain)
        whole = sum(weight.values())
        c.text_hits, own, share, summary = _held_terms(terms, view, weight, name_words)
        held = sum(idf.get(t, 0.0) for t in own) + RANK_SUMMARY_SHARE * sum(idf.get(t, 0.0) for t in summary)
        best = max([idf.get(t, 0.0) for t in own] or [0.0])
        c.weak = whole_idf > 0 and held < RANK_WEAK_SHARE * whole_idf and best < RANK_WEAK_SHARE * top_idf
        if len(terms) > 1 and whole:
            c.coverage = max(floor, share / whole)
    query_proximity(terms, cands, views)


def query_proximity(terms, cands, views):
    """Mark each candidate with the share of the query's adjacent word pairs its own words (claim,
    detail, how the problem shows itself) hold within RANK_PROXIMITY_WINDOW words of each other:
    "closing the connection pool" asked, "connection pool closed" written. Words that merely occur
    somewhere in an item are a bag; words that occur together are the phrase asked about. The
    pairs are those of the query's words in order, an identifier counted by its parts (query_terms
    lists both), so the share measures how much of the question an item says in one place."""
    words = _proximity_words(terms)
    if len(words) < 2:
        return
    form_of = {}  # a form two of the words share (retry, retries) counts for the first
    for n, t in enumerate(words):
        for form in _spaced_forms(t):
            form_of.setdefault(form, n)
    spaced = [(form, n) for form, n in form_of.items()]
    pairs = len(words) - 1
    for c in cands:
        view = views.get(c.rid)
        if view is None or (c.text_hits is not None and len(c.text_hits) < 2 and not view.symptom_words):
            continue  # its claim and detail hold one query word at most (query_coverage): no pair
        near = _near_pairs(spaced, view.text_words, len(words))
        if view.symptom_words:
            near |= _near_pairs(spaced, view.symptom_words, len(words))
        c.proximity = len(near) / pairs


def _proximity_words(terms):
    """The query's words whose order proximity reads: an identifier or version by its parts (the
    whole is matched as their phrase already), each word once."""
    return [
        t for n, t in enumerate(terms) if "_" not in t and "." not in t and not _joined(t, terms[n + 1 :])
    ]


def _joined(term, after):
    """Whether the terms right ``after`` a term spell it (query_terms puts a camelCase identifier's
    parts right after it: retryreceipt, retry, receipt)."""
    joined = ""
    for t in after:
        joined += t
        if not term.startswith(joined):
            return False
        if joined == term:
            return True
    return False


def _near_pairs(spaced, words, count):
    """{n: the query's words n and n + 1 occur within RANK_PROXIMITY_WINDOW words of each other in
    ``words`` (_words_of)}, ``spaced`` pairing each match form (between spaces) with the query word
    n it matches. Found with str.find and measured by the spaces between two hits, never word by
    word: search does this for every candidate."""
    hits = []
    for form, n in spaced:
        at = words.find(form)
        while at >= 0:
            hits.append((at, n))
            at = words.find(form, at + 1)
    near = set()
    if len(hits) < 2:
        return near
    hits.sort()
    last = [None] * count  # where each query word was last seen
    for at, n in hits:
        last[n] = at
        if n > 0 and last[n - 1] is not None and words.count(" ", last[n - 1], at) <= RANK_PROXIMITY_WINDOW:
            near.add(n - 1)
        if (
            n + 1 < count
            and last[n + 1] is not None
            and words.count(" ", last[n + 1], at) <= RANK_PROXIMITY_WINDOW
        ):
            near.add(n)
    return near


def _name_weights(terms, named, plain):
    """(the words of the repositories the query names that an item is about (``named``), each
    term's weight in its share: none for those words, 1 for the others; ``plain`` when none)."""
    name_words = {t for what, n in named if what == "repository" for t in query_terms(n)}
    return name_words, ({t: 0.0 if t in name_words else 1.0 for t in terms} if name_words else plain)


def _held_terms(terms, view, weight, name_words):
    """(the query terms an item's claim and detail hold, apart from what it cites: the result's
    reasons name these; every term it holds in its own words, how the problem shows itself, its
    cited names or the words of its cited code, and ``name_words``, those of a repository the query
    names that it is about; their share of the query, ``weight`` each, a code word's
    RANK_CODE_SHARE of it, a word only its session summary holds RANK_SUMMARY_SHARE; those
    summary-only words)."""
    text_hits = term_hits(terms, view.text_words)
    own = set(text_hits)
    if len(own) < len(terms) and view.symptom_words:  # the item's own words, the asker's kind
        own.update(term_hits([t for t in terms if t not in own], view.symptom_words))
    if len(own) < len(terms):
        own.update(term_hits([t for t in terms if t not in own], view.cited_words))
    share = sum(weight[t] for t in own)
    if len(own) < len(terms) and view.code_words:
        coded = [t for t in term_hits(terms, view.code_words) if t not in own]
        share += RANK_CODE_SHARE * sum(weight[t] for t in coded)
        own.update(coded)
    own.update(name_words)  # the item is about the repository the query names
    summary = []
    if len(own) < len(terms) and view.summary_words:
        summary = [t for t in term_hits(terms, view.summary_words) if t not in own]
        share += RANK_SUMMARY_SHARE * sum(weight[t] for t in summary)
    return text_hits, own, share, summary


def idf(store, terms):
    """{term: log((items + 1) / (items holding it + 0.5))}: how distinctive each query term is
    (0 for a term no item holds: it distinguishes nothing that is found)."""
    import math

    df = doc_freqs(store, terms)
    total = store.memo(("items",), lambda: store.one("SELECT count(*) FROM evidence_fts")[0])
    return {t: math.log((total + 1.0) / (df[t] + 0.5)) if df.get(t) else 0.0 for t in terms}


def rerank(cands, scope, now):
    """Score = text strength x query coverage x how much of the query it says together
    (query_proximity) x what the query names (once for each kind of fact: an item citing two
    symbols the query names is no likelier the answer than one citing one of them, and a product
    of their bonuses overrode the text) x (mildly) topology, confidence, kind and recency. Every
    factor but coverage, proximity and the named ones is within a few tens of percent, so a
    clearly stronger text match wins whatever repository it lives in; they order near-equals."""
    reach = scope.topology.reach
    for c in cands:
        score = RANK_WEIGHT_TEXT * c.strength * c.coverage**RANK_COVERAGE_POWER
        score *= 1.0 + RANK_PROXIMITY_BONUS * c.proximity
        for what in dict.fromkeys(what for what, _ in c.named):  # each kind once: two symbols, one fact
            score *= 1.0 + RANK_NAMED_BONUS[what]
        distance = reach.get(c.repo_id, (None,))[0]
        score *= 1.0 + RANK_TOPOLOGY_BONUS.get(distance, 0.0)
        if c.confidence is not None:
            score *= 1.0 + RANK_CONFIDENCE_WEIGHT * (c.confidence - 0.5)
        score *= 1.0 + RANK_KIND_BONUS.get(c.kind, 0.0) + recency_bonus(c.created_at, now)
        c.score = score
