#!/usr/bin/env python3
"""Fifty people syncing in the same minute: how many syncs go through, in how many tries.

    python3 bench/sync_burst.py --wctx before=/tmp/base/wctx.py --wctx after=wctx.py
    python3 bench/sync_burst.py --machines 50 --workspaces 5 --rounds 3

For each wctx given, the same team in the same run: --machines machines in --workspaces
workspaces (machine m works in workspace m mod --workspaces, one small repository each), each with
its own WCTX_HOME, and a local bare remote they all sync with once first, one after another. Then
--rounds bursts: every machine captures one finding, and all of them start `wctx sync --json` at
the same moment (one process each, launched together). Reported per burst: syncs that succeeded,
those that failed (and git's or wctx's last line), the most tries a successful sync took, the
median and slowest sync's wall seconds, and whether every finding of the burst reached the
remote. A sync whose push is refused (another machine's push moved the branch first) fetches,
rebuilds and tries again, as wctx does. Benchmarks only: no test times anything.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ENV = dict(
    os.environ,
    GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.com",
    GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.com",
    GIT_CONFIG_NOSYSTEM="1", WCTX_AUTHOR="bench <bench@example.com>",
)  # fmt: skip


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True).stdout


def team(base, script, args):
    origins = {}
    for w in range(args.workspaces):
        ws = "product%d" % w
        origin = os.path.join(base, "origins", ws)
        os.makedirs(origin)
        git(origin, "init", "-q")
        with open(os.path.join(origin, "handler_%d.py" % w), "w") as fh:
            fh.write("def handle_%d(event):\n    return event\n" % w)
        git(origin, "add", "-A")
        git(origin, "commit", "-q", "-m", "initial %s" % ws)
        origins[ws] = origin
    remote = os.path.join(base, "team.git")
    git(base, "init", "-q", "--bare", remote)
    names = sorted(origins)
    machines = []
    for m in range(args.machines):
        ws = names[m % len(names)]
        home = os.path.join(base, "m%02d" % m)
        repo = os.path.join(home, "src", ws)
        git(base, "clone", "-q", origins[ws], repo)
        env = dict(ENV, HOME=home, WCTX_HOME=os.path.join(home, "wctx"))
        machine = {"env": env, "repo": repo, "ws": ws, "script": script}
        wctx(machine, "repo", "add", repo, "--name", ws, "--workspace", ws)
        wctx(machine, "capture", "--finding", "machine %d's first finding about %s" % (m, ws))
        wctx(machine, "sync", "--remote", remote)
        machines.append(machine)
    return remote, machines


def wctx(machine, *args):
    proc = subprocess.run([sys.executable, machine["script"], *args], env=machine["env"], cwd=machine["repo"],
                          capture_output=True, text=True)  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit("wctx %s failed: %s" % (args, proc.stderr))
    return proc.stdout


def burst(machines, round_no):
    for i, machine in enumerate(machines):
        wctx(machine, "capture", "--finding", "burst %d finding of machine %d" % (round_no, i))
    procs = []
    for machine in machines:  # all started before any is waited for
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, machine["script"], "sync", "--json"], env=machine["env"],
                                cwd=machine["repo"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        procs.append((start, proc))
    results = []
    for start, proc in procs:
        out, err = proc.communicate()
        seconds = time.perf_counter() - start
        if proc.returncode == 0:
            results.append({"ok": True, "s": seconds, "tries": json.loads(out)["tries"]})
        else:
            results.append({"ok": False, "s": seconds, "error": (err.strip().splitlines() or ["?"])[-1]})
    return results


def on_remote(remote, text):
    """How many of the remote's files (every branch) hold ``text``."""
    found = 0
    for ref in git(remote, "for-each-ref", "--format=%(refname)", "refs/heads/").decode().split():
        out = subprocess.run(["git", "grep", "-c", "-F", text, ref], cwd=remote, env=ENV,
                             capture_output=True, text=True).stdout  # fmt: skip
        found += sum(int(line.rsplit(":", 1)[1]) for line in out.splitlines() if line)
    return found


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wctx", action="append", default=[], help="LABEL=PATH of a wctx.py (repeatable)")
    ap.add_argument("--machines", type=int, default=50)
    ap.add_argument("--workspaces", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "wctx.py")
    runs = [w.split("=", 1) for w in args.wctx] or [["this", here]]
    rows = []
    for label, script in runs:
        base = tempfile.mkdtemp(prefix="wctx-burst-bench-")
        try:
            remote, machines = team(base, os.path.abspath(script), args)
            for r in range(args.rounds):
                results = burst(machines, r)
                ok = [x for x in results if x["ok"]]
                errors = sorted({x["error"] for x in results if not x["ok"]})
                rows.append({
                    "wctx": label, "burst": r + 1, "ok": len(ok), "failed": len(results) - len(ok),
                    "most_tries": max((x["tries"] for x in ok), default=0),
                    "median_s": round(statistics.median(x["s"] for x in results), 2),
                    "slowest_s": round(max(x["s"] for x in results), 2),
                    "on_remote": on_remote(remote, "burst %d finding of machine" % r),
                    "errors": errors,
                })  # fmt: skip
                print(json.dumps(rows[-1]), file=sys.stderr)
        finally:
            shutil.rmtree(base, ignore_errors=True)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print("%d machines in %d workspaces, all syncing at once" % (args.machines, args.workspaces))
    print()
    print(
        "| wctx | burst | syncs through | failed | most tries | median s | slowest s | findings on the remote |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print("| %s | %d | %d | %d | %d | %.2f | %.2f | %d of %d |" % (
            r["wctx"], r["burst"], r["ok"], r["failed"], r["most_tries"], r["median_s"], r["slowest_s"],
            r["on_remote"], args.machines))  # fmt: skip
    for r in rows:
        for e in r["errors"]:
            print("%s burst %d: %s" % (r["wctx"], r["burst"], e))


if __name__ == "__main__":
    main()
