#!/usr/bin/env python3
"""Speed of team sharing: export, import-evidence and sync at N items.

    python3 bench/sync.py                 # 100,000 items in 1,000 sessions
    python3 bench/sync.py --items 10000 --json

One run, in this order, each against a baseline measured in the same run:
  import        wctx.import_evidence of a generated export into a fresh store (the bulk path);
                baseline: json.loads of every line into one table with an FTS5 index
  export        wctx.export_evidence(out_dir=...) of every item (one file per session);
                baseline: every item and anchor row read and written as one JSON line
  sync-first    the first `wctx sync` of the loaded store into an empty bare repository
  fetch         baseline: a bare `git fetch` of that branch into an empty repository (git's own
                cost, which a sync pays whatever wctx does)
  sync-noop     `wctx sync` again with nothing new on either side
  sync-capture  `wctx sync` after one capture (one new session file to build and push)
  sync-pull     a second machine's first `wctx sync`, importing everything
Budgets (the sync issue): export and import of 100,000 items <= 10 s each; a no-op sync <= 1 s
plus git's own fetch.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import wctx  # noqa: E402

GIT = ["git", "-c", "init.defaultBranch=main", "-c", "core.hooksPath=/dev/null"]
ENV = dict(
    os.environ,
    GIT_AUTHOR_NAME="bench",
    GIT_AUTHOR_EMAIL="bench@example.invalid",
    GIT_COMMITTER_NAME="bench",
    GIT_COMMITTER_EMAIL="bench@example.invalid",
    GIT_CONFIG_GLOBAL=os.devnull,
    GIT_CONFIG_NOSYSTEM="1",
)


def git(cwd, *args):
    return subprocess.run([*GIT, "-C", cwd, *args], env=ENV, check=True, capture_output=True).stdout


def make_repo(base):
    path = os.path.join(base, "bench-sdk")
    os.makedirs(path)
    git(path, "init", "-q")
    with open(os.path.join(path, "upload.py"), "w") as fh:
        fh.write("def upload_document(x):\n    return x\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    head = git(path, "rev-parse", "HEAD").decode().strip()
    return path, head


def write_corpus(directory, repo, root, head, items, sessions):
    """An export of ``items`` findings over ``sessions`` sessions, three in four citing a symbol."""
    os.makedirs(directory)
    per = items // sessions
    n = 0
    for s in range(sessions):
        sid = "ses-%010x" % s
        lines = [
            {"type": "session", "format": 1, "id": sid, "agent": "bench", "repo": repo, "commit": head,
             "started_at": "2026-01-01T00:00:00Z", "ended_at": "2026-01-01T01:00:00Z",
             "summary": "bench session %d" % s}
        ]  # fmt: skip
        for _ in range(per):
            anchors = []
            if n % 4:
                anchors.append({"repo": repo, "root_commit": root, "path": "upload.py",
                                "symbol": "upload_document", "commit": head})  # fmt: skip
            lines.append(
                {"type": "evidence", "format": 1, "id": "ev-%010x" % n, "session": sid, "repo": repo,
                 "root_commit": root, "kind": "finding", "claim": "finding %d about retry %d" % (n, n % 97),
                 "detail": None, "confidence": None, "status": "active",
                 "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
                 "anchors": anchors}
            )  # fmt: skip
            n += 1
        with open(os.path.join(directory, sid + ".jsonl"), "w") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in lines)
    return n


def export_floor(db_path, out):
    """Baseline: what any exporter pays: read every item and anchor row, one JSON line each, one
    file per session."""
    import sqlite3

    con = sqlite3.connect(db_path)
    anchors = {}
    for row in con.execute("SELECT evidence_rid, path, symbol, commit_sha FROM anchors"):
        anchors.setdefault(row[0], []).append({"path": row[1], "symbol": row[2], "commit": row[3]})
    files = {}
    for rid, eid, sid, claim in con.execute(
        "SELECT rid, id, session_id, claim FROM evidence ORDER BY session_id, created_at"
    ):
        rec = {"id": eid, "session": sid, "claim": claim, "anchors": anchors.get(rid, [])}
        files.setdefault(sid, []).append(json.dumps(rec, sort_keys=True) + "\n")
    con.close()
    os.makedirs(out)
    for sid, lines in files.items():
        with open(os.path.join(out, sid + ".jsonl"), "w") as fh:
            fh.writelines(lines)


def import_floor(seed, db_path):
    """Baseline: parse every line and insert it into one table with an FTS5 index, in one
    transaction."""
    import sqlite3

    con = sqlite3.connect(db_path, isolation_level=None)
    con.execute("CREATE TABLE t(id TEXT PRIMARY KEY, claim TEXT, anchors TEXT)")
    con.execute("CREATE VIRTUAL TABLE f USING fts5(claim)")
    con.execute("BEGIN")
    for name in sorted(os.listdir(seed)):
        with open(os.path.join(seed, name), "rb") as fh:
            recs = [json.loads(line) for line in fh]
        rows = [(r["id"], r["claim"], json.dumps(r["anchors"])) for r in recs if r["type"] == "evidence"]
        con.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
        con.executemany("INSERT INTO f(claim) VALUES (?)", [(r[1],) for r in rows])
    con.execute("COMMIT")
    con.close()


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--sessions", type=int, default=1_000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    base = tempfile.mkdtemp(prefix="wctx-bench-sync-")
    old_home = os.environ.get("HOME")
    os.environ["HOME"] = base
    try:
        repo, head = make_repo(base)
        seed = os.path.join(base, "seed")
        store_a = wctx.open_store(os.path.join(base, "a"))
        wctx.register_repo(store_a, repo, workspace="bench")
        root = store_a.one("SELECT root_commit FROM repos")["root_commit"]
        n = write_corpus(seed, "bench-sdk", root, head, args.items, args.sessions)
        results = {"items": n, "sessions": args.sessions}
        results["import-floor"], _ = timed(lambda: import_floor(seed, os.path.join(base, "floor.db")))
        results["import"], _ = timed(lambda: wctx.import_evidence(store_a, [seed]))
        out = os.path.join(base, "export")
        cpu = time.process_time()
        results["export-floor"], _ = timed(lambda: export_floor(store_a.path, os.path.join(base, "floor")))
        results["export-floor-cpu"], cpu = time.process_time() - cpu, time.process_time()
        results["export"], _ = timed(lambda: wctx.export_evidence(store_a, out_dir=out))
        results["export-cpu"] = time.process_time() - cpu  # this process's own share, whatever else runs
        remote = os.path.join(base, "team.git")
        git(base, "init", "-q", "--bare", remote)
        results["sync-first"], _ = timed(lambda: wctx.sync_memory(store_a, remote=remote))
        fetch_into = os.path.join(base, "fetch.git")
        git(base, "init", "-q", "--bare", fetch_into)

        def fetch():
            return git(fetch_into, "fetch", "-q", remote, "+refs/heads/wctx-memory:refs/heads/x")

        results["fetch"], _ = timed(fetch)
        noop_fetch = []
        noop = []
        for _ in range(5):  # interleaved: git's no-op fetch, then a no-op sync
            noop_fetch.append(timed(fetch)[0])
            noop.append(timed(lambda: wctx.sync_memory(store_a))[0])
        results["fetch-noop"] = sorted(noop_fetch)[2]
        results["sync-noop"] = sorted(noop)[2]
        after_capture = []
        for i in range(3):  # one new finding, then the sync that shares it (median of three)
            item = {"kind": "finding", "claim": "one more finding %d" % i, "detail": None, "repo": "bench-sdk",
                    "files": [], "confidence": None}  # fmt: skip
            wctx.capture(store_a, [item], cwd=repo)
            after_capture.append(timed(lambda: wctx.sync_memory(store_a))[0])
        results["sync-capture"] = sorted(after_capture)[1]
        store_b = wctx.open_store(os.path.join(base, "b"))
        wctx.register_repo(store_b, repo, name="sdk-b", workspace="bench")
        results["sync-pull"], report = timed(lambda: wctx.sync_memory(store_b, remote=remote))
        results["pulled"] = report.imported["evidence"]
        store_a.close()
        store_b.close()
    finally:
        if old_home is not None:
            os.environ["HOME"] = old_home
        shutil.rmtree(base, ignore_errors=True)
    results["load"] = os.getloadavg()[0]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print("items %d in %d sessions (load average %.1f)" % (n, args.sessions, results["load"]))
    for key in ("import", "export"):
        floor = results[key + "-floor"]
        print(
            "  %-11s %7.2f s  (baseline %.2f s, ratio %.1f)"
            % (key, results[key], floor, results[key] / floor)
        )
    print("  export CPU  %7.2f s  (baseline %.2f s)" % (results["export-cpu"], results["export-floor-cpu"]))
    for key in ("sync-first", "fetch", "sync-capture", "sync-pull"):
        print("  %-11s %7.2f s" % (key, results[key]))
    print(
        "  sync-noop   %7.3f s  (git's own no-op fetch %.3f s; wctx's share %.3f s)"
        % (results["sync-noop"], results["fetch-noop"], results["sync-noop"] - results["fetch-noop"])
    )


if __name__ == "__main__":
    main()
