"""Plain BM25's list is found among the rows of the query's rarer words when no row holding only
its common words could reach the head: the results are those of ranking every row (ids, order,
reasons, counts, paging), and the work of scoring the common words' rows is not done."""

from __future__ import annotations

import json
import random

import wctx

# Made-up words, so that nothing but this store decides how common each one is.
WORDS = (
    "plinth gasket sprocket flange rivet bushing grommet spindle ratchet pulley lever axle "
    "hinge latch clamp bracket collar sleeve washer shim cotter dowel tappet cam rocker valve "
    "piston crank gudgeon journal bearing seal gland packing nozzle manifold plenum baffle"
).split()
COMMON = ("plinth", "gasket")  # in nearly every item: their posting lists are the long ones
RARER = "cam"  # in one item of four, besides where the draw puts it
REPOS = ("upload-sdk", "docs-ui", "api-gateway")


def _store(product, items=360, seed=11):
    rng = random.Random(seed)
    weights = [1.0 / (1 + n) ** 0.9 for n in range(len(WORDS))]
    by_repo = {name: [] for name in REPOS}
    for n in range(items):
        words = list(COMMON) + rng.choices(WORDS[2:], weights=weights[2:], k=rng.randint(5, 10))
        if n % 4 == 0:
            words.append(RARER)
        rng.shuffle(words)
        kind = ("finding", "decision", "known_issue")[n % 3]
        by_repo[REPOS[n % 3]].append({"kind": kind, "claim": " ".join(words), "repo": REPOS[n % 3]})
    cwd = {"upload-sdk": product.sdk, "docs-ui": product.ui, "api-gateway": product.gateway}
    for repo, batch in by_repo.items():
        wctx.capture(product.store, batch, cwd=cwd[repo].path)
    return rng


def _shown(res):
    res = dict(res)
    res.pop("ms")
    return json.dumps(res, sort_keys=True, default=str)


def _searches(rng, n):
    """Queries of a rarer word or two beside common ones, asked as users and agents ask them."""
    options = (
        {"repo": "docs-ui"},
        {"repo": "docs-ui", "limit": 3},
        {"repo": "upload-sdk", "limit": 50},
        {"repo": "api-gateway", "kinds": ["decision"]},
        {"repo": "docs-ui", "rank": "fts"},
        {"repo": "docs-ui", "page": "o10"},
        {"repo": "docs-ui", "all_scope": True, "all_matches": True},
    )
    for _ in range(n):
        words = rng.sample(WORDS[2:], rng.randint(1, 3)) + rng.sample(COMMON, rng.randint(1, 2))
        rng.shuffle(words)
        yield " ".join(words), dict(rng.choice(options))


def test_pruned_ranking_gives_what_ranking_every_row_gives(product, monkeypatch):
    rng = _store(product)
    asked = list(_searches(rng, 60))
    pruned = [_shown(wctx.search(product.store, q, **kw)) for q, kw in asked]
    monkeypatch.setattr(wctx, "PRUNE_TRIES", 0)  # every row holding a query word is scored
    for (q, kw), got in zip(asked, pruned):
        assert got == _shown(wctx.search(product.store, q, **kw)), (q, kw)


def _work(store, query):
    """The SQLite virtual machine steps one search takes (a count, not a time)."""
    wctx.search(store, query, repo="docs-ui")  # warm: the store's per-generation lookups are made
    steps = [0]

    def tick():
        steps[0] += 1
        return 0

    store.db.set_progress_handler(tick, 1)
    try:
        wctx.search(store, query, repo="docs-ui")
    finally:
        store.db.set_progress_handler(None, 1)
    return steps[0]


def test_a_rare_word_spares_scoring_every_row_of_the_common_ones(product, monkeypatch):
    _store(product)
    query = RARER + " plinth gasket"  # a word of one item in four beside two of every item
    pruned = _work(product.store, query)
    monkeypatch.setattr(wctx, "PRUNE_TRIES", 0)
    whole = _work(product.store, query)
    assert pruned < 0.9 * whole, (pruned, whole)
