"""A checkout git refuses for its owner gets one message everywhere: git's ownership check named,
with the safe.directory command, from verify as from capture and repo add."""

from __future__ import annotations

import os
import subprocess

import pytest

import wctx


def test_verify_and_capture_name_gits_ownership_check_alike(git_repo, store, run_cli, tmp_path, monkeypatch):
    if os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            pytest.fail("this test needs root to give a checkout to another user (chown)")
        pytest.skip("needs root to chown a checkout to another user")
    repo = git_repo("ledger", {"ledger/book.py": "def post(entry):\n    return entry\n"})
    wctx.register_repo(store, repo.path, workspace="accounts")
    eid = wctx.capture(
        store,
        [{"kind": "finding", "claim": "post accepts negative entries", "repo": "ledger",
          "files": ["ledger/book.py#post"]}],
        cwd=repo.path,
    )["evidence"][0]["id"]  # fmt: skip
    empty = tmp_path / "gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    subprocess.run(["chown", "-R", "43210:43210", repo.path], check=True)
    real = os.path.realpath(repo.path)
    fix = "git config --global --add safe.directory %s" % real

    verified = run_cli(["verify", eid, "--json"], cwd=str(tmp_path))
    (item,) = verified.json["items"]
    assert item["verdict"] == "unknown"
    reason = " ".join(item["reasons"])
    assert "no longer a git repository" not in reason
    assert "owned by another user" in reason and fix in reason, reason

    captured = run_cli(
        ["capture", "--note", "books close monthly", "--repo", "ledger", "--file", "ledger/book.py"],
        cwd=str(tmp_path),
    )
    assert captured.code != 0 and "owned by another user" in captured.err and fix in captured.err, captured
