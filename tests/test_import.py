"""Session import: hand-written multi-repo fixtures (attribution and provenance per repository),
idempotency, grown transcripts, subagents, refused formats, capture attaching to a running session."""

from __future__ import annotations

import json
import os

import pytest

import wctx

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "transcripts")
AGENT_ENV = (
    "CLAUDECODE",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_SESSION_ID",
    "CODEX_THREAD_ID",
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
)


@pytest.fixture(autouse=True)
def no_agent_env(monkeypatch):
    # These tests may themselves run inside an agent session; its variables must not leak in.
    for name in AGENT_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def repos(git_repo, store, tmp_path):
    """repo-a (where sessions run) and repo-b (what they end up editing), one workspace."""
    a = git_repo("repo-a", {"app/main.py": "def main():\n    return 1\n"})
    b = git_repo("repo-b", {"src/upload.py": "def upload_document():\n    retry = 0\n"})
    wctx.register_repo(store, a.path, workspace="product")
    wctx.register_repo(store, b.path, workspace="product")
    outside = tmp_path / "outside"
    outside.mkdir()
    return a, b, str(outside)


def render(name, dest_dir, a=None, b=None, outside="/nowhere", commit_a="0" * 40, lines=None):
    """Copy a fixture template with its placeholders filled in; returns the new path."""
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as fh:
        text = fh.read()
    for key, value in (("@REPO_A@", a), ("@REPO_B@", b), ("@OUTSIDE@", outside), ("@COMMIT_A@", commit_a)):
        if value is not None:
            text = text.replace(key, str(value))
    if lines is not None:
        text = "".join(text.splitlines(True)[:lines])
    dest = os.path.join(str(dest_dir), name)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(dest, "w", encoding="utf-8") as fh:
        fh.write(text)
    return dest


def activity(store, session_id):
    return wctx.session_activity(store, session_id)


def repo_row(act, name):
    return next(r for r in act["repos"] if r["repo"] == name)


def file_row(act, repo, path):
    return next(f for f in act["files"] if f["repo"] == repo and f["path"] == path)


# -- Claude Code, multi-repo -----------------------------------------------------------------------


def test_claude_session_in_a_that_edits_b_is_attributed_to_b_with_b_provenance(repos, store, tmp_path):
    a, b, outside = repos
    path = render("claude_multi_repo.jsonl", tmp_path / "t", a=a, b=b, outside=outside)
    res = wctx.import_transcript(store, path)
    assert res["status"] == "imported"
    assert res["agent"] == "claude-code"
    assert res["external_id"] == "11111111-aaaa-4bbb-8ccc-000000000001"
    assert res["bad_lines"] == 1  # the garbage line is counted, not fatal
    act = activity(store, res["session"])

    upload = file_row(act, "repo-b", "src/upload.py")
    assert (upload["reads"], upload["edits"]) == (1, 1)
    main = file_row(act, "repo-a", "app/main.py")  # one absolute read, one relative edit from app/
    assert (main["reads"], main["edits"]) == (1, 1)
    notes = next(f for f in act["files"] if f["path"].endswith("notes.txt"))
    assert notes["repo"] is None and os.path.isabs(notes["path"]) and notes["edits"] == 1

    rb, ra = repo_row(act, "repo-b"), repo_row(act, "repo-a")
    assert not rb["ran_here"] and ra["ran_here"]
    # Claude Code records no commit: each repo gets its own HEAD at import, said so, never A's for B.
    assert rb["commit"] == b.head and rb["commit_source"] == "head_at_import"
    assert ra["commit"] == a.head and ra["commit_source"] == "head_at_import"
    assert rb["commit"] != a.head
    assert ra["branch"] == "main" and ra["branch_source"] == "transcript"
    assert rb["branch_source"] == "head_at_import"

    s = wctx.get_session(store, res["session"])["session"]
    assert s["repo"] == "repo-a" and s["cwd"] == a.path and s["branch"] == "main"
    assert s["started_at"] == "2026-03-01T10:00:00.000Z" and s["ended_at"] == "2026-03-01T10:04:01.000Z"
    assert s["summary"].startswith("Traced the upload failure into the SDK")
    assert act["cwds"] == [a.path, a.path + "/app", a.path]
    assert [c["command"] for c in act["commands"]] == ["python -m pytest -q"]
    assert act["commands"][0]["repo"] == "repo-a"
    assert [e["tool"] for e in act["errors"]] == ["Bash"]
    assert act["tool_calls"] == {
        "Read": 2,
        "Edit": 2,
        "Bash": 1,
        "Write": 1,
        "mcp__wctx__record_evidence": 1,
        "Grep": 1,
    }


