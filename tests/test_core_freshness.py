"""Freshness verdicts computed from real git history: current, stale, possibly_stale, unknown,
each with reasons naming files, symbols, commits, renames, deletions and uncommitted edits."""

from __future__ import annotations

import os
import shutil

import pytest

import wctx

CLIENT = "src/client.py"


def capture(product, files, repo="upload-sdk", claim="a finding", cwd=None):
    res = wctx.capture(
        product.store,
        [{"kind": "finding", "claim": claim, "repo": repo, "files": list(files)}],
        cwd=cwd or product.ui.path,
    )
    return res["evidence"][0]["id"]


def verify_one(run_cli, eid):
    """``wctx verify ID --json`` -> (exit code, the item)."""
    res = run_cli(["verify", eid, "--json"])
    assert res.err == "", res
    items = res.json["items"]
    assert [i["id"] for i in items] == [eid]
    return res.code, items[0]


def forget_unreachable(repo):
    """Make commits that are no longer on any branch really disappear."""
    repo.git("reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all")
    repo.git("gc", "-q", "--prune=now")


def commit_exists(repo, sha):
    return repo.git("cat-file", "-t", sha, check=False).strip() == "commit"


def edit_connect(repo):
    repo.write(CLIENT, repo.read(CLIENT).replace('return {"url": url}', 'return {"url": url, "timeout": 30}'))


def edit_retry_policy(repo):
    repo.write(CLIENT, repo.read(CLIENT).replace("min(attempts, 3)", "min(attempts, 5)"))


# ----------------------------------------------------------------------------------------------
# current / stale
# ----------------------------------------------------------------------------------------------


def test_untouched_is_current(product, run_cli):
    eid = capture(product, [CLIENT + "#connect", "src/upload/upload.ts"])
    product.sdk.write("unrelated.txt", "x\n")
    product.sdk.commit("unrelated change")
    code, item = verify_one(run_cli, eid)
    assert code == 0
    assert item["verdict"] == "current"
    assert "src/client.py#connect unchanged since capture" in item["reasons"]
    assert "src/upload/upload.ts unchanged since capture" in item["reasons"]
    assert {(a["path"], a["verdict"]) for a in item["anchors"]} == {
        (CLIENT, "current"),
        ("src/upload/upload.ts", "current"),
    }


def test_cited_symbol_edited_is_stale_and_names_the_commit(product, run_cli):
    sdk = product.sdk
    recorded = sdk.head
    eid = capture(product, [CLIENT + "#connect"])
    edit_connect(sdk)
    new = sdk.commit("connect sets a timeout")
    code, item = verify_one(run_cli, eid)
    assert code == 1
    assert item["verdict"] == "stale"
    reason = item["reasons"][0]
    assert reason.startswith(
        "src/client.py#connect changed in 1 commit since %s: %s " % (recorded[:7], new[:7])
    )
    assert '"connect sets a timeout"' in reason
    assert item["anchors"][0]["commit"] == recorded


def test_other_function_in_the_same_file_edited_is_current_and_says_so(product, run_cli):
    sdk = product.sdk
    eid = capture(product, [CLIENT + "#connect"])
    edit_retry_policy(sdk)
    new = sdk.commit("raise the retry cap")
    code, item = verify_one(run_cli, eid)
    assert code == 0
    assert item["verdict"] == "current"
    reason = item["reasons"][0]
    assert reason.startswith("symbol connect unchanged; other parts of src/client.py changed in 1 commit")
    assert new[:7] in reason and '"raise the retry cap"' in reason


def test_typescript_symbol_heuristic_current_then_stale(product, run_cli):
    sdk = product.sdk
    eid = capture(product, ["src/upload/upload.ts#uploadDocument"])
    path = "src/upload/upload.ts"
    sdk.write(path, sdk.read(path).replace('toFixed(1) + " kB"', 'toFixed(2) + " KiB"'))
    sdk.commit("sizes in KiB")
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (0, "current")
    assert "symbol uploadDocument unchanged" in item["reasons"][0]
    sdk.write(path, sdk.read(path).replace('throw new Error("upload failed");', "return retry(file);"))
    sdk.commit("retry after 419")
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (1, "stale")
    # Only the commit that changed the function is named; the KiB commit left it intact.
    assert item["reasons"][0].startswith("src/upload/upload.ts#uploadDocument changed in 1 commit")
    assert item["reasons"][0].endswith("the file changed in 1 other commit that left it intact")
    assert "sizes in KiB" not in item["reasons"][0]


