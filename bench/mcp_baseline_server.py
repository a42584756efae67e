#!/usr/bin/env python3
"""The baseline for bench/mcp_latency.py: the barest stdio JSON-RPC server over SQLite FTS5.

    python3 bench/mcp_baseline_server.py FTS_DB [--and | --fill]

It answers initialize and tools/call on newline-delimited JSON, and for every tools/call runs one
FTS5 query over the table that bench/search.py's build_baseline() makes (the very texts wctx
indexes): the query's words quoted and OR-ed (``--and``: quoted and ANDed, as a plain FTS5
server would), ``ORDER BY bm25 LIMIT 10``, returning ids and
claims as structuredContent plus the same JSON as text. ``--fill``: ANDed first and, when that
finds fewer than 10, the rest from the ORed query (bm25 order, none twice): the least a server
does that answers 10 results whenever 10 items hold a query word, as wctx does. No validation, no ranking beyond bm25, no
provenance, no freshness: what "a bare FTS5 MCP server" costs, so wctx's figures have a floor to
be read against on the same machine in the same run.
"""

import json
import re
import sqlite3
import sys


def filled(con, quoted, rows, limit=10, columns="rowid, claim"):
    """The ORed query's best matches that ``rows`` (the ANDed query's) lack, up to ``limit`` in all."""
    have = {r[0] for r in rows}
    more = con.execute(
        "SELECT %s FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT ?" % columns,
        (" OR ".join(quoted), limit + len(rows)),
    ).fetchall()
    return [r for r in more if r[0] not in have][: limit - len(rows)]


def main():
    con = sqlite3.connect(sys.argv[1], isolation_level=None, check_same_thread=False)
    sql = "SELECT rowid, claim FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT 10"
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if "id" not in message:
            continue
        if message["method"] == "tools/call":
            words = re.findall(r"\w+", message["params"]["arguments"]["query"].lower())
            quoted = ['"%s"' % w for w in words] or ['""']
            if "--and" in sys.argv[2:] or "--fill" in sys.argv[2:]:
                rows = con.execute(sql, (" ".join(quoted),)).fetchall()
                if "--fill" in sys.argv[2:] and len(rows) < 10 and len(quoted) > 1:
                    rows += filled(con, quoted, rows)
            else:
                rows = con.execute(sql, (" OR ".join(quoted),)).fetchall()
            payload = {"results": [{"id": rowid, "claim": claim} for rowid, claim in rows]}
            result = {
                "content": [{"type": "text", "text": json.dumps(payload)}],
                "structuredContent": payload,
            }
        elif message["method"] == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "fts5-baseline", "version": "0"},
            }
        else:
            result = {}
        out.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
