"""A working tree can hold what no plain read survives: a FIFO (opening it blocks until a writer
comes, which never happens), a symlink to a device that never ends (/dev/zero), a symlink out of
the repository, a file far larger than git recorded. Every read of a working-tree file (the
changed-paths check, code references, freshness, capture, confirm) goes through one bounded
reader: regular files inside the repository only, bounded by the size git recorded or a stated
cap. Each command below runs as a real process with a memory limit and a time guard; a hang or a
MemoryError fails the test."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import WCTX_SCRIPT
from mcp_helpers.wire import WireServer

import wctx

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")

MEMORY_LIMIT = 1 << 30  # a process that reads /dev/zero whole dies long before this is reached
GUARD_SECONDS = 90  # far beyond any answer on a 2-core machine; only a hang reaches it

LIB_CORE = (
    "def tokenize(text):\n    return text.split()\n\n\ndef render(tokens):\n    return ' '.join(tokens)\n"
)
APP_MAIN = "from lib.core import tokenize\n\n\ndef run(text):\n    return tokenize(text)\n"
# A symlink's size is the length of its target: each tracked file below has the length of the
# symlink that replaces it, so size alone cannot tell that it changed.
DEVICE_TARGETS = {"cfg/padding.dat": "/dev/./zero", "cfg/random.dat": "/dev/../dev/urandom"}


def _limited():
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _run(argv, home, cwd, stdin=None):
    env = dict(os.environ, WCTX_HOME=home, PYTHONDONTWRITEBYTECODE="1")
    for name in ("CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CODEX_THREAD_ID"):
        env.pop(name, None)
    try:
        proc = subprocess.run(
            [sys.executable, WCTX_SCRIPT, *argv],
            cwd=cwd,
            env=env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=GUARD_SECONDS,
            preexec_fn=_limited,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("wctx %s never answered (blocked on a working-tree file)" % " ".join(argv))
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr, (argv, proc.stderr[-2000:])
    return proc


@pytest.fixture
def hostile_tree(git_repo, tmp_path, wctx_home):
    """app uses lib; lib's evidence cites lib/core.py#tokenize, which app's changed main.py calls.
    Then app's working tree is armed: tracked files replaced by FIFOs and by symlinks to devices
    (same size as what git recorded), untracked ones too, and a symlink out of the repository."""
    lib = git_repo("lib", {"lib/core.py": LIB_CORE})
    files = {"src/main.py": APP_MAIN, "queue/empty.txt": "", "queue/other.txt": "seven!\n"}
    for rel, target in DEVICE_TARGETS.items():
        files[rel] = "x" * len(target)
    app = git_repo("app", files)
    home = wctx_home
    for argv, cwd in (
        (["repo", "add", lib.path, "--workspace", "w"], lib.path),
        (["repo", "add", app.path, "--workspace", "w"], app.path),
        (["relate", "app", "uses", "lib"], app.path),
        (
            ["capture", "--finding", "tokenize splits on any whitespace", "--file", "lib/core.py#tokenize"],
            lib.path,
        ),
        (["capture", "--question", "does the queue drain?", "--file", "queue/other.txt"], app.path),
    ):
        res = _run(argv, home, cwd)
        assert res.returncode == 0, (argv, res.stderr)
    app.write("src/main.py", APP_MAIN + "\n\ndef again(text):\n    return tokenize(text)\n")
    os.remove(app.file("queue/empty.txt"))
    os.mkfifo(app.file("queue/empty.txt"))
    for rel, target in DEVICE_TARGETS.items():
        os.remove(app.file(rel))
        os.symlink(target, app.file(rel))
    os.mkfifo(app.file("untracked.fifo"))
    os.symlink("/dev/zero", app.file("untracked-zero.py"))
    outside = tmp_path / "outside.py"
    outside.write_text("def tokenize_outside_marker():\n    pass\n")
    os.symlink(str(outside), app.file("src/outside.py"))
    # Past git's racy-clean window, so the check cannot trust the index's stat data.
    for rel in ("src/main.py", "queue/other.txt"):
        st = os.stat(app.file(rel))
        os.utime(app.file(rel), ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    return app, lib, home


def test_search_brief_and_the_hook_answer_over_fifos_and_device_symlinks(hostile_tree):
    app, _, home = hostile_tree
    vague = _run(["search", "has anyone looked at this?", "--json"], home, app.path)
    assert vague.returncode == 0, vague.stderr
    claims = [r["claim"] for r in json.loads(vague.stdout)["results"]]
    assert "tokenize splits on any whitespace" in claims  # recalled by the code reference
    for argv in (["search", "tokenize", "--all"], ["search", "queue drain"], ["verify"]):
        res = _run(argv, home, app.path)
        assert res.returncode in (0, 1), (argv, res.stderr)
    brief = _run(["brief", "--json"], home, app.path)
    assert brief.returncode == 0, brief.stderr
    assert "tokenize" in brief.stdout
    hook = _run(
        ["brief", "--hook", "claude-code"],
        home,
        app.path,
        stdin=json.dumps({"session_id": "s-1", "cwd": app.path, "hook_event_name": "SessionStart"}),
    )
    assert hook.returncode == 0, hook.stderr
    assert "tokenize" in json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]


def test_the_mcp_server_keeps_answering_over_a_hostile_tree(hostile_tree):
    app, _, home = hostile_tree
    server = WireServer(home, app.path)
    try:
        server.initialize()
        for _ in range(2):
            found = server.call_ok("search_evidence", {"query": "anything on this change?"})
            assert any("tokenize" in r["claim"] for r in found["results"]), found
        assert server.call_ok("workspace_overview", {})
    finally:
        server.kill()


_PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import wctx
home, path = sys.argv[2], sys.argv[3]
store = wctx.open_store(home)
origin = wctx.resolve_repo(store, "app")
print(json.dumps({
    "changed": dict(wctx.GitRepo(path).changed_paths()),
    "work": dict(wctx.working_files(origin)),
    "refs": [r.rid for r in wctx.code_references(store, origin, [r.id for r in wctx._repos(store)])],
}))
"""


