"""Keeping memory true over time: stale reasons that name only the commits that changed a cited
symbol, confirm, forget, one duplicate rule, a verify people keep running, and aging."""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from conftest import older_schema  # noqa: E402
from mcp_helpers.fixtures import Servers  # noqa: E402

import wctx  # noqa: E402

CLIENT = "src/client.py"

# A werkzeug-like module: two functions in one file, edited in separate commits.
HELPERS_PY = """def redirect(location, code=302):
    return {"location": location, "code": code}


def send_file(path, mimetype=None):
    return {"path": path, "mimetype": mimetype or "application/octet-stream"}


def safe_join(directory, *parts):
    return "/".join((directory,) + parts)
"""


def capture_one(product, files, repo="upload-sdk", claim="a finding", cwd=None, **extra):
    item = {"kind": "finding", "claim": claim, "repo": repo, "files": list(files)}
    item.update(extra)
    res = wctx.capture(product.store, [item], cwd=cwd or product.ui.path)
    return res["evidence"][0]


def verify_reason(run_cli, eid):
    res = run_cli(["verify", eid, "--json"])
    assert res.err == "", res
    (item,) = res.json["items"]
    return item["verdict"], item["reasons"][0]


# ----------------------------------------------------------------------------------------------
# Stale reasons name only the commits that changed the cited symbol
# ----------------------------------------------------------------------------------------------


def test_demo_names_only_the_commit_that_changed_the_symbol(run_wctx, tmp_path):
    res = run_wctx(["demo"], cwd=str(tmp_path))
    assert res.code == 0, res
    lines = [line.strip() for line in res.out.splitlines()]
    stale = [line for line in lines if line.startswith("src/upload/upload.ts#uploadDocument changed")]
    assert stale, res.out
    reason = stale[0]
    assert "changed in 1 commit since" in reason
    assert '"retry uploads after a 419"' in reason
    # The KiB commit touched the file but not the function: summarised, never named as a change.
    assert "show sizes in KiB" not in reason
    assert reason.endswith("the file changed in 1 other commit that left it intact")
    search_line = [line for line in lines if "[finding, upload-sdk, stale]" in line]
    assert search_line and "show sizes in KiB" not in search_line[0]


def test_two_commits_each_reason_names_its_own_commit(product, run_cli):
    sdk = product.sdk
    sdk.write("src/helpers.py", HELPERS_PY)
    base = sdk.commit("add helpers")
    on_redirect = capture_one(product, ["src/helpers.py#redirect"], claim="redirect")["id"]
    on_send = capture_one(product, ["src/helpers.py#send_file"], claim="send_file")["id"]
    on_join = capture_one(product, ["src/helpers.py#safe_join"], claim="safe_join")["id"]
    sdk.write("src/helpers.py", sdk.read("src/helpers.py").replace("code=302", "code=303"))
    first = sdk.commit("redirect defaults to 303")
    sdk.write("src/helpers.py", sdk.read("src/helpers.py").replace("application/octet-stream", "text/plain"))
    second = sdk.commit("send_file guesses text")

    verdict, reason = verify_reason(run_cli, on_send)
    assert verdict == "stale"
    assert reason == (
        'src/helpers.py#send_file changed in 1 commit since %s: %s %s "send_file guesses text"; '
        "the file changed in 1 other commit that left it intact" % (base[:7], second[:7], reason.split()[8])
    )
    assert first[:7] not in reason

    verdict, reason = verify_reason(run_cli, on_redirect)
    assert verdict == "stale" and first[:7] in reason and second[:7] not in reason
    assert '"redirect defaults to 303"' in reason

    verdict, reason = verify_reason(run_cli, on_join)
    assert verdict == "current"
    assert reason.startswith("symbol safe_join unchanged; other parts of src/helpers.py changed in 2 commits")


def test_a_long_history_is_walked_to_a_bound_and_the_reason_says_what_was_not_examined(
    product, run_cli, monkeypatch
):
    # The walk that names commits locates the symbol afresh only where a diff reaches its edges;
    # past HISTORY_MAX_PARSES such versions it stops, and the reason counts the commits it did not
    # judge instead of guessing about them. (The version at capture is not parsed again: the walk
    # starts from where capture found the symbol.)
    monkeypatch.setattr(wctx, "HISTORY_MAX_PARSES", 1)
    sdk = product.sdk
    sdk.write("src/helpers.py", HELPERS_PY)
    sdk.commit("add helpers")
    eid = capture_one(product, ["src/helpers.py#send_file"])["id"]
    sdk.write("src/helpers.py", sdk.read("src/helpers.py").replace("application/octet-stream", "text/plain"))
    early = sdk.commit("send_file guesses text")
    for n in range(4):
        sdk.write(
            "src/helpers.py", sdk.read("src/helpers.py").replace("code=30%d" % (2 + n), "code=30%d" % (3 + n))
        )
        sdk.commit("redirect code %d" % n)
    sdk.write("src/helpers.py", sdk.read("src/helpers.py").replace("text/plain", "text/html"))
    late = sdk.commit("send_file guesses html")
    verdict, reason = verify_reason(run_cli, eid)
    assert verdict == "stale"
    assert early[:7] in reason and '"send_file guesses text"' in reason
    # The late change lies beyond the bound: never named, never blamed on a redirect commit.
    assert late[:7] not in reason and "redirect code" not in reason
    assert "1 later commit that touched the file was not examined" in reason
    # The redirect commits did not need the symbol located again: they are judged, and intact.
    assert "the file changed in 4 other commits that left it intact" in reason
    # Without the bound, both changes are named and nothing is left unexamined.
    monkeypatch.setattr(wctx, "HISTORY_MAX_PARSES", 1000)
    verdict, reason = verify_reason(run_cli, eid)
    assert early[:7] in reason and late[:7] in reason and "not examined" not in reason
    assert "the file changed in 4 other commits that left it intact" in reason


