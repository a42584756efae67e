#!/usr/bin/env python3
"""MCP round-trip latency of `wctx mcp` against a bare stdio FTS5 server, in one run.

    python3 bench/mcp_latency.py                 # 10,000 and 100,000 items (several minutes)
    python3 bench/mcp_latency.py --quick         # 2,000 items, fewer queries (~1 min)
    python3 bench/mcp_latency.py --json

The corpus is bench/search.py's (10 real git repositories, items captured through
``wctx.capture``, history churned between batches); see that file for how it is built.

What it measures, each against a baseline measured in the same run:
  tools/call   search_evidence round trip with the server started once and warm: from writing the
               request line to reading the reply line, p50 and p95, interleaved query by query with
               the same call to bench/mcp_baseline_server.py (one FTS5 MATCH ... ORDER BY bm25
               LIMIT 10 over the very texts wctx indexes, no validation, ranking or freshness); then,
               apart, what it is made of: wctx.search alone in-process, the MCP layer alone (the
               server's own message handling with the search memoised) and a ping round trip;
  initialize   time from process start to the initialize answer, for `python wctx.pyz mcp`
               (compiled-module cache warm), `python -m wctx mcp` (as installed: .pyc cached),
               `python wctx.py mcp` (a script: compiled from source on every start) and the
               baseline script.
With --layer-baseline COMMIT, the MCP layer as of that commit is timed too, in turn with this
one on the same memoised answers, and their structured results compared.
Goals: round trip p50 <= 5 ms at 100,000 items; initialize answered within 200 ms.

The interpreter is this script's own (sys.executable), never a shim such as pyenv's ``python3``.
"""

from __future__ import annotations

import argparse
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

import search as corpus_bench  # noqa: E402  (bench/search.py: corpus, repos, baseline table)

import wctx  # noqa: E402

GOALS = {"call_p50_ms": 5.0, "initialize_ms": 200.0}
BASELINE_SERVER = os.path.join(HERE, "mcp_baseline_server.py")
INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}


