#!/usr/bin/env python3
"""What the session-start hook adds to a session start, on a 10,000-item store.

    python3 bench/brief.py                 # 10,000 items, 20 timed rounds (a few minutes)
    python3 bench/brief.py --items 2000 --runs 10
    python3 bench/brief.py --json
    python3 bench/brief.py --keep /tmp/wctx-brief   # build once; later runs measure the same world
    python3 bench/brief.py --forms wctx.py,pyz      # skip the pip install of the console script
    python3 bench/brief.py --baseline /tmp/old       # a checkout of an earlier commit, same rounds

It builds the world of bench/search.py (10 real git repositories, typed relations, evidence
captured through wctx.capture with anchors citing path#symbol, history churned between batches),
then stands in docs-ui with three changed files that call functions other repositories'
evidence cites. For each way of installing wctx it runs `hooks install claude-code` (into a
settings file of its own) and takes the SessionStart command that install wrote:

  wctx.py   python3 wctx.py hooks install ...      (the interpreter this script runs under)
  pyz       python3 wctx.pyz hooks install ...     (archive built from this checkout)
  console   the `wctx` console script of a fresh venv (pip install of this checkout)

Each command then runs as an agent runs it: `env -i PATH=/usr/bin:/bin HOME=... sh -c COMMAND`
with Claude Code's SessionStart payload on stdin, wall time from spawn to exit, CPU time (user +
system of the whole process tree) from wait4. Interleaved with them, in the same rounds, the bare
start of the same interpreters under the same env -i (`python -c pass`), which any hook pays.
The figure bench/RESULTS.md quotes is each hook's p50 wall time; the goal is <= 300 ms. With
--baseline, an earlier checkout's hooks (its own world, built by its own bench/brief.py from the
same seed) run in the same rounds, labelled "before".

A breakdown follows from one more run of the hook's work in a child process with timers: the
interpreter's start and `import wctx`, the CLI parser, opening the store, git processes (how
many, how long), recall by code reference, the rest of the briefing.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import search as world  # noqa: E402  (bench/search.py builds the corpus)

import wctx  # noqa: E402

GOAL_MS = 300.0
FORMS = ("wctx.py", "pyz", "console")
CLEAN_PATH = "/usr/bin:/bin"

# Run in a child interpreter: the hook's own work, with timers around its stages.
STAGES = r"""
import io, json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[1])
import wctx
t1 = time.perf_counter()
stages = {}
def timed(owner, name, label):
    f = getattr(owner, name)
    def w(*a, **k):
        t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            s = stages.setdefault(label, [0, 0.0]); s[0] += 1; s[1] += time.perf_counter() - t
    setattr(owner, name, w)
for name, label in [("build_parser", "CLI parser"), ("open_store", "open the store"),
                    ("run_git", "git processes"), ("code_references", "recall by code reference"),
                    ("brief", "briefing (all of it)"), ("briefing_text", "briefing text")]:
    timed(wctx, name, label)
sys.argv = ["wctx", "--home", sys.argv[2], "brief", "--hook", "claude-code"]
out, sys.stdout = sys.stdout, io.StringIO()
t2 = time.perf_counter()
wctx.main(sys.argv[1:])
t3 = time.perf_counter()
sys.stdout = out
stages["import wctx"] = [1, t1 - t0]
stages["main() in all"] = [1, t3 - t2]
print(json.dumps({k: [n, round(s * 1000.0, 1)] for k, (n, s) in stages.items()}))
"""


def run_tree(argv, payload, cwd):
    """(wall ms, CPU ms) of one run, CPU of the process and its descendants from wait4."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd
    )
    proc.stdin.write(payload)
    proc.stdin.close()
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = (time.perf_counter() - t0) * 1000.0
    proc.returncode = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status
    if proc.returncode != 0:
        raise SystemExit("failed (exit %s): %s\n%s" % (proc.returncode, " ".join(argv), err.decode()))
    return elapsed, (usage.ru_utime + usage.ru_stime) * 1000.0, out


def clean(home, command):
    """argv that runs ``command`` as an agent does: through sh, from a bare environment."""
    return ["env", "-i", "PATH=" + CLEAN_PATH, "HOME=" + home, "sh", "-c", command]


def build(tmp, home, ui, args):
    words, weights = world.vocabulary()
    corpus = world.Corpus(args.seed, words, weights)
    repos = world.Repos(os.path.join(tmp, "repos"), corpus, 30)
    store = wctx.open_store(home)
    for ws, members in world.WORKSPACES.items():
        for name in members:
            wctx.register_repo(store, repos.path(name), name=name, workspace=ws)
    for a, kind, b in world.RELATIONS:
        wctx.relate(store, a, kind, b)
    world.populate(store, repos, corpus, args.items, lambda text: sys.stderr.write(text + "\n"))
    # docs-ui's working tree: three files changed to call functions cited in related repos.
    cited = store.all(
        "SELECT a.symbol FROM anchors a JOIN evidence e ON e.rid = a.evidence_rid "
        "WHERE a.symbol IS NOT NULL AND a.repo_name != 'docs-ui' ORDER BY a.id LIMIT 30"
    )
    for n in range(3):
        names = [r["symbol"] for r in cited[n * 10 : n * 10 + 10]]
        with open(os.path.join(ui, "src", "bench_call_%d.py" % n), "w") as fh:
            fh.write("".join("def use_%d():\n    return %s(1)\n\n" % (i, s) for i, s in enumerate(names)))
    return store


