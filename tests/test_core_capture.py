"""Capture: per-repository provenance, the CLI's item flags, file specs, sessions, atomicity and
input validation, as a user sees them (exit codes, one-line errors, JSON)."""

from __future__ import annotations

import os

import pytest
from conftest import db_snapshot

import wctx

SEED_SUMMARY = "traced the upload failure into the SDK"
SEED_FINDING = "SDK swallows the 419 :: returns it terminal, no retry"
SEED_FILE = "src/upload/upload.ts#uploadDocument"


def anchors_of(store, eid):
    return wctx.get_evidence(store, eid)["anchors"]


def one_line_error(res, code):
    """The CLI failed with ``code``, one line on stderr, nothing on stdout, no traceback."""
    assert res.code == code, res
    assert res.err.startswith("wctx: "), res
    assert res.err.count("\n") == 1 and res.err.endswith("\n"), res
    assert "Traceback" not in res.err
    assert res.out == ""


# ----------------------------------------------------------------------------------------------
# Per-repository provenance
# ----------------------------------------------------------------------------------------------


def test_cross_repo_finding_carries_the_sdk_commit_not_the_ui_commit(product, run_cli):
    sdk, ui = product.sdk, product.ui
    # Move the SDK on so the two repos' HEADs differ and the SDK's HEAD is not its first commit.
    sdk.write("NOTES.md", "notes\n")
    sdk_head = sdk.commit("notes")
    ui_head = ui.head
    assert sdk_head != ui_head

    res = run_cli(
        [
            "capture",
            "--summary",
            SEED_SUMMARY,
            "--finding",
            SEED_FINDING,
            "--repo",
            "upload-sdk",
            "--file",
            SEED_FILE,
            "--json",
        ],
        cwd=ui.path,
    )
    assert res.code == 0, res
    out = res.json
    assert set(out) >= {"session", "evidence"}
    assert out["session"].startswith("ses-")
    assert len(out["evidence"]) == 1
    ev = out["evidence"][0]
    assert set(ev) >= {"id", "kind", "repo"}
    assert ev["id"].startswith("ev-") and ev["kind"] == "finding" and ev["repo"] == "upload-sdk"

    item = wctx.get_evidence(product.store, ev["id"])
    assert item["repo"] == "upload-sdk"
    assert item["claim"] == "SDK swallows the 419"
    assert item["detail"] == "returns it terminal, no retry"
    commits = {a["commit"] for a in item["anchors"]}
    assert commits == {sdk_head}, "every anchor of an SDK finding carries the SDK's HEAD"
    assert ui_head not in commits
    assert {a["repo"] for a in item["anchors"]} == {"upload-sdk"}
    cited = [a for a in item["anchors"] if a["path"]]
    assert [(a["path"], a["symbol"]) for a in cited] == [("src/upload/upload.ts", "uploadDocument")]
    assert cited[0]["blob"] == sdk.blob("src/upload/upload.ts")
    assert cited[0]["dirty"] is False
    assert cited[0]["symbol_hash"]
    assert cited[0]["root_commit"] == sdk.git("rev-list", "--max-parents=0", "HEAD").strip()
    # The session itself ran in the UI, and says so.
    session = wctx.get_session(product.store, out["session"])["session"]
    assert session["repo"] == "docs-ui" and session["commit"] == ui_head
    assert session["summary"] == SEED_SUMMARY


