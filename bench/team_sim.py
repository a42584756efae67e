#!/usr/bin/env python3
"""A fifty-person team sharing memory through `wctx sync` for a year, against a local bare remote.

    python3 bench/team_sim.py                                   # 100,000 items, 50 machines, 50 weeks
    python3 bench/team_sim.py --items 5000 --machines 10 --rounds 10 --checkpoints 2,5,10
    python3 bench/team_sim.py --items 1000 --rounds 0 --newcomer-sizes 1000000 --json
    python3 bench/team_sim.py --profile-items 100000           # where one sync's time goes (cProfile)

Each machine is its own WCTX_HOME (its own store) with its own clones of the same small
repositories (--repos, one workspace each), every one registered in its workspace: each machine
is in every workspace, and its syncs fetch every branch. Machine m works in workspace m mod
--repos: its items are about that repository. wctx runs as users run it: `wctx.py
import-evidence FILE` loads a machine's items, `wctx.py capture` records a few, and every sync is
`wctx.py sync --json` in a new process, with WCTX_HOME set and the cwd in a registered checkout.
Git's own share of each sync is read from GIT_TRACE2_EVENT (every git command wctx runs: ls-remote,
fetch, push, ls-tree, cat-file, fast-import ...); the rest is wctx's (Python start-up, SQLite,
building and parsing files).

The remote holds wctx's layout: the team's branch (wctx-memory: each machine's topology and
tombstones) and one branch per workspace (wctx-memory-ws/<workspace>: the session and event files
of the items about that workspace's repositories). A person in one workspace fetches the team's
branch and that workspace's; the first repository's workspace (ws-team-api) stands for it below.

Machines: the last --participants sync against the team remote for real (fetch, import, export,
push). The others are writers: their `wctx.py sync` goes to a private remote of their own, and
Replayer puts that push on the same branches of the team remote (one commit per branch a sync
changed, the files wctx built), so that the remote grows as if all had pushed, without each
writer first pulling the whole team's memory (which costs what a newcomer's sync costs, measured
below).

The year:
  week 0    every machine imports its backlog (--backlog of --items) and syncs once, in turn (the
            participants last: their first syncs pull everything before them);
  week 1..  --active machines (round robin) each import their share of the rest of --items (one
            export file of new sessions) and sync; a participant pulls what is new since its last;
  checkpoint after the weeks in --checkpoints: the whole remote's size (du -sb, git count-objects
            -v, objects reachable from any branch); commits and files of the team's branch and of
            the workspace branches (their number, files min / median / max); a bare `git fetch`
            into an empty repository of what a person in one workspace reads (the team's branch
            and that workspace's) and of every branch (git's cost for such a reader), and the same
            two into up-to-date repositories (git's no-op); a no-op sync launched as `python3
            wctx.py` and as the module with cached bytecode, and `wctx --version` both ways
            (medians of --repeat, interleaved with git's no-op fetches; the ratio is to the no-op
            fetch of every branch, which the participant reads); an incremental sync: one
            participant captures --k items and syncs, another then syncs (what it imported, and its
            time against its no-op sync).
At the end:
  newcomers a fresh store's first `wctx.py sync`, in one workspace (a clone of that workspace's
            one repository, registered in it as the team's machines do) and in every workspace:
            seconds, peak RSS (os.wait4), items and files imported, the bytes of its sync
            repository's objects, and git's own fetch of the same branches into an empty
            repository (seconds, and the bytes of the pack git sent);
  sizes     --newcomer-sizes: the same newcomers (--sized-in: one, all or both) against branches of
            N items written by --machines machines: each machine's files built by its own sync into
            a private remote (its topology on the team's branch, its sessions on its workspace's),
            each branch's files of every machine combined with git plumbing into one commit.
Benchmarks only: no test times anything.
"""

import argparse
import datetime
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WCTX = os.path.join(ROOT, "wctx.py")
sys.path.insert(0, ROOT)

import wctx  # noqa: E402

BRANCH = "wctx-memory"
MODULE_MAIN = "import sys; sys.path.insert(0, %r); import wctx; sys.exit(wctx.main())"
FAKE_SHA = "0" * 40  # blob id of a cited file the repositories do not hold
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}
# A session of an agent the bench runs under must not leak into the simulated machines.
BASE_ENV = {
    k: v
    for k, v in os.environ.items()
    if not k.startswith(("CLAUDE", "CODEX", "GEMINI", "WCTX", "GIT_TRACE", "GIT_DIR", "GIT_WORK"))
}
BASE_ENV.update(GIT_ENV)


def git(cwd, *args, **kw):
    return subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-C", cwd, *args],
        env=BASE_ENV,
        check=True,
        capture_output=True,
        **kw,
    ).stdout


def timed_git(cwd, *args):
    start = time.perf_counter()
    git(cwd, *args)
    return time.perf_counter() - start


def du(path):
    return int(subprocess.run(["du", "-sb", path], capture_output=True, text=True).stdout.split()[0])


def peak_rss_kib(pid, done):
    """The child's own peak RSS (VmHWM of /proc/PID/status, read every 0.1 s until ``done``): on
    Linux the ru_maxrss that os.wait4 returns is at least this bench's own size when it forked the
    child (the high-water mark survives exec), and this bench holds hundreds of MB after building
    a large branch."""
    peak = [0]

    def poll():
        while not done.is_set():
            try:
                with open("/proc/%d/status" % pid) as fh:
                    for line in fh:
                        if line.startswith("VmHWM:"):
                            peak[0] = max(peak[0], int(line.split()[1]))
            except (OSError, ValueError):
                pass
            done.wait(0.1)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    return peak, thread


