#!/usr/bin/env python3
"""What each process-wide cache of parts/core/base/caches.py is worth: every workload that uses it,
timed with the cache and without it, interleaved, in one run.

    python3 bench/caches.py                       # every cache, 5 rounds each (about 15 minutes)
    python3 bench/caches.py --only STORED_TEXT,GIT_VIEWS --rounds 7
    python3 bench/caches.py --json

The workloads are those of the benchmarks that exercise the caches, at a small size, all in this
process on one built corpus (bench/search.py's: 10 real git repositories, --items items captured
through ``wctx.capture``, history churned between batches):
  search      every query of bench/search.py's query set through ``wctx.search``, twice (a
              server sees the same words again), freshness cache warm;
  verify      ``wctx.verify`` of --verify items with the freshness tables emptied first (cold);
  mcp         the same queries as ``search_evidence`` calls through the MCP server's own
              Connection (bench/mcp_latency.py's layer), with the real search, git's answers
              kept between calls as the server keeps them (WARM_GIT_VIEWS);
  cli         ``wctx.main(["search", ...])`` for a tenth of the queries (parser, output);
  capture     ``wctx.capture`` of 20 new items into a fresh store with the same repositories;
  import      ``wctx.import_evidence`` of the corpus's export into a fresh store (the bulk path
              of bench/import_evidence.py and bench/sync.py);
  transcript  ``wctx.import_transcript`` of the largest shared transcript into a fresh store
              (bench/import_speed.py).
Each run starts from ``wctx.clear_caches()``, so the cache earns only what it earns within one
workload. A workload counts as using a cache when a first pass with every cache on reads it.
"Without" means: a function memo's functions replaced by the functions they wrap, a text memo
likewise, a table replaced by one that never answers (every lookup misses, nothing is kept
beyond what the code reads back at once); a table built once (its owner checks whether it is
empty) is emptied before each use. A run without a cache also checks the cache stayed empty.
Printed per cache and workload: median CPU seconds (this process and its git processes) with and
without it, and without/with (above 1:
the cache saves time). Keep a cache where that ratio reaches 1.05 on some workload.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import io
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)

import search as corpus_bench  # noqa: E402

import wctx  # noqa: E402
import wctx_mcp  # noqa: E402

TRANSCRIPTS = os.path.join(os.path.dirname(ROOT), "shared", "data", "transcripts")
INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
TEXT_MEMO = getattr(wctx, "TextMemo", ())  # a memo bounded by characters, where wctx has one
MEMO_TYPES = (wctx.FunctionMemo,) + ((TEXT_MEMO,) if TEXT_MEMO else ())
# Memos the code itself empties (cache_clear) at a point of its own: not switched off.
KEPT_MEMOS = {"field_checks", "field_plan"}
# Tables a function builds once, when it finds them empty: "without" empties them before each call.
BUILT_TABLES = {
    "_ABBREVIATIONS_OF": "_abbreviation_tables",
    "_EXPANSIONS_OF": "_abbreviation_tables",
    "FRAGMENT_SCAN": "_fragment_tables",
}


class NeverDict(dict):
    """A table that never answers a lookup; what is written is read back only by ``d[key]``."""

    reads = 0

    def get(self, key, default=None):
        NeverDict.reads += 1
        return default

    def __contains__(self, key):
        NeverDict.reads += 1
        return False

    def pop(self, key, *default):
        dict.pop(self, key, None)
        return default[0] if default else None


class NeverSet(set):
    """A set that keeps nothing."""

    def add(self, value):
        pass


def counting(container):
    base = container.__class__

    class Counted(base):
        used = False

        def get(self, *a):
            Counted.used = True
            return base.get(self, *a)

        def __contains__(self, k):
            Counted.used = True
            return base.__contains__(self, k)

        def __setitem__(self, k, v):
            Counted.used = True
            base.__setitem__(self, k, v)

        def add(self, v):
            Counted.used = True
            base.add(self, v)

        def __rsub__(self, other):
            Counted.used = True
            return set(other) - set(self)

    if base is dict:
        del Counted.add, Counted.__rsub__
    out = Counted()
    out.update(container)
    return out


def cache_globals():
    """{cache name: (Cache, [(module, global name), ...] its container or functions live under)}."""
    caches_part = {}
    for name, value in vars(wctx).items():
        for cache in wctx.CACHES:
            if value is cache or (isinstance(cache, wctx.CacheTable) and value is cache.value):
                caches_part.setdefault(cache.name, (name, cache))
    out = {}
    for cache in wctx.CACHES:
        var = caches_part.get(cache.name, (None, cache))[0]
        places = []
        if isinstance(cache, wctx.FunctionMemo):
            for module in (wctx, wctx_mcp):
                for name, value in vars(module).items():
                    if any(value is f for f in cache.functions):
                        places.append((module, name))
        elif isinstance(cache, TEXT_MEMO):
            for name, value in vars(wctx).items():
                cells = getattr(value, "__closure__", None) or ()
                if any(
                    getattr(c, "cell_contents", None) is t for c in cells for t in cache.tables
                ) and hasattr(value, "__wrapped__"):
                    places.append((wctx, name))
        else:
            for module in (wctx, wctx_mcp):
                for name, value in vars(module).items():
                    if value is cache.value:
                        places.append((module, name))
        out[var or cache.name] = (cache, places)
    return out


@contextlib.contextmanager
def without(cache, places, var):
    """The cache switched off for the duration (see the module's docstring)."""
    saved = [(m, n, getattr(m, n)) for m, n in places]
    builder = BUILT_TABLES.get(var)
    try:
        if builder:
            original = getattr(wctx, builder)

            def rebuilt(*a, _original=original):
                for other, b in BUILT_TABLES.items():
                    if b == builder:
                        getattr(wctx, other).clear()
                return _original(*a)

            saved.append((wctx, builder, original))
            setattr(wctx, builder, rebuilt)
        elif isinstance(cache, MEMO_TYPES):
            for m, n in places:
                if n not in KEPT_MEMOS:
                    setattr(m, n, getattr(m, n).__wrapped__)
        else:
            empty = NeverSet() if isinstance(cache.value, set) else NeverDict()
            for m, n in places:
                setattr(m, n, empty)
        yield
    finally:
        for m, n, v in saved:
            setattr(m, n, v)


def cpu():
    """CPU seconds of this process and of the git processes it has waited for: on a shared machine
    steadier than wall time, which other jobs' load stretches."""
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


def build(args, tmp):
    words, weights = corpus_bench.vocabulary()
    corpus = corpus_bench.Corpus(args.seed, words, weights)
    repos = corpus_bench.Repos(os.path.join(tmp, "repos"), corpus, 30)
    home = os.path.join(tmp, "home")
    store = wctx.open_store(home)
    for ws, members in corpus_bench.WORKSPACES.items():
        for name in members:
            wctx.register_repo(store, repos.path(name), name=name, workspace=ws)
    for a, kind, b in corpus_bench.RELATIONS:
        wctx.relate(store, a, kind, b)
    queries = corpus_bench.make_queries(repos, corpus, args.queries)
    corpus_bench.populate(store, repos, corpus, args.items, None)
    fresh_items = corpus_bench.make_items(repos, corpus, 20, corpus_bench.WORKSPACES["billing"])
    export_dir = os.path.join(tmp, "export")
    wctx.export_evidence(store, out_dir=export_dir)
    for repo, q in queries:  # the freshness cache warm, as a server's is
        wctx.search(store, q, repo=repo, limit=10)
    ids = [r["id"] for r in store.all("SELECT id FROM evidence ORDER BY rid LIMIT ?", (args.verify,))]
    transcripts = sorted(glob.glob(os.path.join(TRANSCRIPTS, "*.jsonl")), key=os.path.getsize)
    return {
        "store": store,
        "home": home,
        "repos": repos,
        "queries": queries,
        "fresh_items": fresh_items,
        "export_dir": export_dir,
        "ids": ids,
        "transcript": transcripts[-1] if transcripts else None,
        "tmp": tmp,
    }


def fresh_store(world, with_repos):
    home = tempfile.mkdtemp(prefix="store-", dir=world["tmp"])
    store = wctx.open_store(home)
    if with_repos:
        for ws, members in corpus_bench.WORKSPACES.items():
            for name in members:
                wctx.register_repo(store, world["repos"].path(name), name=name, workspace=ws)
    return store, home


def workloads(world):
    """{name: function(world) -> seconds}: each sets up outside its timed part."""
    store = world["store"]

    def search(w):
        t0 = cpu()
        for _ in range(2):
            for repo, q in w["queries"]:
                wctx.search(store, q, repo=repo, limit=10)
        return cpu() - t0

    def verify(w):
        with store.atomic():
            store.db.execute("DELETE FROM freshness_cache")
            store.db.execute("DELETE FROM anchor_checks")
        t0 = cpu()
        wctx.verify(store, ids=w["ids"])
        return cpu() - t0

    def mcp(w):
        wctx.WARM_GIT_VIEWS = True  # as the server's entry sets it: a long-lived process
        tools = wctx_mcp.Tools(wctx)
        tools._store = store
        conn = wctx_mcp.Connection(tools, wctx.__version__)
        conn.handle({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
        t0 = cpu()
        for _ in range(2):
            for i, (repo, q) in enumerate(w["queries"]):
                params = {"name": "search_evidence", "arguments": {"query": q, "repo": repo, "limit": 10}}
                wctx_mcp._encode(
                    conn.handle({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})
                )
        wctx.WARM_GIT_VIEWS = False
        return cpu() - t0

    def cli(w):
        out = io.StringIO()
        t0 = cpu()
        with contextlib.redirect_stdout(out):
            for repo, q in w["queries"][: max(1, len(w["queries"]) // 10)]:
                wctx.main(["--home", w["home"], "search", q, "--repo", repo, "--json"])
        return cpu() - t0

    def capture(w):
        target, home = fresh_store(w, True)
        try:
            t0 = cpu()
            for i in range(0, len(w["fresh_items"]), 10):
                wctx.capture(target, w["fresh_items"][i : i + 10], summary="bench", agent="bench")
            return cpu() - t0
        finally:
            target.close()
            shutil.rmtree(home, ignore_errors=True)

    def import_(w):
        target, home = fresh_store(w, True)
        try:
            t0 = cpu()
            wctx.import_evidence(target, [w["export_dir"]])
            return cpu() - t0
        finally:
            target.close()
            shutil.rmtree(home, ignore_errors=True)

    def transcript(w):
        target, home = fresh_store(w, False)
        try:
            t0 = cpu()
            wctx.import_transcript(target, w["transcript"])
            return cpu() - t0
        finally:
            target.close()
            shutil.rmtree(home, ignore_errors=True)

    out = {"search": search, "verify": verify, "mcp": mcp, "cli": cli, "capture": capture, "import": import_}
    if world["transcript"]:
        out["transcript"] = transcript
    return out


def users(found, works, world):
    """{cache name: [workloads that read or fill it]}, from one pass of each workload with every
    cache on and every table counting its reads and writes."""
    out = {name: [] for name in found}
    for label, work in works.items():
        wctx.clear_caches()
        saved, counted = [], {}
        for name, (cache, places) in found.items():
            if isinstance(cache, wctx.CacheTable):
                counted[name] = counting(cache.value)
                for m, n in places:
                    saved.append((m, n, getattr(m, n)))
                    setattr(m, n, counted[name])
        try:
            work(world)
        finally:
            for m, n, v in saved:
                setattr(m, n, v)
        for name, (cache, _) in found.items():
            if isinstance(cache, wctx.FunctionMemo):
                used = any(f.cache_info().hits + f.cache_info().misses for f in cache.functions)
            elif isinstance(cache, TEXT_MEMO):
                used = cache.size() > 0
            else:
                used = counted[name].__class__.used
            if used:
                out[name].append(label)
    wctx.clear_caches()
    return out


def measure(name, cache, places, work, world, rounds):
    on, off = [], []
    for r in range(rounds):
        for variant in ("on", "off") if r % 2 == 0 else ("off", "on"):
            wctx.clear_caches()
            if variant == "on":
                on.append(work(world))
            else:
                with without(cache, places, name):
                    off.append(work(world))
                if isinstance(cache, MEMO_TYPES) and name not in BUILT_TABLES:
                    if cache.size() > sum(
                        f.cache_info().currsize
                        for f in getattr(cache, "functions", ())
                        if f.__name__ in KEPT_MEMOS
                    ):
                        raise SystemExit("%s: still filled when switched off" % name)
    a, b = statistics.median(on), statistics.median(off)
    return {"with_s": round(a, 4), "without_s": round(b, 4), "ratio": round(b / a, 3) if a else None}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--verify", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--only", help="comma-separated cache names (as in caches.py)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="wctx-caches-bench-")
    report = {"command": "python3 bench/caches.py " + " ".join(argv if argv is not None else sys.argv[1:]),
              "load_average_start": [round(x, 1) for x in os.getloadavg()], "caches": {}}  # fmt: skip
    try:
        world = build(args, tmp)
        works = workloads(world)
        wanted = set(args.only.split(",")) if args.only else None
        found = {n: v for n, v in cache_globals().items() if not wanted or n in wanted}
        using = users({n: v for n, v in found.items() if v[1]}, works, world)
        for name, (cache, places) in found.items():
            entry = report["caches"][name] = {"what": cache.name, "workloads": {}}
            if not places:
                entry["note"] = "no function or table found to switch off"
                continue
            for label in using[name]:
                work = works[label]
                entry["workloads"][label] = measure(name, cache, places, work, world, args.rounds)
                if not args.json:
                    m = entry["workloads"][label]
                    print("%-22s %-10s with %8.4fs  without %8.4fs  x%.3f" % (
                        name, label, m["with_s"], m["without_s"], m["ratio"]), flush=True)  # fmt: skip
            ratios = [m["ratio"] for m in entry["workloads"].values() if m["ratio"]]
            entry["best_ratio"] = max(ratios) if ratios else None
            if not args.json and not ratios:
                print("%-22s (no workload uses it)" % name, flush=True)
        world["store"].close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report["load_average_end"] = [round(x, 1) for x in os.getloadavg()]
    if args.json:
        print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
