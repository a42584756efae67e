#!/usr/bin/env python3
"""wctx search against the bare FTS5 floor, 40 repositories in one workspace, in one run.

    python3 bench/search_floor.py                  # 10,000 and 100,000 items (a few minutes)
    python3 bench/search_floor.py --sizes 10000    # one size
    python3 bench/search_floor.py --json

The corpus is the peer benchmark's (/work/shared/bench/peers/corpus.py, or --peers DIR): seeded
findings of 23-47 words over 40 repositories, and its 50 keyword queries of 2-4 words. For each
size it writes an export file (one session per 50 items; in the "anchored" variant three items in
four cite ``path#symbol``) and loads it with ``wctx import-evidence`` (timed: the bulk path) into
a store whose 40 repositories are small real git repositories in one workspace.

Then, interleaved query by query and rotating the order, it times:
  mcp        a search_evidence round trip to one warm ``wctx mcp`` (whole workspace, limit 10)
             and the same call to bench/mcp_baseline_server.py --and: one FTS5 table over the
             same texts, each query word quoted (implicit AND), ``ORDER BY rank LIMIT 10``; both
             servers are first asked every query once, as the in-process search is;
  filled     the same floor server with --fill: when the ANDed words find fewer than 10 rows, the
             rest from the words ORed. On this corpus the ANDed query alone finds fewer than 10
             for many queries ("short" counts them, "floor_results_mean" is its mean answer),
             where wctx answers 10 (its ranking tests ask it to): the floor that answers as many
             results, beside the one the goals name;
  inproc     ``wctx.search`` in this process and the same bare FTS5 query (and filled) in this process;
  fts query  wctx's ranked FTS5 query alone (every term ANDed, bm25, as search asks first) and
             the bare query, each in this process.
With ``--against DIR`` the MCP server of the checkout in DIR (``DIR/wctx.py mcp``, same store) is
timed too, in the same turns: before and after a change, side by side. It prints p50/p95 of each
and the ratios to the floor, the load average before and after, and
how the top 10 differs from ``--rank fts`` on the same queries. Benchmarks only: no test times.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from mcp_baseline_server import filled  # noqa: E402  (the filled floor's second query)
from mcp_latency import Peer  # noqa: E402  (one stdio JSON-RPC client for the benchmarks)

import wctx  # noqa: E402

BASELINE_SERVER = os.path.join(HERE, "mcp_baseline_server.py")
INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
ITEMS_PER_SESSION = 50
FAKE_SHA = "0" * 40  # blob id of a cited file the repositories do not hold


def pct(values, q):
    values = sorted(values)
    if not values:
        return float("nan")
    k = max(0, min(len(values) - 1, int(round(q / 100.0 * (len(values) - 1)))))
    return values[k]


def git(path, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@x", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@x")  # fmt: skip
    subprocess.run(["git", "-C", path, *args], check=True, capture_output=True, env=env)


def make_repos(base, names):
    paths = {}
    for name in names:
        path = os.path.join(base, name)
        os.makedirs(path)
        git(path, "init", "-q")
        with open(os.path.join(path, "README"), "w") as fh:
            fh.write(name + "\n")
        git(path, "add", "README")
        git(path, "commit", "-q", "-m", "init")
        paths[name] = path
    return paths


def write_export(corpus, path, anchored, roots, heads):
    """The corpus as wctx export records (sessions of ITEMS_PER_SESSION items)."""
    kinds = ("finding", "known_issue", "decision", "note")
    with open(path, "w", encoding="utf-8") as fh:
        for i, f in enumerate(corpus):
            sid = "ses-%010x" % (i // ITEMS_PER_SESSION)  # the id shape import-evidence accepts
            stamp = "2026-%02d-%02dT10:00:00Z" % (1 + (i // 3000) % 11, 1 + i % 28)
            if i % ITEMS_PER_SESSION == 0:
                fh.write(json.dumps({"type": "session", "format": 1, "id": sid, "agent": "bench",
                                     "repo": f["repo"], "started_at": stamp, "ended_at": stamp,
                                     "summary": "bench session %d" % (i // ITEMS_PER_SESSION)}) + "\n")  # fmt: skip
            anchors = [{"repo": f["repo"], "root_commit": roots[f["repo"]], "path": None, "symbol": None,
                        "commit": heads[f["repo"]], "branch": "main", "blob": None, "dirty": None,
                        "symbol_hash": None, "symbol_lang": None}]  # fmt: skip
            if anchored and i % 4 != 3:
                anchors.append(dict(anchors[0], path=f["path"], symbol=f["symbol"], blob=FAKE_SHA, dirty=0))
            fh.write(json.dumps({"type": "evidence", "format": 1, "id": "ev-b%09d" % i, "session": sid,
                                 "repo": f["repo"], "root_commit": roots[f["repo"]], "kind": kinds[i % 4],
                                 "claim": f["text"], "detail": None, "confidence": None, "status": "active",
                                 "superseded_by": None, "created_at": stamp, "updated_at": stamp,
                                 "anchors": anchors}) + "\n")  # fmt: skip


def build_floor(store, path):
    """The bare table: one FTS5 table over the texts wctx indexes, as written (the claim, each cited
    symbol with its parts, the cited paths, the detail), not over wctx's own index words."""
    con = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    con.execute("CREATE VIRTUAL TABLE fts USING fts5(claim, symbols, paths, detail)")
    cited = {}
    for rid, p, symbol in store.db.execute(
        "SELECT evidence_rid, path, symbol FROM anchors ORDER BY evidence_rid, id"
    ):
        cited.setdefault(rid, []).append((p, symbol))
    rows = []
    for rid, claim, detail in store.db.execute("SELECT rid, claim, detail FROM evidence"):
        anchors = cited.get(rid, ())
        symbols = [w for _, s in anchors if s for w in [s] + wctx.split_identifier(s)]
        paths = [p for p, _ in anchors if p]
        rows.append(
            (rid, claim, " ".join(dict.fromkeys(symbols)), " ".join(dict.fromkeys(paths)), detail or "")
        )
    con.execute("BEGIN")
    con.executemany("INSERT INTO fts(rowid, claim, symbols, paths, detail) VALUES (?, ?, ?, ?, ?)", rows)
    con.execute("COMMIT")
    return con


