"""Acknowledged writes are never lost and reads keep working when the store or a repository is in a
bad state: a kill between import steps, a store deleted or replaced under a running server, a full
disk, a read-only store, one broken repository in a workspace."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from mcp_helpers.fixtures import Servers  # noqa: E402

import wctx  # noqa: E402

FIXTURES = os.path.join(HERE, "fixtures", "transcripts")


def evidence_count(home):
    con = sqlite3.connect("file:%s?mode=ro" % os.path.join(str(home), "wctx.db"), uri=True)
    try:
        return con.execute("SELECT count(*) FROM evidence").fetchone()[0]
    finally:
        con.close()


# -- import: a kill between the session and its record_evidence captures ---------------------------

TWO_CALLS = [
    {"type": "user", "sessionId": "22222222-aaaa-4bbb-8ccc-000000000002", "cwd": "@A@",
     "timestamp": "2026-03-01T10:00:00.000Z", "message": {"role": "user", "content": "look"}},
    {"type": "assistant", "sessionId": "22222222-aaaa-4bbb-8ccc-000000000002", "cwd": "@A@",
     "timestamp": "2026-03-01T10:00:01.000Z",
     "message": {"role": "assistant", "content": [
         {"type": "tool_use", "id": "toolu_1", "name": "mcp__wctx__record_evidence",
          "input": {"items": [{"kind": "finding", "claim": "first finding", "repo": "repo-a"}]}},
         {"type": "tool_use", "id": "toolu_2", "name": "mcp__wctx__record_evidence",
          "input": {"items": [{"kind": "decision", "claim": "second decision", "repo": "repo-a"}]}}]}},
    {"type": "user", "sessionId": "22222222-aaaa-4bbb-8ccc-000000000002", "cwd": "@A@",
     "timestamp": "2026-03-01T10:00:02.000Z",
     "message": {"role": "user", "content": [
         {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"},
         {"type": "tool_result", "tool_use_id": "toolu_2", "content": "ok"}]}},
]  # fmt: skip


def two_call_transcript(tmp_path, repo_path):
    path = tmp_path / "t" / "22222222-aaaa-4bbb-8ccc-000000000002.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(line) + "\n" for line in TWO_CALLS).replace("@A@", repo_path)
    path.write_text(text, encoding="utf-8")
    return str(path)


# Runs an import in a child process that SIGKILLs itself at the n-th call to capture() (n counts
# from 1), i.e. after the session's transaction committed and before (or between) the evidence.
KILL_AT_CAPTURE = r"""
import os, signal, sys
sys.path.insert(0, sys.argv[1])
import wctx
n = [0]
real = wctx.capture
def capture(*a, **kw):
    n[0] += 1
    if n[0] == int(sys.argv[4]):
        os.kill(os.getpid(), signal.SIGKILL)
    return real(*a, **kw)