def test_prose_is_never_evidence_but_record_evidence_calls_are(repos, store, tmp_path):
    a, b, outside = repos
    path = render("claude_multi_repo.jsonl", tmp_path / "t", a=a, b=b, outside=outside)
    res = wctx.import_transcript(store, path)
    evidence = wctx.get_session(store, res["session"])["evidence"]
    assert [(e["kind"], e["claim"], e["repo"]) for e in evidence] == [
        ("finding", "SDK swallows the 419", "repo-b")
    ]
    item = wctx.get_evidence(store, evidence[0]["id"])
    anchors = {(x["repo"], x["path"]): x for x in item["anchors"]}
    assert anchors[("repo-b", "src/upload.py")]["commit"] == b.head
    # "I think the bug is in the SDK" is assistant prose: nothing recorded from it.
    rows = store.all("SELECT claim, coalesce(detail, '') AS detail FROM evidence")
    assert len(rows) == 1 and not any("think" in r["claim"] + r["detail"] for r in rows)
    found = wctx.search(store, "419", repo="repo-a")["results"]
    assert [r["id"] for r in found] == [evidence[0]["id"]]


def test_record_evidence_already_stored_live_is_not_duplicated(repos, store, tmp_path):
    a, b, outside = repos
    live = wctx.capture(
        store, [{"kind": "finding", "claim": "live item", "repo": "repo-b"}], cwd=a.path, agent="mcp"
    )
    ev_id = live["evidence"][0]["id"]
    path = render("claude_multi_repo.jsonl", tmp_path / "t", a=a, b=b, outside=outside)
    with open(path, encoding="utf-8") as fh:
        text = fh.read().replace(
            '"text":"recorded 1 item"', '"text":"{\\"recorded\\": [{\\"id\\": \\"%s\\"}]}"' % ev_id
        )
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    res = wctx.import_transcript(store, path)
    assert res["evidence"] == [{"id": ev_id, "duplicate": True}]
    assert store.one("SELECT count(*) AS n FROM evidence")["n"] == 1
    live_row = activity(store, res["session"])["live_evidence"]
    assert [(e["id"], e["session"]) for e in live_row] == [(ev_id, live["session"])]
    assert wctx.import_transcript(store, path, force=True)["evidence"] == [{"id": ev_id, "duplicate": True}]
    assert len(activity(store, res["session"])["live_evidence"]) == 1


# -- Codex, multi-repo -----------------------------------------------------------------------------