HEURISTIC_SOURCES = {
    "server.go": (
        "package s\n\nfunc (s *Server) Upload(w Writer) error {\n\treturn nil\n}\n\nfunc Other() int {\n\treturn 1\n}\n",
        "Upload",
        ("return 1", "return 2"),
        ("return nil", "return errExpired"),
    ),
    "lib.rs": (
        "pub fn upload(doc: &Doc) -> Result<(), E> {\n    send(doc)\n}\n\nfn other() -> u8 {\n    1\n}\n",
        "upload",
        ("    1\n", "    2\n"),
        ("send(doc)", "send_with_retry(doc)"),
    ),
    "Uploader.java": (
        "public class Uploader {\n    public int upload(Doc d) {\n        return send(d);\n    }\n\n"
        "    private int other() {\n        return 1;\n    }\n}\n",
        "Uploader.upload",
        ("return 1;", "return 2;"),
        ("return send(d);", "return retry(d);"),
    ),
    "uploader.rb": (
        "class Uploader\n  def upload(doc)\n    send(doc)\n  end\n\n  def other\n    1\n  end\nend\n",
        "upload",
        ("    1\n", "    2\n"),
        ("send(doc)", "retry(doc)"),
    ),
    "upload.c": (
        "static int helper(void);\n\nint upload(struct doc *d)\n{\n    return send(d);\n}\n\nint other(void)\n{\n    return 1;\n}\n",
        "upload",
        ("return 1;", "return 2;"),
        ("return send(d);", "return retry(d);"),
    ),
}


@pytest.mark.parametrize("filename", sorted(HEURISTIC_SOURCES))
def test_symbol_heuristics_for_other_languages(git_repo, store, run_cli, filename):
    source, symbol, other_edit, symbol_edit = HEURISTIC_SOURCES[filename]
    repo = git_repo("polyglot", {filename: source})
    wctx.register_repo(store, repo.path)
    res = wctx.capture(
        store, [{"kind": "finding", "claim": "c", "files": ["%s#%s" % (filename, symbol)]}], cwd=repo.path
    )
    assert res["warnings"] == []
    eid = res["evidence"][0]["id"]
    repo.write(filename, repo.read(filename).replace(*other_edit))
    repo.commit("other part")
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (0, "current"), item
    assert item["reasons"][0].startswith(
        "symbol %s unchanged; other parts of %s changed" % (symbol, filename)
    )
    repo.write(filename, repo.read(filename).replace(*symbol_edit))
    repo.commit("the symbol itself")
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (1, "stale"), item


def test_symbol_removed_is_stale_and_says_it_is_gone(product, run_cli):
    sdk = product.sdk
    eid = capture(product, [CLIENT + "#connect"])
    sdk.write(CLIENT, sdk.read(CLIENT).replace("def connect(", "def open_connection("))
    sdk.commit("rename connect")
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (1, "stale")
    assert item["reasons"][0].startswith("symbol connect no longer found in src/client.py")


def test_symbol_not_located_at_capture_is_possibly_stale_when_the_file_changes(product, run_cli):
    sdk = product.sdk
    res = wctx.capture(
        product.store,
        [{"kind": "finding", "claim": "c", "repo": "upload-sdk", "files": [CLIENT + "#Ghost"]}],
        cwd=sdk.path,
        allow_missing_symbol=True,
    )
    assert res["warnings"]
    eid = res["evidence"][0]["id"]
    assert verify_one(run_cli, eid)[1]["verdict"] == "current"
    edit_retry_policy(sdk)
    sdk.commit("touch the file")
    code, item = verify_one(run_cli, eid)
    # possibly_stale alone exits 0; --strict makes it fail.
    assert (code, item["verdict"]) == (0, "possibly_stale")
    assert run_cli(["verify", eid, "--strict"]).code == 1
    assert (
        "symbol Ghost could not be located at capture, so only file-level change is known"
        in item["reasons"][0]
    )


