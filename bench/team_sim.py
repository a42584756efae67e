#!/usr/bin/env python3
"""A fifty-person team sharing memory through `wctx sync` for a year, against a local bare remote.

    python3 bench/team_sim.py                                   # 100,000 items, 50 machines, 50 weeks
    python3 bench/team_sim.py --items 5000 --machines 10 --rounds 10 --checkpoints 2,5,10
    python3 bench/team_sim.py --newcomer-sizes 300000,1000000 --json
    python3 bench/team_sim.py --profile-items 100000           # where one sync's time goes (cProfile)

Each machine is its own WCTX_HOME (its own store) with its own clones of the same small
repositories (--repos, one workspace each; machine m works in workspace m mod --repos). wctx runs
as users run it: `wctx.py import-evidence FILE` loads a machine's items, `wctx.py capture` records a
few, and every sync is `wctx.py sync --json` in a new process, with WCTX_HOME set and the cwd in a
registered checkout. Git's own share of each sync is read from GIT_TRACE2_EVENT (every git command
wctx runs: fetch, push, ls-tree, cat-file, fast-import ...); the rest is wctx's (Python start-up,
SQLite, building and parsing files).

Machines: the last --participants sync against the team remote for real (fetch, import, export,
push). The others are writers: their `wctx.py sync` goes to a private remote of their own, and
Replayer puts that push on the team branch (one commit per sync, the files wctx built), so that
the remote grows as if all had pushed, without each writer first pulling the whole team's memory
(which costs what a newcomer's sync costs, measured below).

The year:
  week 0    every machine imports its backlog (--backlog of --items) and syncs once, in turn (the
            participants last: their first syncs pull everything before them);
  week 1..  --active machines (round robin) each import their share of the rest of --items (one
            export file of new sessions) and sync; a participant pulls what is new since its last;
  checkpoint after the weeks in --checkpoints: the remote's size (du -sb, git count-objects -v),
            commits, files and refs of the branch; a bare `git fetch` of the branch into an empty
            repository (git's cost for any reader of it) and into an up-to-date one (git's no-op);
            a no-op sync launched as `python3 wctx.py` and as the module with cached bytecode, and
            `wctx --version` both ways (medians of --repeat, interleaved with git's no-op fetch);
            an incremental sync: one participant captures --k items and syncs, another then syncs
            (what it imported, and its time against its no-op sync).
At the end:
  newcomer  a fresh store's first sync of the whole branch: seconds and peak RSS (os.wait4);
  workspace a person in 1 of --repos workspaces needs that workspace's machines' files only. This
            reads the team's branch alone (wctx now writes one branch per workspace beside it:
            bench/sync_workspaces.py measures that layout); the baseline is the whole branch; prototypes measured on the same content,
            without changing wctx: a shallow fetch (--depth 1), one branch per workspace (built
            with git plumbing from the branch's current files), and a partial clone
            (--filter=blob:none, then only the workspace's blobs);
  sizes     --newcomer-sizes: a newcomer's first sync of a branch of N items written by --machines
            machines (each machine's files built by its own sync into a private remote, the
            branches combined with git plumbing into one commit), seconds and peak RSS.
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


def run(cmd, env, cwd, trace=None):
    """Run ``cmd``; returns (seconds, peak RSS in KiB of it and its children, stdout). The rusage
    is this child's alone (os.wait4), whatever ran before."""
    env = dict(env)
    if trace:
        env["GIT_TRACE2_EVENT"] = trace
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = (
            os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status
        )
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if proc.returncode != 0:
        raise SystemExit("%s failed (%s): %s" % (" ".join(cmd[:3]), proc.returncode, stderr[-2000:]))
    return seconds, usage.ru_maxrss, stdout


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
    def __init__(self, index, base, origins, workspace_of):
        self.index = index
        self.dir = os.path.join(base, "m%02d" % index)
        self.home = os.path.join(self.dir, "wctx")
        self.repos = {}
        os.makedirs(self.dir)
        for name, origin in origins.items():
            path = os.path.join(self.dir, "src", name)
            git(self.dir, "clone", "-q", origin, path)
            self.repos[name] = path
        self.workspace = sorted(origins)[index % len(origins)]  # the repository it works in
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
            self.machine_id = wctx._store_machine_id(store)
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
    """Puts a writer machine's sync onto the team branch: the machine's `wctx sync` pushed its
    files to a private remote (a real sync, minus the pull); its ``machines/<id>/`` tree then
    replaces the one on the team branch's tip in a new commit, pushed to the team remote with an
    ordinary `git push` (through receive-pack, as wctx's own push). The branch gets what that
    machine's sync against the team remote would have pushed, one commit per sync, without the
    machine pulling everyone else's files first (each such pull costs what a newcomer's does)."""

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
    """Small real repositories, a few commits each, as bare origins every machine clones."""
    origins = {}
    for name in names:
        work = os.path.join(base, "work", name)
        os.makedirs(os.path.join(work, "src"))
        git(work, "init", "-q")
        for i in range(3):
            with open(os.path.join(work, "src", "mod%d.py" % i), "w") as fh:
                fh.write("def handler_%d(x):\n    return x + %d\n" % (i, i))
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


