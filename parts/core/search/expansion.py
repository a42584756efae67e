from __future__ import annotations

import math

from .candidates import Candidate, bm25_call, doc_freqs, plain_rows, ranked_matches
from .constants import (
    EXPANSION_DOCS,
    EXPANSION_GATE,
    EXPANSION_MIN_DOCS,
    EXPANSION_POOL,
    EXPANSION_TERMS,
    EXPANSION_UNCOVERED,
    EXPANSION_WEIGHT,
)
from .rerank import claim_text
from .words import fts_query, match_forms, query_terms, selecting_terms

# -- query expansion from the first results (pseudo-relevance feedback) ---------------------------
#
# Askers describe what they see, items name the mechanism: a question can share one word with
# its answer. The words the first results agree on, and that are rare in the store, are the
# store's own vocabulary for what was asked; a second ranked pass over them finds the items that
# use that vocabulary without the asker's words, and adds a small share of its strength.


def expansion_terms(store, terms, cands, views):
    """The words to expand ``terms`` with: from the own text (claim, detail, symptom; not cited
    code) of the EXPANSION_DOCS best first-pass candidates (band 0, not weak, in rerank order),
    those at least EXPANSION_MIN_DOCS of them hold that are no query term's form, scored by how
    many of them hold the word times its rarity in the store; the EXPANSION_TERMS best, best
    first. [] when fewer than EXPANSION_MIN_DOCS candidates qualify."""
    top = sorted((c for c in cands if c.band == 0 and not c.weak), key=lambda c: (-c.score, -c.rid))
    top = [c for c in top if c.rid in views][:EXPANSION_DOCS]
    if len(top) < EXPANSION_MIN_DOCS or top[0].coverage >= EXPANSION_GATE:
        return []
    asked = {form for t in terms for form in match_forms(t)}
    held = {}
    for c in top:
        row = views[c.rid].row
        words = query_terms(claim_text(row) + "\n" + (row["symptom"] or ""))
        for word in set(selecting_terms(words)):
            if word.isalpha() and len(word) >= 3 and not asked.intersection(match_forms(word)):
                held[word] = held.get(word, 0) + 1
    shared = [w for w, n in held.items() if n >= EXPANSION_MIN_DOCS]
    if not shared:
        return []
    df = doc_freqs(store, shared)
    total = store.memo(("items",), lambda: store.one("SELECT count(*) FROM evidence_fts")[0])
    weight = {w: held[w] * math.log((total + 1.0) / (df[w] + 0.5)) for w in shared}
    best = sorted(weight, key=lambda w: (-weight[w], w))[:EXPANSION_TERMS]
    return [w for w in best if weight[w] > 0]


def expand(store, terms, cands, expansion, where, params, admits):
    """Add what a ranked pass over the ``expansion`` words finds: each of its EXPANSION_POOL best
    matches gains EXPANSION_WEIGHT x its strength there, on top of its strength for the query's
    own words (looked up for one the first pass did not rank in its first band, so that it is the
    same whatever the limit), and ranks in the first band. Returns the candidates, new ones last."""
    found, _ = ranked_matches(store, fts_query(expansion), where, params, EXPANSION_POOL, "feedback", admits)
    by_rid = {c.rid: c for c in cands}
    own = _own_strengths(store, terms, [c.rid for c in found if c.rid not in by_rid or by_rid[c.rid].band])
    out = list(cands)
    for f in found:
        c = by_rid.get(f.rid)
        if c is None:
            c = Candidate(f.rid, f.repo_id, f.kind, f.confidence, f.created_at, 0.0, "feedback")
            out.append(c)
        if f.rid in own or c.band:
            c.strength = c.score = own.get(f.rid, 0.0)
        c.feedback = f.strength
        c.band = 0
    return out


def add_feedback(cands):
    """Add each candidate's share of the expansion pass to its text strength, once its coverage of
    the query is known: the less of the query it holds, the more of EXPANSION_WEIGHT it gets."""
    for c in cands:
        if c.feedback:
            share = (1.0 - c.coverage) if EXPANSION_UNCOVERED else 1.0
            c.strength += EXPANSION_WEIGHT * c.feedback * share
            c.feedback = 0.0


def _own_strengths(store, terms, rids):
    """{rid: plain bm25 strength of the query's own words} for these items, those that match."""
    out = {}
    for i in range(0, len(rids), 500):
        chunk = rids[i : i + 500]
        for rid, score in plain_rows(
            store,
            "SELECT rowid, %s FROM evidence_fts WHERE evidence_fts MATCH ? AND rowid IN (%s)"
            % (bm25_call(), ",".join("?" * len(chunk))),
            [fts_query(terms)] + chunk,
        ):
            out[rid] = -score
    return out