def run(cmd, env, cwd, trace=None):
    """Run ``cmd``; returns (seconds, peak RSS in KiB of it, stdout). The peak is the child's
    alone (peak_rss_kib), whatever ran before."""
    env = dict(env)
    if trace:
        env["GIT_TRACE2_EVENT"] = trace
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=err)
        done = threading.Event()
        peak, poller = peak_rss_kib(proc.pid, done)
        _, status, usage = os.wait4(proc.pid, 0)
        done.set()
        poller.join()
        seconds = time.perf_counter() - start
        proc.returncode = (
            os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status
        )
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if proc.returncode != 0:
        raise SystemExit("%s failed (%s): %s" % (" ".join(cmd[:3]), proc.returncode, stderr[-2000:]))
    return seconds, peak[0] or usage.ru_maxrss, stdout


def git_share(trace):
    """{git command: seconds} of the top-level git processes in a GIT_TRACE2_EVENT file."""
    names, spent = {}, {}
    if not os.path.exists(trace):
        return spent
    with open(trace) as fh:
        for line in fh:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            sid = e.get("sid", "")
            if "/" in sid:  # a child of a git command (receive-pack under push ...): counted in its parent
                continue
            if e.get("event") == "cmd_name":
                names[sid] = e.get("name")
            elif e.get("event") == "exit":
                name = names.get(sid, "other")
                spent[name] = spent.get(name, 0.0) + e.get("t_abs", 0.0)
    os.remove(trace)
    return spent


class Machine:
    """A person's machine: clones of ``names`` (default: every repository), each registered in its
    workspace, so that the machine is in those workspaces (every one by default)."""

    def __init__(self, index, base, origins, workspace_of, names=None):
        self.index = index
        self.dir = os.path.join(base, "m%02d" % index)
        self.home = os.path.join(self.dir, "wctx")
        self.repos = {}
        os.makedirs(self.dir)
        for name in sorted(names or origins):
            path = os.path.join(self.dir, "src", name)
            git(self.dir, "clone", "-q", origins[name], path)
            self.repos[name] = path
        self.workspace = sorted(self.repos)[index % len(self.repos)]  # the repository it works in
        store = wctx.open_store(self.home)
        for name, path in sorted(self.repos.items()):
            wctx.register_repo(store, path, workspace=workspace_of[name])
        store.close()
        self.env = dict(BASE_ENV, WCTX_HOME=self.home, HOME=self.dir)
        self.module_env = dict(self.env, PYTHONPYCACHEPREFIX=os.path.join(base, "pycache"))
        self.module_env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.cwd = self.repos[self.workspace]
        self.private = None  # a writer's own remote (see Replayer)
        self.machine_id = None

    def write_sync(self, replayer, tmp):
        """A writer's sync: `wctx sync` to its private remote, then replayed onto the team branch."""
        first = self.private is None
        if first:
            self.private = os.path.join(self.dir, "private.git")
            git(self.dir, "init", "-q", "--bare", self.private)
        r = self.sync(remote=self.private if first else None, tmp=tmp)
        if first:
            store = wctx.open_store(self.home)
            self.machine_id = wctx.store_machine_id(store)
            store.close()
        r["replay_s"] = replayer.replay(self)
        return r

    def wctx(self, *args, trace=None, launch="script"):
        """``python3 wctx.py ARGS`` (launch "script", as the issue runs it: the file is compiled at
        every start), or the module imported with its bytecode cached ("module", as the pip console
        script runs it)."""
        if launch == "module":
            cmd = [sys.executable, "-c", MODULE_MAIN % ROOT, *args]
            return run(cmd, self.module_env, self.cwd, trace)
        return run([sys.executable, WCTX, *args], self.env, self.cwd, trace)

    def sync(self, remote=None, tmp=None, launch="script"):
        """One `wctx sync --json`: {seconds, rss_mb, git: {command: seconds}, report}."""
        trace = os.path.join(tmp or self.dir, "trace-%d.json" % time.perf_counter_ns())
        args = ["sync", "--json"] + (["--remote", remote] if remote else [])
        seconds, rss, out = self.wctx(*args, trace=trace, launch=launch)
        report = json.loads(out)
        return {"s": seconds, "rss_mb": rss / 1024, "git": git_share(trace), "report": report}


class Replayer:
    """Puts a writer machine's sync onto the team remote: the machine's `wctx sync` pushed its
    files to a private remote (a real sync, minus the pull); on each branch it wrote (the team's,
    its workspace's), its ``machines/<id>/`` tree then replaces the one on the same branch's tip
    in a new commit, pushed to the team remote with an ordinary `git push` (through receive-pack,
    as wctx's own push). Each branch gets what that machine's sync against the team remote would
    have pushed, one commit per sync that changed it, without the machine pulling everyone else's
    files first (each such pull costs what a newcomer's does)."""

    def __init__(self, base, remote):
        self.repo = os.path.join(base, "replayer.git")
        self.remote = remote
        git(base, "init", "-q", "--bare", self.repo)

    def replay(self, machine):
        """Each branch of the writer's private remote (the team's and one per workspace it wrote)
        onto the same branch of the team remote."""
        start = time.perf_counter()
        listed = git(self.repo, "ls-remote", "--heads", machine.private).decode().split()
        for ref in listed[1::2]:
            self._replay_branch(machine, ref[len("refs/heads/") :])
        return time.perf_counter() - start

    def _replay_branch(self, machine, branch):
        spec = "+refs/heads/%s:refs/heads/%s" % (branch, branch)
        git(self.repo, "fetch", "-q", "--no-tags", machine.private, "+refs/heads/%s:refs/p/m" % branch)
        code = subprocess.run(
            ["git", "-C", self.repo, "fetch", "-q", "--no-tags", self.remote, spec],
            env=BASE_ENV,
            capture_output=True,
        ).returncode
        tip = git(self.repo, "rev-parse", "refs/heads/" + branch).decode().strip() if code == 0 else None
        ours = git(self.repo, "ls-tree", "refs/p/m", "machines/").decode().splitlines()  # [machines/<id>]
        mine = ours[0].split("\t")[0].split()[2]
        entries = {}
        if tip:
            for line in git(self.repo, "ls-tree", tip + ":machines").decode().splitlines():
                entries[line.split("\t")[1]] = line
        entries[machine.machine_id] = "040000 tree %s\t%s" % (mine, machine.machine_id)
        sub = git(self.repo, "mktree", input="".join(v + "\n" for _, v in sorted(entries.items())).encode())
        root = git(self.repo, "mktree", input=b"040000 tree %s\tmachines\n" % sub.strip())
        parents = ["-p", tip] if tip else []
        commit = git(self.repo, "commit-tree", *parents, "-m", "wctx sync from machine %s" % machine.machine_id,
                     root.decode().strip()).decode().strip()  # fmt: skip
        if tip and git(self.repo, "rev-parse", tip + "^{tree}").strip() == root.strip():
            return
        git(self.repo, "push", "-q", self.remote, "%s:refs/heads/%s" % (commit, branch))