def test_codex_commit_applies_only_to_the_cwd_repo(repos, store, tmp_path):
    a, b, outside = repos
    commit_a = a.head
    path = render("codex_multi_repo.jsonl", tmp_path / "t", a=a, b=b, commit_a=commit_a)
    a.write("app/later.py", "x = 2\n")
    a.commit("after the session")  # A moved on: the session's commit must stay the recorded one
    res = wctx.import_transcript(store, path)
    assert res["agent"] == "codex" and res["external_id"] == "019c0000-0000-7000-8000-00000000c0de"
    act = activity(store, res["session"])
    ra, rb = repo_row(act, "repo-a"), repo_row(act, "repo-b")
    assert ra["commit"] == commit_a and ra["commit_source"] == "session"
    assert rb["commit"] == b.head and rb["commit_source"] == "head_at_import"
    assert rb["commit"] != commit_a
    assert wctx.get_session(store, res["session"])["session"]["commit"] == commit_a

    # apply_patch input and patch_apply_end name the same edits: counted once.
    assert file_row(act, "repo-a", "app/main.py")["edits"] == 1
    assert file_row(act, "repo-a", "app/new_module.py")["edits"] == 1
    upload = file_row(act, "repo-b", "src/upload.py")
    assert (upload["reads"], upload["edits"]) == (1, 1)
    cmds = [(c["command"], c["repo"]) for c in act["commands"]]
    assert cmds == [
        ("rg -n retry src", "repo-b"),
        ("sed -n 1,20p src/upload.py", "repo-b"),
        ("python -m pytest -q", "repo-a"),
    ]
    assert len(act["errors"]) == 1  # exec_command_end and its output report the same failure
    assert sum(act["tool_calls"].values()) == 5
    assert act["redacted_values"] >= 1  # the redacted arguments were seen and skipped


# -- idempotency, growth, subagents ----------------------------------------------------------------


def _row_counts(store):
    return {
        t: store.one("SELECT count(*) AS n FROM %s" % t)["n"]
        for t in (
            "sessions",
            "evidence",
            "session_files",
            "session_commands",
            "session_repos",
            "session_imports",
        )
    }


def test_importing_twice_is_idempotent(repos, store, tmp_path):
    a, b, outside = repos
    path = render("claude_multi_repo.jsonl", tmp_path / "t", a=a, b=b, outside=outside)
    first = wctx.import_transcript(store, path)
    before = _row_counts(store)
    again = wctx.import_transcript(store, path)
    assert again["status"] == "unchanged" and again["session"] == first["session"]
    forced = wctx.import_transcript(store, path, force=True)
    assert forced["session"] == first["session"] and forced["status"] == "reimported"
    assert _row_counts(store) == before


def test_the_session_summary_does_not_grow_on_reimport(repos, store, tmp_path, run_cli):
    a, b, outside = repos
    path = render("claude_multi_repo.jsonl", tmp_path / "t", a=a, b=b, outside=outside, lines=6)
    first = wctx.import_transcript(store, path)
    summary = wctx.get_session(store, first["session"])["session"]["summary"]
    assert summary
    for _ in range(3):
        assert run_cli(["import", "--force", path]).code == 0
    assert wctx.get_session(store, first["session"])["session"]["summary"] == summary
    # A transcript that grew (the Codex Stop hook re-imports after every turn) keeps one copy too.
    render("claude_multi_repo.jsonl", tmp_path / "t", a=a, b=b, outside=outside)
    assert wctx.import_transcript(store, path)["status"] == "extended"
    grown = wctx.get_session(store, first["session"])["session"]["summary"]
    assert wctx.import_transcript(store, path, force=True)["status"] == "reimported"
    assert wctx.get_session(store, first["session"])["session"]["summary"] == grown
    assert grown.count(summary.split("; ")[-1]) == 1, grown


def test_a_grown_transcript_extends_its_session(repos, store, tmp_path):
    a, b, outside = repos
    path = render("claude_multi_repo.jsonl", tmp_path / "t", a=a, b=b, outside=outside, lines=6)
    first = wctx.import_transcript(store, path)
    act = activity(store, first["session"])
    assert [f["path"] for f in act["files"]] == ["app/main.py", "src/upload.py"]
    assert file_row(act, "repo-b", "src/upload.py")["edits"] == 0
    head_b_then = repo_row(act, "repo-b")["commit"]
    b.write("src/other.py", "y = 1\n")
    b.commit("b moved on")

    render("claude_multi_repo.jsonl", tmp_path / "t", a=a, b=b, outside=outside)
    grown = wctx.import_transcript(store, path)
    assert grown["session"] == first["session"] and grown["status"] == "extended"
    act = activity(store, first["session"])
    assert file_row(act, "repo-b", "src/upload.py")["edits"] == 1
    assert len(act["commands"]) == 1
    assert repo_row(act, "repo-b")["commit"] == head_b_then  # the first import's HEAD is kept
    s = wctx.get_session(store, first["session"])["session"]
    assert s["ended_at"] == "2026-03-01T10:04:01.000Z"
    assert store.one("SELECT count(*) AS n FROM sessions")["n"] == 1


