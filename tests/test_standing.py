"""Standing guarantees at scale: MCP results stay under their size budget at 20,000 items and
paging reaches the end; 8 concurrent writers (CLI and MCP) with searches running lose nothing and
surface no error; kill -9 at random points leaves a sound store with every acknowledged capture."""

from __future__ import annotations

import json
import os
import sqlite3
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from mcp_helpers.repos import make_repo  # noqa: E402
from mcp_helpers.wire import WireServer  # noqa: E402

import wctx  # noqa: E402
import wctx_mcp  # noqa: E402

BUDGET = wctx_mcp.RESULT_BUDGET_CHARS


def ro(home):
    return sqlite3.connect("file:%s?mode=ro" % os.path.join(str(home), "wctx.db"), uri=True)


# -- output bounds at 20,000 items -----------------------------------------------------------------

TOTAL = 20000
BIG_SESSION = 3000


def _clone_items(home, session_id, copies, into_session):
    """Multiply real captured rows: ``copies`` more evidence rows (with their anchors and search
    rows) cloned from the session's items, in ``into_session``. Capturing 20,000 items one by one
    would take minutes; cloning keeps every row exactly what capture writes, ids aside."""
    con = sqlite3.connect(os.path.join(str(home), "wctx.db"))
    cols = [
        r[1] for r in con.execute("PRAGMA table_info(evidence)") if r[1] not in ("rid", "id", "session_id")
    ]
    acols = [r[1] for r in con.execute("PRAGMA table_info(anchors)") if r[1] not in ("id", "evidence_rid")]
    src = [
        r[0] for r in con.execute("SELECT rid FROM evidence WHERE session_id = ? ORDER BY rid", (session_id,))
    ]
    with con:
        for n in range(copies):
            rid = src[n % len(src)]
            new = con.execute(
                "INSERT INTO evidence(id, session_id, %s) SELECT ?, ?, %s FROM evidence WHERE rid = ?"
                % (", ".join(cols), ", ".join(cols)),
                ("ev-%010x" % (0x1000000 + n + copies * len(into_session)), into_session, rid),
            ).lastrowid
            con.execute(
                "INSERT INTO anchors(evidence_rid, %s) SELECT ?, %s FROM anchors WHERE evidence_rid = ?"
                % (", ".join(acols), ", ".join(acols)),
                (new, rid),
            )
            con.execute(
                "INSERT INTO evidence_fts(rowid, claim, symbols, paths, detail, summary) "
                "SELECT ?, claim, symbols, paths, detail, summary FROM evidence_fts WHERE rowid = ?",
                (new, rid),
            )
    con.close()


@pytest.fixture(scope="module")
def big_store(tmp_path_factory):
    """20,000 items in one workspace: long claims and details, several cited files each; one
    session holds 3,000 of them."""
    base = tmp_path_factory.mktemp("big")
    home = base / "home"
    files = {"src/mod%d.py" % i: "def handler_%d():\n    return %d\n" % (i, i) for i in range(30)}
    sdk = make_repo(base / "upload-sdk", files)
    ui = make_repo(base / "docs-ui", {"app.py": "def main():\n    return 0\n"})
    s = wctx.open_store(str(home))
    wctx.register_repo(s, str(sdk), name="upload-sdk", workspace="docs")
    wctx.register_repo(s, str(ui), name="docs-ui", workspace="docs")
    wctx.relate(s, "docs-ui", "uses", "upload-sdk")
    items = [
        {"kind": "finding", "claim": "upload handler %d retries the 419 %s" % (i, "and more " * 300),
         "detail": "detail " * 400, "repo": "upload-sdk",
         "files": ["src/mod%d.py#handler_%d" % ((i + k) % 30, (i + k) % 30) for k in range(12)]}
        for i in range(200)
    ]  # fmt: skip
    first = wctx.capture(s, items, cwd=str(sdk), summary="the long session " * 50)["session"]
    other = wctx.capture(s, items[:50], cwd=str(sdk))["session"]
    s.close()
    _clone_items(home, first, BIG_SESSION - 200, first)
    _clone_items(home, first, TOTAL - BIG_SESSION - 50, other)
    with ro(home) as con:
        assert con.execute("SELECT count(*) FROM evidence").fetchone()[0] == TOTAL
    return {"home": home, "sdk": sdk, "ui": ui, "session": first}


def _result(server, name, args):
    result = server.call(name, args)
    assert result.get("isError") is False, result
    size = len(json.dumps(result["structuredContent"], ensure_ascii=False))
    assert size <= BUDGET, (name, args, size)
    assert len(result["content"][0]["text"]) <= BUDGET, (name, args)
    return result["structuredContent"]


def test_every_mcp_result_fits_its_budget_at_20000_items_and_paging_reaches_the_end(big_store):
    server = WireServer(big_store["home"], big_store["sdk"])
    try:
        server.initialize()
        _result(server, "workspace_overview", {})
        _result(server, "get_related_repositories", {})
        found = _result(server, "search_evidence", {"query": "upload handler retries", "limit": 50})
        assert found["results"]
        _result(
            server,
            "search_evidence",
            {"query": "upload", "limit": 50, "scope": "all", "include_inactive": True},
        )
        _result(server, "get_evidence", {"id": found["results"][0]["id"]})
        ids = [r["id"] for r in found["results"]]
        checked = _result(server, "verify_freshness", {"ids": ids})
        assert [i["id"] for i in checked["items"]] == ids  # every item asked for is answered
        recorded = _result(
            server, "record_evidence",
            {"items": [{"kind": "note", "claim": "n%d %s" % (i, "y" * 3000), "repo": "upload-sdk"} for i in range(50)]},
        )  # fmt: skip
        assert len(recorded["recorded"]) == 50

        # get_session_evidence pages through all 3,000 items of the session, each exactly once.
        seen, cursor, pages = [], None, 0
        while True:
            args = {"session_id": big_store["session"], "limit": 100}
            if cursor:
                args["cursor"] = cursor
            page = _result(server, "get_session_evidence", args)
            assert page["total"] == BIG_SESSION
            seen.extend(e["id"] for e in page["evidence"])
            cursor, pages = page["next_cursor"], pages + 1
            if cursor is None:
                break
            assert page["evidence"] and pages < BIG_SESSION
        assert len(seen) == len(set(seen)) == BIG_SESSION

        # verify_freshness without ids pages through every active item in scope, to the end.
        seen, cursor = [], None
        while True:
            page = _result(server, "verify_freshness", {"cursor": cursor} if cursor else {})
            seen.extend(i["id"] for i in page["items"])
            assert all(i["verdict"] == "current" for i in page["items"])
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert len(seen) == len(set(seen)) == TOTAL + 50  # with the 50 notes just recorded
        assert page["total"] == TOTAL + 50
    finally:
        server.kill()