# ----------------------------------------------------------------------------------------------
# renames, deletions, uncommitted edits
# ----------------------------------------------------------------------------------------------


def test_renamed_file_is_followed_and_both_paths_are_named(product, run_cli):
    sdk = product.sdk
    eid = capture(product, [CLIENT + "#connect"])
    sdk.git("mv", CLIENT, "src/connection.py")
    sdk.commit("rename client module")
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (0, "current")
    reason = item["reasons"][0]
    assert "followed rename src/client.py -> src/connection.py" in reason
    # Then the symbol changes at its new home: stale, still naming both paths.
    edit = sdk.read("src/connection.py").replace('return {"url": url}', "return None")
    sdk.write("src/connection.py", edit)
    sdk.commit("connect returns nothing")
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (1, "stale")
    assert "src/connection.py#connect" in item["reasons"][0]
    assert "followed rename src/client.py -> src/connection.py" in item["reasons"][0]


def test_renamed_but_not_committed_is_followed(product, run_cli):
    sdk = product.sdk
    eid = capture(product, [CLIENT])
    sdk.git("mv", CLIENT, "src/conn.py")
    code, item = verify_one(run_cli, eid)
    assert item["verdict"] == "current", item
    assert "followed rename src/client.py -> src/conn.py" in item["reasons"][0]


def test_deleted_file_is_stale_and_names_the_commit(product, run_cli):
    sdk = product.sdk
    eid = capture(product, [CLIENT + "#connect"])
    sdk.git("rm", "-q", CLIENT)
    gone = sdk.commit("drop the client")
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (1, "stale")
    assert item["reasons"][0].startswith("src/client.py#connect was deleted in %s" % gone[:7])
    assert '"drop the client"' in item["reasons"][0]


def test_deleted_but_not_committed_is_stale(product, run_cli):
    eid = capture(product, [CLIENT])
    os.remove(product.sdk.file(CLIENT))
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (1, "stale")
    assert item["reasons"][0] == "src/client.py was deleted (not committed yet)"


def test_uncommitted_edit_of_the_cited_symbol_is_stale_and_says_uncommitted(product, run_cli):
    eid = capture(product, [CLIENT + "#connect"])
    edit_connect(product.sdk)
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (1, "stale")
    assert "uncommitted changes in the working tree" in item["reasons"][0]
    assert "src/client.py#connect" in item["reasons"][0]


def test_uncommitted_edit_of_a_file_cited_whole_is_stale(product, run_cli):
    eid = capture(product, ["src/upload/upload.ts"])
    product.sdk.write("src/upload/upload.ts", product.sdk.read("src/upload/upload.ts") + "// local note\n")
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (1, "stale")
    assert item["reasons"][0] == "src/upload/upload.ts changed: uncommitted changes in the working tree"


def test_uncommitted_edit_of_another_function_is_current(product, run_cli):
    eid = capture(product, [CLIENT + "#connect"])
    edit_retry_policy(product.sdk)
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (0, "current")
    assert "symbol connect unchanged" in item["reasons"][0] and "uncommitted" in item["reasons"][0]


def test_edit_reverted_is_current_again(product, run_cli):
    sdk = product.sdk
    original = sdk.read(CLIENT)
    eid = capture(product, [CLIENT])
    edit_connect(sdk)
    assert verify_one(run_cli, eid)[1]["verdict"] == "stale"
    sdk.write(CLIENT, original)
    assert verify_one(run_cli, eid)[1]["verdict"] == "current"


# ----------------------------------------------------------------------------------------------
# rewritten history
# ----------------------------------------------------------------------------------------------


def test_amended_capture_commit_with_unchanged_content_is_current(product, run_cli):
    sdk = product.sdk
    recorded = sdk.head
    eid = capture(product, [CLIENT + "#connect", "src/upload/upload.ts"])
    sdk.git("commit", "-q", "--amend", "-m", "initial (reworded)")
    forget_unreachable(sdk)
    assert sdk.head != recorded and not commit_exists(sdk, recorded)
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (0, "current"), item
    assert any(
        "the recorded commit %s is gone, but the content is identical" % recorded[:7] in r
        for r in item["reasons"]
    ), item