def test_the_seed_capture_command_works_verbatim(git_repo, store, run_cli):
    sdk = git_repo(
        "my-sdk", {"src/upload/upload.ts": "export async function uploadDocument(f) {\n  return f;\n}\n"}
    )
    ui = git_repo("my-ui", {"index.ts": "import './x';\n"})
    wctx.register_repo(store, sdk.path, workspace="w")
    wctx.register_repo(store, ui.path, workspace="w")
    argv = [
        "capture",
        "--summary",
        "traced the upload failure into the SDK",
        "--finding",
        "SDK swallows the 419 :: returns it terminal, no retry",
        "--repo",
        "my-sdk",
        "--file",
        "src/upload/upload.ts#uploadDocument",
    ]
    res = run_cli(argv, cwd=ui.path)
    assert res.code == 0, res
    assert res.err == ""
    lines = res.out.splitlines()
    assert lines[0].startswith("session ses-")
    assert len(lines) == 2 and lines[1].startswith("ev-") and lines[1].endswith(" finding my-sdk")
    eid = lines[1].split()[0]
    item = wctx.get_evidence(store, eid)
    assert item["files"] == ["src/upload/upload.ts#uploadDocument"]
    assert {a["commit"] for a in item["anchors"]} == {sdk.head}


def test_the_seed_capture_command_through_a_subprocess(product, run_wctx):
    res = run_wctx(
        [
            "capture",
            "--summary",
            SEED_SUMMARY,
            "--finding",
            SEED_FINDING,
            "--repo",
            "upload-sdk",
            "--file",
            SEED_FILE,
            "--json",
        ],
        cwd=product.ui.path,
    )
    assert res.code == 0, res
    eid = res.json["evidence"][0]["id"]
    assert {a["commit"] for a in anchors_of(product.store, eid)} == {product.sdk.head}


def test_several_items_each_with_their_own_repo_files_and_confidence(product, run_cli):
    res = run_cli(
        [
            "capture",
            "--finding",
            "SDK swallows the 419",
            "--repo",
            "upload-sdk",
            "--file",
            "src/upload/upload.ts#uploadDocument",
            "--confidence",
            "0.9",
            "--decision",
            "the button shows a retry hint",
            "--repo",
            "docs-ui",
            "--file",
            "src/UploadButton.tsx#UploadButton",
            "--confidence",
            "0.4",
            "--note",
            "gateway answers 419 on expiry",
            "--json",
        ],  # fmt: skip
        cwd=product.gateway.path,
    )
    assert res.code == 0, res
    ev = res.json["evidence"]
    assert [(e["kind"], e["repo"]) for e in ev] == [
        ("finding", "upload-sdk"),
        ("decision", "docs-ui"),
        ("note", "api-gateway"),  # no --repo: the repo of the cwd
    ]
    first, second, third = (wctx.get_evidence(product.store, e["id"]) for e in ev)
    assert first["confidence"] == 0.9 and first["files"] == ["src/upload/upload.ts#uploadDocument"]
    assert second["confidence"] == 0.4 and second["files"] == ["src/UploadButton.tsx#UploadButton"]
    assert third["confidence"] is None and third["files"] == []
    assert {a["commit"] for a in first["anchors"]} == {product.sdk.head}
    assert {a["commit"] for a in second["anchors"]} == {product.ui.head}
    assert {a["commit"] for a in third["anchors"]} == {product.gateway.head}


def test_flags_before_the_first_item_are_defaults_for_every_item(product, run_cli):
    res = run_cli(
        [
            "capture",
            "--repo",
            "upload-sdk",
            "--file",
            "src/client.py#connect",
            "--confidence",
            "0.7",
            "--finding",
            "connect takes a url",
            "--finding",
            "retry policy caps at three",
            "--file",
            "src/client.py#retry_policy",
            "--confidence",
            "0.2",
            "--json",
        ],  # fmt: skip
        cwd=product.ui.path,
    )
    assert res.code == 0, res
    a, b = (wctx.get_evidence(product.store, e["id"]) for e in res.json["evidence"])
    assert a["repo"] == b["repo"] == "upload-sdk"
    assert a["confidence"] == 0.7
    assert b["confidence"] == 0.2
    assert a["files"] == ["src/client.py#connect"]
    assert b["files"] == ["src/client.py#connect", "src/client.py#retry_policy"]


