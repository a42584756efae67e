"""How search executes, as a long-lived process (the MCP server, an agent's library use) meets it:
what one search learns about the store (its words, its counts, each checkout's HEAD) never
outlives a change to the store or the checkout, so the next search in the same process sees the
new evidence and the new commit; and a query word that starts many indexed words still pages
through, and counts, every item it matches."""

from __future__ import annotations

import subprocess

import pytest

import wctx


def _add(product, claim, files=()):
    res = wctx.capture(
        product.store, [{"kind": "finding", "claim": claim, "repo": "upload-sdk", "files": list(files)}],
        cwd=product.sdk.path,
    )  # fmt: skip
    return res["evidence"][0]["id"]


def _ids(res):
    return [r["id"] for r in res["results"]]


def test_a_word_first_indexed_after_a_search_is_found_by_the_next_search(product):
    first = _add(product, "boto3 retries swallow the throttling error")
    res = wctx.search(product.store, "boto3 budgets", cwd=product.sdk.path)
    assert _ids(res) == [first]
    # "budget" is indexed only now; the first search found no item holding it.
    second = _add(product, "boto3 needs its own retry budget")
    res = wctx.search(product.store, "boto3 budgets", cwd=product.sdk.path)
    assert _ids(res) == [second, first]
    assert res["candidates"] == 2 and res["candidates_exact"] is True


def test_evidence_recorded_by_another_process_is_found_without_reopening(product, run_wctx):
    first = _add(product, "gzip framing breaks the chunked upload")
    assert _ids(wctx.search(product.store, "gzip chunked", cwd=product.sdk.path)) == [first]
    res = run_wctx(["capture", "--finding", "gzipped chunked bodies lose their trailer"],
                   cwd=product.sdk.path)  # fmt: skip
    assert res.code == 0, res
    found = wctx.search(product.store, "gzip chunked", cwd=product.sdk.path)
    assert len(found["results"]) == 2 and first in _ids(found)
    assert "gzipped chunked bodies lose their trailer" in [r["claim"] for r in found["results"]]


def test_an_item_changed_by_another_process_shows_changed_in_the_next_search(product, run_wctx):
    # A long-lived process keeps what it read of each result for the store's generation; a
    # confirmation or a retraction made by another process is a new generation, so the same
    # process's next search shows the item as it is now, not as it read it.
    eid = _add(product, "the multipart boundary is reused across parts", files=["src/client.py#connect"])
    other = _add(product, "multipart uploads retry the whole body")
    (before,) = [r for r in wctx.search(product.store, "multipart boundary", cwd=product.sdk.path)["results"]
                 if r["id"] == eid]  # fmt: skip
    assert before["confirmed_at"] is None and "never confirmed" in before["age"]
    assert run_wctx(["confirm", eid], cwd=product.sdk.path).code == 0
    (after,) = [r for r in wctx.search(product.store, "multipart boundary", cwd=product.sdk.path)["results"]
                if r["id"] == eid]  # fmt: skip
    assert after["confirmed_at"] is not None and "confirmed" in after["age"].replace("never confirmed", "")
    assert run_wctx(["retract", other], cwd=product.sdk.path).code == 0
    found = wctx.search(product.store, "multipart", cwd=product.sdk.path, include_inactive=True)
    assert {r["id"]: r["status"] for r in found["results"]} == {eid: "active", other: "retracted"}
    assert other not in _ids(wctx.search(product.store, "multipart", cwd=product.sdk.path))


def _page_all(store, query, cwd, limit):
    seen, page = [], None
    for _ in range(100):
        res = wctx.search(store, query, cwd=cwd, limit=limit, page=page)
        seen += _ids(res)
        page = res["next_page"]
        if page is None:
            return seen, res
    raise AssertionError("paging never ended")


