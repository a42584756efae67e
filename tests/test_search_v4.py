"""Search as a user meets it when the query words are spread over many items: the default ranking
never loses what plain BM25 finds (its first ten are the same whatever the limit, and it ranks
everything BM25's top 50 holds), short numbers are not words of the question, an identifier is
matched whole, and a weak match is held back, counted, when stronger ones exist."""

from __future__ import annotations

import json
import os
import random
import sys

import pytest
from conftest import capture_item

import wctx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mcp_helpers.fixtures import Servers  # noqa: E402

# Made-up words, so that nothing but this store decides how common each one is.
VOCABULARY = (
    "upload chunk retry token expiry cache preview thumbnail gateway route proxy buffer socket "
    "timeout header cookie session signer digest stream encoder decoder parser lexer template "
    "loader render filter escape markup handler blueprint context request response cursor page "
    "index ledger batch queue worker spool archive mirror replica shard quota budget ticket badge "
    "banner widget anchor beacon cipher vector tensor matrix pixel canvas sprite glyph kernel"
).split()
REPOS = ("upload-sdk", "docs-ui", "api-gateway")


def _ids(res):
    return [r["id"] for r in res["results"]]


def _generated_store(product, items=300, seed=7):
    """``items`` findings of 6 to 12 words drawn from VOCABULARY with a skewed frequency (a few
    words in many items, most in few), spread over three related repositories."""
    rng = random.Random(seed)
    weights = [1.0 / (1 + n) ** 0.8 for n in range(len(VOCABULARY))]
    by_repo = {name: [] for name in REPOS}
    for n in range(items):
        words = rng.choices(VOCABULARY, weights=weights, k=rng.randint(6, 12))
        repo = REPOS[n % len(REPOS)]
        by_repo[repo].append({"kind": "finding", "claim": " ".join(words), "repo": repo})
    cwd = {"upload-sdk": product.sdk, "docs-ui": product.ui, "api-gateway": product.gateway}
    for repo, batch in by_repo.items():
        wctx.capture(product.store, batch, cwd=cwd[repo].path)
    return rng


def _queries(rng, n=12):
    """Queries of three to five vocabulary words, common and rare ones mixed."""
    return [" ".join(rng.sample(VOCABULARY, rng.randint(3, 5))) for _ in range(n)]


def test_the_first_ten_results_do_not_depend_on_the_limit(product):
    rng = _generated_store(product)
    for query in _queries(rng):
        tops = {
            limit: _ids(wctx.search(product.store, query, repo="docs-ui", limit=limit, all_matches=True))[:10]
            for limit in (10, 20, 50, 120)
        }
        assert tops[10] == tops[20] == tops[50] == tops[120], (query, tops)


def test_nothing_plain_bm25_ranks_in_its_top_50_is_left_out(product):
    rng = _generated_store(product)
    checked = 0
    for query in _queries(rng, 20):
        bm25 = set(_ids(wctx.search(product.store, query, repo="docs-ui", limit=50, rank="fts")))
        every = wctx.search(product.store, query, repo="docs-ui", limit=50, all_matches=True)
        # Items holding every query word may join the ranked set beside BM25's best; where none
        # does, the default ranks exactly BM25's top 50, in its own order.
        whole = wctx.search(product.store, query, repo="docs-ui", limit=200, rank="fts")
        terms = set(whole["query_terms"])
        if any(_holds_all(r["claim"], terms) for r in whole["results"]):
            continue
        checked += 1
        assert set(_ids(every)) == bm25, query
        # ... and a limit of 10 ranks the same candidates: its ten are the first ten of those 50.
        ten = wctx.search(product.store, query, repo="docs-ui", limit=10, all_matches=True)
        assert _ids(ten) == _ids(every)[:10], query
    assert checked >= 5


def _holds_all(claim, terms):
    words = set(wctx.index_text(claim).split())
    return all(any(form in words for form in wctx.match_forms(t)) for t in terms)


def test_a_short_number_neither_selects_nor_names_a_symbol(product):
    product.sdk.write(
        "src/tls.py", "def set_minimum_tls_version_1_2(ctx):\n    return ctx\n"
    )  # fmt: skip
    product.sdk.commit("tls helper")
    sym = capture_item(
        product, "handshake settings for old servers", files=["src/tls.py#set_minimum_tls_version_1_2"]
    )[0]
    ones = [capture_item(product, "step %d of %d in the wizard" % (1, n))[0] for n in range(3, 6)]
    target = capture_item(product, "the legacy loader is planned for removal")[0]
    res = wctx.search(product.store, "planned removal 1", repo="upload-sdk", all_matches=True)
    assert _ids(res) == [target], [r["reasons"][0] for r in res["results"]]
    tracked = wctx.search(product.store, "handshake 2019/1", repo="upload-sdk", all_matches=True)
    reasons = next(r["reasons"] for r in tracked["results"] if r["id"] == sym)
    assert not any(r.startswith("matches symbol") for r in reasons), reasons
    # A query of nothing but the number still asks for it.
    only = wctx.search(product.store, "1", repo="upload-sdk")
    assert set(ones) <= set(_ids(only))