def test_repo_name_prefix_cites_a_file_of_another_repo(product, run_cli):
    res = run_cli(
        [
            "capture",
            "--finding",
            "the UI calls connect",
            "--file",
            "upload-sdk:src/client.py#connect",
            "--json",
        ],
        cwd=product.ui.path,
    )
    assert res.code == 0, res
    item = wctx.get_evidence(product.store, res.json["evidence"][0]["id"])
    assert item["repo"] == "docs-ui"
    assert item["files"] == ["upload-sdk:src/client.py#connect"]
    by_repo = {}
    for a in item["anchors"]:
        by_repo.setdefault(a["repo"], set()).add(a["commit"])
    # Each repository the item touches is stamped with its own HEAD.
    assert by_repo == {"docs-ui": {product.ui.head}, "upload-sdk": {product.sdk.head}}
    cited = [a for a in item["anchors"] if a["path"]]
    assert cited[0]["repo"] == "upload-sdk" and cited[0]["blob"] == product.sdk.blob("src/client.py")


def test_absolute_path_cites_a_file_of_another_repo(product, run_cli):
    absolute = product.sdk.file("src/client.py")
    res = run_cli(
        ["capture", "--question", "does connect retry?", "--file", absolute + "#connect", "--json"],
        cwd=product.ui.path,
    )
    assert res.code == 0, res
    item = wctx.get_evidence(product.store, res.json["evidence"][0]["id"])
    cited = [a for a in item["anchors"] if a["path"]]
    assert [(a["repo"], a["path"], a["symbol"], a["commit"]) for a in cited] == [
        ("upload-sdk", "src/client.py", "connect", product.sdk.head)
    ]


def test_relative_path_from_a_subdirectory_of_the_repo(product, run_cli):
    res = run_cli(
        ["capture", "--finding", "connect builds a dict", "--file", "client.py#connect", "--json"],
        cwd=product.sdk.file("src"),
    )
    assert res.code == 0, res
    item = wctx.get_evidence(product.store, res.json["evidence"][0]["id"])
    assert item["repo"] == "upload-sdk" and item["files"] == ["src/client.py#connect"]


def test_relative_path_from_the_cwd_into_another_registered_repo_belongs_to_that_repo(product, run_cli):
    res = run_cli(
        [
            "capture",
            "--finding",
            "the button calls the SDK",
            "--file",
            "../docs-ui/src/UploadButton.tsx",
            "--json",
        ],
        cwd=product.sdk.path,
    )
    assert res.code == 0, res
    item = wctx.get_evidence(product.store, res.json["evidence"][0]["id"])
    assert item["repo"] == "upload-sdk"
    assert item["files"] == ["docs-ui:src/UploadButton.tsx"]
    cited = [a for a in item["anchors"] if a["path"]]
    assert [(a["repo"], a["commit"]) for a in cited] == [("docs-ui", product.ui.head)]


def test_dirty_file_is_recorded_with_its_on_disk_blob(product, run_cli):
    product.sdk.write("src/client.py", product.sdk.read("src/client.py") + "\n# local edit\n")
    res = run_cli(
        [
            "capture",
            "--finding",
            "edited locally",
            "--repo",
            "upload-sdk",
            "--file",
            "src/client.py",
            "--json",
        ]
    )
    assert res.code == 0, res
    cited = [a for a in anchors_of(product.store, res.json["evidence"][0]["id"]) if a["path"]]
    assert cited[0]["dirty"] is True
    assert cited[0]["blob"] == product.sdk.blob("src/client.py")


def test_unlocatable_symbol_is_accepted_with_a_warning(product, run_cli):
    res = run_cli(
        [
            "capture",
            "--finding",
            "x marks the spot",
            "--repo",
            "upload-sdk",
            "--file",
            "src/client.py#nowhere",
            "--allow-missing-symbol",
        ]
    )
    assert res.code == 0, res
    assert "warning: symbol nowhere was not found in upload-sdk:src/client.py" in res.err