def test_a_word_written_many_ways_pages_and_counts_every_match(product):
    # "widget" inside 12 identifiers and "gadget" in 70 items in three inflections: paging reaches
    # each item once and the count is exact.
    widgets = [_add(product, "reset%sWidget resets the upload cursor" % chr(65 + i)) for i in range(12)]
    items = [
        {"kind": "finding", "claim": "%s %03d leak a file handle" % (("gadget", "gadgets", "gadget's")[i % 3], i),
         "repo": "upload-sdk"}
        for i in range(70)
    ]  # fmt: skip
    gadgets = [e["id"] for e in wctx.capture(product.store, items, cwd=product.sdk.path)["evidence"]]
    _add(product, "an unrelated note about retries")
    for query, expected in (("widget", widgets), ("gadgets", gadgets), ("widgets gadget", widgets + gadgets)):
        seen, last = _page_all(product.store, query, product.sdk.path, limit=5)
        assert sorted(seen) == sorted(expected), query
        first = wctx.search(product.store, query, cwd=product.sdk.path, limit=5)
        assert first["candidates"] == len(expected) and first["candidates_exact"] is True, query


def verified(run_cli, eid):
    """What ``wctx verify`` (git, no cache) says of the item now, as search shows freshness."""
    (item,) = run_cli(["verify", eid, "--json"]).json["items"]
    return {"verdict": item["verdict"], "reasons": item["reasons"]}


@pytest.mark.parametrize("trust_stat", [False, True], ids=["as-shipped", "every-stat-trusted"])
def test_a_commit_between_two_searches_changes_the_verdict_the_next_search_gives(product, run_cli,
                                                                                 monkeypatch, trust_stat):  # fmt: skip
    # The edit is made, searched, then committed: the cited file on disk does not change with the
    # commit, only where HEAD points. "every-stat-trusted" makes the process trust what it read of
    # HEAD while the files' stats hold, however recent the change (the path a long-lived server
    # takes once a checkout has been quiet for a few seconds).
    if trust_stat:
        monkeypatch.setattr(wctx, "HEAD_RACY_SECONDS", -3600.0)
    eid = _add(product, "connect builds the url without a timeout", files=["src/client.py#connect"])
    query = "connect url timeout"

    def verdict():
        res = wctx.search(product.store, query, cwd=product.sdk.path)
        (item,) = [r for r in res["results"] if r["id"] == eid]
        return item["freshness"]

    assert verdict()["verdict"] == "current"
    client = product.sdk.read("src/client.py")
    product.sdk.write(
        "src/client.py", client.replace('return {"url": url}', 'return {"url": url, "timeout": 30}')
    )
    uncommitted = verdict()
    assert uncommitted == verified(run_cli, eid) and uncommitted["verdict"] != "current"
    product.sdk.commit("connect: add a timeout")
    committed = verdict()
    assert committed == verified(run_cli, eid)
    assert committed != uncommitted


@pytest.mark.parametrize("trust_stat", [False, True], ids=["racy-stat-reread", "every-stat-trusted"])
def test_an_edit_undone_between_searches_is_current_again_in_the_same_process(
    product, monkeypatch, trust_stat
):
    # A long-lived process remembers what each verdict was last matched with; an edit, then the
    # file put back as it was, are each new inputs, so each search judges the file as it is then.
    if trust_stat:
        monkeypatch.setattr(wctx, "HEAD_RACY_SECONDS", -3600.0)
    eid = _add(product, "connect reuses the pooled socket", files=["src/client.py#connect"])

    def verdict():
        res = wctx.search(product.store, "connect pooled socket", cwd=product.sdk.path)
        (item,) = [r for r in res["results"] if r["id"] == eid]
        return item["freshness"]["verdict"]

    original = product.sdk.read("src/client.py")
    assert [verdict(), verdict()] == ["current", "current"]
    product.sdk.write("src/client.py", original.replace('return {"url": url}', 'return {"url": url + "/"}'))
    assert [verdict(), verdict()] != ["current", "current"]
    product.sdk.write("src/client.py", original)
    assert [verdict(), verdict()] == ["current", "current"]