def test_subagents_are_part_of_their_session(repos, store, tmp_path):
    a, b, outside = repos
    base = tmp_path / "t"
    main = render("claude_subagents.jsonl", base, a=a, b=b)
    for name in ("agent-a111111.jsonl", "agent-acompact-0a0a0a.jsonl"):
        render(os.path.join("claude_subagents", "subagents", name), base, a=a, b=b)
    res = wctx.import_transcripts(store, [str(base)])  # a directory: subagent files are not sessions
    assert res["failed"] == [] and len(res["results"]) == 1
    act = activity(store, res["results"][0]["session"])
    assert {s["id"]: s["type"] for s in act["subagents"]} == {
        "a111111": "Explore",
        "acompact-0a0a0a": "compaction",
    }
    assert file_row(act, "repo-b", "src/upload.py")["reads"] == 1
    assert [(c["command"], c["subagent"]) for c in act["commands"]] == [("ls %s/src" % b.path, "a111111")]
    assert act["tool_calls"] == {"Task": 1, "Edit": 1, "Read": 1, "Bash": 1}
    s = wctx.get_session(store, res["results"][0]["session"])["session"]
    assert s["ended_at"] == "2026-03-03T08:03:05.000Z"  # the compaction subagent ran last
    assert main.endswith("claude_subagents.jsonl")
    # Naming a subagent file imports the session it belongs to, never a session of its own.
    sub = wctx.import_transcript(store, str(base / "claude_subagents" / "subagents" / "agent-a111111.jsonl"))
    assert sub["session"] == res["results"][0]["session"] and sub["status"] == "unchanged"


# -- refused formats -------------------------------------------------------------------------------


def test_unknown_format_is_refused_by_name(run_cli, tmp_path):
    path = render("unknown_format.jsonl", tmp_path)
    r = run_cli(["import", path])
    assert r.code == 2
    assert "unrecognised transcript format" in r.err and "event" in r.err


def test_unsupported_version_is_refused_by_name(run_cli, tmp_path):
    path = render("claude_future_version.jsonl", tmp_path)
    r = run_cli(["import", path])
    assert r.code == 2
    assert "9.0.1" in r.err and "not supported" in r.err


def test_wrong_agent_flag_is_refused(run_cli, repos, tmp_path):
    a, b, outside = repos
    path = render("codex_multi_repo.jsonl", tmp_path, a=a, b=b)
    r = run_cli(["import", "--agent", "claude-code", path])
    assert r.code == 2 and "codex" in r.err


def test_directory_import_reports_failures_and_goes_on(run_cli, repos, tmp_path):
    a, b, outside = repos
    render("unknown_format.jsonl", tmp_path / "d")
    render("codex_multi_repo.jsonl", tmp_path / "d", a=a, b=b)
    r = run_cli(["import", "--json", tmp_path / "d"])
    assert r.code == 1
    data = r.json
    assert len(data["results"]) == 1 and data["results"][0]["agent"] == "codex"
    assert len(data["failed"]) == 1 and "unknown_format.jsonl" in data["failed"][0]["transcript"]


# -- CLI -------------------------------------------------------------------------------------------


def test_sessions_show_lists_files_per_repo_commands_errors_and_evidence(run_cli, repos, tmp_path):
    a, b, outside = repos
    path = render("claude_multi_repo.jsonl", tmp_path / "t", a=a, b=b, outside=outside)
    r = run_cli(["import", path])
    assert r.code == 0, r
    sid = r.out.split()[0]
    assert sid.startswith("ses-")
    r = run_cli(["sessions", "show", sid[:10]])
    assert r.code == 0, r
    assert "repo-b:src/upload.py  read 1, edited 1" in r.out
    assert "HEAD at import" in r.out
    assert "$ python -m pytest -q" in r.out
    assert "Bash: Exit code 1" in r.out
    assert "SDK swallows the 419" in r.out
    assert "outside every registered repository" in r.out
    data = run_cli(["sessions", "show", sid, "--json"]).json
    assert data["activity"]["files"] and data["session"]["agent"] == "claude-code"
    listing = run_cli(["sessions", "--repo", "repo-b", "--json"]).json["sessions"]
    assert [s["id"] for s in listing] == [sid]
    assert listing[0]["files_edited"] == 3


