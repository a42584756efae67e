#!/usr/bin/env python3
"""How long `wctx verify` takes on real histories, against the floor, in one run.

For each history span (``--span DAYS``, repeatable: the cost curve), in each repository given:

1. T1 is the repository's HEAD; T0 the first-parent commit of about SPAN days before it. A
   temporary ``git worktree`` is checked out at T0 (the repository itself is left alone).
2. Items are captured through wctx's real capture path (``wctx.capture`` into a temporary
   ``WCTX_HOME``, every worktree registered in one workspace): ``--items`` in all, shared evenly
   by the repositories, each citing one real ``path#symbol`` (a third of them a second one from
   the same file). Symbols are found by the benchmark's own parsers (``ast``, tree-sitter through
   bench/freshness.py's Oracle), never by wctx.
3. Every worktree is moved to T1, then, in this order, each timed:
   - floor, cold: ``git diff --name-only T0 T1`` per repository plus reading every cited file;
   - ``wctx verify`` over the whole workspace, text output then ``--json``, each cold (a new
     process, the first after the move: the store as capture left it, restored from a copy before
     each) and warm (again), peak memory and CPU (its own and its git's) from wait4. wctx runs as
     installed: ``python -m wctx`` with its compiled module cached (PYTHONDONTWRITEBYTECODE is
     dropped from the environment, and one ``--version`` run compiles it first);
   - floor, warm;
   - ``wctx verify ID`` of one item, warm (median of 5);
   - MCP freshness audit of 10 ids (``workspace_overview`` with ``ids``; ``verify_freshness`` before) through ``wctx_mcp.py`` (median of 5, after one call).
   A verify that passes ``--timeout`` is stopped and reported as unfinished.

Usage::

    python3 bench/freshness_verify.py --repo PATH [--repo PATH ...] [--span 365] [--items 10000]
        [--wctx PATH/wctx.py] [--timeout 600] [--json OUT]

``--wctx`` times another build of wctx (say, an older commit's ``wctx.py`` written to a
directory with its ``wctx_mcp.py``): capture and verify both use it. ``--compare REPORT``
counts the items whose cold verdict and reasons are the same as in another run's ``--json``
report (the same repositories, span and seed: the same items), for a before/after.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import importlib.util
import json
import os
import random
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import freshness as symbols_bench  # noqa: E402  (bench/freshness.py: the independent parsers)

GIT_SAFE = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"]
GOALS = {
    "verify_cold_s": 5.0,
    "verify_warm_s": 1.0,
    "verify_one_warm_ms": 100.0,
    "mcp_verify_10_warm_ms": 100.0,
}


def git(repo, *args, input_bytes=None):
    proc = subprocess.run(
        ["git", *GIT_SAFE, "-C", repo, *args], input=input_bytes, capture_output=True, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(
            "git %s failed: %s" % (" ".join(args), proc.stderr.decode("utf-8", "replace").strip())
        )
    return proc.stdout


def commit_before(repo, days):
    """(T0, T1): HEAD and the first-parent commit of ``days`` before HEAD's commit date."""
    head = git(repo, "rev-parse", "HEAD").decode().strip()
    when = int(git(repo, "log", "-1", "--format=%ct", head).decode())
    cutoff = datetime.datetime.fromtimestamp(when - days * 86400, tz=datetime.timezone.utc).isoformat()
    t0 = git(repo, "rev-list", "-1", "--first-parent", "--before=" + cutoff, head).decode().strip()
    if not t0:
        raise SystemExit("%s has no commit %d days before HEAD" % (repo, days))
    return t0, head


def symbols_at(repo, commit, oracle):
    """{path: [symbol names defined once]} at ``commit`` for every file a parser knows."""
    blobs = symbols_bench.tree_blobs(repo, commit)
    paths = [p for p in blobs if symbols_bench.EXTENSIONS.get(os.path.splitext(p)[1].lower())]
    paths = [p for p in paths if oracle.available(symbols_bench.EXTENSIONS[os.path.splitext(p)[1].lower()])]
    contents = symbols_bench.read_blobs(repo, [blobs[p] for p in paths])
    found = {}
    for path in sorted(paths):
        source = contents.get(blobs[path], b"")
        if not source or len(source) > symbols_bench.MAX_FILE_BYTES:
            continue
        language = symbols_bench.EXTENSIONS[os.path.splitext(path)[1].lower()]
        texts, duplicates = oracle.symbols(language, source)
        names = sorted(n for n in texts if n not in duplicates)
        if names:
            found[path] = names
    return found


