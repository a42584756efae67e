#!/usr/bin/env python3
"""Where a wctx search spends its CPU time, step by step, on bench/search_floor.py's corpus.

    python3 bench/search_steps.py                       # 10,000 items, three in four anchored
    python3 bench/search_steps.py --n 100000 --plain
    python3 bench/search_steps.py --against DIR         # also DIR/wctx.py, another version
    python3 bench/search_steps.py --json

It builds search_floor's store (40 small real git repositories in one workspace, the peer
corpus loaded with ``wctx import-evidence``) and reports, for its 50 queries:
  cold    the first pass over the queries with an empty freshness cache: seconds and git
          processes started (what a process meets after the checkouts changed);
  steps   CPU time per search in each step of search() (candidates, anchors, coverage,
          freshness, reasons, ...), each step's function timed where search() calls it;
  total   CPU time per search: for each query the least of 7 runs, summed over the queries;
          with --against, the other version's wctx.py in the same process, on a copy of the
          same store (its schema as that version made it), query by query in turn; "floor" is
          the bare FTS5 query of search_floor.py (one table over the same texts, ORDER BY rank
          LIMIT 10) in the same turns, and this_over_floor the ratio;
  p50     the middle query's CPU time (each query's least of 7 runs), per version and the
          floor's, and p50_this_over_floor their ratio: the goal is stated on the p50.
CPU time (thread time), not wall-clock: on a shared machine it moves far less with the load.
Benchmarks only: no test times anything.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)

import search_floor  # noqa: E402  (the corpus, the repositories and the export it loads)

STEPS = (
    "search_scope", "text_candidates", "_rank_rows", "item_views", "query_names", "query_coverage",
    "rerank", "freshness_of", "_result_dict", "_result_facts", "explain", "count_matches", "tail_candidates",
)  # fmt: skip


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def build(core_path, corpus_mod, n, anchored, base):
    """search_floor's store, loaded by the wctx at ``core_path``; returns (home, origin)."""
    core = load_module("wctx_build_%d" % abs(hash(core_path)), core_path)
    corpus = corpus_mod.make_corpus(n)
    names = sorted({f["repo"] for f in corpus})
    paths = search_floor.make_repos(os.path.join(base, "repos"), names)
    home = os.path.join(base, "home")
    store = core.open_store(home)
    export = os.path.join(base, "export.jsonl")
    search_floor.register_and_export(core, store, names, paths, corpus, export, anchored)
    store.close()
    proc = subprocess.run([sys.executable, core_path, "--home", home, "import-evidence", export],
                          capture_output=True, text=True)  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit("import-evidence failed: " + proc.stderr[-2000:])
    return home, names[0]


def cold_pass(core, home, origin, queries):
    """The first searches of a long-lived process (as the MCP server runs them: it warms git's
    answers about each checkout, WARM_GIT_VIEWS) over an empty freshness cache."""
    core.WARM_GIT_VIEWS = True
    store = core.open_store(home)
    store.db.execute("DELETE FROM freshness_cache")
    started = []
    real = subprocess.Popen

    class Counting(real):
        def __init__(self, args, *rest, **kw):
            started.append(args)
            super().__init__(args, *rest, **kw)

    subprocess.Popen = Counting
    try:
        t0 = time.perf_counter()
        for q in queries:
            core.search(store, q, repo=origin, limit=10)
        seconds = time.perf_counter() - t0
    finally:
        subprocess.Popen = real
    store.close()
    return {"seconds": round(seconds, 2), "git_processes": len(started)}


def steps(core, home, origin, queries, rounds=3):
    store = core.open_store(home)
    for q in queries:
        core.search(store, q, repo=origin, limit=10)
    spent, calls = collections.Counter(), collections.Counter()
    originals = {}
    for name in STEPS:
        if not hasattr(core, name):
            continue
        originals[name] = f = getattr(core, name)

        def timed(*args, _f=f, _name=name, **kwargs):
            t0 = time.thread_time()
            try:
                return _f(*args, **kwargs)
            finally:
                spent[_name] += time.thread_time() - t0
                calls[_name] += 1

        setattr(core, name, timed)
    total = 0.0
    try:
        for _ in range(rounds):
            for q in queries:
                t0 = time.thread_time()
                core.search(store, q, repo=origin, limit=10)
                total += time.thread_time() - t0
    finally:
        for name, f in originals.items():
            setattr(core, name, f)
        store.close()
    n = rounds * len(queries)
    return {
        "search_ms": round(total / n * 1000.0, 3),
        "steps_ms": {k: round(spent[k] / n * 1000.0, 3) for k in originals},
        "calls_per_search": {k: round(calls[k] / n, 2) for k in originals},
    }


