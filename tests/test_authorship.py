"""Who recorded an item, on every surface, through sync; and what a person hides from their own
view. Two machines (two homes, two stores, two git identities in each home's own ~/.gitconfig)
share memory through a bare git repository on disk, as a team does through any remote."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest
from conftest import SDK_UPLOAD_TS, WCTX_SCRIPT, git, git_env

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mcp_helpers.wire import WireServer  # noqa: E402

ALICE = "Alice Archer <alice@example.com>"
BOB = "Bob Builder <bob@example.com>"


class Machine:
    """One person's machine: its own $HOME (with git's user.name and user.email in its
    ~/.gitconfig), its store and its checkout of the project."""

    def __init__(self, root, name, identity):
        self.root = os.path.join(str(root), name)
        self.home = os.path.join(self.root, "home")
        self.store_dir = os.path.join(self.home, ".wctx")
        os.makedirs(self.home)
        person, _, email = identity.partition(" <")
        with open(os.path.join(self.home, ".gitconfig"), "w") as fh:
            fh.write("[user]\n\tname = %s\n\temail = %s\n" % (person, email.rstrip(">")))

    def env(self, **extra):
        env = dict(git_env(), HOME=self.home, WCTX_HOME=self.store_dir)
        env.pop("GIT_CONFIG_GLOBAL", None)  # this machine's own ~/.gitconfig holds its identity
        for var in ("CLAUDE_CODE_SESSION_ID", "CODEX_THREAD_ID", "CLAUDECODE", "WCTX_AUTHOR"):
            env.pop(var, None)
        env.update(extra)
        return env

    def wctx(self, *argv, cwd=None, check=True, **extra):
        proc = subprocess.run(
            [sys.executable, WCTX_SCRIPT, *argv],
            cwd=cwd or self.repo,
            env=self.env(**extra),
            capture_output=True,
            text=True,
            check=False,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                "wctx %s failed (%d): %s%s" % (argv, proc.returncode, proc.stdout, proc.stderr)
            )
        return proc

    def json(self, *argv, **kw):
        return json.loads(self.wctx(*argv, "--json", **kw).stdout)

    def capture(self, claim):
        out = self.json("capture", "--finding", claim, "--file", "upload.ts#uploadDocument")
        return out["evidence"][0]["id"]

    def machine_id(self):
        return self.json("whoami")["machine"]


@pytest.fixture
def team(tmp_path):
    upstream = tmp_path / "upstream" / "upload-sdk"
    os.makedirs(str(upstream))
    git(upstream, "init", "-q")
    with open(os.path.join(str(upstream), "upload.ts"), "w") as fh:
        fh.write(SDK_UPLOAD_TS)
    git(upstream, "add", "-A")
    git(upstream, "commit", "-q", "-m", "initial")
    remote = str(tmp_path / "team-memory.git")
    git(tmp_path, "init", "-q", "--bare", remote)
    a, b = Machine(tmp_path, "alice", ALICE), Machine(tmp_path, "bob", BOB)
    for m in (a, b):
        m.repo = os.path.join(m.home, "src", "upload-sdk")
        git(tmp_path, "clone", "-q", str(upstream), m.repo)
        m.wctx("repo", "add", m.repo, "--name", "upload-sdk")
    return remote, a, b


def shared(team):
    """Alice and Bob each record one finding, and both sync (Alice twice, to receive Bob's)."""
    remote, a, b = team
    mine = a.capture("uploadDocument swallows the 419 expiry and never retries")
    theirs = b.capture("uploadDocument retries a 419 only when the token refresh succeeded")
    a.wctx("sync", "--remote", remote)
    b.wctx("sync", "--remote", remote)
    a.wctx("sync")
    return mine, theirs


def by_id(results):
    return {r["id"]: r for r in results}


def test_a_teammates_item_names_its_author_and_machine_and_ones_own_says_you(team):
    remote, a, b = team
    mine, theirs = shared(team)
    got = by_id(a.json("search", "uploadDocument 419")["results"])
    bob_machine = b.machine_id()
    assert got[mine]["recorded_by"] == "you"
    assert got[theirs]["recorded_by"] == "%s (machine %s)" % (BOB, bob_machine[:8])
    assert "recorded by %s (machine %s)" % (BOB, bob_machine[:8]) in got[theirs]["reasons"]
    assert not any(r.startswith("recorded by") for r in got[mine]["reasons"])
    # The same on Bob's side, the other way round.
    got = by_id(b.json("search", "uploadDocument 419")["results"])
    assert got[theirs]["recorded_by"] == "you"
    assert got[mine]["recorded_by"].startswith(ALICE + " (machine ")
    # The text a person or an agent reads, and one item in full.
    text = a.wctx("search", "uploadDocument 419").stdout
    line = next(x for x in text.splitlines() if theirs in x)
    # A search line names the author alone; show gives the address and the machine.
    assert "by Bob Builder]" in line and "bob@example.com" not in line and "machine" not in line
    assert "by " not in next(x for x in text.splitlines() if mine in x)
    assert "by %s (machine %s)" % (BOB, bob_machine[:8]) in a.wctx("show", theirs).stdout
    assert "by you" in a.wctx("show", mine).stdout


def test_the_briefing_the_page_and_the_mcp_server_say_whose_an_item_is(team, tmp_path):
    remote, a, b = team
    mine, theirs = shared(team)
    brief = a.json("brief")
    items = by_id(i for s in brief["sections"] for i in s["items"])
    assert items[theirs]["recorded_by"].startswith(BOB)
    assert any(r.startswith("recorded by " + BOB) for r in items[theirs]["reasons"])
    # The text a session-start hook hands the agent says it too, on the item's own line.
    text = a.wctx("brief", "--max-bytes", "20000").stdout
    line = next(line for line in text.splitlines() if theirs in line)
    assert ", by Bob Builder]" in line and "bob@example.com" not in line and "machine" not in line
    assert "by you" not in text  # one's own items go unmarked
    page = str(tmp_path / "page.html")
    a.wctx("report", "--html", "-o", page)
    with open(page, encoding="utf-8") as fh:
        html = fh.read()
    assert (
        "Bob Builder &lt;bob@example.com&gt;" in html
        and 'recorded by <span class="author">you</span>' in html
    )
    server = WireServer(a.store_dir, a.repo, env=a.env(PYTHONDONTWRITEBYTECODE="1"))
    try:
        server.initialize()
        result = server.call("search_evidence", {"query": "uploadDocument 419"})
        entries = by_id(result["structuredContent"]["results"])
        assert entries[theirs]["recorded_by"] == "Bob Builder"  # compact: the name alone
        assert "recorded_by" not in entries[mine]  # one's own items go unmarked: no tokens spent
        assert "by Bob Builder]" in result["content"][0]["text"]
        full = server.call("get_evidence", {"id": theirs})["structuredContent"]
        assert BOB in str(full)
        only = server.call("search_evidence", {"query": "uploadDocument 419", "author": "bob@example.com"})
        assert [e["id"] for e in only["structuredContent"]["results"]] == [theirs]
    finally:
        server.kill()


def test_sync_says_how_many_new_items_came_from_whom(team):
    remote, a, b = team
    a.wctx("sync", "--remote", remote)
    b.capture("uploadDocument retries a 419 only after a token refresh")
    b.capture("the upload queue drops a file whose name holds a newline")
    b.wctx("sync", "--remote", remote)
    out = a.wctx("sync")
    assert "new items by: %s (machine %s) 2" % (BOB, b.machine_id()[:8]) in out.stdout
    assert a.json("sync")["from_whom"] == {}  # nothing new the second time


def test_search_keeps_to_one_author_or_to_ones_own(team):
    remote, a, b = team
    mine, theirs = shared(team)
    for who in (BOB, "Bob Builder", "BOB@example.com"):
        got = a.json("search", "uploadDocument 419", "--author", who)["results"]
        assert [r["id"] for r in got] == [theirs], who
    assert [r["id"] for r in a.json("search", "uploadDocument 419", "--author", "me")["results"]] == [mine]
    before = a.wctx("search", "uploadDocument", "--author", "carol", check=False)
    assert before.returncode == 1 and before.stderr.count("\n") == 1
    assert "no author carol" in before.stderr and BOB in before.stderr


def test_hiding_an_item_or_an_author_keeps_them_out_of_ones_own_view_only(team):
    remote, a, b = team
    mine, theirs = shared(team)
    extra = b.capture("uploadDocument logs the 419 body, which holds the upload token")
    b.wctx("sync")
    a.wctx("sync")
    assert {mine, theirs, extra} <= set(by_id(a.json("search", "uploadDocument")["results"]))

    a.wctx("hide", theirs)
    assert set(by_id(a.json("search", "uploadDocument")["results"])) == {mine, extra}
    assert "hidden:     this item" in a.wctx("show", theirs).stdout
    a.wctx("hide", "--author", "bob builder")
    assert set(by_id(a.json("search", "uploadDocument")["results"])) == {mine}
    brief_ids = {i["id"] for s in a.json("brief")["sections"] for i in s["items"]}
    assert not brief_ids & {theirs, extra}
    listed = a.json("hide", "--list")["hidden"]
    assert {(h["kind"], h["value"], h["items"]) for h in listed} == {("item", theirs, 1), ("author", BOB, 2)}
    assert set(by_id(a.json("search", "uploadDocument", "--include-hidden")["results"])) == {
        mine,
        theirs,
        extra,
    }

    # Nothing of it travels: Bob, and the team branch, see and hold everything as before.
    a.wctx("sync")
    b.wctx("sync")
    assert {mine, theirs, extra} <= set(by_id(b.json("search", "uploadDocument")["results"]))
    branch = git(remote, "log", "-p", "wctx-memory")
    assert '"hidden"' not in branch and "hide" not in branch

    a.wctx("unhide", "--author", BOB)
    a.wctx("unhide", theirs)
    assert set(by_id(a.json("search", "uploadDocument")["results"])) == {mine, theirs, extra}
    assert a.json("hide", "--list")["hidden"] == []


@pytest.mark.parametrize(
    "argv, message",
    [
        (("hide",), "name evidence ids or --author"),
        (("hide", "ev-0000000000"), "no evidence with id ev-0000000000"),
        (("hide", "--author", "me"), "your own items are yours to retract or forget"),
        (("hide", "--author", "x" * 300), "author is 300 characters; the limit is 200"),
        (("whoami", "--set", "a\nb"), "author must be one line"),
    ],
)
def test_bad_hide_and_whoami_input_is_one_line_and_changes_nothing(team, argv, message):
    remote, a, b = team
    a.capture("uploadDocument swallows the 419 expiry")
    db = os.path.join(a.store_dir, "wctx.db")
    before = sqlite3.connect(db).execute("SELECT count(*) FROM hidden").fetchone()[0]
    proc = a.wctx(*argv, check=False)
    assert proc.returncode in (1, 2) and proc.stderr.count("\n") == 1, proc.stderr
    assert message in proc.stderr
    assert sqlite3.connect(db).execute("SELECT count(*) FROM hidden").fetchone()[0] == before
    assert a.json("whoami")["author"] == ALICE


def test_a_configured_identity_stamps_later_sessions_and_earlier_ones_keep_theirs(team):
    remote, a, b = team
    first = a.capture("uploadDocument swallows the 419 expiry")
    a.wctx("whoami", "--set", "A. Archer <archer@example.org>")
    second = a.capture("uploadDocument never retries a 419")
    third = a.json(
        "capture",
        "--finding",
        "uploadDocument logs its token",
        "--file",
        "upload.ts",
        WCTX_AUTHOR="Robot <ci@example.org>",
    )["evidence"][0]["id"]
    a.wctx("sync", "--remote", remote)
    b.wctx("sync", "--remote", remote)
    got = by_id(b.json("search", "uploadDocument")["results"])
    assert got[first]["recorded_by"].startswith(ALICE)
    assert got[second]["recorded_by"].startswith("A. Archer <archer@example.org>")
    assert got[third]["recorded_by"].startswith("Robot <ci@example.org>")
    a.wctx("whoami", "--unset")
    assert a.json("whoami")["author"] == ALICE


def _session_file(remote, machine):
    files = git(remote, "ls-tree", "-r", "--name-only", "wctx-memory").split()
    return next(p for p in files if p.startswith("machines/%s/sessions/" % machine))


def _write_export(path, records):
    with open(path, "w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r) + "\n")


def _exported(machine):
    return [json.loads(line) for line in machine.wctx("export").stdout.splitlines() if line.strip()]


def test_an_export_never_makes_someone_elses_item_ones_own_or_rewrites_an_author(team, tmp_path):
    remote, a, b = team
    theirs = b.capture("uploadDocument retries a 419 only after a token refresh")
    records = _exported(b)
    # Claimed to come from Alice's own machine: imported, but never shown as hers.
    forged = [dict(r, machine=a.machine_id()) if r["type"] == "session" else r for r in records]
    path = str(tmp_path / "forged.jsonl")
    _write_export(path, forged)
    a.wctx("import-evidence", path)
    got = by_id(a.json("search", "uploadDocument")["results"])
    assert got[theirs]["recorded_by"] == BOB + " (machine unknown)"
    # A later export claiming another author for the same session changes nothing.
    renamed = [dict(r, author="Mallory <m@example.com>") if r["type"] == "session" else r for r in records]
    _write_export(path, renamed)
    a.wctx("import-evidence", path)
    assert (
        by_id(a.json("search", "uploadDocument")["results"])[theirs]["recorded_by"]
        == BOB + " (machine unknown)"
    )


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("author", "M" * 201, "session field author: is 201 characters; the limit is 200"),
        ("author", "Mallory\n<m@example.com>", "session field author: must be one line"),
        ("machine", "--upload-pack=touch /tmp/x", "session field machine: is not a machine id"),
        ("machine", "ABCDEF0123456789", "session field machine: is not a machine id"),
    ],
)
def test_a_hostile_author_or_machine_in_an_export_is_one_line_and_writes_nothing(
    team, tmp_path, field, value, message
):
    remote, a, b = team
    b.capture("uploadDocument retries a 419 only after a token refresh")
    records = [dict(r, **{field: value}) if r["type"] == "session" else r for r in _exported(b)]
    path = str(tmp_path / "hostile.jsonl")
    _write_export(path, records)
    proc = a.wctx("import-evidence", path, check=False)
    assert proc.returncode != 0 and proc.stderr.count("\n") == 1, proc.stderr
    assert "hostile.jsonl:1" in proc.stderr and message in proc.stderr
    assert a.json("search", "uploadDocument")["results"] == []


