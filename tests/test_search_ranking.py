"""Ranking properties of search on small real git repositories: text strength decides across
repositories, what the query names is boosted with a reason, long queries keep their rare words,
every-term candidates never starve a page, and paging reaches the last match."""

from __future__ import annotations

from conftest import capture_item

import wctx


def _capture(product, repo, claim, detail=None, files=None, summary=None, session_id=None):
    return capture_item(product, claim, repo, detail, files, summary, session_id)


def _ids(res):
    return [r["id"] for r in res["results"]]


def _filler(product, repo, word, n):
    # Background items sharing one common word, so that word carries little weight.
    items = [
        {"kind": "note", "claim": "%s note number %d about routine things" % (word, i), "repo": repo}
        for i in range(n)
    ]
    cwd = {"upload-sdk": product.sdk, "docs-ui": product.ui, "api-gateway": product.gateway}[repo].path
    wctx.capture(product.store, items, cwd=cwd)


def test_strong_related_repo_match_beats_one_common_word_same_repo_match(product):
    _filler(product, "docs-ui", "file", 30)
    weak, _ = _capture(product, "docs-ui", "file picker shows the file size")
    strong, _ = _capture(
        product, "upload-sdk", "reloader misses changes when the watcher polls a symlinked file",
        detail="the reloader compares mtimes of resolved paths only",
    )  # fmt: skip
    res = wctx.search(product.store, "reloader not detecting file changes", repo="docs-ui")
    ids = _ids(res)
    assert ids[0] == strong, res["results"][:2]
    assert weak not in ids and res["held_back"] >= 1  # a one-common-word match, held back
    every = _ids(
        wctx.search(product.store, "reloader not detecting file changes", repo="docs-ui", all_matches=True)
    )
    assert every[0] == strong and weak in every  # still found, just below
    assert "docs-ui uses upload-sdk (upstream dependency)" in res["results"][0]["reasons"]
    # The same holds for plain FTS ranking: topology did not reorder clear text strength.
    assert (
        _ids(wctx.search(product.store, "reloader not detecting file changes", repo="docs-ui", rank="fts"))[0]
        == strong
    )


def test_topology_orders_near_equal_matches(product):
    local, _ = _capture(product, "docs-ui", "upload button retries twice on a 419")
    remote, _ = _capture(product, "api-gateway", "upload button retries twice on a 419")
    assert _ids(wctx.search(product.store, "upload retries 419", repo="docs-ui"))[:2] == [local, remote]
    assert _ids(wctx.search(product.store, "upload retries 419", repo="api-gateway"))[:2] == [remote, local]


def test_query_naming_a_repository_boosts_evidence_about_it_with_a_reason(product):
    local, _ = _capture(product, "docs-ui", "token refresh happens on every request")
    gateway, _ = _capture(product, "api-gateway", "token refresh happens on each request")
    plain = wctx.search(product.store, "token refresh request", repo="docs-ui")
    assert _ids(plain)[0] == local
    named = wctx.search(product.store, "api-gateway token refresh request", repo="docs-ui")
    assert _ids(named)[0] == gateway
    assert "query names repository api-gateway" in named["results"][0]["reasons"]


def test_query_naming_a_cited_symbol_or_path_boosts_it_with_a_reason(product):
    claim = "retry budget resets on reconnect"
    other, _ = _capture(product, "upload-sdk", claim, files=["src/upload/upload.ts#uploadDocument"])
    cited, _ = _capture(product, "upload-sdk", claim, files=["src/client.py#retry_policy"])
    res = wctx.search(product.store, "retry_policy budget resets", repo="upload-sdk")
    assert _ids(res)[:2] == [cited, other]
    reasons = res["results"][0]["reasons"]
    assert "matches symbol retry_policy" in reasons and "query names symbol retry_policy" in reasons
    by_path = wctx.search(product.store, "budget resets on reconnect in client.py", repo="upload-sdk")
    assert _ids(by_path)[:2] == [cited, other]
    assert "query names file src/client.py" in by_path["results"][0]["reasons"]
    assert not any(r.startswith("query names") for r in by_path["results"][1]["reasons"])


