"""Opening the store: a command that only reads, pointed at a store that does not exist (a
mistyped WCTX_HOME or --home), says so and creates nothing; a read-only store serves every read,
the briefing included."""

from __future__ import annotations

import pytest

import wctx

READ_COMMANDS = [
    ["search", "connection pool"],
    ["verify"],
    ["sessions"],
    ["brief"],
    ["show", "ev-0123456789"],
    ["repo", "list"],
    ["workspace", "list"],
    ["relations"],
    ["export"],
    ["report", "--output", "page.html"],
]


@pytest.mark.parametrize("argv", READ_COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_a_read_command_on_a_missing_store_says_so_and_creates_nothing(run_wctx, tmp_path, argv):
    typo = tmp_path / "wctx-hmoe"
    r = run_wctx(argv, cwd=tmp_path, env={"WCTX_HOME": str(typo)})
    assert r.code == 1, r
    assert "no wctx store at %s" % (typo / "wctx.db") in r.err and "WCTX_HOME" in r.err
    assert "not inside a registered repository" not in r.err
    assert not typo.exists()
    assert not (tmp_path / "page.html").exists()


def test_home_given_on_the_command_line_is_named_as_such(run_wctx, tmp_path):
    r = run_wctx(["--home", tmp_path / "nowhere", "search", "pool"], cwd=tmp_path)
    assert r.code == 1 and "(from --home;" in r.err and not (tmp_path / "nowhere").exists()


def test_commands_that_record_still_create_the_store(run_wctx, git_repo, tmp_path):
    repo = git_repo("pool-lib", {"pool.py": "def acquire():\n    return 1\n"})
    home = tmp_path / "fresh-home"
    r = run_wctx(["repo", "add", repo.path], cwd=tmp_path, env={"WCTX_HOME": str(home)})
    assert r.code == 0, r
    assert (home / "wctx.db").exists()
    r = run_wctx(["search", "acquire"], cwd=repo.path, env={"WCTX_HOME": str(home)})
    assert r.code == 0, r


def test_the_briefing_works_on_a_read_only_store(git_repo, store, wctx_home, monkeypatch):
    lib = git_repo("queue-lib", {"queue.py": "def push(item):\n    return item\n"})
    app = git_repo("queue-app", {"app.py": "print(1)\n"})
    wctx.register_repo(store, lib.path, workspace="queues")
    wctx.register_repo(store, app.path, workspace="queues")
    wctx.relate(store, "queue-app", "uses", "queue-lib")
    wctx.capture(
        store, [{"kind": "known_issue", "claim": "push blocks when the queue is full", "repo": "queue-lib"}]
    )
    store.close()
    # What a store this user cannot write gives (a shared store, a read-only mount).
    monkeypatch.setattr(wctx, "_writable", lambda path: False)
    ro = wctx.open_store(wctx_home, create=False)
    try:
        assert ro.readonly
        before = ro.all("SELECT * FROM briefing_served")
        res = wctx.brief(ro, cwd=app.path)
        assert "push blocks when the queue is full" in res["text"]
        assert ro.all("SELECT * FROM briefing_served") == before
    finally:
        ro.close()
