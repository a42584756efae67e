"""Identifiers are stored as they are, never redacted: a repository or workspace name, a cited path,
a session's id. One that holds what looks like a secret, or a terminal control character, is refused
where a user gives it (with one clear line that itself shows no secret), or, where a transcript
gives it, stored under an id derived from the raw one so that two distinct ids stay two. And every
line wctx prints (CLI and MCP, results, warnings, errors) passes the same redaction as what it
stores."""

from __future__ import annotations

import json
import os

import pytest
from conftest import db_snapshot
from mcp_helpers.wire import WireServer

# Secrets of kinds the rules know, written for these tests (the independent checks use others).
AWS_LIKE = "ASIA" + "Q7ZK2M9XW4PL8RTV"
GITHUB_LIKE = "ghp_" + "Zr8Kq2Lm5Nx7Vb3Tc9Wd4Yf6Hg1Js0Pa2Qe"
SLACK_LIKE = "xoxp-" + "918273645501-Kv7Rt2Lp9Zx4"


def _one_line_error(res):
    line = res.err.strip()
    assert line.startswith("wctx: ") and "\n" not in line, res
    return line


@pytest.fixture
def app(git_repo, run_cli):
    repo = git_repo("payments", {"src/charge.py": "def charge(amount):\n    return amount\n"})
    assert run_cli(["repo", "add", repo.path, "--workspace", "shop"]).code == 0
    return repo


# -- names -------------------------------------------------------------------------------------


@pytest.mark.parametrize("secret", [AWS_LIKE, GITHUB_LIKE, "sk_live_" + "9QmZr2Xw7Lk4Pt8Vn3Bc"])
def test_repo_add_refuses_a_name_that_looks_like_a_secret_and_says_so_without_it(
    git_repo, run_cli, wctx_home, secret
):
    repo = git_repo("billing", {"a.py": "x = 1\n"})
    assert run_cli(["repo", "add", repo.path]).code == 0
    other = git_repo("ledger", {"b.py": "y = 2\n"})
    before = db_snapshot(wctx_home)
    for argv in (
        ["repo", "add", other.path, "--name", secret],
        ["repo", "add", other.path, "--workspace", secret],
        ["repo", "rename", "billing", secret],
    ):
        res = run_cli(argv)
        assert res.code == 2, (argv, res)
        line = _one_line_error(res)
        assert "secret" in line and secret not in res.out + res.err, line
        assert db_snapshot(wctx_home) == before
    js = run_cli(["repo", "add", other.path, "--name", secret, "--json"])
    assert js.code == 2 and secret not in js.out + js.err


def test_a_checkout_whose_path_holds_a_secret_is_refused_whatever_its_name(git_repo, run_cli, wctx_home):
    """Its path would be stored redacted and lead nowhere: say so, and register nothing."""
    repo = git_repo(GITHUB_LIKE, {"a.py": "x = 1\n"})
    assert run_cli(["init"]).code == 0
    before = db_snapshot(wctx_home)
    for argv in (["repo", "add", repo.path], ["repo", "add", repo.path, "--name", "tokens-app"]):
        res = run_cli(argv)
        assert res.code == 2 and "path" in _one_line_error(res) and GITHUB_LIKE not in res.err, res
        assert db_snapshot(wctx_home) == before
    moved = os.path.join(os.path.dirname(repo.path), "tokens-app")
    os.rename(repo.path, moved)
    assert run_cli(["repo", "add", moved]).code == 0
    assert run_cli(["capture", "--finding", "ok", "--repo", "tokens-app"], cwd=moved).code == 0


def test_an_import_naming_a_repository_like_a_secret_is_refused(app, run_cli, tmp_path, wctx_home):
    root = app.git("rev-list", "--max-parents=0", "HEAD").split()[0]
    peer = tmp_path / "peer.jsonl"
    records = [
        {"type": "session", "format": 1, "id": "ses-00000000c1", "agent": "peer", "repo": AWS_LIKE},
        {"type": "evidence", "format": 1, "id": "ev-00000000c1", "session": "ses-00000000c1", "repo": AWS_LIKE,
         "root_commit": root, "kind": "note", "claim": "hello"},
    ]  # fmt: skip
    peer.write_text("".join(json.dumps(r) + "\n" for r in records))
    before = db_snapshot(wctx_home)
    res = run_cli(["import-evidence", str(peer)])
    assert res.code != 0 and AWS_LIKE not in res.out + res.err, res
    assert db_snapshot(wctx_home) == before


