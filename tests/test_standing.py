"""Standing guarantees at scale: MCP results stay under their size budget at 20,000 items and
paging reaches the end; 8 concurrent writers (CLI and MCP) with searches running lose nothing and
surface no error; kill -9 at random points leaves a sound store with every acknowledged capture."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from mcp_helpers.repos import make_repo  # noqa: E402
from mcp_helpers.wire import WireServer  # noqa: E402

import wctx  # noqa: E402
import wctx_mcp  # noqa: E402

BUDGETS = wctx_mcp.REPLY_BUDGET_BYTES


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
    fcols = ", ".join(r[1] for r in con.execute("PRAGMA table_info(evidence_fts)"))
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
                "INSERT INTO evidence_fts(rowid, %s) SELECT ?, %s FROM evidence_fts WHERE rowid = ?"
                % (fcols, fcols),
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
    other = wctx.capture(s, [dict(i, claim="other " + i["claim"]) for i in items[:50]], cwd=str(sdk))[
        "session"
    ]
    s.close()
    _clone_items(home, first, BIG_SESSION - 200, first)
    _clone_items(home, first, TOTAL - BIG_SESSION - 50, other)
    with ro(home) as con:
        assert con.execute("SELECT count(*) FROM evidence").fetchone()[0] == TOTAL
    return {"home": home, "sdk": sdk, "ui": ui, "session": first}


def _result(server, name, args):
    """The structured result of a call; each form of the reply within the tool's byte budget."""
    result = server.call(name, args)
    assert result.get("isError") is False, result
    audit = name == "workspace_overview" and (args.get("ids") or args.get("verify"))
    budget = wctx_mcp.DETAIL_BUDGET_BYTES if args.get("detail") else BUDGETS["verify" if audit else name]
    size = len(json.dumps(result["structuredContent"], ensure_ascii=False, separators=(",", ":")).encode())
    assert size <= budget, (name, args, size)
    assert len(result["content"][0]["text"].encode()) <= budget, (name, args)
    return result["structuredContent"]


def test_every_mcp_result_fits_its_budget_at_20000_items_and_paging_reaches_the_end(big_store):
    server = WireServer(big_store["home"], big_store["sdk"])
    try:
        server.initialize()
        _result(server, "workspace_overview", {})
        _result(server, "workspace_overview", {"detail": True})
        found = _result(server, "search_evidence", {"query": "upload handler retries", "limit": 50})
        assert found["results"]
        for detail in (False, True):
            _result(
                server,
                "search_evidence",
                {"query": "upload", "limit": 50, "scope": "all", "include_inactive": True, "detail": detail},
            )
        _result(server, "get_evidence", {"id": found["results"][0]["id"]})
        _result(server, "workspace_overview", {"detail": True})

        # search_evidence pages through every match of a query, each once, within the budget.
        ids, cursor = [], None
        while True:
            args = {"query": "upload handler retries", "limit": 50}
            if cursor:
                args["cursor"] = cursor
            page = _result(server, "search_evidence", args)
            ids.extend(r["id"] for r in page["results"])
            cursor = page.get("next_cursor")
            if cursor is None or len(ids) >= 400:
                break
        assert len(ids) == len(set(ids)) >= 400

        # The freshness audit answers every id asked for, over as many replies as the budget needs.
        asked = ids[:50]
        for detail in (False, True):
            answered, cursor = [], None
            while True:
                args = {"ids": asked, "detail": detail}
                if cursor:
                    args["cursor"] = cursor
                checked = _result(server, "workspace_overview", args)
                answered.extend(i["id"] for i in checked["items"])
                cursor = checked.get("next_cursor")
                if cursor is None:
                    break
            assert answered == asked
        recorded = _result(
            server, "record_evidence",
            {"items": [{"kind": "note", "claim": "n%d %s" % (i, "y" * 3000), "repo": "upload-sdk"} for i in range(50)]},
        )  # fmt: skip
        assert len(recorded["recorded"]) == 50

        # get_evidence with the session id pages through all 3,000 items of the session, each exactly once.
        seen, cursor, pages = [], None, 0
        while True:
            args = {"id": big_store["session"], "limit": 100}
            if cursor:
                args["cursor"] = cursor
            page = _result(server, "get_evidence", args)
            assert page["total"] == BIG_SESSION
            seen.extend(e["id"] for e in page["evidence"])
            cursor, pages = page.get("next_cursor"), pages + 1
            if cursor is None:
                break
            assert page["evidence"] and pages < BIG_SESSION
        assert len(seen) == len(set(seen)) == BIG_SESSION

        # The freshness audit without ids (verify: true) pages through every active item in scope, to the end.
        seen, cursor = [], None
        while True:
            args = {"verify": True, "all": True}  # the notes cite no file: listed one by one, not summarised
            if cursor:
                args["cursor"] = cursor
            page = _result(server, "workspace_overview", args)
            seen.extend(i["id"] for i in page["items"])
            assert all(i["verdict"] == "current" for i in page["items"])
            cursor = page.get("next_cursor")
            if cursor is None:
                break
        assert len(seen) == len(set(seen)) == TOTAL + 50  # with the 50 notes just recorded
        assert page["total"] == TOTAL + 50
    finally:
        server.kill()


