"""The store: migrations from nothing, refusal of a newer or foreign database (untouched), secrets
redacted before they reach the database files, and many processes capturing at once."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys

import pytest
from conftest import WCTX_SCRIPT, db_snapshot

import wctx


def db_path(home):
    return os.path.join(str(home), "wctx.db")


def file_digest(path):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def checkpoint(home):
    """Fold the WAL into the main file so its bytes say everything."""
    con = sqlite3.connect(db_path(home))
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        con.close()


# ----------------------------------------------------------------------------------------------
# Migrations
# ----------------------------------------------------------------------------------------------


def test_migrations_from_an_empty_database(wctx_home, run_cli):
    res = run_cli(["init", "--json"])
    assert res.code == 0, res
    assert res.json["schema"] == len(wctx.MIGRATIONS)
    con = sqlite3.connect(db_path(wctx_home))
    try:
        rows = con.execute("SELECT number, name FROM schema_migrations ORDER BY number").fetchall()
        assert rows == [(n, m.__name__) for n, m in enumerate(wctx.MIGRATIONS, 1)]
        assert rows[0] == (1, "m001_initial")
        assert con.execute("PRAGMA user_version").fetchone()[0] == len(wctx.MIGRATIONS)
        assert con.execute("PRAGMA application_id").fetchone()[0] == wctx.SCHEMA_APP_ID
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {
            "repos",
            "workspaces",
            "relations",
            "sessions",
            "evidence",
            "anchors",
            "evidence_fts",
        } <= tables
    finally:
        con.close()
    # Opening again applies nothing twice.
    again = run_cli(["init"])
    assert again.code == 0 and "schema %d" % len(wctx.MIGRATIONS) in again.out
    con = sqlite3.connect(db_path(wctx_home))
    assert con.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == len(wctx.MIGRATIONS)
    con.close()


def test_an_existing_empty_file_is_migrated(wctx_home, run_cli):
    os.makedirs(wctx_home)
    open(db_path(wctx_home), "wb").close()
    res = run_cli(["init"])
    assert res.code == 0, res
    con = sqlite3.connect(db_path(wctx_home))
    assert con.execute("PRAGMA user_version").fetchone()[0] == len(wctx.MIGRATIONS)
    con.close()


def test_a_store_stopped_between_migrations_resumes(wctx_home, monkeypatch):
    monkeypatch.setattr(wctx, "MIGRATIONS", wctx.MIGRATIONS[:1])
    wctx.open_store(wctx_home).close()
    monkeypatch.undo()
    store = wctx.open_store(wctx_home)
    try:
        assert wctx.schema_version(store) == len(wctx.MIGRATIONS)
        names = [r["name"] for r in store.all("SELECT name FROM schema_migrations ORDER BY number")]
        assert names == [m.__name__ for m in wctx.MIGRATIONS]
    finally:
        store.close()


def test_a_failing_migration_leaves_the_previous_version(wctx_home, monkeypatch):
    def m_broken(db):
        db.execute("CREATE TABLE half_done(x)")
        raise RuntimeError("migration exploded")

    monkeypatch.setattr(wctx, "MIGRATIONS", [*wctx.MIGRATIONS, m_broken])
    with pytest.raises(RuntimeError):
        wctx.open_store(wctx_home)
    con = sqlite3.connect(db_path(wctx_home))
    try:
        assert con.execute("PRAGMA user_version").fetchone()[0] == len(wctx.MIGRATIONS) - 1
        assert con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'half_done'").fetchone()[0] == 0
    finally:
        con.close()


KILL_MID_MIGRATION = """
import os, signal, sys
sys.path.insert(0, %(root)r)
import wctx
def m002_dies(db):
    db.execute("CREATE TABLE half_done(x)")
    os.kill(os.getpid(), signal.SIGKILL)