# -- what is printed ---------------------------------------------------------------------------


def test_errors_and_warnings_echo_no_secret_in_the_cli(app, run_cli):
    leaks = []
    for argv in (
        ["capture", "--finding", "x", "--repo", GITHUB_LIKE],
        ["capture", "--finding", "x", "--repo", GITHUB_LIKE, "--json"],
        ["capture", "--finding", "charge rounds", "--file", "src/charge.py#charge_" + AWS_LIKE],
        ["capture", "--finding", "charge floors", "--file", "src/charge.py#" + SLACK_LIKE, "--json"],
        ["search", "charge", GITHUB_LIKE],
        ["search", "charge", GITHUB_LIKE, "--json"],
        ["show", GITHUB_LIKE],
        ["relate", "payments", "uses", AWS_LIKE],
        ["workspace", "show", SLACK_LIKE],
    ):
        res = run_cli(argv, cwd=app.path)
        for secret in (AWS_LIKE, GITHUB_LIKE, SLACK_LIKE):
            if secret in res.out or secret in res.err:
                leaks.append((argv, secret))
    assert leaks == []
    warned = run_cli(
        ["capture", "--finding", "charge caps", "--file", "src/charge.py#" + GITHUB_LIKE, "--json"],
        cwd=app.path,
    )
    # Refused (a symbol its file does not define), and the refusal is there, redacted.
    assert warned.code == 2 and "was not found" in warned.out + warned.err


def test_mcp_errors_and_warnings_echo_no_secret(app, wctx_home):
    server = WireServer(wctx_home, app.path)
    try:
        server.initialize()
        replies = [
            server.call("record_evidence", {"summary": "s", "items": [{"kind": "note", "claim": "a", "repo": AWS_LIKE}]}),
            server.call("record_evidence", {"summary": "s", "items": [
                {"kind": "finding", "claim": "charge caps", "files": ["src/charge.py#" + GITHUB_LIKE]}]}),
            server.call("get_evidence", {"id": "ev-" + SLACK_LIKE[:10]}),
            server.call("search_evidence", {"query": "charge " + GITHUB_LIKE, "repo": GITHUB_LIKE}),
            server.call("workspace_overview", {"repo": SLACK_LIKE, "detail": True}),
        ]  # fmt: skip
    finally:
        server.kill()
    text = json.dumps(replies)
    assert "was not found" in text
    for secret in (AWS_LIKE, GITHUB_LIKE, SLACK_LIKE):
        assert secret not in text


# -- cited paths ---------------------------------------------------------------------------------

URL_PATHS = [
    "https://builder:Hx7Qp2Lz9Rv4@git.example.org/deploy.py",
    "postgresql://ledger:Tn4Wc8Ys1Kb6@db.example.org:5432/ledger.sql",
    "mongodb+srv://ops:Ue3Fj7Ma2Zq5@cluster9.example.net/seed.js",
    "redis://:Gb6Vn1Xk8Pw3@cache.example.org:6380/flush.sh",
    "https://hooks.slack.com/services/T0FAKE000/B0FAKE000/Jd5Hs9Ql2Wm7Ec4Rt6Yu1Io8",
]


@pytest.mark.parametrize("spec", URL_PATHS)
def test_a_cited_path_holding_url_credentials_is_refused(app, run_cli, wctx_home, spec):
    """A file whose path is a URL with a password (the OS collapses '//' to '/') exists in the
    repository: citing it would store the password, or store a redacted path that names no file."""
    full = app.file(spec)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as fh:
        fh.write("x = 1\n")
    password = spec.split("@")[0].rsplit(":", 1)[1] if "hooks.slack" not in spec else spec.rsplit("/", 1)[1]
    before = db_snapshot(wctx_home)
    res = run_cli(["capture", "--finding", "deploy script pins the host", "--file", spec], cwd=app.path)
    assert res.code == 2, res
    assert password not in res.out + res.err and "secret" in _one_line_error(res)
    assert db_snapshot(wctx_home) == before
    server = WireServer(wctx_home, app.path)
    try:
        server.initialize()
        reply = server.call(
            "record_evidence",
            {"summary": "s", "items": [{"kind": "finding", "claim": "pins", "files": [spec]}]},
        )
    finally:
        server.kill()
    assert reply["isError"] is True and password not in json.dumps(reply)
    assert db_snapshot(wctx_home) == before