class Peer:
    """A stdio JSON-RPC server process, driven one request at a time."""

    def __init__(self, argv, env, cwd):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=cwd)
        self.next_id = 0

    def call(self, method, params):
        """Round trip in milliseconds, and the decoded reply."""
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}).encode()
        t0 = time.perf_counter()
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline()
        elapsed = (time.perf_counter() - t0) * 1000.0
        message = json.loads(reply)
        if message.get("id") != self.next_id or "result" not in message or message["result"].get("isError"):
            raise SystemExit(f"unexpected reply from {self.proc.args}: {reply[:300]!r}")
        return elapsed, message["result"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def bench_calls(store, home, base_db, queries, passes, tmp, layer_baseline=None):
    """The MCP round trip, interleaved query by query with the baseline; then what it is made of."""
    env = dict(os.environ, WCTX_HOME=home)
    ours = Peer([sys.executable, os.path.join(ROOT, "wctx.py"), "mcp"], env, tmp)
    base = Peer([sys.executable, BASELINE_SERVER, base_db], env, tmp)
    for peer in (ours, base):
        peer.call("initialize", INIT)
    calls = [
        {"name": "search_evidence", "arguments": {"query": q, "repo": repo, "limit": 10}}
        for repo, q in queries
    ]
    for params in calls:  # warm-up: page cache, statement cache, freshness cache
        _, result = ours.call("tools/call", params)
        if result.get("isError"):
            raise SystemExit("search_evidence failed: %s" % result["content"][0]["text"])
        base.call("tools/call", params)
    t_ours, t_base, returned, sizes = [], [], 0, []
    for _ in range(passes):
        for params in calls:
            ms, result = ours.call("tools/call", params)
            t_ours.append(ms)
            returned += len(result["structuredContent"]["results"])
            sizes.append(len(result["content"][0]["text"]))
            ms, _ = base.call("tools/call", params)
            t_base.append(ms)
    # The pipe and the server loop alone: ping round trips through both servers.
    pings = [(ours.call("ping", {})[0], base.call("ping", {})[0]) for _ in range(300)]
    ours.close()
    base.close()
    pct = corpus_bench.pct
    out = {
        "timed_calls": len(t_ours),
        "p50_ms": round(pct(t_ours, 0.5), 3),
        "p95_ms": round(pct(t_ours, 0.95), 3),
        "baseline_p50_ms": round(pct(t_base, 0.5), 3),
        "baseline_p95_ms": round(pct(t_base, 0.95), 3),
        "mean_results": round(returned / max(1, len(t_ours)), 2),
        "median_reply_bytes": int(statistics.median(sizes)) if sizes else 0,
        "ping_p50_ms": round(pct([a for a, _ in pings], 0.5), 3),
        "baseline_ping_p50_ms": round(pct([b for _, b in pings], 0.5), 3),
    }
    out["ratio_p50"] = round(out["p50_ms"] / out["baseline_p50_ms"], 2)
    out["ratio_p95"] = round(out["p95_ms"] / out["baseline_p95_ms"], 2)
    out.update(bench_parts(store, calls, layer_baseline, tmp))
    return out


def _layer_at(ref, tmp):
    """wctx_mcp as of git commit ``ref``, bound to that commit's untrusted-text functions (the
    rest of the service layer stays this checkout's: the search is memoised anyway)."""
    import importlib.util

    folder = os.path.join(tmp, "layer-" + ref.replace("/", "_"))
    os.makedirs(folder, exist_ok=True)
    modules = {}
    for name in ("wctx", "wctx_mcp"):
        path = os.path.join(folder, name + ".py")
        with open(path, "wb") as fh:
            fh.write(subprocess.run(["git", "-C", ROOT, "show", "%s:%s.py" % (ref, name)], check=True,
                                    capture_output=True).stdout)  # fmt: skip
        spec = importlib.util.spec_from_file_location("%s_at_%s" % (name, ref), path)
        modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(modules[name])
    layer = modules["wctx_mcp"]
    layer.neutralise = modules["wctx"].neutralise
    layer.may_need_neutralising = modules["wctx"].may_need_neutralising
    return layer


def bench_parts(store, calls, layer_baseline=None, tmp=None):
    """In this process, after the server has gone: wctx.search alone, and the MCP layer alone.

    The layer is the server's own Connection handling the same tools/call messages, parse to
    encoded reply, with wctx.search answered from a memo of its earlier result, so that the
    figure is argument checks, neutralising, clipping and JSON, without the search's noise.
    With ``layer_baseline`` (a git commit), that commit's layer is timed too, call by call in
    turn with this one, and the replies of both are compared."""
    import wctx_mcp

    pct = corpus_bench.pct
    t_search, memo = [], {}
    for params in calls:
        args = params["arguments"]
        t0 = time.perf_counter()
        # What the tool asks of the service layer: one result more than the page, to know if
        # there is a next one.
        memo[(args["query"], args["repo"])] = wctx.search(
            store, args["query"], repo=args["repo"], limit=args["limit"] + 1
        )
        t_search.append((time.perf_counter() - t0) * 1000.0)

    class MemoCore:
        def __getattr__(self, name):
            return getattr(wctx, name)

        @staticmethod
        def search(store, query, repo=None, **kw):
            return memo[(query, repo)]

    layers = {"layer": wctx_mcp}
    if layer_baseline:
        layers["baseline_layer"] = _layer_at(layer_baseline, tmp)
    connections = {}
    for label, module in layers.items():
        tools = module.Tools(MemoCore())
        tools._store = store
        connections[label] = module.Connection(tools, wctx.__version__)
        connections[label].handle({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
    times = {label: [] for label in layers}
    differ = 0
    for round_ in range(3):
        for i, params in enumerate(calls):
            line = json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}).encode()
            replies = {}
            for label in sorted(layers, reverse=(i + round_) % 2 == 1):
                t0 = time.perf_counter()
                replies[label] = layers[label]._encode(connections[label].handle(json.loads(line)))
                times[label].append((time.perf_counter() - t0) * 1000.0)
            if len(replies) == 2:  # the same results, in the same order (their shapes may differ)
                a, b = (
                    [e["id"] for e in json.loads(r)["result"]["structuredContent"]["results"]]
                    for r in replies.values()
                )
                differ += a != b
    out = {"search_p50_ms": round(pct(t_search, 0.5), 3), "layer_p50_ms": round(pct(times["layer"], 0.5), 3),
           "layer_p95_ms": round(pct(times["layer"], 0.95), 3)}  # fmt: skip
    if layer_baseline:
        out["baseline_layer"] = layer_baseline
        out["baseline_layer_p50_ms"] = round(pct(times["baseline_layer"], 0.5), 3)
        out["baseline_layer_p95_ms"] = round(pct(times["baseline_layer"], 0.95), 3)
        out["replies_differing_from_baseline_layer"] = differ
    return out


def time_to_initialize(argv, env, cwd):
    t0 = time.perf_counter()
    peer = Peer(argv, env, cwd)
    peer.call("initialize", INIT)
    elapsed = (time.perf_counter() - t0) * 1000.0
    peer.close()
    return elapsed


def bench_initialize(home, base_db, runs, tmp):
    env = dict(os.environ, WCTX_HOME=home)
    pyz = os.path.join(tmp, "wctx.pyz")
    subprocess.run(
        [sys.executable, os.path.join(ROOT, "zipapp", "build.py"), "-o", pyz],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    # The archive's compiled-module cache, warm after the first run (as on a user's machine).
    pyz_env = dict(env, WCTX_PYZ_CACHE=os.path.join(tmp, "pyz-cache"))
    # wctx imported as a module (pip install, or python -m wctx) reads its .pyc like any module.
    module_env = dict(env, PYTHONPATH=ROOT, PYTHONPYCACHEPREFIX=os.path.join(tmp, "pycache"))
    module_env.pop("PYTHONDONTWRITEBYTECODE", None)
    commands = {
        "source": ([sys.executable, os.path.join(ROOT, "wctx.py"), "mcp"], env),
        "pyz": ([sys.executable, pyz, "mcp"], pyz_env),
        "module": ([sys.executable, "-m", "wctx", "mcp"], module_env),
        "baseline": ([sys.executable, BASELINE_SERVER, base_db], env),
    }
    timings = {label: [] for label in commands}
    for argv, cmd_env in commands.values():  # untimed warm-up: .pyc and zipapp caches, page cache
        time_to_initialize(argv, cmd_env, tmp)
    for _ in range(runs):  # interleaved so that machine noise hits every command alike
        for label, (argv, cmd_env) in commands.items():
            timings[label].append(time_to_initialize(argv, cmd_env, tmp))
    out = {label: round(statistics.median(values), 1) for label, values in timings.items()}
    out["runs"] = runs
    for label in ("source", "pyz", "module"):
        out["ratio_" + label] = round(out[label] / out["baseline"], 2)
    return out


def table(report):
    lines = ["", "tools/call search_evidence round trip (server started once, warm; ms)"]
    lines.append(
        "%9s %8s %8s %10s %10s %7s %7s %11s %10s %10s"
        % (
            "items",
            "p50",
            "p95",
            "base p50",
            "base p95",
            "x p50",
            "x p95",
            "search p50",
            "layer p50",
            "ping p50",
        )
    )
    for size, r in report["calls"].items():
        lines.append(
            "%9s %8.2f %8.2f %10.2f %10.2f %7.2f %7.2f %11.2f %10.2f %10.3f"
            % (
                f"{int(size):,}",
                r["p50_ms"],
                r["p95_ms"],
                r["baseline_p50_ms"],
                r["baseline_p95_ms"],
                r["ratio_p50"],
                r["ratio_p95"],
                r["search_p50_ms"],
                r["layer_p50_ms"],
                r["ping_p50_ms"],
            )
        )
    lines.append(
        "  base: bench/mcp_baseline_server.py, same calls interleaved; search: wctx.search in-process;"
    )
    lines.append("  layer: the server's message handling in-process with the search memoised; ping: pipe and")
    lines.append(
        "  server loop alone (baseline ping p50 %s ms)"
        % ", ".join("%.3f" % r["baseline_ping_p50_ms"] for r in report["calls"].values())
    )
    for size, r in report["calls"].items():
        if "baseline_layer" in r:
            lines.append(
                "  layer at %s, timed in turn with this one (%s items): p50 %.3f ms, p95 %.3f ms "
                "(this checkout p95 %.3f ms); structured results differing: %d"
                % (
                    r["baseline_layer"],
                    f"{int(size):,}",
                    r["baseline_layer_p50_ms"],
                    r["baseline_layer_p95_ms"],
                    r["layer_p95_ms"],
                    r["replies_differing_from_baseline_layer"],
                )  # fmt: skip
            )
    i = report["initialize"]
    lines.append("")
    lines.append("process start -> initialize answered (median of %d runs, ms)" % i["runs"])
    lines.append(
        "  python wctx.pyz mcp     %7.1f   (%.2fx baseline; compiled-module cache warm)"
        % (i["pyz"], i["ratio_pyz"])
    )
    lines.append(
        "  python -m wctx mcp      %7.1f   (%.2fx baseline; as installed, .pyc cached)"
        % (i["module"], i["ratio_module"])
    )
    lines.append(
        "  python wctx.py mcp      %7.1f   (%.2fx baseline; a script is compiled on every start)"
        % (i["source"], i["ratio_source"])
    )
    lines.append("  baseline                %7.1f   (bench/mcp_baseline_server.py)" % i["baseline"])
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small run: 2,000 items, fewer queries")
    parser.add_argument("--sizes", help="comma-separated corpus sizes (default 10000,100000)")
    parser.add_argument("--queries", type=int, help="distinct queries per size (default 200)")
    parser.add_argument("--passes", type=int, default=3, help="timed passes over the queries (default 3)")
    parser.add_argument("--init-runs", type=int, help="timed start-ups per command (default 20)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--keep", metavar="DIR", help="build in DIR and keep it (default: a temp dir, removed)"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--layer-baseline",
        metavar="COMMIT",
        help="also time the MCP layer of this git commit, in turn with this checkout's, same answers",
    )
    args = parser.parse_args(argv)

    sizes = (
        [int(s) for s in args.sizes.split(",")] if args.sizes else ([2000] if args.quick else [10000, 100000])
    )
    nq = args.queries or (40 if args.quick else 200)
    init_runs = args.init_runs or (5 if args.quick else 20)

    def progress(text):
        sys.stderr.write(text + "\n")

    tmp = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="wctx-mcp-bench-")
    os.makedirs(tmp, exist_ok=True)
    report = {
        "python": sys.version.split()[0],
        "sqlite": sqlite3.sqlite_version,
        "cpus": os.cpu_count(),
        "seed": args.seed,
        "calls": {},
        "build_s": {},
    }
    try:
        words, weights = corpus_bench.vocabulary()
        corpus = corpus_bench.Corpus(args.seed, words, weights)
        progress("building 10 repositories in %s" % tmp)
        repos = corpus_bench.Repos(os.path.join(tmp, "repos"), corpus, 30)
        home = os.path.join(tmp, "home")
        store = wctx.open_store(home)
        for ws, members in corpus_bench.WORKSPACES.items():
            for name in members:
                wctx.register_repo(store, repos.path(name), name=name, workspace=ws)
        for a, kind, b in corpus_bench.RELATIONS:
            wctx.relate(store, a, kind, b)
        queries = corpus_bench.make_queries(repos, corpus, nq)
        base_db = None
        for size in sizes:
            t0 = time.perf_counter()
            corpus_bench.populate(store, repos, corpus, size, progress)
            report["build_s"][str(size)] = round(time.perf_counter() - t0, 1)
            base_db = os.path.join(tmp, "baseline-%d.db" % size)
            corpus_bench.build_baseline(store, base_db).close()
            progress("%d items; measuring tools/call round trips" % size)
            report["calls"][str(size)] = bench_calls(
                store, home, base_db, queries, args.passes, tmp, args.layer_baseline
            )
        store.close()
        progress("measuring start-up to initialize")
        report["initialize"] = bench_initialize(home, base_db, init_runs, tmp)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(
            "wctx MCP bench: Python %s, SQLite %s, %s CPUs"
            % (report["python"], report["sqlite"], report["cpus"])
        )
        print(table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