def install_forms(tmp, home, wanted, root=ROOT):
    """{form: (SessionStart command, interpreter it runs)} as `hooks install` of the checkout
    ``root`` wrote them."""
    forms = {}
    user_home = os.path.join(tmp, "user")
    os.makedirs(user_home, exist_ok=True)
    env = {"PATH": os.environ.get("PATH", CLEAN_PATH), "HOME": user_home}
    launchers = {}
    if "wctx.py" in wanted:
        launchers["wctx.py"] = ([sys.executable, os.path.join(root, "wctx.py")], sys.executable)
    if "pyz" in wanted:
        pyz = os.path.join(tmp, "wctx.pyz")
        subprocess.run([sys.executable, os.path.join(root, "zipapp", "build.py"), "-o", pyz], check=True,
                       capture_output=True)  # fmt: skip
        launchers["pyz"] = ([sys.executable, pyz], sys.executable)
    if "console" in wanted:
        venv = console_script(tmp, root)
        if venv:
            launchers["console"] = ([os.path.join(venv, "bin", "wctx")], os.path.join(venv, "bin", "python"))
    for form, (argv, python) in launchers.items():
        settings = os.path.join(tmp, "settings-%s.json" % form)
        done = subprocess.run(
            [*argv, "--home", home, "hooks", "install", "claude-code", "--settings", settings],
            env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit("hooks install (%s) failed:\n%s%s" % (form, done.stdout, done.stderr))
        with open(settings, encoding="utf-8") as fh:
            command = json.load(fh)["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        forms[form] = (command, python)
    return forms, user_home


def console_script(tmp, root):
    """A venv with this checkout pip-installed (its `wctx` console script), or None with a note."""
    venv = os.path.join(tmp, "venv")
    python = os.path.join(venv, "bin", "python")
    if os.path.exists(os.path.join(venv, "bin", "wctx")):  # a --keep world: reinstall if stale
        code = "import wctx, sys; sys.stdout.write(wctx.__file__)"
        installed = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=tmp).stdout
        with open(installed, "rb") as a, open(os.path.join(root, "wctx.py"), "rb") as b:
            if a.read() == b.read():
                return venv
    source = os.path.join(tmp, "source")
    os.makedirs(source, exist_ok=True)
    for name in ("pyproject.toml", "README.md", "LICENSE", "wctx.py", "wctx_mcp.py"):
        shutil.copy2(os.path.join(root, name), source)
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True, capture_output=True)
    pip = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--force-reinstall"]
    done = subprocess.run([*pip, "--no-deps", source], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.stderr.write("console script not measured: pip install failed: %s\n" % done.stderr.strip()[-300:])
        return None
    return venv


def payload_for(cwd):
    """Claude Code's SessionStart hook input for a session starting in ``cwd``."""
    return json.dumps(
        {"session_id": "bench", "transcript_path": None, "cwd": cwd, "hook_event_name": "SessionStart",
         "source": "startup"}
    ).encode()  # fmt: skip


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--forms", default=",".join(FORMS), help="comma-separated: " + ", ".join(FORMS))
    parser.add_argument(
        "--keep", metavar="DIR", help="build in DIR and keep it (default: a temp dir, removed)"
    )
    parser.add_argument(
        "--baseline",
        metavar="CHECKOUT",
        help="also measure the hooks of another wctx checkout (an earlier commit), in the same rounds",
    )
    args = parser.parse_args(argv)
    wanted = [f for f in args.forms.split(",") if f]
    if not wanted or set(wanted) - set(FORMS):
        parser.error("--forms takes a comma-separated list of: " + ", ".join(FORMS))
    tmp = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="wctx-brief-bench-")
    os.makedirs(tmp, exist_ok=True)
    try:
        home = os.path.join(tmp, "home")
        ui = os.path.join(tmp, "repos", "docs-ui")
        if os.path.exists(os.path.join(home, "wctx.db")):  # a --keep world from an earlier run
            store = wctx.open_store(home)
        else:
            store = build(tmp, home, ui, args)
        items = store.one("SELECT count(*) FROM evidence")[0]
        anchors = store.one("SELECT count(*), count(symbol) FROM anchors")
        store.close()
        # (label, SessionStart command, interpreter, payload, cwd, user home) of every hook measured.
        hooks = [(form, command, python, payload_for(ui), ui, user_home)
                 for found, user_home in [install_forms(tmp, home, wanted)] for form, (command, python) in found.items()]  # fmt: skip
        if args.baseline:
            base_root = os.path.abspath(args.baseline)
            base_tmp = os.path.join(tmp, "baseline")
            base_home, base_ui = os.path.join(base_tmp, "home"), os.path.join(base_tmp, "repos", "docs-ui")
            if not os.path.exists(os.path.join(base_home, "wctx.db")):
                # That checkout's own code builds its world (its store schema is its own), from the
                # same seed, so both worlds hold the same evidence and the same changed files.
                subprocess.run(
                    [sys.executable, os.path.join(base_root, "bench", "brief.py"), "--keep", base_tmp,
                     "--items", str(args.items), "--seed", str(args.seed), "--runs", "1"],
                    check=True, capture_output=True, env=dict(os.environ, PYTHONDONTWRITEBYTECODE=""),
                )  # fmt: skip
            found, base_user = install_forms(base_tmp, base_home, wanted, root=base_root)
            hooks += [("before " + form, command, python, payload_for(base_ui), base_ui, base_user)
                      for form, (command, python) in found.items()]  # fmt: skip
        pythons = sorted({h[2] for h in hooks})
        measured = [
            (label, clean(user, command), payload, cwd) for label, command, _, payload, cwd, user in hooks
        ]
        measured += [
            (python, clean(hooks[0][5], "%s -c pass" % shlex.quote(python)), b"", ui) for python in pythons
        ]
        contexts = {}
        for label, argv_, payload, cwd in measured:  # warm-up: page cache, bytecode caches
            out = run_tree(argv_, payload, cwd)[2]
            if payload:
                contexts[label] = json.loads(out)["hookSpecificOutput"]["additionalContext"]
        load_before = [round(x, 2) for x in os.getloadavg()]
        wall = {m[0]: [] for m in measured}
        cpu = {m[0]: [] for m in measured}
        for _ in range(args.runs):
            for label, argv_, payload, cwd in measured:
                w, c, _ = run_tree(argv_, payload, cwd)
                wall[label].append(w)
                cpu[label].append(c)
        load_after = [round(x, 2) for x in os.getloadavg()]
        stages = json.loads(
            subprocess.run(
                [
                    "env",
                    "-i",
                    "PATH=" + CLEAN_PATH,
                    "HOME=" + hooks[0][5],
                    sys.executable,
                    "-I",
                    "-c",
                    STAGES,
                    ROOT,
                    home,
                ],
                input=payload_for(ui),
                cwd=ui,
                capture_output=True,
                check=True,
            ).stdout  # fmt: skip
        )
        p50 = lambda xs: round(statistics.median(xs), 1)  # noqa: E731
        report = {
            "python": sys.version.split()[0],
            "cpus": os.cpu_count(),
            "load_average_before": load_before,
            "load_average_after": load_after,
            "items": items,
            "anchors": anchors[0],
            "anchors_with_symbol": anchors[1],
            "runs": args.runs,
            "goal_ms": GOAL_MS,
            "forms": {},
            "stages_ms": stages,
        }
        for form, command, python, _, _, _ in hooks:
            report["forms"][form] = {
                "command": command,
                "hook_p50_ms": p50(wall[form]),
                "hook_p95_ms": round(sorted(wall[form])[int(0.95 * (len(wall[form]) - 1))], 1),
                "hook_cpu_p50_ms": p50(cpu[form]),
                "python_start_p50_ms": p50(wall[python]),
                "python_start_cpu_p50_ms": p50(cpu[python]),
                "ratio_wall": round(statistics.median(wall[form]) / statistics.median(wall[python]), 2),
                "briefing_tokens": wctx.estimate_tokens(contexts[form]),
                "code_references": contexts[form].count(" cites "),
                "met": statistics.median(wall[form]) <= GOAL_MS,
            }
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(
        "session-start hook on %d items, %d anchors (Python %s, %s CPUs, load average %s before, %s after), "
        "%d rounds:" % (items, report["anchors"], report["python"], report["cpus"], load_before[0], load_after[0],
                        args.runs)
    )  # fmt: skip
    for form, r in report["forms"].items():
        print(
            "  %-8s hook p50 %6.1f ms (p95 %6.1f, CPU %5.1f) | python -c pass p50 %5.1f ms (CPU %5.1f) | %.2fx"
            " | %d tokens, %d code references | goal <= %.0f ms: %s"
            % (form, r["hook_p50_ms"], r["hook_p95_ms"], r["hook_cpu_p50_ms"], r["python_start_p50_ms"],
               r["python_start_cpu_p50_ms"], r["ratio_wall"], r["briefing_tokens"], r["code_references"], GOAL_MS,
               "met" if r["met"] else "MISSED")
        )  # fmt: skip
    print("  where the time goes (one run of wctx.py's hook work, in-process timers):")
    for label, (n, ms) in stages.items():
        print("    %-26s %6.1f ms%s" % (label, ms, " (%d calls)" % n if n > 1 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
