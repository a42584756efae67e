"""How a problem shows itself (an item's ``symptom``): written by whoever records the item, in the
words of someone who has not found the cause yet, and searched as the asker's vocabulary. It is
taken by capture (CLI and MCP), kept through an upgrade of an older store, travels through export
and import, is redacted like every stored field, and is shown where the item is."""

from __future__ import annotations

import json
import os
import sys

import pytest
from conftest import db_snapshot, older_schema, store_file_bytes

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mcp_helpers.fixtures import Servers  # noqa: E402
from mcp_helpers.wire import WireServer  # noqa: E402

import wctx  # noqa: E402

# The mechanism, in the words of the one who found it; the symptom, in the words of one who asks.
CLAIM = "chunked transfer disabled for payloads past the proxy buffer"
DETAIL = "the gateway buffers whole bodies and refuses them above client_max_body_size"
SYMPTOM = "large attachments bounce with 413 while small ones go through"
ASKED = "why do large attachments bounce"  # shares no word with the claim or the detail


def _ids(found):
    return [r["id"] for r in found["results"]]


def test_a_symptom_captured_on_the_cli_finds_the_item_by_the_askers_words(product, run_cli):
    res = run_cli(
        ["capture", "--finding", "%s :: %s" % (CLAIM, DETAIL), "--repo", "upload-sdk",
         "--symptom", SYMPTOM, "--file", "src/upload/upload.ts#uploadDocument",
         "--note", "the progress bar repaints twice", "--json"],
        cwd=product.ui.path,
    )  # fmt: skip
    assert res.code == 0, res
    eid, other = [e["id"] for e in res.json["evidence"]]
    # The symptom is the first item's alone; the note after it has none.
    assert wctx.get_evidence(product.store, eid)["symptom"] == SYMPTOM
    assert wctx.get_evidence(product.store, other)["symptom"] is None

    for rank in ("topology", "fts"):  # plain BM25 over the same fields sees it too
        found = wctx.search(product.store, ASKED, repo="docs-ui", rank=rank)
        assert found["mode"] == "text" and _ids(found) == [eid], (rank, found)
    hit = wctx.search(product.store, ASKED, repo="docs-ui")["results"][0]
    said = [r for r in hit["reasons"] if r.startswith("matches how it shows itself")]
    assert said and "attachments" in said[0] and "bounce" in said[0], hit["reasons"]

    shown = run_cli(["show", eid])
    assert shown.code == 0 and SYMPTOM in shown.out
    assert "symptom" not in run_cli(["show", other]).out
    listed = run_cli(["search", "large", "attachments", "bounce", "--detail"], cwd=product.ui.path)
    assert SYMPTOM in listed.out


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--symptom", "uploads fail", "--finding", "a claim"], "item flag before it"),  # before any item
        (["--finding", "a claim", "--symptom", "   "], "empty"),
        (["--finding", "a claim", "--symptom", "x" * 5000], "limit"),
        (["--finding", "a claim", "--symptom", "uploads fail", "--symptom", "again"], "two --symptom"),
    ],
)
def test_bad_symptom_usage_is_one_line_and_stores_nothing(product, run_cli, wctx_home, argv, says):
    before = db_snapshot(wctx_home)
    res = run_cli(["capture", "--repo", "upload-sdk"] + argv, cwd=product.sdk.path)
    assert res.code == 2, res
    message = res.err.strip()
    assert "\n" not in message and says in message, message
    assert db_snapshot(wctx_home) == before


@pytest.fixture
def servers(tmp_path):
    s = Servers(tmp_path)
    yield s
    s.close()


def test_a_symptom_recorded_through_mcp_is_searched_and_served(servers):
    ui = servers.start(cwd=servers.env["ui"])
    ui.initialize()
    item = {"kind": "finding", "claim": CLAIM, "detail": DETAIL, "repo": "upload-sdk", "symptom": SYMPTOM}
    recorded = ui.call_ok("record_evidence", {"items": [item]})
    eid = recorded["recorded"][0]["id"]
    found = ui.call_ok("search_evidence", {"query": ASKED})
    assert [r["id"] for r in found["results"]] == [eid]
    detailed = ui.call_ok("search_evidence", {"query": ASKED, "detail": True})["results"][0]
    assert detailed["symptom"] == SYMPTOM
    assert any(r.startswith("matches how it shows itself") for r in detailed["reasons"])
    served = ui.call_ok("get_evidence", {"id": eid})["evidence"]
    assert served["symptom"] == SYMPTOM
    # The tool's description asks for it, in a few words (tool definitions are paid on every
    # request), beside the field the items take.
    tools = ui.request("tools/list")["result"]["tools"]
    (record,) = [t for t in tools if t["name"] == "record_evidence"]
    assert "symptom" in record["description"] and len(record["description"].encode()) <= 120
    assert "symptom" in record["inputSchema"]["properties"]["items"]["items"]["properties"]
    bad = ui.call("record_evidence", {"items": [dict(item, symptom=["not", "text"])]})
    assert bad["isError"] is True