def test_amended_capture_commit_with_changed_content_is_stale_saying_the_commit_is_gone(product, run_cli):
    sdk = product.sdk
    recorded = sdk.head
    eid = capture(product, [CLIENT + "#connect"])
    edit_connect(sdk)
    sdk.git("add", "-A")
    sdk.git("commit", "-q", "--amend", "-m", "initial, with a timeout")
    forget_unreachable(sdk)
    assert not commit_exists(sdk, recorded)
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (1, "stale")
    assert "the recorded commit %s is gone (history rewritten)" % recorded[:7] in item["reasons"][0]


def test_rewritten_history_other_function_changed_is_current_by_symbol_hash(product, run_cli):
    sdk = product.sdk
    recorded = sdk.head
    eid = capture(product, [CLIENT + "#connect"])
    edit_retry_policy(sdk)
    sdk.git("add", "-A")
    sdk.git("commit", "-q", "--amend", "-m", "initial, retry cap 5")
    forget_unreachable(sdk)
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (0, "current")
    assert item["reasons"][0].startswith("symbol connect unchanged")
    assert "recorded commit %s is gone" % recorded[:7] in item["reasons"][0]


def _orphan_rewrite(repo, message="squashed history"):
    """Replace the whole history by one new root commit with the same tree, drop the old one."""
    repo.git("checkout", "-q", "--orphan", "rewritten")
    repo.git("commit", "-q", "-m", message)
    repo.git("branch", "-D", "main")
    forget_unreachable(repo)


def test_orphan_history_with_the_same_content_is_current(product, run_cli):
    sdk = product.sdk
    recorded = sdk.head
    eid = capture(product, [CLIENT + "#connect"])
    _orphan_rewrite(sdk)
    assert not commit_exists(sdk, recorded)
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (0, "current")
    assert "is gone, but the content is identical" in item["reasons"][0]


def test_orphan_history_with_changed_content_is_stale(product, run_cli):
    sdk = product.sdk
    recorded = sdk.head
    eid = capture(product, [CLIENT + "#connect"])
    edit_connect(sdk)
    sdk.git("add", "-A")
    _orphan_rewrite(sdk)
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (1, "stale")
    assert "the recorded commit %s is gone" % recorded[:7] in item["reasons"][0]


def test_orphan_history_with_the_file_moved_is_found_by_blob(product, run_cli):
    sdk = product.sdk
    eid = capture(product, [CLIENT + "#connect"])
    os.makedirs(sdk.file("lib"))
    sdk.git("mv", CLIENT, "lib/client.py")
    _orphan_rewrite(sdk)
    code, item = verify_one(run_cli, eid)
    assert item["verdict"] == "current", item
    assert "followed rename src/client.py -> lib/client.py" in item["reasons"][0]


def test_orphan_history_with_the_file_deleted_is_stale(product, run_cli):
    sdk = product.sdk
    recorded = sdk.head
    eid = capture(product, [CLIENT])
    sdk.git("rm", "-q", CLIENT)
    _orphan_rewrite(sdk)
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (1, "stale")
    assert "recorded commit %s is gone" % recorded[:7] in item["reasons"][0]


# ----------------------------------------------------------------------------------------------
# items citing no file; repositories that went away
# ----------------------------------------------------------------------------------------------


def test_item_citing_no_file(product, run_cli):
    sdk = product.sdk
    recorded = sdk.head
    eid = capture(product, [])
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (0, "current")
    assert item["reasons"] == ["cites no file; upload-sdk is still at %s" % recorded[:7]]
    sdk.write("x.txt", "x\n")
    sdk.commit("move on")
    code, item = verify_one(run_cli, eid)
    # possibly_stale alone exits 0 (--strict makes it 1), and the reason says what moved.
    assert (code, item["verdict"]) == (0, "possibly_stale")
    assert item["reasons"] == ["upload-sdk moved 1 commit since %s; this item cites no file" % recorded[:7]]
    assert run_cli(["verify", eid, "--strict"]).code == 1


