#!/usr/bin/env python3
"""Cost of secret redaction on ordinary text, against the rules as they were at a git revision.

    python3 bench/redaction.py                          # this checkout's parts/ and wctx.py, vs main
    python3 bench/redaction.py --baseline REV --runs 5 FILE ...

The text is the FILEs given (default: this checkout's parts/core/**/*.py, source code being the
worst case: it is full of "key", "token", "config" and "password"), cut into chunks of five lines,
three times over, as an import would see commands and summaries. Each run starts with the
fragment memos empty (the rules compiled once before). The two modules are timed in turn, run by run, in this one process; the
figure is the best run of each, and their ratio. Both must give the same output on every chunk
but those their rules differ on, which are counted.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
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


def at_revision(rev, folder):
    path = os.path.join(folder, "wctx_at_baseline.py")
    with open(path, "wb") as fh:
        fh.write(subprocess.run(["git", "-C", ROOT, "show", "%s:wctx.py" % rev], check=True,
                                capture_output=True).stdout)  # fmt: skip
    return load(path, "wctx_at_baseline")


def timed(module, chunks):
    # The run memos start empty (the compiled rules stay: compiling is start-up, not redaction).
    module.FRAGMENT_FREE_RUNS.clear()
    t0 = time.perf_counter()
    out = [module.redact_secrets(c) for c in chunks]
    return time.perf_counter() - t0, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*")
    parser.add_argument("--baseline", default="main")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    files = args.files or sorted(glob.glob(os.path.join(ROOT, "parts", "core", "**", "*.py"), recursive=True))
    lines = []
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines.extend(fh.read().splitlines())
    lines *= 3
    chunks = ["\n".join(lines[i : i + 5]) for i in range(0, len(lines), 5)]
    with tempfile.TemporaryDirectory() as tmp:
        base = at_revision(args.baseline, tmp)
        here = load(os.path.join(ROOT, "wctx.py"), "wctx_here")
        best = {"here": float("inf"), "baseline": float("inf")}
        outputs = {}
        for _ in range(args.runs):
            for name, module in (("here", here), ("baseline", base)):
                seconds, out = timed(module, chunks)
                best[name] = min(best[name], seconds)
                outputs[name] = out
    differ = sum(1 for a, b in zip(outputs["here"], outputs["baseline"]) if a != b)
    result = {
        "chunks": len(chunks),
        "characters": sum(map(len, chunks)),
        "baseline": args.baseline,
        "here_ms": round(best["here"] * 1000, 1),
        "baseline_ms": round(best["baseline"] * 1000, 1),
        "ratio": round(best["here"] / best["baseline"], 2),
        "chunks_redacted_differently": differ,
        "python": sys.version.split()[0],
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(
            "%(chunks)d chunks (%(characters)d characters): %(here_ms)s ms here, %(baseline_ms)s ms at "
            "%(baseline)s (%(ratio)sx); %(chunks_redacted_differently)d chunks redacted differently" % result
        )


if __name__ == "__main__":
    main()
