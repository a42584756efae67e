"""Hostile and malformed shared memory: a teammate's export file or a tampered sync remote is
untrusted input. Whatever it holds, `wctx import-evidence` and `wctx sync` answer with one line
naming the file and line, store nothing of a refused file, write nothing outside the store,
let no path leave its repository and keep every secret out of the store, on the bulk path of a
large import as on the record-by-record one."""

from __future__ import annotations

import json

import pytest
from conftest import db_snapshot

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
    if names != "not in the import":  # a record that only fails against the others: no line to name
        assert "b-bad.jsonl:%d:" % (sum(p.count(b"\n") for p in parts)) in err, err
    assert names in err, err
    assert db_snapshot(wctx_home) == before
