"""Search as a user meets it on real-looking stores: the asker's own repository name is not a
fact of the question, symbols match by whole identifier parts, reasons name the query word and the
word it matched, filler matches say they are weak and rank below distinctive ones, a superseded
item ranks below its replacement, a kind filter's match count counts that kind, and the words of
the cited code (its comments, docstrings and the subjects of the commits that changed it) find an
item asked about in those words, refreshed when the item is confirmed."""

from __future__ import annotations

from conftest import capture_item

import wctx


def _ids(res):
    return [r["id"] for r in res["results"]]


def _add(product, claim, repo="upload-sdk", detail=None, files=None, summary=None):
    return capture_item(product, claim, repo, detail, files, summary)[0]


def _reasons(res, item):
    return next(r["reasons"] for r in res["results"] if r["id"] == item)


def test_the_askers_own_repository_name_is_no_fact_of_the_question(product):
    local = _add(product, "the preview pane keeps stale thumbnails", repo="docs-ui")
    remote = _add(product, "thumbnail cache keeps stale previews after an upload retry", repo="upload-sdk")
    res = wctx.search(product.store, "docs-ui stale thumbnails after retry", repo="docs-ui")
    assert not any("query names repository docs-ui" in r for x in res["results"] for r in x["reasons"])
    assert _ids(res)[:2] == [remote, local], [x["reasons"] for x in res["results"][:2]]
    # Named from elsewhere, the same repository is a fact of the question again.
    named = wctx.search(product.store, "docs-ui stale thumbnails", repo="upload-sdk")
    assert "query names repository docs-ui" in _reasons(named, local)


def test_a_symbol_matches_by_a_whole_identifier_part_never_a_stem(product):
    product.sdk.write("src/body.py", "class Payload:\n    def read_json(self):\n        return {}\n")
    product.sdk.commit("payload reader")
    item = _add(product, "body decoding differs between clients", files=["src/body.py#Payload.read_json"])
    for query in ("reads the body", "reading the body"):
        res = wctx.search(product.store, query, repo="upload-sdk")
        assert item in _ids(res), query
        assert not any(r.startswith("matches symbol") for r in _reasons(res, item)), query
    res = wctx.search(product.store, "json body", repo="upload-sdk")
    assert "matches symbol Payload.read_json" in _reasons(res, item)


def test_a_reason_names_the_query_word_and_the_word_it_matched(product):
    item = _add(
        product, "the signed link expired before the transfer finished", detail="cache miss on every retry"
    )
    res = wctx.search(product.store, "expiring links missing", repo="upload-sdk")
    text = next(r for r in _reasons(res, item) if r.startswith("matches the query text"))
    assert "expiring as expired" in text and "links as link" in text and "missing as miss" in text, text
    same = wctx.search(product.store, "transfer finished", repo="upload-sdk")
    text = next(r for r in _reasons(same, item) if r.startswith("matches the query text"))
    assert "transfer" in text and " as " not in text, text


def test_a_filler_match_says_it_is_weak_and_ranks_below_a_distinctive_match(product):
    items = [
        {"kind": "note", "claim": "test %d covers the routine path" % i, "repo": "upload-sdk"}
        for i in range(40)
    ]
    wctx.capture(product.store, items, cwd=product.sdk.path)
    distinctive = _add(product, "websocket reconnect loops forever", repo="api-gateway")
    res = wctx.search(
        product.store, "test websocket reconnect", repo="upload-sdk", limit=10, all_matches=True
    )
    assert _ids(res)[0] == distinctive
    fillers = res["results"][1:]
    assert fillers and all(r["reasons"][0].startswith("weak match: only the common word") for r in fillers), [
        r["reasons"][0] for r in fillers
    ]
    assert not res["results"][0]["reasons"][0].startswith("weak match")


def test_a_superseded_item_ranks_below_its_replacement(product):
    old = _add(product, "uploads stall because the chunk size is too small for slow uplinks")
    new = _add(product, "uploads stall: the proxy buffers chunks")
    wctx.supersede(product.store, old, new)
    res = wctx.search(
        product.store, "uploads stall chunk size slow uplinks", repo="upload-sdk", include_inactive=True,
        all_matches=True,
    )  # fmt: skip
    assert _ids(res).index(new) < _ids(res).index(old)
    assert "superseded by %s" % new in _reasons(res, old)


def test_a_kind_filter_counts_the_matches_of_that_kind(product):
    # More items hold the word than search counts one by one (MATCH_COUNT_EXACT): the count is
    # then estimated, and the estimate must be of the notes, not of every item holding the word.
    for kind, n in (("note", 400), ("finding", 800)):
        items = [
            {"kind": kind, "claim": "widget %s number %d" % (kind, i), "repo": "upload-sdk"} for i in range(n)
        ]
        for start in range(0, n, 200):
            wctx.capture(product.store, items[start : start + 200], cwd=product.sdk.path)
    assert 400 + 800 > wctx.MATCH_COUNT_EXACT
    for kinds, most in ((["note"], 400), (["finding"], 800)):
        res = wctx.search(product.store, "widget", repo="upload-sdk", kinds=kinds)
        assert res["candidates"] <= most, (kinds, res["candidates"], res["candidates_exact"])
        assert res["candidates"] >= len(res["results"])


TIMER_PY = '''def next_run(schedule, now):
    """Compute when the job fires next, honouring daylight saving transitions."""
    # clocks that jump forward skip the hour entirely
    return schedule.after(now)
'''


