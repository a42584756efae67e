"""Sharing memory between machines: export as per-session JSONL, import idempotently."""

from __future__ import annotations

import json
import os

import wctx


def _capture_two_sessions(product):
    first = wctx.capture(
        product.store,
        [{"kind": "finding", "claim": "SDK swallows the 419", "repo": "upload-sdk",
          "files": ["src/upload/upload.ts#uploadDocument"]}],
        summary="traced the upload failure", cwd=product.ui.path,
    )  # fmt: skip
    second = wctx.capture(
        product.store,
        [{"kind": "decision", "claim": "retry twice then surface the error", "repo": "upload-sdk"}],
        cwd=product.sdk.path,
    )
    return first, second


def test_export_writes_one_file_per_session_and_is_stable(product, tmp_path):
    first, second = _capture_two_sessions(product)
    out = tmp_path / "team" / "wctx"
    counts = wctx.export_evidence(product.store, out_dir=str(out))
    assert counts["evidence"] == 2 and counts["sessions"] == 2
    machine = wctx.store_machine_id(product.store)
    assert sorted(os.listdir(out)) == sorted(
        [first["session"] + ".jsonl", second["session"] + ".jsonl", "topology-%s.jsonl" % machine]
    )
    lines = (out / (first["session"] + ".jsonl")).read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["type"] for r in records] == ["session", "evidence"]
    ev = records[1]
    assert ev["id"] == first["evidence"][0]["id"]
    # Provenance travels with the item: the SDK's own commit, not the UI's.
    file_anchor = [a for a in ev["anchors"] if a["path"]][0]
    assert file_anchor["commit"] == product.sdk.head
    assert file_anchor["blob"] == product.sdk.blob("src/upload/upload.ts")
    # A second export of unchanged data rewrites nothing (no churn in the shared repository).
    again = wctx.export_evidence(product.store, out_dir=str(out))
    assert again["files"] == 0


def test_import_into_another_store_is_idempotent_and_searchable(product, tmp_path):
    first, _ = _capture_two_sessions(product)
    out = tmp_path / "share"
    wctx.export_evidence(product.store, out_dir=str(out))

    other = wctx.open_store(str(tmp_path / "other-home"))
    try:
        # The other machine registers the same checkouts under its own names.
        wctx.register_repo(other, product.sdk.path, name="sdk", workspace="team")
        wctx.register_repo(other, product.ui.path, name="ui", workspace="team")
        counts = wctx.import_evidence(other, [str(out)])
        assert counts == {
            "sessions": 2,
            "evidence": 2,
            "updated": 0,
            "unchanged": 0,
            "duplicates": 0,
            "forgotten": 0,
            "refused": 0,  # changes to an item that are not this file's to make
            "refusals": {},  # and why, one line each
            # The topology travels too: ui uses sdk here; api-gateway and other are not registered, so
            # their relation and memberships wait for them.
            "relations": 1,
            "memberships": 2,
            "waiting": 3,
        }
        assert wctx.import_evidence(other, [str(out)])["unchanged"] == 2
        assert other.one("SELECT count(*) AS n FROM evidence")["n"] == 2

        res = wctx.search(other, "419", repo="ui")
        assert [r["id"] for r in res["results"]] == [first["evidence"][0]["id"]]
        # Matched by root commit: the item is about "sdk" here, and freshness is checkable.
        assert res["results"][0]["repo"] == "sdk"
        assert res["results"][0]["freshness"]["verdict"] == "current"
    finally:
        other.close()


def test_import_takes_over_a_newer_retraction(product, tmp_path):
    first, _ = _capture_two_sessions(product)
    out = tmp_path / "share"
    wctx.export_evidence(product.store, out_dir=str(out))
    other = wctx.open_store(str(tmp_path / "other-home"))
    try:
        wctx.import_evidence(other, [str(out)])
        eid = first["evidence"][0]["id"]
        # Retract on the first machine a moment later, export again, import on the second.
        product.store.db.execute(
            "UPDATE evidence SET updated_at = '2999-01-01T00:00:00Z' WHERE id = ?", (eid,)
        )
        wctx.retract(product.store, eid)
        product.store.db.execute(
            "UPDATE evidence SET updated_at = '2999-01-01T00:00:00Z' WHERE id = ?", (eid,)
        )
        wctx.export_evidence(product.store, out_dir=str(out))
        counts = wctx.import_evidence(other, [str(out)])
        assert counts["updated"] == 1
        assert other.one("SELECT status FROM evidence WHERE id = ?", (eid,))["status"] == "retracted"
    finally:
        other.close()


