#!/usr/bin/env python3
"""A working tree armed against readers: wctx here against wctx at a git revision, as a user runs it.

    python3 bench/hostile_worktree.py                       # against main
    python3 bench/hostile_worktree.py --baseline REV --cap-mb 1500 --timeout 30 --json

Builds a small registered repository with one captured item, then arms its working tree in two
ways, one at a time: a tracked empty file replaced by a FIFO, and a tracked 9-byte file replaced
by a symlink to /dev/zero (9 bytes too: its size alone cannot tell). In each, `wctx brief` and a
vague `wctx search` run as processes under an address-space cap (ulimit -v) and a time limit,
with the wctx.py of this checkout and the one at the baseline revision. Reported per run: exit
status (124: killed at the time limit), wall seconds and peak RSS (from the kernel's rusage).
Linux/POSIX only.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "-c", "commit.gpgsign=false"]


def run(argv, cwd, env, cap_mb, timeout):
    """One process under the cap; its own peak RSS (os.wait4's rusage), not the largest so far."""

    def limit():
        cap = cap_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err, preexec_fn=limit
        )
        killed = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - t0 > timeout:
                proc.kill()
                killed = True
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.01)
        seconds = time.perf_counter() - t0
        proc.returncode = 0  # reaped here; keep Popen from waiting again
        err.seek(0)
        text = err.read().decode("utf-8", "replace").strip()
    code = 124 if killed else (os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status))
    return {
        "exit": code,
        "seconds": round(seconds, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "error": text.splitlines()[-1][:120] if code not in (0, 124) and text else None,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main")
    parser.add_argument("--cap-mb", type=int, default=1500)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="wctx-hostile-tree-")
    try:
        base = os.path.join(tmp, "wctx_baseline.py")
        with open(base, "wb") as fh:
            fh.write(subprocess.run(["git", "-C", ROOT, "show", "%s:wctx.py" % args.baseline], check=True,
                                    capture_output=True).stdout)  # fmt: skip
        repo = os.path.join(tmp, "repo")
        os.makedirs(repo)
        subprocess.run(GIT + ["init", "-q", repo], check=True)
        for rel, text in (("a.py", "def f():\n    return 1\n"), ("empty.txt", ""), ("nine.txt", "123456789")):
            with open(os.path.join(repo, rel), "w") as fh:
                fh.write(text)
        subprocess.run(GIT + ["-C", repo, "add", "-A"], check=True)
        subprocess.run(GIT + ["-C", repo, "commit", "-qm", "init"], check=True)
        env = dict(os.environ, WCTX_HOME=os.path.join(tmp, "home"))
        here = os.path.join(ROOT, "wctx.py")
        for argv in (["repo", "add", repo], ["capture", "--finding", "f returns one", "--file", "a.py#f"]):
            subprocess.run([sys.executable, here] + argv, cwd=repo, env=env, check=True, capture_output=True)
        results = []
        for case in ("fifo", "symlink to /dev/zero"):
            subprocess.run(GIT + ["-C", repo, "checkout", "-q", "--", "."], check=True)
            if case == "fifo":
                os.remove(os.path.join(repo, "empty.txt"))
                os.mkfifo(os.path.join(repo, "empty.txt"))
            else:
                os.remove(os.path.join(repo, "nine.txt"))
                os.symlink("/dev/zero", os.path.join(repo, "nine.txt"))
            time.sleep(1.1)  # past the index's racy-clean second: the check must look at the file
            for name, script in (("baseline", base), ("here", here)):
                for command in (["brief"], ["search", "has anyone looked at this?"]):
                    result = run([sys.executable, script] + command, repo, env, args.cap_mb, args.timeout)
                    result.update(case=case, wctx=name, command=" ".join(command))
                    results.append(result)
            for rel in ("empty.txt", "nine.txt"):
                if not os.path.isfile(os.path.join(repo, rel)) or os.path.islink(os.path.join(repo, rel)):
                    os.remove(os.path.join(repo, rel))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps({"baseline": args.baseline, "cap_mb": args.cap_mb, "runs": results}, indent=2))
        return
    for r in results:
        print("%-22s %-8s %-34s exit %3d  %6.2f s  peak %s MB%s" % (
            r["case"], r["wctx"], r["command"], r["exit"], r["seconds"], r["peak_rss_mb"],
            "  (%s)" % r["error"] if r["error"] else ""))  # fmt: skip


if __name__ == "__main__":
    main()
