#!/usr/bin/env python3
"""Speed of `wctx import-evidence` (the bulk path) against a bare SQLite floor, in one run.

    python3 bench/import_evidence.py                   # 10,000 and 100,000 items
    python3 bench/import_evidence.py --sizes 10000 --json
    python3 bench/import_evidence.py --plain           # also the variant citing no files
    python3 bench/import_evidence.py --sizes 1000000 --wctx before=/tmp/base/wctx.py --wctx after=wctx.py

The corpus is the peer benchmark's (/work/shared/bench/peers/corpus.py, or --peers DIR): findings
of 23-47 words over 40 repositories, written as one export file, sessions of 50 items, three items
in four citing ``path#symbol`` (the "anchored" variant; --plain adds one where none does). The 40
repositories are small real git repositories registered in one workspace.

For each size, interleaved in one run on the same file:
  floor      json.loads of every line and one executemany per table (sessions, evidence, anchors,
             the FTS index) of the very rows wctx writes, into a fresh store's own schema, in one
             transaction: what any importer of these records into this schema pays, with no
             validation, redaction or duplicate check;
  import     `wctx import-evidence FILE` into a fresh store, as a user runs it (a new process:
             start-up, reading, validation, the duplicate rule, redaction, the writes);
  again      the same command again on the loaded store (everything already present).
It prints seconds, the ratio to the floor and the load average, the CPU seconds of each (the
floor's in this process, the import's in its own) and the import's peak resident size (its own,
read by wait4 in a small launcher). ``--wctx [LABEL=]PATH`` (repeatable) times another wctx.py, e.g. an older checkout
beside this one, each into a fresh store against the same floor. The floor's page cache is its
own (floor_cache_kib), whichever wctx is timed.
``--floor-parts`` adds the floor's phases (parsing and building rows; SQLite's inserts, index
builds and commit) with the secondary indexes set aside as a bulk import sets them, in the store
as it is and in two leaner variants (FLOOR_VARIANTS), each into a fresh store in the same run. Budget
(the speed goals): import of 100,000 items <= 10 s. Benchmarks only: no test times anything.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

from search_floor import make_repos, write_export  # noqa: E402

import wctx  # noqa: E402

BUDGET_SECONDS = 10.0


def fresh_store(base, name, paths):
    home = os.path.join(base, name)
    store = wctx.open_store(home)
    for _, path in sorted(paths.items()):
        wctx.register_repo(store, path, workspace="bench")
    store.close()
    return home


def floor_cache_kib(records):
    """The floor's page cache (KiB): room for every page it writes, as wctx gave its imports
    before #30 bounded their memory (64 MiB at least, 3 KiB a record, 1 GiB at most). Fixed
    here, so that the floor is the same whichever wctx.py is timed against it."""
    return max(65536, min(1 << 20, records * 3))


def _floor_rows(con, export, bare_anchors=True):
    """The rows wctx writes for ``export``'s records (sessions, items, anchors, search rows), as the
    floor builds them; ``bare_anchors`` False leaves out the anchors that cite no file."""
    repo_ids = dict(con.execute("SELECT name, id FROM repos"))
    sessions, evidence, anchors, fts = [], [], [], []
    rid = 0
    with open(export, "rb") as fh:
        lines = fh.readlines()
    con.execute("PRAGMA cache_size = %d" % -floor_cache_kib(len(lines)))
    for line in lines:
        r = json.loads(line)
        if r["type"] == "session":
            sessions.append((r["id"], r["agent"], repo_ids.get(r["repo"]), r["repo"], r["started_at"],
                             r["ended_at"], r["summary"], r["started_at"]))  # fmt: skip
            continue
        rid += 1
        claim = r["claim"]
        evidence.append((rid, r["id"], r["session"], repo_ids.get(r["repo"]), r["repo"], r["kind"], claim,
                         wctx.claim_key(claim), r["detail"], r["confidence"], r["status"], r["created_at"],
                         r["updated_at"]))  # fmt: skip
        for a in r["anchors"]:
            if a["path"] or bare_anchors:
                anchors.append((rid, repo_ids.get(a["repo"]), a["repo"], a["root_commit"], a["path"], a["symbol"],
                                a["commit"], a["branch"], a["blob"], a["dirty"]))  # fmt: skip
        cited = [a for a in r["anchors"] if a["path"]]
        fts.append((rid, claim, " ".join(a["symbol"] or "" for a in cited), " ".join(a["path"] for a in cited),
                    r["detail"] or ""))  # fmt: skip
    return sessions, evidence, anchors, fts


def _floor_write(con, sessions, evidence, anchors, fts):
    con.executemany(
        "INSERT INTO sessions(id, agent, repo_id, repo_name, started_at, ended_at, summary, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        sessions,
    )
    con.executemany(
        "INSERT INTO evidence(rid, id, session_id, repo_id, repo_name, kind, claim, claim_key, detail, confidence, "
        "status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        evidence,
    )
    con.executemany(
        "INSERT INTO anchors(evidence_rid, repo_id, repo_name, root_commit, path, symbol, commit_sha, branch, "
        "blob, dirty) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        anchors,
    )
    con.executemany(
        "INSERT INTO evidence_fts(rowid, claim, symbols, paths, detail) VALUES (?, ?, ?, ?, ?)", fts
    )


def _floor_connection(home):
    con = sqlite3.connect(os.path.join(home, "wctx.db"), isolation_level=None)
    con.create_function("wctx_index_text", 1, wctx.index_text)  # the store's summary triggers call it
    con.execute("PRAGMA foreign_keys = ON")
    con.execute("PRAGMA synchronous = NORMAL")
    return con


def floor(home, export):
    """The same rows as wctx writes them, without anything wctx decides on the way."""
    con = _floor_connection(home)
    rows = _floor_rows(con, export)
    con.execute("BEGIN IMMEDIATE")
    _floor_write(con, *rows)
    con.execute("COMMIT")
    con.close()
    return len(rows[1])


# What the floor's writes would cost in a leaner store (--floor-parts): the search index holding
# no copy of its texts (FTS5 content=''), then also the anchors that cite no file left out.
FLOOR_VARIANTS = ("as stored", "contentless index", "and no bare anchors")


def floor_parts(home, export, variant):
    """{phase: seconds, "size_mb"}: the floor's rows, written with the secondary indexes set
    aside and built at the end (as a bulk import does), in ``variant`` (FLOOR_VARIANTS)."""
    con = _floor_connection(home)
    step = FLOOR_VARIANTS.index(variant)
    if step >= 1:
        con.execute("DROP TABLE evidence_fts")
        con.execute(
            "CREATE VIRTUAL TABLE evidence_fts USING fts5(claim, symbols, paths, detail, content='', "
            "tokenize = 'unicode61 remove_diacritics 2')"
        )
    t0 = time.perf_counter()
    rows = _floor_rows(con, export, bare_anchors=step < 2)
    t1 = time.perf_counter()
    con.execute("BEGIN IMMEDIATE")
    indexes = con.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND name IN (%s)"
        % ",".join("?" * len(wctx._BULK_DEFERRED_INDEXES)),
        wctx._BULK_DEFERRED_INDEXES,
    ).fetchall()
    for name, _ in indexes:
        con.execute('DROP INDEX "%s"' % name)
    _floor_write(con, *rows)
    t2 = time.perf_counter()
    for _, sql in indexes:
        con.execute(sql)
    t3 = time.perf_counter()
    con.execute("COMMIT")
    t4 = time.perf_counter()
    con.close()
    return {"parse_and_rows_s": round(t1 - t0, 2), "inserts_s": round(t2 - t1, 2), "indexes_s": round(t3 - t2, 2),
            "commit_s": round(t4 - t3, 2), "sqlite_s": round(t4 - t1, 2),
            "size_mb": round(os.path.getsize(os.path.join(home, "wctx.db")) / 1e6)}  # fmt: skip


# A process started from this one begins with this one's resident size as its peak (Linux keeps
# the largest size across exec), and the floor makes this one large. So the import is started by
# a small launcher, whose own child's peak and CPU seconds (wait4) it writes to a file.
LAUNCH = """
import json, os, subprocess, sys
proc = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(proc.pid, 0)
with open(sys.argv[1], "w") as fh:
    json.dump({"maxrss_kib": usage.ru_maxrss, "cpu_s": usage.ru_utime + usage.ru_stime}, fh)