def totals(cores, queries, floor_db=None, runs=7):
    """{label: CPU ms per search}: the least of ``runs`` per query, in turn, summed, / queries.
    With ``floor_db`` (search_floor.build_floor's table), "floor" is the bare FTS5 query's."""
    stores = {label: (core, core.open_store(home), origin) for label, (core, home, origin) in cores.items()}
    floor = sqlite3.connect(floor_db) if floor_db else None
    floor_sql = "SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT 10"
    for core, store, origin in stores.values():
        for q in queries:
            core.search(store, q, repo=origin, limit=10)
    best = {label: 0.0 for label in stores}
    if floor:
        best["floor"] = 0.0
    per_query = {label: [] for label in best}
    for q in queries:
        runs_of = {label: [] for label in best}
        for _ in range(runs):
            for label, (core, store, origin) in stores.items():
                t0 = time.thread_time()
                core.search(store, q, repo=origin, limit=10)
                runs_of[label].append(time.thread_time() - t0)
            if floor:
                t0 = time.thread_time()
                floor.execute(floor_sql, (search_floor.floor_expr(q),)).fetchall()
                runs_of["floor"].append(time.thread_time() - t0)
        for label in best:
            best[label] += min(runs_of[label])
            per_query[label].append(min(runs_of[label]))
    for _, store, _ in stores.values():
        store.close()
    if floor:
        floor.close()
    mean = {label: round(v / len(queries) * 1000.0, 3) for label, v in best.items()}
    p50 = {label: round(statistics.median(v) * 1000.0, 3) for label, v in per_query.items()}
    return mean, p50


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10000)
    parser.add_argument("--plain", action="store_true", help="no file anchors on the items")
    parser.add_argument("--against", help="a directory holding another version's wctx.py")
    parser.add_argument("--peers", default=os.path.join(ROOT, "..", "shared", "bench", "peers"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.abspath(args.peers))
    import corpus as corpus_mod

    queries = corpus_mod.make_queries(corpus_mod.make_corpus(1000))
    tmp = tempfile.mkdtemp(prefix="wctx-steps-")
    load_before = os.getloadavg()
    try:
        this = os.path.join(ROOT, "wctx.py")
        home, origin = build(this, corpus_mod, args.n, not args.plain, os.path.join(tmp, "this"))
        core = load_module("wctx_this", this)
        report = {"n": args.n, "anchored": not args.plain, "cold": cold_pass(core, home, origin, queries)}
        report.update(steps(core, home, origin, queries))
        cores = {"this": (core, home, origin)}
        if args.against:
            other = os.path.join(os.path.abspath(args.against), "wctx.py")
            other_home, _ = build(other, corpus_mod, args.n, not args.plain, os.path.join(tmp, "other"))
            other_core = load_module("wctx_other", other)
            report["cold_against"] = cold_pass(other_core, other_home, origin, queries)
            report["steps_against"] = steps(other_core, other_home, origin, queries)
            cores["against"] = (other_core, other_home, origin)
        store = core.open_store(home)
        floor_db = os.path.join(tmp, "floor.db")
        search_floor.build_floor(store, floor_db).close()
        store.close()
        report["total_cpu_ms"], report["p50_cpu_ms"] = totals(cores, queries, floor_db)
        report["this_over_floor"] = round(report["total_cpu_ms"]["this"] / report["total_cpu_ms"]["floor"], 2)
        report["p50_this_over_floor"] = round(report["p50_cpu_ms"]["this"] / report["p50_cpu_ms"]["floor"], 2)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report["load_before"] = [round(x, 2) for x in load_before]
    report["load_after"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(report, indent=1 if args.json else None))


if __name__ == "__main__":
    main()
