"""Agent hooks run against the store they were installed for, and say so when they would not:
the installed command names its store, `hooks status --probe` and `doctor` fail on a hook that
would read or write another store, and Codex's hook trust is reported as Codex decides it."""

from __future__ import annotations

import hashlib
import json
import subprocess

import pytest

import wctx


@pytest.fixture(autouse=True)
def agent_dirs(tmp_path, monkeypatch, wctx_home):
    claude, codex = tmp_path / "agent-claude", tmp_path / "agent-codex"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "agent-gemini"))
    # No codex on PATH: install picks the event every Codex has, and nothing here runs a real one.
    (tmp_path / "empty-bin").mkdir()
    monkeypatch.setenv("PATH", "%s:/usr/bin:/bin" % (tmp_path / "empty-bin"))
    return claude, codex


def load(path):
    with open(str(path), encoding="utf-8") as fh:
        return json.load(fh)


def save(path, data):
    with open(str(path), "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2)


def commands_in(settings):
    return {
        event: group["hooks"][0]["command"]
        for event, groups in load(settings)["hooks"].items()
        for group in groups
    }


def run_shell(command, payload, home_dir):
    """Run a hook command as an agent started from a clean shell would: no WCTX_HOME at all."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home_dir), "LC_ALL": "C.UTF-8"}
    return subprocess.run(
        command, shell=True, input=json.dumps(payload).encode(), env=env, capture_output=True, timeout=60
    )


def test_a_hook_installed_under_wctx_home_names_that_store_and_briefs_from_it(
    run_cli, git_repo, store, wctx_home, agent_dirs, tmp_path
):
    claude, _ = agent_dirs
    lib = git_repo("parser-lib", {"lib/tokens.py": "def split_tokens(text):\n    return text.split()\n"})
    tool = git_repo("cli-tool", {"main.py": "print(1)\n"})
    wctx.register_repo(store, lib.path, workspace="toolchain")
    wctx.register_repo(store, tool.path, workspace="toolchain")
    wctx.relate(store, "cli-tool", "uses", "parser-lib")
    wctx.capture(
        store,
        [{"kind": "known_issue", "claim": "split_tokens drops quoted separators", "repo": "parser-lib"}],
        cwd=lib.path,
    )
    r = run_cli(["hooks", "install", "claude-code"])  # the store comes from $WCTX_HOME alone
    assert r.code == 0, r
    start = commands_in(claude / "settings.json")["SessionStart"]
    assert " --home " in start and wctx_home in start
    # An agent started from an IDE has no WCTX_HOME: the briefing still comes from this store.
    proc = run_shell(start, {"hook_event_name": "SessionStart", "cwd": tool.path}, tmp_path / "ide-home")
    assert proc.returncode == 0, proc.stderr
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "split_tokens drops quoted separators" in context
    assert not (tmp_path / "ide-home" / ".wctx").exists()


def test_status_probe_and_doctor_fail_when_a_hook_would_use_another_store(
    run_cli, wctx_home, agent_dirs, tmp_path
):
    claude, _ = agent_dirs
    other = tmp_path / "someone-elses-store"
    assert run_cli(["--home", other, "hooks", "install", "claude-code"]).code == 0
    r = run_cli(["hooks", "status", "--probe"])  # this store is $WCTX_HOME, not `other`
    assert r.code == 1
    assert str(other) in r.out and wctx_home in r.out and "FAILED" in r.out
    report = run_cli(["doctor", "--json"]).json
    hooks = next(c for c in report["checks"] if c["name"] == "hooks")
    assert hooks["status"] == "fail" and str(other) in hooks["detail"]
    assert "hooks install claude-code" in hooks["fix"]
    assert report["healthy"] is False
    # Reinstalled from here, the same checks pass.
    assert run_cli(["hooks", "install", "claude-code"]).code == 0
    assert run_cli(["hooks", "status", "--probe"]).code == 0
    hooks = next(c for c in run_cli(["doctor", "--json"]).json["checks"] if c["name"] == "hooks")
    assert hooks["status"] == "ok", hooks


def test_a_hook_that_names_no_store_fails_the_probe(run_cli, wctx_home, agent_dirs):
    """Earlier versions wrote commands without --home: they follow whatever WCTX_HOME the agent
    happens to have, which is how sessions went to ~/.wctx unnoticed."""
    claude, _ = agent_dirs
    assert run_cli(["hooks", "install", "claude-code"]).code == 0
    settings = load(claude / "settings.json")
    for groups in settings["hooks"].values():
        for group in groups:
            for hook in group["hooks"]:
                hook["command"] = hook["command"].replace(" --home %s" % wctx_home, "")
                assert "--home" not in hook["command"]
    save(claude / "settings.json", settings)
    r = run_cli(["hooks", "status", "--probe", "--json"])
    assert r.code == 1
    (probe, *_) = r.json["hooks"][0]["probes"]
    assert probe["ok"] is False and "names no store" in probe["error"]


def _codex_hash(event_label, entry):
    """What Codex 0.171 records as a hook's trusted_hash (sha256 of the hook's identity as
    canonical JSON), checked against `codex app-server` hooks/list's currentHash."""
    identity = {
        "event_name": event_label,
        "hooks": [
            {"type": "command", "command": entry["command"], "timeout": entry["timeout"], "async": False}
        ],
    }
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_codex_hooks_nobody_trusted_are_reported_with_the_way_to_trust_them(run_cli, agent_dirs):
    _, codex = agent_dirs
    r = run_cli(["hooks", "install", "codex"])
    assert r.code == 0, r
    assert "Trust all and continue" in r.out and "--dangerously-bypass-hook-trust" in r.out
    r = run_cli(["hooks", "status", "--probe", "--json"])
    row = next(h for h in r.json["hooks"] if h["agent"] == "codex")
    assert {t["event"]: t["trust"] for t in row["trust"]} == {
        "Stop": "untrusted",
        "SessionStart": "untrusted",
    }
    assert r.code == 1
    text = run_cli(["hooks", "status", "--probe"]).out
    assert "not trusted" in text and "Trust all and continue" in text