class _Watch:
    """The SQL statements a connection runs (FTS5's own inner statements left out) and the
    processes started, while it is active."""

    def __init__(self, store, monkeypatch):
        self.statements, self.processes = [], []
        self.store = store
        real = subprocess.Popen
        watch = self

        class Counting(real):
            def __init__(self, args, *rest, **kw):
                watch.processes.append(args)
                super().__init__(args, *rest, **kw)

        monkeypatch.setattr(subprocess, "Popen", Counting)

    def __enter__(self):
        self.store.db.set_trace_callback(
            lambda sql: None if sql.lstrip().startswith("--") else self.statements.append(sql)
        )
        return self

    def __exit__(self, *exc):
        self.store.db.set_trace_callback(None)


def test_a_repeated_search_runs_no_git_and_no_statement_per_result(product, monkeypatch):
    # Items in two repositories, most citing a file: once a search has judged them, the next
    # searches in the same process read no verdict from the table again and run no git, and what
    # a search reads of its results (anchors, rows, session edits) is one statement each, however
    # many results it returns.
    monkeypatch.setattr(wctx, "HEAD_RACY_SECONDS", -3600.0)  # the cited files have been quiet a while
    items = [
        {"kind": "finding", "claim": "upload retry loses the token %d" % i, "repo": "upload-sdk",
         "files": ["src/client.py#connect"] if i % 3 else []}
        for i in range(24)
    ] + [
        {"kind": "finding", "claim": "gateway upload retry %d" % i, "repo": "api-gateway", "files": ["routes.go"]}
        for i in range(6)
    ]  # fmt: skip
    wctx.capture(product.store, items, cwd=product.sdk.path)
    query = "upload retry token"
    for n in (3, 25):
        first = wctx.search(product.store, query, cwd=product.sdk.path, limit=n, all_matches=True)
        with _Watch(product.store, monkeypatch) as watch:
            again = wctx.search(product.store, query, cwd=product.sdk.path, limit=n, all_matches=True)
        assert _ids(again) == _ids(first) and len(again["results"]) == n
        assert [r["freshness"] for r in again["results"]] == [r["freshness"] for r in first["results"]]
        assert watch.processes == []
        assert not [s for s in watch.statements if "freshness_cache" in s], watch.statements
        for table in ("FROM anchors", "FROM evidence e JOIN sessions", "FROM session_files"):
            assert len([s for s in watch.statements if table in s]) <= 1 + (
                table == "FROM evidence e JOIN sessions"
            )
        assert len(watch.statements) <= 12, watch.statements


def test_a_process_asks_git_about_a_checkout_once_until_it_changes(product, monkeypatch, run_cli):
    # A long-lived process (the MCP server) judging items it has not judged before, in a
    # repository whose HEAD and index are as they were, needs nothing more from git: what it
    # asked for the first items covers every path the repository's items cite. A commit makes it
    # ask again, and the verdicts stay what verify (git, afresh) says.
    monkeypatch.setattr(wctx, "HEAD_RACY_SECONDS", -3600.0)  # the checkout has been quiet a while
    files = ["src/client.py#connect", "src/upload/upload.ts#formatSize", "src/client.py"]
    alpha = [_add(product, "alpha upload note %d" % i, files=[f]) for i, f in enumerate(files)]
    beta = [_add(product, "beta upload note %d" % i, files=[f]) for i, f in enumerate(files)]

    def verdicts(query, expected):
        res = wctx.search(product.store, query, cwd=product.sdk.path)
        assert sorted(_ids(res)) == sorted(expected)
        return {r["id"]: r["freshness"] for r in res["results"]}

    verdicts("alpha", alpha)
    with _Watch(product.store, monkeypatch) as watch:
        first = verdicts("beta", beta)
    assert watch.processes == []
    assert all(f == verified(run_cli, eid) for eid, f in first.items())
    product.sdk.write("src/client.py", product.sdk.read("src/client.py").replace("return", "return  "))
    product.sdk.commit("reformat the client")
    with _Watch(product.store, monkeypatch) as watch:
        after = verdicts("beta", beta)
    assert watch.processes != []
    assert all(f == verified(run_cli, eid) for eid, f in after.items())
    assert after != first
