#!/usr/bin/env python3
"""What a person fetches from the team's memory: the workspaces they are in, or everything.

    python3 bench/sync_workspaces.py --wctx before=/tmp/base/wctx.py --wctx after=wctx.py
    python3 bench/sync_workspaces.py --workspaces 5 --machines 10 --sessions 20 --per-session 10

For each wctx given, the same team in the same run: --workspaces workspaces of one small real
repository each, --machines machines (machine m works in workspace m mod --workspaces, with that
one repository registered), each recording --sessions sessions of --per-session findings with
`wctx capture` and syncing to a local bare remote in turn. Then two newcomers sync for the first
time: one with a single workspace's repository registered, one with all of them. Reported per
newcomer: the bytes of its private sync repository (`du -sb` of its objects: what git fetched),
the items it imported, its sync's wall seconds. Bytes and items are exact; seconds are one run on a
shared machine. Benchmarks only: no test times anything.
"""

import argparse
import json
import os
import shutil
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


def du(path):
    total = 0
    for root, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


class Person:
    def __init__(self, base, name, script, repos, origins):
        self.dir = os.path.join(base, name)
        self.env = dict(ENV, HOME=self.dir, WCTX_HOME=os.path.join(self.dir, "wctx"))
        self.script = script
        self.repos = {}
        for ws in repos:
            path = os.path.join(self.dir, "src", ws)
            git(base, "clone", "-q", origins[ws], path)
            self.run("repo", "add", path, "--name", ws, "--workspace", ws)
            self.repos[ws] = path

    def run(self, *args):
        cwd = next(iter(self.repos.values()), self.dir)  # in a checkout: what capture is about
        proc = subprocess.run([sys.executable, self.script, *args], env=self.env, cwd=cwd,
                              capture_output=True, text=True)  # fmt: skip
        if proc.returncode != 0:
            raise SystemExit("wctx %s failed: %s" % (args, proc.stderr))
        return proc.stdout


def team(base, script, args):
    origins = {}
    for w in range(args.workspaces):
        ws = "product%d" % w
        origin = os.path.join(base, "origins", ws)
        os.makedirs(origin)
        git(origin, "init", "-q")
        with open(os.path.join(origin, "handler.py"), "w") as fh:
            fh.write("def handle_%d(event):\n    return event\n" % w)
        git(origin, "add", "-A")
        git(origin, "commit", "-q", "-m", "initial")
        origins[ws] = origin
    remote = os.path.join(base, "team.git")
    git(base, "init", "-q", "--bare", remote)
    names = sorted(origins)
    for m in range(args.machines):
        ws = names[m % len(names)]
        person = Person(base, "m%02d" % m, script, [ws], origins)
        for s in range(args.sessions):
            findings = []
            for i in range(args.per_session):
                findings += ["--finding", "machine %d session %d finding %d about %s retries and "
                             "timeouts in the upload path" % (m, s, i, ws)]  # fmt: skip
            person.run("capture", "--summary", "session %d" % s, *findings)
        person.run("sync", "--remote", remote)
    return remote, origins


def newcomer(base, name, script, repos, origins, remote):
    person = Person(base, name, script, repos, origins)
    start = time.perf_counter()
    report = json.loads(person.run("sync", "--remote", remote, "--json"))
    seconds = time.perf_counter() - start
    objects = os.path.join(person.env["WCTX_HOME"], "sync", "memory.git", "objects")
    return {"bytes": du(objects), "items": report["imported"]["evidence"], "s": round(seconds, 2)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wctx", action="append", default=[], help="LABEL=PATH of a wctx.py (repeatable)")
    ap.add_argument("--workspaces", type=int, default=5)
    ap.add_argument("--machines", type=int, default=10)
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--per-session", type=int, default=10)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "wctx.py")
    runs = [w.split("=", 1) for w in args.wctx] or [["this", here]]
    results = []
    for label, script in runs:
        base = tempfile.mkdtemp(prefix="wctx-ws-bench-")
        try:
            remote, origins = team(base, os.path.abspath(script), args)
            names = sorted(origins)
            one = newcomer(base, "new-one", script, names[:1], origins, remote)
            every = newcomer(base, "new-all", script, names, origins, remote)
            results.append({"wctx": label, "one workspace": one, "every workspace": every,
                            "remote bytes": du(os.path.join(remote, "objects"))})  # fmt: skip
        finally:
            shutil.rmtree(base, ignore_errors=True)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print("| wctx | newcomer in | fetched bytes | items imported | seconds |")
    print("| --- | --- | ---: | ---: | ---: |")
    for r in results:
        for who in ("one workspace", "every workspace"):
            x = r[who]
            print("| %s | %s of %d | %s | %s | %.2f |" % (r["wctx"], who, args.workspaces,
                  format(x["bytes"], ","), format(x["items"], ","), x["s"]))  # fmt: skip


if __name__ == "__main__":
    main()