def test_an_identifier_is_matched_whole_and_keeps_its_stop_word_part(product):
    distractors = [
        capture_item(product, "proxy setting %s read from the environment on start" % w)[0]
        for w in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta")
    ]
    target = capture_item(product, "hosts listed in NO_PROXY still go through the tunnel")[0]
    res = wctx.search(product.store, "NO_PROXY setting", repo="upload-sdk")
    assert "no_proxy" in res["query_terms"]
    assert _ids(res)[0] == target, [r["claim"] for r in res["results"]]
    every = wctx.search(product.store, "NO_PROXY setting", repo="upload-sdk", all_matches=True)
    assert set(distractors) <= set(_ids(every))  # its parts are still matched

    scattered = capture_item(product, "an app may raise exceptions in teardown and hide the traceback")[0]
    whole = capture_item(product, "raise_app_exceptions set to false hides the traceback")[0]
    res = wctx.search(product.store, "raise_app_exceptions traceback", repo="upload-sdk")
    assert _ids(res)[:2] == [whole, scattered], [r["claim"] for r in res["results"]]


def _filler_store(product):
    items = [
        {"kind": "note", "claim": "test %d covers the routine path" % i, "repo": "upload-sdk"}
        for i in range(40)
    ]
    wctx.capture(product.store, items, cwd=product.sdk.path)
    return capture_item(product, "websocket reconnect loops forever", repo="api-gateway")[0]


def test_weak_matches_are_held_back_and_counted_when_a_strong_one_exists(product):
    distinctive = _filler_store(product)
    res = wctx.search(product.store, "test websocket reconnect", repo="upload-sdk", limit=10)
    assert _ids(res) == [distinctive]
    assert res["held_back"] == 9
    every = wctx.search(
        product.store, "test websocket reconnect", repo="upload-sdk", limit=10, all_matches=True
    )
    assert _ids(every)[0] == distinctive and len(every["results"]) == 10 and every["held_back"] == 0
    # Nothing stronger: the weak matches are the answer, and nothing is held back.
    weak_only = wctx.search(product.store, "test routine", repo="upload-sdk", limit=10)
    assert len(weak_only["results"]) == 10 and weak_only["held_back"] == 0


def test_the_cli_says_how_many_weak_matches_it_held_back(product, run_cli):
    _filler_store(product)
    text = run_cli(["search", "test", "websocket", "reconnect"], cwd=product.sdk.path)
    assert text.code == 0
    assert "9 weak matches held back (--all-matches shows them)" in text.out, text.out
    shown = run_cli(["search", "--json", "test", "websocket", "reconnect"], cwd=product.sdk.path).json
    assert shown["held_back"] == 9 and len(shown["results"]) == 1
    every = run_cli(
        ["search", "--json", "--all-matches", "test", "websocket", "reconnect"], cwd=product.sdk.path
    )
    assert len(every.json["results"]) == 10


@pytest.fixture
def servers(tmp_path):
    s = Servers(tmp_path)
    yield s
    s.close()


def test_the_mcp_reply_counts_what_it_held_back(servers):
    sdk = servers.start(cwd=servers.env["sdk"])
    sdk.initialize()
    items = [
        {"kind": "note", "claim": "test %d covers the routine path" % i, "repo": "upload-sdk"}
        for i in range(40)
    ]
    items.append({"kind": "finding", "claim": "websocket reconnect loops forever", "repo": "upload-sdk"})
    sdk.call_ok("record_evidence", {"items": items})
    found = sdk.call_ok("search_evidence", {"query": "test websocket reconnect"})
    assert [r["claim"] for r in found["results"]] == ["websocket reconnect loops forever"]
    assert found["held_back"] == 9
    text = sdk.call("search_evidence", {"query": "test websocket reconnect"})
    assert "9 weak matches held back (all_matches: true shows them)" in json.dumps(text)
    every = sdk.call_ok("search_evidence", {"query": "test websocket reconnect", "all_matches": True})
    assert len(every["results"]) == 10 and "held_back" not in every


def test_rank_fts_is_plain_bm25(product):
    # --rank fts is the reference the default never falls below: bm25's own list, whatever
    # mixture of common and middling words the query holds.
    _generated_store(product)
    df = wctx.doc_freqs(product.store, VOCABULARY)
    common = sorted(VOCABULARY, key=lambda w: -df[w])[:3]
    middling = [w for w in VOCABULARY if 50 <= df[w] <= 120][:6]
    assert len(middling) >= 3
    bm25 = "SELECT e.id FROM evidence_fts JOIN evidence e ON e.rid = evidence_fts.rowid "
    bm25 += "WHERE evidence_fts MATCH ? ORDER BY %s, evidence_fts.rowid DESC LIMIT 50" % wctx._bm25()
    for rare in middling:
        for query in (rare + " " + common[0], " ".join([rare] + common)):
            terms = wctx.query_terms(query)
            plain = [r[0] for r in product.store.db.execute(bm25, (wctx.fts_query(terms),))]
            ours = _ids(wctx.search(product.store, query, limit=50, rank="fts", all_scope=True))
            assert ours == plain, query
