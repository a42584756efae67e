"""A store file that is truncated or is not a database at all is called damaged, by doctor and by
every command, with what to do; never "check its permissions"."""

from __future__ import annotations

import os

import pytest

import wctx


def _truncated(home):
    path = os.path.join(home, "wctx.db")
    size = os.path.getsize(path)
    with open(path, "r+b") as fh:
        fh.truncate(size // 3)


def _garbage(home):
    with open(os.path.join(home, "wctx.db"), "wb") as fh:
        fh.write(b"PK\x03\x04 this was a zip archive once" * 40)


@pytest.mark.parametrize("damage", [_truncated, _garbage], ids=["truncated", "not-a-database"])
def test_doctor_and_commands_call_a_damaged_store_damaged(damage, git_repo, store, wctx_home, run_cli):
    repo = git_repo("atlas", {"map.py": "def route():\n    return 1\n"})
    wctx.register_repo(store, repo.path)
    wctx.capture(store, [{"kind": "note", "claim": "route ignores tolls " * 200, "repo": "atlas"}])
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    for suffix in ("-wal", "-shm"):
        if os.path.exists(os.path.join(wctx_home, "wctx.db" + suffix)):
            os.unlink(os.path.join(wctx_home, "wctx.db" + suffix))
    damage(wctx_home)
    before = open(os.path.join(wctx_home, "wctx.db"), "rb").read()

    report = run_cli(["doctor", "--json"], cwd=repo.path)
    assert report.code == 1
    check = next(c for c in report.json["checks"] if c["name"] == "store")
    assert check["status"] == "fail" and "damaged" in check["detail"], check
    assert "permission" not in check["fix"] and "move it aside" in check["fix"], check

    r = run_cli(["search", "route"], cwd=repo.path)
    assert r.code == 1 and "damaged" in r.err and "move it aside" in r.err and "Traceback" not in r.err, r
    assert open(os.path.join(wctx_home, "wctx.db"), "rb").read() == before
