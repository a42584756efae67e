"""Search as a user meets it: hostile query text never errors, results explain themselves, a vague
question still helps, retracted and superseded items step aside, and show prints the full record."""

from __future__ import annotations

import pytest

import wctx

SEED_CLAIM = "SDK swallows the 419 :: returns it terminal, no retry"


@pytest.fixture
def seeded(product):
    """One finding about the SDK, captured from the UI, citing uploadDocument."""
    res = wctx.capture(
        product.store,
        [
            {
                "kind": "finding",
                "claim": SEED_CLAIM,
                "repo": "upload-sdk",
                "files": ["src/upload/upload.ts#uploadDocument"],
                "confidence": 0.8,
            }
        ],
        summary="traced the upload failure into the SDK",
        cwd=product.ui.path,
    )
    product.eid = res["evidence"][0]["id"]
    return product


HOSTILE_QUERIES = [
    '"',
    '""',
    '"""',
    "'",
    "*",
    "**",
    "NEAR(",
    "NEAR(upload 419",
    "NEAR(a b, 2)",
    "NEAR/3",
    "-",
    "--",
    "-419",
    "AND",
    "OR",
    "NOT",
    "AND OR NOT",
    "upload AND",
    "OR 419 NOT",
    "claim:419",
    "detail:",
    "col:",
    ":",
    "rowid:1",
    "^",
    "^upload",
    "(",
    ")",
    "()",
    "{upload 419}",
    "[]",
    "upload*",
    '"upload',
    'upload"',
    '"upload" "419',
    "\\",
    "+",
    "&&",
    "||",
    "%",
    "_",
    "';DROP TABLE evidence;--",
    "\x00",
    "a\x00b",
    "\n\t\r",
    "",
    "   ",
    "a",
    "the",
    "ünïcödé Käse Straße",
    "İstanbul ﬁle",
    "日本語の検索",
    "שלום עולם",
    "🔥🚀",
    "upload🔥419",
    "👩‍💻",
    "\udcff\udcfe",
    "up\udc80load",
    "x" * 10000,
    "upload " * 1500,
    "NEAR(" * 2000,
    '"*' * 5000,
]


def _ids(query):
    return "q%d" % HOSTILE_QUERIES.index(query)


@pytest.mark.parametrize("query", HOSTILE_QUERIES, ids=_ids)
def test_hostile_query_through_the_service_never_errors(seeded, query):
    res = wctx.search(seeded.store, query, repo="upload-sdk")
    assert isinstance(res["results"], list)
    assert res["mode"] in ("text", "fallback")
    assert isinstance(res["candidates"], int)
    for term in res["query_terms"]:
        term.encode("utf-8")  # no lone surrogates reach the result


@pytest.mark.parametrize("query", HOSTILE_QUERIES, ids=_ids)
def test_hostile_query_through_main_never_errors(seeded, run_cli, query):
    res = run_cli(["search", "--json", "--", query], cwd=seeded.ui.path)
    assert res.code == 0, res
    assert "Traceback" not in res.err
    out = res.json
    assert isinstance(out["results"], list)
    text = run_cli(["search", query], cwd=seeded.ui.path)
    assert text.code == 0, text
    assert " results from " in text.out or " result from " in text.out


@pytest.mark.parametrize(
    "query",
    [
        '"419"',
        "NEAR(419",
        "419*",
        "-419",
        "^419",
        "claim:419",
        '"uploadDocument"',
        "uploadDoc*",
        "UPLOADDOCUMENT",
        "419)",
    ],
)
def test_operator_laden_queries_still_find_the_words_they_contain(seeded, run_cli, query):
    res = run_cli(["search", query, "--json"], cwd=seeded.sdk.path)
    assert res.code == 0, res
    assert seeded.eid in [r["id"] for r in res.json["results"]]
    assert res.json["mode"] == "text"


