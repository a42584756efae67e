#!/usr/bin/env python3
"""What counting a kind-filtered search's candidates costs, before and after a change, in one run.

    python3 bench/kinds_count.py --against /path/to/other/checkout     # 1,200 and 10,000 items
    python3 bench/kinds_count.py --sizes 1200 --rounds 40

Builds one store per size (one repository, items alternating note / finding / decision / note,
every claim holding the two query words), then times, interleaved round by round, a search
with ``kinds: ["note"]`` and the same search without a kind, each as the first search after a
write (the store's memo of counts emptied), through this checkout's wctx.py and
(with --against) another checkout's, each in its own process on the same store. Prints the median
per search, the filtered search's ratio to the unfiltered one of the same checkout (the noise of
a shared machine cancels in a ratio), and the candidate count each reports. Benchmarks only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

WORKER = r"""
import json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
import wctx
store = wctx.open_store(sys.argv[2])
cwd, rounds = sys.argv[3], int(sys.argv[4])
out = {}
for name, kinds in (("note", ["note"]), ("any", None)):
    wctx.search(store, "queue backpressure", cwd=cwd, kinds=kinds)  # warm
    times = []
    for _ in range(rounds):
        store._memo.clear()  # as after a write: what the store's memo holds is counted again
        started = time.perf_counter()
        res = wctx.search(store, "queue backpressure", cwd=cwd, kinds=kinds)
        times.append((time.perf_counter() - started) * 1000.0)
    out[name] = {"ms": statistics.median(times), "candidates": res["candidates"], "exact": res["candidates_exact"]}
print(json.dumps(out))
"""


def build(size, root):
    sys.path.insert(0, HERE)
    import wctx

    repo = os.path.join(root, "svc")
    os.makedirs(repo)
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@b")  # fmt: skip
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "i"]):
        subprocess.run(["git", "-C", repo] + args, check=True, env=env)
    home = os.path.join(root, "home")
    store = wctx.open_store(home)
    wctx.register_repo(store, repo, workspace="w")
    kinds = ["note", "finding", "decision", "note"]
    items = [{"kind": kinds[n % 4], "claim": "queue backpressure seen under load %d" % n, "repo": "svc"}
             for n in range(size)]  # fmt: skip
    for start in range(0, size, 100):
        wctx.capture(store, items[start : start + 100], cwd=repo)
    store.close()
    return home, repo


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1200,10000")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--against", help="another checkout whose wctx.py is timed in the same turns")
    args = parser.parse_args()
    trees = [("this", HERE)] + ([("against", os.path.abspath(args.against))] if args.against else [])
    report = {}
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as root:
            home, repo = build(size, root)
            for name, tree in trees:
                proc = subprocess.run([sys.executable, "-c", WORKER, tree, home, repo, str(args.rounds)],
                                      capture_output=True, text=True, check=True)  # fmt: skip
                got = json.loads(proc.stdout)
                got["ratio"] = got["note"]["ms"] / got["any"]["ms"]
                report["%d %s" % (size, name)] = got
                print("%6d items  %-8s note %.2f ms (%s%d candidates)  any %.2f ms  note/any %.2f" % (
                    size, name, got["note"]["ms"], "" if got["note"]["exact"] else "about ",
                    got["note"]["candidates"], got["any"]["ms"], got["ratio"]))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
