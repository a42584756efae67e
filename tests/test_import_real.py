"""Import every real transcript in ../shared/data/transcripts (MIT-licensed Claude Code and Codex
sessions, see SOURCES.md there) and check the counts against a tiny independent scan of the same
files. Skipped cleanly when the folder is not next to the project."""

from __future__ import annotations

import glob
import json
import os
from pathlib import Path

import pytest
from conftest import missing

import wctx

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "transcripts"


@pytest.fixture(autouse=True, scope="module")
def _shared_transcripts_present():
    if not SHARED.is_dir():
        missing("shared transcripts not present at %s" % SHARED)


EDIT_TOOLS = {
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "Write": "file_path",
    "NotebookEdit": "notebook_path",
}


def transcripts():
    return sorted(glob.glob(str(SHARED / "*.jsonl")))


def records(path):
    with open(path, "rb") as fh:
        for raw in fh:
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            if isinstance(obj, dict):
                yield obj


def subagent_files(path):
    return sorted(glob.glob(os.path.join(path[: -len(".jsonl")], "subagents", "*.jsonl")))


def scan_claude(path):
    """Independent count: tool_use blocks (by id), edited paths, main-file cwd changes, times."""
    ids, anonymous, edited, cwds, times = set(), 0, set(), [], []
    for p in [path] + subagent_files(path):
        for obj in records(p):
            ts = obj.get("timestamp")
            if isinstance(ts, str) and ts[:2] == "20":
                times.append(ts)
            cwd = obj.get("cwd")
            if p == path and isinstance(cwd, str) and cwd.startswith("/") and (not cwds or cwds[-1] != cwd):
                cwds.append(cwd)
            message = obj.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else ():
                if (
                    isinstance(block, dict)
                    and block.get("type") == "tool_use"
                    and obj.get("type") == "assistant"
                ):
                    if block.get("id"):
                        ids.add(block["id"])
                    else:
                        anonymous += 1
                    key = EDIT_TOOLS.get(block.get("name"))
                    value = (block.get("input") or {}).get(key) if key else None
                    if isinstance(value, str) and value.startswith("/"):
                        edited.add(os.path.normpath(value))
    return {
        "tool_calls": len(ids) + anonymous,
        "edited": edited,
        "cwds": cwds,
        "start": min(times),
        "end": max(times),
    }


def scan_codex(path):
    calls, meta = 0, None
    for obj in records(path):
        payload = obj.get("payload") if isinstance(obj.get("payload"), dict) else {}
        if obj.get("type") == "session_meta" and meta is None:
            meta = payload
        if obj.get("type") == "response_item" and payload.get("type") in (
            "function_call",
            "custom_tool_call",
            "local_shell_call",
        ):
            calls += 1
    return {"tool_calls": calls, "meta": meta}


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    home = tmp_path_factory.mktemp("wctx-real")
    store = wctx.open_store(str(home))
    try:
        res = wctx.import_transcripts(store, [str(SHARED)])
        yield store, res
    finally:
        store.close()


def test_every_transcript_becomes_one_session(imported):
    store, res = imported
    assert res["failed"] == []
    imported_paths = sorted(r["transcript"] for r in res["results"])
    assert imported_paths == transcripts()  # subagent files are read with their parent, not as sessions
    assert store.one("SELECT count(*) AS n FROM sessions")["n"] == len(transcripts())


@pytest.mark.parametrize("name", [os.path.basename(p) for p in transcripts()] if SHARED.is_dir() else [])
def test_counts_match_an_independent_scan(imported, name):
    store, res = imported
    path = str(SHARED / name)
    r = next(x for x in res["results"] if x["transcript"] == path)
    act = wctx.session_activity(store, r["session"])
    session = wctx.get_session(store, r["session"])["session"]
    assert act["unparsable_lines"] == 0
    if r["agent"] == "claude-code":
        scan = scan_claude(path)
        assert sum(act["tool_calls"].values()) == scan["tool_calls"]
        # No repository is registered: every path is recorded as outside, never attributed.
        edited = {f["path"] for f in act["files"] if f["edits"]}
        assert edited == scan["edited"]
        assert all(f["repo"] is None for f in act["files"])
        assert act["cwds"][: len(scan["cwds"])] == scan["cwds"]
        assert len(act["subagents"]) == len(subagent_files(path))
        assert (session["started_at"], session["ended_at"]) == (scan["start"], scan["end"])
    else:
        scan = scan_codex(path)
        assert sum(act["tool_calls"].values()) == scan["tool_calls"]
        assert session["external_id"] == scan["meta"]["id"]
        commit = (scan["meta"].get("git") or {}).get("commit_hash")
        assert session["commit"] == commit


def test_spotter_session_details(imported):
    store, res = imported
    path = str(SHARED / "marot+spotter__8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl")
    r = next(x for x in res["results"] if x["transcript"] == path)
    act = wctx.session_activity(store, r["session"])
    assert r["external_id"] == "8463c716-a2ea-4c14-9efa-87158ebd9f20"
    assert act["agent_version"] == "2.1.39" and act["compactions"] == 1
    assert len(act["cwds"]) == 7  # the session moved between the worktree and its assets/ folder
    assert {s["id"]: s["type"] for s in act["subagents"]} == {
        "a7be2f0": "Explore",
        "acompact-f46190": "compaction",
    }
    bash = sum(
        1
        for p in [path] + subagent_files(path)
        for o in records(p)
        if o.get("type") == "assistant"
        for b in (o["message"].get("content") or [])
        if isinstance(b, dict) and b.get("name") == "Bash"
    )
    assert len(act["commands"]) == bash == 85
    assert sum(1 for e in act["errors"]) == 15


def test_redacted_codex_arguments_are_not_misread_as_paths(imported):
    store, res = imported
    codex = [r for r in res["results"] if r["agent"] == "codex" and "madshn" in r["transcript"]]
    assert len(codex) == 6
    for r in codex:
        act = wctx.session_activity(store, r["session"])
        session = wctx.get_session(store, r["session"])["session"]
        assert session["cwd"] is None  # "/redacted/path/<hash>" is not a directory we can name
        assert act["files"] == [] and act["commands"] == []
        assert act["redacted_values"] > 0
    stored = " ".join(
        str(v)
        for t in ("session_files", "session_commands", "sessions", "session_imports")
        for row in store.all("SELECT * FROM %s" % t)
        for v in tuple(row)
    )
    assert "/redacted/path" not in stored and "REDACTED_ARGUMENTS" not in stored


def test_reimporting_the_folder_changes_nothing(imported):
    store, res = imported
    again = wctx.import_transcripts(store, [str(SHARED)])
    assert {r["status"] for r in again["results"]} == {"unchanged"}
    assert store.one("SELECT count(*) AS n FROM sessions")["n"] == len(transcripts())
