"""One question in several phrasings (an agent can give two or three), fused by rank: what
several phrasings find comes first, each result says which phrasings found it at which rank, a
phrasing that matches nothing does not dilute the rest, and bad input is refused plainly."""

from __future__ import annotations

import pytest
from conftest import capture_item

import wctx


def _ids(res):
    return [r["id"] for r in res["results"]]


def _store(product):
    claims = [
        ("uploads stall when the proxy buffers the whole request body", None),
        ("the proxy closes idle connections after sixty seconds", None),
        ("chunked transfer encoding is refused by the gateway", "large bodies must be sent in chunks"),
        ("resumable uploads restart from zero after a network drop", None),
        ("the request body is read twice when a retry happens", "the stream is buffered in memory"),
        ("progress events stop while a chunk is in flight", None),
    ]
    return [capture_item(product, claim, "upload-sdk", detail)[0] for claim, detail in claims]


def test_what_several_phrasings_find_ranks_above_what_one_finds(product):
    _store(product)
    phrasings = [
        "uploads hang behind the proxy",
        "request body stuck while buffering",
        "chunks of large bodies",
    ]
    alone = [wctx.search(product.store, p, repo="upload-sdk") for p in phrasings]
    fused = wctx.search_phrasings(product.store, phrasings, repo="upload-sdk")
    rank_in = [{item: n for n, item in enumerate(_ids(res), 1)} for res in alone]
    found_by = {
        item: [(k + 1, ranks[item]) for k, ranks in enumerate(rank_in) if item in ranks]
        for item in _ids(fused)
    }
    assert set(_ids(fused)) == set().union(*rank_in), "every phrasing's results are in the fused list"
    counts = [len(found_by[item]) for item in _ids(fused)]
    assert max(counts) >= 2 and counts == sorted(counts, reverse=True), (found_by, counts)
    for result in fused["results"]:
        said = [r for r in result["reasons"] if r.startswith("found by phrasing")]
        pairs = found_by[result["id"]]
        expect = ["%d (rank %d)" % pair for pair in pairs]
        assert len(said) == 1 and all(e in said[0] for e in expect), (said, pairs)
        # It still says what it matched, in the words of a phrasing that found it.
        assert result["reasons"][0].startswith("matches"), result["reasons"]
    assert [p["query_terms"] for p in fused["phrasings"]] == [res["query_terms"] for res in alone]
    assert fused["next_page"] is None


def test_a_phrasing_that_matches_nothing_leaves_the_others_as_they_were(product):
    _store(product)
    one = wctx.search(product.store, "proxy buffers uploads", repo="upload-sdk")
    fused = wctx.search_phrasings(product.store, ["proxy buffers uploads", "zebra quokka"], repo="upload-sdk")
    assert _ids(fused) == _ids(one)
    assert [p["fused"] for p in fused["phrasings"]] == [True, False]
    assert fused["mode"] == "text" and fused["fallback_reason"] is None


@pytest.mark.parametrize(
    "phrasings, kwargs, says",
    [
        (["a", "b", "c", "d"], {}, "at most 3 phrasings"),
        ([], {}, "phrasings must be a list"),
        (["proxy", 7], {}, "each phrasing must be text"),
        (["proxy", "uploads"], {"page": "o10"}, "one page"),
    ],
)
def test_bad_phrasings_are_refused_with_one_line(product, phrasings, kwargs, says):
    _store(product)
    with pytest.raises(wctx.UsageError) as err:
        wctx.search_phrasings(product.store, phrasings, repo="upload-sdk", **kwargs)
    assert says in str(err.value) and "\n" not in str(err.value)
