#!/usr/bin/env python3
"""Cost of bounding every git call (a deadline and an output cap, read through a selector), against
run_git as it was at a git revision.

    python3 bench/git_bounds.py                      # this checkout's wctx.py, vs main
    python3 bench/git_bounds.py --baseline REV --runs 7 --calls 100

In one temporary repository with a 4 MiB file, both modules run the same git calls in turn, run
by run, in this one process: ``rev-parse HEAD`` (a small answer) and ``cat-file --batch`` of the
large blob (a large one). The figure is the best run of each, and their ratio.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=60)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        base = os.path.join(folder, "wctx_at_baseline.py")
        with open(base, "wb") as fh:
            fh.write(subprocess.run(["git", "-C", ROOT, "show", "%s:wctx.py" % args.baseline],
                                    check=True, capture_output=True).stdout)  # fmt: skip
        modules = {
            "here": load(os.path.join(ROOT, "wctx.py"), "wctx_here"),
            "baseline": load(base, "wctx_base"),
        }
        repo = os.path.join(folder, "repo")
        os.makedirs(repo)
        with open(os.path.join(repo, "big.bin"), "wb") as fh:
            fh.write(os.urandom(4 << 20))
        for argv in (
            ["init", "-q"],
            ["add", "."],
            ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "b"],
        ):
            subprocess.run(["git", "-C", repo, *argv], check=True)
        cases = {
            "rev-parse HEAD": dict(args=["rev-parse", "HEAD"]),
            "cat-file --batch, 4 MiB": dict(args=["cat-file", "--batch"], input_bytes=b"HEAD:big.bin\n"),
        }
        for label, call in cases.items():
            best = {}
            for _ in range(args.runs):
                for name, module in modules.items():
                    t0 = time.perf_counter()
                    for _ in range(args.calls):
                        module.run_git(repo, **call)
                    best[name] = min(best.get(name, 1e9), time.perf_counter() - t0)
            print(
                "%s x%d: %.1f ms here, %.1f ms at %s (%.2fx)"
                % (label, args.calls, best["here"] * 1e3, best["baseline"] * 1e3, args.baseline,
                   best["here"] / best["baseline"])
            )  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