def test_hostile_queries_through_a_subprocess_including_bad_utf8_bytes(seeded, run_wctx):
    for query in ['"NEAR(*', "AND OR NOT", "🔥", "x" * 10000, b"\xff\xfe upload \xc3\x28"]:
        res = run_wctx(["search", query, "--json"], cwd=seeded.sdk.path)
        assert res.code == 0, res
        assert res.err == ""
        assert isinstance(res.json["results"], list)
    res = run_wctx(["search", b"\xff\xfe 419"], cwd=seeded.sdk.path)
    assert res.code == 0 and "SDK swallows the 419" in res.out


def test_hostile_text_in_a_capture_is_stored_and_found(product):
    claim = 'NEAR( "quoted" -minus col:value ^caret AND OR NOT * 日本語 🔥 upload'
    eid = wctx.capture(
        product.store, [{"kind": "note", "claim": claim, "repo": "upload-sdk"}], cwd=product.sdk.path
    )["evidence"][0]["id"]
    for query in ("日本語", "quoted", "caret", "minus", 'col:value "NEAR('):
        hits = wctx.search(product.store, query, repo="upload-sdk")["results"]
        assert [h["id"] for h in hits] == [eid], query
    assert wctx.get_evidence(product.store, eid)["claim"] == claim


# ----------------------------------------------------------------------------------------------
# Result shape and reasons
# ----------------------------------------------------------------------------------------------


def test_search_json_shape_and_reasons(seeded, run_cli):
    res = run_cli(
        ["search", "upload", "expiration", "419", "uploadDocument", "terminal", "--json"], cwd=seeded.sdk.path
    )
    assert res.code == 0, res
    out = res.json
    assert set(out) >= {"results", "candidates", "searched", "ms"}
    assert isinstance(out["ms"], float) and out["candidates"] == 1
    assert out["searched"][0] == "upload-sdk" and "other" not in out["searched"]
    (r,) = out["results"]
    assert set(r) >= {
        "id", "kind", "claim", "detail", "repo", "session", "created_at", "confidence", "reasons", "freshness",
    }  # fmt: skip
    assert (r["id"], r["kind"], r["claim"], r["detail"], r["repo"]) == (
        seeded.eid,
        "finding",
        "SDK swallows the 419",
        "returns it terminal, no retry",
        "upload-sdk",
    )
    assert r["session"].startswith("ses-") and r["confidence"] == 0.8
    assert r["freshness"] == {
        "verdict": "current",
        "reasons": ["src/upload/upload.ts#uploadDocument unchanged since capture"],
    }
    reasons = r["reasons"]
    assert reasons[0] == "matches the query text (419, terminal)"
    assert "matches symbol uploadDocument" in reasons
    assert "matches file src/upload/upload.ts" in reasons
    assert "same repository" in reasons
    assert "stated confidence 0.8" in reasons
    # Freshness, then the item's age and last confirmation, close the reasons.
    assert reasons[-2:] == ["current: cited code unchanged since capture", "recorded today, never confirmed"]


def test_search_text_output_has_a_header(seeded, run_cli):
    res = run_cli(["search", "419", "--detail"], cwd=seeded.ui.path)
    assert res.code == 0, res
    header = res.out.splitlines()[0]
    assert header.startswith("1 result from 1 candidate in ")
    assert header.endswith(" ms; searched: docs-ui, upload-sdk, api-gateway (from docs-ui)")
    assert "why: matches the query text (419); docs-ui uses upload-sdk (upstream dependency)" in res.out
    assert "%s · upload-sdk · current" % seeded.eid in res.out


def test_search_text_is_one_line_per_result_with_its_strongest_reason(seeded, run_cli):
    """What an agent calling the CLI reads: no clock, one line per result, the first reason."""
    res = run_cli(["search", "419"], cwd=seeded.ui.path)
    assert res.code == 0, res
    lines = res.out.splitlines()
    assert lines[0] == "1 result from 1 candidate; searched: docs-ui, upload-sdk, api-gateway (from docs-ui)"
    (line,) = [x for x in lines if seeded.eid in x]
    assert line.startswith("1. %s [finding, upload-sdk, current] " % seeded.eid)
    assert lines[lines.index(line) + 1] == "   why: matches the query text (419)"
    assert "docs-ui uses upload-sdk" not in res.out and "untrusted" in res.out
    assert run_cli(["search", "419"], cwd=seeded.ui.path).out == res.out
    assert run_cli(["search", "419", "--json"], cwd=seeded.ui.path).json["results"][0]["reasons"][1:]