def test_item_citing_no_file_whose_commit_is_gone_is_unknown(product, run_cli):
    sdk = product.sdk
    recorded = sdk.head
    eid = capture(product, [])
    _orphan_rewrite(sdk)
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (1, "unknown")
    assert item["reasons"] == [
        "cites no file, and the recorded commit %s is not in upload-sdk (history rewritten?)" % recorded[:7]
    ]


def test_repo_folder_deleted_is_unknown(product, run_cli):
    with_file = capture(product, [CLIENT + "#connect"])
    without = capture(product, [])
    shutil.rmtree(product.sdk.path)
    for eid in (with_file, without):
        code, item = verify_one(run_cli, eid)
        assert (code, item["verdict"]) == (1, "unknown")
        assert item["reasons"][0].startswith("repository upload-sdk is not on this machine")
    shown = run_cli(["show", with_file, "--json"])
    assert shown.code == 0 and shown.json["freshness"]["verdict"] == "unknown"


def test_repo_folder_no_longer_a_git_repo_is_unknown(product, run_cli):
    eid = capture(product, [CLIENT])
    shutil.rmtree(product.sdk.file(".git"))
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (1, "unknown")
    assert "no longer a git repository" in item["reasons"][0]


def test_cross_repo_item_takes_the_worst_verdict(product, run_cli):
    eid = capture(product, [CLIENT + "#connect", "docs-ui:src/UploadButton.tsx"], repo="upload-sdk")
    ui = product.ui
    ui.write("src/UploadButton.tsx", ui.read("src/UploadButton.tsx") + "// x\n")
    ui.commit("tweak the button")
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (1, "stale")
    verdicts = {(a["repo"], a["path"]): a["verdict"] for a in item["anchors"]}
    assert verdicts == {("upload-sdk", CLIENT): "current", ("docs-ui", "src/UploadButton.tsx"): "stale"}
    assert item["reasons"][0].startswith("src/UploadButton.tsx changed in 1 commit")


# ----------------------------------------------------------------------------------------------
# verify: JSON shape, scope, exit codes
# ----------------------------------------------------------------------------------------------


def test_verify_json_shape_and_exit_codes(product, run_cli):
    a = capture(product, [CLIENT + "#connect"], claim="connect")
    b = capture(product, ["src/upload/upload.ts#uploadDocument"], claim="upload")
    res = run_cli(["verify", "--json"], cwd=product.sdk.path)
    assert res.code == 0, res
    out = res.json
    assert set(out) >= {"items", "summary"}
    assert {i["id"] for i in out["items"]} == {a, b}
    for item in out["items"]:
        assert set(item) >= {"id", "verdict", "reasons", "anchors"}
        assert item["verdict"] in wctx.VERDICTS
        assert all(isinstance(r, str) for r in item["reasons"])
        for anchor in item["anchors"]:
            assert set(anchor) >= {"repo", "path", "symbol", "commit", "verdict"}
    assert out["summary"] == {"current": 2, "possibly_stale": 0, "stale": 0, "unknown": 0}
    edit_connect(product.sdk)
    res = run_cli(["verify", "--json"], cwd=product.sdk.path)
    assert res.code == 1
    assert res.json["summary"] == {"current": 1, "possibly_stale": 0, "stale": 1, "unknown": 0}
    # Text output: one line per item, then the tally.
    text = run_cli(["verify", a, b])
    assert text.code == 1
    assert "%s  stale" % a in text.out and "%s  current" % b in text.out
    assert text.out.rstrip().endswith("2 checked: 1 current, 0 possibly stale, 1 stale, 0 unknown")
    # The unchanged one alone exits 0; a unique id prefix works too.
    assert run_cli(["verify", b]).code == 0
    prefix = b[:8] if b[:8] != a[:8] else b
    assert run_cli(["verify", prefix, "--json"]).json["items"][0]["id"] == b


def test_verify_scope_follows_the_cwd_and_skips_inactive_items(product, run_cli):
    in_sdk = capture(product, [CLIENT], claim="sdk")
    in_other = capture(product, ["main.py"], repo="other", claim="other", cwd=product.other.path)
    retracted = capture(product, [CLIENT], claim="retracted")
    wctx.retract(product.store, retracted)
    res = run_cli(["verify", "--json"], cwd=product.ui.path)
    assert [i["id"] for i in res.json["items"]] == [in_sdk]
    res = run_cli(["verify", "--repo", "other", "--json"])
    assert [i["id"] for i in res.json["items"]] == [in_other]