def test_an_older_store_keeps_every_item_searchable_after_the_upgrade(git_repo, wctx_home, monkeypatch):
    repo = git_repo("upload-sdk", {"src/upload/upload.ts": "export function uploadDocument() {}\n"})
    before_symptom = [m for m in wctx.MIGRATIONS if m.__name__ < "m022"]
    older_schema(monkeypatch, before_symptom)
    store = wctx.open_store(wctx_home)
    wctx.register_repo(store, repo.path)
    items = [
        {"kind": "finding", "claim": "uploadDocument retries expired tokens", "repo": "upload-sdk",
         "files": ["src/upload/upload.ts#uploadDocument"], "detail": "with the old signature"},
        {"kind": "note", "claim": "the progress bar flickers", "repo": "upload-sdk"},
    ]  # fmt: skip
    ids = [e["id"] for e in wctx.capture(store, items, cwd=repo.path)["evidence"]]
    before = store.all("SELECT id, claim, detail, kind, status, created_at FROM evidence ORDER BY rid")
    before = [tuple(r) for r in before]
    store.close()
    monkeypatch.undo()
    store = wctx.open_store(wctx_home)
    try:
        assert wctx.schema_version(store) == len(wctx.MIGRATIONS)
        after = store.all("SELECT id, claim, detail, kind, status, created_at FROM evidence ORDER BY rid")
        assert [tuple(r) for r in after] == before
        assert store.one("SELECT count(*) FROM evidence_fts")[0] == 2
        for query, want in [("retrying token", ids[0]), ("document", ids[0]), ("signature", ids[0]),
                            ("flickering", ids[1])]:  # fmt: skip
            for rank in ("topology", "fts"):
                found = wctx.search(store, query, repo="upload-sdk", rank=rank)
                assert found["mode"] == "text" and _ids(found)[:1] == [want], (query, rank, found)
        assert wctx.get_evidence(store, ids[0])["symptom"] is None
        # An item recorded after the upgrade carries its symptom and is found by it.
        new = wctx.capture(
            store,
            [dict(items[1], claim="the bar redraws", symptom="screen jitters when resizing")],
            cwd=repo.path,
        )["evidence"][0]["id"]
        found = wctx.search(store, "jitter", repo="upload-sdk")
        assert found["mode"] == "text" and _ids(found) == [new]
    finally:
        store.close()


def test_export_and_import_keep_the_symptom_and_read_exports_without_it(product, tmp_path):
    with_it = wctx.capture(
        product.store,
        [{"kind": "finding", "claim": CLAIM, "detail": DETAIL, "repo": "upload-sdk", "symptom": SYMPTOM}],
        cwd=product.sdk.path,
    )["evidence"][0]["id"]
    without = wctx.capture(
        product.store,
        [{"kind": "note", "claim": "uploads log twice", "repo": "upload-sdk"}],
        cwd=product.sdk.path,
    )["evidence"][0]["id"]
    out = tmp_path / "share"
    wctx.export_evidence(product.store, out_dir=str(out))
    lines = [json.loads(line) for f in sorted(out.glob("*.jsonl")) for line in f.read_text().splitlines()]
    exported = {r["id"]: r for r in lines if r.get("type") == "evidence"}
    assert exported[with_it]["symptom"] == SYMPTOM
    # An item without one exports as before: no new key, so older readers see the same records.
    assert "symptom" not in exported[without]

    other = wctx.open_store(str(tmp_path / "other-home"))
    try:
        wctx.register_repo(other, product.sdk.path, name="sdk", workspace="team")
        wctx.register_repo(other, product.ui.path, name="ui", workspace="team")
        assert wctx.import_evidence(other, [str(out)])["evidence"] == 2
        assert wctx.get_evidence(other, with_it)["symptom"] == SYMPTOM
        assert wctx.get_evidence(other, without)["symptom"] is None
        found = wctx.search(other, ASKED, repo="ui")
        assert found["mode"] == "text" and _ids(found) == [with_it]
    finally:
        other.close()

    # A bad symptom in an export is refused with the field named; nothing is imported.
    bad = tmp_path / "bad.jsonl"
    records = [r for r in lines if r.get("type") in ("session", "evidence")]
    records[-1] = dict(records[-1], symptom=12)
    bad.write_text("".join(json.dumps(r) + "\n" for r in records))
    third = wctx.open_store(str(tmp_path / "third-home"))
    try:
        with pytest.raises(wctx.UsageError, match="symptom"):
            wctx.import_evidence(third, [str(bad)])
        assert third.one("SELECT count(*) FROM evidence")[0] == 0
    finally:
        third.close()


SECRET = "ghp_PlantedSymptomToken0123456789abcdefgh"