def remote_stats(remote, base):
    """Size and shape of the remote and of its branch, and git's own cost to fetch it."""
    objects = {}
    for line in git(remote, "count-objects", "-v").decode().splitlines():
        key, _, value = line.partition(":")
        objects[key.strip()] = int(value.strip())
    tree = git(remote, "ls-tree", "-r", "--name-only", "-z", BRANCH).split(b"\0")
    stats = {
        "remote_bytes": du(remote),
        "objects": objects,
        "commits": int(git(remote, "rev-list", "--count", BRANCH)),
        "objects_reachable": len(git(remote, "rev-list", "--objects", BRANCH).splitlines()),
        "files": sum(1 for p in tree if p),
        "session_files": sum(1 for p in tree if b"/sessions/" in p),
        "refs": len(git(remote, "for-each-ref").splitlines()),
    }
    into = tempfile.mkdtemp(prefix="fetch-", dir=base)
    git(into, "init", "-q", "--bare")
    spec = "+refs/heads/%s:refs/heads/%s" % (BRANCH, BRANCH)
    stats["fetch_full_s"] = timed_git(into, "fetch", "-q", "--no-tags", remote, spec)
    stats["fetch_full_bytes"] = du(into)
    stats["_uptodate"] = into  # an equivalent repository for git's no-op fetch
    return stats


def noop_pair(machine, remote, into, repeat, tmp):
    """Medians of a no-op `wctx sync` (launched both ways, see Machine.wctx) and of a bare no-op
    `git fetch` of the same branch into an up-to-date repository, interleaved; and of
    `wctx --version` (start-up alone) launched both ways."""
    spec = "+refs/heads/%s:refs/heads/%s" % (BRANCH, BRANCH)
    runs = {
        k: [] for k in ("fetch", "script", "module", "script_git", "module_git", "script_up", "module_up")
    }
    machine.wctx("--version", launch="module")  # the bytecode cache written once
    for _ in range(repeat):
        runs["fetch"].append(timed_git(into, "fetch", "-q", "--no-tags", remote, spec))
        for launch in ("script", "module"):
            runs[launch + "_up"].append(machine.wctx("--version", launch=launch)[0])
            r = machine.sync(tmp=tmp, launch=launch)
            if not r["report"].get("noop"):
                raise SystemExit("expected a no-op sync, got %r" % r["report"])
            runs[launch].append(r["s"])
            runs[launch + "_git"].append(sum(r["git"].values()))
    m = {k: statistics.median(v) for k, v in runs.items()}
    return {
        "noop_fetch_s": m["fetch"],
        "noop_sync_s": m["script"],
        "noop_sync_git_s": m["script_git"],
        "startup_s": m["script_up"],
        "noop_ratio": m["script"] / m["fetch"],
        "noop_sync_module_s": m["module"],
        "noop_sync_module_git_s": m["module_git"],
        "startup_module_s": m["module_up"],
        "noop_ratio_module": m["module"] / m["fetch"],
    }