def test_uncommitted_edit_is_named_as_uncommitted_not_as_commits(product, run_cli):
    sdk = product.sdk
    sdk.write("src/helpers.py", HELPERS_PY)
    sdk.commit("add helpers")
    eid = capture_one(product, ["src/helpers.py#send_file"])["id"]
    sdk.write("src/helpers.py", sdk.read("src/helpers.py").replace("code=302", "code=307"))
    sdk.commit("redirect 307")
    sdk.write("src/helpers.py", sdk.read("src/helpers.py").replace('return "/"', 'return "\\\\"'))
    sdk.commit("join with backslashes")
    sdk.write("src/helpers.py", sdk.read("src/helpers.py").replace("mimetype or", "mimetype and"))
    verdict, reason = verify_reason(run_cli, eid)
    assert verdict == "stale"
    assert reason == (
        "src/helpers.py#send_file changed: uncommitted changes in the working tree; "
        "the file changed in 2 commits that left it intact"
    )


def test_a_commit_and_an_uncommitted_edit_are_both_named(product, run_cli):
    sdk = product.sdk
    eid = capture_one(product, [CLIENT + "#connect"])["id"]
    sdk.write(CLIENT, sdk.read(CLIENT).replace('{"url": url}', '{"url": url, "t": 1}'))
    changed = sdk.commit("connect takes a timeout")
    sdk.write(CLIENT, sdk.read(CLIENT).replace("min(attempts, 3)", "min(attempts, 4)"))
    sdk.commit("retry cap 4")
    sdk.write(CLIENT, sdk.read(CLIENT).replace('"t": 1', '"t": 2'))
    verdict, reason = verify_reason(run_cli, eid)
    assert verdict == "stale"
    assert changed[:7] in reason and "retry cap 4" not in reason
    assert "and uncommitted changes in the working tree" in reason
    assert reason.endswith("the file changed in 1 other commit that left it intact")


def test_symbol_changes_are_followed_across_a_rename(product, run_cli):
    sdk = product.sdk
    eid = capture_one(product, [CLIENT + "#connect"])["id"]
    sdk.write(CLIENT, sdk.read(CLIENT).replace('{"url": url}', '{"url": url, "v": 2}'))
    changed = sdk.commit("connect v2")
    sdk.git("mv", CLIENT, "src/transport.py")
    sdk.commit("rename client to transport")
    sdk.write("src/transport.py", sdk.read("src/transport.py").replace("min(attempts, 3)", "attempts"))
    sdk.commit("no retry cap")
    verdict, reason = verify_reason(run_cli, eid)
    assert verdict == "stale"
    assert changed[:7] in reason and '"connect v2"' in reason
    assert "no retry cap" not in reason and "rename client to transport" not in reason
    assert "changed in 1 commit since" in reason
    assert "the file changed in 2 other commits that left it intact" in reason
    assert "followed rename src/client.py -> src/transport.py" in reason


def test_a_symbol_that_vanished_names_the_commit_that_removed_it(product, run_cli):
    sdk = product.sdk
    eid = capture_one(product, [CLIENT + "#retry_policy"])["id"]
    sdk.write(CLIENT, sdk.read(CLIENT).replace('{"url": url}', '{"url": url, "v": 2}'))
    sdk.commit("connect v2")
    text = sdk.read(CLIENT)
    sdk.write(CLIENT, text[: text.index("def retry_policy")].rstrip() + "\n")
    removed = sdk.commit("drop retry_policy")
    verdict, reason = verify_reason(run_cli, eid)
    assert verdict == "stale"
    assert reason.startswith("symbol retry_policy no longer found in src/client.py")
    assert removed[:7] in reason and "connect v2" not in reason
    assert "1 other commit that left it intact" in reason


def test_symbol_history_costs_one_cat_file_batch_per_repository(product, run_cli, monkeypatch):
    sdk = product.sdk
    sdk.write("src/helpers.py", HELPERS_PY)
    sdk.commit("add helpers")
    ids = [capture_one(product, ["src/helpers.py#" + s], claim=s)["id"] for s in ("redirect", "send_file")]
    ids.append(capture_one(product, [CLIENT + "#connect"], claim="connect")["id"])
    for n in range(3):
        sdk.write(
            "src/helpers.py", sdk.read("src/helpers.py").replace("code=30%d" % (2 + n), "code=30%d" % (3 + n))
        )
        sdk.write(CLIENT, sdk.read(CLIENT).replace("3)" if n == 0 else "%d)" % (n + 3), "%d)" % (n + 4)))
        sdk.write(CLIENT, sdk.read(CLIENT).replace('"url": url', '"url": url, "n%d": 1' % n, 1))
        sdk.commit("round %d" % n)
    sdk.write("src/helpers.py", sdk.read("src/helpers.py").replace('or "', 'or  "'))
    sdk.commit("send_file spacing")
    calls = []
    real = wctx.run_git

    def counting(repo_path, args, **kw):
        calls.append(list(args))
        return real(repo_path, args, **kw)

    monkeypatch.setattr(wctx, "run_git", counting)
    res = wctx.verify(product.store, ids)
    batches = [c for c in calls if c[:2] == ["cat-file", "--batch"]]
    assert len(batches) == 1, calls
    verdicts = {i["id"]: i["verdict"] for i in res["items"]}
    assert set(verdicts.values()) == {"stale"}
    send_reason = [i for i in res["items"] if i["id"] == ids[1]][0]["reasons"][0]
    assert "send_file spacing" in send_reason and "round" not in send_reason.split(";")[0]


