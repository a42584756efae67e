#!/usr/bin/env python3
"""What a sync costs when little or nothing changed, at the size of a team's memory.

    python3 bench/sync_changes.py --wctx before=/tmp/base/wctx.py --wctx after=wctx.py
    python3 bench/sync_changes.py --items 1000000 --sessions 10000 --repeat 3

For each wctx given, in the same run and in turn: machine A imports --items findings in
--sessions sessions (`wctx import-evidence`, its own memory) and syncs them to a local bare
remote (seconds and peak RSS: the exporting side); machine B, a newcomer, syncs them all (the
same). Then, --repeat times each,
interleaved with git's own no-op fetch of the same branch into an up-to-date repository:
  no-op     B syncs with nothing new on either side;
  push      A captures 10 findings in a new session and syncs (the pushing side);
  pull      B syncs that one file (the pulling side);
  own       B captures one finding of its own and syncs (a store whose memory is mostly a
            teammate's, pushing its own change).
wctx runs as an installed command runs it: the module imported with its bytecode cached (each
wctx.py is copied into a directory of its own first), in a new process with WCTX_HOME set;
`wctx --version` launched the same way is its start-up. Peak RSS comes from os.wait4. Times are
wall-clock medians on a shared machine: read them against git's fetch and the start-up measured
in the same run. Benchmarks only: no test times anything.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from sync import ENV, git, make_repo, write_corpus  # noqa: E402

MODULE_MAIN = "import sys; sys.path.insert(0, %r); import wctx; sys.exit(wctx.main(sys.argv[1:]))"


def launch(cmd, env, cwd):
    """(seconds, peak RSS in MB, stdout) of one process (os.wait4, before Popen can reap it)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status
    if proc.returncode != 0:
        raise SystemExit("%s failed: %s" % (cmd[3:], err.decode(errors="replace")))
    return seconds, usage.ru_maxrss / 1024, out


class Machine:
    def __init__(self, base, name, module_dir, origin):
        self.dir = os.path.join(base, name)
        self.repo = os.path.join(self.dir, "src", "bench-sdk")
        os.makedirs(os.path.dirname(self.repo))
        git(base, "clone", "-q", origin, self.repo)
        self.env = dict(ENV, HOME=self.dir, WCTX_HOME=os.path.join(self.dir, "wctx"))
        # An installed wctx runs from its cached bytecode: without it every launch compiles the
        # whole module first (~0.15 s), which no user's command pays.
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.module_dir = module_dir
        self.run("repo", "add", self.repo, "--name", "bench-sdk", "--workspace", "bench")

    def run(self, *args):
        cmd = [sys.executable, "-c", MODULE_MAIN % self.module_dir, *args]
        return launch(cmd, self.env, self.repo)

    def sync(self, *args):
        seconds, rss, out = self.run("sync", "--json", *args)
        return seconds, rss, json.loads(out)


def one_version(label, script, args, base):
    module_dir = os.path.join(base, "module")
    os.makedirs(module_dir)
    shutil.copy(script, os.path.join(module_dir, "wctx.py"))
    origin, head = make_repo(base)
    root = git(origin, "rev-list", "--max-parents=0", "HEAD").decode().strip()
    corpus = os.path.join(base, "corpus")
    write_corpus(corpus, "bench-sdk", root, head, args.items, args.sessions)
    remote = os.path.join(base, "team.git")
    git(base, "init", "-q", "--bare", remote)
    a = Machine(base, "a", module_dir, origin)
    b = Machine(base, "b", module_dir, origin)
    result = {"wctx": label}
    result["import_s"] = round(a.run("import-evidence", corpus)[0], 2)
    seconds, rss, _ = a.sync("--remote", remote)
    result["first_sync"] = {"s": round(seconds, 2), "rss_mb": round(rss)}  # the exporting side
    seconds, rss, report = b.sync("--remote", remote)
    result["newcomer"] = {
        "s": round(seconds, 2),
        "rss_mb": round(rss),
        "items": report["imported"]["evidence"],
    }
    follower = os.path.join(base, "follower.git")
    git(base, "init", "-q", "--bare", follower)
    git(follower, "fetch", "-q", remote, "+refs/heads/*:refs/heads/*")
    rounds = {k: [] for k in ("git_noop_fetch", "version", "noop", "push", "pull", "own")}
    for i in range(args.repeat):
        start = time.perf_counter()
        git(follower, "fetch", "-q", remote, "+refs/heads/*:refs/heads/*")
        rounds["git_noop_fetch"].append(time.perf_counter() - start)
        rounds["version"].append(b.run("--version")[0])
        seconds, _, report = b.sync()
        assert report["noop"], report
        rounds["noop"].append(seconds)
        findings = []
        for k in range(10):
            findings += ["--finding", "round %d finding %d about the retry budget" % (i, k)]
        a.run("capture", "--summary", "round %d" % i, *findings)
        seconds, _, report = a.sync()
        assert report["exported"]["files"] >= 1, report
        rounds["push"].append(seconds)
        seconds, _, report = b.sync()
        assert report["imported"]["evidence"] == 10, report
        rounds["pull"].append(seconds)
        b.run("capture", "--finding", "b's own finding %d" % i)
        seconds, _, report = b.sync()
        assert report["pushed"], report
        rounds["own"].append(seconds)
    git(follower, "fetch", "-q", remote, "+refs/heads/*:refs/heads/*")
    for key, values in rounds.items():
        result[key] = round(statistics.median(values), 3)
    return result


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wctx", action="append", default=[], help="LABEL=PATH of a wctx.py (repeatable)")
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--sessions", type=int, default=1_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "wctx.py")
    runs = [w.split("=", 1) for w in args.wctx] or [["this", here]]
    results = []
    for label, script in runs:
        base = tempfile.mkdtemp(prefix="wctx-changes-bench-")
        try:
            results.append(one_version(label, os.path.abspath(script), args, base))
        finally:
            shutil.rmtree(base, ignore_errors=True)
        print(json.dumps(results[-1]), file=sys.stderr)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print("%d items in %d sessions; medians of %d" % (args.items, args.sessions, args.repeat))
    print()
    print("| wctx | exporter's first sync s (peak RSS MB) | newcomer s (peak RSS MB) | git no-op fetch s | `--version` s | no-op sync s | "
          "capture 10 + sync s | next machine's sync (10 items) s | own capture + sync s |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in results:
        print("| %s | %.1f (%d) | %.1f (%d) | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |" % (
            r["wctx"], r["first_sync"]["s"], r["first_sync"]["rss_mb"], r["newcomer"]["s"], r["newcomer"]["rss_mb"], r["git_noop_fetch"], r["version"],
            r["noop"], r["push"], r["pull"], r["own"]))  # fmt: skip


if __name__ == "__main__":
    main()
