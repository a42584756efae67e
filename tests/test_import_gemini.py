"""Gemini CLI session files: per-repository files and commands, subagents, rewinds, and detection
that never takes one agent's transcript for another's."""

from __future__ import annotations

import hashlib
import json
import os

import pytest
from test_import import FIXTURES, activity, file_row, render, repo_row, repos  # noqa: F401

import wctx

SESSION_ID = "7c2e9d41-5b3a-4f8e-9a61-2d4c8b0e1f37"


@pytest.fixture(autouse=True)
def no_agent_env(monkeypatch):
    for name in ("CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CODEX_THREAD_ID", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(name, raising=False)


def gemini_layout(tmp_path, a, b, outside, project_root=True, subagent=True):
    """~/.gemini/tmp/<project>/ as Gemini CLI lays it out: .project_root and chats/."""
    project = tmp_path / "gemini" / "tmp" / "repo-a"
    chats = project / "chats"
    chats.mkdir(parents=True)
    if project_root:
        (project / ".project_root").write_text(a)
    digest = hashlib.sha256(a.encode()).hexdigest()
    for name, dest in (
        ("gemini_multi_repo.jsonl", chats / ("session-2026-03-02T09-00-%s.jsonl" % SESSION_ID[:8])),
        ("gemini_subagent.jsonl", chats / SESSION_ID / "sub-91ab.jsonl"),
    ):
        if name == "gemini_subagent.jsonl" and not subagent:
            continue
        with open(os.path.join(FIXTURES, name), encoding="utf-8") as fh:
            text = fh.read()
        for key, value in (
            ("@REPO_A@", a),
            ("@REPO_B@", b),
            ("@OUTSIDE@", outside),
            ("@PROJECT_HASH@", digest),
        ):
            text = text.replace(key, value)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text)
    return str(chats / ("session-2026-03-02T09-00-%s.jsonl" % SESSION_ID[:8]))


def test_gemini_session_files_and_commands_land_in_their_repositories(repos, store, tmp_path):  # noqa: F811
    a, b, outside = repos
    path = gemini_layout(tmp_path, a.path, b.path, outside, subagent=False)
    res = wctx.import_transcript(store, path)
    assert res["status"] == "imported" and res["agent"] == "gemini-cli"
    assert res["external_id"] == SESSION_ID
    act = activity(store, res["session"])
    main = file_row(act, "repo-a", "app/main.py")  # relative to the project root
    assert (main["reads"], main["edits"]) == (1, 0)
    upload = file_row(act, "repo-b", "src/upload.py")
    assert (upload["reads"], upload["edits"]) == (0, 1)
    paths = {(f["repo"], f["path"]) for f in act["files"]}
    # A cancelled write wrote nothing; a rewound message's write is not history any more.
    assert ("repo-a", "app/cancelled.py") not in paths and ("repo-a", "app/rewound.py") not in paths
    notes = next(f for f in act["files"] if f["path"].endswith("notes.txt"))
    assert notes["repo"] is None
    commands = {c["command"]: c["repo"] for c in act["commands"]}
    assert commands == {"git log -1 --oneline": "repo-b", "pytest -q": "repo-a"}
    assert [e["tool"] for e in act["errors"]] == ["run_shell_command"]
    assert "2 failed" in act["errors"][0]["error"]
    assert repo_row(act, "repo-a")["ran_here"] and not repo_row(act, "repo-b")["ran_here"]
    s = wctx.get_session(store, res["session"])["session"]
    assert s["cwd"] == a.path and s["repo"] == "repo-a"
    assert s["started_at"] == "2026-03-02T09:00:00.000Z" and s["ended_at"] == "2026-03-02T09:03:00.000Z"
    assert s["summary"].startswith("Traced the 419 upload failure into the SDK")
    evidence = wctx.get_session(store, res["session"])["evidence"]
    assert [(e["kind"], e["claim"], e["repo"]) for e in evidence] == [
        ("finding", "SDK swallows the 419", "repo-b")
    ]
    again = wctx.import_transcript(store, path)
    assert again["status"] == "unchanged" and again["session"] == res["session"]