# ----------------------------------------------------------------------------------------------
# One duplicate rule: CLI, MCP and import, across sessions
# ----------------------------------------------------------------------------------------------


def cli_capture(run_cli, cwd, claim, *more):
    res = run_cli(["capture", "--finding", claim, "--repo", "upload-sdk", *more, "--json"], cwd=cwd)
    assert res.code == 0, res
    return res.json


def test_the_same_claim_from_two_cli_sessions_is_one_item_seen_twice(product, run_cli):
    first = cli_capture(
        run_cli, product.ui.path, "Retry is missing for the 419.", "--file", CLIENT + "#connect"
    )
    second = cli_capture(
        run_cli,
        product.sdk.path,
        "  retry IS missing, for the 419 ",
        "--file",
        CLIENT + "#connect",
        "--confidence",
        "0.7",
    )
    assert first["session"] != second["session"]
    (a,), (b,) = first["evidence"], second["evidence"]
    assert b["duplicate"] is True and b["id"] == a["id"]
    assert "seen again by session %s" % second["session"] in b["message"]
    assert "confidence raised to 0.7" in b["message"]
    shown = run_cli(["show", a["id"], "--json"]).json
    assert shown["seen_by"] == [second["session"]] and shown["confidence"] == 0.7
    text = run_cli(["show", a["id"]]).out
    assert "recorded again by cli in session %s" % second["session"] in text
    # A lower confidence never lowers it; other files or another repository make another item.
    third = cli_capture(run_cli, product.sdk.path, "retry is missing for the 419", "--file", CLIENT + "#connect",
                        "--confidence", "0.2")  # fmt: skip
    assert third["evidence"][0]["id"] == a["id"]
    assert wctx.get_evidence(product.store, a["id"])["confidence"] == 0.7
    other = cli_capture(
        run_cli, product.sdk.path, "retry is missing for the 419", "--file", CLIENT + "#retry_policy"
    )
    assert other["evidence"][0]["duplicate"] is False
    assert len(run_cli(["search", "retry missing 419", "--json"], cwd=product.sdk.path).json["results"]) == 2


def test_mcp_and_cli_share_the_rule_foo_and_foo(tmp_path):
    servers = Servers(tmp_path)
    try:
        server = servers.start()
        server.initialize()
        item = {
            "kind": "finding",
            "claim": "Foo",
            "repo": "upload-sdk",
            "files": ["src/upload.py#uploadDocument"],
        }
        first = server.call_ok("record_evidence", {"items": [item]})
        eid = first["recorded"][0]["id"]
        store = wctx.open_store(servers.home)
        try:
            res = wctx.capture(store, [dict(item, claim="foo")], cwd=servers.env["sdk"], agent="cli")
            assert res["evidence"][0]["duplicate"] is True and res["evidence"][0]["id"] == eid
            # Over MCP from a new connection (a new session) too: "FOO!" is the same item.
            other = servers.start()
            other.initialize()
            again = other.call_ok("record_evidence", {"items": [dict(item, claim="FOO!")]})
            assert again["recorded"] == [] and [d["id"] for d in again["duplicates"]] == [eid]
            assert len(wctx.get_evidence(store, eid)["seen_by"]) == 2
        finally:
            store.close()
    finally:
        servers.close()


def _words_key(claim, words=None):
    # The duplicate rule's key as stores before the digest kept it: the claim's folded words.
    import re
    import unicodedata

    return " ".join(re.findall(r"[^\W_]+", unicodedata.normalize("NFKC", claim).casefold()))


