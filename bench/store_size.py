#!/usr/bin/env python3
"""Size of a wctx store per item against a bare FTS5 file of the same texts, in one run (#30).

    python3 bench/store_size.py                  # 100,000 items
    python3 bench/store_size.py --n 10000 --json

The store is built as bench/import_evidence.py builds it: the peer benchmark's corpus
(/work/shared/bench/peers/corpus.py, or --peers DIR) written as one export file, sessions of 50
items, three items in four citing ``path#symbol``, its 40 repositories small real git
repositories registered in one workspace, loaded by ``wctx import-evidence FILE`` in a new
process (timed, in wall and CPU seconds: a leaner store may also import faster).

The baseline, built in the same run from the store's own rows: a bare SQLite file holding one FTS5
table (default options) over each item's texts as written: claim, detail, cited symbols, cited
paths. It prints the bytes per item of both files and their ratio (the goal: <= 1.5), then, when
this SQLite has the ``dbstat`` virtual table, the store's bytes per table and index (largest
first), each per item and as a share of the file. Both files are measured as written and again
after VACUUM (what the pages hold without the free space an import leaves).
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

from import_evidence import cli_import, fresh_store  # noqa: E402
from search_floor import make_repos, write_export  # noqa: E402

import wctx  # noqa: E402

GOAL_RATIO = 1.5


def bare_fts(store_db, path):
    """The baseline file: one FTS5 table over the store's items' texts as written."""
    src = sqlite3.connect(store_db)
    cited = {}
    for rid, p, symbol in src.execute(
        "SELECT evidence_rid, path, symbol FROM anchors ORDER BY evidence_rid, id"
    ):
        if p:
            cited.setdefault(rid, []).append((p, symbol))
    rows = []
    for rid, claim, detail in src.execute("SELECT rid, claim, detail FROM evidence"):
        anchors = cited.get(rid, ())
        rows.append((rid, claim, detail or "", " ".join(dict.fromkeys(s for _, s in anchors if s)),
                     " ".join(dict.fromkeys(p for p, _ in anchors))))  # fmt: skip
    src.close()
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("CREATE VIRTUAL TABLE fts USING fts5(claim, detail, symbols, paths)")
    con.execute("BEGIN")
    con.executemany("INSERT INTO fts(rowid, claim, detail, symbols, paths) VALUES (?, ?, ?, ?, ?)", rows)
    con.execute("COMMIT")
    con.close()
    return len(rows)


def has_dbstat():
    con = sqlite3.connect(":memory:")
    try:
        con.execute("SELECT count(*) FROM dbstat")
        return True
    except sqlite3.Error:
        return False
    finally:
        con.close()


def breakdown(path):
    """[(table or index, bytes)] from dbstat, largest first."""
    con = sqlite3.connect(path)
    try:
        return con.execute(
            "SELECT name, SUM(pgsize) AS b FROM dbstat GROUP BY name ORDER BY b DESC"
        ).fetchall()
    finally:
        con.close()


def vacuumed_size(path):
    """The file's size after VACUUM (of a copy, in WAL mode checkpointed first)."""
    copy = path + ".vacuumed"
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.execute("VACUUM INTO ?", (copy,))
    con.close()
    size = os.path.getsize(copy)
    os.remove(copy)
    return size


def run(n, corpus_mod, tmp, keep=None):
    base = tempfile.mkdtemp(prefix="size-", dir=tmp)
    corpus = corpus_mod.make_corpus(n)
    names = sorted({f["repo"] for f in corpus})
    paths = make_repos(os.path.join(base, "repos"), names)
    home = fresh_store(base, "wctx", paths)
    store = wctx.open_store(home)
    roots = {r["name"]: r["root_commit"] for r in wctx.list_repos(store)}
    store.close()
    heads = {
        name: subprocess.run(
            ["git", "-C", p, "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        for name, p in paths.items()
    }
    export = os.path.join(base, "export.jsonl")
    write_export(corpus, export, True, roots, heads)
    start, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    counts = cli_import(home, export)[0]
    import_s = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    import_cpu_s = after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime
    if counts["evidence"] != n:
        raise SystemExit("unexpected counts: %r" % (counts,))
    db = os.path.join(home, "wctx.db")
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    schema = con.execute("PRAGMA user_version").fetchone()[0]
    con.close()
    bare = os.path.join(base, "bare.db")
    bare_n = bare_fts(db, bare)
    if bare_n != n:
        raise SystemExit("the bare file holds %d items, not %d" % (bare_n, n))
    size, bare_size = os.path.getsize(db), os.path.getsize(bare)
    vac, bare_vac = vacuumed_size(db), vacuumed_size(bare)
    row = {
        "n": n,
        "schema": schema,
        "import_s": round(import_s, 2),
        "import_cpu_s": round(import_cpu_s, 2),
        "load": round(os.getloadavg()[0], 2),
        "store_bytes_per_item": round(size / n),
        "bare_bytes_per_item": round(bare_size / n),
        "ratio": round(size / bare_size, 2),
        "store_vacuumed_bytes_per_item": round(vac / n),
        "bare_vacuumed_bytes_per_item": round(bare_vac / n),
        "vacuumed_ratio": round(vac / bare_vac, 2),
        "within_goal": size / bare_size <= GOAL_RATIO,
        "tables": None,
        "bare_tables": None,
    }
    if has_dbstat():
        row["tables"] = [(name, round(b / n)) for name, b in breakdown(db)]
        row["bare_tables"] = [(name, round(b / n)) for name, b in breakdown(bare)]
    if keep:
        os.makedirs(keep, exist_ok=True)
        shutil.copy(db, os.path.join(keep, "wctx.db"))
        shutil.copy(bare, os.path.join(keep, "bare.db"))
    shutil.rmtree(base, ignore_errors=True)
    return row


def report(row):
    n = row["n"]
    print(
        "%d items (schema %d): store %d B/item, bare FTS5 %d B/item, ratio %.2f (goal <= %.1f: %s); "
        "after VACUUM %d / %d B/item, ratio %.2f; import-evidence %.2f s (CPU %.2f s, load %.2f)"
        % (n, row["schema"], row["store_bytes_per_item"], row["bare_bytes_per_item"], row["ratio"], GOAL_RATIO,
           "met" if row["within_goal"] else "not met", row["store_vacuumed_bytes_per_item"],
           row["bare_vacuumed_bytes_per_item"], row["vacuumed_ratio"], row["import_s"],
           row["import_cpu_s"], row["load"])
    )  # fmt: skip
    if row["tables"] is None:
        print("  (this SQLite has no dbstat virtual table: no breakdown)")
        return
    total = sum(b for _, b in row["tables"]) or 1
    print("  store, bytes per item by table or index (dbstat):")
    for name, b in row["tables"]:
        if b:
            print("    %-32s %6d  %5.1f%%" % (name, b, 100.0 * b / total))
    print("  bare FTS5 file:")
    for name, b in row["bare_tables"]:
        if b:
            print("    %-32s %6d" % (name, b))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--peers", default=os.path.join(ROOT, "..", "shared", "bench", "peers"))
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", metavar="DIR", help="copy the store and the bare file into DIR")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.abspath(args.peers))
    import corpus as corpus_mod

    tmp = tempfile.mkdtemp(prefix="wctx-size-")
    try:
        row = run(args.n, corpus_mod, tmp, args.keep)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(row, indent=2))
    else:
        report(row)


if __name__ == "__main__":
    main()
