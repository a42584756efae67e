from __future__ import annotations

import time

from .authors import author_filter, row_recorded_by
from .candidates import (
    count_matches,
    fallback_candidates,
    more_matches,
    scope_clause,
    scope_test,
    search_scope,
    select_terms,
    tail_candidates,
    text_candidates,
)
from .code_refs import CodeReference
from .constants import CANDIDATE_FLOOR, EVIDENCE_KINDS, MAX_LIMIT, RANK_FRESHNESS_PENALTY, _lazy_pattern
from .errors import UsageError
from .freshness import freshness_of
from .records import _repos
from .rerank import claim_text, idf, item_views, query_coverage, query_names, rerank, term_hits
from .results import ResultFacts, explain
from .words import identifier_words, matched_word, query_terms, selecting_terms

# -- the search service --------------------------------------------------------------------------

SEARCH_PAGE_RE = _lazy_pattern(r"^(?:o([0-9]{1,6})|r([0-9]{1,12}))$")


class SearchRequest:
    """One search as asked, checked once: a bad value is a UsageError before the store is read.

    ``workspace`` scopes a caller that stands in no registered repository (an MCP server started
    for a workspace, a shell outside every checkout) to that workspace's repositories; a caller
    inside a repository keeps its own scope. ``page`` is a ``next_page`` token from an earlier
    call with the same arguments: the ranked results continue, then every other match, newest
    first, so paging reaches the last match at a constant cost per page (``offset`` into the
    ranked head, or ``before``, the rid the tail continues below). ``files`` (paths in the
    caller's repository) join the working tree's changed files for recall by code reference
    when the query finds nothing. ``author`` (``me``, or an author as typed: the whole "Name
    <email>", the name or the address) keeps only that person's items; what this person hid
    (wctx hide) stays out unless ``include_hidden``. A weak match (it holds only the query's
    common words) is held back when a stronger one exists, unless ``all_matches``."""

    __slots__ = (
        "query", "repo", "cwd", "workspace", "all_scope", "limit", "offset", "before", "kinds", "rank",
        "include_inactive", "files", "author", "include_hidden", "all_matches",
    )  # fmt: skip

    def __init__(
        self, query, repo=None, cwd=None, limit=10, kinds=None, all_scope=False, rank="topology",
        include_inactive=False, workspace=None, files=None, page=None, author=None, include_hidden=False,
        all_matches=False,
    ):  # fmt: skip
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
        self.offset, self.before = 0, None
        if page is not None:
            m = SEARCH_PAGE_RE.match(page) if isinstance(page, str) else None
            if m is None:
                raise UsageError("page %r is not one search issued; omit it to start from the top" % (page,))
            self.offset, self.before = (
                (int(m.group(1)), None) if m.group(1) is not None else (None, int(m.group(2)))
            )
        self.query, self.repo, self.cwd, self.workspace, self.all_scope = (
            query,
            repo,
            cwd,
            workspace,
            all_scope,
        )
        self.limit, self.kinds, self.rank, self.include_inactive, self.files = (
            limit,
            kinds,
            rank,
            include_inactive,
            files,
        )
        self.author, self.include_hidden, self.all_matches = author, include_hidden, all_matches