def test_an_upgraded_store_keeps_finding_the_repeats_of_its_claims(
    git_repo, wctx_home, monkeypatch, tmp_path
):
    sdk = git_repo("upload-sdk", {CLIENT: "def connect():\n    return 1\n"})
    item = {"kind": "finding", "claim": "Retry is missing for the 419.", "repo": "upload-sdk",
            "files": [CLIENT + "#connect"]}  # fmt: skip
    # The store as it was before m014 (later migrations are left out with it; capture writes its
    # search row without the words of the cited code, which m017 adds).
    older_schema(monkeypatch, [m for m in wctx.MIGRATIONS if m.__name__ < "m014"])
    monkeypatch.setattr(wctx, "claim_key", _words_key)
    monkeypatch.setattr(
        wctx,
        "_FTS_INSERT_CODE",
        "INSERT INTO evidence_fts(rowid, claim, symbols, paths, detail) SELECT ?, wctx_index_text(?), "
        "wctx_index_text(?), wctx_index_text(?), wctx_index_text(?) FROM (SELECT ?, ?, ?)",
    )
    store = wctx.open_store(wctx_home)
    wctx.register_repo(store, sdk.path)
    eid = wctx.capture(store, [item], cwd=sdk.path)["evidence"][0]["id"]
    other = wctx.capture(store, [dict(item, claim="Ünïcode façade drops the token")], cwd=sdk.path)
    other_id = other["evidence"][0]["id"]
    assert (
        store.one("SELECT claim_key FROM evidence WHERE id = ?", (eid,))[0] == "retry is missing for the 419"
    )
    claims = {r[0]: r[1] for r in store.all("SELECT id, claim FROM evidence")}
    store.close()
    monkeypatch.undo()

    store = wctx.open_store(wctx_home)
    try:
        assert wctx.schema_version(store) == len(wctx.MIGRATIONS)
        assert {r[0]: r[1] for r in store.all("SELECT id, claim FROM evidence")} == claims  # claims untouched
        # The store keeps each claim once in the item: its key holds none of its words.
        assert store.one("SELECT count(*) FROM evidence WHERE claim_key LIKE '%retry%'")[0] == 0
        # The same claim written otherwise, recorded after the upgrade, is the item from before it,
        # by capture and by import alike.
        again = wctx.capture(store, [dict(item, claim="  RETRY is missing, for the 419 ")], cwd=sdk.path)
        assert again["evidence"][0]["duplicate"] is True and again["evidence"][0]["id"] == eid
        again = wctx.capture(store, [dict(item, claim="UNICODE FACADE drops the token")], cwd=sdk.path)
        assert again["evidence"][0]["duplicate"] is False  # folding keeps accents: another claim
        again = wctx.capture(store, [dict(item, claim="ünïcode FAÇADE drops the token!")], cwd=sdk.path)
        assert again["evidence"][0]["id"] == other_id
        # A teammate's record of it (own id, own words' case) imports as the same item.
        sid = "ses-0123456789"
        records = [
            {"type": "session", "format": 1, "id": sid, "agent": "cli", "repo": "upload-sdk", "summary": None},
            {"type": "evidence", "format": 1, "id": "ev-abcdefabcd", "session": sid, "repo": "upload-sdk",
             "kind": "finding", "claim": "retry is MISSING for the 419", "created_at": "2026-01-01T00:00:00Z",
             "updated_at": "2026-01-01T00:00:00Z",
             "anchors": [dict(a, dirty=0) for a in wctx.get_evidence(store, eid)["anchors"]]},
        ]  # fmt: skip
        export = tmp_path / "theirs.jsonl"
        export.write_text("".join(json.dumps(r) + "\n" for r in records))
        counts = wctx.import_evidence(store, [str(export)])
        assert counts["duplicates"] == 1 and counts["evidence"] == 0, counts
        assert wctx.get_evidence(store, "ev-abcdefabcd")["id"] == eid
    finally:
        store.close()


def test_import_applies_the_same_rule(product, run_cli, tmp_path):
    mine = cli_capture(
        run_cli, product.sdk.path, "The cache key ignores the locale", "--file", CLIENT + "#connect"
    )
    mine_id = mine["evidence"][0]["id"]
    # A teammate recorded the same claim (other words' case, own id) on their machine.
    export = tmp_path / "theirs.jsonl"
    sid = "ses-0123456789"
    records = [
        {"type": "session", "format": 1, "id": sid, "agent": "cli", "repo": "upload-sdk", "summary": None},
        {"type": "evidence", "format": 1, "id": "ev-abcdefabcd", "session": sid, "repo": "upload-sdk",
         "kind": "finding", "claim": "the cache key ignores the LOCALE.", "confidence": 0.9,
         "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
         "anchors": [dict(a, dirty=0) for a in wctx.get_evidence(product.store, mine_id)["anchors"]]},
    ]  # fmt: skip
    export.write_text("".join(json.dumps(r) + "\n" for r in records))
    res = run_cli(["import-evidence", str(export), "--json"])
    assert res.code == 0, res
    assert res.json["evidence"] == 0 and res.json["duplicates"] == 1
    shown = wctx.get_evidence(product.store, mine_id)
    assert shown["seen_by"] == [sid] and shown["confidence"] == 0.9
    # Importing again changes nothing more: the teammate's id is known here now, as the twin's.
    again = run_cli(["import-evidence", str(export), "--json"]).json
    assert again["unchanged"] == 1 and again["duplicates"] == 0 and again["evidence"] == 0
    assert wctx.get_evidence(product.store, "ev-abcdefabcd")["id"] == mine_id
    assert wctx.get_evidence(product.store, mine_id)["seen_by"] == [sid]


def test_an_imported_retracted_twin_stays_its_own_item_and_leaves_the_active_one_alone(
    product, run_cli, tmp_path
):
    mine = cli_capture(run_cli, product.sdk.path, "The retry budget resets per request")
    mine_id = mine["evidence"][0]["id"]
    sid = "ses-0123456789"
    records = [
        {"type": "session", "format": 1, "id": sid, "agent": "cli", "repo": "upload-sdk", "summary": None},
        {"type": "evidence", "format": 1, "id": "ev-abcdefabce", "session": sid, "repo": "upload-sdk",
         "kind": "finding", "claim": "the retry budget resets per request", "status": "retracted",
         "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-02T00:00:00Z", "anchors": []},
    ]  # fmt: skip
    export = tmp_path / "theirs.jsonl"
    export.write_text("".join(json.dumps(r) + "\n" for r in records))
    res = run_cli(["import-evidence", str(export), "--json"])
    assert res.code == 0 and res.json["evidence"] == 1 and res.json["duplicates"] == 0, res
    assert wctx.get_evidence(product.store, mine_id)["status"] == "active"
    assert wctx.get_evidence(product.store, "ev-abcdefabce")["status"] == "retracted"


