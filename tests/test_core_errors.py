"""Errors as a user meets them: bad UTF-8 anywhere on the command line, file names git reports
that are not UTF-8, and plain usage mistakes -- one line on stderr, exit 1 or 2, no traceback,
nothing changed."""

from __future__ import annotations

import os

import pytest
from conftest import db_snapshot

import wctx

BAD = b"\xff\xfe"


def assert_clean_failure(res, codes=(1, 2)):
    assert res.code in codes, res
    assert "Traceback" not in res.err, res
    assert res.err.startswith("wctx: ") and res.err.count("\n") == 1, res


@pytest.mark.parametrize(
    "argv",
    [
        [b"show", BAD],
        [b"show", BAD, b"--json"],
        [b"retract", BAD],
        [b"verify", BAD],
        [b"supersede", BAD, b"--by", BAD],
        [b"sessions", b"show", BAD],
        [b"workspace", b"show", BAD],
        [b"workspace", b"remove", BAD, b"upload-sdk"],
        [b"repo", b"remove", BAD],
        [b"repo", b"add", BAD],
        [b"relate", BAD, b"uses", b"upload-sdk"],
        [b"search", b"x", b"--repo", BAD],
        [b"capture", b"--note", BAD],
        [b"capture", b"--note", b"x", b"--repo", BAD],
        [b"capture", b"--note", b"x", b"--file", BAD],
        [b"capture", b"--note", b"x", b"--file", b"src/client.py#" + BAD],
        [b"capture", b"--note", b"x", b"--session", BAD],
        [b"capture", b"--note", b"x", b"--summary", BAD],
        [b"capture", b"--note", b"x", b"--agent", BAD],
        [b"capture", b"--note", b"x", b"--confidence", BAD],
    ],
    ids=lambda argv: b" ".join(argv).decode("ascii", "replace"),
)
def test_bad_utf8_arguments_fail_cleanly_and_change_nothing(product, run_wctx, argv):
    before = db_snapshot(product.store.home)
    res = run_wctx(argv, cwd=product.sdk.path)
    assert_clean_failure(res)
    assert db_snapshot(product.store.home) == before


def test_vague_search_with_a_non_utf8_file_name_in_the_working_tree(product, run_cli, run_wctx):
    sdk = product.sdk
    eid = wctx.capture(
        product.store,
        [{"kind": "finding", "claim": "connect", "repo": "upload-sdk", "files": ["src/client.py"]}],
        cwd=sdk.path,
    )["evidence"][0]["id"]
    with open(os.path.join(os.fsencode(sdk.path), b"caf\xe9.txt"), "wb") as fh:
        fh.write(b"latin-1 name\n")
    sdk.write("src/client.py", sdk.read("src/client.py") + "# edited\n")
    res = run_cli(["search", "has anyone looked at this?", "--json"], cwd=sdk.path)
    assert res.code == 0, res
    assert [r["id"] for r in res.json["results"]] == [eid]
    assert (
        res.json["results"][0]["reasons"][0]
        == "cites src/client.py, which has uncommitted changes in your working tree"
    )
    sub = run_wctx(["search"], cwd=sdk.path)
    assert sub.code == 0 and sub.err == "", sub


def test_repo_whose_path_is_not_utf8_is_refused_cleanly(git_repo, run_wctx, tmp_path, wctx_home):
    parent = os.path.join(os.fsencode(str(tmp_path)), b"bad-\xff")
    os.makedirs(parent)
    repo = git_repo("r", {"a.py": "x = 1\n"}, parent=os.fsdecode(parent))
    res = run_wctx(["repo", "add", repo.path])
    assert_clean_failure(res, codes=(2,))
    assert "UTF-8" in res.err
    assert run_wctx(["repo", "list", "--json"]).json == {"repos": []}