def test_session_flag_appends_to_an_existing_session(product, run_cli):
    first = run_cli(
        ["capture", "--summary", "first pass", "--finding", "one", "--repo", "upload-sdk", "--json"],
        cwd=product.ui.path,
    )
    assert first.code == 0, first
    sid = first.json["session"]
    second = run_cli(
        [
            "capture",
            "--session",
            sid[:8],
            "--summary",
            "second pass",
            "--finding",
            "two",
            "--repo",
            "upload-sdk",
            "--json",
        ],
        cwd=product.ui.path,
    )
    assert second.code == 0, second
    assert second.json["session"] == sid
    session = wctx.get_session(product.store, sid)
    assert [e["claim"] for e in session["evidence"]] == ["one", "two"]
    assert "first pass" in session["session"]["summary"] and "second pass" in session["session"]["summary"]
    assert len(wctx.list_sessions(product.store)) == 1
    # Repeating an item in the same session does not duplicate it.
    again = run_cli(
        ["capture", "--session", sid, "--finding", "two", "--repo", "upload-sdk", "--json"],
        cwd=product.ui.path,
    )
    assert again.code == 0 and again.json["evidence"][0]["duplicate"] is True
    assert len(wctx.get_session(product.store, sid)["evidence"]) == 2


def test_unknown_session_is_refused(product, run_cli):
    before = db_snapshot(product.store.home)
    res = run_cli(["capture", "--session", "ses-nope", "--finding", "x", "--repo", "upload-sdk"])
    one_line_error(res, 1)
    assert "no session with id ses-nope" in res.err
    assert db_snapshot(product.store.home) == before


# ----------------------------------------------------------------------------------------------
# Atomicity
# ----------------------------------------------------------------------------------------------


def _assert_nothing_stored(store):
    for table in ("sessions", "evidence", "anchors", "evidence_fts"):
        assert store.one("SELECT count(*) AS n FROM %s" % table)["n"] == 0, table


def _items(n):
    return [
        {
            "kind": "finding",
            "claim": "atomic item %d" % i,
            "repo": "upload-sdk",
            "files": ["src/client.py#connect"],
        }
        for i in range(n)
    ]


@pytest.mark.parametrize("target", ["new_id", "_fts_symbols"])
def test_failure_mid_capture_leaves_no_session_evidence_or_index_row(product, monkeypatch, target):
    real = getattr(wctx, target)
    calls = []

    def failing(*args, **kwargs):
        if target != "new_id" or args[0] == "ev":
            calls.append(args)
            if len(calls) == 2:
                raise RuntimeError("disk on fire")
        return real(*args, **kwargs)

    monkeypatch.setattr(wctx, target, failing)
    with pytest.raises(RuntimeError, match="disk on fire"):
        wctx.capture(product.store, _items(3), summary="half a capture", cwd=product.ui.path)
    assert len(calls) == 2
    _assert_nothing_stored(product.store)
    monkeypatch.undo()
    # The store is still usable, and the FTS index holds nothing from the failed capture.
    res = wctx.capture(product.store, _items(1), cwd=product.ui.path)
    assert len(res["evidence"]) == 1
    hits = wctx.search(product.store, "atomic", repo="upload-sdk")["results"]
    assert [h["claim"] for h in hits] == ["atomic item 0"]


def test_failure_mid_capture_into_an_existing_session_leaves_it_as_it_was(product, monkeypatch):
    first = wctx.capture(product.store, _items(1), summary="before", cwd=product.ui.path)
    before = db_snapshot(product.store.home)
    real = wctx.new_id
    calls = []

    def failing(prefix):
        calls.append(prefix)
        if len(calls) == 2:
            raise RuntimeError("disk on fire")
        return real(prefix)

    monkeypatch.setattr(wctx, "new_id", failing)
    more = [dict(i, claim="more %d" % n) for n, i in enumerate(_items(3))]
    with pytest.raises(RuntimeError):
        wctx.capture(product.store, more, summary="after", session_id=first["session"], cwd=product.ui.path)
    assert db_snapshot(product.store.home) == before


# ----------------------------------------------------------------------------------------------
# Validation: clear one-line errors, nothing changed
# ----------------------------------------------------------------------------------------------


