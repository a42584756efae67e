#!/usr/bin/env python3
"""The baseline for bench/mcp_latency.py: the barest stdio JSON-RPC server over SQLite FTS5.

    python3 bench/mcp_baseline_server.py FTS_DB [--and]

It answers initialize and tools/call on newline-delimited JSON, and for every tools/call runs one
FTS5 query over the table that bench/search.py's build_baseline() makes (the very texts wctx
indexes): the query's words quoted and OR-ed (``--and``: quoted and ANDed, as a plain FTS5
server would), ``ORDER BY bm25 LIMIT 10``, returning ids and
claims as structuredContent plus the same JSON as text. No validation, no ranking beyond bm25, no
provenance, no freshness: what "a bare FTS5 MCP server" costs, so wctx's figures have a floor to
be read against on the same machine in the same run.
"""

import json
import re
import sqlite3
import sys


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
            expr = (" " if "--and" in sys.argv[2:] else " OR ").join('"%s"' % w for w in words) or '""'
            rows = con.execute(sql, (expr,)).fetchall()
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