def test_gemini_subagent_files_belong_to_their_session(repos, store, tmp_path):  # noqa: F811
    a, b, outside = repos
    path = gemini_layout(tmp_path, a.path, b.path, outside)
    res = wctx.import_transcript(store, path)
    act = activity(store, res["session"])
    assert file_row(act, "repo-b", "README.md")["reads"] == 1
    assert [s["id"] for s in act["subagents"]] == ["sub-91ab"]
    # Importing the folder imports the session once; the subagent file names its session.
    out = wctx.import_transcripts(store, [str(tmp_path / "gemini")], force=True)
    assert [r["session"] for r in out["results"]] == [res["session"]] and not out["failed"]
    sub = os.path.join(os.path.dirname(path), SESSION_ID, "sub-91ab.jsonl")
    assert wctx.import_transcript(store, sub)["session"] == res["session"]


def test_gemini_without_a_project_root_file_is_placed_only_by_a_matching_hash(repos, store, tmp_path):  # noqa: F811
    a, b, outside = repos
    path = gemini_layout(tmp_path, a.path, b.path, outside, project_root=False, subagent=False)
    rec = wctx.parse_transcript(path)
    assert rec.cwd is None  # nothing says where it ran: relative paths are not guessed
    assert ("repo-a", "app/main.py") not in {(None, p) for p in rec.files}
    assert wctx.parse_transcript(path, cwd_hint=b.path).cwd is None  # the hash says it is not b
    assert wctx.parse_transcript(path, cwd_hint=a.path).cwd == a.path


def test_a_gemini_file_given_another_agent_is_refused(run_cli, repos, tmp_path, store):  # noqa: F811
    a, b, outside = repos
    path = gemini_layout(tmp_path, a.path, b.path, outside, subagent=False)
    for agent in ("claude-code", "codex"):
        r = run_cli(["import", "--agent", agent, path])
        assert r.code == 2 and "gemini-cli" in r.err and agent in r.err, r
    assert wctx.list_sessions(store) == []


def test_an_imported_file_given_another_agent_is_still_refused(run_cli, repos, tmp_path, store):  # noqa: F811
    a, b, outside = repos
    path = render("claude_multi_repo.jsonl", tmp_path / "t", a=a.path, b=b.path, outside=outside)
    assert run_cli(["import", path]).code == 0
    r = run_cli(["import", "--agent", "codex", path])
    assert r.code == 2 and "claude-code" in r.err and "unchanged" not in r.out, r


def test_no_agent_file_is_taken_for_another(tmp_path):
    """Every fixture is detected as its own agent; a file mixing two agents' records is refused."""
    expected = {
        "claude_multi_repo.jsonl": "claude-code",
        "claude_subagents.jsonl": "claude-code",
        "claude_secrets.jsonl": "claude-code",
        "codex_multi_repo.jsonl": "codex",
        "codex_items.jsonl": "codex",
        "gemini_multi_repo.jsonl": "gemini-cli",
        "gemini_subagent.jsonl": "gemini-cli",
    }
    for name, agent in expected.items():
        assert wctx.detect_transcript_agent(os.path.join(FIXTURES, name)) == agent, name
    mixed = tmp_path / "mixed.jsonl"
    with open(os.path.join(FIXTURES, "gemini_multi_repo.jsonl"), encoding="utf-8") as fh:
        gemini = fh.readline()
    with open(os.path.join(FIXTURES, "claude_multi_repo.jsonl"), encoding="utf-8") as fh:
        claude = fh.readlines()[1]
    mixed.write_text(gemini + claude)
    with pytest.raises(wctx.UsageError, match="more than one agent"):
        wctx.detect_transcript_agent(str(mixed))
    # The old rule ("a sessionId means Claude Code") took a Gemini first record for Claude Code.
    only_meta = tmp_path / "meta.jsonl"
    only_meta.write_text(json.dumps({"sessionId": "x", "projectHash": "0" * 64, "startTime": "t"}) + "\n")
    assert wctx.detect_transcript_agent(str(only_meta)) == "gemini-cli"