def test_a_long_query_keeps_its_rarest_words_and_says_so(product):
    words = ["frame%s" % chr(97 + i // 26) + chr(97 + i % 26) for i in range(59)]
    items = [
        {"kind": "note", "claim": "log %d: %s" % (i, " ".join(words)), "repo": "upload-sdk"} for i in range(3)
    ]
    wctx.capture(product.store, items, cwd=product.sdk.path)
    target, _ = _capture(product, "upload-sdk", "zygomorphic handler crashes on resume")
    res = wctx.search(
        product.store, " ".join(words + ["zygomorphic"]), repo="upload-sdk"
    )  # decisive word last
    assert target in _ids(res)  # with the first 32 words only it matched nothing
    assert "zygomorphic" in res["query_terms"]
    assert len(res["query_terms"]) == wctx.MAX_QUERY_TERMS and res["query_terms_total"] == 60
    text = wctx.format_search(res)
    assert "Used the %d rarest of the query's 60 words" % wctx.MAX_QUERY_TERMS in text


def test_every_term_first_still_fills_the_page_from_single_words(product):
    ids = [
        _capture(product, "upload-sdk", "uploads stall when the %s quota runs out" % w)[0]
        for w in ("disk", "memory", "socket", "thread", "handle")
    ]
    both, _ = _capture(product, "upload-sdk", "quota and throttle interplay")
    res = wctx.search(product.store, "quota throttle", repo="upload-sdk", limit=5, all_matches=True)
    assert len(res["results"]) == 5
    assert _ids(res)[0] == both  # holds every term
    assert set(_ids(res)[1:]) <= set(ids)
    assert res["candidates"] == 6  # every item matching a query word


def test_search_pages_reach_the_last_match_and_count_every_match(product):
    n = wctx.CANDIDATE_FLOOR + 37
    items = [{"kind": "note", "claim": "paging probe %d" % i, "repo": "upload-sdk"} for i in range(n)]
    wctx.capture(product.store, items[:40], cwd=product.sdk.path)
    wctx.capture(product.store, items[40:], cwd=product.sdk.path)
    seen, page, pages = [], None, 0
    while True:
        res = wctx.search(product.store, "paging probe", repo="upload-sdk", limit=10, page=page)
        assert res["candidates"] == n
        seen += _ids(res)
        pages += 1
        page = res["next_page"]
        if page is None:
            break
        assert pages < 50
    assert len(seen) == n and len(set(seen)) == n


def test_session_summary_is_indexed_once_per_session_and_still_found(product):
    first, sid = _capture(
        product, "upload-sdk", "first item of the session", summary="traced the wobbly gizmo"
    )
    for i in range(5):
        _capture(
            product,
            "upload-sdk",
            "item %d of the session" % i,
            summary="round %d on the gizmo" % i,
            session_id=sid,
        )
    db = product.store.db
    assert db.execute("SELECT count(*) FROM session_fts").fetchone()[0] == 1
    columns = [r[1] for r in db.execute("PRAGMA table_info(evidence_fts)")]
    assert "summary" not in columns
    res = wctx.search(product.store, "wobbly", repo="upload-sdk")
    assert first in _ids(res)
    assert any(r.startswith("matches the session summary (wobbly)") for r in res["results"][0]["reasons"])


def test_mcp_enums_and_result_fields_come_from_the_service_layer():
    import wctx_mcp

    search_tool = wctx_mcp.TOOLS_BY_NAME["search_evidence"]
    kinds = search_tool["inputSchema"]["properties"]["kinds"]["items"]["enum"]
    assert kinds == list(wctx.EVIDENCE_KINDS)
    record = wctx_mcp.TOOLS_BY_NAME["record_evidence"]["inputSchema"]["properties"]["items"]["items"]
    assert record["properties"]["kind"]["enum"] == list(wctx.EVIDENCE_KINDS)
    result = search_tool["outputSchema"]["properties"]["results"]["items"]["properties"]
    assert result["verdict"]["enum"] == list(wctx.VERDICTS)
    assert set(result) >= {name for name, _ in wctx.SEARCH_RESULT_FIELDS} - {"superseded_by"}
    related = wctx_mcp.TOOLS_BY_NAME["workspace_overview"]["outputSchema"]["properties"]["relations"]
    assert related["items"]["properties"]["kind"]["enum"] == list(wctx.RELATION_KINDS)


def _pallets(git_repo, store):
    """flask depends on werkzeug, one workspace: the shape of the field report."""
    app = git_repo("flask", {"src/flask/files.py": "def file_name(f):\n    return f\n"})
    lib = git_repo("werkzeug", {"src/werkzeug/_reloader.py": "class StatReloaderLoop:\n    pass\n"})
    wctx.register_repo(store, app.path, workspace="pallets")
    wctx.register_repo(store, lib.path, workspace="pallets")
    wctx.relate(store, "flask", "depends_on", "werkzeug")
    return app, lib


def _one(store, cwd, **item):
    return wctx.capture(store, [dict({"kind": "note"}, **item)], cwd=cwd)["evidence"][0]["id"]


def test_a_match_of_most_query_words_in_a_related_repo_beats_a_rare_word_match_at_home(git_repo, store):
    # "reloader" and "changes" are common in werkzeug's notes, "file" is rare: bm25 alone put the
    # flask item that holds only "file" first (its claim, symbol and path all say it).
    app, lib = _pallets(git_repo, store)
    weak = _one(
        store, app.path, repo="flask", claim="file_name strips the directory from a file path",
        files=["src/flask/files.py#file_name"],
    )  # fmt: skip
    for i in range(8):
        _one(store, lib.path, repo="werkzeug", claim="werkzeug note %d about changes and the reloader" % i)
    strong = _one(
        store, lib.path, repo="werkzeug", kind="known_issue",
        claim="StatReloaderLoop stops detecting changes under a symlinked directory",
        detail="the stat reloader records the mtimes of the module paths it found at start-up and compares "
        "only those, so anything reached through a symlink keeps its old mtime and the development server is "
        "never restarted; the watchdog reloader follows the link and does not have this problem, which is why "
        "the docs recommend installing watchdog for any project that symlinks its packages into the source tree",
        files=["src/werkzeug/_reloader.py#StatReloaderLoop"],
    )  # fmt: skip
    res = wctx.search(store, "reloader not detecting file changes", repo="flask")
    ids = _ids(res)
    assert ids[0] == strong, [(r["claim"], r["reasons"][:2]) for r in res["results"][:3]]
    assert weak in ids
    assert "matches the query text (reloader, detecting, changes)" in res["results"][0]["reasons"]
    assert "flask depends on werkzeug (upstream dependency)" in res["results"][0]["reasons"]


def test_query_words_find_their_inflections(git_repo, store):
    app, lib = _pallets(git_repo, store)
    pairs = [
        ("retry", "the client retries twice on a timeout", "retries"),
        ("retries", "a retry budget applies per host", "retry"),
        ("created", "creation of the socket is lazy", "creation"),
        ("lazy", "the handle is opened lazily", "lazily"),
        ("freshly", "fresh tokens are rejected for a second", "fresh"),
        ("expire", "sessions expired after an hour", "expired"),
        ("stopped", "the watcher stops on the first error", "stops"),
    ]
    for word, claim, written in pairs:
        rid = _one(store, lib.path, repo="werkzeug", claim=claim)
        res = wctx.search(store, word, repo="flask")
        assert rid in _ids(res), (word, claim)
        # The reason names the query word and the word of the item it matched, never a stem.
        assert res["results"][0]["reasons"][0] == "matches the query text (%s as %s)" % (word, written)


# Every reason string search gives today, as a pattern: a change of wording breaks agents and
# scripts that read them, so a new kind of reason has to be added here on purpose.
_REASON_PATTERNS = [
    r"matches the query text \([^()]+\)",
    r"matches symbol \S+",
    r"matches file \S+",
    r"matches the session summary \([^()]+\)",
    r"matches words of the cited code \([^()]+\)",
    r"shares word stems with \S+ \([^()]+\)",
    r"weak match: only (the common words? [^()]+|its session summary shares [^()]+)",
    r"query names (repository|symbol|file) \S+",
    r"same repository",
    r"\S+ [a-z ]+ \S+ \((upstream dependency|direct consumer|upstream provider|shares a schema|related)\)",
    r"\d hops via [\w., -]+",
    r"same workspace \S+(; .+)?",
    r"outside the caller's workspaces \(--all\)",
    r"searched all repositories \(--all\)",
    r"session \S+ \(.+, [\d-]*\) edited \S+ in \S+",
    r"stated confidence [\d.e-]+",
    r"superseded by ev-[0-9a-f]+",
    r"retracted",
    r"(current|unknown|possibly stale|stale): .+",
    r"recorded (today|yesterday|\d+ days ago|at an unknown time), (never confirmed|confirmed .+)",
    r"cites \S+, which has uncommitted changes in your working tree",
    r"open question recorded in this repository",
    r"recent in (this repository|a related repository)",
    r"\S+ \(\w+\) (calls|uses|imports) \S+; \S+ [a-z ]+ ev-[0-9a-f]+ cites \S+",
]
_JSON_TYPES = {"string": str, "number": (int, float), "array": list, "object": dict, "null": type(None)}


def _check_result_shape(result):
    import re

    for name, kinds in wctx.SEARCH_RESULT_FIELDS:
        assert name in result, name
        allowed = tuple(_JSON_TYPES[k] for k in ([kinds] if isinstance(kinds, str) else kinds))
        assert isinstance(result[name], allowed), (name, result[name])
    assert set(result) == {name for name, _ in wctx.SEARCH_RESULT_FIELDS}
    assert result["freshness"]["verdict"] in wctx.VERDICTS and result["freshness"]["reasons"]
    for reason in result["reasons"]:
        assert isinstance(reason, str)
        assert any(re.fullmatch(p, reason) for p in _REASON_PATTERNS), reason


def test_search_json_shape_and_every_reason_string_stay_valid(product, run_cli):
    import json

    _capture(
        product, "upload-sdk", "retry_policy caps attempts at three", files=["src/client.py#retry_policy"]
    )
    old, _ = _capture(product, "upload-sdk", "uploadDocument throws on 419", files=["src/upload/upload.ts"])
    new, _ = _capture(
        product, "upload-sdk", "uploadDocument retries a 419 once", files=["src/upload/upload.ts"]
    )
    wctx.supersede(product.store, old, new)
    _capture(product, "api-gateway", "HandleUpload answers 419 for expired sessions")
    _capture(product, "docs-ui", "first note", summary="chased a flickering spinner")
    wctx.capture(
        product.store,
        [{"kind": "finding", "claim": "gateway timeout is 30 s", "repo": "api-gateway", "confidence": 0.8}],
        cwd=product.gateway.path,
    )
    product.sdk.write("src/client.py", "def retry_policy(attempts):\n    return min(attempts, 5)\n")
    product.sdk.commit("five attempts")
    seen = set()
    for argv, cwd in [
        (["search", "retry_policy", "attempts", "in", "client.py", "upload-sdk"], product.ui.path),
        (["search", "419", "--all-status"], product.ui.path),
        (["search", "flickering", "spinner"], product.ui.path),
        (["search", "gateway", "timeout", "--all"], product.other.path),
        (["search", "gateway", "timeout", "--all"], product.ui.path),
        (["search", "nothingmatchesthis"], product.sdk.path),
    ]:
        res = run_cli(argv + ["--json"], cwd=cwd)
        assert res.code == 0, res
        out = json.loads(res.out)
        for key in ("results", "candidates", "candidates_exact", "ranked", "next_page", "searched", "origin"):
            assert key in out, key
        assert isinstance(out["query_terms"], list) and isinstance(out["query_terms_total"], int)
        assert out["mode"] in ("text", "fallback") and out["rank"] == "topology"
        assert out["results"], argv
        for result in out["results"]:
            _check_result_shape(result)
            seen.update(r.split(" ")[0] + " " + r.split(" ")[1] for r in result["reasons"] if " " in r)
    # The run met the kinds of reason a user sees most.
    for start in ("matches the", "matches symbol", "matches file", "query names", "stated confidence"):
        assert start in seen, (start, sorted(seen))
    assert {"superseded by", "same repository", "recent in", "outside the", "2 hops", "docs-ui uses"} <= seen
    assert any(s.startswith("stale: ") for s in seen) and any(s.startswith("current: ") for s in seen)


def test_code_abbreviations_match_both_ways_as_whole_words(git_repo, store):
    app, lib = _pallets(git_repo, store)
    db = _one(store, lib.path, repo="werkzeug", claim="the db pool leaks a connection per reload")
    cfg = _one(store, lib.path, repo="werkzeug", claim="the reloader configuration ignores extra_files")
    report = _one(store, lib.path, repo="werkzeug", claim="the report page lists every route")
    assert db in _ids(wctx.search(store, "database pool leaks", repo="flask"))
    assert cfg in _ids(wctx.search(store, "reloader cfg", repo="flask"))
    by_repository = _ids(wctx.search(store, "repository report", repo="flask"))
    assert report in by_repository  # "report" itself matches
    repo_item = _one(store, lib.path, repo="werkzeug", claim="each repo keeps its own routes")
    found = wctx.search(store, "repository routes", repo="flask")
    assert repo_item in _ids(found)
    assert (
        "matches the query text (repository as repo, routes)"
        in found["results"][_ids(found).index(repo_item)]["reasons"]
    )
    # An abbreviation matches whole words only: "repository" does not find "report" by "repo".
    assert report not in _ids(wctx.search(store, "repository", repo="flask"))


def test_a_page_fills_when_no_item_holds_every_query_word(product):
    quota = [
        _capture(product, "upload-sdk", "uploads stall when the %s quota runs out" % w)[0]
        for w in ("disk", "memory")
    ]
    throttle = [
        _capture(product, "docs-ui", "the %s throttle drops progress events" % w)[0]
        for w in ("ui", "network")
    ]
    res = wctx.search(product.store, "quota throttle zebra", repo="docs-ui", limit=4)
    assert sorted(_ids(res)) == sorted(quota + throttle)
    assert res["mode"] == "text" and res["candidates"] == 4
    for r in res["results"]:
        assert r["reasons"][0] in ("matches the query text (quota)", "matches the query text (throttle)")


def test_a_match_of_three_common_query_words_beats_a_same_repo_note_holding_only_the_rare_one(product):
    # "retry", "failed" and "uploads" are common in the store, "button" is rare. The answer, a hop
    # away, holds three of the four words in its claim; the note at home holds only "button". bm25
    # already weighs each word by its rarity: counting the rarity again in the share of the query
    # an item holds let the one rare word outweigh three ordinary ones.
    for word in ("retry", "failed", "uploads"):
        _filler(product, "upload-sdk", word, 8)
    answer, _ = _capture(
        product, "upload-sdk", "failed uploads retry five times with jitter",
        detail="the caller must not add its own loop on top",
    )  # fmt: skip
    weak, _ = _capture(product, "docs-ui", "the button colour follows the theme")
    res = wctx.search(product.store, "should the button retry failed uploads itself", repo="docs-ui")
    ids = _ids(res)
    assert ids[0] == answer, [(r["claim"], r["reasons"][:2]) for r in res["results"][:3]]
    assert weak in ids  # still found, below
    assert "matches the query text (retry, failed, uploads)" in res["results"][0]["reasons"]


def test_an_item_citing_code_in_a_named_repository_is_about_it_too(product):
    # The item lives in upload-sdk but cites the gateway's handler: a query naming api-gateway
    # asks about it as much as about the gateway's own notes.
    home, _ = _capture(product, "docs-ui", "the 419 handler rewrites the status for the button")
    cited, _ = _capture(
        product, "upload-sdk", "the 419 handler is retried by the sdk",
        files=["api-gateway:routes.go#HandleUpload"],
    )  # fmt: skip
    res = wctx.search(product.store, "api-gateway 419 handler", repo="docs-ui")
    assert _ids(res)[0] == cited, [(r["claim"], r["reasons"][:2]) for r in res["results"][:2]]
    assert "query names repository api-gateway" in res["results"][0]["reasons"]
    assert home in _ids(res)
    # Without the name, topology puts the item at home first again.
    assert _ids(wctx.search(product.store, "419 handler", repo="docs-ui"))[0] == home


def test_the_words_of_a_named_repository_are_its_name_not_content(product):
    # Every routine api-gateway note's session summary says "api gateway". The query names the
    # repository, which boosts all its items alike; its name's words must not also make the
    # routine notes look like fuller matches than the short answer holding the same two words.
    routine = [
        {
            "kind": "note",
            "claim": "the clock skew check number %d is covered by the integration tests of the service" % i,
            "repo": "api-gateway",
        }
        for i in range(3)
    ]
    wctx.capture(product.store, routine, cwd=product.gateway.path, summary="routine notes in the api gateway")
    answer, _ = _capture(product, "api-gateway", "clock skew tolerance is five seconds", summary="drift")
    res = wctx.search(product.store, "what clock skew does api-gateway tolerate", repo="upload-sdk")
    assert _ids(res)[0] == answer, [(r["claim"], r["reasons"][:2]) for r in res["results"][:3]]
    assert "query names repository api-gateway" in res["results"][0]["reasons"]


def test_an_identifier_query_ranks_the_item_holding_every_word_first_and_finds_it_written_apart(product):
    # The item holding the identifier and the query's other word comes first; items holding only
    # the identifier follow; an item writing it snake_case is found too.
    full, _ = _capture(product, "upload-sdk", "consumeProfile drops the header; root cause is the cache")
    only = [
        _capture(product, "upload-sdk", "consumeProfile retries %s forever" % w)[0] for w in ("409", "503")
    ]
    apart, _ = _capture(product, "upload-sdk", "consume_profile leaks a file handle")
    _filler(product, "upload-sdk", "root", 6)
    res = wctx.search(product.store, "consumeProfile root", repo="upload-sdk", limit=4)
    ids = _ids(res)
    assert ids[0] == full, [(r["claim"], r["reasons"][:1]) for r in res["results"]]
    assert set(ids[1:]) == set(only) | {apart}


def test_a_word_held_by_many_items_still_fills_the_page(product):
    quota = [
        _capture(product, "upload-sdk", "uploads stall when the %s quota runs out" % w)[0]
        for w in ("disk", "memory", "socket", "thread", "handle", "inode")
    ]
    res = wctx.search(product.store, "quota zebra", repo="upload-sdk", limit=5)
    assert len(res["results"]) == 5 and set(_ids(res)) <= set(quota)
    assert res["next_page"] is not None
    # A filter that leaves out the newest items holding the word still fills its page.
    _filler(product, "upload-sdk", "quota", 4)  # notes, newer than every finding
    res = wctx.search(product.store, "quota zebra", repo="upload-sdk", kinds=["finding"], limit=5)
    assert len(res["results"]) == 5 and set(_ids(res)) <= set(quota)
