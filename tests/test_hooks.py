"""Automatic import at session end: installing and removing agent hooks, and the hook itself."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

import wctx

WCTX_SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "wctx.py")

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "transcripts")


@pytest.fixture(autouse=True)
def agent_dirs(tmp_path, monkeypatch, wctx_home):
    """Claude Code and Codex settings live in this test's own folders (set after wctx_home,
    which points them at empty folders of its own)."""
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    for name in ("CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CODEX_THREAD_ID"):
        monkeypatch.delenv(name, raising=False)
    return claude, codex


def load(path):
    with open(str(path), encoding="utf-8") as fh:
        return json.load(fh)


def test_install_claude_code_adds_a_session_end_hook_that_runs_this_file(run_cli, agent_dirs):
    claude, _ = agent_dirs
    r = run_cli(["hooks", "install", "claude-code"])
    assert r.code == 0, r
    settings = load(claude / "settings.json")
    (group,) = settings["hooks"]["SessionEnd"]
    (hook,) = group["hooks"]
    assert hook["type"] == "command"
    # The interpreter running wctx now, by absolute path: the command runs from a clean shell.
    assert hook["command"].startswith(sys.executable + " ")
    assert hook["command"].endswith(" import --hook")
    assert os.path.abspath(WCTX_SCRIPT) in hook["command"]
    assert "+" in r.out and "SessionEnd" in r.out  # the diff is shown


def test_install_is_idempotent_keeps_a_backup_and_uninstall_removes_exactly_it(run_cli, agent_dirs):
    claude, _ = agent_dirs
    claude.mkdir()
    original = {
        "model": "opus",
        "hooks": {
            "SessionEnd": [{"hooks": [{"type": "command", "command": "~/bin/my-own-hook.sh"}]}],
            "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "say done"}]}],
        },
    }
    (claude / "settings.json").write_text(json.dumps(original, indent=4))
    before = (claude / "settings.json").read_text()

    assert run_cli(["hooks", "install", "claude-code"]).code == 0
    assert (claude / "settings.json.wctx-backup").read_text() == before
    installed = load(claude / "settings.json")
    assert installed["model"] == "opus"
    assert installed["hooks"]["Stop"] == original["hooks"]["Stop"]
    assert len(installed["hooks"]["SessionEnd"]) == 2

    again = run_cli(["hooks", "install", "claude-code", "--json"])
    assert again.code == 0 and again.json["changed"] is False
    assert load(claude / "settings.json") == installed

    status = run_cli(["hooks", "status", "--json"]).json["hooks"]
    assert [h["installed"] for h in status] == [True, False, False]
    assert list(status[0]["commands"]) == ["SessionEnd", "SessionStart"]

    r = run_cli(["hooks", "uninstall", "claude-code"])
    assert r.code == 0 and "removed 2 wctx hooks" in r.out  # session end and session start
    assert load(claude / "settings.json") == original
    r = run_cli(["hooks", "uninstall", "claude-code"])
    assert r.code == 0 and "nothing changed" in r.out


def test_uninstall_after_a_fresh_install_leaves_no_trace(run_cli, agent_dirs):
    claude, _ = agent_dirs
    claude.mkdir()
    (claude / "settings.json").write_text('{"theme": "dark"}\n')
    run_cli(["hooks", "install", "claude-code"])
    run_cli(["hooks", "uninstall", "claude-code"])
    assert load(claude / "settings.json") == {"theme": "dark"}


def test_dry_run_changes_nothing(run_cli, agent_dirs):
    claude, _ = agent_dirs
    r = run_cli(["hooks", "install", "claude-code", "--dry-run"])
    assert r.code == 0 and "would add" in r.out and "+" in r.out
    assert not (claude / "settings.json").exists()


def test_invalid_settings_are_refused_untouched(run_cli, agent_dirs):
    claude, _ = agent_dirs
    claude.mkdir()
    (claude / "settings.json").write_text("{ not json")
    r = run_cli(["hooks", "install", "claude-code"])
    assert r.code == 2 and "not valid JSON" in r.err
    assert (claude / "settings.json").read_text() == "{ not json"


def test_settings_path_can_be_given(run_cli, tmp_path):
    target = tmp_path / "elsewhere" / "settings.json"
    assert run_cli(["hooks", "install", "claude-code", "--settings", target]).code == 0
    assert "SessionEnd" in load(target)["hooks"]


def test_install_codex_adds_a_stop_hook_and_says_what_codex_needs(run_cli, agent_dirs, monkeypatch, tmp_path):
    _, codex = agent_dirs
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv(
        "PATH", "%s:/usr/bin:/bin" % (tmp_path / "bin")
    )  # no codex: Stop, which every version runs
    r = run_cli(["hooks", "install", "codex"])
    assert r.code == 0, r
    hooks = load(codex / "hooks.json")["hooks"]
    assert list(hooks) == ["Stop", "SessionStart"]
    assert hooks["Stop"][0]["hooks"][0]["command"].endswith(" import --hook")
    assert "note:" in r.out and "hooks" in r.out
    assert run_cli(["hooks", "uninstall", "codex"]).code == 0
    assert load(codex / "hooks.json") == {}


def _render(dest, a, b, outside):
    with open(os.path.join(FIXTURES, "claude_multi_repo.jsonl"), encoding="utf-8") as fh:
        text = fh.read().replace("@REPO_A@", a).replace("@REPO_B@", b).replace("@OUTSIDE@", outside)
    dest.write_text(text)
    return str(dest)


def wait_for_log(wctx_home, text, lines=1):
    """The hook log once it holds ``lines`` lines containing ``text`` (the import runs detached)."""
    import time

    path = os.path.join(wctx_home, "hooks.log")
    deadline = time.monotonic() + 60
    while True:
        found = []
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                found = [line for line in fh.read().splitlines() if text in line]
        if len(found) >= lines or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def _hook(stdin_bytes, wctx_home, close=True):
    env = dict(os.environ, WCTX_HOME=wctx_home)
    proc = subprocess.Popen(
        [sys.executable, WCTX_SCRIPT, "import", "--hook"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        proc.stdin.write(stdin_bytes)
        proc.stdin.flush()
        if close:
            out, err = proc.communicate(timeout=60)
        else:  # the agent keeps the pipe open: the hook must still finish on its own
            proc.wait(timeout=60)
            out, err = proc.stdout.read(), proc.stderr.read()
            proc.stdin.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, out, err


def test_the_hook_imports_the_session_it_is_given(git_repo, store, wctx_home, tmp_path):
    a = git_repo("repo-a", {"app/main.py": "x = 1\n"})
    b = git_repo("repo-b", {"src/upload.py": "def upload_document():\n    pass\n"})
    wctx.register_repo(store, a.path)
    wctx.register_repo(store, b.path)
    transcript = _render(tmp_path / "s.jsonl", a.path, b.path, str(tmp_path))
    payload = {
        "session_id": "11111111-aaaa-4bbb-8ccc-000000000001",
        "transcript_path": transcript,
        "cwd": a.path,
        "hook_event_name": "SessionEnd",
        "reason": "exit",
    }
    code, out, err = _hook(json.dumps(payload).encode(), wctx_home)
    assert (code, out) == (0, b"")
    assert wait_for_log(wctx_home, " ok SessionEnd imported ses-")
    assert len(wctx.list_sessions(store)) == 1


def test_the_hook_never_fails_the_agent(wctx_home, tmp_path):
    for stdin in (
        b"",
        b"not json",
        json.dumps({"transcript_path": str(tmp_path / "missing.jsonl")}).encode(),  # nothing to do
    ):
        code, out, err = _hook(stdin, wctx_home)
        assert code == 0 and out == b""
    log = open(os.path.join(wctx_home, "hooks.log"), encoding="utf-8").read().splitlines()
    assert len(log) == 2 and all(" error " in line for line in log)


def test_the_hook_does_not_wait_for_a_stdin_that_never_closes(git_repo, store, wctx_home, tmp_path):
    a = git_repo("repo-a", {"app/main.py": "x = 1\n"})
    wctx.register_repo(store, a.path)
    transcript = _render(tmp_path / "s.jsonl", a.path, a.path, str(tmp_path))
    code, out, err = _hook(json.dumps({"transcript_path": transcript}).encode(), wctx_home, close=False)
    assert code == 0
    assert wait_for_log(wctx_home, " ok ")


def test_the_installed_command_runs(run_cli, git_repo, store, wctx_home, agent_dirs, tmp_path):
    claude, _ = agent_dirs
    a = git_repo("repo-a", {"app/main.py": "x = 1\n"})
    wctx.register_repo(store, a.path)
    assert run_cli(["hooks", "install", "claude-code", "--python", sys.executable]).code == 0
    command = load(claude / "settings.json")["hooks"]["SessionEnd"][0]["hooks"][0]["command"]
    transcript = _render(tmp_path / "s.jsonl", a.path, a.path, str(tmp_path))
    proc = subprocess.run(
        command,
        shell=True,
        input=json.dumps({"transcript_path": transcript}).encode(),
        env=dict(os.environ, WCTX_HOME=wctx_home),
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0
    assert wait_for_log(wctx_home, " ok ")
    assert [s["agent"] for s in wctx.list_sessions(store)] == ["claude-code"]


def test_the_hook_can_run_in_the_foreground(git_repo, store, wctx_home, tmp_path, monkeypatch):
    a = git_repo("repo-a", {"app/main.py": "x = 1\n"})
    wctx.register_repo(store, a.path)
    transcript = _render(tmp_path / "s.jsonl", a.path, a.path, str(tmp_path))
    monkeypatch.setenv("WCTX_HOOK_FOREGROUND", "1")
    code, out, err = _hook(json.dumps({"transcript_path": transcript}).encode(), wctx_home)
    assert code == 0
    with open(os.path.join(wctx_home, "hooks.log"), encoding="utf-8") as fh:
        assert " ok - imported ses-" in fh.read()  # already there when the hook returned


def test_home_is_pinned_into_the_hook_and_uninstall_dry_run_shows_the_removal(run_cli, agent_dirs, tmp_path):
    claude, _ = agent_dirs
    home = tmp_path / "team home"
    assert run_cli(["--home", home, "hooks", "install", "claude-code"]).code == 0
    command = load(claude / "settings.json")["hooks"]["SessionEnd"][0]["hooks"][0]["command"]
    assert command.endswith(" --home '%s' import --hook" % home)
    r = run_cli(["hooks", "uninstall", "claude-code", "--dry-run"])
    assert r.code == 0 and "would remove 2" in r.out and "-" in r.out
    assert load(claude / "settings.json")["hooks"]["SessionEnd"]


@pytest.mark.skipif(os.name != "posix", reason="symlinks and file modes")
def test_install_and_uninstall_write_through_a_symlink_and_keep_a_private_mode(run_cli, agent_dirs, tmp_path):
    claude, _ = agent_dirs
    claude.mkdir()
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "settings.json"
    real.write_text(json.dumps({"env": {"ANTHROPIC_API_KEY": "planted"}}))
    os.chmod(str(real), 0o600)
    link = claude / "settings.json"
    os.symlink(str(real), str(link))

    for command in (["hooks", "install", "claude-code"], ["hooks", "uninstall", "claude-code"]):
        r = run_cli(command)
        assert r.code == 0, r
        assert os.path.islink(str(link)) and os.path.realpath(str(link)) == os.path.realpath(str(real))
        assert oct(os.stat(str(real)).st_mode & 0o777) == oct(0o600)
        backup = str(link) + ".wctx-backup"
        assert oct(os.stat(backup).st_mode & 0o777) == oct(0o600)
        if command[1] == "install":
            assert "SessionEnd" in load(real)["hooks"]
    assert "hooks" not in load(real) or not load(real)["hooks"].get("SessionEnd")
    assert load(real)["env"] == {"ANTHROPIC_API_KEY": "planted"}


@pytest.mark.skipif(os.name != "posix", reason="file modes")
def test_a_new_settings_file_is_private(run_cli, agent_dirs):
    claude, _ = agent_dirs
    assert run_cli(["hooks", "install", "claude-code"]).code == 0
    assert oct(os.stat(str(claude / "settings.json")).st_mode & 0o777) == oct(0o600)


def test_a_vendored_wctx_py_hook_reuses_compiled_bytecode_and_ignores_the_agents_python_env(
    git_repo, store, wctx_home, tmp_path
):
    """A wctx.py run as a script is compiled from source on every start; the hook imports it
    instead, isolated, so its bytecode is cached beside it even when the agent's environment
    says PYTHONDONTWRITEBYTECODE, and a PYTHONPATH there cannot swap in another wctx."""
    vendored = tmp_path / "tools" / "wctx"
    vendored.mkdir(parents=True)
    for name in ("wctx.py", "wctx_mcp.py"):
        with open(os.path.join(os.path.dirname(WCTX_SCRIPT), name), "rb") as fh:
            (vendored / name).write_bytes(fh.read())
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    (decoy / "wctx.py").write_text("import sys\nprint('decoy wctx ran')\nsys.exit(3)\n")
    a = git_repo("repo-a", {"app/main.py": "x = 1\n"})
    wctx.register_repo(store, a.path)
    settings = tmp_path / "claude" / "settings.json"
    env = dict(os.environ, WCTX_HOME=wctx_home)
    done = subprocess.run(
        [
            sys.executable,
            str(vendored / "wctx.py"),
            "hooks",
            "install",
            "claude-code",
            "--settings",
            str(settings),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and done.stdout.count("ran from a clean shell") == 2, (
        done.stdout + done.stderr
    )
    start = load(settings)["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert str(vendored / "wctx.py") in start
    shutil.rmtree(str(vendored / "__pycache__"), ignore_errors=True)  # written by the probe run
    agent_env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "WCTX_HOME": wctx_home,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPATH": str(decoy),
    }
    payload = {"session_id": "s1", "transcript_path": None, "cwd": a.path, "hook_event_name": "SessionStart"}
    proc = subprocess.run(
        ["sh", "-c", start],
        input=json.dumps(payload),
        cwd=str(decoy),
        env=agent_env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("wctx briefing for repo-a.")
    assert [n for n in os.listdir(str(vendored / "__pycache__")) if n.startswith("wctx.")], (
        "no bytecode cached"
    )


@pytest.mark.parametrize(
    "reported, event",
    [
        ("codex-cli 0.144.5", "Stop"),
        ("codex-cli 0.145.0-alpha.3", "Stop"),  # a pre-release may predate the SessionEnd event
        ("codex-cli 0.145.0", "SessionEnd"),
        ("codex-cli 0.146.0-beta.1", "SessionEnd"),
        ("codex-cli 1.2.0", "SessionEnd"),
        ("codex-cli (version unknown)", "Stop"),
    ],
)
def test_codex_session_end_follows_the_installed_codex_version(
    run_cli, agent_dirs, monkeypatch, tmp_path, reported, event
):
    _, codex = agent_dirs
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "codex"
    fake.write_text("#!/bin/sh\necho '%s'\n" % reported)
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", "%s:/usr/bin:/bin" % bin_dir)
    r = run_cli(["hooks", "install", "codex"])
    assert r.code == 0, r
    assert list(load(codex / "hooks.json")["hooks"]) == [event, "SessionStart"]