# -- concurrency: 8 writers, CLI and MCP mixed, searches running ----------------------------------

WRITERS_MCP = 4
WRITERS_CLI = 4
PER_WRITER = 500
CLI_ITEMS_PER_CALL = 20
MCP_ITEMS_PER_CALL = 5  # 4,000 acknowledged items in ~400 calls: CI time stays a few minutes


def _cli(home, cwd, argv):
    env = dict(os.environ, WCTX_HOME=str(home))
    proc = subprocess.run([sys.executable, wctx.__file__, *argv], cwd=str(cwd), env=env, capture_output=True)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


@pytest.fixture
def workspace(tmp_path):
    home = tmp_path / "home"
    sdk = make_repo(tmp_path / "upload-sdk", {"src/upload.py": "def upload():\n    return 419\n"})
    ui = make_repo(tmp_path / "docs-ui", {"app.py": "def main():\n    return 0\n"})
    with wctx.open_store(str(home)) as s:
        wctx.register_repo(s, str(sdk), name="upload-sdk", workspace="docs")
        wctx.register_repo(s, str(ui), name="docs-ui", workspace="docs")
        wctx.relate(s, "docs-ui", "uses", "upload-sdk")
    return {"home": home, "sdk": sdk, "ui": ui}


def test_eight_writers_cli_and_mcp_with_searches_store_everything_and_surface_no_error(workspace):
    home, sdk, ui = workspace["home"], workspace["sdk"], workspace["ui"]
    errors, acked = [], []
    lock = threading.Lock()
    done = threading.Event()

    def mcp_writer(n):
        server = WireServer(home, ui if n % 2 else sdk)
        try:
            server.initialize()
            for call in range(PER_WRITER // MCP_ITEMS_PER_CALL):
                items = [{"kind": "finding", "claim": "mcp writer %d call %d item %d upload" % (n, call, i),
                          "repo": "upload-sdk", "files": ["src/upload.py#upload"]}
                         for i in range(MCP_ITEMS_PER_CALL)]  # fmt: skip
                result = server.call("record_evidence", {"items": items})
                with lock:
                    if result.get("isError"):
                        errors.append(result["content"][0]["text"])
                    else:
                        acked.extend(e["id"] for e in result["structuredContent"]["recorded"])
            rc, _ = server.close()
            if rc != 0 or "locked" in server.stderr_text():
                errors.append("mcp writer %d: exit %s %s" % (n, rc, server.stderr_text()[-500:]))
        finally:
            server.kill()

    def cli_writer(n):
        for call in range(PER_WRITER // CLI_ITEMS_PER_CALL):
            argv = ["capture", "--json", "--repo", "upload-sdk"]
            for i in range(CLI_ITEMS_PER_CALL):
                argv += ["--note", "cli writer %d call %d item %d upload" % (n, call, i)]
            code, out, err = _cli(home, sdk, argv)
            with lock:
                if code != 0 or err.strip():
                    errors.append("cli writer %d: exit %d %s" % (n, code, err))
                else:
                    acked.extend(e["id"] for e in json.loads(out)["evidence"])

    def searcher():
        server = WireServer(home, ui)
        try:
            server.initialize()
            while not done.is_set():
                result = server.call("search_evidence", {"query": "upload item", "limit": 20})
                code, _, err = _cli(home, ui, ["search", "--json", "upload writer"])
                with lock:
                    if result.get("isError"):
                        errors.append("mcp search: " + result["content"][0]["text"])
                    if code != 0 or err.strip():
                        errors.append("cli search: exit %d %s" % (code, err))
        finally:
            server.kill()

    writers = [threading.Thread(target=mcp_writer, args=(n,)) for n in range(WRITERS_MCP)]
    writers += [threading.Thread(target=cli_writer, args=(n,)) for n in range(WRITERS_CLI)]
    search = threading.Thread(target=searcher)
    search.start()
    for t in writers:
        t.start()
    for t in writers:
        t.join()
    done.set()
    search.join()

    assert errors == []
    total = (WRITERS_MCP + WRITERS_CLI) * PER_WRITER
    assert len(acked) == len(set(acked)) == total
    with ro(home) as con:
        stored = {r[0] for r in con.execute("SELECT id FROM evidence")}
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert stored == set(acked)


# -- crash: kill -9 at random points ------------------------------------------------------------

KILLS_PER_SCENARIO = 8  # x 3 scenarios
BATCH = 25  # items per capture

# Captures batches of BATCH items in a loop, printing each batch's ids once capture() returned
# (its transaction committed): those are the acknowledged ones.
BULK_CAPTURE = r"""
import json, os, sys
sys.path.insert(0, sys.argv[1])
import wctx
store = wctx.open_store(sys.argv[2])
for b in range(10 ** 6):
    items = [{"kind": "note", "claim": "%s batch %d item %d" % (sys.argv[4], b, i), "repo": "upload-sdk",
              "files": ["src/upload.py#upload"]} for i in range(int(sys.argv[5]))]
    res = wctx.capture(store, items, cwd=sys.argv[3])
    print(json.dumps([e["id"] for e in res["evidence"]]), flush=True)
"""


def _check_store(home, workspace):
    with ro(home) as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        claims = [r[0] for r in con.execute("SELECT claim FROM evidence")]
        ids = {r[0] for r in con.execute("SELECT id FROM evidence")}
        # Every item has its anchors and search row: no half-written item.
        assert (
            con.execute(
                "SELECT count(*) FROM evidence e WHERE NOT EXISTS (SELECT 1 FROM anchors a WHERE a.evidence_rid = e.rid)"
            ).fetchone()[0]
            == 0
        )
        assert con.execute("SELECT count(*) FROM evidence_fts").fetchone()[0] == len(ids)
    code, _, err = _cli(home, workspace["sdk"], ["search", "--json", "batch item"])
    assert code == 0 and not err.strip(), err
    return claims, ids


def _batches(claims, tag):
    counts = {}
    for c in claims:
        if c.startswith(tag + " "):
            key = c.rsplit(" item ", 1)[0]
            counts[key] = counts.get(key, 0) + 1
    return counts


def _kill_after(proc, seconds):
    time.sleep(seconds)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


def test_kill_9_at_random_points_loses_nothing_acknowledged_and_leaves_a_sound_store(workspace, tmp_path):
    home, sdk = workspace["home"], workspace["sdk"]
    rng = random.Random(9)
    kills = 0

    # 1. bulk capture
    for k in range(KILLS_PER_SCENARIO):
        tag = "bulk%d" % k
        proc = subprocess.Popen(
            [sys.executable, "-c", BULK_CAPTURE, os.path.dirname(HERE), str(home), str(sdk), tag, str(BATCH)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        _kill_after(proc, rng.uniform(0.3, 2.5))
        kills += 1
        acked = [i for line in proc.stdout.read().decode().splitlines() for i in json.loads(line)]
        claims, ids = _check_store(home, workspace)
        assert set(acked) <= ids
        assert all(n == BATCH for n in _batches(claims, tag).values())  # all or nothing

    # 2. MCP recording
    for k in range(KILLS_PER_SCENARIO):
        tag = "mcp%d" % k
        server = WireServer(home, sdk)
        server.initialize()
        acked = []
        stop = time.monotonic() + rng.uniform(0.2, 2.0)
        b = 0
        # Requests go out without waiting, as a busy client's would; replies are acknowledgements.
        while time.monotonic() < stop:
            items = [{"kind": "note", "claim": "%s batch %d item %d" % (tag, b, i), "repo": "upload-sdk"}
                     for i in range(BATCH)]  # fmt: skip
            server.send({"jsonrpc": "2.0", "id": b, "method": "tools/call",
                         "params": {"name": "record_evidence", "arguments": {"items": items}}})  # fmt: skip
            b += 1
            time.sleep(0.02)
        server.proc.kill()
        server.proc.wait()
        kills += 1
        while True:
            try:
                line = server.lines.get(timeout=5)
            except Exception:
                break
            if line is None:
                break
            reply = json.loads(line)
            if "result" in reply and not reply["result"].get("isError"):
                acked.extend(e["id"] for e in reply["result"]["structuredContent"]["recorded"])
        claims, ids = _check_store(home, workspace)
        assert set(acked) <= ids
        assert all(n == BATCH for n in _batches(claims, tag).values())

    # 3. transcript import: killed anywhere, the next import completes it, nothing twice.
    for k in range(KILLS_PER_SCENARIO):
        sid = "33333333-aaaa-4bbb-8ccc-%012d" % k
        lines = []
        for c in range(40):
            lines.append({"type": "assistant", "sessionId": sid, "cwd": str(sdk),
                          "timestamp": "2026-03-01T10:%02d:00.000Z" % (c % 60),
                          "message": {"role": "assistant", "content": [
                              {"type": "tool_use", "id": "toolu_%d" % c, "name": "mcp__wctx__record_evidence",
                               "input": {"items": [{"kind": "finding", "claim": "imp%d call %d item %d" % (k, c, i),
                                                    "repo": "upload-sdk"} for i in range(3)]}},
                              {"type": "tool_use", "id": "read_%d" % c, "name": "Read",
                               "input": {"file_path": str(sdk / "src" / "upload.py")}}]}})  # fmt: skip
        path = tmp_path / ("%s.jsonl" % sid)
        path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
        env = dict(os.environ, WCTX_HOME=str(home))
        proc = subprocess.Popen([sys.executable, wctx.__file__, "import", str(path)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        _kill_after(proc, rng.uniform(0.2, 1.5))
        kills += 1
        _check_store(home, workspace)
        code, out, err = _cli(home, sdk, ["import", "--json", str(path)])
        assert code == 0, err
        with ro(home) as con:
            got = [
                r[0] for r in con.execute("SELECT claim FROM evidence WHERE claim LIKE ?", ("imp%d %%" % k,))
            ]
        assert sorted(got) == sorted("imp%d call %d item %d" % (k, c, i) for c in range(40) for i in range(3))
        code, out, _ = _cli(home, sdk, ["import", "--json", str(path)])
        assert code == 0 and '"unchanged"' in out

    assert kills >= 20