def make_origins(base, names):
    """Small real repositories, a few commits each, as bare origins every machine clones. Each
    has its own root commit (its name is in its files): repositories with one root commit are forks
    of one to wctx, which would put them in each other's workspaces."""
    origins = {}
    for name in names:
        work = os.path.join(base, "work", name)
        os.makedirs(os.path.join(work, "src"))
        git(work, "init", "-q")
        for i in range(3):
            with open(os.path.join(work, "src", "mod%d.py" % i), "w") as fh:
                fh.write("# %s\ndef handler_%d(x):\n    return x + %d\n" % (name, i, i))
            git(work, "add", "-A")
            git(work, "commit", "-q", "-m", "commit %d" % i)
        origins[name] = os.path.join(base, "origins", name + ".git")
        git(base, "clone", "-q", "--bare", work, origins[name])
    return origins


class Corpus:
    """Texts from the peer corpus (/work/shared/bench/peers/corpus.py); beyond its first POOL
    findings a text comes back with a build number, so that no two claims are one by the
    duplicate rule. Ids are global: ses-<10 hex>, ev-<10 hex>."""

    POOL = 100_000

    def __init__(self, peers, total, roots, heads, per_session):
        sys.path.insert(0, os.path.abspath(peers))
        import corpus as corpus_mod

        self.pool = corpus_mod.make_corpus(min(total, self.POOL))
        self.roots, self.heads, self.per_session = roots, heads, per_session
        self.next_item = 0
        self.next_session = 0

    def write(self, path, repo, count, week, machine):
        """An export file of ``count`` new items about ``repo`` in new sessions; returns count."""
        day = datetime.date(2026, 1, 5) + datetime.timedelta(days=7 * week + machine % 5)
        stamp = day.isoformat() + "T10:%02d:00Z" % (machine % 60)
        lines = []
        for i in range(count):
            if i % self.per_session == 0:
                sid = "ses-%010x" % self.next_session
                self.next_session += 1
                lines.append({"type": "session", "format": 1, "id": sid, "agent": "bench", "repo": repo,
                              "started_at": stamp, "ended_at": stamp,
                              "summary": "machine %d, week %d" % (machine, week)})  # fmt: skip
            n = self.next_item
            self.next_item += 1
            f = self.pool[n % len(self.pool)]
            claim = f["text"] if n < len(self.pool) else "%s (seen in build %d)" % (f["text"], n)
            anchors = [{"repo": repo, "root_commit": self.roots[repo], "path": None, "symbol": None,
                        "commit": self.heads[repo], "branch": "main", "blob": None, "dirty": None,
                        "symbol_hash": None, "symbol_lang": None}]  # fmt: skip
            if n % 4 != 3:
                anchors.append(dict(anchors[0], path=f["path"], symbol=f["symbol"], blob=FAKE_SHA, dirty=0))
            lines.append({"type": "evidence", "format": 1, "id": "ev-%010x" % n, "session": sid, "repo": repo,
                          "root_commit": self.roots[repo], "kind": ("finding", "known_issue", "decision",
                          "note")[n % 4], "claim": claim, "detail": None, "confidence": None,
                          "status": "active", "superseded_by": None, "created_at": stamp, "updated_at": stamp,
                          "anchors": anchors})  # fmt: skip
        with open(path, "w") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in lines)
        return count


def branches(repo):
    """The branches of ``repo``: the team's (BRANCH) and one per workspace (BRANCH-ws/<workspace>)."""
    refs = git(repo, "for-each-ref", "--format=%(refname)", "refs/heads/").decode().split()
    return [r[len("refs/heads/") :] for r in refs]


def refspecs(wanted):
    """Refspecs of the branches ``wanted``; None: every branch of the remote."""
    if wanted is None:
        return ["+refs/heads/*:refs/heads/*"]
    return ["+refs/heads/%s:refs/heads/%s" % (b, b) for b in wanted]


def reader_branches(remote, workspaces):
    """What a person in ``workspaces`` fetches: the team's branch and those workspaces' (the ones
    the remote holds)."""
    held = set(branches(remote))
    wanted = [BRANCH] + [wctx.workspace_branch(BRANCH, ws) for ws in workspaces]
    return [b for b in wanted if b in held]