wctx.MIGRATIONS[1] = m002_dies
wctx.open_store(%(home)r)
"""


def test_kill_9_mid_migration_leaves_the_previous_version_and_resumes(wctx_home):
    import signal

    from conftest import ROOT

    proc = subprocess.run(
        [sys.executable, "-c", KILL_MID_MIGRATION % {"root": ROOT, "home": wctx_home}],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    con = sqlite3.connect(db_path(wctx_home))
    try:
        assert con.execute("PRAGMA user_version").fetchone()[0] == 1
        assert con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'half_done'").fetchone()[0] == 0
    finally:
        con.close()
    store = wctx.open_store(wctx_home)
    try:
        assert wctx.schema_version(store) == len(wctx.MIGRATIONS)
    finally:
        store.close()


def test_a_newer_database_is_refused_clearly_and_left_unchanged(product, run_cli, run_wctx):
    home = product.store.home
    wctx.capture(
        product.store, [{"kind": "note", "claim": "kept", "repo": "upload-sdk"}], cwd=product.sdk.path
    )
    product.store.close()
    con = sqlite3.connect(db_path(home))
    con.execute("PRAGMA user_version = 99")
    con.close()
    checkpoint(home)
    before = db_snapshot(home)
    digest = file_digest(db_path(home))
    for argv in (["repo", "list"], ["search", "kept", "--repo", "upload-sdk"], ["init"]):
        res = run_cli(argv, cwd=product.sdk.path)
        assert res.code == 1, res
        assert res.err.count("\n") == 1 and "Traceback" not in res.err
        assert "schema version 99" in res.err and "upgrade wctx" in res.err, res
        assert res.out == ""
    res = run_wctx(["repo", "list"])
    assert res.code == 1 and "schema version 99" in res.err and res.err.count("\n") == 1
    assert db_snapshot(home) == before
    checkpoint(home)
    assert file_digest(db_path(home)) == digest


def test_another_programs_sqlite_file_is_refused_and_left_unchanged(wctx_home, run_cli):
    os.makedirs(wctx_home)
    con = sqlite3.connect(db_path(wctx_home))
    con.execute("CREATE TABLE invoices(id INTEGER PRIMARY KEY, amount REAL)")
    con.execute("INSERT INTO invoices(amount) VALUES (12.5)")
    con.commit()
    con.close()
    digest = file_digest(db_path(wctx_home))
    res = run_cli(["repo", "list"])
    assert res.code == 1, res
    assert res.err.count("\n") == 1 and "is not a wctx store" in res.err
    con = sqlite3.connect(db_path(wctx_home))
    try:
        assert con.execute("SELECT amount FROM invoices").fetchall() == [(12.5,)]
        assert (
            con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'schema_migrations'").fetchone()[0]
            == 0
        )
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    finally:
        con.close()
    assert file_digest(db_path(wctx_home)) == digest


def test_a_file_that_is_not_sqlite_is_refused(wctx_home, run_cli):
    os.makedirs(wctx_home)
    with open(db_path(wctx_home), "wb") as fh:
        fh.write(b"this is not a database at all, just text\n" * 100)
    digest = file_digest(db_path(wctx_home))
    res = run_cli(["repo", "list"])
    assert res.code == 1, res
    assert res.err.startswith("wctx: ") and res.err.count("\n") == 1 and "Traceback" not in res.err
    assert file_digest(db_path(wctx_home)) == digest


def test_home_flag_overrides_the_environment(git_repo, run_cli, tmp_path):
    other_home = tmp_path / "elsewhere"
    repo = git_repo("r", {"a.py": "x = 1\n"})
    assert run_cli(["--home", str(other_home), "repo", "add", repo.path]).code == 0
    assert os.path.exists(db_path(other_home))
    assert not os.path.exists(db_path(os.environ["WCTX_HOME"]))


# ----------------------------------------------------------------------------------------------
# Secrets
# ----------------------------------------------------------------------------------------------

SECRETS = {
    "github": "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "aws": "AKIA" + "IOSFODNN7EXAMPLE",
    "password": "hunter2-" + "correct-horse",
    "url_password": "s3cr3t-" + "pass",
    "anthropic": "sk-ant-" + "api03-abcdefghijklmnopqrstuvwxyz012345",
    "jwt": "eyJhbGciOiJIUzI1NiJ9."
    + "eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "bearer": "abcdef0123456789" + "abcdef0123456789",
    "pem_body": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + "BKcwggSjAgEAAoIBAQC7",
}


def test_secrets_are_redacted_in_the_stored_database_files(product):
    store, home = product.store, product.store.home
    claim = "login fails with password=%s :: token %s leaked" % (SECRETS["password"], SECRETS["github"])
    detail_extra = (
        "aws key %s, url https://deploy:%s@git.example.com/repo.git, anthropic %s, jwt %s, "
        "header Authorization: Bearer %s\n-----BEGIN RSA PRIVATE KEY-----\n%s\n-----END RSA PRIVATE KEY-----"
        % (
            SECRETS["aws"],
            SECRETS["url_password"],
            SECRETS["anthropic"],
            SECRETS["jwt"],
            SECRETS["bearer"],
            SECRETS["pem_body"],
        )
    )
    res = wctx.capture(
        store,
        [
            {"kind": "finding", "claim": claim, "repo": "upload-sdk"},
            {"kind": "note", "claim": "deploy notes", "detail": detail_extra, "repo": "upload-sdk"},
        ],
        summary="debugging with api_key=%s in the env" % SECRETS["github"],
        cwd=product.sdk.path,
    )
    first = wctx.get_evidence(store, res["evidence"][0]["id"])
    assert "[REDACTED]" in first["claim"] and SECRETS["password"] not in first["claim"]
    assert SECRETS["github"] not in (first["detail"] or "")
    second = wctx.get_evidence(store, res["evidence"][1]["id"])
    assert "[REDACTED private key]" in second["detail"]
    assert "https://deploy:[REDACTED]@git.example.com" in second["detail"]

    def stored_bytes():
        data = b""
        for suffix in ("", "-wal", "-shm", "-journal"):
            path = db_path(home) + suffix
            if os.path.exists(path):
                with open(path, "rb") as fh:
                    data += fh.read()
        return data

    # While the store is open (pages still in the WAL) and after it is closed and checkpointed.
    blobs = [stored_bytes()]
    store.close()
    checkpoint(home)
    blobs.append(stored_bytes())
    for blob in blobs:
        assert blob
        for name, secret in SECRETS.items():
            assert secret.encode() not in blob, name
    # Searching for a secret matches nothing (at most the no-match fallback's recent items).
    s2 = wctx.open_store(home)
    try:
        for secret in (SECRETS["password"], SECRETS["github"], SECRETS["aws"]):
            res = wctx.search(s2, secret, repo="upload-sdk")
            for r in res["results"]:
                assert not any(reason.startswith("matches") for reason in r["reasons"]), r
                assert secret not in str(r)
    finally:
        s2.close()


def test_secrets_in_a_relation_note_are_redacted(product):
    res = wctx.relate(
        product.store, "docs-ui", "calls", "api-gateway", note="auth with token=%s" % SECRETS["github"]
    )
    assert SECRETS["github"] not in res["note"]
    assert SECRETS["github"] not in str(wctx.list_relations(product.store))


# ----------------------------------------------------------------------------------------------
# Concurrency
# ----------------------------------------------------------------------------------------------


def _spawn(argv, cwd, home):
    return subprocess.Popen(
        [sys.executable, WCTX_SCRIPT, *argv],
        cwd=cwd,
        env=dict(os.environ, WCTX_HOME=home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_eight_processes_capturing_at_once_lose_nothing(product):
    home = product.store.home
    procs = [
        _spawn(
            [
                "capture",
                "--summary",
                "parallel session %d" % n,
                "--finding",
                "parallel finding %d" % n,
                "--repo",
                "upload-sdk",
                "--file",
                "src/client.py#connect",
                "--file",
                "docs-ui:src/UploadButton.tsx",
                "--note",
                "parallel note %d" % n,
                "--json",
            ],  # fmt: skip
            product.ui.path,
            home,
        )
        for n in range(8)
    ]
    outputs = [p.communicate() + (p.returncode,) for p in procs]
    for _out, err, code in outputs:
        assert code == 0, err.decode()
        assert b"locked" not in err and b"Traceback" not in err, err.decode()
        assert err == b""
    store = product.store
    claims = {r["claim"] for r in store.all("SELECT claim FROM evidence")}
    assert claims == {"parallel finding %d" % n for n in range(8)} | {
        "parallel note %d" % n for n in range(8)
    }
    assert store.one("SELECT count(*) AS n FROM sessions")["n"] == 8
    assert store.one("SELECT count(*) AS n FROM evidence_fts")["n"] == 16
    hits = wctx.search(store, "parallel finding", repo="upload-sdk", limit=50)["results"]
    assert len([h for h in hits if h["kind"] == "finding"]) == 8


def test_eight_processes_opening_a_fresh_store_at_once_migrate_once(wctx_home):
    procs = [_spawn(["init"], os.getcwd(), wctx_home) for _ in range(8)]
    for p in procs:
        out, err = p.communicate()
        assert p.returncode == 0, err.decode()
        assert b"locked" not in err and err == b""
    con = sqlite3.connect(db_path(wctx_home))
    try:
        assert con.execute("SELECT number FROM schema_migrations ORDER BY number").fetchall() == [
            (n,) for n in range(1, len(wctx.MIGRATIONS) + 1)
        ]
    finally:
        con.close()


def test_parallel_captures_into_one_session_accumulate(product):
    sid = wctx.capture(
        product.store, [{"kind": "note", "claim": "start", "repo": "upload-sdk"}], cwd=product.sdk.path
    )["session"]
    procs = [
        _spawn(
            ["capture", "--session", sid, "--note", "appended %d" % n, "--repo", "upload-sdk"],
            product.sdk.path,
            product.store.home,
        )
        for n in range(6)
    ]
    for p in procs:
        out, err = p.communicate()
        assert p.returncode == 0 and err == b"", err.decode()
    claims = [e["claim"] for e in wctx.get_session(product.store, sid)["evidence"]]
    assert sorted(claims) == sorted(["start"] + ["appended %d" % n for n in range(6)])


def test_readers_and_writers_at_once(product):
    """Searches and verifies (which refresh the freshness cache) alongside captures."""
    home = product.store.home
    for n in range(3):
        wctx.capture(
            product.store,
            [
                {
                    "kind": "finding",
                    "claim": "seed %d connect" % n,
                    "repo": "upload-sdk",
                    "files": ["src/client.py#connect"],
                }
            ],
            cwd=product.sdk.path,
        )
    argvs = []
    for n in range(4):
        argvs.append(
            [
                "capture",
                "--finding",
                "mixed %d connect" % n,
                "--repo",
                "upload-sdk",
                "--file",
                "src/client.py#connect",
            ]
        )
        argvs.append(["search", "connect", "--json"])
        argvs.append(["verify", "--json"])
        argvs.append(["search", "has anyone looked at this?", "--json"])
    procs = [_spawn(argv, product.sdk.path, home) for argv in argvs]
    for argv, p in zip(argvs, procs):
        out, err = p.communicate()
        assert p.returncode == 0, (argv, err.decode())
        assert err == b"", (argv, err.decode())
    claims = {r["claim"] for r in product.store.all("SELECT claim FROM evidence")}
    assert {"mixed %d connect" % n for n in range(4)} <= claims
    assert len(claims) == 7


def test_parallel_captures_from_one_agent_session_share_one_session(product):
    home = product.store.home
    env = dict(os.environ, WCTX_HOME=home, CLAUDE_CODE_SESSION_ID="0ccf1a04-1111-2222-3333-444455556666")
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                WCTX_SCRIPT,
                "capture",
                "--note",
                "agent note %d" % n,
                "--repo",
                "upload-sdk",
                "--json",
            ],
            cwd=product.sdk.path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for n in range(6)
    ]
    sessions = set()
    for p in procs:
        out, err = p.communicate()
        assert p.returncode == 0 and b"locked" not in err and b"Traceback" not in err, err.decode()
        sessions.add(json.loads(out)["session"])
    assert len(sessions) == 1
    (sid,) = sessions
    assert sorted(e["claim"] for e in wctx.get_session(product.store, sid)["evidence"]) == [
        "agent note %d" % n for n in range(6)
    ]
    assert product.store.one("SELECT count(*) AS n FROM sessions")["n"] == 1


def test_a_damaged_store_gives_one_line_not_a_traceback(product, run_wctx):
    for n in range(60):
        wctx.capture(
            product.store,
            [
                {
                    "kind": "note",
                    "claim": "note number %d about uploads" % n,
                    "detail": "y" * 3000,
                    "repo": "upload-sdk",
                }
            ],
            cwd=product.sdk.path,
        )
    home = product.store.home
    product.store.close()
    checkpoint(home)
    path = db_path(home)
    size = os.path.getsize(path)
    with open(path, "r+b") as fh:  # scribble over the last pages: evidence, anchors, FTS data
        for offset in range(max(4096 * 8, size - 4096 * 20), size, 4096):
            fh.seek(offset)
            fh.write(b"\xde\xad\xbe\xef" * 1024)
    failures = []
    for argv in (
        ["search", "uploads"],
        ["search", "has anyone looked at this?"],
        ["verify"],
        ["sessions"],
        ["capture", "--note", "after the damage", "--repo", "upload-sdk"],
    ):
        res = run_wctx(argv, cwd=product.sdk.path)
        assert "Traceback" not in res.err, (argv, res.err)
        assert res.code in (0, 1), (argv, res)
        if res.code:
            assert res.err.startswith("wctx: ") and res.err.count("\n") == 1, (argv, res.err)
            failures.append(res.err)
    assert failures and all("malformed" in f for f in failures), failures


@pytest.mark.parametrize("existing", [False, True])
def test_sqlite_without_fts5_is_said_in_one_line(wctx_home, run_cli, monkeypatch, existing):
    if existing:
        assert run_cli(["init"]).code == 0
    before = db_snapshot(wctx_home)
    monkeypatch.setattr(wctx, "fts5_available", lambda *args: False)
    for argv in (["init"], ["search", "x", "--all"], ["repo", "list"]):
        res = run_cli(argv)
        assert res.code == 1, res
        assert res.err.count("\n") == 1 and "Traceback" not in res.err
        assert "built without FTS5" in res.err
    assert db_snapshot(wctx_home) == before


def test_every_migration_function_is_registered_in_its_turn():
    """A migration cannot be left out of the list: each mNNN_ function is migration NNN."""
    import re

    defined = sorted(name for name in vars(wctx) if re.fullmatch(r"m\d{3}_\w+", name))
    assert [m.__name__ for m in wctx.MIGRATIONS] == defined
    assert [int(m.__name__[1:4]) for m in wctx.MIGRATIONS] == list(range(1, len(defined) + 1))

    def again(db):
        pass

    again.__name__ = "m%03d_again" % len(defined)  # the number of the last one, as two branches would
    with pytest.raises(AssertionError, match="out of turn"):
        wctx.migration(again)
    assert len(wctx.MIGRATIONS) == len(defined)
