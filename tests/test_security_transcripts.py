"""A transcript is untrusted input, line by line: bad text in one line is that line's problem,
never the file's or the directory's. A line nested thousands deep, half a character (a lone
surrogate) inside a command, a secret placed across the point where a long command, tool error or
summary is cut: each is imported, counted or redacted, never a traceback and never half a secret
in the store."""

from __future__ import annotations

import json
import os

import pytest
from conftest import store_file_bytes

import wctx

# A token of a kind the rules know, written for these tests, and the part of it that is secret.
TOKEN = "glpat-" + "Wq8Rt3Yu6Io9Pa2Sd5Fg"
SECRET = TOKEN[len("glpat-") :]


def _claude(path, cwd, sid, commands=(), errors=(), summaries=(), extra_lines=()):
    base = {"isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": sid, "version": "2.1.39",
            "gitBranch": "main"}  # fmt: skip
    out = [
        json.dumps({"type": "summary", "summary": s, "leafUuid": "l%d" % n}) for n, s in enumerate(summaries)
    ]
    for n, command in enumerate(commands):
        out.append(json.dumps(dict(base, type="assistant", uuid="a%d" % n, timestamp="2026-05-01T10:00:%02d.000Z" % n,
                                   message={"id": "m%d" % n, "type": "message", "role": "assistant", "content": [
                                       {"type": "tool_use", "id": "t%d" % n, "name": "Bash",
                                        "input": {"command": command}}]})))  # fmt: skip
    for n, error in enumerate(errors):
        out.append(json.dumps(dict(base, type="assistant", uuid="b%d" % n, timestamp="2026-05-01T10:01:%02d.000Z" % n,
                                   message={"id": "e%d" % n, "type": "message", "role": "assistant", "content": [
                                       {"type": "tool_use", "id": "x%d" % n, "name": "Bash",
                                        "input": {"command": "false %d" % n}}]})))  # fmt: skip
        out.append(json.dumps(dict(base, type="user", uuid="c%d" % n, timestamp="2026-05-01T10:01:%02d.500Z" % n,
                                   message={"role": "user", "content": [
                                       {"type": "tool_result", "tool_use_id": "x%d" % n, "is_error": True,
                                        "content": error}]})))  # fmt: skip
    out[1:1] = list(extra_lines)
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as fh:
        fh.write("\n".join(out) + "\n")
    return str(path)


def _codex(path, cwd, sid, commands, extra_lines=()):
    out = [json.dumps({"timestamp": "2026-05-02T09:00:00.000Z", "type": "session_meta", "payload": {
        "id": sid, "timestamp": "2026-05-02T09:00:00.000Z", "cwd": cwd, "cli_version": "0.146.0"}})]  # fmt: skip
    out.extend(extra_lines)
    for n, command in enumerate(commands):
        out.append(json.dumps({"timestamp": "2026-05-02T09:00:%02d.000Z" % (n + 1), "type": "response_item",
                               "payload": {"type": "function_call", "name": "shell", "call_id": "c%d" % n,
                                           "arguments": json.dumps({"command": ["bash", "-lc", command],
                                                                    "workdir": cwd})}}))  # fmt: skip
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as fh:
        fh.write("\n".join(out) + "\n")
    return str(path)


def _gemini(path, cwd, sid, commands, extra_lines=()):
    out = [json.dumps({"sessionId": sid, "projectHash": "0" * 64, "startTime": "2026-05-03T08:00:00.000Z",
                       "lastUpdated": "2026-05-03T08:05:00.000Z", "kind": "main"})]  # fmt: skip
    out.extend(extra_lines)
    for n, command in enumerate(commands):
        out.append(json.dumps({"id": "m%d" % n, "timestamp": "2026-05-03T08:01:%02d.000Z" % n, "type": "gemini",
                               "content": "", "toolCalls": [{"id": "run-%d" % n, "name": "run_shell_command",
                                                             "args": {"command": command, "dir_path": cwd},
                                                             "status": "success",
                                                             "timestamp": "2026-05-03T08:01:%02d.000Z" % n}]}))  # fmt: skip
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as fh:
        fh.write("\n".join(out) + "\n")
    return str(path)


WRITERS = {
    "claude-code": lambda path, cwd, n, commands, extra=(): _claude(
        path, cwd, "7f3e2a10-0000-4000-8000-%012d" % n, commands=commands, extra_lines=extra
    ),
    "codex": lambda path, cwd, n, commands, extra=(): _codex(
        path, cwd, "01a2b3c4-0000-7000-8000-%012d" % n, commands, extra
    ),
    "gemini-cli": lambda path, cwd, n, commands, extra=(): _gemini(
        path, cwd, "5e6f7a8b-0000-4000-8000-%012d" % n, commands, extra
    ),
}


@pytest.fixture
def repo(git_repo, run_cli):
    r = git_repo("orders", {"main.py": "print(1)\n"})
    assert run_cli(["repo", "add", r.path]).code == 0
    return r


def _commands(run_cli, session):
    shown = run_cli(["sessions", "show", session, "--json"])
    assert shown.code == 0, shown
    return [c["command"] for c in shown.json["activity"]["commands"]]


# -- redact first, then cut ---------------------------------------------------------------------


def _no_part_of_the_secret(home, outputs):
    """Not the secret, nor any 8 characters of it, in the store's bytes or in what was printed."""
    pieces = {SECRET[i : i + 8] for i in range(len(SECRET) - 7)}
    raw = store_file_bytes(home).decode("utf-8", "replace")
    found = sorted(p for p in pieces if p in raw or any(p in o for o in outputs))
    assert found == [], found