def test_a_session_shared_back_by_another_machine_keeps_its_owners_author(team, tmp_path):
    remote, a, b = team
    theirs = b.capture("uploadDocument retries a 419 only after a token refresh")
    b.wctx("sync", "--remote", remote)
    # A third machine pushes Bob's session into its own directory under another author's name,
    # then Alice syncs for the first time: Bob's own directory has the last word.
    clone = str(tmp_path / "forger")
    git(tmp_path, "clone", "-q", "-b", "wctx-memory", remote, clone)
    source = _session_file(remote, b.machine_id())
    with open(os.path.join(clone, source), encoding="utf-8") as fh:
        lines = [json.loads(x) for x in fh.read().splitlines()]
    forged = [dict(r, author="Mallory <m@example.com>") if r["type"] == "session" else r for r in lines]
    target = os.path.join(clone, "machines", "0123456789abcdef", "sessions", os.path.basename(source))
    os.makedirs(os.path.dirname(target))
    _write_export(target, forged)
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", "forged")
    git(clone, "push", "-q", "origin", "wctx-memory")
    a.wctx("sync", "--remote", remote)
    assert by_id(a.json("search", "uploadDocument")["results"])[theirs]["recorded_by"].startswith(BOB)


def test_a_store_from_before_authorship_calls_its_own_items_yours(team, tmp_path):
    remote, a, b = team
    mine = a.capture("uploadDocument swallows the 419 expiry")
    db = sqlite3.connect(os.path.join(a.store_dir, "wctx.db"))
    # Back to schema 18: no author or machine columns, no hidden table, no machine id yet.
    with db:
        db.execute("DROP TABLE hidden")
        db.execute("DROP INDEX sessions_author")
        db.execute("ALTER TABLE sessions DROP COLUMN author")
        db.execute("ALTER TABLE sessions DROP COLUMN machine")
        db.execute("ALTER TABLE tombstones DROP COLUMN machine")
        db.execute("DELETE FROM sync_state WHERE key = 'machine'")
        for (trigger,) in db.execute(
            "SELECT name FROM sqlite_master WHERE name LIKE 'sync_changes_%'"
        ).fetchall():
            db.execute("DROP TRIGGER %s" % trigger)
        db.execute("DROP TABLE sync_changes")  # m021's, which runs again too
        db.execute("ALTER TABLE evidence DROP COLUMN symptom")  # m022's, which runs again too
        db.execute("DELETE FROM schema_migrations WHERE number >= 19")  # later ones run again
        db.execute("PRAGMA user_version = 18")
    db.close()
    got = by_id(a.json("search", "uploadDocument")["results"])
    assert got[mine]["recorded_by"] == "you"