def test_kind_limit_and_rank_options(seeded, run_cli):
    store = seeded.store
    for n in range(5):
        wctx.capture(
            store,
            [{"kind": "question", "claim": "upload question %d" % n, "repo": "upload-sdk"}],
            cwd=seeded.sdk.path,
        )
    res = run_cli(["search", "upload", "--kind", "question", "--limit", "3", "--json"], cwd=seeded.sdk.path)
    assert res.code == 0
    assert len(res.json["results"]) == 3 and {r["kind"] for r in res.json["results"]} == {"question"}
    fts = run_cli(["search", "upload", "--rank", "fts", "--json"], cwd=seeded.sdk.path)
    assert fts.code == 0 and len(fts.json["results"]) == 6
    for argv, message in (
        (["search", "x", "--limit", "0"], "limit must be from 1 to"),
        (["search", "x", "--limit", "100000"], "limit must be from 1 to"),
        (["search", "x", "--kind", "rumour"], "invalid choice"),
        (["search", "x", "--rank", "magic"], "invalid choice"),
        (["search", "x", "--repo", "nope"], "unknown repository 'nope'"),
    ):
        bad = run_cli(argv, cwd=seeded.sdk.path)
        assert bad.code in (1, 2) and message in bad.err and bad.err.count("\n") == 1, bad
    assert run_cli(["search", "x", "--repo", "nope"]).code == 1
    assert run_cli(["search", "x", "--limit", "0"]).code == 2


# ----------------------------------------------------------------------------------------------
# A vague question
# ----------------------------------------------------------------------------------------------


def test_vague_query_returns_evidence_on_modified_files_then_open_questions(product, run_cli):
    store, sdk = product.store, product.sdk

    def cap(kind, claim, repo="upload-sdk", files=(), cwd=None):
        items = [{"kind": kind, "claim": claim, "repo": repo, "files": list(files)}]
        return wctx.capture(store, items, cwd=cwd or sdk.path)["evidence"][0]["id"]

    on_modified = cap("finding", "connect ignores proxies", files=["src/client.py#connect"])
    question = cap("question", "does the gateway retry 419s?")
    recent = cap("finding", "formatSize rounds down", files=["src/upload/upload.ts#formatSize"])
    in_ui = cap("finding", "the button ignores errors", repo="docs-ui", cwd=product.ui.path)
    in_other = cap("finding", "unrelated product note", repo="other", cwd=product.other.path)
    sdk.write("src/client.py", sdk.read("src/client.py").replace("return {", "return  {"))

    res = run_cli(["search", "has anyone looked at this?", "--json"], cwd=sdk.path)
    assert res.code == 0, res
    out = res.json
    assert out["mode"] == "fallback"
    ids = [r["id"] for r in out["results"]]
    assert ids[:2] == [on_modified, question]
    assert set(ids) == {on_modified, question, recent, in_ui}
    assert in_other not in ids
    by_id = {r["id"]: r for r in out["results"]}
    assert (
        by_id[on_modified]["reasons"][0]
        == "cites src/client.py, which has uncommitted changes in your working tree"
    )
    assert by_id[question]["reasons"][0] == "open question recorded in this repository"
    assert by_id[recent]["reasons"][0] == "recent in this repository"
    assert by_id[in_ui]["reasons"][0] == "recent in a related repository"
    text = run_cli(["search", "has anyone looked at this?"], cwd=sdk.path)
    assert text.code == 0
    assert "No searchable words in the query" in text.out
    assert text.out.index("connect ignores proxies") < text.out.index("does the gateway retry 419s?")


def test_empty_query_is_a_vague_query(seeded, run_cli):
    res = run_cli(["search", "--json"], cwd=seeded.sdk.path)
    assert res.code == 0 and res.json["mode"] == "fallback"
    assert [r["id"] for r in res.json["results"]] == [seeded.eid]