@pytest.fixture
def outside_file(tmp_path):
    path = tmp_path / "outside" / "secret.txt"
    path.parent.mkdir()
    path.write_text("not in any repo\n")
    return str(path)


BAD_CAPTURES = [
    # (extra argv, exit code, message fragment)
    (["--finding", "x", "--repo", "no-such-repo"], 1, "unknown repository 'no-such-repo'"),
    (["--finding", "x", "--repo", "upload-sdk", "--confidence", "1.5"], 2, "outside 0..1"),
    (["--finding", "x", "--repo", "upload-sdk", "--confidence", "-0.1"], 2, "outside 0..1"),
    (["--finding", "x", "--repo", "upload-sdk", "--confidence", "abc"], 2, "not a number from 0 to 1"),
    (["--finding", "x", "--repo", "upload-sdk", "--confidence", "NaN"], 2, "outside 0..1"),
    (["--finding", "x", "--repo", "upload-sdk", "--confidence", "inf"], 2, "outside 0..1"),
    (
        ["--finding", "x", "--repo", "upload-sdk", "--file", "src/missing.py"],
        2,
        "src/missing.py does not exist in upload-sdk",
    ),
    (
        ["--finding", "x", "--repo", "upload-sdk", "--file", "../../outside/secret.txt"],
        2,
        "is outside repository",
    ),
    (
        ["--finding", "x", "--repo", "upload-sdk", "--file", "src/../../../outside/secret.txt"],
        2,
        "is outside repository",
    ),
    (["--finding", "x", "--repo", "upload-sdk", "--file", "../../nowhere.txt"], 2, "is outside repository"),
    (["--finding", "x", "--repo", "upload-sdk", "--file", ".git/config"], 2, "inside the .git directory"),
    (
        ["--finding", "x", "--repo", "upload-sdk", "--file", "src/../.git/HEAD"],
        2,
        "inside the .git directory",
    ),
    (
        ["--finding", "x", "--repo", "upload-sdk", "--file", "no-such-repo:src/x.py"],
        1,
        "unknown repository 'no-such-repo'",
    ),
    (["--finding", "x", "--repo", "upload-sdk", "--file", "#connect"], 2, "names a symbol but no path"),
    (["--finding", "  ", "--repo", "upload-sdk"], 2, "claim is empty"),
    (["--finding", ":: only a detail", "--repo", "upload-sdk"], 2, "claim is empty"),
    (["--summary", "nothing else"], 2, "nothing to capture"),
    (
        ["--finding", "x" * (wctx.MAX_CLAIM_CHARS + 1), "--repo", "upload-sdk"],
        2,
        "the limit is %d" % wctx.MAX_CLAIM_CHARS,
    ),
]


@pytest.mark.parametrize("extra,code,message", BAD_CAPTURES, ids=[" ".join(b[0])[:60] for b in BAD_CAPTURES])
def test_bad_capture_is_refused_with_one_line_and_changes_nothing(
    product, run_cli, outside_file, extra, code, message
):
    assert outside_file.endswith(os.path.join("outside", "secret.txt"))
    before = db_snapshot(product.store.home)
    res = run_cli(["capture", *extra], cwd=product.sdk.path)
    one_line_error(res, code)
    assert message in res.err
    assert db_snapshot(product.store.home) == before


def test_a_bad_second_item_refuses_the_whole_capture(product, run_cli):
    before = db_snapshot(product.store.home)
    res = run_cli(
        [
            "capture",
            "--finding",
            "fine",
            "--repo",
            "upload-sdk",
            "--finding",
            "broken",
            "--repo",
            "upload-sdk",
            "--file",
            "nope.ts",
        ],
        cwd=product.ui.path,
    )
    one_line_error(res, 2)
    assert db_snapshot(product.store.home) == before


def test_absolute_path_outside_every_repo_is_refused(product, run_cli, outside_file):
    before = db_snapshot(product.store.home)
    res = run_cli(["capture", "--finding", "x", "--repo", "upload-sdk", "--file", outside_file])
    one_line_error(res, 2)
    assert "is not inside any registered repository" in res.err
    assert db_snapshot(product.store.home) == before