def test_recording_again_after_the_cited_code_changed_says_so_and_leaves_the_stamp(product, run_cli):
    """Re-stamping is confirm's, asked for: a repeat only says the code changed and how to confirm."""
    first = cli_capture(run_cli, product.sdk.path, "connect has no timeout", "--file", CLIENT + "#connect")
    eid = first["evidence"][0]["id"]
    product.sdk.write(CLIENT, product.sdk.read(CLIENT).replace('{"url": url}', '{"url": url, "x": 1}'))
    product.sdk.commit("connect grows a field")
    assert verify_reason(run_cli, eid)[0] == "stale"
    again = run_cli(["capture", "--finding", "connect has no timeout", "--repo", "upload-sdk", "--file",
                     CLIENT + "#connect", "--session", first["session"]], cwd=product.sdk.path)  # fmt: skip
    assert again.code == 0, again
    assert (
        "the cited code changed since it was recorded; if the claim still holds: wctx confirm %s" % eid
        in again.out
    )
    assert verify_reason(run_cli, eid)[0] == "stale"
    assert run_cli(["show", eid, "--json"]).json["history"] == []


# ----------------------------------------------------------------------------------------------
# confirm
# ----------------------------------------------------------------------------------------------


def test_confirm_restamps_keeps_history_and_reads_current(product, run_cli):
    sdk = product.sdk
    eid = capture_one(product, [CLIENT + "#connect", "docs-ui:src/UploadButton.tsx"])["id"]
    old_sdk, old_ui = sdk.head, product.ui.head
    sdk.write(CLIENT, sdk.read(CLIENT).replace('{"url": url}', '{"url": url, "x": 1}'))
    new_sdk = sdk.commit("connect grows a field")
    assert verify_reason(run_cli, eid)[0] == "stale"
    res = run_cli(["confirm", eid, "--note", "re-read connect: still no timeout"])
    assert res.code == 0, res
    assert res.out.strip() == "confirmed %s (was stale): re-stamped at docs-ui %s, upload-sdk %s" % (
        eid, old_ui[:7], new_sdk[:7])  # fmt: skip
    code = run_cli(["verify", eid]).code
    assert code == 0 and verify_reason(run_cli, eid)[0] == "current"
    shown = run_cli(["show", eid, "--json"]).json
    assert shown["confirmed_at"] and shown["age"] == "recorded today, confirmed today"
    (event,) = shown["history"]
    assert event["note"] == "re-read connect: still no timeout" and event["agent"] == "cli"
    assert event["commits"] == {"upload-sdk": new_sdk, "docs-ui": old_ui}
    assert {(p["repo"], p["commit"]) for p in event["previous"]} == {
        ("upload-sdk", old_sdk),
        ("docs-ui", old_ui),
    }
    anchors = {(a["repo"], a["path"]): a for a in shown["anchors"]}
    assert anchors[("upload-sdk", CLIENT)]["commit"] == new_sdk
    assert anchors[("upload-sdk", CLIENT)]["blob"] == sdk.blob(CLIENT)
    text = run_cli(["show", eid]).out
    assert (
        "confirmed by cli, re-stamped at docs-ui %s, upload-sdk %s: re-read connect"
        % (old_ui[:7], new_sdk[:7])
        in text
    )
    assert "was stamped at docs-ui %s, upload-sdk %s" % (old_ui[:7], old_sdk[:7]) in text
    # A second confirmation adds to the history.
    sdk.write("x.txt", "x\n")
    sdk.commit("unrelated")
    assert run_cli(["confirm", eid]).code == 0
    assert len(wctx.get_evidence(product.store, eid)["history"]) == 2


def test_confirm_follows_a_rename(product, run_cli):
    sdk = product.sdk
    eid = capture_one(product, [CLIENT + "#connect"])["id"]
    sdk.git("mv", CLIENT, "src/transport.py")
    sdk.commit("rename")
    assert run_cli(["confirm", eid]).code == 0
    item = wctx.get_evidence(product.store, eid)
    assert item["files"] == ["src/transport.py#connect"]
    assert item["freshness"]["verdict"] == "current"


def test_confirm_refuses_a_vanished_file_or_symbol_and_changes_nothing(product, run_cli, wctx_home):
    from conftest import db_snapshot

    sdk = product.sdk
    on_symbol = capture_one(product, [CLIENT + "#retry_policy"], claim="retry")["id"]
    on_file = capture_one(product, ["src/upload/upload.ts"], claim="upload")["id"]
    fine = capture_one(product, [CLIENT + "#connect"], claim="connect")["id"]
    text = sdk.read(CLIENT)
    sdk.write(CLIENT, text[: text.index("def retry_policy")].rstrip() + "\n")
    sdk.git("rm", "-q", "src/upload/upload.ts")
    sdk.commit("drop retry_policy and upload.ts")
    before = db_snapshot(wctx_home)
    res = run_cli(["confirm", fine, on_symbol])
    assert res.code == 2 and res.out == ""
    assert "symbol retry_policy, which is no longer found in upload-sdk:src/client.py" in res.err
    assert "wctx supersede %s --by NEW-ID" % on_symbol in res.err
    res = run_cli(["confirm", on_file])
    assert res.code == 2 and "src/upload/upload.ts, which no longer exists in upload-sdk" in res.err
    assert "supersede" in res.err
    assert db_snapshot(wctx_home) == before
    assert run_cli(["confirm", "ev-nosuchitem"]).code == 1