def checkpoint(week, obs, other, remote, base, args, tmp):
    print("  checkpoint after week %d ..." % week, file=sys.stderr, flush=True)
    other.sync(tmp=tmp)  # both up to date with the remote
    obs.sync(tmp=tmp)
    stats = remote_stats(remote, base)
    into = stats.pop("_uptodate")
    stats.update(noop_pair(obs, remote, into, args.repeat, tmp))
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
    shutil.rmtree(into, ignore_errors=True)
    stats["week"] = week
    stats["load"] = os.getloadavg()[0]
    return stats


def workspace_fetch(remote, machines_by_ws, ws, base):
    """What a person in workspace ``ws`` fetches today (the whole branch) and with three layouts
    that would bring only that workspace's machines' files."""
    spec = "+refs/heads/%s:refs/heads/%s" % (BRANCH, BRANCH)
    out = {"workspace": ws, "workspaces": len(machines_by_ws)}
    entries = git(remote, "ls-tree", "-r", "-z", BRANCH).split(b"\0")
    mine = tuple(("machines/%s/" % m).encode() for m in machines_by_ws[ws])
    wanted = [e for e in entries if e and e.split(b"\t", 1)[1].startswith(mine)]
    out["files_all"] = sum(1 for e in entries if e)
    out["files_ws"] = len(wanted)

    def fresh():
        d = tempfile.mkdtemp(prefix="ws-", dir=base)
        git(d, "init", "-q", "--bare")
        return d

    d = fresh()
    out["full_s"] = timed_git(d, "fetch", "-q", "--no-tags", remote, spec)
    out["full_bytes"] = du(d)
    d = fresh()
    out["shallow_s"] = timed_git(d, "fetch", "-q", "--no-tags", "--depth", "1", remote, spec)
    out["shallow_bytes"] = du(d)
    # One branch per workspace: the workspace's machines' current files in one commit, pushed to
    # a copy of the remote (the same objects), fetched alone.
    copy = os.path.join(base, "ws-remote.git")
    git(base, "clone", "-q", "--bare", "--no-local", remote, copy)
    index = os.path.join(base, "ws-index")
    env = dict(BASE_ENV, GIT_INDEX_FILE=index)
    info = b"".join(
        b"%s %s\t%s\n" % (e.split(b"\t")[0].split()[0], e.split(b"\t")[0].split()[2], e.split(b"\t", 1)[1])
        for e in wanted
    )
    subprocess.run(["git", "-C", copy, "update-index", "--index-info"], input=info, env=env, check=True)
    tree = subprocess.run(["git", "-C", copy, "write-tree"], env=env, check=True, capture_output=True)
    commit = git(copy, "commit-tree", "-m", "workspace " + ws, tree.stdout.decode().strip()).decode().strip()
    git(copy, "update-ref", "refs/heads/ws/" + ws, commit)
    os.remove(index)
    d = fresh()
    out["ws_branch_s"] = timed_git(d, "fetch", "-q", "--no-tags", copy, "+refs/heads/ws/%s:refs/heads/x" % ws)
    out["ws_branch_bytes"] = du(d)
    # Partial clone: the branch without blobs, then the workspace's blobs in one fetch.
    git(remote, "config", "uploadpack.allowFilter", "true")
    git(remote, "config", "uploadpack.allowAnySHA1InWant", "true")
    d = fresh()
    git(d, "config", "remote.origin.url", remote)
    git(d, "config", "remote.origin.promisor", "true")
    git(d, "config", "remote.origin.partialclonefilter", "blob:none")
    start = time.perf_counter()
    git(d, "fetch", "-q", "--no-tags", "--filter=blob:none", "origin", spec)
    out["partial_trees_s"] = time.perf_counter() - start
    out["partial_trees_bytes"] = du(d)
    blobs = b"".join(e.split(b"\t")[0].split()[2] + b"\n" for e in wanted)
    start = time.perf_counter()
    git(d, "-c", "fetch.negotiationAlgorithm=noop", "fetch", "-q", "--no-tags", "--no-write-fetch-head",
        "--filter=blob:none", "--stdin", "origin", input=blobs)  # fmt: skip
    out["partial_blobs_s"] = time.perf_counter() - start
    out["partial_s"] = out["partial_trees_s"] + out["partial_blobs_s"]
    out["partial_bytes"] = du(d)
    git(remote, "config", "--unset", "uploadpack.allowFilter")
    git(remote, "config", "--unset", "uploadpack.allowAnySHA1InWant")
    return out