def test_symlink_escaping_the_repo_is_refused(product, run_cli, outside_file):
    sdk = product.sdk
    os.symlink(outside_file, sdk.file("src/leak.txt"))
    os.symlink(os.path.dirname(outside_file), sdk.file("linked-dir"))
    os.symlink(product.ui.path, sdk.file("ui-alias"))
    before = db_snapshot(product.store.home)
    for spec in ("src/leak.txt", "linked-dir/secret.txt", "ui-alias/src/UploadButton.tsx"):
        res = run_cli(["capture", "--finding", "x", "--repo", "upload-sdk", "--file", spec], cwd=sdk.path)
        one_line_error(res, 2)
        assert "leads outside repository" in res.err and "symlink" in res.err, res
    assert db_snapshot(product.store.home) == before


def test_symlink_inside_the_repo_is_allowed(product, run_cli):
    sdk = product.sdk
    os.symlink("client.py", sdk.file("src/client-alias.py"))
    res = run_cli(
        ["capture", "--finding", "x", "--repo", "upload-sdk", "--file", "src/client-alias.py", "--json"],
        cwd=sdk.path,
    )
    assert res.code == 0, res


def test_capture_outside_any_registered_repo_without_repo_is_refused(product, run_cli, tmp_path):
    before = db_snapshot(product.store.home)
    res = run_cli(["capture", "--finding", "x"], cwd=str(tmp_path))
    one_line_error(res, 2)
    assert "not inside a registered repository" in res.err and "--repo" in res.err
    assert db_snapshot(product.store.home) == before


@pytest.mark.parametrize(
    "item,message",
    [
        ({"kind": "rumour", "claim": "x", "repo": "upload-sdk"}, "unknown kind 'rumour'"),
        ({"kind": "finding", "claim": "x", "repo": "upload-sdk", "confidence": float("nan")}, "outside 0..1"),
        ({"kind": "finding", "claim": "x", "repo": "upload-sdk", "confidence": True}, "number from 0 to 1"),
        ({"kind": "finding", "claim": "x\x00y", "repo": "upload-sdk"}, "NUL"),
        ({"kind": "finding", "claim": "bad \udcff utf-8", "repo": "upload-sdk"}, "not valid UTF-8"),
        ({"kind": "finding", "claim": "x", "repo": "upload-sdk", "files": [7]}, "files must be strings"),
        ({"kind": "finding", "claim": "x", "repo": "upload-sdk", "extra": 1}, "unknown field"),
        ({"kind": "finding", "claim": None, "repo": "upload-sdk"}, "claim is required"),
    ],
)
def test_service_capture_refuses_bad_items_with_usage_errors(product, item, message):
    before = db_snapshot(product.store.home)
    with pytest.raises(wctx.UsageError, match=message) as info:
        wctx.capture(product.store, [item], cwd=product.ui.path)
    assert info.value.exit_code == 2
    assert db_snapshot(product.store.home) == before


# ----------------------------------------------------------------------------------------------
# kill -9 in the middle of a capture, and a git environment that points elsewhere
# ----------------------------------------------------------------------------------------------

KILL_MID_CAPTURE = """
import os, signal, sys
sys.path.insert(0, %(root)r)
import wctx
calls = []
real = wctx._fts_symbols
def dying(anchors):
    calls.append(1)
    if len(calls) == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(anchors)
wctx._fts_symbols = dying
sys.exit(wctx.main(sys.argv[1:]))
"""