def test_export_and_import_carry_confirmations(product, run_cli, tmp_path):
    sdk = product.sdk
    eid = capture_one(product, [CLIENT + "#connect"])["id"]
    share = tmp_path / "share"
    assert run_cli(["export", "--dir", str(share)]).code == 0
    other_home = str(tmp_path / "other-home")
    other = wctx.open_store(other_home)
    try:
        wctx.register_repo(other, sdk.path, workspace="team")
        wctx.register_repo(other, product.ui.path, workspace="team")
        wctx.import_evidence(other, [str(share)])
        sdk.write(CLIENT, sdk.read(CLIENT).replace('{"url": url}', '{"url": url, "x": 1}'))
        new = sdk.commit("connect grows a field")
        assert wctx.get_evidence(other, eid)["freshness"]["verdict"] == "stale"
        assert run_cli(["confirm", eid, "--note", "checked"]).code == 0
        assert run_cli(["export", "--dir", str(share)]).code == 0
        line = [
            json.loads(x)
            for x in open(str(share / (wctx.get_evidence(product.store, eid)["session"] + ".jsonl")))
        ]
        (rec,) = [r for r in line if r["type"] == "evidence"]
        assert rec["confirmed_at"] and rec["history"][0]["note"] == "checked"
        counts = wctx.import_evidence(other, [str(share)])
        assert counts["updated"] == 1
        there = wctx.get_evidence(other, eid)
        assert there["freshness"]["verdict"] == "current"
        assert there["history"][0]["commits"] == {"upload-sdk": new}
        assert wctx.import_evidence(other, [str(share)])["unchanged"] == 1
    finally:
        other.close()


# ----------------------------------------------------------------------------------------------
# A verify people keep running
# ----------------------------------------------------------------------------------------------


def test_verify_about_filters_and_repo_stays_the_scope(product, run_cli):
    in_sdk = capture_one(product, [CLIENT], claim="sdk item")["id"]
    in_ui = capture_one(product, ["src/UploadButton.tsx"], repo="docs-ui", claim="ui item")["id"]
    everything = run_cli(["verify", "--json"], cwd=product.sdk.path).json
    assert {in_sdk, in_ui} <= {i["id"] for i in everything["items"]}
    about = run_cli(["verify", "--about", "docs-ui", "--json"], cwd=product.sdk.path)
    assert about.code == 0 and [i["id"] for i in about.json["items"]] == [in_ui]
    about = run_cli(["verify", "--about", "upload-sdk", "--repo", "docs-ui", "--json"])
    assert [i["id"] for i in about.json["items"]] == [in_sdk]
    # An unrelated repository is not in docs-ui's scope: said, not silently empty.
    res = run_cli(["verify", "--about", "other", "--repo", "docs-ui"])
    assert res.code == 2 and "not in the scope of docs-ui" in res.err
    assert run_cli(["verify", "--about", "nosuch"]).code == 1


def test_items_citing_no_file_are_summarised_and_do_not_fail_verify(product, run_cli):
    sdk = product.sdk
    recorded = sdk.head
    fileless = [capture_one(product, [], claim="decision %d" % n)["id"] for n in range(3)]
    with_file = capture_one(product, [CLIENT + "#connect"], claim="connect")["id"]
    for n in range(2):
        sdk.write("notes/%d.txt" % n, "x\n")
        sdk.commit("move on %d" % n)
    res = run_cli(["verify"], cwd=sdk.path)
    assert res.code == 0, res  # possibly_stale alone is not a failure
    for eid in fileless:  # named once on the repository's line, not a line each
        assert res.out.count(eid) == 1 and not any(line.startswith(eid) for line in res.out.splitlines())
    assert "%s  current" % with_file in res.out
    named = res.out.split("upload-sdk moved 2 commits since; 3 items cite no file: ")[1].splitlines()[0]
    assert sorted(named.split(", ")) == sorted(fileless)
    assert "(3 items not listed one by one: wctx verify --all)" in res.out
    assert res.out.rstrip().endswith("4 checked: 1 current, 3 possibly stale, 0 stale, 0 unknown")
    assert run_cli(["verify", "--strict"], cwd=sdk.path).code == 1
    listed = run_cli(["verify", "--all"], cwd=sdk.path)
    assert all(eid in listed.out for eid in fileless)
    assert "upload-sdk moved 2 commits since %s; this item cites no file" % recorded[:7] in listed.out
    js = run_cli(["verify", "--json"], cwd=sdk.path).json
    assert js["fileless"] == [
        {"repo": "upload-sdk", "items": 3, "verdicts": {"possibly_stale": 3}, "moved_min": 2, "moved_max": 2,
         "ids": js["fileless"][0]["ids"]}
    ]  # fmt: skip
    assert sorted(js["fileless"][0]["ids"]) == sorted(fileless)
    # A stale item fails it; so does an unknown one.
    sdk.write(CLIENT, sdk.read(CLIENT).replace('{"url": url}', '{"url": url, "x": 1}'))
    assert run_cli(["verify"], cwd=sdk.path).code == 1


