"""Hooks of a pip-installed wctx, for Claude Code, Codex and Gemini CLI, run the way the agents run
them: installed into a temp HOME, each command then started from `env -i PATH=/usr/bin:/bin` with
the agent's documented payload on stdin. Session end imports the session; session start prints the
briefing in the agent's documented form (hookSpecificOutput.additionalContext)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time

import pytest
from test_install import run, venv  # noqa: F401 - the module-scoped pip install

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "transcripts")
CLEAN_PATH = "/usr/bin:/bin"
GIT = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com"]


def make_repo(path, files):
    os.makedirs(path)
    run([*GIT, "init", "-q"], cwd=path, check=True)
    for rel, text in files.items():
        full = os.path.join(path, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as fh:
            fh.write(text)
    run([*GIT, "add", "-A"], cwd=path, check=True)
    run([*GIT, "commit", "-q", "-m", "initial"], cwd=path, check=True)
    return path


def render(name, dest, **values):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as fh:
        text = fh.read()
    for key, value in values.items():
        text = text.replace("@%s@" % key, value)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(dest, "w", encoding="utf-8") as fh:
        fh.write(text)
    return dest


def run_hook(command, payload, home):
    """The hook command as an agent runs it: through sh, from a bare environment."""
    return subprocess.run(
        ["env", "-i", "PATH=" + CLEAN_PATH, "HOME=" + home, "sh", "-c", command],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def wait_for_sessions(wctx, n):
    deadline = time.monotonic() + 90
    while True:
        sessions = json.loads(wctx("sessions", "--json"))["sessions"]
        if len(sessions) >= n or time.monotonic() > deadline:
            return sessions
        time.sleep(0.2)


@pytest.fixture
def world(venv, tmp_path):  # noqa: F811
    home = str(tmp_path / "home")
    os.makedirs(home)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    env = {"HOME": home, "PATH": "%s:%s" % (bin_dir, CLEAN_PATH)}

    def wctx(*args, cwd=None, extra_env=None):
        done = run([venv["wctx"], *args], cwd=cwd or home, env=dict(env, **(extra_env or {})))
        assert done.returncode == 0, "%s: %s%s" % (args, done.stdout, done.stderr)
        return done.stdout

    a = make_repo(str(tmp_path / "repo-a"), {"app/main.py": "def main():\n    return 1\n"})
    b = make_repo(str(tmp_path / "repo-b"), {"src/upload.py": "def upload_document():\n    retry = 0\n"})
    wctx("repo", "add", a, "--name", "repo-a", "--workspace", "product")
    wctx("repo", "add", b, "--name", "repo-b", "--workspace", "product")
    wctx("relate", "repo-a", "uses", "repo-b")
    wctx(
        "capture",
        "--finding",
        "upload_document never retries a 419",
        "--file",
        "src/upload.py#upload_document",
        cwd=b,
    )
    with open(os.path.join(a, "app", "main.py"), "w", encoding="utf-8") as fh:
        fh.write("from src.upload import upload_document\n\n\ndef main():\n    return upload_document()\n")
    return {"home": home, "bin": bin_dir, "wctx": wctx, "a": a, "b": b, "tmp": tmp_path, "env": env}


def installed_commands(settings_path):
    with open(settings_path, encoding="utf-8") as fh:
        hooks = json.load(fh)["hooks"]
    return {event: groups[0]["hooks"][0]["command"] for event, groups in hooks.items()}


def check_briefing(done, world):
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = out["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("wctx briefing for repo-a.") and "untrusted data" in context
    assert "app/main.py (modified) calls upload_document; repo-b finding ev-" in context
    assert "upload_document never retries a 419" in context


def test_hooks_of_all_three_agents_run_from_a_clean_shell(world, venv):  # noqa: F811
    home, wctx, a, b, tmp = world["home"], world["wctx"], world["a"], world["b"], world["tmp"]
    for agent in ("claude-code", "codex", "gemini-cli"):
        out = wctx("hooks", "install", agent)
        assert out.count("ran from a clean shell") == 2, out

    # Claude Code: ~/.claude/settings.json
    claude = installed_commands(os.path.join(home, ".claude", "settings.json"))
    assert set(claude) == {"SessionEnd", "SessionStart"}
    assert claude["SessionEnd"].startswith(venv["wctx"] + " ")  # the console script itself
    transcript = render(
        "claude_multi_repo.jsonl", str(tmp / "t" / "11111111-aaaa-4bbb-8ccc-000000000001.jsonl"),
        REPO_A=a, REPO_B=b, OUTSIDE=str(tmp),
    )  # fmt: skip
    base = {"session_id": "11111111-aaaa-4bbb-8ccc-000000000001", "transcript_path": transcript, "cwd": a}
    check_briefing(
        run_hook(claude["SessionStart"], dict(base, hook_event_name="SessionStart", source="startup"), home),
        world,
    )
    done = run_hook(claude["SessionEnd"], dict(base, hook_event_name="SessionEnd", reason="exit"), home)
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert [s["agent"] for s in wait_for_sessions(wctx, 2)].count("claude-code") == 1

    # Codex: ~/.codex/hooks.json; no codex on PATH, so Stop (which every version runs).
    codex = installed_commands(os.path.join(home, ".codex", "hooks.json"))
    assert set(codex) == {"Stop", "SessionStart"}
    rollout = render(
        "codex_multi_repo.jsonl", str(tmp / "t" / "rollout.jsonl"), REPO_A=a, REPO_B=b, COMMIT_A="0" * 40
    )
    base = {"session_id": "019c0000-0000-7000-8000-000000000001", "transcript_path": rollout, "cwd": a}
    start = dict(
        base, hook_event_name="SessionStart", model="gpt-5", permission_mode="default", source="startup"
    )
    check_briefing(run_hook(codex["SessionStart"], start, home), world)
    stop = dict(
        base, hook_event_name="Stop", turn_id="t1", stop_hook_active=False, last_assistant_message="done"
    )
    assert run_hook(codex["Stop"], stop, home).returncode == 0
    assert [s["agent"] for s in wait_for_sessions(wctx, 3)].count("codex") == 1

    # Gemini CLI: ~/.gemini/settings.json, timeouts in milliseconds.
    with open(os.path.join(home, ".gemini", "settings.json"), encoding="utf-8") as fh:
        gemini_hooks = json.load(fh)["hooks"]
    assert gemini_hooks["SessionEnd"][0]["hooks"][0]["timeout"] == 60000
    gemini = installed_commands(os.path.join(home, ".gemini", "settings.json"))
    project = os.path.join(home, ".gemini", "tmp", "repo-a")
    session_file = render(
        "gemini_multi_repo.jsonl", os.path.join(project, "chats", "session-2026-03-02T09-00-7c2e9d41.jsonl"),
        REPO_A=a, REPO_B=b, OUTSIDE=str(tmp), PROJECT_HASH=hashlib.sha256(a.encode()).hexdigest(),
    )  # fmt: skip
    base = {
        "session_id": "7c2e9d41-5b3a-4f8e-9a61-2d4c8b0e1f37",
        "transcript_path": session_file,
        "cwd": a,
        "timestamp": "2026-03-02T09:03:00.000Z",
    }
    check_briefing(
        run_hook(gemini["SessionStart"], dict(base, hook_event_name="SessionStart", source="startup"), home),
        world,
    )
    done = run_hook(gemini["SessionEnd"], dict(base, hook_event_name="SessionEnd", reason="exit"), home)
    assert done.returncode == 0 and done.stdout == ""
    sessions = wait_for_sessions(wctx, 4)
    (gem,) = [s for s in sessions if s["agent"] == "gemini-cli"]
    # No .project_root was written: the hook's cwd placed the session, confirmed by projectHash.
    shown = json.loads(wctx("sessions", "show", gem["id"], "--json"))
    assert {(f["repo"], f["path"]) for f in shown["activity"]["files"]} >= {
        ("repo-a", "app/main.py"),
        ("repo-b", "src/upload.py"),
    }

    # doctor runs every installed hook's probe.
    report = json.loads(wctx("doctor", "--json"))
    (hooks_check,) = [c for c in report["checks"] if c["name"] == "hooks"]
    assert hooks_check["status"] == "ok" and "6 hook commands" in hooks_check["detail"]


def test_codex_gets_session_end_where_the_installed_codex_has_it(world):
    fake = world["bin"] / "codex"
    fake.write_text("#!/bin/sh\necho 'codex-cli 0.145.0'\n")
    fake.chmod(0o755)
    world["wctx"]("hooks", "install", "codex")
    codex = installed_commands(os.path.join(world["home"], ".codex", "hooks.json"))
    assert set(codex) == {"SessionEnd", "SessionStart"}
    fake.write_text("#!/bin/sh\necho 'codex-cli 0.142.5'\n")
    world["wctx"]("hooks", "install", "codex")  # an older Codex: Stop instead, nothing left behind
    assert set(installed_commands(os.path.join(world["home"], ".codex", "hooks.json"))) == {
        "Stop",
        "SessionStart",
    }


def test_python_m_wctx_works_and_its_hook_command_runs_from_a_clean_shell(world, venv):  # noqa: F811
    done = run([venv["python"], "-m", "wctx", "--version"], cwd=world["home"], env=world["env"])
    assert done.returncode == 0 and "wctx" in done.stdout
    settings = os.path.join(world["home"], "other", "settings.json")
    done = run(
        [venv["python"], "-m", "wctx", "hooks", "install", "claude-code", "--settings", settings],
        cwd=world["home"],
        env=world["env"],
    )
    assert done.returncode == 0, done.stdout + done.stderr
    command = installed_commands(settings)["SessionEnd"]
    assert command == "%s -m wctx import --hook" % venv["python"]  # the venv's interpreter, by path
    assert "ran from a clean shell" in done.stdout


def test_a_hook_command_that_cannot_run_is_reported(world, venv):  # noqa: F811
    settings = os.path.join(world["home"], "broken", "settings.json")
    done = run(
        [
            venv["wctx"],
            "hooks",
            "install",
            "claude-code",
            "--settings",
            settings,
            "--python",
            "/nonexistent/python3",
        ],
        cwd=world["home"],
        env=world["env"],
    )
    assert done.returncode == 1 and "FAILED, the hook cannot run" in done.stdout, done.stdout