def test_a_secret_in_a_symptom_is_never_stored_or_served(product, run_cli, wctx_home, tmp_path):
    res = run_cli(
        ["capture", "--finding", "the cli claim", "--repo", "upload-sdk", "--symptom", "fails with " + SECRET,
         "--json"],
        cwd=product.sdk.path,
    )  # fmt: skip
    assert res.code == 0, res
    from_cli = res.json["evidence"][0]["id"]
    peer = tmp_path / "peer.jsonl"
    root = wctx.resolve_repo(product.store, "upload-sdk").root_commit
    peer.write_text(
        json.dumps({"type": "session", "id": "ses-8888888888", "agent": "peer", "repo": "upload-sdk"}) + "\n"
        + json.dumps({"type": "evidence", "id": "ev-00000000a1", "session": "ses-8888888888", "repo": "upload-sdk",
                      "root_commit": root, "kind": "note", "claim": "the peer claim",
                      "symptom": "peer sees " + SECRET}) + "\n"
    )  # fmt: skip
    assert run_cli(["import-evidence", str(peer)]).code == 0
    outputs = [
        run_cli(["show", from_cli, "--json"]).out,
        run_cli(["show", "ev-00000000a1"]).out,
        run_cli(["export"]).out,
        run_cli(["search", "fails", "sees", "--json"], cwd=product.sdk.path).out,
    ]
    server = WireServer(wctx_home, product.sdk.path)
    try:
        server.initialize()
        recorded = server.call_ok(
            "record_evidence",
            {"items": [{"kind": "note", "claim": "the mcp claim", "symptom": "mcp saw " + SECRET}]},
        )
        outputs.append(json.dumps(recorded))
        outputs.append(
            json.dumps(server.call("search_evidence", {"query": "fails sees saw", "detail": True}))
        )
        outputs.append(json.dumps(server.call("get_evidence", {"id": recorded["recorded"][0]["id"]})))
    finally:
        server.kill()
    product.store.db.execute("PRAGMA wal_checkpoint(PASSIVE)")
    raw = store_file_bytes(wctx_home)
    assert b"REDACTED" in raw  # stored, redacted, not dropped
    assert SECRET.encode() not in raw and b"PlantedSymptomToken" not in raw
    for text in outputs:
        assert "PlantedSymptomToken" not in text
    assert product.store.one("SELECT count(*) FROM evidence WHERE symptom LIKE '%REDACTED%'")[0] == 3


def test_an_evaluation_corpus_line_may_carry_a_symptom(run_cli, tmp_path, monkeypatch):
    import shutil
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    corpus = tmp_path / "corpus"
    shutil.copytree(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "eval_tiny"), str(corpus)
    )
    lines = [
        json.loads(line) for line in (corpus / "evidence.jsonl").read_text().splitlines() if line.strip()
    ]
    for ev in lines:
        if ev["id"] == "t3":
            ev["symptom"] = "the screen flashes white at sign out"
    (corpus / "evidence.jsonl").write_text("".join(json.dumps(ev) + "\n" for ev in lines))
    with open(str(corpus / "queries.jsonl"), "a") as fh:
        fh.write(json.dumps({"id": "q9", "from": "app", "text": "screen flashes white", "category": "decoy",
                             "needs": "app", "judgements": {"t3": 3}}) + "\n")  # fmt: skip
    res = run_cli(["eval", "retrieval", "--corpus", str(corpus), "--json"])
    assert res.code == 0, res
    q9 = next(q for q in res.json["queries"] if q["id"] == "q9")
    assert q9["runs"]["topology"]["top"][:1] == ["t3"] and q9["runs"]["fts"]["top"][:1] == ["t3"]


def test_the_report_page_shows_the_symptom_escaped(product, run_cli, tmp_path):
    wctx.capture(
        product.store,
        [{"kind": "known_issue", "claim": CLAIM, "repo": "upload-sdk", "symptom": "<b>413</b> on big files"}],
        cwd=product.sdk.path,
    )
    out = tmp_path / "page.html"
    res = run_cli(["report", "--html", "-o", str(out), "--workspace", "uploads"])
    assert res.code == 0, res
    page = out.read_text()
    assert "shows as: &lt;b&gt;413&lt;/b&gt; on big files" in page
    assert "<b>413</b>" not in page


def test_recording_an_item_again_gives_it_the_symptom_it_lacked(product, run_cli):
    first = run_cli(["capture", "--finding", CLAIM, "--repo", "upload-sdk", "--json"], cwd=product.sdk.path)
    eid = first.json["evidence"][0]["id"]
    assert wctx.search(product.store, ASKED, repo="upload-sdk")["mode"] == "fallback"  # no word matches
    again = run_cli(
        ["capture", "--finding", CLAIM, "--repo", "upload-sdk", "--symptom", SYMPTOM, "--json"],
        cwd=product.sdk.path,
    )
    (entry,) = again.json["evidence"]
    assert entry["duplicate"] and entry["id"] == eid and "how it shows itself added" in entry["message"]
    found = wctx.search(product.store, ASKED, repo="upload-sdk")
    assert found["mode"] == "text" and _ids(found)[:1] == [eid]
    # A symptom it has stays: a later one does not replace it.
    third = run_cli(
        ["capture", "--finding", CLAIM, "--repo", "upload-sdk", "--symptom", "other words", "--json"],
        cwd=product.sdk.path,
    )
    assert "its own symptom kept" in third.json["evidence"][0]["message"]
    assert wctx.get_evidence(product.store, eid)["symptom"] == SYMPTOM