# -- who may change whose evidence ----------------------------------------------------------------


def test_an_export_file_cannot_delete_or_rewrite_ones_own_items(team, tmp_path):
    remote, a, b = team
    mine = a.capture("uploadDocument swallows the 419 expiry and never retries")
    session = a.json("show", mine)["session"]
    path = str(tmp_path / "hostile.jsonl")
    exported = _exported(a)
    # A tombstone naming the item, another naming its session, and the item itself retracted and
    # re-stamped, in a file that also holds its session.
    forged = [
        {"type": "tombstone", "format": 1, "id": mine, "kind": "evidence", "session": session, "reason": "x"},
        {
            "type": "tombstone",
            "format": 1,
            "id": session,
            "kind": "session",
            "session": session,
            "reason": "x",
        },
    ]
    for r in exported:
        if r["type"] == "evidence":
            r = dict(
                r, status="retracted", updated_at="2099-01-01T00:00:00Z", confirmed_at="2099-01-01T00:00:00Z"
            )
        forged.append(r)
    for records in (forged[:1], forged[1:2], forged[2:]):
        _write_export(path, records)
        a.wctx("import-evidence", path)
        shown = a.json("show", mine)
        assert shown["status"] == "active" and shown["confirmed_at"] is None
    assert [r["id"] for r in a.json("search", "uploadDocument")["results"]] == [mine]
    # Nothing of it was taken as forgotten here: the item still travels.
    a.wctx("sync", "--remote", remote)
    b.wctx("sync", "--remote", remote)
    assert b.json("show", mine)["status"] == "active"