def test_vague_query_in_an_empty_store(product, run_cli):
    res = run_cli(["search", "anything?", "--json"], cwd=product.sdk.path)
    assert res.code == 0 and res.json["results"] == []
    text = run_cli(["search", "what now"], cwd=product.sdk.path)
    assert text.code == 0 and text.out.startswith("0 results from 0 candidates")


# ----------------------------------------------------------------------------------------------
# Status changes
# ----------------------------------------------------------------------------------------------


def test_retract_and_supersede_leave_default_search_but_stay_visible_labelled(product, run_cli):
    store, sdk = product.store, product.sdk

    def cap(claim):
        return wctx.capture(store, [{"kind": "finding", "claim": claim, "repo": "upload-sdk"}], cwd=sdk.path)[
            "evidence"
        ][0]["id"]

    old = cap("upload limit is 10 MB")
    new = cap("upload limit is 25 MB since the gateway change")
    wrong = cap("upload limit depends on the browser")
    res = run_cli(["supersede", old, "--by", new, "--json"])
    assert res.code == 0 and res.json["status"] == "superseded" and res.json["superseded_by"] == new
    res = run_cli(["retract", wrong])
    assert res.code == 0 and "retracted %s" % wrong in res.out

    default = run_cli(["search", "upload limit", "--json"], cwd=sdk.path).json
    assert [r["id"] for r in default["results"]] == [new]
    vague = run_cli(["search", "--json"], cwd=sdk.path).json
    assert [r["id"] for r in vague["results"]] == [new]

    everything = run_cli(["search", "upload limit", "--all-status", "--json"], cwd=sdk.path).json
    by_id = {r["id"]: r for r in everything["results"]}
    assert set(by_id) == {old, new, wrong}
    assert by_id[old]["status"] == "superseded" and by_id[old]["superseded_by"] == new
    assert "superseded by %s" % new in by_id[old]["reasons"]
    assert by_id[wrong]["status"] == "retracted" and "retracted" in by_id[wrong]["reasons"]
    assert by_id[new]["status"] == "active"
    text = run_cli(["search", "upload limit", "--all-status"], cwd=sdk.path).out
    assert "%s [finding, upload-sdk, current, superseded]" % old in text
    assert "%s [finding, upload-sdk, current, retracted]" % wrong in text

    shown_old = run_cli(["show", old, "--json"]).json
    assert shown_old["status"] == "superseded" and shown_old["superseded_by"] == new
    assert run_cli(["show", new, "--json"]).json["supersedes"] == [old]
    assert "superseded by: %s" % new in run_cli(["show", old]).out


def test_status_change_errors(product, run_cli):
    eid = wctx.capture(
        product.store, [{"kind": "note", "claim": "n", "repo": "upload-sdk"}], cwd=product.sdk.path
    )["evidence"][0]["id"]
    res = run_cli(["supersede", eid, "--by", eid])
    assert res.code == 2 and res.err == "wctx: an item cannot supersede itself\n"
    res = run_cli(["retract", "ev-nothere"])
    assert res.code == 1 and res.err == "wctx: no evidence with id ev-nothere\n"
    res = run_cli(["supersede", eid])
    assert res.code == 2 and "--by" in res.err


# ----------------------------------------------------------------------------------------------
# show
# ----------------------------------------------------------------------------------------------


def test_show_json_shape(seeded, run_cli):
    sdk = seeded.sdk
    res = run_cli(["show", seeded.eid, "--json"])
    assert res.code == 0, res
    item = res.json
    assert set(item) >= {
        "id",
        "kind",
        "claim",
        "detail",
        "repo",
        "session",
        "status",
        "anchors",
        "freshness",
        "created_at",
    }
    assert (item["claim"], item["detail"], item["kind"], item["repo"]) == (
        "SDK swallows the 419",
        "returns it terminal, no retry",
        "finding",
        "upload-sdk",
    )
    assert item["freshness"]["verdict"] == "current"
    assert item["session_info"]["summary"] == "traced the upload failure into the SDK"
    for anchor in item["anchors"]:
        assert set(anchor) >= {"repo", "path", "symbol", "commit", "blob", "dirty", "symbol_hash", "verdict"}
    cited = [a for a in item["anchors"] if a["path"]]
    assert cited == [
        {
            "repo": "upload-sdk",
            "root_commit": sdk.git("rev-list", "--max-parents=0", "HEAD").strip(),
            "path": "src/upload/upload.ts",
            "symbol": "uploadDocument",
            "commit": sdk.head,
            "branch": "main",
            "blob": sdk.blob("src/upload/upload.ts"),
            "dirty": False,
            "symbol_hash": cited[0]["symbol_hash"],
            "verdict": "current",
        }
    ]
    assert len(cited[0]["symbol_hash"]) >= 16