# -- capture inside a running agent session --------------------------------------------------------


def test_capture_attaches_to_the_running_claude_session(run_cli, repos, tmp_path, monkeypatch):
    a, b, outside = repos
    sid = "11111111-aaaa-4bbb-8ccc-000000000001"
    config = tmp_path / "claude"
    project = config / "projects" / "-tmp-repo-a"
    path = render("claude_multi_repo.jsonl", project, a=a, b=b, outside=outside)
    os.replace(path, str(project / (sid + ".jsonl")))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", sid)
    r = run_cli(["capture", "--json", "--note", "seen while debugging"], cwd=a.path)
    assert r.code == 0, r
    assert r.json["attached"]["how"] == "CLAUDE_CODE_SESSION_ID"
    captured = r.json["session"]
    r = run_cli(["import", "--json", str(project / (sid + ".jsonl"))])
    assert r.json["results"][0]["session"] == captured
    data = run_cli(["sessions", "show", captured, "--json"]).json
    assert data["session"]["agent"] == "claude-code" and data["session"]["external_id"] == sid
    assert {e["claim"] for e in data["evidence"]} == {"seen while debugging", "SDK swallows the 419"}
    assert data["session"]["started_at"] == "2026-03-01T10:00:00.000Z"


def test_capture_outside_an_agent_session_says_so(run_cli, repos):
    a, b, outside = repos
    r = run_cli(["capture", "--note", "plain note"], cwd=a.path)
    assert r.code == 0, r
    assert "(new: no running agent session found)" in r.out.splitlines()[0]
    assert run_cli(["capture", "--json", "--note", "plain note 2"], cwd=a.path).json["attached"] is None


def test_find_running_session_for_codex_and_older_claude(tmp_path):
    codex = tmp_path / "codex"
    day = codex / "sessions" / "2026" / "03" / "02"
    day.mkdir(parents=True)
    rollout = day / "rollout-2026-03-02T09-00-00-019c0000-0000-7000-8000-00000000c0de.jsonl"
    rollout.write_text("{}\n")
    found = wctx.find_running_session(
        str(tmp_path),
        env={"CODEX_THREAD_ID": "019c0000-0000-7000-8000-00000000c0de", "CODEX_HOME": str(codex)},
    )
    assert found["agent"] == "codex" and found["transcript"] == str(rollout)

    config = tmp_path / "claude"
    cwd = tmp_path / "work" / "app"
    cwd.mkdir(parents=True)
    folder = config / "projects" / ("".join(c if c.isalnum() else "-" for c in str(tmp_path / "work")))
    folder.mkdir(parents=True)
    (folder / "old.jsonl").write_text("{}\n")
    (folder / "new.jsonl").write_text("{}\n")
    os.utime(str(folder / "old.jsonl"), (1, 1))
    found = wctx.find_running_session(str(cwd), env={"CLAUDECODE": "1", "CLAUDE_CONFIG_DIR": str(config)})
    assert found["external_id"] == "new" and "newest" in found["how"]
    assert wctx.find_running_session(str(cwd), env={}) is None


def test_import_json_output_is_stable(run_cli, repos, tmp_path):
    a, b, outside = repos
    path = render("codex_multi_repo.jsonl", tmp_path, a=a, b=b)
    data = run_cli(["import", "--json", path]).json
    r = data["results"][0]
    assert set(r) >= {
        "session",
        "agent",
        "external_id",
        "transcript",
        "status",
        "files",
        "repos",
        "commands",
        "errors",
    }
    assert json.dumps(data)  # plain JSON