def pick_items(name, symbols, count, rng):
    """``count`` items of repository ``name``: [[path#symbol, ...]], one or two citations each."""
    pool = [(p, s) for p in sorted(symbols) for s in symbols[p]]
    items = []
    for _ in range(count):
        path, symbol = pool[rng.randrange(len(pool))]
        cited = ["%s#%s" % (path, symbol)]
        others = [s for s in symbols[path] if s != symbol]
        if others and rng.random() < 1 / 3:
            cited.append("%s#%s" % (path, others[rng.randrange(len(others))]))
        items.append(cited)
    items.sort()  # by file, as a session's findings cluster
    return items


def run_timed(argv, env, timeout, out_path):
    """(seconds or None when stopped at ``timeout``, peak RSS in MiB, exit code). The CPU seconds
    of the process and of the git processes it ran go to CPU[0]."""
    with open(out_path, "wb") as out:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE, env=env)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                elapsed = time.perf_counter() - started
                proc.returncode = os.waitstatus_to_exitcode(status)
                stderr = proc.stderr.read()
                if proc.returncode not in (0, 1) or b"Traceback (most recent call last)" in stderr:
                    raise SystemExit("%s failed: %s" % (" ".join(argv[-4:]), stderr.decode()[-2000:]))
                CPU[0] = usage.ru_utime + usage.ru_stime
                return elapsed, usage.ru_maxrss / 1024.0, proc.returncode
            if time.perf_counter() - started > timeout:
                proc.send_signal(signal.SIGINT)  # a profiled run writes its profile on the way out
                for _ in range(600):
                    pid, _, usage = os.wait4(proc.pid, os.WNOHANG)
                    if pid:
                        break
                    time.sleep(0.1)
                else:
                    proc.kill()
                    _, _, usage = os.wait4(proc.pid, 0)
                return None, usage.ru_maxrss / 1024.0, None
            time.sleep(0.01)


CPU = [0.0]


def _restore(home):
    """The store as capture left it (see run_span)."""
    shutil.rmtree(home)
    shutil.copytree(home + ".captured", home)