def test_verify_unknown_id(product, run_cli):
    res = run_cli(["verify", "ev-doesnotexist"])
    assert res.code == 1 and res.err == "wctx: no evidence with id ev-doesnotexist\n"


def test_search_shows_the_live_verdict_after_an_edit(product):
    eid = capture(product, [CLIENT + "#connect"], claim="connect returns a dict")
    first = wctx.search(product.store, "connect dict", repo="upload-sdk")["results"]
    assert [(r["id"], r["freshness"]["verdict"]) for r in first] == [(eid, "current")]
    edit_connect(product.sdk)
    again = wctx.search(product.store, "connect dict", repo="upload-sdk")["results"]
    assert again[0]["freshness"]["verdict"] == "stale"
    assert any(r.startswith("stale: src/client.py#connect") for r in again[0]["reasons"])


def test_search_sees_an_edit_after_a_followed_rename(product):
    """The freshness shown in search is cached by what can be checked without git; a renamed
    file's new home must not hide a later edit there."""
    sdk = product.sdk
    eid = capture(product, [CLIENT + "#connect"], claim="connect returns a dict")
    sdk.git("mv", CLIENT, "src/conn.py")
    sdk.commit("rename the client module")
    first = wctx.search(product.store, "connect dict", repo="upload-sdk")["results"][0]
    assert first["id"] == eid and first["freshness"]["verdict"] == "current"
    assert "followed rename src/client.py -> src/conn.py" in first["freshness"]["reasons"][0]
    sdk.write("src/conn.py", sdk.read("src/conn.py").replace('return {"url": url}', "return None"))
    again = wctx.search(product.store, "connect dict", repo="upload-sdk")["results"][0]
    assert again["freshness"]["verdict"] == "stale", again["freshness"]
    assert wctx.verify(product.store, [eid])["items"][0]["verdict"] == "stale"


def test_search_freshness_follows_commits_and_edits(product):
    sdk = product.sdk
    eid = capture(product, ["src/upload/upload.ts#formatSize"], claim="formatSize uses kB")

    def shown():
        (r,) = wctx.search(product.store, "formatSize", repo="upload-sdk")["results"]
        assert r["id"] == eid
        return r["freshness"]["verdict"]

    assert shown() == "current"
    path = "src/upload/upload.ts"
    original = sdk.read(path)
    sdk.write(path, original.replace('" kB"', '" KiB"'))
    assert shown() == "stale"
    sdk.write(path, original)
    assert shown() == "current"
    sdk.write(path, original.replace('" kB"', '" KiB"'))
    sdk.commit("KiB")
    assert shown() == "stale"


def test_repo_without_commits_at_capture_never_claims_a_commit_is_gone(git_repo, store, run_cli):
    repo = git_repo(
        "fresh",
        {"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 2\n", "b.py": "x = 1\n"},
        commit=False,
    )
    wctx.register_repo(store, repo.path)
    res = wctx.capture(
        store,
        [
            {"kind": "finding", "claim": "f returns one", "files": ["a.py#f"]},
            {"kind": "finding", "claim": "b sets x", "files": ["b.py"]},
            {"kind": "note", "claim": "no file"},
        ],
        cwd=repo.path,
    )
    on_f, on_b, bare = (e["id"] for e in res["evidence"])
    assert wctx.get_evidence(store, on_f)["anchors"][0]["commit"] is None
    assert verify_one(run_cli, on_f)[1]["verdict"] == "current"
    assert verify_one(run_cli, bare)[1]["reasons"] == [
        "no commit was recorded for fresh (it had no commits at capture)"
    ]
    repo.write("a.py", repo.read("a.py").replace("return 2", "return 3"))
    code, item = verify_one(run_cli, on_f)
    assert (code, item["verdict"]) == (0, "current")
    assert item["reasons"][0].startswith("symbol f unchanged; other parts of a.py changed")
    repo.write("a.py", repo.read("a.py").replace("return 1", "return 9"))
    os.remove(repo.file("b.py"))
    repo.commit("first commit")
    for eid in (on_f, on_b):
        code, item = verify_one(run_cli, eid)
        assert (code, item["verdict"]) == (1, "stale")
        reason = item["reasons"][0]
        assert "no commit was recorded" in reason and "fresh had no commits at capture" in reason, reason
        assert "?" not in reason and "history rewritten" not in reason and "is gone" not in reason, reason