def test_a_teammates_directory_cannot_delete_or_rewrite_a_third_machines_items(team, tmp_path):
    remote, a, b = team
    theirs = b.capture("uploadDocument retries a 419 only after a token refresh")
    b.wctx("sync", "--remote", remote)
    session = a.json("sync", "--remote", remote) and a.json("show", theirs)["session"]
    # A third machine pushes a tombstone for Bob's item and his session into its own events file,
    # and a copy of Bob's session file with the item retracted.
    clone = str(tmp_path / "forger")
    git(tmp_path, "clone", "-q", "-b", "wctx-memory", remote, clone)
    source = _session_file(remote, b.machine_id())
    with open(os.path.join(clone, source), encoding="utf-8") as fh:
        lines = [json.loads(x) for x in fh.read().splitlines()]
    retracted = [dict(r, status="retracted", updated_at="2099-01-01T00:00:00Z") if r["type"] == "evidence" else r
                 for r in lines]  # fmt: skip
    base = os.path.join(clone, "machines", "0123456789abcdef")
    os.makedirs(os.path.join(base, "sessions"))
    _write_export(os.path.join(base, "sessions", os.path.basename(source)), retracted)
    _write_export(os.path.join(base, "events.jsonl"), [
        {"type": "tombstone", "format": 1, "id": theirs, "kind": "evidence", "session": session, "reason": "x"},
        {"type": "tombstone", "format": 1, "id": session, "kind": "session", "session": session, "reason": "x"},
    ])  # fmt: skip
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", "forged")
    git(clone, "push", "-q", "origin", "wctx-memory")
    a.wctx("sync")
    shown = a.json("show", theirs)
    assert shown["status"] == "active" and shown["recorded_by"].startswith(BOB)
    # A newcomer who sees the forged files before Bob's own still gets Bob's item, as Bob has it.
    c = Machine(tmp_path, "carol", "Carol Clark <carol@example.com>")
    c.repo = os.path.join(c.home, "src", "upload-sdk")
    git(tmp_path, "clone", "-q", os.path.join(str(tmp_path), "upstream", "upload-sdk"), c.repo)
    c.wctx("repo", "add", c.repo, "--name", "upload-sdk")
    c.wctx("sync", "--remote", remote)
    shown = c.json("show", theirs)
    assert shown["recorded_by"].startswith(BOB) and shown["status"] == "active"
    # Bob's own retraction and forget travel.
    b.wctx("retract", theirs)
    b.wctx("sync")
    a.wctx("sync")
    assert a.json("show", theirs)["status"] == "retracted"
    b.wctx("forget", theirs, "--reason", "wrong", "--yes")
    b.wctx("sync")
    a.wctx("sync")
    assert a.wctx("show", theirs, check=False).returncode == 1