def test_capture_from_a_non_utf8_working_directory(product, run_wctx, tmp_path):
    odd = os.path.join(os.fsencode(str(tmp_path)), b"cwd-\xfe")
    os.makedirs(odd)
    res = run_wctx(
        ["capture", "--note", "from an odd place", "--repo", "upload-sdk", "--json"], cwd=os.fsdecode(odd)
    )
    assert res.code == 0, res
    eid = res.json["evidence"][0]["id"]
    assert wctx.get_evidence(product.store, eid)["repo"] == "upload-sdk"


@pytest.mark.parametrize(
    "argv,code,fragment",
    [
        ([], 2, None),
        (["frobnicate"], 2, "invalid choice"),
        (["capture", "--confidence"], 2, "expected one argument"),
        (["search", "--limit", "ten"], 2, "invalid int value"),
        (["repo"], 2, "required"),
        (["show"], 2, "required"),
    ],
)
def test_usage_errors_exit_2(wctx_home, run_cli, argv, code, fragment):
    res = run_cli(argv)
    assert res.code == code, res
    assert "Traceback" not in res.err
    if fragment:
        assert fragment in res.err and res.err.startswith("wctx: ") and res.err.count("\n") == 1


def test_version(run_cli, run_wctx):
    res = run_wctx(["--version"])
    assert res.code == 0 and res.out.strip() == "wctx " + wctx.__version__


def test_demo_runs_the_whole_loop_without_touching_the_store(run_wctx, wctx_home, tmp_path):
    res = run_wctx(["demo"], cwd=str(tmp_path))
    assert res.code == 0, res
    out = res.out
    assert "stamped with upload-sdk's commit, not docs-ui's" in out
    assert "docs-ui uses upload-sdk" in out
    verdicts = [
        line.split()[1]
        for line in out.splitlines()
        if line.strip().startswith("ev-") and len(line.split()) == 2
    ]
    assert verdicts == ["current", "stale"], out
    assert "symbol uploadDocument unchanged; other parts of src/upload/upload.ts changed" in out
    assert not os.path.exists(os.path.join(wctx_home, "wctx.db"))
    kept = tmp_path / "kept-demo"
    res = run_wctx(["demo", "--keep", str(kept)], cwd=str(tmp_path))
    assert res.code == 0 and (kept / "upload-sdk" / ".git").is_dir()
    # A second run into the same directory says why it cannot, instead of a failed git commit.
    again = run_wctx(["demo", "--keep", str(kept)], cwd=str(tmp_path))
    assert again.code == 2 and again.err.count("\n") == 1 and "not empty" in again.err


def test_without_git_on_path(product, run_wctx, tmp_path):
    eid = wctx.capture(
        product.store,
        [
            {
                "kind": "finding",
                "claim": "connect dict",
                "repo": "upload-sdk",
                "files": ["src/client.py#connect"],
            }
        ],
        cwd=product.sdk.path,
    )["evidence"][0]["id"]
    empty_bin = tmp_path / "no-git-here"
    empty_bin.mkdir()
    env = {"PATH": str(empty_bin)}
    res = run_wctx(["repo", "add", product.other.path, "--name", "again"], cwd=product.sdk.path, env=env)
    assert_clean_failure(res, codes=(1,))
    assert "git is not installed or not on PATH" in res.err
    res = run_wctx(["capture", "--note", "x", "--repo", "upload-sdk"], cwd=product.sdk.path, env=env)
    assert_clean_failure(res)
    assert "git" in res.err
    res = run_wctx(["verify", eid, "--json"], env=env)
    assert res.code == 1 and "Traceback" not in res.err, res
    (item,) = res.json["items"]
    assert item["verdict"] == "unknown" and "git is not installed" in item["reasons"][0]
    res = run_wctx(["search", "connect", "--json"], cwd=product.sdk.path, env=env)
    assert res.code == 0 and "Traceback" not in res.err, res
    assert [r["id"] for r in res.json["results"]] == [eid]
    res = run_wctx(["search", "has anyone looked at this?", "--json"], cwd=product.sdk.path, env=env)
    assert res.code == 0 and "Traceback" not in res.err, res