def floor(checkouts):
    """The rough floor: git diff --name-only T0 T1 per repository plus reading each cited file.
    Its CPU seconds (this process and git) go to CPU[0]."""
    cpu = time.process_time() + _children_cpu()
    started = time.perf_counter()
    for c in checkouts:
        subprocess.run(["git", *GIT_SAFE, "-C", c["worktree"], "diff", "--name-only", c["t0"], c["t1"]],
                       capture_output=True, check=True)  # fmt: skip
        for rel in c["cited_files"]:
            try:
                with open(os.path.join(c["worktree"], rel), "rb") as fh:
                    fh.read()
            except OSError:
                pass
    elapsed = time.perf_counter() - started
    CPU[0] = time.process_time() + _children_cpu() - cpu
    return elapsed


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class McpClient:
    def __init__(self, argv, env):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.next_id = 0
        self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "bench", "version": "0"}})  # fmt: skip
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.proc.stdin.flush()

    def call(self, method, params):
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}).encode()
        started = time.perf_counter()
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        elapsed = (time.perf_counter() - started) * 1000.0
        if "result" not in reply or reply["result"].get("isError"):
            raise SystemExit("MCP %s failed: %r" % (method, reply)[:500])
        return elapsed, reply["result"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def run_span(repos, days, args, wctx, say):
    rng = random.Random(args.seed)
    oracle = symbols_bench.Oracle()
    scratch = tempfile.mkdtemp(prefix="wctx-verify-bench-")
    # wctx runs from here: ``python -m wctx`` looks in the current directory first, and a
    # checkout of wctx (this one) would then be the build timed, whatever --wctx says.
    cwd = os.getcwd()
    os.chdir(scratch)
    home = os.path.join(scratch, "home")
    env = dict(os.environ, WCTX_HOME=home)
    checkouts = []
    store = None
    report = {"span_days": days, "repositories": []}
    try:
        store = wctx.open_store(home)
        per_repo = args.items // len(repos)
        for repo in repos:
            name = os.path.basename(os.path.normpath(repo))
            t0, t1 = commit_before(repo, days)
            worktree = os.path.join(scratch, name)
            git(repo, "worktree", "add", "--detach", "--quiet", worktree, t0)
            checkouts.append({"name": name, "repo": repo, "worktree": worktree, "t0": t0, "t1": t1})
            wctx.register_repo(store, worktree, name=name)
            wctx.add_to_workspace(store, "bench", name, create=True)
        # Declared relations make capture read what cited symbols call in the related
        # repositories, and verify check those dependencies too (#31).
        for pair in args.relate or ():
            wctx.relate(store, pair.split(":")[0], "depends_on", pair.split(":")[1])
        for n, c in enumerate(checkouts):
            repo, name, worktree, t0, t1 = c["repo"], c["name"], c["worktree"], c["t0"], c["t1"]
            symbols = symbols_at(repo, t0, oracle)
            items = pick_items(name, symbols, per_repo + (args.items % len(repos) if n == 0 else 0), rng)
            started = time.perf_counter()
            for i in range(0, len(items), 200):
                batch = [{"kind": "finding", "claim": "finding %d about %s" % (i + j, " and ".join(cited)),
                          "repo": name, "files": cited} for j, cited in enumerate(items[i : i + 200])]  # fmt: skip
                wctx.capture(store, batch, summary="verify benchmark", cwd=worktree, agent="bench")
            c["cited_files"] = sorted({f.split("#")[0] for cited in items for f in cited})
            changed = git(repo, "diff", "--name-only", t0, t1).decode().splitlines()
            stats = {
                "name": name,
                "t0": t0[:12],
                "t1": t1[:12],
                "commits": int(git(repo, "rev-list", "--count", "%s..%s" % (t0, t1)).decode()),
                "merges": int(git(repo, "rev-list", "--count", "--merges", "%s..%s" % (t0, t1)).decode()),
                "files_changed": len(changed),
                "items": len(items),
                "citations": sum(len(cited) for cited in items),
                "cited_files": len(c["cited_files"]),
                "cited_files_changed": len(set(c["cited_files"]) & set(changed)),
                "capture_s": round(time.perf_counter() - started, 1),
            }
            report["repositories"].append(stats)
            say("%s: %s" % (name, stats))
        report["dependencies"] = store.one("SELECT count(*) FROM dependencies")[0] if args.relate else 0
        ids = [r["id"] for r in store.all("SELECT id FROM evidence ORDER BY rid")]
        # Item ids are drawn at random: another run (another build) is compared item by item
        # under "repository: claim", which the seed makes the same.
        named = {r["id"]: "%s: %s" % (r["repo_name"], r["claim"])
                 for r in store.all("SELECT id, repo_name, claim FROM evidence")}  # fmt: skip
        store.close()
        store = None
        for c in checkouts:
            git(c["worktree"], "checkout", "--detach", "--quiet", c["t1"])
        python = sys.executable
        # As installed (a console script imports the module, whose compiled form is cached);
        # ``python3 wctx.py`` would compile 18,000 lines on every start.
        env["PYTHONPATH"] = os.path.dirname(args.wctx)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        cli = [python, "-m", "wctx", "--home", home]
        subprocess.run(cli + ["--version"], env=env, capture_output=True, check=True)  # compiled once
        first = checkouts[0]["name"]
        timings = {}
        timings["floor_cold_s"] = floor(checkouts)
        timings["floor_cold_cpu_s"] = CPU[0]
        out = os.path.join(scratch, "verify.out")
        # "Cold" is the first verify after the move: the store as capture left it (nothing learned
        # by a verify yet). It is restored from this copy before each cold run, so that the text
        # and the JSON output are both timed cold.
        shutil.copytree(home, home + ".captured")
        results = {}
        for form, extra in (("text", []), ("json", ["--json"])):
            _restore(home)
            for label in ("cold", "warm"):
                argv = cli + ["verify", "--repo", first] + extra
                if args.profile and label == "cold" and form == "json":
                    argv = [python, "-m", "cProfile", "-o", args.profile, "-m", "wctx"] + argv[3:]
                seconds, rss, _ = run_timed(argv, env, args.timeout, out)
                key = "verify_%s%s" % ("" if form == "text" else "json_", label)
                timings[key + "_s"] = seconds
                timings[key + "_cpu_s"] = CPU[0] if seconds is not None else None
                timings[key + "_peak_mib"] = round(rss, 1)
                say("verify %s (%s): %s s, CPU %s s, %.0f MiB" % (label, form, "unfinished" if seconds is None
                    else "%.2f" % seconds, "%.2f" % CPU[0] if seconds is not None else "-", rss))  # fmt: skip
                if seconds is None:
                    break
                if form == "json":
                    with open(out, "rb") as fh:
                        results[label] = json.loads(fh.read())
        runs = []
        for _ in range(5):
            runs.append((floor(checkouts), CPU[0]))
        timings["floor_warm_s"] = statistics.median(r[0] for r in runs)
        timings["floor_warm_cpu_s"] = statistics.median(r[1] for r in runs)
        if "cold" in results:
            report["items"] = {named[i["id"]]: [i["verdict"], [r.replace(scratch, "SCRATCH") for r in i["reasons"]]]
                               for i in results["cold"]["items"]}  # fmt: skip
        if "warm" in results:
            result = results["warm"]
            report["summary"] = result["summary"]
            report["verdicts"] = {i["id"]: i["verdict"] for i in result["items"]}
            stale = [i["id"] for i in result["items"] if i["verdict"] == "stale"]
            one = (stale or ids)[0]
            runs = []
            for _ in range(5):
                runs.append((run_timed(cli + ["verify", one, "--json"], env, args.timeout, out)[0], CPU[0]))
            timings["verify_one_warm_ms"] = statistics.median(r[0] for r in runs) * 1000.0
            timings["verify_one_warm_cpu_ms"] = statistics.median(r[1] for r in runs) * 1000.0
            ten = (stale + ids)[:10]
            mcp_path = os.path.join(os.path.dirname(args.wctx), "wctx_mcp.py")
            client = McpClient([python, mcp_path, "--home", home, "--repo", first], env)
            with open(mcp_path, encoding="utf-8") as fh:  # verify_freshness before it joined the overview
                tool = (
                    "verify_freshness" if '"name": "verify_freshness"' in fh.read() else "workspace_overview"
                )
            try:
                client.call("tools/call", {"name": tool, "arguments": {"ids": ten}})
                calls = [client.call("tools/call", {"name": tool, "arguments": {"ids": ten}})[0]
                         for _ in range(5)]  # fmt: skip
            finally:
                client.close()
            timings["mcp_verify_10_warm_ms"] = statistics.median(calls)
        report["timings"] = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in timings.items()}
        cold, warm = timings.get("verify_json_cold_s"), timings.get("verify_json_warm_s")
        report["ratios"] = {
            "cold_vs_floor": round(cold / timings["floor_cold_s"], 1) if cold else None,
            "warm_vs_floor": round(warm / timings["floor_warm_s"], 1) if warm else None,
        }
    finally:
        os.chdir(cwd)
        if store is not None:
            store.close()
        if args.keep:
            say(
                "kept %s (worktrees registered in %s; remove them with git worktree remove)" % (scratch, home)
            )
            checkouts = []
        for c in checkouts:
            subprocess.run(["git", *GIT_SAFE, "-C", c["repo"], "worktree", "remove", "--force", c["worktree"]],
                           capture_output=True, check=False)  # fmt: skip
            subprocess.run(
                ["git", *GIT_SAFE, "-C", c["repo"], "worktree", "prune"], capture_output=True, check=False
            )
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    return report


