"""What each real agent client writes and needs, as users of Codex CLI, Gemini CLI and Claude Code
meet it: Codex's own MCP records at import, empty Codex transcripts, the trust and permission
settings without which an agent gets no wctx tools, and the hook log."""

from __future__ import annotations

import json
import os

import pytest

import wctx

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "transcripts")


@pytest.fixture(autouse=True)
def no_agent_env(monkeypatch):
    for name in ("CODEX_THREAD_ID", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(name, raising=False)


def render(name, dest_dir, **values):
    """A fixture template with its @KEY@ placeholders filled in; returns the new path."""
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as fh:
        text = fh.read()
    for key, value in values.items():
        text = text.replace("@%s@" % key.upper(), str(value))
    dest = os.path.join(str(dest_dir), name)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(dest, "w", encoding="utf-8") as fh:
        fh.write(text)
    return dest


@pytest.fixture
def pool_repo(git_repo, store):
    repo = git_repo("pool", {"pool.py": "def acquire():\n    return 1\n"})
    wctx.register_repo(store, repo.path, workspace="bench")
    return repo


# -- Codex 0.171: MCP calls as namespace + name, results as McpToolCall items ----------------------


def test_codex_record_evidence_stored_live_is_linked_at_import(pool_repo, store, tmp_path):
    live = wctx.capture(
        store,
        [{"kind": "finding", "claim": "acquire returns a constant", "repo": "pool"}],
        cwd=pool_repo.path,
        agent="mcp",
    )
    ev_id = live["evidence"][0]["id"]
    path = render(
        "codex_mcp_tools.jsonl", tmp_path, repo_a=pool_repo.path, commit_a=pool_repo.head, ev_live=ev_id
    )
    res = wctx.import_transcript(store, path)
    assert res["status"] == "imported" and res["agent"] == "codex"
    assert res["evidence"] == [{"id": ev_id, "duplicate": True}]
    assert store.one("SELECT count(*) AS n FROM evidence")["n"] == 1
    act = wctx.session_activity(store, res["session"])
    assert [e["id"] for e in act["live_evidence"]] == [ev_id]
    # The tools are counted under the name an agent's user knows them by.
    assert act["tool_calls"].get("mcp__wctx__record_evidence") == 2
    assert act["tool_calls"].get("mcp__wctx__search_evidence") == 1


def test_codex_record_evidence_not_stored_live_is_imported_and_a_failed_one_is_an_error(
    pool_repo, store, tmp_path
):
    # The same rollout imported into a store that never saw the live call (another machine's copy
    # of the transcript, say): the successful call's items become this session's evidence, the
    # failed call's do not, and its failure is listed with the session's tool errors.
    path = render(
        "codex_mcp_tools.jsonl",
        tmp_path,
        repo_a=pool_repo.path,
        commit_a=pool_repo.head,
        ev_live="ev-0000000000",
    )
    res = wctx.import_transcript(store, path)
    claims = [e["claim"] for e in wctx.get_session(store, res["session"])["evidence"]]
    assert claims == ["acquire returns a constant"]
    errors = wctx.session_activity(store, res["session"])["errors"]
    assert [e["tool"] for e in errors] == ["mcp__wctx__record_evidence"]
    assert errors[0]["error"].startswith("record_evidence: items[0].kind must be one of")


# -- a transcript with no activity is empty, whichever agent wrote it ------------------------------


def test_a_codex_rollout_with_no_activity_stores_nothing(pool_repo, store, run_cli, tmp_path):
    # `codex exec "say ok"` answered without a tool call: the rollout has meta, messages and token
    # counts, and nothing a session did.
    path = render("codex_no_activity.jsonl", tmp_path, repo_a=pool_repo.path, commit_a=pool_repo.head)
    claude = tmp_path / "0b0b0b0b-aaaa-4bbb-8ccc-00000000000e.jsonl"
    claude.write_text('{"type":"summary","summary":"Old work elsewhere","leafUuid":"x"}\n')
    r = run_cli(["import", path])
    assert r.code == 0 and r.out.split() == ["-", "empty", path]
    # The same words as for another agent's empty transcript.
    assert run_cli(["import", claude]).out.split() == ["-", "empty", str(claude)]
    assert store.one("SELECT count(*) AS n FROM sessions")["n"] == 0
    assert run_cli(["import", path]).out.split() == ["-", "empty", path]
    assert store.one("SELECT count(*) AS n FROM sessions")["n"] == 0


# -- hooks.log: a hook with nothing to do is not an error ------------------------------------------


def _import_hook(payload, home, transcript_env=None):
    import json
    import subprocess
    import sys

    from conftest import WCTX_SCRIPT

    env = dict(os.environ, WCTX_HOME=home, WCTX_HOOK_FOREGROUND="1")
    done = subprocess.run(
        [sys.executable, WCTX_SCRIPT, "import", "--hook"],
        input=json.dumps(payload).encode(),
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    return done.returncode, done.stdout


def test_a_session_end_without_a_transcript_leaves_no_error_in_hooks_log(store, wctx_home, tmp_path):
    # `claude mcp add` and `claude mcp list` end a "session" whose transcript was never written.
    missing = tmp_path / "cfg" / "projects" / "-work-app" / "6d8cbca4-1c3b-461b-9b80-1c4631ea7d26.jsonl"
    payload = {
        "session_id": "6d8cbca4-1c3b-461b-9b80-1c4631ea7d26",
        "transcript_path": str(missing),
        "cwd": str(tmp_path),
        "hook_event_name": "SessionEnd",
        "reason": "other",
    }
    for _ in range(2):
        assert _import_hook(payload, wctx_home) == (0, b"")
    log = os.path.join(wctx_home, "hooks.log")
    lines = open(log, encoding="utf-8").read().splitlines() if os.path.exists(log) else []
    assert not [line for line in lines if " error " in line]
    # A hook input that is broken is still worth a line.
    assert _import_hook(["not", "an", "object"], wctx_home) == (0, b"")
    assert [line for line in open(log, encoding="utf-8").read().splitlines() if " error " in line]


# -- doctor and hooks status give one fix for Codex hooks nobody trusted ---------------------------


def test_doctor_and_hooks_status_give_codex_s_trust_fix_not_a_reinstall(
    pool_repo, run_cli, tmp_path, monkeypatch
):
    codex = tmp_path / "codex-home"
    monkeypatch.setenv("CODEX_HOME", str(codex))
    assert run_cli(["hooks", "install", "codex"]).code == 0
    status = run_cli(["hooks", "status", "--probe"])
    assert status.code == 1
    fixes = [line for line in status.out.splitlines() if line.startswith("fix")]
    assert fixes and "Trust all and continue" in fixes[0] and "reinstall" not in " ".join(fixes)
    report = run_cli(["doctor", "--json"], cwd=pool_repo.path)
    hooks = next(c for c in report.json["checks"] if c["name"] == "hooks")
    assert hooks["status"] == "fail"
    assert "reinstall" not in hooks["fix"] and "Trust all and continue" in hooks["fix"]
    assert hooks["fix"] == "; ".join(line[len("fix: ") :] for line in fixes)
    # Reinstalling, the fix doctor gave before, changes nothing.
    assert run_cli(["hooks", "install", "codex"]).code == 0
    assert run_cli(["doctor", "--json"], cwd=pool_repo.path).json == report.json


# -- Gemini CLI headless: no tool it would have to ask about reaches the model ---------------------


def _gemini_settings(home, settings, policies=None):
    gemini = home / ".gemini"
    gemini.mkdir(parents=True, exist_ok=True)
    (gemini / "settings.json").write_text(json.dumps(settings))
    for name, text in (policies or {}).items():
        (gemini / "policies").mkdir(exist_ok=True)
        (gemini / "policies" / name).write_text(text)
    return gemini / "settings.json"


def _gemini_server(run_cli):
    """The Gemini CLI entry `wctx mcp-info` prints."""
    info = run_cli(["mcp-info", "--json"]).json
    text = next(s["text"] for s in info["snippets"] if s["client"] == "Gemini CLI")
    return json.loads(text)["mcpServers"]["wctx"]


@pytest.mark.parametrize(
    "allowed_by",
    [
        {"server": {"trust": True}},
        {"settings": {"mcp": {"allowed": ["wctx"]}}},
        {"settings": {"mcp": {"autoAllowInHeadless": True}}},
        {
            "policies": {
                "mine.toml": '[[rule]]\ntoolName = "mcp_wctx_*"\ndecision = "allow"\npriority = 100\n'
            }
        },
    ],
    ids=["trust", "mcp.allowed", "autoAllowInHeadless", "policy rule"],
)
def test_gemini_headless_without_trust_or_policy_is_reported_with_its_fix(
    pool_repo, run_cli, tmp_path, monkeypatch, allowed_by
):
    home = tmp_path / "gemini-home"
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    server = {"command": "python3", "args": [os.path.abspath(wctx.__file__), "mcp"]}
    settings = _gemini_settings(home, {"mcpServers": {"wctx": server}})
    status = run_cli(["hooks", "status", "--probe"])
    assert "gemini -p gets no wctx tools" in status.out, status.out
    fix = 'add "trust": true to mcpServers.wctx in %s' % settings
    assert "fix: " + fix in status.out.splitlines()
    doctor = run_cli(["doctor", "--json"], cwd=pool_repo.path).json
    check = next(c for c in doctor["checks"] if c["name"] == "gemini mcp")
    assert check["status"] == "warn" and check["fix"] == fix
    # Any of the ways Gemini CLI allows a server's tools headless settles it.
    _gemini_settings(
        home,
        dict(
            {"mcpServers": {"wctx": dict(server, **allowed_by.get("server", {}))}},
            **allowed_by.get("settings", {}),
        ),
        allowed_by.get("policies"),
    )
    assert "gemini -p gets no wctx tools" not in run_cli(["hooks", "status", "--probe"]).out
    doctor = run_cli(["doctor", "--json"], cwd=pool_repo.path).json
    assert next(c for c in doctor["checks"] if c["name"] == "gemini mcp")["status"] == "ok"


def test_gemini_mcp_info_entry_is_one_headless_gemini_uses(run_cli, tmp_path, monkeypatch):
    home = tmp_path / "gemini-home"
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    _gemini_settings(home, {"mcpServers": {"wctx": _gemini_server(run_cli)}})
    assert "gemini -p gets no wctx tools" not in run_cli(["hooks", "status"]).out
    assert "gemini -p" in run_cli(["mcp-info"]).out


def test_no_wctx_server_in_gemini_settings_says_nothing(pool_repo, run_cli, tmp_path, monkeypatch):
    home = tmp_path / "gemini-home"
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    _gemini_settings(home, {"mcpServers": {"other": {"command": "other-server"}}})
    assert "gemini -p" not in run_cli(["hooks", "status"]).out
    doctor = run_cli(["doctor", "--json"], cwd=pool_repo.path).json
    assert "gemini mcp" not in [c["name"] for c in doctor["checks"]]


# -- claude -p refuses a tool nobody allowed -------------------------------------------------------


def _read_only_tools():
    import wctx_mcp

    return ["mcp__wctx__" + t["name"] for t in wctx_mcp.TOOLS if t["readOnly"]]


def test_mcp_info_says_how_to_allow_the_read_only_tools_for_claude_p(run_cli):
    out = run_cli(["mcp-info"]).out
    assert "claude -p" in out
    assert "--allowedTools " + ",".join(_read_only_tools()) in out
    assert "permissions.allow" in out and "hooks install claude-code --allow-read-tools" in out


def test_hooks_install_claude_code_allows_the_read_only_tools_only_when_asked(run_cli, tmp_path, monkeypatch):
    claude = tmp_path / "claude"
    claude.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    settings = claude / "settings.json"
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(git status)"], "deny": ["Read(.env)"]}}))
    assert run_cli(["hooks", "install", "claude-code"]).code == 0
    assert json.loads(settings.read_text())["permissions"] == {
        "allow": ["Bash(git status)"],
        "deny": ["Read(.env)"],
    }
    r = run_cli(["hooks", "install", "claude-code", "--allow-read-tools"])
    assert r.code == 0 and "mcp__wctx__search_evidence" in r.out  # the diff shows what it adds
    permissions = json.loads(settings.read_text())["permissions"]
    assert permissions == {"allow": ["Bash(git status)"] + _read_only_tools(), "deny": ["Read(.env)"]}
    assert "mcp__wctx__record_evidence" not in permissions["allow"]  # writes stay the user's call
    before = settings.read_text()
    assert run_cli(["hooks", "install", "claude-code", "--allow-read-tools"]).code == 0
    assert settings.read_text() == before
    # Uninstalling takes out what install added, and leaves the user's own entries.
    r = run_cli(["hooks", "uninstall", "claude-code"])
    assert r.code == 0 and "mcp__wctx__search_evidence" in r.out
    assert json.loads(settings.read_text()) == {
        "permissions": {"allow": ["Bash(git status)"], "deny": ["Read(.env)"]}
    }
    # Only Claude Code has such a list.
    r = run_cli(["hooks", "install", "gemini-cli", "--allow-read-tools"])
    assert r.code == 2 and "claude-code" in r.err


# -- capture from Codex's sandboxed shell, with the store outside its writable roots ---------------


def test_a_read_only_store_inside_codex_says_which_codex_setting_makes_it_writable(
    pool_repo, run_cli, wctx_home, monkeypatch
):
    assert run_cli(["capture", "--note", "seed", "--repo", "pool"], cwd=pool_repo.path).code == 0
    # Codex's workspace-write sandbox: the store's directory is not writable from its shell.
    monkeypatch.setattr(wctx, "_writable", lambda path: False)
    monkeypatch.setenv("CODEX_THREAD_ID", "01a24f93-a7fe-7263-868c-3c47514053f3")
    r = run_cli(["capture", "--finding", "acquire is constant", "--repo", "pool"], cwd=pool_repo.path)
    assert r.code != 0 and len(r.err.strip().splitlines()) == 1
    assert "read-only here" in r.err
    assert "sandbox_workspace_write" in r.err and "writable_roots" in r.err and wctx_home in r.err
    # Outside Codex the message says nothing of Codex.
    monkeypatch.delenv("CODEX_THREAD_ID")
    r = run_cli(["capture", "--finding", "acquire is constant", "--repo", "pool"], cwd=pool_repo.path)
    assert r.code != 0 and "read-only here" in r.err and "Codex" not in r.err


def test_a_codex_mcp_call_made_before_the_server_was_up_is_a_failed_call(pool_repo, store, tmp_path):
    # Codex answers a call to an MCP tool it has not connected yet with "unsupported call: ..."
    # and writes no McpToolCall item: nothing reached the server, nothing is recorded.
    path = render(
        "codex_mcp_tools.jsonl",
        tmp_path,
        repo_a=pool_repo.path,
        commit_a=pool_repo.head,
        ev_live="ev-0000000000",
    )
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines(True)
    kept = []
    for line in lines:
        record = json.loads(line)
        payload = record.get("payload") or {}
        if (payload.get("item") or {}).get("id") == "call_0":
            continue  # no McpToolCall for a call the server never got
        if payload.get("type") == "function_call_output" and payload.get("call_id") == "call_0":
            payload["output"] = "unsupported call: mcp__wctxrecord_evidence"
            line = json.dumps(record) + "\n"
        kept.append(line)
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(kept)
    res = wctx.import_transcript(store, path)
    assert wctx.get_session(store, res["session"])["evidence"] == []
    errors = wctx.session_activity(store, res["session"])["errors"]
    assert [e["tool"] for e in errors] == ["mcp__wctx__record_evidence", "mcp__wctx__record_evidence"]
    assert errors[0]["error"].startswith("unsupported call")


def test_a_gemini_server_excluded_by_name_gets_the_fix_that_lifts_the_exclusion(
    run_cli, tmp_path, monkeypatch
):
    home = tmp_path / "gemini-home"
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    server = dict(_gemini_server(run_cli), trust=True)  # trust does not outrank an exclusion
    settings = _gemini_settings(home, {"mcpServers": {"wctx": server}, "mcp": {"excluded": ["wctx"]}})
    out = run_cli(["hooks", "status"]).out
    assert "gemini -p gets no wctx tools (excluded by mcp.excluded)" in out
    assert 'fix: remove "wctx" from mcp.excluded in %s' % settings in out.splitlines()