@pytest.mark.parametrize("agent", sorted(WRITERS))
def test_a_secret_across_the_cut_of_a_long_command_is_redacted_whole(
    agent, repo, run_cli, wctx_home, tmp_path
):
    limit = wctx.MAX_STORED_COMMAND
    # The token starts a few characters before the cut, at the cut, and just after it.
    commands = [
        "curl -s https://api.example.org/x " + "q" * (limit - 34 - k) + " " + TOKEN for k in (-1, 0, 3, 9, 17)
    ]
    path = WRITERS[agent](tmp_path / ("long-%s.jsonl" % agent), repo.path, 1, commands)
    res = run_cli(["import", path, "--json"])
    assert res.code == 0, res
    stored = _commands(run_cli, res.json["results"][0]["session"])
    assert len(stored) == len(commands)
    assert all(c.endswith("…[truncated]") or "REDACTED" in c for c in stored), stored
    _no_part_of_the_secret(wctx_home, [res.out, res.err, json.dumps(stored)])


def test_a_secret_across_the_cut_of_a_tool_error_or_a_summary_is_redacted_whole(
    repo, run_cli, wctx_home, tmp_path
):
    error_limit = wctx.MAX_STORED_ERROR
    # The token begins 8 to 24 characters before the cut (whitespace folded first).
    errors = ["Error: " + "w" * (error_limit - 7 - k) + " " + TOKEN + " more" for k in (16, 20, 24)]
    errors.append("Error:" + " " * (4 * error_limit - 20) + TOKEN + " after a long run of blanks")
    summaries = ["s" * (wctx.MAX_SUMMARY_CHARS - 20), TOKEN + " then the rest"]
    path = _claude(tmp_path / "errs.jsonl", repo.path, "7f3e2a10-0000-4000-8000-00000000e770",
                   errors=errors, summaries=summaries)  # fmt: skip
    res = run_cli(["import", path, "--json"])
    assert res.code == 0, res
    session = res.json["results"][0]["session"]
    shown = run_cli(["sessions", "show", session, "--json"])
    assert shown.code == 0 and len(shown.json["activity"]["errors"]) == len(errors), shown
    _no_part_of_the_secret(wctx_home, [res.out, shown.out])


# -- a line nested thousands deep -----------------------------------------------------------------

DEEP_LINES = {
    "unclosed objects": '{"type":' * 2500,
    "closed arrays": '{"type": "user", "x": ' + "[" * 4000 + "]" * 4000 + "}",
    "closed objects": '{"payload": ' + '{"a": ' * 3000 + "1" + "}" * 3000 + "}",
}


@pytest.mark.parametrize("agent", sorted(WRITERS))
@pytest.mark.parametrize("where", ["second line", "first lines"])
def test_a_deeply_nested_line_is_one_bad_line(agent, where, repo, run_cli, tmp_path):
    extra = list(DEEP_LINES.values())
    path = WRITERS[agent](
        tmp_path / ("deep-%s.jsonl" % agent), repo.path, 2, ["make build", "make test"], extra
    )
    if where == "first lines":  # before anything that says which agent wrote it
        with open(path, encoding="utf-8") as fh:
            body = fh.read()
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("\n".join(extra) + "\n" + body)
    res = run_cli(["import", path, "--json"])
    assert res.code == 0, res
    result = res.json["results"][0]
    assert result["bad_lines"] >= len(extra), result
    assert _commands(run_cli, result["session"]) == ["make build", "make test"]


# -- half a character -----------------------------------------------------------------------------


@pytest.mark.parametrize("agent", sorted(WRITERS))
def test_a_lone_surrogate_in_a_command_is_that_lines_problem(agent, repo, run_cli, tmp_path):
    commands = ["printf 'mood: \ud83d'", "make lint", "echo \udc00 tail", "make test"]
    path = WRITERS[agent](tmp_path / ("half-%s.jsonl" % agent), repo.path, 3, commands)
    res = run_cli(["import", path, "--json"])
    assert res.code == 0, res
    stored = _commands(run_cli, res.json["results"][0]["session"])
    assert "make lint" in stored and "make test" in stored, stored
    for command in stored:
        command.encode("utf-8")  # no half character reached the store


def test_a_directory_import_goes_past_a_file_with_half_characters(repo, run_cli, tmp_path):
    folder = tmp_path / "rollouts"
    folder.mkdir()
    for n in range(5):
        commands = ["make step-%d" % n] + (["cat \ud83d.log", "ls \udfff"] if n in (1, 3) else [])
        _codex(
            folder / ("rollout-%d.jsonl" % n),
            repo.path,
            "01a2b3c4-0000-7000-8000-0000000001%02d" % n,
            commands,
        )
    extra = folder / "rollout-deep.jsonl"
    _codex(
        extra,
        repo.path,
        "01a2b3c4-0000-7000-8000-000000000199",
        ["make deep"],
        [DEEP_LINES["unclosed objects"]],
    )
    res = run_cli(["import", str(folder), "--json"])
    assert res.code == 0, res
    assert res.json["failed"] == [] and len(res.json["results"]) == 6, res.json
    sessions = run_cli(["sessions", "--json"]).json
    sessions = sessions.get("sessions", sessions) if isinstance(sessions, dict) else sessions
    assert len(sessions) == 6
    assert os.path.exists(str(extra))