def test_worktree_checkout_and_packed_refs(product, run_cli, tmp_path):
    """A linked worktree (.git is a file) is a checkout of its repository with its own HEAD;
    search's cached freshness notices a commit there (HEAD is all that changes for an item citing
    no file), also after the refs were packed, and the main checkout's items are not affected."""
    from conftest import Checkout

    sdk = product.sdk
    wt = str(tmp_path / "sdk-feature")
    sdk.git("worktree", "add", "-q", "-b", "feature", wt)
    added = wctx.register_repo(product.store, wt, workspace="uploads")
    assert added["checkout"] is True and added["repo"]["name"] == "upload-sdk"
    tree = Checkout(wt)
    eid = capture(product, [], claim="feature branch plan", cwd=wt)
    anchors = wctx.get_evidence(product.store, eid)["anchors"]
    assert [(a["commit"], a["branch"]) for a in anchors] == [(tree.head, "feature")]
    main_item = capture(product, [], claim="main branch plan")

    def shown(query, want):
        (r,) = [r for r in wctx.search(product.store, query, repo="upload-sdk")["results"] if r["id"] == want]
        return r["freshness"]["verdict"]

    assert shown("feature plan", eid) == "current"
    sdk.git("pack-refs", "--all")
    assert shown("feature plan", eid) == "current"
    tree.write("feature.txt", "x\n")
    tree.commit("feature work")
    assert shown("feature plan", eid) == "possibly_stale"
    assert shown("main plan", main_item) == "current"
    assert verify_one(run_cli, main_item)[1]["verdict"] == "current"
    sdk.git("pack-refs", "--all")
    sdk.write("main.txt", "y\n")
    sdk.commit("main work")
    sdk.git("pack-refs", "--all")
    assert shown("main plan", main_item) == "possibly_stale"


def test_paths_with_spaces_and_unicode(product, run_cli):
    sdk = product.sdk
    odd = "src/naïve dir/my file é.py"
    sdk.write(odd, "def grüße():\n    return 1\n\n\ndef other():\n    return 2\n")
    sdk.commit("odd names")
    eid = capture(product, [odd + "#grüße"], claim="greeting returns one")
    assert verify_one(run_cli, eid)[1]["verdict"] == "current"
    sdk.write(odd, sdk.read(odd).replace("return 2", "return 3"))
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (0, "current")
    assert item["reasons"][0].startswith("symbol grüße unchanged; other parts of %s changed" % odd)
    res = run_cli(["search", "anything new?", "--json"], cwd=sdk.path)
    assert res.json["results"][0]["id"] == eid
    assert (
        res.json["results"][0]["reasons"][0]
        == "cites %s, which has uncommitted changes in your working tree" % odd
    )
    sdk.commit("other")
    sdk.git("mv", odd, "src/naïve dir/renamed ü.py")
    sdk.commit("rename")
    code, item = verify_one(run_cli, eid)
    assert item["verdict"] == "current"
    assert "followed rename %s -> src/naïve dir/renamed ü.py" % odd in item["reasons"][0]


def test_renamed_then_deleted_in_commits_names_the_deleting_commit(product, run_cli):
    sdk = product.sdk
    eid = capture(product, [CLIENT + "#connect"])
    sdk.git("mv", CLIENT, "src/conn.py")
    sdk.commit("rename the client")
    sdk.git("rm", "-q", "src/conn.py")
    gone = sdk.commit("drop the connection module")
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (1, "stale")
    reason = item["reasons"][0]
    assert "not committed yet" not in reason, reason
    assert gone[:7] in reason and '"drop the connection module"' in reason, reason
    assert "src/conn.py" in reason, reason