def test_codex_trust_recorded_for_the_installed_command_passes_and_a_changed_command_does_not(
    run_cli, agent_dirs, tmp_path
):
    _, codex = agent_dirs
    codex.mkdir()
    # A user hook of their own comes first: wctx's entries are the second group of each event.
    save(
        codex / "hooks.json",
        {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo mine", "timeout": 5}]}]}},
    )
    assert run_cli(["hooks", "install", "codex"]).code == 0
    hooks_json = str(codex / "hooks.json")
    hooks = load(hooks_json)["hooks"]
    start_entry = hooks["SessionStart"][1]["hooks"][0]
    stop_entry = hooks["Stop"][0]["hooks"][0]
    config = (
        'model = "o4"\n\n[features]\nhooks = true\n\n'
        '[hooks.state."%s:session_start:1:0"]\ntrusted_hash = "%s"\n\n'
        "[hooks.state.'%s:stop:0:0']\ntrusted_hash = \"%s\" # trusted in /hooks\n"
        % (hooks_json, _codex_hash("session_start", start_entry), hooks_json, _codex_hash("stop", stop_entry))
    )
    (codex / "config.toml").write_text(config)
    r = run_cli(["hooks", "status", "--probe", "--json"])
    row = next(h for h in r.json["hooks"] if h["agent"] == "codex")
    assert {t["event"]: t["trust"] for t in row["trust"]} == {"Stop": "trusted", "SessionStart": "trusted"}
    assert r.code == 0, r
    # Reinstalled for another store, the command changed: Codex treats it as a new hook.
    assert run_cli(["--home", tmp_path / "moved", "hooks", "install", "codex"]).code == 0
    r = run_cli(["--home", tmp_path / "moved", "hooks", "status", "--probe", "--json"])
    row = next(h for h in r.json["hooks"] if h["agent"] == "codex")
    assert {t["trust"] for t in row["trust"]} == {"modified"}
    assert r.code == 1
    doctor = run_cli(["--home", tmp_path / "moved", "doctor", "--json"]).json
    check = next(c for c in doctor["checks"] if c["name"] == "hooks")
    assert check["status"] == "fail" and "trust" in check["detail"]


def test_codex_with_its_hooks_feature_off_is_reported(run_cli, agent_dirs):
    _, codex = agent_dirs
    assert run_cli(["hooks", "install", "codex"]).code == 0
    (codex / "config.toml").write_text("[features]\nhooks = false\n")
    r = run_cli(["hooks", "status", "--json"])
    row = next(h for h in r.json["hooks"] if h["agent"] == "codex")
    assert row["problem"] and "features" in row["problem"]