# -- secrets ---------------------------------------------------------------------------------------

PLANTED = [
    "AKIAQWERTYUIOPASDFGH",
    "PlantedAwsSecretKey0123456789abcdefghijkl",
    "Hunter2PlantedPw",
    "ghp_PlantedGithubToken0123456789abcdefghij",
    "eyJwbGFudGVkIjoiand0In0",
    "PlantedJwtSignature0123456789",
    "MIIEplantedPEMbodyQWERTYUIOPasdfghjkl0123456789",
    "ZXCVBNMplantedsecondline",
    "sk-ant-api03-PlantedAnthropicKey0123456789abcdef",
    "PlantedDbPass9",
    "PlantedSlackTok3n",
    "sk-proj-PlantedOpenaiKey0123456789abcdef",
    "AIzaPlantedGoogleKey0123456789abcdefghij",
    "PlantedAssignToken42",
]


def test_planted_secrets_never_reach_the_database_file(repos, store, wctx_home, tmp_path, run_cli):
    a, b, outside = repos
    path = render("claude_secrets.jsonl", tmp_path / "t", a=a)
    with open(path, encoding="utf-8") as fh:
        raw = fh.read()
    assert all(secret in raw for secret in PLANTED)  # the fixture really carries them
    res = wctx.import_transcript(store, path)
    act = activity(store, res["session"])
    assert len(act["commands"]) == 4 and len(act["errors"]) == 2 and len(res["evidence"]) == 1
    assert "REDACTED" in " ".join(c["command"] for c in act["commands"])
    shown = run_cli(["sessions", "show", res["session"], "--json"]).out
    assert "REDACTED" in shown
    for secret in PLANTED:
        assert secret not in shown
    blobs = b""
    for suffix in ("", "-wal", "-shm"):
        db = os.path.join(wctx_home, "wctx.db" + suffix)
        if os.path.exists(db):
            with open(db, "rb") as fh:
                blobs += fh.read()
    assert b"./deploy.sh" in blobs and b"key.pem" in blobs  # the commands themselves are in these bytes
    for secret in PLANTED:
        assert secret.encode() not in blobs, secret


def test_sessions_that_touched_a_file(run_cli, repos, tmp_path):
    a, b, outside = repos
    path = render("claude_multi_repo.jsonl", tmp_path / "t", a=a, b=b, outside=outside)
    sid = run_cli(["import", "--json", path]).json["results"][0]["session"]
    r = run_cli(["sessions", "--file", "src/upload.py", "--repo", "repo-b"])
    assert r.code == 0, r
    assert r.out.startswith(sid) and "edited repo-b:src/upload.py" in r.out
    data = run_cli(["sessions", "--file", "app/main.py", "--repo", "repo-a", "--json"]).json
    assert [(s["id"], s["reads"], s["edits"]) for s in data["sessions"]] == [(sid, 1, 1)]
    r = run_cli(["sessions", "--file", "src/upload.py"], cwd=a.path)  # repo-a's, which has none
    assert r.code == 0 and r.out.strip() == "no imported session read or edited repo-a:src/upload.py"


def test_codex_item_completed_records_are_read(repos, store, tmp_path):
    a, b, outside = repos
    path = render("codex_items.jsonl", tmp_path, a=a, b=b, commit_a=a.head)
    act = activity(store, wctx.import_transcript(store, path)["session"])
    upload = file_row(act, "repo-b", "src/upload.py")
    assert (upload["reads"], upload["edits"]) == (1, 1)
    assert [(c["command"], c["repo"]) for c in act["commands"]] == [("cat src/upload.py", "repo-b")]
    assert [e["tool"] for e in act["errors"]] == ["shell"]