def floor_words(query):
    return ['"%s"' % w for w in re.findall(r"\w+", query.lower())] or ['""']


def floor_expr(query):
    return " ".join(floor_words(query))


def floor_filled(con, sql, query):
    """The filled floor's answer in this process, as mcp_baseline_server.py --fill gives it."""
    rows = con.execute(sql, (floor_expr(query),)).fetchall()
    quoted = floor_words(query)
    if len(rows) < 10 and len(quoted) > 1:
        rows += filled(con, quoted, rows, columns="rowid")
    return rows


def register_and_export(core, store, names, paths, corpus, export, anchored):
    """Register the repositories in one workspace with ``core`` (a wctx module) and write the
    corpus as an export file stamped with each repository's root commit and HEAD."""
    for name in names:
        core.register_repo(store, paths[name], workspace="bench")
    roots = {r["name"]: r["root_commit"] for r in core.list_repos(store)}
    heads = {
        name: subprocess.run(
            ["git", "-C", paths[name], "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        for name in names
    }
    write_export(corpus, export, anchored, roots, heads)


def run_size(n, anchored, corpus_mod, queries, rounds, tmp, out, against=None):
    tag = "%s-%d" % ("anchored" if anchored else "plain", n)
    base = os.path.join(tmp, tag)
    os.makedirs(base)
    corpus = corpus_mod.make_corpus(n)
    names = sorted({f["repo"] for f in corpus})
    paths = make_repos(os.path.join(base, "repos"), names)
    home = os.path.join(base, "home")
    store = wctx.open_store(home)
    export = os.path.join(base, "export.jsonl")
    register_and_export(wctx, store, names, paths, corpus, export, anchored)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "wctx.py"), "--home", home, "import-evidence", export],
                          capture_output=True, text=True)  # fmt: skip
    load_s = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit("import-evidence failed: " + proc.stderr[-2000:])
    store.close()
    store = wctx.open_store(home)
    floor_con = build_floor(store, os.path.join(base, "floor.db"))
    origin = names[0]
    sql = "SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT 10"

    # The benchmark's own objects (the corpus, the export's records) stay out of the timed
    # searches' garbage collections: a search allocates, the bare query hardly does, and a full
    # collection walks every object of the process, which a server's small heap would not hold.
    corpus = None
    gc.collect()
    gc.freeze()
    # Warm up both, and the freshness cache.
    for q in queries:
        wctx.search(store, q, repo=origin, limit=10)
        floor_con.execute(sql, (floor_expr(q),)).fetchall()
    # wctx's ranked FTS5 query alone (every term, as search asks first), beside the floor's.
    ranked_sql = (
        "SELECT rowid, %s AS score FROM evidence_fts WHERE evidence_fts MATCH ? ORDER BY score LIMIT 40"
        % (wctx._bm25())
    )
    ranked = [wctx.fts_query(wctx.query_terms(q), all_terms=True) for q in queries]
    answered = [len(floor_con.execute(sql, (floor_expr(q),)).fetchall()) for q in queries]
    short = sum(n < 10 for n in answered)
    ours, floor, fts_only, floor_only, floor_full = [], [], [], [], []
    for _ in range(rounds):
        for q, match in zip(queries, ranked):
            t0 = time.perf_counter()
            wctx.search(store, q, repo=origin, limit=10)
            t1 = time.perf_counter()
            floor_con.execute(sql, (floor_expr(q),)).fetchall()
            t2 = time.perf_counter()
            store.db.execute(ranked_sql, (match,)).fetchall()
            t3 = time.perf_counter()
            floor_con.execute(sql, (floor_expr(q),)).fetchall()
            t4 = time.perf_counter()
            floor_filled(floor_con, sql, q)
            t5 = time.perf_counter()
            ours.append((t1 - t0) * 1000.0)
            floor.append((t2 - t1) * 1000.0)
            fts_only.append((t3 - t2) * 1000.0)
            floor_only.append((t4 - t3) * 1000.0)
            floor_full.append((t5 - t4) * 1000.0)
    # Top 10 against plain FTS ranking on the same queries.
    overlap, same_first = [], 0
    for q in queries:
        a = [r["id"] for r in wctx.search(store, q, repo=origin, limit=10)["results"]]
        b = [r["id"] for r in wctx.search(store, q, repo=origin, limit=10, rank="fts")["results"]]
        overlap.append(len(set(a) & set(b)) / max(1, len(b)))
        same_first += bool(a and b and a[0] == b[0])
    store.close()
    floor_con.close()
    gc.unfreeze()

    env = dict(os.environ, WCTX_HOME=home)
    wctx_peer = Peer([sys.executable, os.path.join(ROOT, "wctx.py"), "mcp", "--repo", origin], env, base)
    bare_peer = Peer([sys.executable, BASELINE_SERVER, os.path.join(base, "floor.db"), "--and"], env, base)
    filled_peer = Peer([sys.executable, BASELINE_SERVER, os.path.join(base, "floor.db"), "--fill"], env, base)
    peers = {"wctx": wctx_peer, "floor": bare_peer, "filled": filled_peer}
    if against:  # another checkout's server on the same store, in the same turns
        peers["against"] = Peer(
            [sys.executable, os.path.join(against, "wctx.py"), "mcp", "--repo", origin], env, base
        )
    times = {name: [] for name in peers}
    for p in peers.values():  # warmed as the in-process search is: every query once, both servers
        p.call("initialize", INIT)
        for q in queries:
            p.call("tools/call", {"name": "search_evidence", "arguments": {"query": q, "limit": 10}})
    rng = random.Random(7)
    for _ in range(rounds):
        for q in queries:
            order = sorted(peers)
            rng.shuffle(order)
            for name in order:
                ms, _ = peers[name].call(
                    "tools/call", {"name": "search_evidence", "arguments": {"query": q, "limit": 10}}
                )
                times[name].append(ms)
    for p in peers.values():
        p.close()
    row = {
        "n": n,
        "anchored": anchored,
        "import_s": round(load_s, 2),
        "mcp_p50": round(pct(times["wctx"], 50), 2),
        "mcp_p95": round(pct(times["wctx"], 95), 2),
        "floor_mcp_p50": round(pct(times["floor"], 50), 2),
        "floor_mcp_p95": round(pct(times["floor"], 95), 2),
        "filled_mcp_p50": round(pct(times["filled"], 50), 2),
        "filled_mcp_p95": round(pct(times["filled"], 95), 2),
        "inproc_p50": round(statistics.median(ours), 2),
        "floor_inproc_p50": round(statistics.median(floor), 2),
        "filled_inproc_p50": round(statistics.median(floor_full), 2),
        "short": short,
        "floor_results_mean": round(statistics.mean(answered), 1),
        "fts_query_p50": round(statistics.median(fts_only), 3),
        "floor_query_p50": round(statistics.median(floor_only), 3),
        "top10_overlap_with_fts": round(statistics.mean(overlap), 3),
        "same_first_as_fts": same_first,
        "queries": len(queries),
    }
    if against:
        row["against"] = against
        row["against_mcp_p50"] = round(pct(times["against"], 50), 2)
        row["against_mcp_p95"] = round(pct(times["against"], 95), 2)
        row["against_mcp_p50_ratio"] = round(row["against_mcp_p50"] / row["floor_mcp_p50"], 2)
        row["against_mcp_p95_ratio"] = round(row["against_mcp_p95"] / row["floor_mcp_p95"], 2)
    row["mcp_p50_ratio"] = round(row["mcp_p50"] / row["floor_mcp_p50"], 2)
    row["mcp_p95_ratio"] = round(row["mcp_p95"] / row["floor_mcp_p95"], 2)
    row["inproc_p50_ratio"] = round(row["inproc_p50"] / row["floor_inproc_p50"], 2)
    row["mcp_p50_over_filled"] = round(row["mcp_p50"] / row["filled_mcp_p50"], 2)
    row["mcp_p95_over_filled"] = round(row["mcp_p95"] / row["filled_mcp_p95"], 2)
    row["inproc_p50_over_filled"] = round(row["inproc_p50"] / row["filled_inproc_p50"], 2)
    row["fts_query_ratio"] = round(row["fts_query_p50"] / row["floor_query_p50"], 2)
    out.append(row)
    shutil.rmtree(base, ignore_errors=True)
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--peers", default=os.path.join(ROOT, "..", "shared", "bench", "peers"))
    parser.add_argument("--plain-only", action="store_true", help="skip the anchored variant")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--against", metavar="DIR", help="also time the MCP server of the checkout in DIR, in the same turns"
    )
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.abspath(args.peers))
    import corpus as corpus_mod

    queries = corpus_mod.make_queries(corpus_mod.make_corpus(1000))
    tmp = tempfile.mkdtemp(prefix="wctx-floor-")
    rows = []
    load_before = os.getloadavg()
    try:
        for n in [int(x) for x in args.sizes.split(",")]:
            for anchored in (False,) if args.plain_only else (False, True):
                row = run_size(n, anchored, corpus_mod, queries, args.rounds, tmp, rows, args.against)
                if not args.json:
                    print(json.dumps(row), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report = {"rows": rows, "load_before": [round(x, 2) for x in load_before],
              "load_after": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count()}  # fmt: skip
    print(
        json.dumps(report, indent=1)
        if args.json
        else "load average before %s, after %s" % (report["load_before"], report["load_after"])
    )


if __name__ == "__main__":
    main()