def test_bad_import_changes_nothing(product, tmp_path, run_cli):
    _capture_two_sessions(product)
    out = tmp_path / "share"
    wctx.export_evidence(product.store, out_dir=str(out))
    bad = out / "zz-bad.jsonl"
    bad.write_text('{"type": "evidence", "id": "ev-0000000000", "kind": "rumour", "claim": "x"}\n')
    other_home = tmp_path / "other-home"
    res = run_cli(["--home", other_home, "import-evidence", out])
    assert res.code == 2
    assert "unknown kind 'rumour'" in res.err and len(res.err.strip().splitlines()) == 1
    other = wctx.open_store(str(other_home))
    try:
        assert other.one("SELECT count(*) AS n FROM evidence")["n"] == 0
        assert other.one("SELECT count(*) AS n FROM sessions")["n"] == 0
    finally:
        other.close()


def test_import_refuses_paths_that_escape_a_repository(product, tmp_path):
    _capture_two_sessions(product)
    out = tmp_path / "share"
    wctx.export_evidence(product.store, out_dir=str(out))
    name = sorted(os.listdir(out))[0]
    records = [json.loads(line) for line in (out / name).read_text().splitlines()]
    for r in records:
        if r["type"] == "evidence":
            r["id"] = "ev-ffffffffff"
            r["anchors"].append(dict(r["anchors"][0], path="../../etc/passwd"))
    (out / name).write_text("".join(json.dumps(r) + "\n" for r in records))
    other = wctx.open_store(str(tmp_path / "other-home"))
    try:
        try:
            wctx.import_evidence(other, [str(out / name)])
        except wctx.UsageError as e:
            assert "outside its repository" in str(e)
        else:
            raise AssertionError("an escaping path was imported")
        assert other.one("SELECT count(*) AS n FROM evidence")["n"] == 0
    finally:
        other.close()


def test_export_cli_to_stdout_is_jsonl(product, run_cli):
    _capture_two_sessions(product)
    res = run_cli(["export"], cwd=product.ui.path)
    assert res.code == 0
    records = [json.loads(line) for line in res.out.splitlines()]
    assert sum(r["type"] == "evidence" for r in records) == 2


def _tree(directory):
    return {name: (directory / name).read_bytes() for name in sorted(os.listdir(directory))}


def test_a_re_export_rewrites_only_changed_sessions_and_equals_a_fresh_export(product, tmp_path):
    first, second = _capture_two_sessions(product)
    third = wctx.capture(product.store, [{"kind": "finding", "claim": "gateway drops the header",
                                          "repo": "api-gateway", "files": ["routes.go"]}])  # fmt: skip
    out = tmp_path / "share"
    wctx.export_evidence(product.store, out_dir=str(out))
    before = _tree(out)
    wctx.retract(product.store, first["evidence"][0]["id"])
    fourth = wctx.capture(product.store, [{"kind": "finding", "claim": "a later session", "repo": "docs-ui"}])
    again = wctx.export_evidence(product.store, out_dir=str(out))
    after = _tree(out)
    changed = sorted(name for name in after if after[name] != before.get(name))
    assert changed == sorted([first["session"] + ".jsonl", fourth["session"] + ".jsonl"])
    assert again["files"] == 2
    # The same bytes as an export of the same store into an empty directory.
    fresh = tmp_path / "fresh"
    wctx.export_evidence(product.store, out_dir=str(fresh))
    assert _tree(fresh) == after
    # A forgotten item leaves its session's file; nothing else is rewritten.
    wctx.forget(product.store, [third["evidence"][0]["id"]], reason="wrong repository")
    assert wctx.export_evidence(product.store, out_dir=str(out))["files"] == 1
    final = _tree(out)
    assert [n for n in final if final[n] != after[n]] == [third["session"] + ".jsonl"]
    assert b"gateway drops the header" not in b"".join(final.values())


def test_a_re_export_keeps_lines_a_teammate_added_to_a_session_file(product, tmp_path):
    first, _ = _capture_two_sessions(product)
    out = tmp_path / "share"
    wctx.export_evidence(product.store, out_dir=str(out))
    path = out / (first["session"] + ".jsonl")
    theirs = {"type": "evidence", "format": 1, "id": "ev-00000000aa", "session": first["session"],
              "repo": "upload-sdk", "kind": "finding", "claim": "a teammate's line", "status": "active",
              "created_at": "2099-01-01T00:00:00Z", "updated_at": "2099-01-01T00:00:00Z", "anchors": []}  # fmt: skip
    with open(str(path), "a", encoding="utf-8") as fh:
        fh.write(json.dumps(theirs, sort_keys=True) + "\n")
    wctx.retract(product.store, first["evidence"][0]["id"])
    wctx.export_evidence(product.store, out_dir=str(out))
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["id"] for r in records if r["type"] == "evidence"] == [
        first["evidence"][0]["id"],
        "ev-00000000aa",
    ]
    assert records[1]["status"] == "retracted"