def _pyenv_pythons():
    import glob

    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    found = {}
    for path in glob.glob(os.path.join(root, "versions", "3.*", "bin", "python")):
        version = os.path.basename(os.path.dirname(os.path.dirname(path)))
        parts = version.split(".")
        if (
            len(parts) == 3
            and all(p.isdigit() for p in parts)
            and (3, 8) <= (int(parts[0]), int(parts[1])) <= (3, 13)
        ):
            found["%s.%s" % (parts[0], parts[1])] = path
    return [found[k] for k in sorted(found)]


@pytest.mark.parametrize("python", _pyenv_pythons() or [None])
def test_import_and_show_under_every_python(python, repos, tmp_path, wctx_home):
    import subprocess

    if python is None:
        pytest.skip("no pyenv interpreters 3.8-3.13 on this machine")
    a, b, outside = repos
    path = render("codex_multi_repo.jsonl", tmp_path, a=a, b=b, commit_a=a.head)
    script = os.path.join(os.path.dirname(FIXTURES), "..", "..", "wctx.py")
    env = dict(os.environ, WCTX_HOME=wctx_home)
    done = subprocess.run(
        [python, script, "import", "--json", path], env=env, capture_output=True, check=False
    )
    assert done.returncode == 0, done.stderr
    sid = json.loads(done.stdout)["results"][0]["session"]
    done = subprocess.run(
        [python, script, "sessions", "show", sid], env=env, capture_output=True, check=False
    )
    assert done.returncode == 0 and b"repo-b:src/upload.py  read 1, edited 1" in done.stdout, done.stderr


def test_a_summary_only_file_stores_nothing(run_cli, tmp_path, store):
    path = tmp_path / "0b0b0b0b-aaaa-4bbb-8ccc-000000000009.jsonl"
    path.write_text('{"type":"summary","summary":"Old work elsewhere","leafUuid":"x"}\n')
    r = run_cli(["import", "--json", path])
    assert r.code == 0 and r.json["results"][0]["status"] == "empty"
    assert store.one("SELECT count(*) AS n FROM sessions")["n"] == 0


def test_subagent_files_next_to_the_session_belong_to_it(repos, store, tmp_path):
    a, b, outside = repos
    base = tmp_path / "project"
    for name in (
        "55555555-aaaa-4bbb-8ccc-000000000005.jsonl",
        "agent-5b5b5b5b.jsonl",
        "agent-9c9c9c9c.jsonl",
    ):
        render(os.path.join("old_layout", name), base, a=a, b=b)
    res = wctx.import_transcripts(store, [str(base / "old_layout")])
    assert res["failed"] == []
    by_id = {r["external_id"]: r for r in res["results"]}
    # The orphan subagent file (its session file is absent) is imported on its own; the other one
    # is read with its session, never as a session of its own.
    assert sorted(by_id) == ["55555555-aaaa-4bbb-8ccc-000000000005", "99999999-aaaa-4bbb-8ccc-000000000009"]
    act = activity(store, by_id["55555555-aaaa-4bbb-8ccc-000000000005"]["session"])
    assert [(s["id"], s["type"]) for s in act["subagents"]] == [("5b5b5b5b", None)]
    assert file_row(act, "repo-b", "src/upload.py")["reads"] == 1


# -- search results name the session that edited what they cite ------------------------------------


def test_a_result_names_the_session_that_edited_its_cited_file(repos, store, tmp_path):
    a, b, outside = repos
    cap = wctx.capture(
        store,
        [{"kind": "finding", "claim": "upload_document never retries", "repo": "repo-b",
          "files": ["src/upload.py#upload_document"]}],
        cwd=a.path,
    )  # fmt: skip
    before = wctx.search(store, "retries", repo="repo-a")["results"][0]
    assert not any(" edited " in r for r in before["reasons"])

    imported = wctx.import_transcript(
        store, render("claude_multi_repo.jsonl", tmp_path / "t", a=a, b=b, outside=outside)
    )
    res = wctx.search(store, "retries", repo="repo-a")
    hit = res["results"][0]
    assert hit["id"] == cap["evidence"][0]["id"]
    edited = [r for r in hit["reasons"] if " edited " in r]
    assert edited == [
        "session %s (claude-code, 2026-03-01) edited src/upload.py in repo-b" % imported["session"]
    ]