def fetch_floor(remote, wanted, base):
    """A bare `git fetch` of the branches ``wanted`` (None: all) into an empty repository: git's
    own cost for a reader of them. What it fetches is kept as the pack git sent, however few its
    objects (git unpacks fewer than fetch.unpackLimit, 100, into loose objects, which would
    misstate the bytes of small fetches). Returns (seconds, bytes of that pack, the repository,
    left up to date for git's no-op fetch)."""
    into = tempfile.mkdtemp(prefix="fetch-", dir=base)
    git(into, "init", "-q", "--bare")
    seconds = timed_git(
        into, "-c", "fetch.unpackLimit=1", "fetch", "-q", "--no-tags", remote, *refspecs(wanted)
    )
    packs = os.path.join(into, "objects", "pack")
    sent = sum(os.path.getsize(os.path.join(packs, f)) for f in os.listdir(packs) if f.endswith(".pack"))
    return seconds, sent, into


def remote_stats(remote, base, workspace):
    """Size and shape of the whole remote and of each branch, and git's own cost to fetch what a
    person in ``workspace`` reads (the team's branch and that workspace's) and the whole remote."""
    objects = {}
    for line in git(remote, "count-objects", "-v").decode().splitlines():
        key, _, value = line.partition(":")
        objects[key.strip()] = int(value.strip())
    per = {}
    for b in branches(remote):
        tree = [p for p in git(remote, "ls-tree", "-r", "--name-only", "-z", b).split(b"\0") if p]
        per[b] = {"commits": int(git(remote, "rev-list", "--count", b)), "files": len(tree),
                  "session_files": sum(1 for p in tree if b"/sessions/" in p)}  # fmt: skip
    team = per.get(BRANCH, {"commits": 0, "files": 0, "session_files": 0})
    ws_files = sorted(v["files"] for b, v in per.items() if b != BRANCH) or [0]
    stats = {
        "remote_bytes": du(remote),
        "objects": objects,
        "objects_reachable": len(git(remote, "rev-list", "--objects", "--all").splitlines()),
        "refs": len(git(remote, "for-each-ref").splitlines()),
        "branches": per,
        "commits": sum(v["commits"] for v in per.values()),
        "files": sum(v["files"] for v in per.values()),
        "session_files": sum(v["session_files"] for v in per.values()),
        "team_commits": team["commits"],
        "team_files": team["files"],
        "ws_branches": len(per) - (BRANCH in per),
        "ws_commits": sum(v["commits"] for b, v in per.items() if b != BRANCH),
        "ws_files_min_med_max": [ws_files[0], statistics.median(ws_files), ws_files[-1]],
        "workspace": workspace,
    }
    one = reader_branches(remote, [workspace])
    stats["fetch_ws_s"], stats["fetch_ws_bytes"], ws_into = fetch_floor(remote, one, base)
    stats["fetch_all_s"], stats["fetch_all_bytes"], all_into = fetch_floor(remote, None, base)
    stats["_uptodate"] = {"ws": (ws_into, one), "all": (all_into, None)}  # for git's no-op fetches
    return stats


def noop_pair(machine, remote, uptodate, repeat, tmp):
    """Medians of a no-op `wctx sync` (launched both ways, see Machine.wctx), of a bare no-op
    `git fetch` into an up-to-date repository of what a person in one workspace reads and of every
    branch, interleaved; and of `wctx --version` (start-up alone) launched both ways. The
    machine is in every workspace: its ratio is to git's no-op fetch of every branch."""
    runs = {
        k: []
        for k in ("fetch_ws", "fetch_all", "script", "module", "script_git", "module_git", "script_up",
                  "module_up")
    }  # fmt: skip
    machine.wctx("--version", launch="module")  # the bytecode cache written once
    for _ in range(repeat):
        for key, (into, wanted) in uptodate.items():
            runs["fetch_" + key].append(
                timed_git(into, "fetch", "-q", "--no-tags", remote, *refspecs(wanted))
            )
        for launch in ("script", "module"):
            runs[launch + "_up"].append(machine.wctx("--version", launch=launch)[0])
            r = machine.sync(tmp=tmp, launch=launch)
            if not r["report"].get("noop"):
                raise SystemExit("expected a no-op sync, got %r" % r["report"])
            runs[launch].append(r["s"])
            runs[launch + "_git"].append(sum(r["git"].values()))
    m = {k: statistics.median(v) for k, v in runs.items()}
    return {
        "noop_fetch_ws_s": m["fetch_ws"],
        "noop_fetch_all_s": m["fetch_all"],
        "noop_sync_s": m["script"],
        "noop_sync_git_s": m["script_git"],
        "startup_s": m["script_up"],
        "noop_ratio": m["script"] / m["fetch_all"],
        "noop_sync_module_s": m["module"],
        "noop_sync_module_git_s": m["module_git"],
        "startup_module_s": m["module_up"],
        "noop_ratio_module": m["module"] / m["fetch_all"],
    }


def checkpoint(week, obs, other, remote, base, args, tmp, workspace):
    print("  checkpoint after week %d ..." % week, file=sys.stderr, flush=True)
    other.sync(tmp=tmp)  # both up to date with the remote
    obs.sync(tmp=tmp)
    stats = remote_stats(remote, base, workspace)
    uptodate = stats.pop("_uptodate")
    stats.update(noop_pair(obs, remote, uptodate, args.repeat, tmp))
    for into, _ in uptodate.values():
        shutil.rmtree(into, ignore_errors=True)
    # Incremental: K new items on one machine (one capture), then another machine's sync.
    flags = []
    for i in range(args.k):
        flags += ["--finding", "checkpoint %d: handler_%d retries forever on 429, case %d" % (week, i % 3, i),
                  "--file", "src/mod%d.py#handler_%d" % (i % 3, i % 3)]  # fmt: skip
    other.wctx("capture", "--summary", "week %d capture" % week, "--repo", other.workspace, *flags)
    push = other.sync(tmp=tmp)
    pull = obs.sync(tmp=tmp)
    stats.update(
        {
            "capture_sync_s": push["s"],
            "capture_sync_git": push["git"],
            "capture_pushed_files": push["report"]["exported"]["files"],
            "incr_sync_s": pull["s"],
            "incr_sync_git": pull["git"],
            "incr_files": pull["report"]["imported"]["files"],
            "incr_items": pull["report"]["imported"]["evidence"],
            "incr_vs_noop": pull["s"] / stats["noop_sync_s"],
        }
    )
    stats["week"] = week
    stats["load"] = os.getloadavg()[0]
    return stats