def search(store, query, *, facts=None, **asked):
    """Search evidence from the caller's repository outward (docs/commands.md describes the shape).

    ``asked``: SearchRequest's keywords (repo, cwd, limit, kinds, all_scope, rank,
    include_inactive, workspace, files, page, author, include_hidden, all_matches), which says what
    each does. ``facts``, a dict, receives each result's ResultFacts by its id (search_phrasings
    explains a fused result again from them). ``held_back`` counts the weak matches this page would
    have shown, and paging on reaches them among every other match."""
    started = time.perf_counter()
    ask = SearchRequest(query, **asked)
    store.begin_read()
    scope = search_scope(store, ask.repo, ask.cwd, ask.all_scope, ask.workspace)
    all_terms = query_terms(query)
    terms = select_terms(store, all_terms)
    words = selecting_terms(terms)  # what selects candidates; the rerank's coverage reads every term
    who = author_filter(store, ask.author, ask.include_hidden)
    where, params = scope_clause(scope, ask.kinds, ask.include_inactive, who)
    head_size = max(CANDIDATE_FLOOR, ask.limit)

    # candidates
    mode = "text"
    admits = scope_test(scope, ask.kinds, ask.include_inactive, who)
    cands, beyond = (
        text_candidates(store, terms, words, where, params, head_size, ask.rank, admits)
        if terms
        else ([], False)
    )
    if not cands:
        mode = "fallback"  # no searchable words, or nothing matched them: still help
        cands = fallback_candidates(store, scope, where, params, ask.limit, files=ask.files, cwd=ask.cwd)

    # rerank
    views = {}
    if mode == "text" and ask.rank != "fts":
        views = item_views(store, [c.rid for c in cands])
        query_names(store, scope, query, words, cands, views)
        query_coverage(terms, cands, views, idf(store, terms))
        rerank(cands, scope, time.time())
    cands, weak = _held_back(cands, ask.all_matches)
    ranked = _RankedHead(store, cands, views, ask, head_size)

    if mode == "text":
        matches, exact = count_matches(store, words, where, params)
    else:
        matches, exact = len(cands), True
    held_back = 0
    if ask.before is None:
        page_cands, after, next_page, held_back = ranked.page(len(weak))
        if next_page is None and mode == "text":
            if beyond or more_matches(store, words, where, params, cands, matches, exact):
                next_page = "r0"  # the ranked head is done; every other match follows, newest first
    else:
        page_cands, after, next_page = _tail_page(store, words, where, params, ask, ranked)
    results = _explained(page_cands, ranked, terms, scope, mode, facts)
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
        "rank": ask.rank,
    }


def _tail_page(store, words, where, params, ask, ranked):
    """(the candidates of a page past the ranked head: every other match, newest first; their
    cursors; the next page's cursor or None). A query of no searchable word matches nothing past
    its head."""
    if not words:
        return [], [], None
    exclude = [c.rid for c in ranked.cands]
    page_cands = tail_candidates(store, words, where, params, ask.before or None, exclude, ask.limit + 1)
    next_page = "r%d" % page_cands[ask.limit - 1].rid if len(page_cands) > ask.limit else None
    page_cands = page_cands[: ask.limit]
    ranked.check([c.rid for c in page_cands])
    return page_cands, ["r%d" % c.rid for c in page_cands], next_page


def _explained(page_cands, ranked, terms, scope, mode, facts):
    """The results of one page, each with its reasons and freshness (_RankedHead ``ranked`` holds
    their views and verdicts); ``facts``, when a dict, receives each one's ResultFacts."""
    results = []
    now = time.time()
    for c in page_cands:
        view = ranked.views[c.rid]
        item = view.result_dict(now)
        f = ranked.fresh.get(c.rid) or {"verdict": "unknown", "reasons": ["not checked"]}
        said = _result_facts(terms, view, c, scope, f, mode, item["age"])
        item["reasons"] = explain(said)
        if facts is not None:
            facts[item["id"]] = said
        item["freshness"] = {"verdict": f["verdict"], "reasons": f["reasons"]}
        results.append(item)
    return results


def _held_back(cands, all_matches):
    """(the candidates ranked, the weak ones held back): a weak match is held back when a stronger
    one exists, unless ``all_matches``."""
    weak = [c for c in cands if c.weak]
    if weak and not all_matches and len(weak) < len(cands):
        return [c for c in cands if not c.weak], weak  # held back: stronger matches exist
    return cands, []


