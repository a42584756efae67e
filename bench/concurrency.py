#!/usr/bin/env python3
"""Tail latency of writes under contention: 8 writers (4 `wctx mcp` servers, 4 CLI `wctx capture`
loops) at once, with an MCP and a CLI search running throughout, into one store.

    python3 bench/concurrency.py            # 8 x 500 items (as the standing test), ~3-5 minutes
    python3 bench/concurrency.py --quick    # 8 x 100 items
    python3 bench/concurrency.py --json

Each MCP writer sends record_evidence calls of 5 items to its own long-lived server; each CLI
writer runs `python wctx.py capture` with 20 items per process. A call's latency is from sending
the request (or starting the process) to reading its answer. Reported per kind: calls, p50, p99,
max, errors (a tool error, a non-zero exit or anything on stderr), and items stored at the end.
The CLI figure includes interpreter start-up; compare it with `wctx --version` start-up measured
in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

from mcp_helpers.repos import make_repo  # noqa: E402
from mcp_helpers.wire import WireServer  # noqa: E402

import wctx  # noqa: E402

WCTX = os.path.join(ROOT, "wctx.py")


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100.0 * (len(values) - 1))))]


def run(per_writer, mcp_per_call=5, cli_per_call=20):
    base = tempfile.mkdtemp(prefix="wctx-conc-")
    try:
        home = os.path.join(base, "home")
        sdk = make_repo(
            os.path.join(base, "upload-sdk"), {"src/upload.py": "def upload():\n    return 419\n"}
        )
        ui = make_repo(os.path.join(base, "docs-ui"), {"app.py": "def main():\n    return 0\n"})
        with wctx.open_store(home) as s:
            wctx.register_repo(s, sdk, name="upload-sdk", workspace="docs")
            wctx.register_repo(s, ui, name="docs-ui", workspace="docs")
            wctx.relate(s, "docs-ui", "uses", "upload-sdk")
        env = dict(os.environ, WCTX_HOME=home)
        lat = {"mcp record_evidence": [], "cli capture": [], "mcp search": [], "cli search": []}
        errors = {k: 0 for k in lat}
        lock = threading.Lock()
        done = threading.Event()

        def note(kind, seconds, ok):
            with lock:
                lat[kind].append(seconds)
                errors[kind] += 0 if ok else 1

        def mcp_writer(n):
            server = WireServer(home, sdk)
            server.initialize()
            for c in range(per_writer // mcp_per_call):
                items = [{"kind": "finding", "claim": "w%d c%d i%d upload" % (n, c, i), "repo": "upload-sdk",
                          "files": ["src/upload.py#upload"]} for i in range(mcp_per_call)]  # fmt: skip
                t = time.perf_counter()
                result = server.call("record_evidence", {"items": items})
                note("mcp record_evidence", time.perf_counter() - t, not result.get("isError"))
            server.kill()

        def cli(kind, argv, cwd):
            t = time.perf_counter()
            p = subprocess.run([sys.executable, WCTX, *argv], cwd=cwd, env=env, capture_output=True)
            note(kind, time.perf_counter() - t, p.returncode == 0 and not p.stderr.strip())

        def cli_writer(n):
            for c in range(per_writer // cli_per_call):
                argv = ["capture", "--repo", "upload-sdk"]
                for i in range(cli_per_call):
                    argv += ["--note", "cli%d c%d i%d upload" % (n, c, i)]
                cli("cli capture", argv, sdk)

        def searcher():
            server = WireServer(home, ui)
            server.initialize()
            while not done.is_set():
                t = time.perf_counter()
                result = server.call("search_evidence", {"query": "upload", "limit": 20})
                note("mcp search", time.perf_counter() - t, not result.get("isError"))
                cli("cli search", ["search", "upload"], ui)
            server.kill()

        start = []
        for _ in range(5):
            t = time.perf_counter()
            subprocess.run([sys.executable, WCTX, "--version"], capture_output=True, env=env)
            start.append(time.perf_counter() - t)
        threads = [threading.Thread(target=mcp_writer, args=(n,)) for n in range(4)]
        threads += [threading.Thread(target=cli_writer, args=(n,)) for n in range(4)]
        s = threading.Thread(target=searcher)
        t0 = time.perf_counter()
        s.start()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        done.set()
        s.join()
        with wctx.open_store(home) as st:
            stored = st.one("SELECT count(*) FROM evidence")[0]
        report = {
            "writers": 8,
            "items_per_writer": per_writer,
            "stored": stored,
            "wall_s": round(wall, 1),
            "cli_startup_median_ms": round(statistics.median(start) * 1000, 1),
            "kinds": {
                k: {
                    "calls": len(v),
                    "p50_ms": round(pct(v, 50) * 1000, 1),
                    "p99_ms": round(pct(v, 99) * 1000, 1),
                    "max_ms": round(max(v) * 1000, 1),
                    "errors": errors[k],
                }
                for k, v in lat.items()
                if v
            },
        }
        return report
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    report = run(100 if args.quick else 500)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print("8 writers x %d items: %d stored in %.1f s (CLI start-up %.1f ms)"
          % (report["items_per_writer"], report["stored"], report["wall_s"], report["cli_startup_median_ms"]))  # fmt: skip
    for kind, r in report["kinds"].items():
        print("  %-20s %5d calls  p50 %7.1f ms  p99 %7.1f ms  max %7.1f ms  errors %d"
              % (kind, r["calls"], r["p50_ms"], r["p99_ms"], r["max_ms"], r["errors"]))  # fmt: skip


if __name__ == "__main__":
    main()
