#!/usr/bin/env python3
"""Speed of `wctx import` on a multi-megabyte transcript.

    python3 bench/import_speed.py                 # the largest real transcript, 7 runs
    python3 bench/import_speed.py --runs 15 --json
    python3 bench/import_speed.py --transcript ~/.claude/projects/x/y.jsonl --check
    python3 bench/import_speed.py --base main --runs 9   # this tree's parse and import against main's

The transcript is the largest one in ../shared/data/transcripts (a 2.9 MB Claude Code session
with two subagent files), or --transcript. Measured in the same run, interleaved:
  baseline   a bare pass that reads every line of the same files and json.loads it (the floor
             any streaming importer pays)
  parse      wctx.parse_transcript: the adapter alone, no store
  import     wctx.import_transcript into a fresh store (parse + repo mapping + redaction +
             one write transaction), what `wctx import FILE` does after start-up
Budget: median(import) <= 1 s (issue 4). The ratio import/baseline is printed as the
machine-independent figure. With --base REV, that revision's wctx.py is loaded beside this tree's
and both parse and import the transcript in turn (the order alternating per run), timed in CPU
seconds of this process; the ratios this/base of the medians are printed.
"""

import argparse
import glob
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import wctx  # noqa: E402

# shared/data/transcripts beside this tree, or beside a folder above it (a worktree).
SHARED = next(
    (
        os.path.join(folder, "shared", "data", "transcripts")
        for folder in (os.path.dirname(ROOT), os.path.dirname(os.path.dirname(ROOT)))
        if os.path.isdir(os.path.join(folder, "shared", "data", "transcripts"))
    ),
    os.path.join(os.path.dirname(ROOT), "shared", "data", "transcripts"),
)
BUDGET_SECONDS = 1.0
# Wall time; --base counts this process's CPU time instead, which a busy shared machine disturbs
# far less (the import runs no subprocess: its SQLite work is in this process).
CLOCK = time.perf_counter


def files_of(path):
    return [path] + sorted(glob.glob(os.path.join(path[: -len(".jsonl")], "subagents", "*.jsonl")))


def baseline(path):
    n = 0
    for p in files_of(path):
        with open(p, "rb") as fh:
            for raw in fh:
                if raw.strip():
                    json.loads(raw)
                    n += 1
    return n


def parse(path):
    return wctx.parse_transcript(path)


def import_fresh(path):
    home = tempfile.mkdtemp(prefix="wctx-bench-")
    try:
        store = wctx.open_store(home)  # opening (and migrating) is outside the timed part
        try:
            start = CLOCK()
            wctx.import_transcript(store, path)
            return CLOCK() - start
        finally:
            store.close()
    finally:
        shutil.rmtree(home, ignore_errors=True)


def load_revision(rev, where):
    """The wctx.py of git revision ``rev`` as a module of its own."""
    import importlib.util
    import subprocess

    path = os.path.join(where, "wctx_base.py")
    with open(path, "wb") as fh:
        fh.write(
            subprocess.run(
                ["git", "-C", ROOT, "show", "%s:wctx.py" % rev], check=True, capture_output=True
            ).stdout
        )
    spec = importlib.util.spec_from_file_location("wctx_base", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["wctx_base"] = module
    spec.loader.exec_module(module)
    return module


def against_base(rev, path, runs):
    """Medians of parse and import for this tree's wctx and revision ``rev``'s, interleaved."""
    global wctx, CLOCK
    CLOCK = time.process_time
    where = tempfile.mkdtemp(prefix="wctx-bench-base-")
    try:
        versions = {"base": load_revision(rev, where), "this": wctx}
        timings = {(v, k): [] for v in versions for k in ("parse", "import")}
        try:
            for n in range(runs + 1):
                for name in sorted(versions, reverse=n % 2 == 1):
                    wctx = versions[name]
                    p, i = timed(parse, path), import_fresh(path)
                    if n:  # the first round warms both
                        timings[(name, "parse")].append(p)
                        timings[(name, "import")].append(i)
        finally:
            wctx = versions["this"]
    finally:
        shutil.rmtree(where, ignore_errors=True)
    print("transcript: %s, %d runs, CPU time, this tree against %s" % (os.path.basename(path), runs, rev))
    for k in ("parse", "import"):
        base, this = statistics.median(timings[("base", k)]), statistics.median(timings[("this", k)])
        print(
            "  %-7s %s %7.1f ms   this %7.1f ms   this/%s %.3f"
            % (k, rev, base * 1000, this * 1000, rev, this / base)
        )
    return 0


def timed(func, path):
    start = CLOCK()
    func(path)
    return CLOCK() - start


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--transcript", help="transcript to import (default: the largest shared one)")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--check", action="store_true", help="exit 1 when the import median is over budget")
    ap.add_argument("--base", help="also time this git revision's wctx.py, interleaved, and print the ratios")
    args = ap.parse_args(argv)
    path = args.transcript
    if not path:
        candidates = glob.glob(os.path.join(SHARED, "*.jsonl"))
        if not candidates:
            sys.exit("no transcript given and none in %s" % SHARED)
        path = max(candidates, key=os.path.getsize)
    path = os.path.abspath(os.path.expanduser(path))
    if args.base:
        return against_base(args.base, path, args.runs)
    size = sum(os.path.getsize(p) for p in files_of(path))
    lines = baseline(path)  # warm the page cache
    import_fresh(path)
    timings = {"baseline": [], "parse": [], "import": []}
    for _ in range(args.runs):
        timings["baseline"].append(timed(baseline, path))
        timings["parse"].append(timed(parse, path))
        timings["import"].append(import_fresh(path))
    med = {k: statistics.median(v) for k, v in timings.items()}
    best = {k: min(v) for k, v in timings.items()}
    report = {
        "transcript": path,
        "bytes": size,
        "lines": lines,
        "runs": args.runs,
        "python": sys.version.split()[0],
        "median_seconds": med,
        "min_seconds": best,
        "ratio_import_to_baseline": med["import"] / med["baseline"],
        "ratio_parse_to_baseline": med["parse"] / med["baseline"],
        "mb_per_second": size / 1e6 / med["import"],
        "budget_seconds": BUDGET_SECONDS,
        "within_budget": med["import"] <= BUDGET_SECONDS,
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(
            "transcript: %s (%.2f MB, %d lines incl. subagents), %d runs, Python %s"
            % (os.path.basename(path), size / 1e6, lines, args.runs, report["python"])
        )
        for k in ("baseline", "parse", "import"):
            print("  %-9s median %7.1f ms   min %7.1f ms" % (k, med[k] * 1000, best[k] * 1000))
        print(
            "import / baseline: %.2fx   parse / baseline: %.2fx   %.1f MB/s   budget %.1f s: %s"
            % (
                report["ratio_import_to_baseline"],
                report["ratio_parse_to_baseline"],
                report["mb_per_second"],
                BUDGET_SECONDS,
                "ok" if report["within_budget"] else "OVER",
            )
        )
    return 1 if args.check and not report["within_budget"] else 0


if __name__ == "__main__":
    sys.exit(main())