class _RankedHead:
    """The ranked candidates of one search in their final order: freshness only lowers a score, so
    fetching it for the current top until the top is stable gives the same order as fetching it
    for every candidate. ``views`` and ``fresh`` fill as rows are looked at; each checkout is read
    once per search."""

    def __init__(self, store, cands, views, ask, head_size):
        self.store, self.cands, self.views, self.ask = store, cands, views, ask
        self.fresh = {}
        self.final = {}  # {rid: score with its freshness}, once known; the score alone until then
        self.below = _replacements(cands, views) if ask.include_inactive else {}
        self.heads = {}
        self.repos = store.memo(("repo-map",), lambda: {r.id: r for r in _repos(store)})
        self.want = min((ask.offset or 0) + ask.limit, head_size)
        self.ordered = self._settle()

    def _order(self, c):
        # The first band before the second, weak matches after the rest; a superseded item never
        # above its replacement.
        score, is_weak = self.final.get(c.rid, c.score), c.weak
        replacement = self.below.get(c.rid)
        if replacement is not None:
            score = min(score, self.final.get(replacement.rid, replacement.score) * 0.999)
            is_weak = is_weak or replacement.weak
        return (c.band, is_weak, -score, -c.rid)

    def _settle(self):
        first = True  # the page first; when freshness reorders it, as many again past it at once
        while True:
            ordered = sorted(self.cands, key=self._order)
            missing = [c.rid for c in ordered[: self.want] if c.rid not in self.fresh]
            if not missing:
                return ordered
            if not first:
                missing += [c.rid for c in ordered[self.want :] if c.rid not in self.fresh][: len(missing)]
            first = False
            self.check(missing)
            if self.ask.rank == "fts":
                return ordered
            for c in self.cands:
                if c.rid in self.fresh and c.rid not in self.final:
                    verdict = self.fresh[c.rid]["verdict"]
                    self.final[c.rid] = c.score * (1.0 + RANK_FRESHNESS_PENALTY.get(verdict, 0.0))

    def check(self, rids):
        """Freshness (and the item views it reads) for these candidates, once each."""
        more = [r for r in rids if r not in self.views]
        if more:
            self.views.update(item_views(self.store, more))
        missing = [r for r in rids if r not in self.fresh]
        anchors = {rid: v.anchors for rid, v in self.views.items()}
        self.fresh.update(
            freshness_of(self.store, missing, anchors=anchors, heads=self.heads, repos=self.repos)
        )

    def page(self, weak):
        """(the candidates of this page, their cursors, the next page's cursor within the head or
        None, how many of the ``weak`` held back this page would have shown after them)."""
        offset, limit = self.ask.offset, self.ask.limit
        page_cands = self.ordered[: self.want][offset:]
        end = min(offset + limit, len(self.cands) + weak)
        held_back = max(0, end - max(offset, len(self.cands)))
        after = ["o%d" % (offset + i + 1) for i in range(len(page_cands))]
        return page_cands, after, ("o%d" % self.want if self.want < len(self.ordered) else None), held_back


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
    phrasings = _phrasings(phrasings, kwargs)
    if len(phrasings) == 1:
        return search(store, phrasings[0], limit=limit, **kwargs)
    started = time.perf_counter()
    runs, facts = [], []
    for text in phrasings:
        facts.append({})
        runs.append(search(store, text, limit=limit, facts=facts[-1], **kwargs))
    fused = [n for n, run in enumerate(runs) if run["mode"] == "text"] or list(range(len(runs)))
    results = _fused(runs, facts, fused, limit)
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


def _fused(runs, facts, fused, limit):
    """The ``limit`` best results of the runs numbered ``fused`` by reciprocal rank fusion, each
    explained again as its best list found it, with every list that did (``facts``: each run's
    ResultFacts by id)."""
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
    return results


def _phrasings(phrasings, kwargs):
    """The phrasings of one question as a list, checked (search_phrasings' arguments)."""
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
    return phrasings


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
        text, symptom, symbols, paths, stems, code, summary = _text_facts(terms, view, cand)
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


def _text_facts(terms, view, cand):
    """(text, symptom, symbol, path, stem, code and summary hits) of a text match, for ResultFacts."""
    row = view.row
    code = summary = ()
    hits = cand.text_hits if cand.text_hits is not None else term_hits(terms, view.text_words)
    text = _pairs(hits, claim_text(row))
    # A cited symbol or path matches a query word that is one of its whole words; one that only
    # shares a stem with a word of it is said to, with both words (never as a match).
    # A short number names no symbol or path (selecting_terms).
    named = selecting_terms(terms)
    symbols, stems = _cited_hits(named, [(sym, words) for sym, words, _, _ in view.anchor_words])
    paths, path_stems = _cited_hits(named, [(p, words) for _, _, p, words in view.anchor_words])
    paths = list(dict.fromkeys(paths))
    stems += [hit for hit in path_stems if hit not in stems]
    if view.code_words:
        code = _pairs([t for t in term_hits(terms, view.code_words) if t not in hits], view.code_text)
    symptom = _pairs([t for t in term_hits(terms, view.symptom_words) if t not in hits], row["symptom"])
    if not (text or symptom or symbols or paths or code):
        summary = _pairs(term_hits(terms, view.summary_words), row["session_summary"])
    return text, symptom, symbols, paths, stems, code, summary


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
        hits = term_hits(terms, words)
        if hits:
            stems.append((name, tuple(_pairs(hits, name))))
    return whole, stems


def _pairs(terms, text):
    """[(query term, the word of ``text`` as written it matched)] (matched_word), in term order."""
    return [(t, matched_word(t, text)) for t in terms]