# ----------------------------------------------------------------------------------------------
# MCP: confirming through record_evidence, and the freshness audit of workspace_overview
# ----------------------------------------------------------------------------------------------


def _sdk_commit(sdk, rel, old, new, message):
    from mcp_helpers.repos import git

    path = os.path.join(str(sdk), rel)
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text.replace(old, new))
    git(sdk, "commit", "-qam", message)


def test_mcp_confirm_evidence_and_fileless_verify(tmp_path):
    servers = Servers(tmp_path)
    try:
        server = servers.start(cwd=servers.env["sdk"])
        server.initialize()
        rec = server.call_ok(
            "record_evidence",
            {"items": [
                {"kind": "finding", "claim": "upload returns 419", "files": ["src/upload.py#uploadDocument"]},
                {"kind": "decision", "claim": "we keep the SDK synchronous"},
            ]},
        )  # fmt: skip
        cited, fileless = [r["id"] for r in rec["recorded"]]
        _sdk_commit(
            servers.env["sdk"], "src/upload.py", "return send(doc)", "return send(doc, retry=True)", "retry"
        )
        checked = server.call_ok("workspace_overview", {"verify": True})
        assert [i["id"] for i in checked["items"]] == [cited]
        assert checked["items"][0]["verdict"] == "stale"
        assert checked["fileless"] == [
            "upload-sdk moved 1 commit since; this item cites no file: " + fileless
        ]
        assert checked["summary"]["possibly_stale"] == 1
        everything = server.call_ok(
            "workspace_overview", {"verify": True, "all": True, "about": "upload-sdk"}
        )
        assert {i["id"] for i in everything["items"]} == {cited, fileless}

        done = server.call_ok(
            "record_evidence", {"confirm": [cited], "note": "re-read after the retry change"}
        )
        assert [c["id"] for c in done["confirmed"]] == [cited] and done["confirmed"][0]["was"] == "stale"
        assert done["recorded"] == [] and "confirmed " + cited in done["message"]
        assert server.call_ok("workspace_overview", {"ids": [cited]})["items"][0]["verdict"] == "current"
        item = server.call_ok("get_evidence", {"id": cited})["evidence"]
        assert item["history"][0]["agent"] == "mcp" and item["history"][0]["session"] == rec["session"]
        # A vanished symbol is refused, pointing to supersede; it is a tool error, not a crash.
        _sdk_commit(
            servers.env["sdk"],
            "src/upload.py",
            "def uploadDocument(doc)",
            "def upload_document(doc)",
            "rename",
        )
        raw = server.call("record_evidence", {"confirm": [cited]})
        assert raw["isError"] is True and "supersede" in raw["content"][0]["text"]
    finally:
        servers.close()


# ----------------------------------------------------------------------------------------------
# Aging without guessing
# ----------------------------------------------------------------------------------------------


def test_search_results_carry_age_and_last_confirmation(product, run_cli):
    old = capture_one(product, [CLIENT + "#connect"], claim="connect leaks sockets")["id"]
    product.store.db.execute("UPDATE evidence SET created_at = '2026-01-01T00:00:00Z' WHERE id = ?", (old,))
    res = run_cli(["search", "connect sockets", "--json"], cwd=product.sdk.path).json
    (hit,) = res["results"]
    days = int(hit["age"].split()[1])
    assert days > 30 and hit["age"] == "recorded %d days ago, never confirmed" % days
    assert hit["confirmed_at"] is None and hit["reasons"][-1] == hit["age"]
    assert run_cli(["confirm", old]).code == 0
    hit = run_cli(["search", "connect sockets", "--json"], cwd=product.sdk.path).json["results"][0]
    assert hit["age"] == "recorded %d days ago, confirmed today" % days and hit["confirmed_at"]
    text = run_cli(["search", "connect sockets", "--detail"], cwd=product.sdk.path).out
    assert "recorded %d days ago, confirmed today" % days in text


def test_a_recently_confirmed_item_ranks_above_an_equal_old_one(product):
    a = capture_one(product, [], claim="token refresh races the upload")["id"]
    b = capture_one(product, [], claim="token refresh races the upload queue")["id"]
    for eid in (a, b):
        product.store.db.execute(
            "UPDATE evidence SET created_at = '2025-06-01T00:00:00Z' WHERE id = ?", (eid,)
        )
    first = [
        r["id"]
        for r in wctx.search(product.store, "token refresh races upload", cwd=product.sdk.path)["results"]
    ]
    loser = first[1]
    wctx.confirm(product.store, [loser])
    again = [
        r["id"]
        for r in wctx.search(product.store, "token refresh races upload", cwd=product.sdk.path)["results"]
    ]
    assert again[0] == loser


def test_agent_guidance_says_to_confirm_and_supersede(run_cli):
    import wctx_mcp

    for text in (wctx_mcp.INSTRUCTIONS, run_cli(["instructions"]).out):
        assert "confirm" in text and ("supersede" in text or "record what is true" in text)
    record = wctx_mcp.TOOLS_BY_NAME["record_evidence"]
    assert "confirm" in record["inputSchema"]["properties"] and "re-checked" in record["description"]


