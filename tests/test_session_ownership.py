"""Whose session an arriving item joins, and what an import refuses and says it refused.

An item belongs to the machine whose directory of the team branch it arrived from (or that
recorded it), never to the session id it claims: a file in a teammate's directory named after one
of your sessions, or an export file naming one, adds nothing to it. What an import refuses (such an
item, another machine's forget or status change of an item it did not record) is counted and said,
in the text and under --json. Two machines share memory through a bare repository on disk.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex

from conftest import git
from test_authorship import BOB, _exported, _session_file, _write_export
from test_authorship import team as team  # noqa: F401  (the fixture: two machines and a remote)

FORGER = "0123456789abcdef"


def _forged_item(template, session):
    """An evidence record as a teammate's wctx writes one, under a new id, claiming ``session``."""
    return dict(template, id="ev-" + secrets.token_hex(5), session=session, claim="the forged claim zyxwv")


def _push_files(remote, tmp_path, files):
    """Push ``files`` ({path in the branch: records}) to the team branch, as a teammate can."""
    clone = str(tmp_path / ("forger-" + secrets.token_hex(3)))
    git(tmp_path, "clone", "-q", "-b", "wctx-memory", remote, clone)
    for path, records in files.items():
        full = os.path.join(clone, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        _write_export(full, records)
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", "forged")
    git(clone, "push", "-q", "origin", "wctx-memory")


def _branch_text(remote):
    files = git(remote, "ls-tree", "-r", "--name-only", "wctx-memory").split()
    return "".join(git(remote, "show", "wctx-memory:" + p) for p in files)


def test_a_teammates_file_named_after_ones_session_adds_nothing_to_it(team, tmp_path):
    remote, a, b = team
    mine = a.capture("uploadDocument swallows the 419 expiry and never retries")
    session = a.json("show", mine)["session"]
    b.capture("uploadDocument retries a 419 only after a token refresh")
    a.wctx("sync", "--remote", remote)
    b.wctx("sync", "--remote", remote)
    template = next(r for r in _exported(b) if r["type"] == "evidence")
    forged = _forged_item(template, session)
    session_record = {
        "type": "session",
        "format": 1,
        "id": session,
        "agent": "cli",
        "machine": b.machine_id(),
    }
    _push_files(
        remote,
        tmp_path,
        {"machines/%s/sessions/%s.jsonl" % (b.machine_id(), session): [session_record, forged]},
    )
    out = a.wctx("sync").stdout
    assert a.wctx("show", forged["id"], check=False).returncode == 1
    assert not any("zyxwv" in r["claim"] for r in a.json("search", "zyxwv")["results"])
    assert "refused 1" in out and "session" in out, out
    # Nothing of it leaves Alice's machine as hers.
    a.capture("uploadDocument logs the expired token")
    a.wctx("sync")
    assert forged["id"] not in _branch_text(remote).replace(
        git(remote, "show", "wctx-memory:machines/%s/sessions/%s.jsonl" % (b.machine_id(), session)), ""
    )
    assert a.json("show", mine)["recorded_by"] == "you"


def test_a_third_machine_cannot_add_to_or_take_over_a_teammates_session(team, tmp_path):
    remote, a, b = team
    theirs = b.capture("uploadDocument retries a 419 only after a token refresh")
    b.wctx("sync", "--remote", remote)
    a.wctx("sync", "--remote", remote)
    session = a.json("show", theirs)["session"]
    source = _session_file(remote, b.machine_id())
    lines = [json.loads(x) for x in git(remote, "show", "wctx-memory:" + source).splitlines()]
    template = next(r for r in lines if r["type"] == "evidence")
    claimed = [dict(r, machine=FORGER, author="Mallory <m@example.com>") if r["type"] == "session" else r
               for r in lines]  # fmt: skip
    forged = _forged_item(template, session)
    _push_files(remote, tmp_path, {"machines/%s/sessions/%s.jsonl" % (FORGER, session): claimed + [forged]})
    report = a.json("sync")
    assert a.wctx("show", forged["id"], check=False).returncode == 1
    assert sum(report["refused"].values()) == 1, report["refused"]
    assert a.json("show", theirs)["recorded_by"].startswith(BOB)
    # A second push into the same file, after the first sync, is refused as well.
    again = _forged_item(template, session)
    _push_files(
        remote, tmp_path, {"machines/%s/sessions/%s.jsonl" % (FORGER, session): claimed + [forged, again]}
    )
    a.wctx("sync")
    assert a.wctx("show", again["id"], check=False).returncode == 1
    assert a.json("show", theirs)["recorded_by"].startswith(BOB)


def test_an_export_file_naming_ones_session_adds_nothing_and_says_so(team, tmp_path):
    remote, a, b = team
    mine = a.capture("uploadDocument swallows the 419 expiry and never retries")
    records = _exported(a)
    session = a.json("show", mine)["session"]
    template = next(r for r in records if r["type"] == "evidence")
    forged = _forged_item(template, session)
    path = str(tmp_path / "claims-my-session.jsonl")
    # The session as exported (this machine's own id), and as another machine's.
    for session_record in (
        next(r for r in records if r["type"] == "session"),
        dict(next(r for r in records if r["type"] == "session"), machine=b.machine_id()),
    ):
        _write_export(path, [session_record, forged])
        proc = a.wctx("import-evidence", path)
        assert "refused 1" in proc.stdout and "this machine" in proc.stdout, proc.stdout
        got = a.json("import-evidence", path)
        assert got["refused"] == 1 and len(got["refusals"]) == 1, got
        assert a.wctx("show", forged["id"], check=False).returncode == 1
    assert not any("zyxwv" in r["claim"] for r in a.json("search", "zyxwv")["results"])


def test_a_refused_forget_or_status_change_is_counted_and_said(team, tmp_path):
    remote, a, b = team
    mine = a.capture("uploadDocument swallows the 419 expiry and never retries")
    session = a.json("show", mine)["session"]
    path = str(tmp_path / "change-mine.jsonl")
    retracted = [dict(r, status="retracted", updated_at="2099-01-01T00:00:00Z") if r["type"] == "evidence" else r
                 for r in _exported(a)]  # fmt: skip
    tombstone = {
        "type": "tombstone",
        "format": 1,
        "id": mine,
        "kind": "evidence",
        "session": session,
        "reason": "x",
    }
    for records, said in (([tombstone], "a forget"), (retracted, "a status change")):
        _write_export(path, records)
        proc = a.wctx("import-evidence", path)
        line = next(x for x in proc.stdout.splitlines() if x.startswith("refused 1: " + said))
        assert "recorded on this machine" in line, proc.stdout
        assert a.json("show", mine)["status"] == "active"
    # Through sync: a third machine's events retract and forget Bob's item; Alice's sync says so.
    theirs = b.capture("uploadDocument retries a 419 only after a token refresh")
    b.wctx("sync", "--remote", remote)
    a.wctx("sync", "--remote", remote)
    bob_session = a.json("show", theirs)["session"]
    source = _session_file(remote, b.machine_id())
    lines = [json.loads(x) for x in git(remote, "show", "wctx-memory:" + source).splitlines()]
    changed = [dict(r, status="retracted", updated_at="2099-01-01T00:00:00Z") if r["type"] == "evidence" else r
               for r in lines]  # fmt: skip
    forget = dict(tombstone, id=theirs, session=bob_session)
    _push_files(remote, tmp_path, {"machines/%s/events.jsonl" % FORGER: changed + [forget]})
    out = a.wctx("sync").stdout
    said = [x for x in out.splitlines() if x.startswith("refused 1: from machine %s: " % FORGER[:8])]
    assert len(said) == 2 and "a forget" in said[0] + said[1] and "a status change" in said[0] + said[1], out
    assert a.json("show", theirs)["status"] == "active"


def test_retract_or_forget_of_a_teammates_item_says_it_is_this_machine_only(team, tmp_path):
    remote, a, b = team
    mine = a.capture("uploadDocument swallows the 419 expiry and never retries")
    theirs = b.capture("uploadDocument retries a 419 only after a token refresh")
    b.wctx("sync", "--remote", remote)
    a.wctx("sync", "--remote", remote)
    out = a.wctx("retract", theirs).stdout
    assert "this machine only" in out and BOB in out and "wctx hide %s" % theirs in out, out
    assert "this machine only" not in a.wctx("retract", mine).stdout
    got = a.json("forget", theirs, "--reason", "it quotes a token", "--yes")
    assert got["local_only"][theirs].startswith(BOB) and "this machine only" in got["message"], got
    # The forget travels as a request: Bob's machine shows it, with the one command that honours
    # it, and nothing is deleted there until Bob runs it.
    a.wctx("sync")
    out = b.wctx("sync").stdout
    line = next(x for x in out.splitlines() if theirs in x)
    assert "wctx forget %s" % theirs in line and a.machine_id()[:8] in line, out
    assert b.json("show", theirs)["status"] == "active"
    command = shlex.split(line[line.index("wctx forget") :])
    b.wctx(*command[1:], "--yes")  # the command as shown honours it
    assert b.wctx("show", theirs, check=False).returncode == 1
    b.wctx("sync")
    a.wctx("sync")
    c_out = b.wctx("sync").stdout
    assert theirs not in c_out