def test_the_words_of_the_cited_code_find_an_item_and_confirm_refreshes_them(product):
    product.sdk.write("src/timer.py", TIMER_PY)
    product.sdk.commit("Scheduler honours leap seconds from the tz database")
    item = _add(product, "jobs fire twice on some nights", files=["src/timer.py#next_run"])
    other = _add(product, "jobs queue grows during the nightly backup")
    for query, word in (
        ("daylight saving", "daylight"),
        ("clock jumps forward", "clocks"),
        ("leap seconds", "leap"),
    ):
        res = wctx.search(product.store, query, repo="upload-sdk")
        assert _ids(res)[0] == item, query
        code = [r for r in _reasons(res, item) if r.startswith("matches words of the cited code")]
        assert code and word in code[0], (query, _reasons(res, item))
    assert other not in _ids(wctx.search(product.store, "daylight saving", repo="upload-sdk"))
    # The code changes; until the item is confirmed its search row keeps the words it was recorded with.
    product.sdk.write("src/timer.py", TIMER_PY.replace("daylight saving transitions", "calendar holidays"))
    product.sdk.commit("Skip public holidays")
    assert _ids(wctx.search(product.store, "public holidays", repo="upload-sdk"))[:1] != [item]
    wctx.confirm(product.store, [item])
    assert _ids(wctx.search(product.store, "public holidays", repo="upload-sdk"))[0] == item
    gone = wctx.search(product.store, "daylight saving", repo="upload-sdk")
    assert gone["mode"] == "fallback", [
        r["reasons"] for r in gone["results"]
    ]  # nothing matches the words now


def test_the_words_of_the_cited_code_keep_no_secret(product):
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    product.sdk.write(
        "src/keys.py", 'def token():\n    """Deploy key for staging."""\n    return "%s"\n' % secret
    )
    product.sdk.commit("staging key")
    _add(product, "staging deploys use a fixed key", files=["src/keys.py#token"])
    for row in product.store.all("SELECT code FROM evidence_fts"):
        assert "a1b2c3" not in (row[0] or "").lower() and "ghp" not in (row[0] or "").lower()


# -- #28 on the real-history corpus: what the query names counts once, and only what it names --


def _background(product, n=30):
    """Items about other things, so that bm25 finds the words below rare, as in a real store."""
    items = [
        {"kind": "note", "claim": "review %d of the release notes" % i, "repo": "upload-sdk"}
        for i in range(n)
    ]
    wctx.capture(product.store, items, cwd=product.sdk.path)


def test_a_symbol_named_only_by_stop_words_is_named_by_no_query(product):
    # A template engine's node class ``If``: every part of its name is a stop word, so every
    # query held "all" of it and every item citing it was boosted as if the query named it.
    product.sdk.write("src/nodes.py", "class If:\n    pass\n\n\nclass Output:\n    pass\n")
    product.sdk.commit("template nodes")
    _background(product)
    cites_if = _add(
        product,
        "else blocks of loops use the buffer of a new frame in compiled templates",
        files=["src/nodes.py#If"],
    )
    answer = _add(product, "else blocks of loops use the buffer", files=["src/nodes.py#Output"])
    res = wctx.search(product.store, "use the buffer for the else block of loops", repo="upload-sdk")
    assert _ids(res)[:2] == [answer, cites_if], [x["reasons"] for x in res["results"][:2]]
    assert not any("symbol If" in r for x in res["results"] for r in x["reasons"]), res["results"]


def test_two_named_symbols_count_as_one_fact_of_the_question(product):
    # An item citing both functions a question names is about them once: the named bonus is
    # per kind of fact, so it cannot square and lift a weaker text match over the answer.
    product.sdk.write("src/prompts.py", "def confirm():\n    pass\n\n\ndef prompt():\n    pass\n")
    product.sdk.commit("prompts")
    _background(product)
    both = _add(
        product,
        "prompt and confirm strip ansi colour styles when the stream is a pipe",
        files=["src/prompts.py#confirm", "src/prompts.py#prompt"],
    )
    answer = _add(
        product,
        "confirm and prompt strip ansi colour styles when the stream is not a terminal",
        files=["src/prompts.py#confirm"],
    )
    res = wctx.search(
        product.store,
        "confirm and prompt strip ansi colour styles when the stream is not a terminal",
        repo="upload-sdk",
    )
    named = _reasons(res, both)
    assert "query names symbol confirm" in named and "query names symbol prompt" in named, named
    assert _ids(res)[:2] == [answer, both], [x["reasons"] for x in res["results"][:2]]


def test_a_named_repository_in_another_repositorys_text_counts_as_a_word_of_the_question(product):
    # "api-gateway" named from docs-ui: the gateway's own items get the named bonus, so the name
    # weighs nothing in their coverage. A docs-ui item whose claim says "api-gateway" is not about
    # that repository: the name is a word of the question it holds, and counts as one (it counted
    # for nothing, and an item holding the question's two other words came first).
    _background(product)
    answer = _add(product, "require api-gateway 4 or newer", repo="docs-ui")
    _add(product, "bump the dev dependency of the linter", repo="upload-sdk")
    gateway = _add(product, "release 4 drops a dependency", repo="api-gateway")
    res = wctx.search(product.store, "bump api-gateway dependency", repo="docs-ui")
    assert "query names repository api-gateway" in _reasons(res, gateway)
    assert _ids(res)[0] == answer, [(x["claim"], x["reasons"]) for x in res["results"][:4]]