def test_kill_9_mid_capture_leaves_nothing(product):
    import signal
    import subprocess
    import sys

    from conftest import ROOT

    argv = [
        "capture", "--summary", "killed", "--finding", "first", "--repo", "upload-sdk",
        "--file", "src/client.py#connect", "--finding", "second", "--repo", "upload-sdk", "--finding", "third",
    ]  # fmt: skip
    before = db_snapshot(product.store.home)
    proc = subprocess.run(
        [sys.executable, "-c", KILL_MID_CAPTURE % {"root": ROOT}, *argv],
        cwd=product.ui.path,
        env=dict(os.environ, WCTX_HOME=product.store.home),
        capture_output=True,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    assert db_snapshot(product.store.home) == before
    # The store is fine afterwards.
    res = wctx.capture(product.store, _items(1), cwd=product.ui.path)
    assert len(res["evidence"]) == 1


def test_git_environment_variables_do_not_redirect_provenance(product, run_wctx):
    ui_git = os.path.join(product.ui.path, ".git")
    res = run_wctx(
        ["capture", "--finding", "env", "--repo", "upload-sdk", "--file", "src/client.py#connect", "--json"],
        cwd=product.ui.path,
        env={
            "GIT_DIR": ui_git,
            "GIT_WORK_TREE": product.ui.path,
            "GIT_INDEX_FILE": os.path.join(ui_git, "index"),
            "GIT_CONFIG_PARAMETERS": "'core.fsmonitor'='false'",
        },
    )
    assert res.code == 0, res
    anchors = wctx.get_evidence(product.store, res.json["evidence"][0]["id"])["anchors"]
    assert {a["commit"] for a in anchors} == {product.sdk.head}
    cited = [a for a in anchors if a["path"]]
    assert cited[0]["blob"] == product.sdk.blob("src/client.py") and cited[0]["dirty"] is False


def test_paths_into_a_nested_git_directory_are_refused(product, run_cli):
    sdk = product.sdk
    nested = sdk.file("vendor/lib")
    os.makedirs(nested)
    from conftest import git

    git(nested, "init", "-q")
    with open(os.path.join(nested, "lib.py"), "w") as fh:
        fh.write("def f():\n    return 1\n")
    before = db_snapshot(product.store.home)
    for spec in ("vendor/lib/.git/config", "vendor/lib/.git/HEAD"):
        res = run_cli(["capture", "--note", "x", "--file", spec], cwd=sdk.path)
        one_line_error(res, 2)
        assert "inside the .git directory" in res.err
    assert db_snapshot(product.store.home) == before


def test_a_directory_is_not_a_file(product, run_cli):
    before = db_snapshot(product.store.home)
    res = run_cli(["capture", "--note", "x", "--file", "src"], cwd=product.sdk.path)
    one_line_error(res, 2)
    assert "src is a directory" in res.err
    assert db_snapshot(product.store.home) == before


def test_the_readme_capture_example_works(git_repo, store, run_cli):
    sdk = git_repo(
        "my-sdk", {"src/upload/upload.ts": "export async function uploadDocument(f) {\n  return f;\n}\n"}
    )
    ui = git_repo("docs-ui", {"index.ts": "import './x';\n"})
    wctx.register_repo(store, sdk.path, workspace="w")
    wctx.register_repo(store, ui.path, workspace="w")
    res = run_cli(
        [
            "capture",
            "--summary",
            "traced the upload failure into the SDK",
            "--finding",
            "SDK swallows the 419 :: returns it terminal, no retry",
            "--repo",
            "my-sdk",
            "--file",
            "src/upload/upload.ts#uploadDocument",
            "--confidence",
            "0.8",
            "--dead-end",
            "retrying in the UI does not help",
            "--repo",
            "docs-ui",
            "--json",
        ],  # fmt: skip
        cwd=ui.path,
    )
    assert res.code == 0, res
    assert set(res.json) >= {"session", "evidence", "warnings"}
    finding, dead_end = (wctx.get_evidence(store, e["id"]) for e in res.json["evidence"])
    assert (finding["kind"], finding["repo"], finding["confidence"]) == ("finding", "my-sdk", 0.8)
    assert (dead_end["kind"], dead_end["repo"], dead_end["confidence"], dead_end["files"]) == (
        "dead_end",
        "docs-ui",
        None,
        [],
    )
    assert {a["commit"] for a in finding["anchors"]} == {sdk.head}
    assert {a["commit"] for a in dead_end["anchors"]} == {ui.head}
