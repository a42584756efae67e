"""Hooks of a pip-installed wctx and of the built wctx.pyz, for Claude Code, Codex and Gemini CLI,
run the way the agents run them: installed into a temp HOME, each command then started from
`env -i PATH=/usr/bin:/bin` with the agent's documented payload on stdin. Session end imports the
session; session start prints the briefing in the agent's documented form
(hookSpecificOutput.additionalContext)."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

import pytest
from test_install import run, venv  # noqa: F401 - the module-scoped pip install
from test_pyz import SUPPORTED, interpreter, pyz  # noqa: F401 - the session-scoped archive

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


def run_hook(command, payload, home, extra=()):
    """The hook command as an agent runs it: through sh, from a bare environment (plus ``extra``
    NAME=VALUE settings the agent's own environment may carry)."""
    return subprocess.run(
        ["env", "-i", "PATH=" + CLEAN_PATH, "HOME=" + home, *extra, "sh", "-c", command],
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


@pytest.fixture(params=["pip", "pyz"])
def install(request):
    """How wctx was installed: {"kind", "argv" (how a user runs it), "start" (how every hook
    command it installs begins)}."""
    if request.param == "pip":
        venv = request.getfixturevalue("venv")
        return {"kind": "pip", "argv": [venv["wctx"]], "start": venv["wctx"] + " "}
    archive = request.getfixturevalue("pyz")
    start = "%s -I -S %s " % (shlex.quote(sys.executable), shlex.quote(archive))
    return {"kind": "pyz", "argv": [sys.executable, archive], "start": start}


@pytest.fixture
def world(install, tmp_path):
    return make_world(install["argv"], tmp_path)


def make_world(argv, tmp_path):
    home = str(tmp_path / "home")
    os.makedirs(home)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    env = {"HOME": home, "PATH": "%s:%s" % (bin_dir, CLEAN_PATH)}

    def wctx(*args, cwd=None, extra_env=None):
        done = run([*argv, *args], cwd=cwd or home, env=dict(env, **(extra_env or {})))
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


def trust_in_codex(codex_home):
    """Record trust for every hook in codex_home/hooks.json as Codex does when a person trusts
    them: [hooks.state."<path>:<event>:<group>:<handler>"] trusted_hash = sha256 of the hook's
    identity as canonical JSON (checked against codex-cli 0.171's hooks/list currentHash)."""
    path = os.path.join(codex_home, "hooks.json")
    with open(path, encoding="utf-8") as fh:
        hooks = json.load(fh)["hooks"]
    labels = {"SessionStart": "session_start", "SessionEnd": "session_end", "Stop": "stop"}
    lines = []
    for event, groups in hooks.items():
        for g, group in enumerate(groups):
            for h, hook in enumerate(group["hooks"]):
                identity = {
                    "event_name": labels[event],
                    "hooks": [
                        {
                            "type": "command",
                            "command": hook["command"],
                            "timeout": hook["timeout"],
                            "async": False,
                        }
                    ],
                }
                text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                digest = "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
                lines.append(
                    '[hooks.state."%s:%s:%d:%d"]\ntrusted_hash = "%s"\n' % (path, labels[event], g, h, digest)
                )
    with open(os.path.join(codex_home, "config.toml"), "a", encoding="utf-8") as fh:
        fh.write("\n".join(lines))


def check_briefing(done, world):
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = out["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("wctx briefing for repo-a.") and "untrusted data" in context
    assert "app/main.py (modified) calls upload_document; repo-b finding ev-" in context
    assert "upload_document never retries a 419" in context


def test_hooks_of_all_three_agents_run_from_a_clean_shell(world, install):
    home, wctx, a, b, tmp = world["home"], world["wctx"], world["a"], world["b"], world["tmp"]
    for agent in ("claude-code", "codex", "gemini-cli"):
        out = wctx("hooks", "install", agent)
        assert out.count("ran from a clean shell") == 2, out

    # Claude Code: ~/.claude/settings.json
    claude = installed_commands(os.path.join(home, ".claude", "settings.json"))
    assert set(claude) == {"SessionEnd", "SessionStart"}
    # The console script itself; the archive by absolute path under the interpreter that ran it.
    assert all(c.startswith(install["start"]) for c in claude.values()), claude
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

    # doctor runs every installed hook's probe, and says Codex will not run hooks nobody trusted.
    done = run([*install["argv"], "doctor", "--json"], cwd=home, env=world["env"])
    (hooks_check,) = [c for c in json.loads(done.stdout)["checks"] if c["name"] == "hooks"]
    assert done.returncode == 1 and hooks_check["status"] == "fail", hooks_check
    assert "Codex will not run the Stop hook (not trusted)" in hooks_check["detail"]
    trust_in_codex(os.path.join(home, ".codex"))  # what "Trust all and continue" records
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
    # Codex's documented SessionEnd payload (session-end.command.input): the session is imported.
    rollout = render(
        "codex_multi_repo.jsonl", str(world["tmp"] / "t" / "rollout.jsonl"),
        REPO_A=world["a"], REPO_B=world["b"], COMMIT_A="0" * 40,
    )  # fmt: skip
    payload = {
        "session_id": "019c0000-0000-7000-8000-000000000002",
        "transcript_path": rollout,
        "cwd": world["a"],
        "hook_event_name": "SessionEnd",
        "reason": "other",
    }
    done = run_hook(codex["SessionEnd"], payload, world["home"])
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert [s["agent"] for s in wait_for_sessions(world["wctx"], 2)].count("codex") == 1
    fake.write_text("#!/bin/sh\necho 'codex-cli 0.142.5'\n")
    world["wctx"]("hooks", "install", "codex")  # an older Codex: Stop instead, nothing left behind
    assert set(installed_commands(os.path.join(world["home"], ".codex", "hooks.json"))) == {
        "Stop",
        "SessionStart",
    }


@pytest.fixture
def pip_world(venv, tmp_path):  # noqa: F811
    return make_world([venv["wctx"]], tmp_path)


def test_python_m_wctx_works_and_its_hook_command_runs_from_a_clean_shell(pip_world, venv):  # noqa: F811
    world = pip_world
    done = run([venv["python"], "-m", "wctx", "--version"], cwd=world["home"], env=world["env"])
    assert done.returncode == 0 and "wctx" in done.stdout
    settings = os.path.join(world["home"], "other", "settings.json")
    done = run(
        [venv["python"], "-m", "wctx", "hooks", "install", "claude-code", "--settings", settings],
        cwd=world["home"],
        env=world["env"],
    )
    assert done.returncode == 0, done.stdout + done.stderr
    commands = installed_commands(settings)
    # The venv's interpreter by path, isolated: -m alone would look in the current directory first.
    assert commands["SessionEnd"] == "%s -I -m wctx --home %s import --hook" % (
        venv["python"],
        os.path.join(world["home"], ".wctx"),
    )
    assert "ran from a clean shell" in done.stdout
    # Run from a repository that has a wctx.py of its own: the installed wctx answers, not that file.
    with open(os.path.join(world["a"], "wctx.py"), "w", encoding="utf-8") as fh:
        fh.write("import sys\nprint('the repository wctx.py ran')\nsys.exit(3)\n")
    payload = {
        "session_id": "s1",
        "transcript_path": None,
        "cwd": world["a"],
        "hook_event_name": "SessionStart",
    }
    done = subprocess.run(
        ["env", "-i", "PATH=" + CLEAN_PATH, "HOME=" + world["home"], "sh", "-c", commands["SessionStart"]],
        input=json.dumps(payload), cwd=world["a"], capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and "repository wctx.py" not in done.stdout, done.stdout + done.stderr
    assert json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"].startswith(
        "wctx briefing for repo-a."
    )


@pytest.mark.parametrize("prefix", SUPPORTED)
def test_pyz_hook_under_each_python_keeps_its_compiled_module_cache(pyz, tmp_path, prefix):  # noqa: F811
    """Installed from the archive by each supported interpreter: the session-start command runs
    under env -i and briefs, and it fills the archive's compiled-module cache even when the
    agent's environment says PYTHONDONTWRITEBYTECODE (a zip cannot hold __pycache__, so without
    that cache every session start would compile wctx.py again)."""
    python = interpreter(prefix)
    world = make_world([python, pyz], tmp_path)
    settings = os.path.join(world["home"], ".claude", "settings.json")
    out = world["wctx"]("hooks", "install", "claude-code")
    assert out.count("ran from a clean shell") == 2, out
    start = installed_commands(settings)["SessionStart"]
    assert start.startswith("%s -I -S " % shlex.quote(python)), start
    cache = os.path.join(world["home"], ".cache", "wctx", "pyz")
    shutil.rmtree(cache, ignore_errors=True)  # written by install's probe
    payload = {
        "session_id": "s1",
        "transcript_path": None,
        "cwd": world["a"],
        "hook_event_name": "SessionStart",
    }
    check_briefing(run_hook(start, payload, world["home"], ["PYTHONDONTWRITEBYTECODE=1"]), world)
    assert [n for n in os.listdir(cache) if n.startswith("wctx-")], "no compiled module cached"


def test_a_hook_command_that_cannot_run_is_reported(pip_world, venv):  # noqa: F811
    world = pip_world
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