def build_remote(size, args, corpus, base, machines_src):
    """A branch of ``size`` items over args.machines machines, each machine's files built by its
    own `wctx sync` into a private remote, combined into one commit with git plumbing."""
    print("building a branch of %d items ..." % size, file=sys.stderr, flush=True)
    remote = os.path.join(base, "big-%d.git" % size)
    git(base, "init", "-q", "--bare", remote)
    per = size // args.machines
    entries = []
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
        git(remote, "fetch", "-q", private, "+refs/heads/%s:refs/m/%d" % (BRANCH, m))
        entries += [e for e in git(remote, "ls-tree", "-r", "-z", "refs/m/%d" % m).split(b"\0") if e]
        shutil.rmtree(home, ignore_errors=True)
    index = os.path.join(base, "big-index")
    env = dict(BASE_ENV, GIT_INDEX_FILE=index)
    info = b"".join(b"%s %s\t%s\n" % (e.split()[0], e.split()[2], e.split(b"\t", 1)[1]) for e in entries)
    subprocess.run(["git", "-C", remote, "update-index", "--index-info"], input=info, env=env, check=True)
    tree = subprocess.run(["git", "-C", remote, "write-tree"], env=env, check=True, capture_output=True)
    commit = git(remote, "commit-tree", "-m", "team", tree.stdout.decode().strip()).decode().strip()
    git(remote, "update-ref", "refs/heads/" + BRANCH, commit)
    for m in range(args.machines):
        git(remote, "update-ref", "-d", "refs/m/%d" % m)
    os.remove(index)
    return remote, per * args.machines