def test_the_changed_paths_check_calls_them_modified_and_reads_nothing_outside(hostile_tree):
    app, _, home = hostile_tree
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _PROBE, os.path.dirname(WCTX_SCRIPT), home, app.path],
            capture_output=True, text=True, timeout=GUARD_SECONDS, preexec_fn=_limited, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail("the changed-paths check blocked on a FIFO")
    assert proc.returncode == 0, proc.stderr[-2000:]
    seen = json.loads(proc.stdout)
    assert seen["changed"]["queue/empty.txt"] == "modified"  # a FIFO where git recorded a file
    for rel in DEVICE_TARGETS:
        assert seen["changed"][rel] == "modified"  # a symlink where git recorded a file of its size
    assert "src/outside.py" in seen["work"] and "untracked-zero.py" in seen["work"]
    assert len(seen["refs"]) == 1  # main.py's call of tokenize; nothing from the file outside


def test_verify_and_confirm_of_a_cited_file_turned_fifo_or_device(hostile_tree):
    app, _, home = hostile_tree
    cited = _run(
        ["capture", "--finding", "padding is fixed", "--file", "src/main.py#run", "--json"], home, app.path
    )
    assert cited.returncode == 0, cited.stderr
    eid = json.loads(cited.stdout)["evidence"][0]["id"]
    os.rename(app.file("src/main.py"), app.file("src/main.py.bak"))
    os.mkfifo(app.file("src/main.py"))
    res = _run(["verify", eid, "--json"], home, app.path)
    assert res.returncode in (0, 1), res.stderr
    verdict = json.loads(res.stdout)["items"][0]
    assert verdict["verdict"] in ("stale", "unknown"), verdict
    confirm = _run(["confirm", eid], home, app.path)
    assert confirm.returncode != 0 and "regular file" in confirm.stderr, confirm.stderr
    os.remove(app.file("src/main.py"))
    os.symlink("/dev/zero", app.file("src/main.py"))
    res = _run(["verify", eid, "--json"], home, app.path)
    assert res.returncode in (0, 1), res.stderr
    assert json.loads(res.stdout)["items"][0]["verdict"] in ("stale", "unknown")


@pytest.mark.parametrize("rel", ["queue/empty.txt", "cfg/padding.dat", "untracked-zero.py", "src/outside.py"])
def test_capture_refuses_to_cite_what_is_not_a_regular_file_inside_the_repository(hostile_tree, rel):
    app, _, home = hostile_tree
    before = json.loads(_run(["search", "fixed width", "--json"], home, app.path).stdout)["results"]
    res = _run(["capture", "--finding", "fixed width", "--file", rel], home, app.path)
    assert res.returncode == 2, (rel, res.stdout, res.stderr)
    line = res.stderr.strip()
    assert line.startswith("wctx: ") and "\n" not in line, line
    assert json.loads(_run(["search", "fixed width", "--json"], home, app.path).stdout)["results"] == before


def test_the_reader_is_bounded_by_the_size_it_is_given(git_repo):
    repo = git_repo("big", {"grown.txt": "a" * 10})
    repo.write("grown.txt", "a" * 5000)
    assert wctx.read_repo_file(repo.path, "grown.txt") == b"a" * 5000
    with pytest.raises(wctx.WctxError, match="larger than"):
        wctx.read_repo_file(repo.path, "grown.txt", limit=4096)
    assert wctx.read_repo_file(repo.path, "../outside.txt") is None
    assert wctx.read_repo_file(repo.path, "missing.txt") is None


def test_instructions_write_refuses_a_guidance_file_that_is_a_fifo(git_repo, wctx_home):
    repo = git_repo("guided", {"README.md": "hello\n"})
    os.mkfifo(repo.file("AGENTS.md"))
    res = _run(["instructions", "--write"], wctx_home, repo.path)
    assert res.returncode == 2 and "AGENTS.md is a FIFO" in res.stderr, res.stderr


def test_strace_sees_no_fifo_device_or_outside_file_opened(hostile_tree, tmp_path):
    """Under ``strace -f`` (wctx and every git it starts), the briefing, a vague search and verify
    never open the FIFO, a device or the file a link points to outside the repository."""
    from test_security_hostile import _strace

    strace = _strace()
    app, _, home = hostile_tree
    log = tmp_path / "open.log"
    env = dict(os.environ, WCTX_HOME=home)
    # (not /dev/urandom: the interpreter and git open it for themselves)
    never = {
        app.file("queue/empty.txt"),
        app.file("untracked.fifo"),
        "/dev/zero",
        str(tmp_path / "outside.py"),
    }
    for argv in (["brief"], ["search", "what changed here?"], ["verify"]):
        try:
            proc = subprocess.run(
                [strace, "-f", "-qq", "-e", "trace=open,openat,openat2", "-o", str(log), sys.executable, WCTX_SCRIPT,
                 *argv],
                cwd=app.path, env=env, capture_output=True, timeout=GUARD_SECONDS, check=False,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            pytest.fail("wctx %s never answered under strace" % " ".join(argv))
        assert proc.returncode in (0, 1), proc.stderr
        with open(str(log)) as fh:
            opened = {line.split('"')[1] for line in fh if '"' in line and "= -1" not in line}
        absolute = {p if os.path.isabs(p) else os.path.join(app.path, p) for p in opened}
        assert opened and not (absolute & never), sorted(absolute & never)
