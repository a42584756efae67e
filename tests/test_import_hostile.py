"""Hostile and malformed shared memory: a teammate's export file or a tampered sync remote is
untrusted input. Whatever it holds, `wctx import-evidence` and `wctx sync` answer with one line
naming the file and line, store nothing of a refused file, write nothing outside the store,
let no path leave its repository and keep every secret out of the store, on the bulk path of a
large import as on the record-by-record one."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import test_sync
from conftest import WCTX_SCRIPT, db_snapshot, git, store_file_bytes

import wctx

SID = "ses-%010x"
EID = "ev-%010x"
T0 = "2026-02-01T10:00:00Z"


def session(n, **extra):
    rec = {"type": "session", "format": 1, "id": SID % n, "agent": "peer", "repo": "svc",
           "started_at": T0, "ended_at": T0, "summary": "peer session %d" % n}  # fmt: skip
    rec.update(extra)
    return rec


def evidence(n, sid, claim, root, head, path="a.py", symbol="handler", **extra):
    anchors = [{"repo": "svc", "root_commit": root, "path": path, "symbol": symbol, "commit": head}]
    rec = {"type": "evidence", "format": 1, "id": EID % n, "session": sid, "repo": "svc",
           "root_commit": root, "kind": "finding", "claim": claim, "detail": "detail of %d" % n,
           "status": "active", "created_at": T0, "updated_at": T0, "anchors": anchors}  # fmt: skip
    rec.update(extra)
    return rec


def lines(records):
    return "".join(json.dumps(r) + "\n" for r in records).encode("utf-8")


@pytest.fixture
def svc(git_repo, run_wctx, wctx_home):
    """A registered repository "svc" in this test's store, with one session and item imported:
    returns (repo, root commit)."""
    repo = git_repo("svc", {"a.py": "def handler():\n    return 1\n", "b.py": "x = 2\n"})
    assert run_wctx(["repo", "add", repo.path]).code == 0
    with wctx.open_store(wctx_home) as s:
        root = s.one("SELECT root_commit FROM repos")["root_commit"]
    return repo, root


def _seed(tmp_path, run_wctx, root, head):
    seed = tmp_path / "seed.jsonl"
    seed.write_bytes(lines([session(1), evidence(1, SID % 1, "the store already holds this", root, head)]))
    res = run_wctx(["import-evidence", str(seed)])
    assert res.code == 0, res


# Each case: a file's lines (given the root commit and head), and what the one-line error must
# name beside the file and line of the fault.
def _deep(opening, closing):
    return lambda root, head: [lines([session(2)]), b'{"type": "evidence", "extra": ' + opening * 100000
                                + closing * 100000 + b"}\n"]  # fmt: skip


def _record(**changes):
    def make(root, head):
        rec = evidence(2, SID % 2, "a hostile line", root, head)
        for k, v in changes.items():
            if v is _DROP:
                rec.pop(k)
            else:
                rec[k] = v
        return [lines([session(2), rec])]

    return make


def _raw(text):
    return lambda root, head: [lines([session(2)]), text]


_DROP = object()
HOSTILE_LINES = {
    "nested arrays": (_deep(b"[", b"]"), "not valid JSON"),
    "nested objects": (_deep(b'{"a": ', b"}"), "not valid JSON"),
    "evidence without kind": (_record(kind=_DROP), "evidence field kind"),
    "evidence with null kind": (_record(kind=None), "evidence field kind"),
    "invalid utf-8": (
        _raw(b'{"type": "session", "id": "ses-00000000aa", "summary": "\xff\xfe"}\n'),
        "not valid",
    ),
    "lone surrogate": (_record(claim="half \ud800 a character"), "evidence field claim"),
    "nul in a claim": (_record(claim="a\x00b"), "evidence field claim"),
    "50 MB line": (_record(detail="x" * (50 << 20)), "evidence field detail"),
    "format from the future": (_record(format=wctx.EXPORT_FORMAT + 1), "evidence field format"),
    "unknown record type": (_raw(b'{"type": "gizmo", "id": "gz-1"}\n'), "not a wctx export record"),
    "a list, not a record": (_raw(b"[1, 2, 3]\n"), "not a wctx export record"),
    "status outside the enum": (_record(status="deleted"), "evidence field status"),
    "month 13": (_record(created_at="2026-13-01T10:00:00Z"), "evidence field created_at"),
    "february 30": (_record(updated_at="2026-02-30T10:00:00Z"), "evidence field updated_at"),
    "hour 24": (_record(confirmed_at="2026-02-01T24:00:00Z"), "evidence field confirmed_at"),
    "not a time at all": (_record(created_at="yesterday"), "evidence field created_at"),
    "confidence as text": (_record(confidence="high"), "evidence field confidence"),
    "anchors as an object": (_record(anchors={"path": "a.py"}), "evidence field anchors"),
    "session that is not in the file": (_record(session=SID % 99), "not in the import"),
    "relation without kind": (
        _raw(b'{"type": "relation", "id": "rel:svc:x:other", "from": "svc", "to": "other"}\n'),
        "relation field kind",
    ),
    "tombstone without kind": (
        _raw(b'{"type": "tombstone", "id": "ev-0000000001", "session": "ses-0000000001", "reason": "r"}\n'),
        "tombstone field kind",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_LINES))
def test_a_hostile_line_is_one_line_naming_file_and_line_and_changes_nothing(
    case, svc, tmp_path, run_wctx, wctx_home
):
    repo, root = svc
    _seed(tmp_path, run_wctx, root, repo.head)
    good = tmp_path / "a-good.jsonl"
    good.write_bytes(lines([session(3), evidence(3, SID % 3, "a good line beside it", root, repo.head)]))
    make, names = HOSTILE_LINES[case]
    parts = make(root, repo.head)
    bad = tmp_path / "b-bad.jsonl"
    bad.write_bytes(b"".join(parts))
    before = db_snapshot(wctx_home)
    res = run_wctx(["import-evidence", str(good), str(bad)])
    assert res.code == 2, res
    err = res.err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in res.err, res
    assert "b-bad.jsonl:%d:" % (sum(p.count(b"\n") for p in parts)) in err, err
    assert names in err, err
    assert db_snapshot(wctx_home) == before


def indexes(home):
    with wctx.open_store(home) as s:
        return sorted(tuple(r) for r in s.db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))


@pytest.mark.parametrize("fault", ["bad kind", "unknown session", "directory"])
def test_a_bad_line_at_the_end_of_a_large_import_leaves_the_store_exactly_as_it_was(
    fault, svc, tmp_path, run_wctx, wctx_home
):
    # Enough new items beside the few stored for the bulk writer to set its indexes aside and
    # write whole chunks before it meets the last line.
    repo, root = svc
    _seed(tmp_path, run_wctx, root, repo.head)
    records = []
    for s in range(10):
        records.append(session(100 + s))
        records += [evidence(1000 * s + k, SID % (100 + s), "bulk finding %d.%d" % (s, k), root, repo.head)
                    for k in range(wctx._BULK_INDEX_MIN // 10 + 1)]  # fmt: skip
    last = evidence(99999, SID % 100, "the last line", root, repo.head)
    if fault == "bad kind":
        last["kind"] = "rumour"
    else:
        last["session"] = SID % 4242
    share = tmp_path / "share"
    share.mkdir()
    if fault == "directory":  # one file per session, the last file's last line at fault
        for s in range(10):
            mine = [r for r in records if r.get("session", r["id"]) == SID % (100 + s)]
            (share / ("s%02d.jsonl" % s)).write_bytes(lines(mine + ([last] if s == 9 else [])))
        target, where = str(share), "s09.jsonl:%d:" % (len(mine) + 1)
    else:
        (share / "big.jsonl").write_bytes(lines(records + [last]))
        target, where = str(share / "big.jsonl"), "big.jsonl:%d:" % (len(records) + 1)
    before, schema = db_snapshot(wctx_home), indexes(wctx_home)
    res = run_wctx(["import-evidence", target])
    assert res.code == 2, res
    assert len(res.err.strip().splitlines()) == 1 and where in res.err, res
    assert db_snapshot(wctx_home) == before and indexes(wctx_home) == schema


# -- wctx sync: a tampered remote ------------------------------------------------------------------

team = test_sync.team  # two machines sharing a bare repository on disk


def _git_bytes(repo, args, data):
    proc = subprocess.run(["git", "-C", repo, *args], input=data, capture_output=True, check=True)
    return proc.stdout.decode().strip()


def _tree(repo, entries):
    """A tree object of ``entries`` [(mode, name, bytes or tree id)], written with plumbing
    (no checkout, so names and modes git itself would never check out are allowed)."""
    rows = []
    for mode, name, content in entries:
        kind = "tree" if mode == "040000" else "blob"
        oid = content if kind == "tree" else _git_bytes(repo, ["hash-object", "-w", "--stdin"], content)
        rows.append("%s %s %s\t%s\n" % (mode, kind, oid, name))
    return _git_bytes(repo, ["mktree"], "".join(rows).encode())


def _push_tree(remote, extra_top, machine, session_files):
    """A commit on the team branch holding what it held, a third machine's ``session_files``
    [(mode, name, bytes)] and ``extra_top`` entries at the top of the tree."""
    tip = git(remote, "rev-parse", "wctx-memory").strip()
    top = [tuple(line.split(None, 3)) for line in git(remote, "cat-file", "-p", tip + "^{tree}").splitlines()]
    machines = next(oid for _, _, oid, name in top if name == "machines")
    inside = [(m, n, oid) for m, _, oid, n in
              (tuple(line.split(None, 3)) for line in git(remote, "cat-file", "-p", machines).splitlines())]  # fmt: skip
    inside.append(("040000", machine, _tree(remote, [("040000", "sessions", _tree(remote, session_files))])))
    entries = [("040000", "machines", _tree(remote, inside))] + extra_top
    commit = _git_bytes(remote, ["commit-tree", _tree(remote, entries), "-p", tip, "-m", "tampered"], b"")
    git(remote, "update-ref", "refs/heads/wctx-memory", commit)


def _listing(root):
    out = set()
    for base, dirs, files in os.walk(root):
        for name in dirs + files:
            out.add(os.path.relpath(os.path.join(base, name), root))
    return out


def test_a_tampered_remote_branch_is_reported_file_by_file_and_its_good_files_import(team, tmp_path):
    remote, a, b = team
    a.wctx("capture", "--finding", "alice's good item travels", "--repo", "upload-sdk")
    a.wctx("sync", "--remote", remote)
    template = next(json.loads(line) for text in test_sync.remote_files(remote).values()
                    for line in text.splitlines() if json.loads(line)["type"] == "session")  # fmt: skip

    def memory(n, claim, **changes):
        rec = {"type": "evidence", "format": 1, "id": EID % n, "session": SID % n, "repo": "upload-sdk",
               "kind": "finding", "claim": claim, "anchors": []}  # fmt: skip
        rec.update(changes)
        return lines([dict(template, id=SID % n), rec])

    pwned = tmp_path / "pwned"
    leaving = {"repo": "upload-sdk", "path": "../../home/alice/.ssh/id_rsa"}
    option = {"repo": "upload-sdk", "path": "--output=%s" % pwned}
    files = [
        ("100644", "ses-00000000c1.jsonl", memory(0xC1, "a third machine's good item")),
        (
            "100644",
            "ses-00000000c2.jsonl",
            lines([dict(template, id=SID % 0xC2)]) + b"[" * 200000 + b"]" * 200000,
        ),
        ("100644", "ses-00000000c3.jsonl", memory(0xC3, "kindless item", kind=None)),
        # a link whose target text is a well-formed file: still a link, never a memory file
        ("120000", "ses-00000000c4.jsonl", memory(0xC4, "an item behind a symbolic link")),
        ("120000", "ses-00000000c5.jsonl", b"../../../../../../../../etc/passwd"),
        ("100644", "ses-00000000c6.jsonl", b"\x00\xff\xfe not a JSONL file\n"),
        ("100644", "ses-00000000c7.jsonl", b'{"valid": "json"}\n[1, 2]\n'),
        ("100644", "ses-00000000c8.jsonl", memory(0xC8, "huge", detail="x" * (20 << 20))),
        ("100644", "ses-00000000c9.jsonl", memory(0xC9, "a path leaving", anchors=[leaving])),
        ("100644", "ses-00000000ca.jsonl", memory(0xCA, "an option as a path", anchors=[option])),
        # lines ended by a lone CR are no JSONL lines, here as for import-evidence of the same file
        ("100644", "ses-00000000cb.jsonl", memory(0xCB, "an item after a lone CR").replace(b"\n", b"\r")),
        ("100644", "notes.txt", b"a file that is not memory\n"),
    ]
    top = [
        ("100644", ".gitattributes", b"* filter=pwn diff=pwn merge=pwn\n"),
        (
            "100644",
            ".gitmodules",
            b'[submodule "x"]\n\tpath = x\n\turl = ext::sh -c touch%% %s\n' % str(pwned).encode(),
        ),
        ("040000", "..", _tree(remote, [("100644", "escape.jsonl", memory(0xCD, "from a tree named .."))])),
    ]
    _push_tree(remote, top, "00000000000000cc", files)
    with open(os.path.join(remote, "config"), "a") as fh:
        fh.write('[filter "pwn"]\n\tsmudge = touch %s\n\tclean = touch %s\n' % (pwned, pwned))
    before = _listing(b.root)
    got = b.json("sync", "--remote", remote)
    skipped = "\n".join(got["skipped"])
    for n, why in ((2, "nested too deeply"), (3, "kind"), (4, "symbolic link"), (5, "symbolic link"),
                   (6, "not valid JSON"), (7, "not a wctx export record"), (8, "detail"),
                   (9, "outside its repository"), (10, "outside its repository"), (11, "not valid JSON")):  # fmt: skip
        name = "ses-00000000c%x.jsonl" % n
        assert any(name in line and why in line for line in got["skipped"]), (name, skipped)
    assert len(got["skipped"]) == 10, skipped
    found = {r["claim"] for r in b.json("search", "item", "--all", "--limit", "50")["results"]}
    assert found == {"alice's good item travels", "a third machine's good item"}
    # Nothing written outside the store, nothing run.
    new = {p for p in _listing(b.root) - before if not p.startswith(os.path.join("home", ".wctx"))}
    assert new == set(), new
    assert not pwned.exists()
    # The next sync reports the same files again and imports nothing twice.
    again = b.json("sync")
    assert again["imported"]["evidence"] == 0 and len(again["skipped"]) == 10


HOOKS = ("pre-receive", "update", "post-receive", "post-update", "reference-transaction", "proc-receive",
         "push-to-checkout", "pre-push")  # fmt: skip


def _trap(path, marker):
    with open(path, "w") as fh:
        fh.write("#!/bin/sh\necho ran >> '%s'\n" % marker)
    os.chmod(path, 0o755)


@pytest.mark.parametrize("where", ["hooks", "hooksPath", "alternateRefsCommand", "packObjectsHook"])
def test_a_remote_on_disk_runs_none_of_its_programs_when_sync_fetches_or_pushes(team, tmp_path, where):
    # A remote on a path (a shared drive, a mounted share) is another user's repository: git runs
    # the receiving side of a push on this machine, in that repository, with its configuration.
    remote, a, b = team
    marker = tmp_path / "ran"
    a.wctx("capture", "--finding", "first item", "--repo", "upload-sdk")
    a.wctx("sync", "--remote", remote)
    if where == "hooks":
        for hook in HOOKS:
            _trap(os.path.join(remote, "hooks", hook), marker)
    elif where == "hooksPath":
        os.makedirs(str(tmp_path / "their-hooks"))
        for hook in HOOKS:
            _trap(str(tmp_path / "their-hooks" / hook), marker)
        git(remote, "config", "core.hooksPath", str(tmp_path / "their-hooks"))
    elif where == "packObjectsHook":  # what serving a fetch would run (git reads it from its own config only)
        _trap(str(tmp_path / "pack"), marker)
        git(remote, "config", "uploadpack.packObjectsHook", str(tmp_path / "pack"))
    else:
        # alternates make receive-pack run this command to list the other repository's refs
        other = str(tmp_path / "other.git")
        git(tmp_path, "init", "-q", "--bare", other)
        with open(os.path.join(remote, "objects", "info", "alternates"), "w") as fh:
            fh.write(os.path.join(other, "objects") + "\n")
        _trap(str(tmp_path / "list-refs"), marker)
        git(remote, "config", "core.alternateRefsCommand", str(tmp_path / "list-refs"))
    b.wctx("capture", "--finding", "second item", "--repo", "sdk")
    got = b.json("sync", "--remote", remote)
    assert got["pushed"] and not marker.exists()
    a.wctx("capture", "--finding", "third item", "--repo", "upload-sdk")
    assert a.json("sync")["pushed"] and not marker.exists()
    found = {r["claim"] for r in a.json("search", "item", "--all")["results"]}
    assert found == {"first item", "second item", "third item"}  # the pushes really landed


def test_a_remote_checkout_that_updates_its_files_on_push_is_refused_and_runs_nothing(team, tmp_path):
    # A non-bare remote with the branch checked out and receive.denyCurrentBranch=updateInstead
    # would check the pushed files out there, through that repository's filter drivers.
    remote, a, b = team
    a.wctx("capture", "--finding", "first item", "--repo", "upload-sdk")
    a.wctx("sync", "--remote", remote)
    marker = tmp_path / "ran"
    checkout = str(tmp_path / "checkout")
    git(tmp_path, "clone", "-q", "-b", "wctx-memory", remote, checkout)
    with open(os.path.join(checkout, ".gitattributes"), "w") as fh:
        fh.write("* filter=pwn\n")
    git(checkout, "add", ".gitattributes")
    git(checkout, "commit", "-q", "-m", "attributes")
    git(checkout, "config", "receive.denyCurrentBranch", "updateInstead")
    git(checkout, "config", "filter.pwn.smudge", "sh -c 'echo ran >> %s; cat'" % marker)
    git(checkout, "config", "filter.pwn.clean", "sh -c 'echo ran >> %s; cat'" % marker)
    _trap(os.path.join(checkout, ".git", "hooks", "push-to-checkout"), marker)
    b.wctx("capture", "--finding", "second item", "--repo", "sdk")
    proc = b.wctx("sync", "--remote", checkout, check=False)
    assert not marker.exists()
    assert proc.returncode != 0 and len(proc.stderr.strip().splitlines()) == 1, proc


# -- Secrets on the way in: the bulk writer and the record-by-record import alike ------------------

PLANTED = {  # kind -> (text as a teammate's agent wrote it, the part that must never be stored)
    "aws": ("AKIAPLANTEDKEYID0123", "AKIAPLANTEDKEYID0123"),
    "github": ("ghp_PlantedGithubToken0123456789abcdefgh", "PlantedGithubToken0123456789abcdefgh"),
    "pem": ("-----BEGIN RSA PRIVATE KEY----- MIIEpQIBAAKCAQEAplantedPemBody77 -----END RSA PRIVATE KEY-----",
            "MIIEpQIBAAKCAQEAplantedPemBody77"),
    "password": ("password=PlantedAssignedPw7", "PlantedAssignedPw7"),
}  # fmt: skip


def _planted_records(root, head, base, kind):
    """A session, an item with history, a tombstone and a relation carrying the secret ``kind``
    in every text field a record has (ids ``base`` + 0..2)."""
    text, _ = PLANTED[kind]
    word = text if " " not in text else "x"  # fields that hold one word: a path part, a branch
    sid = SID % base
    anchor = {"repo": "svc", "root_commit": root, "path": "conf/%s.env" % word,
              "symbol": "load " + text, "commit": head, "branch": "feature/" + word,
              "symbol_lang": text[:40]}  # fmt: skip
    history = [{"id": "evt-planted-%x" % base, "event": "confirmed", "at": T0, "agent": "agent " + text,
                "session": sid, "note": "checked " + text, "commits": {"svc": head}, "previous": []}]  # fmt: skip
    return [
        session(base, summary="summary " + text, agent="agent " + text, external_id="ext " + text,
                cwd="sub/" + word, branch="topic/" + word),
        evidence(base + 1, sid, "claim " + text, root, head, detail="detail " + text, anchors=[anchor],
                 history=history, confirmed_at=T0),
        {"type": "tombstone", "format": 1, "id": EID % (base + 2), "kind": "evidence", "session": sid,
         "reason": "reason " + text, "forgotten_at": T0},
        {"type": "relation", "format": 1, "id": "rel:svc:uses:%s" % kind, "from": "svc", "from_root": root,
         "kind": "uses", "to": "vault-%s" % kind, "note": "note " + text, "created_at": T0},
    ]  # fmt: skip


def _stored_bytes(home):
    with wctx.open_store(home) as s:
        s.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return store_file_bytes(home)


def _planted_rows(home):
    """What the store holds of the planted records, by their global ids."""
    snap = db_snapshot(home)
    with wctx.open_store(home) as s:
        return {
            "session": [tuple(r) for r in s.all(
                "SELECT summary, agent, external_id, cwd, branch FROM sessions WHERE id LIKE 'ses-000000f%'")],
            "evidence": [tuple(r) for r in s.all(
                "SELECT e.claim, e.claim_key, e.detail, a.path, a.symbol, a.branch, a.symbol_lang FROM evidence e "
                "JOIN anchors a ON a.evidence_rid = e.rid WHERE e.id LIKE 'ev-000000f%' ORDER BY e.id")],
            "history": sorted(tuple(r) for r in s.all(
                "SELECT agent, note FROM evidence_events WHERE id LIKE 'evt-planted-%'")),
            "tombstones": sorted(r["reason"] for r in s.all("SELECT reason FROM tombstones")),
            "relations": sorted(r["note"] for r in s.all("SELECT note FROM dormant_relations")),
        }, repr(snap)  # fmt: skip


@pytest.mark.parametrize("size", ["small", "bulk"])
def test_secrets_in_every_imported_field_are_stored_redacted(size, git_repo, tmp_path, run_wctx, wctx_home):
    repo = git_repo("svc", {"a.py": "def handler():\n    return 1\n"})
    assert run_wctx(["repo", "add", repo.path]).code == 0
    with wctx.open_store(wctx_home) as s:
        root = s.one("SELECT root_commit FROM repos")["root_commit"]
    planted = []
    for i, kind in enumerate(sorted(PLANTED)):
        planted += _planted_records(root, repo.head, 0xF000 + 16 * i, kind)
    records = list(planted)
    if size == "bulk":  # enough new items into an empty store for the bulk writer and its deferred indexes
        filler = [session(1)] + [
            evidence(10 + n, SID % 1, "ordinary finding %d about the cache" % n, root, repo.head)
            for n in range(wctx._BULK_INDEX_MIN)
        ]
        records = filler[:2000] + planted[:8] + filler[2000:] + planted[8:]
    path = tmp_path / "peer.jsonl"
    path.write_bytes(lines(records))
    res = run_wctx(["import-evidence", str(path), "--json"])
    assert res.code == 0, res
    assert res.json["evidence"] >= len(PLANTED)
    raw = _stored_bytes(wctx_home)
    rows, dump = _planted_rows(wctx_home)
    assert (
        rows["evidence"] and rows["session"] and rows["history"] and rows["tombstones"] and rows["relations"]
    )
    leaks = []
    for kind, (_, secret) in sorted(PLANTED.items()):
        for where, hay in (("file", raw), ("file, lower case", raw.lower())):
            if secret.encode() in hay or secret.lower().encode() in hay:
                leaks.append((kind, where))
        if secret in dump or secret.lower() in dump:
            leaks.append((kind, "rows"))
    assert leaks == [], leaks
    assert "REDACTED" in repr(rows)
    # Both import paths store the same thing, field for field, as the one boundary makes it.
    other = str(tmp_path / "one-at-a-time")
    assert run_wctx(["repo", "add", repo.path], env={"WCTX_HOME": other}).code == 0
    alone = tmp_path / "planted.jsonl"
    alone.write_bytes(lines(planted))
    assert run_wctx(["import-evidence", str(alone)], env={"WCTX_HOME": other}).code == 0
    assert _planted_rows(other)[0] == rows


# An identifier is a key: stored redacted it would name no record, and every other identifier
# holding a secret would become the same marker. Each shape here passes the identifier's pattern.
TOKEN = "ghp_PlantedGithubToken0123456789abcdefgh"
AWS = "AKIAPLANTEDKEYID0123"
SECRET_IDS = {
    "evidence id": (lambda r, s: r.update(id=TOKEN), "evidence field id"),
    "session id": (lambda r, s: (r.update(session=AWS), s.update(id=AWS)), "session field id"),
    "superseded_by": (lambda r, s: r.update(status="superseded", superseded_by=TOKEN), "superseded_by"),
    "history session": (
        lambda r, s: r.update(history=[{"id": "evt-x1", "event": "seen", "at": T0, "session": TOKEN}]),
        "history[0].session",
    ),
    "history event id": (
        lambda r, s: r.update(history=[{"id": "evt-" + TOKEN, "event": "seen", "at": T0}]),
        "history[0].id",
    ),
}


def test_topology_ids_and_names_that_read_like_an_assignment_still_import(svc, tmp_path, run_wctx, wctx_home):
    # A relation's id is made of its repositories' names ("rel:auth-token:uses:vault"), never
    # stored: a repository named like a secret's keyword is no secret.
    repo, root = svc
    records = [
        {"type": "relation", "format": 1, "id": "rel:auth-token:uses:svc", "from": "auth-token", "kind": "uses",
         "to": "svc", "to_root": root},
        {"type": "workspace", "format": 1, "id": "ws:secret", "name": "secret", "repos": [{"repo": "api-key"}]},
        {"type": "repository", "format": 1, "id": "repo:api-key", "name": "api-key"},
    ]  # fmt: skip
    peer = tmp_path / "topology.jsonl"
    peer.write_bytes(lines(records))
    res = run_wctx(["import-evidence", str(peer)])
    assert res.code == 0, res
    with wctx.open_store(wctx_home) as s:
        assert [r["from_name"] for r in s.all("SELECT from_name FROM dormant_relations")] == ["auth-token"]


@pytest.mark.parametrize("case", sorted(SECRET_IDS))
def test_an_identifier_holding_a_secret_is_refused_not_stored_redacted(
    case, svc, tmp_path, run_wctx, wctx_home
):
    repo, root = svc
    change, names = SECRET_IDS[case]
    ses, rec = session(5), evidence(5, SID % 5, "an item with a secret in a key", root, repo.head)
    change(rec, ses)
    bad = tmp_path / "peer.jsonl"
    bad.write_bytes(lines([ses, rec]))
    before = db_snapshot(wctx_home)
    for _ in range(2):  # the same file again is refused the same way (once stored, it could not be found)
        res = run_wctx(["import-evidence", str(bad)])
        assert res.code == 2, res
        assert len(res.err.strip().splitlines()) == 1 and "peer.jsonl:" in res.err and names in res.err, res
        assert "secret" in res.err and TOKEN not in res.err and AWS not in res.err, res
        assert db_snapshot(wctx_home) == before


# -- A shared directory of export files: a teammate's checkout ----------------------------------


def _entry(kind, share, tmp_path):
    bad = os.path.join(str(share), "m-bad.jsonl")
    if kind == "link to /dev/zero":
        os.symlink("/dev/zero", bad)
    elif kind == "fifo":
        os.mkfifo(bad)
    elif kind == "directory":
        os.mkdir(bad)
    elif kind == "link out of the directory":  # to a well-formed file: still not the share's own
        outside = tmp_path / "elsewhere.jsonl"
        outside.write_bytes(lines([session(7)]))
        os.symlink(str(outside), bad)
    return bad


ENTRIES = ["link to /dev/zero", "fifo", "directory", "link out of the directory"]


def _import_within(home, path):
    """``wctx import-evidence PATH`` in a process that is stopped should it block or run away (a
    guard against a hang on a FIFO or /dev/zero, never a measure): (exit code, stderr)."""
    proc = subprocess.run([sys.executable, WCTX_SCRIPT, "import-evidence", path], env=dict(os.environ, WCTX_HOME=home),
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    return proc.returncode, proc.stderr


@pytest.mark.parametrize("kind", ENTRIES)
def test_a_shared_directory_entry_that_is_not_a_plain_file_is_refused_and_nothing_imported(
    kind, svc, tmp_path, run_wctx, wctx_home
):
    repo, root = svc
    share = tmp_path / "team-memory"
    share.mkdir()
    (share / "a-good.jsonl").write_bytes(lines([session(3), evidence(3, SID % 3, "good", root, repo.head)]))
    bad = _entry(kind, share, tmp_path)
    before = db_snapshot(wctx_home)
    # a guard against a hang (the FIFO, /dev/zero), never a measure
    code, err = _import_within(wctx_home, str(share))
    assert code == 2 and len(err.strip().splitlines()) == 1 and bad in err, err
    assert db_snapshot(wctx_home) == before


@pytest.mark.parametrize("kind", ["link to /dev/zero", "fifo", "directory"])
def test_a_named_path_that_is_not_a_regular_file_is_refused(kind, svc, tmp_path, wctx_home):
    bad = _entry(kind, tmp_path, tmp_path)
    before = db_snapshot(wctx_home)
    code, err = _import_within(wctx_home, bad)
    if kind == "directory":  # an empty directory is an empty import
        assert code == 0, err
    else:
        assert code == 2 and len(err.strip().splitlines()) == 1 and bad in err, err
    assert db_snapshot(wctx_home) == before


# -- Paths in anchors ------------------------------------------------------------------------------

ESCAPING_PATHS = [
    "/etc/passwd", "../x", "a/../../x", "a/b/..", "a\x00b", "a/", "./a.py", "a//b", "a.py\n",
    "-x", "--output=/tmp/wctx-pwned", ":(top)a.py", ":!a.py", "d/" * 2100 + "x.py",
    ".git/config", "a/.git/hooks/pre-commit",
    # what a case-insensitive (macOS, Windows) or NTFS file system opens as .git
    ".GIT/config", "sub/.Git/hooks/post-checkout", ".git./config", ".git /config", "GIT~1/config",
]  # fmt: skip


@pytest.mark.parametrize("path", ESCAPING_PATHS, ids=repr)
def test_an_anchor_path_that_leaves_its_repository_or_names_git_internals_is_refused(
    path, svc, tmp_path, run_wctx, wctx_home
):
    repo, root = svc
    rec = evidence(6, SID % 6, "an item citing a hostile path", root, repo.head, path=path)
    bad = tmp_path / "peer.jsonl"
    bad.write_bytes(lines([session(6), rec]))
    before = db_snapshot(wctx_home)
    res = run_wctx(["import-evidence", str(bad)])
    assert res.code == 2, res
    assert (
        len(res.err.strip().splitlines()) == 1 and "peer.jsonl:2: evidence field anchors[0].path" in res.err
    ), res
    assert db_snapshot(wctx_home) == before
    assert not os.path.exists("/tmp/wctx-pwned")


def test_paths_that_only_look_like_escapes_stay_literal_and_nothing_outside_is_read(
    git_repo, tmp_path, run_wctx, wctx_home
):
    # Every cited file below holds, outside the repository, exactly the recorded blob: were any
    # path followed out (a symlinked directory, ~, a backslash or a drive letter taken as a
    # separator, URL-decoding), the item would come out current.
    body = "def handler():\n    return 42\n"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text(body)
    home = tmp_path / "their-home"
    home.mkdir()
    (home / "x.py").write_text(body)
    repo = git_repo("svc", {"a.py": "def handler():\n    return 1\n"})
    os.symlink(str(outside), os.path.join(repo.path, "link"))  # a symlinked directory, committed
    repo.commit("a link out")
    blob = git(repo.path, "hash-object", "--no-filters", str(outside / "secret.py")).strip()
    env = {"HOME": str(home)}
    assert run_wctx(["repo", "add", repo.path], env=env).code == 0
    with wctx.open_store(wctx_home) as s:
        root = s.one("SELECT root_commit FROM repos")["root_commit"]
    literal = ["link/secret.py", "~/x.py", "..\\outside\\secret.py", "C:\\x.py", "C:/x.py",
               "%2e%2e/outside/secret.py", "\\\\server\\share\\x.py", "d/" * 1000 + "x.py"]  # fmt: skip
    records = [session(8)]
    for i, path in enumerate(literal):
        rec = evidence(80 + i, SID % 8, "an item citing %s" % path[:40], root, repo.head, path=path)
        rec["anchors"][0]["blob"] = blob
        records.append(rec)
    peer = tmp_path / "peer.jsonl"
    peer.write_bytes(lines(records))
    res = run_wctx(["import-evidence", str(peer)], env=env)
    assert res.code == 0, res
    with wctx.open_store(wctx_home) as s:
        stored = {
            r["id"]: r["path"]
            for r in s.all("SELECT e.id, a.path FROM anchors a JOIN evidence e ON e.rid = a.evidence_rid")
        }
    for i, path in enumerate(literal):
        eid = EID % (80 + i)
        assert stored[eid] == path  # kept as written: a name inside the repository
        shown = run_wctx(["show", eid, "--json"], env=env)
        assert shown.code == 0, shown
        assert shown.json["freshness"]["verdict"] in ("stale", "unknown"), (path, shown.json["freshness"])


# -- Valid but hostile: both import paths give one store ---------------------------------------


@pytest.mark.parametrize("rebuilt", [False, True], ids=["indexes-updated", "indexes-rebuilt"])
def test_hostile_but_valid_records_give_the_same_store_in_bulk_as_one_at_a_time(
    git_repo, tmp_path, monkeypatch, rebuilt
):
    import test_import_bulk as bulk_tests

    monkeypatch.setattr(wctx, "_BULK_INDEX_MIN", 1 if rebuilt else 10**9)
    repo, stores, root = bulk_tests.two_stores(git_repo, tmp_path)
    head, later = repo.head, "2026-03-01T10:00:00Z"

    def item(n, sid, claim, **extra):
        return bulk_tests.evidence(n, sid, claim, root, head, **extra)

    s1, s2 = SID % 1, SID % 2
    records = [
        bulk_tests.session(1), bulk_tests.session(2),
        # superseded by each other, by itself, by an id that exists nowhere
        item(10, s1, "cycle a", status="superseded", superseded_by=EID % 11, updated_at=later),
        item(11, s1, "cycle b", status="superseded", superseded_by=EID % 10, updated_at=later),
        item(12, s1, "superseded by itself", status="superseded", superseded_by=EID % 12),
        item(13, s1, "superseded by nothing", status="superseded", superseded_by=EID % 0xDEAD),
        item(14, s1, "retracted and superseded", status="retracted", superseded_by=EID % 10),
        # an item whose id is a session's, and one whose id the store holds for another claim
        item(15, s1, "an item named like a session", id=SID % 2),
        item(3, s2, "another claim under a stored id", status="retracted", updated_at=later),
        # one history event id on two items: ids are global, the first one keeps it
        item(16, s1, "first with the event", history=[{"id": "evt-shared", "event": "seen", "at": T0}]),
        item(17, s2, "second with the event", history=[{"id": "evt-shared", "event": "confirmed", "at": later}]),
        item(18, s2, "confirmed without history", confirmed_at=later),
        # one id twice in the file, then a repeat of a stored item (its id becomes a second name)
        # and items superseded by that name, before and after it is given
        item(22, s1, "said twice"),
        item(22, s2, "said twice in other words", status="retracted", updated_at=later),
        item(23, s1, "superseded by a name given later", status="superseded", superseded_by=EID % 24),
        item(24, s2, "base finding 5"),
        item(25, s1, "superseded by a name given earlier", status="superseded", superseded_by=EID % 24),
        # forgotten: an item of a forgotten session, tombstones for ids nobody holds, one whose
        # kind says session while the id is an item's
        bulk_tests.session(7),
        item(19, SID % 7, "an item of a forgotten session"),
        {"type": "tombstone", "format": 1, "id": SID % 7, "kind": "session", "session": SID % 7, "reason": "gone"},
        {"type": "tombstone", "format": 1, "id": EID % 0xBEEF, "kind": "evidence", "session": s1, "reason": "nobody"},
        {"type": "tombstone", "format": 1, "id": EID % 4, "kind": "session", "session": s1, "reason": "wrong kind"},
    ]  # fmt: skip
    try:
        base = [bulk_tests.session(0)] + [item(i, SID % 0, "base finding %d" % i) for i in range(8)]
        for s in stores:
            wctx.import_evidence(s, [bulk_tests.write(tmp_path / "base.jsonl", base)])
        got = wctx.import_evidence(stores[0], [bulk_tests.write(tmp_path / "hostile.jsonl", records)])
        assert got == bulk_tests.one_at_a_time(stores[1], records, got)
        assert bulk_tests.state(stores[0]) == bulk_tests.state(stores[1])
        for s in stores:
            assert s.one("PRAGMA integrity_check")[0] == "ok"
            # what it is: the cycle is stored as written and shown without following it
            assert wctx.get_evidence(s, EID % 10)["superseded_by"] == EID % 11
            assert wctx.get_evidence(s, EID % 11)["superseded_by"] == EID % 10
            assert s.one("SELECT claim FROM evidence WHERE id = ?", (EID % 3,))["claim"] == "base finding 3"
            assert s.one("SELECT status FROM evidence WHERE id = ?", (EID % 4,))["status"] == "active"
            assert s.one("SELECT 1 FROM evidence WHERE id = ?", (EID % 19,)) is None
            assert s.one("SELECT superseded_by FROM evidence WHERE id = ?", (EID % 25,))[0] == EID % 5
            hits = wctx.search(s, "cycle", repo="svc", limit=10, include_inactive=True)["results"]
            assert {r["id"] for r in hits} >= {EID % 10, EID % 11}
    finally:
        for s in stores:
            s.close()


def test_a_file_saved_with_a_byte_order_mark_and_crlf_line_ends_imports_as_written(
    svc, tmp_path, run_wctx, wctx_home
):
    # What an editor on Windows makes of an export file: still the same records.
    repo, root = svc
    text = lines([session(9), evidence(9, SID % 9, "saved on another system", root, repo.head)])
    peer = tmp_path / "peer.jsonl"
    peer.write_bytes(b"\xef\xbb\xbf" + text.replace(b"\n", b"\r\n"))
    res = run_wctx(["import-evidence", str(peer), "--json"])
    assert res.code == 0 and res.json["evidence"] == 1 and res.json["sessions"] == 1, res
    with wctx.open_store(wctx_home) as s:
        assert (
            s.one("SELECT claim FROM evidence WHERE id = ?", (EID % 9,))["claim"] == "saved on another system"
        )
    # a mark anywhere else is no part of JSON
    peer.write_bytes(text + b"\xef\xbb\xbf" + lines([session(10)]))
    res = run_wctx(["import-evidence", str(peer)])
    assert res.code == 2 and "peer.jsonl:3: not valid JSON" in res.err, res