sys.exit(1 if status else 0)
"""


def cli_import(home, export, script=None):
    """`wctx import-evidence FILE --json` run as a user runs it (``script``: which wctx.py, this
    checkout's by default): (its counts, its peak resident size in MB, its CPU seconds)."""
    script = script or os.path.join(ROOT, "wctx.py")
    with tempfile.NamedTemporaryFile("r") as usage:
        proc = subprocess.run(
            [sys.executable, "-c", LAUNCH, usage.name, sys.executable, script, "--home", home,
             "import-evidence", export, "--json"],
            capture_output=True,
            text=True,
        )  # fmt: skip
        if proc.returncode != 0:
            raise SystemExit("import-evidence failed: " + proc.stderr[-2000:])
        used = json.load(usage)
    return json.loads(proc.stdout), round(used["maxrss_kib"] / 1024), round(used["cpu_s"], 2)  # KiB on Linux


def timed(fn, *args):
    start = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - start, result


def cpu_seconds():
    """(this process's, its finished children's) user + system CPU seconds: what a run costs
    whatever else the machine runs, unlike wall-clock seconds."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def run_size(n, anchored, corpus_mod, tmp, parts=False, scripts=None):
    """One size: the floor, then each of ``scripts`` ([(label, wctx.py)]) importing the same file
    into a fresh store of its own, and again."""
    scripts = scripts or [("wctx", os.path.join(ROOT, "wctx.py"))]
    base = tempfile.mkdtemp(prefix="size-", dir=tmp)
    corpus = corpus_mod.make_corpus(n)
    names = sorted({f["repo"] for f in corpus})
    paths = make_repos(os.path.join(base, "repos"), names)
    homes = {"floor": fresh_store(base, "floor", paths)}
    homes.update((label, fresh_store(base, "wctx-%d" % i, paths)) for i, (label, _) in enumerate(scripts))
    if parts:
        homes.update((v, fresh_store(base, "floor-%d" % i, paths)) for i, v in enumerate(FLOOR_VARIANTS))
    store = wctx.open_store(homes["floor"])
    roots = {r["name"]: r["root_commit"] for r in wctx.list_repos(store)}
    store.close()
    heads = {
        name: subprocess.run(
            ["git", "-C", p, "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        for name, p in paths.items()
    }
    export = os.path.join(base, "export.jsonl")
    write_export(corpus, export, anchored, roots, heads)
    del corpus
    load = [os.getloadavg()[0]]
    cpu0 = cpu_seconds()[0]
    floor_s, floor_n = timed(floor, homes["floor"], export)
    floor_cpu = cpu_seconds()[0] - cpu0
    imports = {}
    for label, script in scripts:
        import_s, (counts, rss_mb, cpu_s) = timed(cli_import, homes[label], export, script)
        again_s, (again, _, _) = timed(cli_import, homes[label], export, script)
        if counts["evidence"] != n or again["unchanged"] != n:
            raise SystemExit("unexpected counts (%s): %r / %r" % (label, counts, again))
        imports[label] = {
            "import_s": round(import_s, 2),
            "import_ratio": round(import_s / floor_s, 2),
            "again_s": round(again_s, 2),
            "import_cpu_s": cpu_s,
            "cpu_ratio": round(cpu_s / floor_cpu, 2),
            "import_max_rss_mb": rss_mb,
            "within_budget": n < 100_000 or import_s <= BUDGET_SECONDS,
        }
    load.append(os.getloadavg()[0])
    if floor_n != n:
        raise SystemExit("unexpected floor count: %d" % floor_n)
    leaner = {v: floor_parts(homes[v], export, v) for v in FLOOR_VARIANTS} if parts else None
    shutil.rmtree(base, ignore_errors=True)
    row = {
        "floor_parts": leaner,
        "n": n,
        "anchored": anchored,
        "floor_s": round(floor_s, 2),
        "floor_cpu_s": round(floor_cpu, 2),
        "imports": imports,
        "load": [round(x, 2) for x in load],
    }
    if len(imports) == 1:  # the one wctx's figures at the top level too, as before --wctx
        row.update(next(iter(imports.values())))
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--plain", action="store_true", help="also the variant whose items cite no file")
    parser.add_argument("--peers", default=os.path.join(ROOT, "..", "shared", "bench", "peers"))
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--wctx",
        action="append",
        metavar="[LABEL=]PATH",
        help="the wctx.py to time (this checkout's by default); again for another, each into a "
        "store of its own against the same floor, e.g. --wctx before=/tmp/base/wctx.py --wctx after=wctx.py",
    )
    parser.add_argument(
        "--floor-parts",
        action="store_true",
        help="also the floor's phases in the store as it is and in leaner variants of it",
    )
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.abspath(args.peers))
    import corpus as corpus_mod

    scripts = []
    for i, spec in enumerate(args.wctx or []):
        label, _, path = spec.rpartition("=")
        scripts.append((label or "wctx-%d" % (i + 1), os.path.abspath(path)))
    tmp = tempfile.mkdtemp(prefix="wctx-import-")
    rows = []
    try:
        for n in [int(x) for x in args.sizes.split(",")]:
            for anchored in (True, False) if args.plain else (True,):
                row = run_size(n, anchored, corpus_mod, tmp, args.floor_parts, scripts)
                rows.append(row)
                if not args.json:
                    print(
                        "%7d items (%s): floor %.2f s (CPU %.2f s)  load %s"
                        % (
                            n,
                            "anchored" if anchored else "plain",
                            row["floor_s"],
                            row["floor_cpu_s"],
                            row["load"],
                        )
                    )
                    for label, r in row["imports"].items():
                        print(
                            "        %-10s import-evidence %.2f s (ratio %.2f)  CPU %.2f s (ratio %.2f)  peak RSS %d MB"
                            "  again %.2f s" % (label, r["import_s"], r["import_ratio"], r["import_cpu_s"],
                                                r["cpu_ratio"], r["import_max_rss_mb"], r["again_s"])
                        )  # fmt: skip
                    for variant, p in (row["floor_parts"] or {}).items():
                        print(
                            "        floor, %-31s parse and rows %.2f s  SQLite %.2f s (inserts %.2f, indexes %.2f,"
                            " commit %.2f)  %d MB" % (variant + ":", p["parse_and_rows_s"], p["sqlite_s"],
                                                     p["inserts_s"], p["indexes_s"], p["commit_s"], p["size_mb"])
                        )  # fmt: skip
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
