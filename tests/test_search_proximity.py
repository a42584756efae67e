"""Term proximity in the default ranking, as a user meets it: of two items holding the same words
of a question, the one that says them together, as the question does, ranks first, even when
plain BM25 (a bag of words) prefers the other; and a phrase held together never lifts an item
that holds much less of the question over one that holds all of it."""

from __future__ import annotations

from conftest import capture_item

import wctx


def _ids(res):
    return [r["id"] for r in res["results"]]


def _background(product):
    # Items sharing none of the question's words, so that each of its words is distinctive.
    items = [
        {"kind": "note", "claim": "routine note %d about the nightly build badge" % i, "repo": "upload-sdk"}
        for i in range(12)
    ]
    wctx.capture(product.store, items, cwd=product.sdk.path)


QUESTION = "race condition when closing the connection pool"


def test_an_item_saying_the_question_together_ranks_above_the_same_words_scattered(product):
    _background(product)
    # The same words; the first says them as the question does and is two words longer, so plain
    # BM25 ranks it below the scattered one.
    together, _ = capture_item(product, "race condition when closing the connection pool during a hot reload")
    scattered, _ = capture_item(product, "pool race: the closing connection condition when reloading")
    bm25 = _ids(wctx.search(product.store, QUESTION, repo="upload-sdk", rank="fts"))
    assert bm25[:2] == [scattered, together]
    assert _ids(wctx.search(product.store, QUESTION, repo="upload-sdk"))[:2] == [together, scattered]


def test_a_phrase_does_not_lift_an_item_holding_little_of_the_question(product):
    _background(product)
    partial, _ = capture_item(product, "connection pool")
    whole, _ = capture_item(product, "pool race: the closing connection condition when reloading")
    ids = _ids(wctx.search(product.store, QUESTION, repo="upload-sdk", all_matches=True))
    assert ids.index(whole) < ids.index(partial)