def newcomer(base, name, origins, workspace_of, remote, tmp):
    m = Machine(999, os.path.join(base, name), origins, workspace_of)
    r = m.sync(remote=remote, tmp=tmp)
    spec = "+refs/heads/%s:refs/heads/%s" % (BRANCH, BRANCH)
    into = tempfile.mkdtemp(prefix="fetch-", dir=base)
    git(into, "init", "-q", "--bare")
    fetch = timed_git(into, "fetch", "-q", "--no-tags", remote, spec)
    shutil.rmtree(into, ignore_errors=True)
    out = {
        "s": r["s"],
        "rss_mb": r["rss_mb"],
        "git": r["git"],
        "items": r["report"]["imported"]["evidence"],
        "files": r["report"]["imported"]["files"],
        "fetch_s": fetch,
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
                cp = checkpoint(week, obs[-1], obs[-2 if len(obs) > 1 else 0], remote, base, args, tmp)
                cp["items"] = corpus.next_item + len(result["checkpoints"]) * args.k + args.k
                result["checkpoints"].append(cp)
                result["weeks"] = weeks
                save()
        result["weeks"] = weeks
        result["items_written"] = corpus.next_item + len(checkpoints) * args.k
        print("newcomer ...", file=sys.stderr, flush=True)
        result["newcomer"] = [dict(newcomer(base, "newcomer", origins, workspace_of, remote, tmp),
                                   size=result["items_written"])]  # fmt: skip
        by_ws = {}
        for m in machines:
            store = wctx.open_store(m.home)
            by_ws.setdefault(m.workspace, []).append(wctx._store_machine_id(store))
            store.close()
        result["workspace"] = workspace_fetch(remote, by_ws, names[0], base)
        save()
        for size in [int(s) for s in args.newcomer_sizes.split(",") if s]:
            big_corpus = Corpus(args.peers, size, roots, heads, args.per_session)
            t = time.perf_counter()
            big, n = build_remote(size, args, big_corpus, base, machines)
            build_s = time.perf_counter() - t
            stats = remote_stats(big, base)
            shutil.rmtree(stats.pop("_uptodate"), ignore_errors=True)
            print("newcomer of %d items ..." % n, file=sys.stderr, flush=True)
            row = dict(newcomer(base, "newcomer-%d" % size, origins, workspace_of, big, tmp), size=n)
            row.update(build_s=build_s, remote_bytes=stats["remote_bytes"], files=stats["files"],
                       fetch_full_s=stats["fetch_full_s"], fetch_full_bytes=stats["fetch_full_bytes"])  # fmt: skip
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
    print(
        "\n| after week | items | commits | files (sessions) | objects reachable | loose / packs | remote MB "
        "| git fetch of the branch, s (MB) | weekly syncs that pull, median s (git's share) "
        "| writers' push-only syncs, median s | their replay (fetch tip, commit, git push), median s |"
    )
    print("|" + " ---: |" * 11)
    prev = 0
    for cp in r["checkpoints"]:
        weeks = [w for w in r["weeks"] if prev < w["week"] <= cp["week"]]
        prev = cp["week"]
        pull = [s for w in weeks for s in w["syncs"] if s["participant"]]
        push = [s for w in weeks for s in w["syncs"] if not s["participant"]]
        print("| %d | %d | %d | %d (%d) | %d | %d / %d | %.1f | %.2f (%.1f) | %.2f (%.2f) | %.2f | %.2f |" % (
              cp["week"], cp["items"], cp["commits"], cp["files"], cp["session_files"], cp["objects_reachable"],
              cp["objects"]["count"], cp["objects"]["packs"], cp["remote_bytes"] / 1e6, cp["fetch_full_s"],
              cp["fetch_full_bytes"] / 1e6, _med([s["s"] for s in pull]),
              _med([sum(s["git"].values()) for s in pull]), _med([s["s"] for s in push]),
              _med([s["replay_s"] for s in push])))  # fmt: skip
    print(
        "\n| after week | git no-op fetch s | no-op sync `wctx.py` s (git's share) | its start-up s | ratio "
        "| no-op sync, module cached s | its start-up s | ratio | capture + sync s | next machine's sync s "
        "(files, items) | that / its no-op |"
    )
    print("|" + " ---: |" * 11)
    for cp in r["checkpoints"]:
        print("| %d | %.3f | %.3f (%.3f) | %.3f | %.1f× | %.3f | %.3f | %.1f× | %.2f | %.2f (%d, %d) | %.1f× |" % (
              cp["week"], cp["noop_fetch_s"], cp["noop_sync_s"], cp["noop_sync_git_s"], cp["startup_s"],
              cp["noop_ratio"], cp["noop_sync_module_s"], cp["startup_module_s"], cp["noop_ratio_module"],
              cp["capture_sync_s"], cp["incr_sync_s"], cp["incr_files"], cp["incr_items"],
              cp["incr_vs_noop"]))  # fmt: skip
    print(
        "\n| newcomer's first sync, items | files | seconds | items/s | git's share s | peak RSS MB | store MB "
        "| git fetch alone s |"
    )
    print("|" + " ---: |" * 8)
    for n in r["newcomer"]:
        print("| %d | %d | %.1f | %.0f | %.1f | %.0f | %.0f | %.2f |" % (n["items"], n["files"], n["s"],
              n["items"] / n["s"], sum(n["git"].values()), n["rss_mb"], n["store_mb"], n["fetch_s"]))  # fmt: skip
    ws = r["workspace"]
    print("\n| a person in workspace %s (1 of %d: %d of %d files) | seconds | MB |" % (
          ws["workspace"], ws["workspaces"], ws["files_ws"], ws["files_all"]))  # fmt: skip
    print("| --- | ---: | ---: |")
    for key, label in (("full", "fetch the whole branch (today)"), ("shallow", "the whole branch, --depth 1"),
                       ("ws_branch", "one branch per workspace"),
                       ("partial", "partial clone (blob:none) + its blobs")):  # fmt: skip
        print("| %s | %.2f | %.2f |" % (label, ws[key + "_s"], ws[key + "_bytes"] / 1e6))


if __name__ == "__main__":
    main()
