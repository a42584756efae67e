"""What arrives from another store is held to the shapes wctx itself writes. An item's or a
session's id is "ev-" or "ses-" and ten lower-case ASCII hex digits, so no twin of an id in other
case or in other digits (full-width, Arabic-Indic) is stored beside it; a confidence is a JSON
number, never a string or a boolean. Such a record is refused with a reason naming the file, the
line and the field, through `import-evidence` and through `sync`, and nothing else changes."""

from __future__ import annotations

import json

import pytest
import test_sync
from conftest import db_snapshot
from test_import_hostile import EID, SID, _push_tree, evidence, lines, session, svc  # noqa: F401

import wctx

GOOD_N = 0x4B1D


def _twin_upper(rec):
    rec["id"] = rec["id"].upper()


def _fullwidth(rec):
    rec["id"] = "ev-" + "".join(chr(ord(c) + 0xFEE0) if c.isdigit() else c for c in "%010x" % 0x3070)


def _arabic_indic(rec):
    rec["session"] = "ses-" + "".join(chr(0x660 + int(c)) if c.isdigit() else c for c in "%010x" % 7)


def _session_twin(rec):
    rec["session"] = (SID % GOOD_N).replace("ses-", "Ses-")


BAD = {
    "confidence as a numeric string": (lambda r: r.update(confidence="0.25"), "confidence"),
    "confidence true": (lambda r: r.update(confidence=True), "confidence"),
    "confidence false": (lambda r: r.update(confidence=False), "confidence"),
    "upper-case twin of a stored id": (_twin_upper, "evidence field id"),
    "full-width digits": (_fullwidth, "evidence field id"),
    "arabic-indic digits in its session": (_arabic_indic, "evidence field session"),
    "session id in other case": (_session_twin, "evidence field session"),
    "superseded_by in upper case": (
        lambda r: r.update(status="superseded", superseded_by=(EID % 9).upper()),
        "superseded_by",
    ),
}


@pytest.fixture
def seeded(svc, tmp_path, run_wctx):  # noqa: F811 - the fixture imported above
    repo, root = svc
    seed = tmp_path / "seed.jsonl"
    seed.write_bytes(
        lines([session(GOOD_N), evidence(GOOD_N, SID % GOOD_N, "the ledger rounds half up", root, repo.head)])
    )
    assert run_wctx(["import-evidence", str(seed)]).code == 0
    return repo, root


@pytest.mark.parametrize("case", sorted(BAD))
def test_import_refuses_odd_ids_and_numbers_and_changes_nothing(case, seeded, tmp_path, run_wctx, wctx_home):
    repo, root = seeded
    change, names = BAD[case]
    rec = evidence(GOOD_N, SID % GOOD_N, "the ledger rounds half up, again", root, repo.head, confidence=0.5)
    change(rec)
    bad = tmp_path / "peer.jsonl"
    bad.write_bytes(lines([session(GOOD_N), rec]))
    before = db_snapshot(wctx_home)
    res = run_wctx(["import-evidence", str(bad)])
    assert res.code == 2, (case, res)
    line = res.err.strip()
    assert len(line.splitlines()) == 1 and "peer.jsonl:2:" in line and names in line, line
    assert db_snapshot(wctx_home) == before


def test_json_numbers_and_wctx_ids_still_import(seeded, tmp_path, run_wctx, wctx_home):
    repo, root = seeded
    records = [session(0x51)]
    for n, confidence in ((0x51, 0.5), (0x52, 1), (0x53, 0)):
        records.append(evidence(n, SID % 0x51, "confidence %r travels" % confidence, root, repo.head,
                                confidence=confidence))  # fmt: skip
    peer = tmp_path / "numbers.jsonl"
    peer.write_bytes(lines(records))
    assert run_wctx(["import-evidence", str(peer)]).code == 0
    with wctx.open_store(wctx_home) as s:
        stored = {r["id"]: r["confidence"] for r in s.all("SELECT id, confidence FROM evidence")}
    assert stored[EID % 0x51] == 0.5 and stored[EID % 0x52] == 1.0 and stored[EID % 0x53] == 0.0


team = test_sync.team


def test_sync_skips_a_teammates_file_with_odd_ids_or_numbers_and_imports_the_rest(team):
    remote, a, b = team
    a.wctx("capture", "--finding", "invoices are numbered per year", "--repo", "upload-sdk")
    a.wctx("sync", "--remote", remote)
    template = next(json.loads(line) for text in test_sync.remote_files(remote).values()
                    for line in text.splitlines() if json.loads(line)["type"] == "session")  # fmt: skip

    def memory(n, claim, **changes):
        rec = {"type": "evidence", "format": 1, "id": EID % n, "session": SID % n, "repo": "upload-sdk",
               "kind": "finding", "claim": claim, "anchors": []}  # fmt: skip
        rec.update(changes)
        return lines([dict(template, id=SID % n), rec])

    files = [
        ("100644", "ses-00000000d1.jsonl", memory(0xD1, "a teammate's sound item", confidence=0.75)),
        ("100644", "ses-00000000d2.jsonl", memory(0xD2, "a string confidence", confidence="0.75")),
        ("100644", "ses-00000000d3.jsonl", memory(0xD3, "an upper-case id", id=(EID % 0xD3).upper())),
        ("100644", "ses-00000000d4.jsonl", memory(0xD4, "full-width digits", id="ev-\uff10\uff10\uff10\uff10\uff10\uff10\uff10\uff10d4")),
        ("100644", "ses-00000000d5.jsonl", memory(0xD5, "a boolean confidence", confidence=True)),
    ]  # fmt: skip
    _push_tree(remote, [], "00000000000000dd", files)
    got = b.json("sync", "--remote", remote)
    skipped = got["skipped"]
    for n, why in ((2, "confidence"), (3, "field id"), (4, "field id"), (5, "confidence")):
        name = "ses-00000000d%d.jsonl" % n
        assert any(name in line and why in line for line in skipped), (name, skipped)
    assert len(skipped) == 4, skipped
    found = {r["claim"] for r in b.json("search", "item", "--all", "--limit", "50")["results"]}
    found |= {r["claim"] for r in b.json("search", "invoices", "--all")["results"]}
    assert "a teammate's sound item" in found and "invoices are numbered per year" in found
    assert not found & {
        "a string confidence",
        "an upper-case id",
        "full-width digits",
        "a boolean confidence",
    }
    again = b.json("sync")
    assert again["imported"]["evidence"] == 0 and len(again["skipped"]) == 4