def build_remote(size, args, corpus, base, machines_src):
    """The team's branches holding ``size`` items over args.machines machines, laid out as wctx lays
    them out: each machine's files built by its own `wctx sync` into a private remote (the team's
    branch: its topology; its workspace's branch: its sessions), then each branch's files of every
    machine combined into one commit with git plumbing (the team's branch and one per workspace)."""
    print("building the branches of %d items ..." % size, file=sys.stderr, flush=True)
    remote = os.path.join(base, "big-%d.git" % size)
    git(base, "init", "-q", "--bare", remote)
    per = size // args.machines
    entries = {}  # branch -> ls-tree lines of every machine's files on it
    for m in range(args.machines):
        src = machines_src[m]
        home = os.path.join(base, "big-%d-m%02d" % (size, m))
        store = wctx.open_store(home)
        for name, path in sorted(src.repos.items()):
            wctx.register_repo(store, path, workspace="ws-" + name)
        export = os.path.join(home, "backlog.jsonl")
        corpus.write(export, src.workspace, per, 0, m)
        wctx.import_evidence(store, [export])
        private = os.path.join(home, "private.git")
        git(home, "init", "-q", "--bare", private)
        wctx.sync_memory(store, remote=private)
        store.close()
        git(remote, "fetch", "-q", private, "+refs/heads/*:refs/m/%d/*" % m)
        for b in branches(private):
            listed = git(remote, "ls-tree", "-r", "-z", "refs/m/%d/%s" % (m, b)).split(b"\0")
            entries.setdefault(b, []).extend(e for e in listed if e)
        shutil.rmtree(home, ignore_errors=True)
    index = os.path.join(base, "big-index")
    env = dict(BASE_ENV, GIT_INDEX_FILE=index)
    for b, rows in sorted(entries.items()):
        info = b"".join(b"%s %s\t%s\n" % (e.split()[0], e.split()[2], e.split(b"\t", 1)[1]) for e in rows)
        subprocess.run(["git", "-C", remote, "update-index", "--index-info"], input=info, env=env, check=True)
        tree = subprocess.run(["git", "-C", remote, "write-tree"], env=env, check=True, capture_output=True)
        commit = git(remote, "commit-tree", "-m", "team: " + b, tree.stdout.decode().strip()).decode().strip()
        git(remote, "update-ref", "refs/heads/" + b, commit)
        os.remove(index)
    scratch = git(remote, "for-each-ref", "--format=%(refname)", "refs/m/").decode().split()
    git(remote, "update-ref", "--stdin", input="".join("delete %s\n" % r for r in scratch).encode())
    return remote, per * args.machines


def newcomer(base, name, origins, workspace_of, remote, tmp, names=None):
    """A fresh machine's first `wctx sync`: clones of ``names`` (default: every repository), each
    registered in its workspace, as the team's machines do; and git's own fetch of the branches it
    reads into an empty repository (measured after it)."""
    m = Machine(999, os.path.join(base, name), origins, workspace_of, names)
    r = m.sync(remote=remote, tmp=tmp)
    workspaces = r["report"]["workspaces"]
    fetch_s, fetch_bytes, into = fetch_floor(remote, reader_branches(remote, workspaces), base)
    shutil.rmtree(into, ignore_errors=True)
    out = {
        "in": workspaces,
        "elsewhere": r["report"]["elsewhere"],
        "s": r["s"],
        "rss_mb": r["rss_mb"],
        "git": r["git"],
        "items": r["report"]["imported"]["evidence"],
        "files": r["report"]["imported"]["files"],
        "sync_repo_bytes": du(os.path.join(m.home, "sync", "memory.git", "objects")),
        "fetch_s": fetch_s,
        "fetch_bytes": fetch_bytes,
        "store_mb": du(m.home) / 1e6,
    }
    shutil.rmtree(m.dir, ignore_errors=True)
    return out