def test_show_text(seeded, run_cli):
    sdk = seeded.sdk
    res = run_cli(["show", seeded.eid[:7]])
    assert res.code == 0, res
    out = res.out
    assert out.startswith("%s  [finding]  active" % seeded.eid)
    assert "claim:      SDK swallows the 419" in out
    assert "detail:     returns it terminal, no retry" in out
    assert "repository: upload-sdk" in out
    assert "confidence: 0.8" in out
    line = "  upload-sdk:src/upload/upload.ts#uploadDocument  commit %s  blob %s" % (
        sdk.head[:7],
        sdk.blob("src/upload/upload.ts")[:7],
    )
    assert line in out
    assert "freshness:  current" in out


def test_show_unknown_and_ambiguous_ids(product, run_cli):
    for n in range(2):
        wctx.capture(
            product.store,
            [{"kind": "note", "claim": "note %d" % n, "repo": "upload-sdk"}],
            cwd=product.sdk.path,
        )
    res = run_cli(["show", "ev-zzzz"])
    assert res.code == 1 and res.err == "wctx: no evidence with id ev-zzzz\n"
    res = run_cli(["show", "ev-"])
    assert res.code == 2 and "ambiguous" in res.err and res.err.count("\n") == 1


def test_sessions_list_and_show(seeded, run_cli):
    res = run_cli(["sessions", "--json"])
    assert res.code == 0
    (s,) = res.json["sessions"]
    assert (
        s["repo"] == "docs-ui"
        and s["evidence"] == 1
        and s["summary"] == "traced the upload failure into the SDK"
    )
    shown = run_cli(["sessions", "show", s["id"], "--json"])
    assert shown.code == 0 and [e["id"] for e in shown.json["evidence"]] == [seeded.eid]
    missing = run_cli(["sessions", "show", "ses-nope"])
    assert missing.code == 1 and missing.err == "wctx: no session with id ses-nope\n"


# ----------------------------------------------------------------------------------------------
# Ranking
# ----------------------------------------------------------------------------------------------


def test_topology_orders_equal_matches_same_repo_direct_two_hops_workspace(product, git_repo):
    store = product.store
    site = git_repo("docs-site", {"index.md": "# docs\n"})
    wctx.register_repo(store, site.path, workspace="uploads")
    claim = "checksum mismatch on large uploads"
    ids = {}
    # Captured farthest first, so recency alone would put them in the opposite order.
    for repo, cwd in (
        ("docs-site", site),
        ("api-gateway", product.gateway),
        ("upload-sdk", product.sdk),
        ("docs-ui", product.ui),
    ):
        ids[repo] = wctx.capture(store, [{"kind": "finding", "claim": claim, "repo": repo}], cwd=cwd.path)[
            "evidence"
        ][0]["id"]
    res = wctx.search(store, "checksum mismatch", cwd=product.ui.path)
    assert [r["repo"] for r in res["results"]] == ["docs-ui", "upload-sdk", "api-gateway", "docs-site"]
    reasons = {r["repo"]: r["reasons"] for r in res["results"]}
    assert "same repository" in reasons["docs-ui"]
    assert "docs-ui uses upload-sdk (upstream dependency)" in reasons["upload-sdk"]
    assert "2 hops via upload-sdk" in reasons["api-gateway"]
    assert "same workspace uploads" in reasons["docs-site"]


