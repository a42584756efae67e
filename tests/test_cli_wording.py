"""What the CLI says must match what it did: a relation whose note changed says "note updated",
counts agree in number, a session whose commands were withheld says so and why, and import's
help names every agent it reads."""

from __future__ import annotations

import json

import wctx


def test_relate_with_a_new_note_on_an_existing_relation_says_note_updated(git_repo, store, run_cli):
    for name in ("billing-api", "billing-web"):
        wctx.register_repo(store, git_repo(name, {"a.py": "x = 1\n"}).path, workspace="billing")
    assert run_cli(["relate", "billing-web", "calls", "billing-api"]).code == 0
    r = run_cli(["relate", "billing-web", "calls", "billing-api", "--note", "invoices over REST"])
    assert r.code == 0 and "note updated" in r.out and "already recorded" not in r.out, r
    r = run_cli(["relate", "billing-web", "calls", "billing-api", "--note", "invoices over gRPC"])
    assert "note updated" in r.out and "was: invoices over REST" in r.out
    r = run_cli(["relate", "billing-web", "calls", "billing-api", "--note", "invoices over gRPC"])
    assert "already recorded, unchanged" in r.out


def test_workspace_show_counts_in_the_right_number(git_repo, store, run_cli):
    one = git_repo("solo", {"a.py": "x = 1\n"})
    two = git_repo("pair", {"a.py": "x = 1\n"})
    wctx.register_repo(store, one.path, workspace="counts")
    wctx.register_repo(store, two.path, workspace="counts")
    wctx.capture(store, [{"kind": "note", "claim": "solo keeps one thing", "repo": "solo"}])
    wctx.capture(store, [{"kind": "note", "claim": "pair keeps %s" % w, "repo": "pair"} for w in ("a", "b")])
    out = run_cli(["workspace", "show", "counts"]).out
    assert "(1 item)" in out and "(2 items)" in out and "(1 items)" not in out


def _claude_line(cwd, sid, n, content, role="assistant"):
    return json.dumps(
        {
            "type": role,
            "cwd": cwd,
            "sessionId": sid,
            "version": "2.1.39",
            "uuid": "u%d" % n,
            "timestamp": "2026-05-01T10:00:%02d.000Z" % n,
            "message": {"role": role, "content": content},
        }
    )


def test_sessions_show_says_commands_were_withheld_and_why(git_repo, store, run_cli, tmp_path):
    repo = git_repo("svc", {"a.py": "x = 1\n"})
    wctx.register_repo(store, repo.path)
    sid = "22222222-bbbb-4ccc-8ddd-000000000002"
    lines = [_claude_line(repo.path, sid, 0, "run the tests", role="user")]
    for n in range(1, 8):  # seven shell commands, each left by a sanitiser as a placeholder
        lines.append(
            _claude_line(
                repo.path,
                sid,
                n,
                [{"type": "tool_use", "id": "t%d" % n, "name": "Bash",
                  "input": {"command": "[REDACTED_ARGUMENTS len=%d sha=ab%02d]" % (20 + n, n)}}],
            )
        )  # fmt: skip
    lines.append(
        _claude_line(
            repo.path,
            sid,
            9,
            [{"type": "tool_use", "id": "t9", "name": "Bash", "input": {"command": "make check"}}],
        )
    )
    path = tmp_path / ("%s.jsonl" % sid)
    path.write_text("\n".join(lines) + "\n")
    res = run_cli(["import", path, "--json"])
    assert res.code == 0, res
    session = res.json["results"][0]["session"]
    shown = run_cli(["sessions", "show", session])
    assert shown.code == 0, shown
    assert "commands (1):" not in shown.out
    assert "1 stored, 7 withheld" in shown.out and "placeholder" in shown.out, shown.out
    assert run_cli(["sessions", "show", session, "--json"]).json["activity"]["commands_withheld"] == 7


def test_import_help_names_every_agent_it_reads(run_cli):
    r = run_cli(["import", "--help"])
    for agent in ("Claude Code", "Codex", "Gemini CLI"):
        assert agent in r.out, agent


def test_an_interrupted_import_says_how_far_it_got(git_repo, store, run_cli, tmp_path, monkeypatch):
    repo = git_repo("svc", {"a.py": "x = 1\n"})
    wctx.register_repo(store, repo.path)
    folder = tmp_path / "transcripts"
    folder.mkdir()
    for n in range(5):
        sid = "33333333-cccc-4ddd-8eee-00000000000%d" % n
        read = [
            {"type": "tool_use", "id": "t%d" % n, "name": "Read", "input": {"file_path": repo.path + "/a.py"}}
        ]
        lines = [
            _claude_line(repo.path, sid, 0, "look at a.py number %d" % n, role="user"),
            _claude_line(repo.path, sid, 1, read),
        ]
        (folder / ("%s.jsonl" % sid)).write_text(
            "\n".join(lines) + "\n"
        )  # a read: a transcript with activity
    real = wctx.import_transcript
    calls = []

    def interrupted_on_the_fourth(*args, **kwargs):
        calls.append(args[1])
        if len(calls) == 4:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(wctx, "import_transcript", interrupted_on_the_fourth)
    r = run_cli(["import", folder])
    assert r.code == 130
    assert "interrupted after 3 of 5 transcripts" in r.err and "3 imported" in r.err, r.err
    assert "again" in r.err
    assert len(wctx.list_sessions(store)) == 3