def profile_incremental(n, args, base):
    """Where the time of a sync goes, in-process under cProfile: machine A holds ``n`` items (its
    own, pushed); machine B's first sync pulls them (a newcomer); A captures --k items and syncs
    (the pushing side), B syncs (the pulling side), and B syncs again (a no-op). Returns the top
    functions of each by cumulative time."""
    import cProfile
    import pstats

    names = ["team-api"]
    origins = make_origins(os.path.join(base, "prof"), names)
    remote = os.path.join(base, "prof", "team.git")
    git(base, "init", "-q", "--bare", remote)
    machines = [
        Machine(i, os.path.join(base, "prof"), origins, {"team-api": "ws-team-api"}) for i in range(2)
    ]
    store = wctx.open_store(machines[0].home)
    roots = {r["name"]: r["root_commit"] for r in wctx.list_repos(store)}
    heads = {"team-api": git(origins["team-api"], "rev-parse", "HEAD").decode().strip()}
    corpus = Corpus(args.peers, n, roots, heads, args.per_session)
    export = os.path.join(base, "prof", "export.jsonl")
    corpus.write(export, "team-api", n, 0, 0)
    wctx.import_evidence(store, [export])
    wctx.sync_memory(store, remote=remote)
    other = wctx.open_store(machines[1].home)
    out = {"items": n}

    def profiled(label, st, **kw):
        prof = cProfile.Profile()
        start = time.perf_counter()
        prof.enable()
        report = wctx.sync_memory(st, **kw)
        prof.disable()
        out[label + "_s"] = time.perf_counter() - start
        out[label + "_report"] = report.as_dict()
        rows = []
        for (path, line, func), (_, calls, _, cum, _) in pstats.Stats(prof).stats.items():
            if os.path.basename(path) == "wctx.py" or func.startswith("<method 'execute"):
                rows.append((cum, "%s:%d %s" % (os.path.basename(path), line, func), calls))
        out[label + "_top"] = [
            (round(c, 3), name, calls) for c, name, calls in sorted(rows, reverse=True)[:16]
        ]

    profiled("newcomer", other, remote=remote)
    items = [{"kind": "finding", "claim": "handler_0 retries forever on 429, case %d" % i, "detail": None,
              "repo": "team-api", "files": ["src/mod0.py#handler_0"], "confidence": None} for i in range(args.k)]  # fmt: skip
    wctx.capture(store, items, summary="profiled capture", cwd=machines[0].cwd)
    profiled("push", store)
    profiled("pull", other)
    profiled("noop", other)
    store.close()
    other.close()
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=100_000, help="the team's items at the end of the year")
    ap.add_argument("--machines", type=int, default=50)
    ap.add_argument("--repos", type=int, default=5, help="repositories, one workspace each")
    ap.add_argument("--rounds", type=int, default=50, help="weeks after week 0")
    ap.add_argument("--active", type=int, default=5, help="machines that capture and sync each week")
    ap.add_argument(
        "--participants", type=int, default=5, help="machines whose syncs pull (the rest replayed)"
    )
    ap.add_argument("--backlog", type=float, default=0.5, help="share of --items imported in week 0")
    ap.add_argument("--per-session", type=int, default=10, help="items per session (one file each)")
    ap.add_argument("--k", type=int, default=10, help="items captured for the incremental sync")
    ap.add_argument("--checkpoints", default="10,25,50")
    ap.add_argument("--repeat", type=int, default=5, help="no-op syncs per checkpoint (median)")
    ap.add_argument("--newcomer-sizes", default="", help="also a newcomer's first sync at these sizes")
    ap.add_argument(
        "--sized-in",
        default="one,all",
        help="the --newcomer-sizes newcomers: in one workspace, in all, or both (one,all)",
    )
    ap.add_argument("--peers", default=os.path.join(ROOT, "..", "shared", "bench", "peers"))
    ap.add_argument(
        "--profile-items",
        type=int,
        help="only profile a newcomer's, an incremental and a no-op sync at this size",
    )
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--save", help="also write the JSON so far to this file after each phase")
    args = ap.parse_args(argv)

    def save():
        if args.save:
            with open(args.save, "w") as fh:
                json.dump(result, fh, indent=1, sort_keys=True)

    checkpoints = sorted({int(w) for w in args.checkpoints.split(",") if w and int(w) <= args.rounds})
    started = time.perf_counter()
    base = tempfile.mkdtemp(prefix="wctx-team-")
    tmp = os.path.join(base, "tmp")
    os.makedirs(tmp)
    old_home = os.environ.get("HOME")
    os.environ["HOME"] = base
    result = {"args": vars(args), "load_start": open("/proc/loadavg").read().strip()}
    if args.profile_items:
        os.environ["HOME"] = base
        try:
            prof = profile_incremental(args.profile_items, args, base)
        finally:
            if old_home is not None:
                os.environ["HOME"] = old_home
            shutil.rmtree(base, ignore_errors=True)
        for label in ("newcomer", "push", "pull", "noop"):
            print("%s side: %.3f s, %r" % (label, prof[label + "_s"], prof[label + "_report"]["imported"]))
            for row in prof[label + "_top"]:
                print("  %7.3f s  %s  (%d calls)" % row)
        return
    try:
        names = ["team-%s" % n for n in ("api", "web", "sdk", "infra", "data", "auth", "docs", "ml")][
            : args.repos
        ]
        names += ["team-r%d" % i for i in range(len(names), args.repos)]
        origins = make_origins(base, names)
        workspace_of = {n: "ws-" + n for n in names}
        print("cloning and registering for %d machines ..." % args.machines, file=sys.stderr, flush=True)
        t = time.perf_counter()
        machines = [Machine(i, base, origins, workspace_of) for i in range(args.machines)]
        result["setup_s"] = time.perf_counter() - t
        store = wctx.open_store(machines[0].home)
        roots = {r["name"]: r["root_commit"] for r in wctx.list_repos(store)}
        store.close()
        heads = {n: git(origins[n], "rev-parse", "HEAD").decode().strip() for n in names}
        corpus = Corpus(args.peers, args.items, roots, heads, args.per_session)
        remote = os.path.join(base, "team.git")
        git(base, "init", "-q", "--bare", remote)
        ws = workspace_of[names[0]]  # the workspace of the person in one (git's floors, newcomers)

        # Week 0: every machine's backlog, then its first sync, in turn: the writers' replayed, the
        # participants' (the last --participants machines) against the team remote.
        replayer = Replayer(base, remote)
        participants = set(range(args.machines - args.participants, args.machines))
        backlog = int(args.items * args.backlog) // args.machines
        weekly = (args.items - backlog * args.machines) // max(1, args.rounds * args.active)
        week0 = []
        print(
            "week 0: %d items on each of %d machines ..." % (backlog, args.machines),
            file=sys.stderr,
            flush=True,
        )
        for m in machines:
            export = os.path.join(tmp, "backlog.jsonl")
            corpus.write(export, m.workspace, backlog, 0, m.index)
            imp = m.wctx("import-evidence", export, "--json")
            r = m.sync(remote=remote, tmp=tmp) if m.index in participants else m.write_sync(replayer, tmp)
            week0.append({"machine": m.index, "participant": m.index in participants, "import_s": imp[0],
                          "import_rss_mb": imp[1] / 1024, "sync_s": r["s"], "replay_s": r.get("replay_s"),
                          "sync_rss_mb": r["rss_mb"], "pulled": r["report"]["imported"]["evidence"],
                          "pulled_files": r["report"]["imported"]["files"], "git": r["git"]})  # fmt: skip
        result["week0"] = week0
        save()
        result["checkpoints"] = []
        weeks = []
        obs = [machines[i] for i in sorted(participants)]
        for week in range(1, args.rounds + 1):
            active = [machines[(week * args.active + j) % args.machines] for j in range(args.active)]
            rows = []
            for m in active:
                export = os.path.join(tmp, "week.jsonl")
                corpus.write(export, m.workspace, weekly, week, m.index)
                m.wctx("import-evidence", export, "--json")
                part = m.index in participants
                r = m.sync(tmp=tmp) if part else m.write_sync(replayer, tmp)
                rows.append({"machine": m.index, "participant": part, "s": r["s"], "rss_mb": r["rss_mb"],
                             "git": r["git"], "replay_s": r.get("replay_s"),
                             "pulled": r["report"]["imported"]["evidence"],
                             "pulled_files": r["report"]["imported"]["files"],
                             "pushed_files": r["report"]["exported"]["files"], "tries": r["report"]["tries"]})  # fmt: skip
            weeks.append({"week": week, "syncs": rows})
            print("week %d: syncs %s s" % (week, " ".join("%.2f%s" % (r["s"], "p" if r["participant"] else "")
                                                          for r in rows)), file=sys.stderr, flush=True)  # fmt: skip
            if week in checkpoints:
                cp = checkpoint(week, obs[-1], obs[-2 if len(obs) > 1 else 0], remote, base, args, tmp, ws)
                cp["items"] = corpus.next_item + len(result["checkpoints"]) * args.k + args.k
                result["checkpoints"].append(cp)
                result["weeks"] = weeks
                save()
        result["weeks"] = weeks
        result["items_written"] = corpus.next_item + len(checkpoints) * args.k
        # A newcomer in one workspace (its one repository registered there) against one in all.
        result["newcomer"] = []
        for label, subset in (("one", names[:1]), ("all", None)):
            print("newcomer in %s workspaces ..." % label, file=sys.stderr, flush=True)
            row = newcomer(base, "newcomer-" + label, origins, workspace_of, remote, tmp, subset)
            result["newcomer"].append(dict(row, size=result["items_written"], built=False))
            save()
        sized = [(label, subset) for label, subset in (("one", names[:1]), ("all", None))
                 if label in args.sized_in.split(",")]  # fmt: skip
        for size in [int(s) for s in args.newcomer_sizes.split(",") if s]:
            big_corpus = Corpus(args.peers, size, roots, heads, args.per_session)
            t = time.perf_counter()
            big, n = build_remote(size, args, big_corpus, base, machines)
            build_s = time.perf_counter() - t
            stats = remote_stats(big, base, ws)
            for into, _ in stats.pop("_uptodate").values():
                shutil.rmtree(into, ignore_errors=True)
            result.setdefault("sized", []).append(dict(stats, size=n, build_s=build_s))
            for label, subset in sized:
                print("newcomer of %d items in %s workspaces ..." % (n, label), file=sys.stderr, flush=True)
                row = newcomer(
                    base, "newcomer-%d-%s" % (size, label), origins, workspace_of, big, tmp, subset
                )
                row.update(size=n, built=True)
                result["newcomer"].append(row)
                save()
            shutil.rmtree(big, ignore_errors=True)
    finally:
        if old_home is not None:
            os.environ["HOME"] = old_home
        shutil.rmtree(base, ignore_errors=True)
    result["load_end"] = open("/proc/loadavg").read().strip()
    result["total_s"] = time.perf_counter() - started
    result["cpu_children_s"] = sum(resource.getrusage(resource.RUSAGE_CHILDREN)[:2])
    if args.json:
        print(json.dumps(result, indent=2, sort_keys=True))
    else:
        print_table(result)