def test_stale_items_sink_but_stay_visible_and_labelled(product):
    store, sdk = product.store, product.sdk
    claim = "the client times out after thirty seconds"
    keep = wctx.capture(
        store,
        [{"kind": "finding", "claim": claim, "repo": "upload-sdk", "files": ["src/client.py#retry_policy"]}],
        cwd=sdk.path,
    )
    goes_stale = wctx.capture(
        store,
        [
            {
                "kind": "finding",
                "claim": claim,
                "repo": "upload-sdk",
                "files": ["src/client.py#connect"],
                "confidence": 0.9,
            }
        ],
        cwd=sdk.path,
    )
    keep, goes_stale = keep["evidence"][0]["id"], goes_stale["evidence"][0]["id"]
    before = [r["id"] for r in wctx.search(store, "client times out", repo="upload-sdk")["results"]]
    assert before == [goes_stale, keep]  # higher stated confidence first while both are current
    sdk.write("src/client.py", sdk.read("src/client.py").replace('return {"url": url}', "return None"))
    sdk.commit("connect returns nothing")
    after = wctx.search(store, "client times out", repo="upload-sdk")["results"]
    assert [r["id"] for r in after] == [keep, goes_stale]
    assert after[1]["freshness"]["verdict"] == "stale"
    assert any(
        reason.startswith("stale: src/client.py#connect changed in 1 commit")
        for reason in after[1]["reasons"]
    )


def test_rank_fts_ignores_topology(product):
    store = product.store
    near = wctx.capture(
        store, [{"kind": "note", "claim": "cache warmup", "repo": "docs-ui"}], cwd=product.ui.path
    )["evidence"][0]["id"]
    far = wctx.capture(
        store,
        [
            {
                "kind": "note",
                "claim": "cache warmup cache warmup",
                "detail": "cache warmup again",
                "repo": "api-gateway",
            }
        ],
        cwd=product.gateway.path,
    )["evidence"][0]["id"]
    topo = [r["id"] for r in wctx.search(store, "cache warmup", cwd=product.ui.path)["results"]]
    fts = wctx.search(store, "cache warmup", cwd=product.ui.path, rank="fts")
    assert set(topo) == set(r["id"] for r in fts["results"]) == {near, far}
    assert topo[0] == near
    assert fts["rank"] == "fts"


def test_session_summary_is_searchable_and_follows_appends(product, run_cli):
    store, sdk = product.store, product.sdk
    first = wctx.capture(
        store,
        [{"kind": "finding", "claim": "retries are capped", "repo": "upload-sdk"}],
        summary="chasing flaky pipelines",
        cwd=sdk.path,
    )
    eid = first["evidence"][0]["id"]
    (hit,) = wctx.search(store, "flaky pipelines", repo="upload-sdk")["results"]
    assert hit["id"] == eid and hit["reasons"][0] == "matches the session summary (flaky, pipelines)"
    wctx.capture(
        store,
        [{"kind": "note", "claim": "second item", "repo": "upload-sdk"}],
        summary="then looked at quarantine tooling",
        session_id=first["session"],
        cwd=sdk.path,
    )
    ids = {r["id"] for r in wctx.search(store, "quarantine tooling", repo="upload-sdk")["results"]}
    assert eid in ids and len(ids) == 2


@pytest.mark.parametrize("query", ["document", "Document", "DOCUMENT", "docu"])
def test_a_query_matching_part_of_a_camel_case_symbol_says_so(seeded, query):
    (r,) = wctx.search(seeded.store, query, repo="upload-sdk")["results"]
    assert r["id"] == seeded.eid
    assert "matches symbol uploadDocument" in r["reasons"], r["reasons"]


def test_fallback_says_why(seeded):
    vague = wctx.search(seeded.store, "has anyone looked at this?", repo="upload-sdk")
    assert (vague["mode"], vague["fallback_reason"]) == ("fallback", "no searchable words in the query")
    nothing = wctx.search(seeded.store, "zeppelin quasar", repo="upload-sdk")
    assert (nothing["mode"], nothing["fallback_reason"]) == (
        "fallback",
        "no evidence matches the query words",
    )
    assert [r["id"] for r in nothing["results"]] == [seeded.eid]
    assert not any(reason.startswith("matches") for reason in nothing["results"][0]["reasons"])
    text = wctx.search(seeded.store, "419", repo="upload-sdk")
    assert (text["mode"], text["fallback_reason"]) == ("text", None)
