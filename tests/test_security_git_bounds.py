"""No git call blocks or spins without end. A repository can hold what git itself opens and reads
whole: a FIFO named .gitignore (git's untracked-files walk opens every one), a FIFO at
.git/info/exclude, .git/config, packed-refs or a file its include.path names, and config keys that
name a file to read (mailmap.file=/dev/zero, core.excludesFile, core.attributesFile). Each command
below runs as a real process with a memory limit and its own outer guard: a hang fails the test.
WCTX_GIT_TIMEOUT lowers wctx's bound on each git call so that a blocked git is stopped soon; the
tests assert what the user sees (an answer, or one line of error), never how long it took."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys

import pytest
from conftest import WCTX_SCRIPT
from mcp_helpers.wire import WireServer, server_env

import wctx

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")

MEMORY_LIMIT = 1 << 30  # git reading /dev/zero whole dies long before this is reached
GUARD_SECONDS = 120  # far beyond any answer on a 2-core machine; only a hang reaches it
GIT_BOUND = "4"  # seconds: WCTX_GIT_TIMEOUT for these processes

CART = "def total(lines):\n    return sum(line.price for line in lines)\n"


def _limited():
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _env(home):
    env = dict(os.environ, WCTX_HOME=home, PYTHONDONTWRITEBYTECODE="1", WCTX_GIT_TIMEOUT=GIT_BOUND)
    for name in ("CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CODEX_THREAD_ID"):
        env.pop(name, None)
    return env


def _run(argv, home, cwd, stdin=None):
    try:
        proc = subprocess.run(
            [sys.executable, WCTX_SCRIPT, *argv],
            cwd=cwd,
            env=_env(home),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=GUARD_SECONDS,
            preexec_fn=_limited,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("wctx %s never answered (git blocked or spun)" % " ".join(argv))
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr, (argv, proc.stderr[-2000:])
    return proc


def _nobody_reads(fifo):
    """True when no process holds ``fifo`` open for reading: a git stopped by wctx is gone."""
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as e:
        return e.errno == errno.ENXIO
    os.close(fd)
    return False


@pytest.fixture
def shop(git_repo, wctx_home):
    repo = git_repo("shop", {"cart/total.py": CART, "docs/readme.txt": "the shop\n"})
    for argv in (
        ["repo", "add", repo.path],
        ["capture", "--finding", "cart totals ignore the discount", "--file", "cart/total.py#total"],
    ):
        res = _run(argv, wctx_home, repo.path)
        assert res.returncode == 0, (argv, res.stderr)
    repo.write("cart/notes.txt", "untracked\n")  # so that git's walk has somewhere to look
    return repo, wctx_home


@pytest.mark.parametrize("trap", ["cart/.gitignore", ".git/info/exclude"])
def test_search_brief_hooks_and_the_mcp_server_answer_over_a_fifo_ignore_file(shop, trap):
    repo, home = shop
    fifo = os.path.join(repo.path, *trap.split("/"))
    if os.path.exists(fifo):
        os.remove(fifo)
    os.mkfifo(fifo)
    found = _run(["search", "discount", "--json"], home, repo.path)
    assert found.returncode == 0, found.stderr
    assert [r["claim"] for r in json.loads(found.stdout)["results"]] == ["cart totals ignore the discount"]
    vague = _run(["search", "anything about my change?"], home, repo.path)
    assert vague.returncode == 0 and "cart totals ignore the discount" in vague.stdout, vague.stderr
    brief = _run(["brief", "--json"], home, repo.path)
    assert brief.returncode == 0 and json.loads(brief.stdout)["repo"] == "shop", brief.stderr
    for agent in wctx.HOOK_AGENTS:
        payload = {"session_id": "s-1", "cwd": repo.path, "hook_event_name": "SessionStart"}
        hook = _run(["brief", "--hook", agent], home, repo.path, stdin=json.dumps(payload))
        assert hook.returncode == 0 and "shop" in hook.stdout, (agent, hook.stderr)
    server = WireServer(home, repo.path, env=server_env(home, WCTX_GIT_TIMEOUT=GIT_BOUND))
    try:
        server.initialize()
        for _ in range(2):
            reply = server.call_ok("search_evidence", {"query": "what about the discount?"})
            assert [r["claim"] for r in reply["results"]] == ["cart totals ignore the discount"]
    finally:
        server.kill()
    assert _nobody_reads(fifo)


def _fifo_in_place(repo, rel):
    path = os.path.join(repo.path, *rel.split("/"))
    if os.path.exists(path):
        os.remove(path)
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("trap", [".git/config", ".git/packed-refs", "include.path"])
def test_repo_add_of_a_repository_whose_git_files_block_is_one_line_of_error(
    git_repo, wctx_home, tmp_path, trap
):
    repo = git_repo("blocked", {"a.txt": "a\n"})
    repo.git("pack-refs", "--all")
    if trap == "include.path":
        fifo = str(tmp_path / "included.fifo")
        os.mkfifo(fifo)
        repo.git("config", "include.path", fifo)
    else:
        fifo = _fifo_in_place(repo, trap)
    res = _run(["repo", "add", repo.path], wctx_home, repo.path)
    assert res.returncode != 0
    line = res.stderr.strip()
    assert line.startswith("wctx: ") and "\n" not in line and repo.path in line, line
    assert _nobody_reads(fifo)
    listed = _run(["repo", "list", "--json"], wctx_home, str(tmp_path))
    assert "blocked" not in listed.stdout


def test_files_a_repository_names_in_its_config_are_never_read(shop):
    repo, home = shop
    fifo = str(os.path.join(repo.path, ".mailmap"))
    os.mkfifo(fifo)
    for key in ("mailmap.file", "core.excludesFile", "core.attributesFile"):
        repo.git("config", key, "/dev/zero")
    res = _run(["capture", "--finding", "refunds round down", "--file", "cart/total.py"], home, repo.path)
    assert res.returncode == 0, res.stderr
    server = WireServer(home, repo.path, env=server_env(home, WCTX_GIT_TIMEOUT=GIT_BOUND))
    try:
        server.initialize()
        recorded = server.call_ok(
            "record_evidence",
            {"summary": "checkout audit", "items": [{"kind": "finding", "claim": "taxes use the shipping address",
                                                      "files": ["cart/total.py#total"]}]},
        )  # fmt: skip
        assert recorded["session"] and not recorded.get("isError"), recorded
    finally:
        server.kill()
    found = _run(["search", "refunds taxes", "--json"], home, repo.path)
    claims = {r["claim"] for r in json.loads(found.stdout)["results"]}
    assert {"refunds round down", "taxes use the shipping address"} <= claims
    verify = _run(["verify", "--json"], home, repo.path)
    assert verify.returncode in (0, 1), verify.stderr
    assert {i["verdict"] for i in json.loads(verify.stdout)["items"]} == {"current"}


def test_git_output_past_its_bound_is_stopped_with_one_line(git_repo):
    repo = git_repo("large", {"blob.bin": "z" * 200_000})
    with pytest.raises(wctx.GitStopped) as stopped:
        wctx.run_git(repo.path, ["cat-file", "--batch"], input_bytes=b"HEAD:blob.bin\n", max_output=50_000)
    message = str(stopped.value)
    assert "\n" not in message and repo.path in message and "50000 bytes" in message
    _, out = wctx.run_git(repo.path, ["cat-file", "--batch"], input_bytes=b"HEAD:blob.bin\n")
    assert out.endswith(b"z" * 200_000 + b"\n")  # within the bound: all of it


@pytest.mark.parametrize("trap", [".git/packed-refs", ".git/config"])
def test_search_answers_when_a_file_git_opens_on_every_call_is_a_fifo(shop, trap):
    repo, home = shop
    fifo = _fifo_in_place(repo, trap)
    found = _run(["search", "discount", "--json"], home, repo.path)
    assert found.returncode == 0, found.stderr
    assert [r["claim"] for r in json.loads(found.stdout)["results"]] == ["cart totals ignore the discount"]
    verify = _run(["verify"], home, repo.path)
    assert verify.returncode in (0, 1) and "unknown" in verify.stdout and "is a FIFO" in verify.stdout, verify
    assert _nobody_reads(fifo)