def format_report(reports):
    lines = []
    for r in reports:
        t = r.get("timings", {})
        repos = r["repositories"]
        lines.append(
            "span %d days: %d items, %d citations in %d files (%d changed) over %d repositories; "
            "%d commits (%d merges), %d files changed"
            % (
                r["span_days"],
                sum(x["items"] for x in repos),
                sum(x["citations"] for x in repos),
                sum(x["cited_files"] for x in repos),
                sum(x["cited_files_changed"] for x in repos),
                len(repos),
                sum(x["commits"] for x in repos),
                sum(x["merges"] for x in repos),
                sum(x["files_changed"] for x in repos),
            )  # fmt: skip
        )

        def s(key, unit="s", t=t):
            v = t.get(key)
            return "unfinished" if v is None else ("%.3f %s" % (v, unit))

        lines.append("  floor cold %s, warm %s (CPU %s, %s)" % (s("floor_cold_s"), s("floor_warm_s"),
                     s("floor_cold_cpu_s"), s("floor_warm_cpu_s")))  # fmt: skip
        for form, key in (("text", "verify"), ("--json", "verify_json")):
            lines.append(
                "  verify (%s) cold %s, CPU %s, %s MiB; warm %s, CPU %s, %s MiB"
                % (form, s(key + "_cold_s"), s(key + "_cold_cpu_s"), t.get(key + "_cold_peak_mib"),
                   s(key + "_warm_s"), s(key + "_warm_cpu_s"), t.get(key + "_warm_peak_mib"))
            )  # fmt: skip
        lines.append("  ratios to the floor (--json, wall): cold %s×, warm %s×" % (r["ratios"]["cold_vs_floor"],
                     r["ratios"]["warm_vs_floor"]))  # fmt: skip
        if "compared_with" in r:
            c = r["compared_with"]
            lines.append("  against %s: same verdict for %d of %d items, same reasons for %d" % (
                c["report"], c["same_verdict"], c["items"], c["same_reasons"]))  # fmt: skip
        if "verify_one_warm_ms" in t:
            lines.append(
                "  verify of one item warm %s (CPU %s); MCP verify of 10 ids warm %s"
                % (
                    s("verify_one_warm_ms", "ms"),
                    s("verify_one_warm_cpu_ms", "ms"),
                    s("mcp_verify_10_warm_ms", "ms"),
                )
            )
        if "summary" in r:
            lines.append("  verdicts: %s" % ", ".join("%s %d" % kv for kv in r["summary"].items()))
        if r.get("dependencies"):
            lines.append("  dependencies recorded at capture: %d" % r["dependencies"])
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", action="append", required=True, help="a git checkout (repeatable)")
    parser.add_argument("--span", action="append", type=int, help="days of history (repeatable; default 365)")
    parser.add_argument("--items", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=600.0, help="stop a verify after this many seconds")
    parser.add_argument("--wctx", default=os.path.join(ROOT, "wctx.py"), help="the wctx.py to time")
    parser.add_argument("--json", help="write the full report (verdicts per item included) here")
    parser.add_argument("--profile", help="write a cProfile of the cold verify --json here")
    parser.add_argument("--compare", help="the --json report of another run (another build, same repositories, "
                        "span and seed): count the items whose cold verdict and reasons are the same")  # fmt: skip
    parser.add_argument("--keep", action="store_true", help="keep the store and worktrees (for profiling)")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--relate", action="append", metavar="FROM:TO",
                        help="declare FROM depends_on TO before capture (repeatable; repository names)")  # fmt: skip
    args = parser.parse_args(argv)
    args.wctx = os.path.abspath(args.wctx)
    if args.compare and not os.path.isfile(args.compare):
        parser.error("--compare: no such report %s" % args.compare)
    # The build under test, from its own file, also for bench/freshness.py's oracle, which would
    # otherwise import this checkout's wctx.py under the same name.
    sys.path.insert(0, os.path.dirname(args.wctx))
    spec = importlib.util.spec_from_file_location("wctx", args.wctx)
    wctx = importlib.util.module_from_spec(spec)
    sys.modules["wctx"] = wctx
    spec.loader.exec_module(wctx)
    say = (lambda m: None) if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True))
    repos = [os.path.realpath(r) for r in args.repo]
    reports = [run_span(repos, days, args, wctx, say) for days in (args.span or [365])]
    if args.compare:
        with open(args.compare) as fh:
            theirs = {r["span_days"]: r.get("items", {}) for r in json.load(fh)["reports"]}
        for r in reports:
            other, ours = theirs.get(r["span_days"], {}), r.get("items", {})
            r["compared_with"] = {
                "report": args.compare,
                "items": len(ours),
                "same_verdict": sum(1 for k, v in ours.items() if k in other and other[k][0] == v[0]),
                "same_reasons": sum(1 for k, v in ours.items() if k in other and other[k] == v),
            }
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"wctx": args.wctx, "reports": reports}, fh, indent=1)
    print(format_report(reports))
    return 0


if __name__ == "__main__":
    sys.exit(main())