wctx.capture = capture
store = wctx.open_store(sys.argv[2])
wctx.import_transcript(store, sys.argv[3])
"""


@pytest.mark.parametrize("kill_at", [1, 2])
def test_import_killed_before_its_evidence_is_finished_by_the_next_import(
    git_repo, wctx_home, tmp_path, kill_at
):
    a = git_repo("repo-a", {"app/main.py": "x = 1\n"})
    with wctx.open_store(wctx_home) as s:
        wctx.register_repo(s, a.path)
    path = two_call_transcript(tmp_path, a.path)
    proc = subprocess.run(
        [sys.executable, "-c", KILL_AT_CAPTURE, os.path.dirname(HERE), wctx_home, path, str(kill_at)],
        capture_output=True,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert evidence_count(wctx_home) == kill_at - 1
    with wctx.open_store(wctx_home) as s:
        res = wctx.import_transcript(s, path)
        assert res["status"] != "unchanged"
        claims = sorted(e["claim"] for e in wctx.get_session(s, res["session"])["evidence"])
        assert claims == ["first finding", "second decision"]
        # Finished: the one after that has nothing left to do and stores nothing twice.
        assert wctx.import_transcript(s, path)["status"] == "unchanged"
    assert evidence_count(wctx_home) == 2


# -- the store replaced or deleted under a running MCP server --------------------------------------


@pytest.fixture
def servers(tmp_path):
    s = Servers(tmp_path)
    yield s
    s.close()


def record(server, claim):
    return server.call(
        "record_evidence", {"items": [{"kind": "finding", "claim": claim, "repo": "upload-sdk"}]}
    )


def test_store_replaced_under_a_running_server_gets_the_next_writes(servers, tmp_path):
    server = servers.start()
    server.initialize()
    assert record(server, "before the swap")["isError"] is False
    db = os.path.join(str(servers.home), "wctx.db")
    # Replace the store with a copy (a restore from backup): same content, another file.
    backup = tmp_path / "backup"
    src = sqlite3.connect(db)
    dst = sqlite3.connect(str(backup))
    src.backup(dst)
    src.close()
    dst.close()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.unlink(db + suffix)
    shutil.copy(str(backup), db)
    acked = []
    for n in range(4):
        result = record(server, "after the swap %d" % n)
        assert result["isError"] is False, result
        acked.extend(e["id"] for e in result["structuredContent"]["recorded"])
    con = sqlite3.connect(db)
    have = {r[0] for r in con.execute("SELECT id FROM evidence")}
    con.close()
    assert set(acked) <= have and len(acked) == 4


def test_store_deleted_under_a_running_server_fails_loudly(servers):
    server = servers.start()
    server.initialize()
    assert record(server, "before the delete")["isError"] is False
    db = os.path.join(str(servers.home), "wctx.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.unlink(db + suffix)
    result = record(server, "into the void")
    assert result["isError"] is True
    assert "deleted" in result["content"][0]["text"]
    assert not os.path.exists(db)  # not silently recreated empty either
    assert server.call("search_evidence", {"query": "void"})["isError"] is True


# -- a full disk -------------------------------------------------------------------------------


def fill_store(store):
    """Simulates a full disk: SQLite refuses to grow the database file past its current pages
    (PRAGMA max_page_count), which it reports exactly as it reports ENOSPC: SQLITE_FULL."""
    pages = store.one("PRAGMA page_count")[0]
    store.db.execute("PRAGMA max_page_count = %d" % pages)


def test_capture_on_a_full_disk_reports_the_full_disk(product):
    fill_store(product.store)
    claim = "x" * 3000
    with pytest.raises(sqlite3.OperationalError) as err:
        for n in range(50):
            wctx.capture(product.store, [{"kind": "finding", "claim": claim + str(n), "repo": "upload-sdk"}])
    assert "full" in str(err.value)  # not "cannot rollback - no transaction is active"
    assert product.store.one("PRAGMA integrity_check")[0] == "ok"
    assert not product.store.db.in_transaction
    product.store.db.execute("PRAGMA max_page_count = 1000000")
    wctx.capture(product.store, [{"kind": "finding", "claim": "room again", "repo": "upload-sdk"}])


def test_search_and_verify_answer_when_the_freshness_cache_cannot_be_written(product, run_cli):
    """A disk that fills while the store is open: the cache write fails with SQLITE_FULL
    (simulated with PRAGMA max_page_count, which SQLite reports exactly as a full disk)."""
    sdk = product.sdk
    for n in range(30):
        wctx.capture(
            product.store,
            [{"kind": "finding", "claim": "upload retries %d %s" % (n, "y" * 2000), "repo": "upload-sdk",
              "files": ["src/upload/upload.ts#uploadDocument"]}],
            cwd=sdk.path,
        )  # fmt: skip
    product.store.db.execute("DELETE FROM freshness_cache")
    os.utime(sdk.file("src/upload/upload.ts"), (1e9, 1e9))  # quiet a while: its verdicts are cached
    fill_store(product.store)
    found = wctx.search(product.store, "upload retries", repo="upload-sdk", limit=30)
    assert len(found["results"]) == 30
    assert all(r["freshness"]["verdict"] == "current" for r in found["results"])
    checked = wctx.verify(product.store, repo="upload-sdk")
    assert checked["summary"]["current"] == 30
    assert any("not cached" in n and "full" in n for n in product.store.notices)


# -- a read-only store ---------------------------------------------------------------------------

READER_UID = 65534  # nobody


def _make_shared_store(git_repo, home, parent=None):
    """A store with items whose freshness is not cached yet, owned by this user."""
    sdk = git_repo(
        "upload-sdk", {"src/upload.py": "def upload():\n    return 419\n", "b.py": "x = 1\n"}, parent=parent
    )
    with wctx.open_store(home) as s:
        wctx.register_repo(s, sdk.path, workspace="w")
        wctx.capture(s, [{"kind": "finding", "claim": "upload returns 419", "repo": "upload-sdk",
                          "files": ["src/upload.py#upload"]},
                         {"kind": "note", "claim": "b changes", "repo": "upload-sdk", "files": ["b.py"]}],
                     cwd=sdk.path)  # fmt: skip
        s.db.execute("DELETE FROM freshness_cache")
    sdk.write("b.py", "x = 2\n")
    for rel in ("src/upload.py", "b.py"):  # quiet a while: a file written just now is not cached
        os.utime(sdk.file(rel), (1e9, 1e9))
    return sdk


def _reader_python():
    """A Python another user can run (the test's own may live in a private home directory)."""
    for exe in (sys.executable, "/usr/bin/python3", "/usr/local/bin/python3"):
        path = os.path.realpath(exe)
        parts = [path] + [p for p in _parents(path)]
        if os.path.isfile(path) and all(os.stat(p).st_mode & 0o005 == 0o005 for p in parts):
            return exe
    pytest.fail("no Python that another user may run was found")


def _parents(path):
    while path != os.path.dirname(path):
        path = os.path.dirname(path)
        yield path


@pytest.fixture
def reader():
    """How to run wctx as a user who may read the store but not write it or its directory.

    As root: the command runs as uid nobody, in a world-readable directory outside the (private)
    pytest tree, with the repository owned by nobody (git refuses a repository another user owns)
    and the store root's. Otherwise: the store's files and directory are made read-only.
    Yields (base directory, setup(home, repo), run(argv, home, cwd) -> (code, out, err))."""
    import tempfile

    base = tempfile.mkdtemp(prefix="wctx-reader-")
    os.chmod(base, 0o755)
    root = os.geteuid() == 0
    python = _reader_python() if root else sys.executable
    script = os.path.join(base, "wctx.py")
    shutil.copy(wctx.__file__, script)
    os.chmod(script, 0o644)

    def setup(home, repo):
        if root:
            for top, dirs, files in os.walk(repo.path):
                for name in dirs + files:
                    os.lchown(os.path.join(top, name), READER_UID, READER_UID)
            os.lchown(repo.path, READER_UID, READER_UID)
            for d in _parents(repo.path):
                if d == base:
                    break
                os.chmod(d, 0o755)
        for p in [os.path.join(home, f) for f in os.listdir(home)] + [home]:
            if root:
                os.chmod(p, 0o755 if os.path.isdir(p) else 0o644)
            else:
                os.chmod(p, 0o555 if os.path.isdir(p) else 0o444)

    def demote():
        os.setgid(READER_UID)
        os.setuid(READER_UID)

    def run(argv, home, cwd):
        env = dict(os.environ, WCTX_HOME=home, HOME=base)
        proc = subprocess.run(
            [python, script, *argv],
            cwd=cwd,
            env=env,
            capture_output=True,
            preexec_fn=demote if root else None,
        )
        return proc.returncode, proc.stdout.decode(), proc.stderr.decode()

    try:
        yield base, setup, run
    finally:
        for top, dirs, _ in os.walk(base):
            for d in dirs:
                os.chmod(os.path.join(top, d), 0o755)
        shutil.rmtree(base, ignore_errors=True)


def test_the_briefing_works_on_a_read_only_store(git_repo, reader):
    """A briefing only reads: on a store this user cannot write it is printed, hook or not, and
    what it showed is simply not remembered."""
    base, setup, run = reader
    home = os.path.join(base, "home")
    sdk = _make_shared_store(git_repo, home, parent=base)
    with wctx.open_store(home) as s:
        wctx.capture(
            s, [{"kind": "question", "claim": "does upload retry after a 419?", "repo": "upload-sdk"}]
        )
    setup(home, sdk)
    code, out, err = run(["brief"], home, sdk.path)
    assert code == 0, err
    assert "does upload retry after a 419?" in out and "read-only" not in err
    code, out, err = run(["--home", home, "brief", "--hook", "claude-code"], home, sdk.path)
    assert code == 0 and "does upload retry after a 419?" in out, err


def test_a_read_only_store_answers_reads_uncached_and_refuses_writes(git_repo, reader):
    base, setup, run = reader
    home = os.path.join(base, "home")
    sdk = _make_shared_store(git_repo, home, parent=base)
    db = os.path.join(home, "wctx.db")
    with open(db, "rb") as fh:
        before = fh.read()
    setup(home, sdk)
    code, out, err = run(["search", "--json", "upload"], home, sdk.path)
    assert code == 0, err
    assert [r["freshness"]["verdict"] for r in json.loads(out)["results"]] == ["current"]
    assert err.count("not cached") == 1 and "read-only" in err
    code, out, err = run(["verify", "--json"], home, sdk.path)
    assert code == 1, err  # a stale item: the documented verdict exit code, not a failure
    assert json.loads(out)["summary"]["stale"] == 1 and json.loads(out)["summary"]["current"] == 1
    assert "attempt to write" not in err and err.count("not cached") == 1
    code, out, err = run(["capture", "--note", "more", "--repo", "upload-sdk"], home, sdk.path)
    assert code == 1 and "read-only" in err and "Traceback" not in err
    code, out, err = run(["doctor", "--json"], home, sdk.path)
    checks = {c["name"]: c for c in json.loads(out)["checks"]}
    assert checks["store"]["status"] == "ok", checks["store"]
    assert "move it aside" not in out
    assert checks["store access"]["status"] == "warn"
    with open(db, "rb") as fh:
        assert fh.read() == before
    assert sorted(os.listdir(home)) == ["wctx.db"]


# Mounts need a mount namespace: `unshare -rm` gives one to an unprivileged user too.
IN_NAMESPACE = r"""
import os, shutil, subprocess, sys
mnt, home, wctx_py, cwd, size, mode = sys.argv[1:7]
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", mnt], check=True)
os.mkdir(os.path.join(mnt, "home"))
shutil.copy(os.path.join(home, "wctx.db"), os.path.join(mnt, "home", "wctx.db"))
if mode == "ro":
    subprocess.run(["mount", "-o", "remount,ro", mnt], check=True)
else:  # fill the disk to the last byte
    fd = os.open(os.path.join(mnt, "fill"), os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass
    os.close(fd)
env = dict(os.environ, WCTX_HOME=os.path.join(mnt, "home"))
for argv in (["search", "--json", "upload"], ["verify", "--json"], ["capture", "--note", "x", "--repo", "upload-sdk"]):
    p = subprocess.run([sys.executable, wctx_py] + argv, cwd=cwd, env=env, capture_output=True)
    print(json_dump := __import__("json").dumps([p.returncode, p.stdout.decode(), p.stderr.decode()]))
print(__import__("json").dumps(sorted(os.listdir(os.path.join(mnt, "home")))))
"""


def run_in_mount(tmp_path, home, cwd, size, mode):
    unshare = shutil.which("unshare")
    if unshare is None:
        if os.environ.get("CI") == "true":
            pytest.fail("unshare (util-linux) is needed to mount a read-only or full file system")
        pytest.skip("unshare not found")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    proc = subprocess.run(
        [unshare, "-rm", sys.executable, "-c", IN_NAMESPACE, str(mnt), home, wctx.__file__, cwd, size, mode],
        capture_output=True,
    )
    if proc.returncode != 0 and b"mount" in proc.stderr and os.environ.get("CI") != "true":
        pytest.skip("mount namespaces are not allowed here: %s" % proc.stderr.decode()[-200:])
    assert proc.returncode == 0, proc.stderr.decode()
    lines = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    return lines[:3], lines[3]


def test_reads_work_on_a_read_only_mount_without_a_shm_file(git_repo, wctx_home, tmp_path):
    sdk = _make_shared_store(git_repo, wctx_home)
    (search, verify, capture), files = run_in_mount(tmp_path, wctx_home, sdk.path, "2m", "ro")
    assert files == ["wctx.db"]  # no -wal or -shm was there, and none could be made
    assert search[0] == 0, search
    assert [r["claim"] for r in json.loads(search[1])["results"]] == ["upload returns 419"]
    assert verify[0] == 1 and json.loads(verify[1])["summary"]["stale"] == 1, verify
    assert "unable to open" not in search[2] + verify[2]
    assert capture[0] == 1 and "read-only" in capture[2], capture


def test_reads_work_on_a_full_disk(git_repo, wctx_home, tmp_path):
    """A real full disk: the store copied to a tiny tmpfs, which is then filled to the last byte."""
    sdk = _make_shared_store(git_repo, wctx_home)
    (search, verify, capture), _ = run_in_mount(tmp_path, wctx_home, sdk.path, "1m", "full")
    assert search[0] == 0, search
    assert [r["freshness"]["verdict"] for r in json.loads(search[1])["results"]] == ["current"]
    assert verify[0] == 1 and json.loads(verify[1])["summary"]["stale"] == 1, verify
    assert "full" in capture[2] and capture[0] == 1 and "Traceback" not in capture[2], capture


# -- one broken repository in a workspace ----------------------------------------------------------


def _break_index(repo):
    with open(os.path.join(repo.path, ".git", "index"), "wb") as fh:
        fh.write(b"garbage")


def test_one_broken_repository_leaves_the_rest_of_the_workspace_working(git_repo, store, run_cli):
    good = git_repo("good", {"lib.py": "def parse():\n    return 1\n"})
    bad = git_repo("bad", {"api.py": "def serve():\n    return 2\n"})
    wctx.register_repo(store, good.path, workspace="w")
    wctx.register_repo(store, bad.path, workspace="w")
    wctx.relate(store, "good", "uses", "bad")
    wctx.capture(store, [{"kind": "finding", "claim": "parse returns one", "repo": "good", "files": ["lib.py#parse"]}],
                 cwd=good.path)  # fmt: skip
    wctx.capture(store, [{"kind": "finding", "claim": "serve returns two", "repo": "bad", "files": ["api.py"]},
                         {"kind": "note", "claim": "serve notes", "repo": "bad"}], cwd=bad.path)  # fmt: skip
    good.write("lib.py", "def parse():\n    return 10\n")
    good.commit("parse changed")
    bad.git("mv", "api.py", "server.py")  # following the rename needs git diff and git log
    bad.commit("rename")
    bad.write("other.py", "x = 1\n")
    bad.commit("later")
    _break_index(bad)

    res = run_cli(["search", "--json", "returns"], cwd=good.path)
    assert res.code == 0, res
    verdicts = {r["repo"]: r["freshness"] for r in res.json["results"]}
    assert verdicts["good"]["verdict"] == "stale"
    assert verdicts["bad"]["verdict"] == "unknown"
    assert any("git" in reason and "bad" in reason for reason in verdicts["bad"]["reasons"]), verdicts["bad"]

    res = run_cli(["verify", "--json", "--repo", "good"], cwd=good.path)
    assert res.code == 1, res  # the stale item, not a failure
    by_claim = {wctx.get_evidence(store, i["id"])["claim"]: i for i in res.json["items"]}
    assert by_claim["parse returns one"]["verdict"] == "stale"
    assert by_claim["serve returns two"]["verdict"] == "unknown"
    assert by_claim["serve notes"]["verdict"] == "unknown"
    assert "Traceback" not in res.err

    res = run_cli(
        ["search", "has anyone looked at this"], cwd=bad.path
    )  # the vague fallback, from the broken one
    assert res.code == 0, res
    # Nothing about the broken repository was cached: once it is repaired, the verdicts are real.
    shutil.rmtree(os.path.join(bad.path, ".git"))
    bad.git("init", "-q")
    bad.commit("re-made")
    res = run_cli(["search", "--json", "serve"], cwd=good.path)
    assert all("git" not in " ".join(r["freshness"]["reasons"]) for r in res.json["results"]), res.json