# ----------------------------------------------------------------------------------------------
# forget
# ----------------------------------------------------------------------------------------------

SECRET = "Zanzibarquokka mislabels the velvetpangolin invoices"


def store_bytes(home):
    out = b""
    for suffix in ("", "-wal", "-shm"):
        path = os.path.join(str(home), "wctx.db" + suffix)
        if os.path.exists(path):
            with open(path, "rb") as fh:
                out += fh.read()
    return out.lower()


def test_forget_removes_every_byte_of_the_claim(product, run_cli, wctx_home):
    keep = capture_one(product, [CLIENT + "#connect"], claim="connect is fine")["id"]
    gone = capture_one(
        product, [CLIENT + "#retry_policy"], claim=SECRET, detail="Velvetpangolin detail text"
    )["id"]
    assert run_cli(["search", "zanzibarquokka", "--json"], cwd=product.sdk.path).json["results"]
    assert b"zanzibarquokka" in store_bytes(wctx_home)
    # Without a terminal it refuses unless --yes, and changes nothing.
    res = run_cli(["forget", gone, "--reason", "leaked a key"])
    assert res.code == 2 and "--yes" in res.err
    assert run_cli(["show", gone]).code == 0
    assert run_cli(["forget", gone, "--yes"]).code == 2  # a reason is required
    res = run_cli(["forget", gone, "--reason", "leaked a key", "--yes"])
    assert res.code == 0, res
    assert "forgot %s" % gone in res.out
    assert run_cli(["show", gone]).code == 1
    found = run_cli(["search", "zanzibarquokka", "--json"], cwd=product.sdk.path).json
    assert found["mode"] == "fallback" and gone not in [r["id"] for r in found["results"]]
    data = store_bytes(wctx_home)
    for word in (b"zanzibarquokka", b"velvetpangolin"):
        assert word not in data
    assert run_cli(["show", keep]).code == 0
    assert run_cli(["search", "connect fine", "--json"], cwd=product.sdk.path).json["results"]


def test_forget_a_session_removes_its_text_and_items(product, run_cli, wctx_home):
    res = run_cli(["capture", "--summary", "Zanzibarquokka investigation", "--finding", "the flux capacitor leaks",
                   "--repo", "upload-sdk", "--json"], cwd=product.sdk.path)  # fmt: skip
    sid = res.json["session"]
    other = capture_one(product, [], claim="unrelated fact")["id"]
    res = run_cli(["forget", "--session", sid, "--reason", "private", "--yes"])
    assert res.code == 0 and "session %s and its 1 item" % sid in res.out
    data = store_bytes(wctx_home)
    assert b"zanzibarquokka" not in data and b"capacitor" not in data
    assert run_cli(["sessions", "show", sid]).code == 1
    assert run_cli(["show", other]).code == 0


def test_a_tombstone_round_trips_through_export_and_import(product, run_cli, tmp_path):
    eid = capture_one(product, [CLIENT + "#connect"], claim=SECRET)["id"]
    share = tmp_path / "share"
    assert run_cli(["export", "--dir", str(share)]).code == 0
    other_home = tmp_path / "other-home"
    other = wctx.open_store(str(other_home))
    try:
        wctx.register_repo(other, product.sdk.path, workspace="team")
        wctx.import_evidence(other, [str(share)])
        assert wctx.get_evidence(other, eid)["claim"] == SECRET
    finally:
        other.close()
    assert run_cli(["forget", eid, "--reason", "leaked a key", "--yes"]).code == 0
    assert run_cli(["export", "--dir", str(share)]).code == 0
    shared = b"".join(p.read_bytes() for p in share.glob("*.jsonl")).lower()
    assert b"zanzibarquokka" not in shared and b"leaked a key" in shared
    lines = [json.loads(x) for p in share.glob("*.jsonl") for x in p.read_text().splitlines()]
    (tomb,) = [r for r in lines if r["type"] == "tombstone"]
    assert set(tomb) == {"type", "format", "id", "kind", "session", "reason", "forgotten_at"}
    assert tomb["id"] == eid and tomb["reason"] == "leaked a key"
    other = wctx.open_store(str(other_home))
    try:
        counts = wctx.import_evidence(other, [str(share)])
        assert counts["forgotten"] >= 1
        assert other.one("SELECT count(*) FROM evidence WHERE id = ?", (eid,))[0] == 0
    finally:
        other.close()
    assert b"zanzibarquokka" not in store_bytes(other_home)
    # An old copy of the export (the item, no tombstone) never brings it back.
    old = tmp_path / "old.jsonl"
    rec = {"type": "evidence", "format": 1, "id": eid, "session": tomb["session"], "repo": "upload-sdk",
           "kind": "finding", "claim": SECRET, "anchors": []}  # fmt: skip
    ses = {"type": "session", "format": 1, "id": tomb["session"], "agent": "cli"}
    old.write_text(json.dumps(ses) + "\n" + json.dumps(rec) + "\n")
    res = run_cli(["import-evidence", str(old), "--json"])
    assert res.code == 0 and res.json["forgotten"] == 1 and res.json["evidence"] == 0
    assert run_cli(["show", eid]).code == 1
