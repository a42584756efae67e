#!/usr/bin/env python3
"""Start-up and size budget of the single-file wctx.pyz.

    python3 bench/startup.py              # builds a fresh archive into a temp dir, 40 runs each
    python3 bench/startup.py --runs 100 --json
    python3 bench/startup.py --pyz dist/wctx.pyz --check   # exit 1 when over a budget

Measured in the same run, interleaved so that machine noise hits every command alike:
  baseline   python -c "import sqlite3"
  pyz        python wctx.pyz --version   (compiled-module cache warm: the usual case)
  pyz-cold   python wctx.pyz --version   with WCTX_PYZ_CACHE=0 (compiles wctx.py on every run)
  source     python wctx.py --version    (a script run by path: Python compiles it on every start)
  pyz-cmd    python wctx.pyz repo list --json   (a real command: full CLI parser, store opened)
Budgets: median(pyz) <= 1.2 x median(baseline) in wall time; archive <= 250 kB (250,000 bytes;
200 kB until #30, see bench/RESULTS.md).
The ratios of the fastest runs and of the CPU time (user + system, from wait4) are printed too:
on a busy machine they are the steadier figures.

The interpreter is this script's own (sys.executable), never a shim such as pyenv's `python3`
wrapper, which would add ~100 ms of shell to every command and hide the difference.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RATIO_BUDGET = 1.2
SIZE_BUDGET = 250_000


def run_once(argv, env):
    """(wall seconds, CPU seconds user+system) of one run of argv."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status
    if proc.returncode != 0:
        raise SystemExit(f"benchmark command failed (exit {proc.returncode}): {' '.join(argv)}")
    return elapsed, usage.ru_utime + usage.ru_stime


def measure(commands, runs):
    """({label: [wall seconds]}, {label: [CPU seconds]}) with the commands interleaved run by run."""
    wall = {label: [] for label in commands}
    cpu = {label: [] for label in commands}
    for argv, env in commands.values():  # one untimed warm-up each (page cache, pyz cache)
        run_once(argv, env)
    for _ in range(runs):
        for label, (argv, env) in commands.items():
            seconds, cpu_seconds = run_once(argv, env)
            wall[label].append(seconds)
            cpu[label].append(cpu_seconds)
    return wall, cpu


def build_archive(directory):
    target = os.path.join(directory, "wctx.pyz")
    subprocess.run(
        [sys.executable, os.path.join(ROOT, "zipapp", "build.py"), "-o", target],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return target


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40, help="timed runs per command (default 40)")
    parser.add_argument("--pyz", help="archive to measure (default: build a fresh one from this checkout)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 when a budget is exceeded")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="wctx-bench-") as tmp:
        pyz = os.path.abspath(args.pyz) if args.pyz else build_archive(tmp)
        env = dict(os.environ)
        env["WCTX_HOME"] = os.path.join(tmp, "home")
        warm = dict(env, WCTX_PYZ_CACHE=os.path.join(tmp, "pyz-cache"))
        cold = dict(env, WCTX_PYZ_CACHE="0")
        py = sys.executable
        commands = {
            "baseline": ([py, "-c", "import sqlite3"], env),
            "pyz": ([py, pyz, "--version"], warm),
            "pyz-cold": ([py, pyz, "--version"], cold),
            "source": ([py, os.path.join(ROOT, "wctx.py"), "--version"], env),
            "pyz-cmd": ([py, pyz, "repo", "list", "--json"], warm),
        }
        timings, cpu_timings = measure(commands, args.runs)
        size = os.path.getsize(pyz)

    medians = {label: statistics.median(values) for label, values in timings.items()}
    minimums = {label: min(values) for label, values in timings.items()}
    cpu = {label: statistics.median(values) for label, values in cpu_timings.items()}
    ratio = medians["pyz"] / medians["baseline"]
    report = {
        "python": sys.version.split()[0],
        "executable": py,
        "runs": args.runs,
        "median_ms": {label: round(value * 1000, 2) for label, value in medians.items()},
        "min_ms": {label: round(value * 1000, 2) for label, value in minimums.items()},
        "ratio_pyz_to_baseline": round(ratio, 3),
        "ratio_pyz_to_baseline_min": round(minimums["pyz"] / minimums["baseline"], 3),
        "cpu_median_ms": {label: round(value * 1000, 2) for label, value in cpu.items()},
        "cpu_ratio_pyz_to_baseline": round(cpu["pyz"] / cpu["baseline"], 3),
        "ratio_pyz_cold_to_baseline": round(medians["pyz-cold"] / medians["baseline"], 3),
        "ratio_budget": RATIO_BUDGET,
        "archive_bytes": size,
        "archive_budget_bytes": SIZE_BUDGET,
        "within_budget": {"startup": ratio <= RATIO_BUDGET, "size": size <= SIZE_BUDGET},
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"python {report['python']}  ({py}), {args.runs} runs each")
        print(f"  {'':<9} {'wall median':>11} {'wall min':>9} {'CPU median':>11}")
        for label, (cmd, _) in commands.items():
            shown = " ".join(os.path.basename(part) if os.path.isabs(part) else part for part in cmd)
            print(
                f"  {label:<9} {medians[label] * 1000:8.1f} ms {minimums[label] * 1000:6.1f} ms"
                f" {cpu[label] * 1000:8.1f} ms   {shown}"
            )
        verdict = "ok" if report["within_budget"]["startup"] else "OVER BUDGET"
        print(f"start-up ratio pyz/baseline {ratio:.2f}x (budget {RATIO_BUDGET:.1f}x): {verdict}")
        print(
            f"  fastest runs only: {report['ratio_pyz_to_baseline_min']:.2f}x;  CPU time: {report['cpu_ratio_pyz_to_baseline']:.2f}x"
        )
        print(f"  without the compiled-module cache: {report['ratio_pyz_cold_to_baseline']:.2f}x")
        verdict = "ok" if report["within_budget"]["size"] else "OVER BUDGET"
        print(
            f"archive size {size} bytes = {size / 1000:.1f} kB (budget {SIZE_BUDGET // 1000} kB): {verdict}"
        )
    if args.check and not all(report["within_budget"].values()):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