@pytest.mark.parametrize("name", ["tab\x1b[2Jle.py", "bell\x07.py", "rtl\u202egnp.py", "cr\rback.py"])
def test_a_cited_path_with_control_characters_is_refused_not_stored_cleaned(app, run_cli, wctx_home, name):
    full = app.file("src/" + name)
    with open(full, "w") as fh:
        fh.write("def f():\n    return 1\n")
    before = db_snapshot(wctx_home)
    res = run_cli(["capture", "--finding", "f returns one", "--file", "src/" + name + "#f"], cwd=app.path)
    assert res.code == 2, res
    line = _one_line_error(res)
    assert "control" in line and not any(c in line for c in "\x1b\x07\u202e\r"), line
    assert db_snapshot(wctx_home) == before


# -- session ids ---------------------------------------------------------------------------------


def _gemini(path, session_id, cwd, command):
    lines = [
        {"sessionId": session_id, "projectHash": "0" * 64, "startTime": "2026-04-01T08:00:00.000Z",
         "lastUpdated": "2026-04-01T08:05:00.000Z", "kind": "main"},
        {"id": "m1", "timestamp": "2026-04-01T08:01:00.000Z", "type": "gemini", "content": "", "toolCalls": [
            {"id": "run-1", "name": "run_shell_command", "args": {"command": command, "dir_path": cwd},
             "status": "success", "timestamp": "2026-04-01T08:01:00.000Z"}]},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


def _codex(path, session_id, cwd, command):
    lines = [
        {"timestamp": "2026-04-02T09:00:00.000Z", "type": "session_meta", "payload": {
            "id": session_id, "timestamp": "2026-04-02T09:00:00.000Z", "cwd": cwd, "cli_version": "0.146.0"}},
        {"timestamp": "2026-04-02T09:00:01.000Z", "type": "response_item", "payload": {
            "type": "function_call", "name": "shell", "call_id": "c1",
            "arguments": json.dumps({"command": ["bash", "-lc", command], "workdir": cwd})}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


@pytest.mark.parametrize(
    "write, ids",
    [
        (_gemini, ["sess-\x01-0415", "sess-\x02-0415"]),  # differ only in a control character
        (_gemini, ["run\x1b[1m-77", "run\x1b[4m-77"]),  # ... or in an escape sequence
        (_codex, ["glpat-" + "Ab3Cd5Ef7Gh9Ij1Kl3Mn5", "glpat-" + "Zy2Xw4Vu6Ts8Rq0Po2Nm4"]),  # same marker
        (_gemini, [AWS_LIKE, "ASIA" + "R8YL3N0WX5QM9SUV"]),
    ],
)
def test_session_ids_that_clean_to_the_same_text_stay_two_sessions(app, run_cli, tmp_path, write, ids):
    paths = [
        write(tmp_path / ("t%d.jsonl" % n), sid, app.path, "make test-%d" % n) for n, sid in enumerate(ids)
    ]
    stored = []
    for path in paths:
        res = run_cli(["import", path, "--json"])
        assert res.code == 0, res
        stored.append(res.json["results"][0]["session"])
    assert len(set(stored)) == 2
    listed = run_cli(["sessions", "--json"]).json
    listed = listed.get("sessions", listed) if isinstance(listed, dict) else listed
    externals = [s.get("external_id") for s in listed]
    assert len(set(externals)) == 2, externals
    for sid in ids:
        assert all(sid not in (e or "") for e in externals)
    for n, path in enumerate(paths):  # a re-import finds its own session again
        again = run_cli(["import", path, "--force", "--json"])
        assert again.code == 0 and again.json["results"][0]["session"] == stored[n], again
    for n, sid in enumerate(stored):  # each kept its own commands
        shown = run_cli(["sessions", "show", sid, "--json"])
        assert shown.code == 0 and "make test-%d" % n in shown.out, shown