def _med(values):
    return statistics.median(values) if values else float("nan")


def print_table(r):
    a = r["args"]
    print("%d machines (%d whose syncs pull), %d repositories (one workspace each), %d items (%d%% backlog in "
          "week 0), %d weeks, %d machines active a week; load %s -> %s; %.0f s" % (
          a["machines"], a["participants"], a["repos"], r["items_written"], a["backlog"] * 100, a["rounds"],
          a["active"], r["load_start"], r["load_end"], r["total_s"]))  # fmt: skip
    w0 = r["week0"]
    print("\nweek 0: import-evidence of a machine's backlog median %.2f s; a writer's first sync (push only) "
          "median %.2f s + replay %.2f s" % (_med([x["import_s"] for x in w0]),
          _med([x["sync_s"] for x in w0 if not x["participant"]]),
          _med([x["replay_s"] for x in w0 if not x["participant"]])))  # fmt: skip
    print("\n| first sync pulling | files | seconds | git's share s | peak RSS MB |")
    print("|" + " ---: |" * 5)
    for x in w0:
        if x["participant"]:
            print("| %d | %d | %.2f | %.2f | %.0f |" % (x["pulled"], x["pulled_files"], x["sync_s"],
                  sum(x["git"].values()), x["sync_rss_mb"]))  # fmt: skip
    cps = r["checkpoints"]
    ws = cps[0]["workspace"] if cps else (r["newcomer"][0]["in"] or ["?"])[0]
    print("\nThe remote: the team's branch and one branch per workspace; a person in one workspace (%s) "
          "fetches the team's branch and that workspace's." % ws)  # fmt: skip
    print(
        "\n| after week | items | remote MB | objects reachable | loose / packs | commits: team + workspaces "
        "| files (sessions) | team branch files | workspace branches: n, files min / median / max "
        "| git fetch, one workspace: s (MB sent) | git fetch, every branch: s (MB sent) |"
    )
    print("|" + " ---: |" * 11)
    for cp in cps:
        lo, med, hi = cp["ws_files_min_med_max"]
        print("| %d | %d | %.1f | %d | %d / %d | %d + %d | %d (%d) | %d | %d: %d / %d / %d | %.2f (%.2f) "
              "| %.2f (%.2f) |" % (
              cp["week"], cp["items"], cp["remote_bytes"] / 1e6, cp["objects_reachable"], cp["objects"]["count"],
              cp["objects"]["packs"], cp["team_commits"], cp["ws_commits"], cp["files"], cp["session_files"],
              cp["team_files"], cp["ws_branches"], lo, med, hi, cp["fetch_ws_s"], cp["fetch_ws_bytes"] / 1e6,
              cp["fetch_all_s"], cp["fetch_all_bytes"] / 1e6))  # fmt: skip
    print(
        "\n| after week | weekly syncs that pull, median s (git's share) | writers' push-only syncs, median s "
        "| their replay (fetch tip, commit, git push), median s |"
    )
    print("|" + " ---: |" * 4)
    prev = 0
    for cp in cps:
        weeks = [w for w in r["weeks"] if prev < w["week"] <= cp["week"]]
        prev = cp["week"]
        pull = [s for w in weeks for s in w["syncs"] if s["participant"]]
        push = [s for w in weeks for s in w["syncs"] if not s["participant"]]
        print("| %d | %.2f (%.2f) | %.2f | %.2f |" % (cp["week"], _med([s["s"] for s in pull]),
              _med([sum(s["git"].values()) for s in pull]), _med([s["s"] for s in push]),
              _med([s["replay_s"] for s in push])))  # fmt: skip
    print(
        "\n| after week | git no-op fetch s: one workspace / every branch | no-op sync `wctx.py` s (git's share) "
        "| its start-up s | ratio | no-op sync, module cached s | its start-up s | ratio | capture + sync s "
        "| next machine's sync s (files, items) | that / its no-op |"
    )
    print("|" + " ---: |" * 11)
    for cp in cps:
        print("| %d | %.3f / %.3f | %.3f (%.3f) | %.3f | %.1f× | %.3f | %.3f | %.1f× | %.2f | %.2f (%d, %d) "
              "| %.1f× |" % (
              cp["week"], cp["noop_fetch_ws_s"], cp["noop_fetch_all_s"], cp["noop_sync_s"], cp["noop_sync_git_s"],
              cp["startup_s"], cp["noop_ratio"], cp["noop_sync_module_s"], cp["startup_module_s"],
              cp["noop_ratio_module"], cp["capture_sync_s"], cp["incr_sync_s"], cp["incr_files"], cp["incr_items"],
              cp["incr_vs_noop"]))  # fmt: skip
    print(
        "\n| newcomer's first sync: team's items | in workspaces | items imported | files | seconds | items/s "
        "| git's share s | peak RSS MB | its sync repository MB | store MB "
        "| git fetch of its branches alone, s (MB sent) |"
    )
    print("| ---: | --- |" + " ---: |" * 9)
    for n in r["newcomer"]:
        where = "all %d" % len(n["in"]) if not n["elsewhere"] else ", ".join(n["in"]) + " (1 of %d)" % (
            len(n["in"]) + len(n["elsewhere"]))  # fmt: skip
        print("| %d%s | %s | %d | %d | %.1f | %.0f | %.1f | %.0f | %.1f | %.1f | %.2f (%.1f) |" % (
              n["size"], " (built)" if n.get("built") else "", where, n["items"], n["files"], n["s"],
              n["items"] / n["s"], sum(n["git"].values()), n["rss_mb"], n["sync_repo_bytes"] / 1e6, n["store_mb"],
              n["fetch_s"], n["fetch_bytes"] / 1e6))  # fmt: skip
    for st in r.get("sized", []):
        print(
            "\nbuilt %d items in %.0f s: remote %.1f MB, team branch %d files, %d workspace branches of %d / %d / %d "
            "files (min / median / max); git fetch of one workspace %.2f s (%.1f MB), of every branch %.2f s "
            "(%.1f MB)"
            % (st["size"], st["build_s"], st["remote_bytes"] / 1e6, st["team_files"], st["ws_branches"],
               *st["ws_files_min_med_max"], st["fetch_ws_s"], st["fetch_ws_bytes"] / 1e6, st["fetch_all_s"],
               st["fetch_all_bytes"] / 1e6)
        )  # fmt: skip
    by_size = {}
    for n in r["newcomer"]:
        by_size.setdefault((n["size"], bool(n.get("built"))), {})["all" if not n["elsewhere"] else "one"] = n
    for (size, _), pair in sorted(by_size.items()):
        if "one" in pair and "all" in pair:
            one, every = pair["one"], pair["all"]
            print("\n%d items: a newcomer in 1 workspace of %d reads %.1f× fewer bytes (git's pack), imports "
                  "%.1f× fewer items, in %.2f× the seconds and %.2f× the peak RSS of one in every workspace" % (
                  size, len(every["in"]), every["fetch_bytes"] / max(1, one["fetch_bytes"]),
                  every["items"] / max(1, one["items"]), one["s"] / every["s"],
                  one["rss_mb"] / every["rss_mb"]))  # fmt: skip


if __name__ == "__main__":
    main()