def test_a_result_citing_nothing_a_session_edited_names_no_session(repos, store, tmp_path):
    a, b, outside = repos
    wctx.capture(
        store,
        [{"kind": "note", "claim": "main returns one", "repo": "repo-a", "files": ["app/main.py"]}],
        cwd=a.path,
    )
    wctx.import_transcript(
        store, render("claude_multi_repo.jsonl", tmp_path / "t", a=a, b=b, outside=outside)
    )
    # The fixture session reads and edits app/main.py: it is named. A file it never touched is not.
    hit = wctx.search(store, "main returns", repo="repo-a")["results"][0]
    assert any("edited app/main.py in repo-a" in r for r in hit["reasons"])
    wctx.capture(store, [{"kind": "note", "claim": "gitignore is empty", "repo": "repo-a"}], cwd=a.path)
    other = wctx.search(store, "gitignore", repo="repo-a")["results"][0]
    assert not any(" edited " in r for r in other["reasons"])


# -- redaction placeholders in paths ---------------------------------------------------------------


def _claude_line(cwd, sid, n, tool, inp):
    return json.dumps(
        {
            "parentUuid": None, "isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": sid,
            "version": "2.1.39", "type": "assistant", "uuid": "a%d" % n,
            "timestamp": "2026-03-01T10:00:%02d.000Z" % n,
            "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "t%d" % n, "name": tool, "input": inp}]},
        }
    )  # fmt: skip


def test_a_path_with_a_redaction_placeholder_is_counted_redacted_not_attributed(repos, store, tmp_path):
    a, b, outside = repos
    sid = "11111111-aaaa-4bbb-8ccc-0000000000aa"
    lines = [
        _claude_line(a.path, sid, 1, "Read", {"file_path": "[REDACTED]/src/a.py"}),
        _claude_line(a.path, sid, 2, "Edit", {"file_path": a.path + "/[REDACTED]/b.py"}),
        _claude_line(a.path, sid, 3, "Read", {"file_path": "/redacted/path/0a1b2c3d/x.py"}),
        _claude_line(a.path, sid, 4, "Read", {"file_path": "app/main.py"}),
    ]
    path = tmp_path / "t" / (sid + ".jsonl")
    path.parent.mkdir()
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    act = activity(store, wctx.import_transcript(store, str(path))["session"])
    paths = [f["path"] for f in act["files"]]
    assert paths == ["app/main.py"]
    assert not any("REDACTED" in p or "redacted" in p for p in paths)
    assert act["redacted_values"] >= 3


def test_two_transcripts_with_one_session_id_keep_each_others_activity(repos, store, tmp_path):
    a, b, outside = repos
    sid = "shared-session-id"  # non-UUID file names: the id comes from the lines, and both carry it
    first = tmp_path / "one" / "notes-a.jsonl"
    second = tmp_path / "two" / "notes-b.jsonl"
    for path, target in ((first, a.path + "/app/main.py"), (second, b.path + "/src/upload.py")):
        path.parent.mkdir()
        path.write_text(_claude_line(a.path, sid, 1, "Edit", {"file_path": target}) + "\n", encoding="utf-8")
    r1 = wctx.import_transcript(store, str(first))
    r2 = wctx.import_transcript(store, str(second))
    for _ in range(2):  # importing again changes nothing and loses nothing
        assert wctx.import_transcript(store, str(first))["status"] == "unchanged"
        assert wctx.import_transcript(store, str(second))["status"] == "unchanged"
    edited = set()
    for res in (r1, r2):
        edited.update((f["repo"], f["path"]) for f in activity(store, res["session"])["files"] if f["edits"])
    assert edited == {("repo-a", "app/main.py"), ("repo-b", "src/upload.py")}
    assert wctx.import_transcript(store, str(first), force=True)["session"] == r1["session"]
    assert ("repo-b", "src/upload.py") in {
        (f["repo"], f["path"]) for f in activity(store, r2["session"])["files"]
    }