def test_file_only_on_another_branch_says_so(product, run_cli):
    sdk = product.sdk
    sdk.git("checkout", "-q", "-b", "feature")
    sdk.write("src/feature.py", "def shiny():\n    return 1\n")
    recorded = sdk.commit("feature work")
    eid = capture(product, ["src/feature.py#shiny"], cwd=sdk.path)
    sdk.git("checkout", "-q", "main")
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (1, "stale")
    reason = item["reasons"][0]
    assert "not committed yet" not in reason, reason
    assert (
        reason
        == "src/feature.py#shiny is not in the checked-out branch main (recorded at %s on feature)"
        % recorded[:7]
    )
    sdk.git("checkout", "-q", "feature")
    assert verify_one(run_cli, eid)[1]["verdict"] == "current"


def test_never_committed_file_deleted(product, run_cli):
    sdk = product.sdk
    sdk.write("scratch.py", "def tmp():\n    return 0\n")
    eid = capture(product, ["scratch.py#tmp"], cwd=sdk.path)
    os.remove(sdk.file("scratch.py"))
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (1, "stale")
    assert item["reasons"][0] == "scratch.py#tmp was deleted (it was never committed)"


def test_a_search_run_without_git_does_not_leave_unknown_verdicts_behind(product, run_wctx, tmp_path):
    """An MCP server started with a PATH that lacks git (or as a user git distrusts) answers
    'unknown' -- and must not cache it for everyone else."""
    eid = capture(product, [CLIENT + "#connect"], claim="connect returns a dict", cwd=product.sdk.path)
    no_git = tmp_path / "no-git"
    no_git.mkdir()
    for argv in (["search", "connect dict", "--json"], ["verify", eid, "--json"]):
        res = run_wctx(argv, cwd=product.sdk.path, env={"PATH": str(no_git)})
        if argv[0] == "search":
            verdict = res.json["results"][0]["freshness"]["verdict"]
        else:
            verdict = res.json["items"][0]["verdict"]
        assert verdict == "unknown", res
        res = run_wctx(["search", "connect dict", "--json"], cwd=product.sdk.path)
        assert res.json["results"][0]["freshness"]["verdict"] == "current", res.json["results"][0][
            "freshness"
        ]


def test_a_python_file_ast_cannot_handle_falls_back_instead_of_crashing(product, run_cli):
    """ast.parse raises MemoryError or RecursionError (not SyntaxError) on absurdly deep
    expressions; capture and verify must still work (the symbol heuristic takes over)."""
    sdk = product.sdk
    deep = "def handler(x):\n    return x\n\n\nVALUE = " + "-" * 100000 + "1\n"
    sdk.write("src/generated.py", deep)
    sdk.commit("generated module")
    res = run_cli(
        [
            "capture",
            "--finding",
            "handler echoes",
            "--repo",
            "upload-sdk",
            "--file",
            "src/generated.py#handler",
            "--json",
        ],
        cwd=sdk.path,
    )
    assert res.code == 0 and "Traceback" not in res.err, res
    eid = res.json["evidence"][0]["id"]
    assert verify_one(run_cli, eid)[1]["verdict"] == "current"
    sdk.write("src/generated.py", deep.replace("return x", "return -x"))
    code, item = verify_one(run_cli, eid)
    assert (code, item["verdict"]) == (1, "stale")


def test_a_one_shot_verify_or_search_asks_git_about_the_items_it_shows_only(product, monkeypatch):
    """Asking git about every path a repository's items cite pays only in a long-lived process
    (the MCP server); a command that checks one item must not do that work for all of them."""
    for i in range(30):
        capture(product, ["src/upload/upload.ts"], claim="unrelated finding number %d" % i)
    eid = capture(product, [CLIENT], claim="the one item asked about")
    asked = []
    real = wctx.GitRepo.batch_check

    def spy(self, specs):
        specs = list(specs)
        asked.extend(specs)
        return real(self, specs)

    monkeypatch.setattr(wctx.GitRepo, "batch_check", spy)
    wctx.GIT_VIEWS.clear()
    assert wctx.verify(product.store, ids=[eid])["items"][0]["verdict"] == "current"
    wctx.GIT_VIEWS.clear()
    hits = wctx.search(product.store, "the one item asked about", cwd=product.ui.path, limit=1)["results"]
    assert [h["id"] for h in hits] == [eid]
    assert asked and not any("upload.ts" in s for s in asked)  # nothing about the other items' file
