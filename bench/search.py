#!/usr/bin/env python3
"""Search, CLI start-up and verify speed of wctx against bare baselines, in one run.

    python3 bench/search.py                  # 10,000 and 100,000 items (several minutes)
    python3 bench/search.py --quick          # 2,000 items, fewer queries and runs (~30 s)
    python3 bench/search.py --json           # the same figures as JSON on stdout
    python3 bench/search.py --sizes 10000 --keep /tmp/wctx-bench   # keep repos and stores

What it builds (deterministic for a given --seed and Python version):
  - 10 real git repositories in a temp dir, ~30 source files each (Python, TypeScript, Go, Rust,
    JavaScript), every function a real, locatable symbol; two workspaces (one repo in both) and
    typed relations between them;
  - evidence items captured through ``wctx.capture`` itself (200 items per call, one session per
    call, a session summary each), with claims and details drawn from a vocabulary of ~4,000 words
    taken from the Python standard library's own source text (so word frequencies, and hence the
    selectivity of query terms, follow a natural long tail), citing files and ``path#symbol``
    anchors, some in another repository;
  - between capture batches, commits that edit function bodies, rename files and add functions,
    so provenance spans many commits and ``verify`` meets every verdict.

What it measures, each against a baseline in the same run (interleaved where it matters):
  search    in-process ``wctx.search`` p50/p95 with the freshness cache warm, vs. a bare FTS5
            table holding the same texts: ``SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY
            bm25(fts) LIMIT 10`` with the same MATCH expression wctx builds;
  cli       wall time of ``python wctx.py search ...`` vs. ``python -c "import sqlite3, json,
            subprocess, argparse"`` (same interpreter, .pyc cache warm for both);
  verify    ``wctx.verify`` of 10,000 items across 5 repositories vs. one ``git cat-file
            --batch-check`` per repository over the same objects (recorded commits, HEAD:path).
Goals (issue 2): search p50 <= 5 ms and p95 <= 20 ms at 100k; CLI <= 1.3x; verify <= 3 s.

The interpreter is this script's own (sys.executable), never a shim such as pyenv's ``python3``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import wctx  # noqa: E402

GOALS = {"search_p50_ms": 5.0, "search_p95_ms": 20.0, "cli_ratio": 1.3, "verify_s": 3.0}
REPO_NAMES = [
    "upload-sdk", "docs-ui", "api-gateway", "auth-service", "shared-schema",
    "billing-core", "invoice-worker", "ledger-api", "payments-ui", "report-jobs",
]  # fmt: skip
WORKSPACES = {"docs-product": REPO_NAMES[:6], "billing": REPO_NAMES[5:]}
RELATIONS = [
    ("docs-ui", "uses", "upload-sdk"),
    ("upload-sdk", "calls", "api-gateway"),
    ("api-gateway", "depends_on", "auth-service"),
    ("docs-ui", "consumes_api", "api-gateway"),
    ("api-gateway", "shares_schema_with", "shared-schema"),
    ("payments-ui", "uses", "billing-core"),
    ("billing-core", "provides_api", "invoice-worker"),
    ("ledger-api", "depends_on", "billing-core"),
    ("report-jobs", "consumes_api", "ledger-api"),
]
KINDS = ["finding"] * 5 + ["decision"] * 2 + ["dead_end", "question", "constraint", "known_issue", "note"]
LANGS = [("py", 4), ("ts", 3), ("go", 2), ("rs", 1), ("js", 1)]
FILLER = ["why", "does", "the", "is", "not", "when", "how", "we", "it", "in", "of", "for", "a"]
BATCH = wctx.MAX_ITEMS_PER_CAPTURE


# ----------------------------------------------------------------------------------------------
# Corpus
# ----------------------------------------------------------------------------------------------


def vocabulary(size=4000):
    """The ``size`` most frequent words (3-14 letters) of the prose (docstrings and comments) of the
    standard library's top-level modules, with their counts: English about code, with its natural
    long tail, and without the keywords (self, def, return) that dominate the code itself."""
    lib = sysconfig.get_paths()["stdlib"]
    counts = collections.Counter()
    names = sorted(n for n in os.listdir(lib) if n.endswith(".py"))
    prose = re.compile(r'"""(.*?)"""|#([^\n]*)', re.S)
    for name in names:
        try:
            with open(os.path.join(lib, name), encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError:
            continue
        for m in prose.finditer(text):
            counts.update(w.lower() for w in re.findall(r"\b[A-Za-z]{3,14}\b", m.group(1) or m.group(2)))
    for stop in wctx.STOP_WORDS:
        counts.pop(stop, None)
    common = counts.most_common(size)
    return [w for w, _ in common], [c for _, c in common]


class Corpus:
    def __init__(self, seed, words, weights):
        self.rng = random.Random(seed)
        self.words = words
        self.weights = weights
        self.cum = list(_accumulate(weights))
        self.total = self.cum[-1]

    def word(self):
        import bisect

        return self.words[bisect.bisect_left(self.cum, self.rng.random() * self.total)]

    def rare_word(self):
        """A word from the long tail (rank 200+): what people type to find something specific."""
        return self.words[self.rng.randrange(200, len(self.words))]

    def sentence(self, lo, hi):
        return " ".join(self.word() for _ in range(self.rng.randint(lo, hi)))


def _accumulate(values):
    total = 0
    for v in values:
        total += v
        yield total


def _camel(parts):
    return parts[0] + "".join(p.title() for p in parts[1:])


def render(lang, functions, salt):
    """Source text of one file defining ``functions`` [(name, constant)] in ``lang``."""
    out = []
    for name, const in functions:
        if lang == "py":
            out.append(
                'def %s(value):\n    """Handle %s."""\n    total = value + %d\n    return total * %d\n'
                % (name, name, const, salt)
            )
        elif lang in ("ts", "js"):
            typed = ": number" if lang == "ts" else ""
            out.append(
                "export function %s(value%s)%s {\n  const total = value + %d;\n  return total * %d;\n}\n"
                % (name, typed, typed, const, salt)
            )
        elif lang == "go":
            out.append(
                "func %s(value int) int {\n\ttotal := value + %d\n\treturn total * %d\n}\n"
                % (name, const, salt)
            )
        else:
            out.append(
                "pub fn %s(value: i64) -> i64 {\n    let total = value + %d;\n    total * %d\n}\n"
                % (name, const, salt)
            )
    head = {"py": "", "ts": "", "js": "", "go": "package main\n\n", "rs": ""}[lang]
    return head + "\n".join(out)


def git(path, *args):
    subprocess.run(
        ["git", "-C", path, "-c", "user.name=bench", "-c", "user.email=bench@example.com", *args],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


class Repos:
    """10 git repositories with source files whose functions the corpus cites."""

    def __init__(self, base, corpus, files_per_repo):
        self.base = base
        self.c = corpus
        self.files = {}  # repo name -> {rel path: [lang, [(fn, const)], salt]}
        for name in REPO_NAMES:
            path = os.path.join(base, name)
            os.makedirs(path)
            git(path, "init", "-q", "-b", "main")
            self.files[name] = {}
            for i in range(files_per_repo):
                self.add_file(name, i)
            git(path, "add", "-A")
            git(path, "commit", "-q", "-m", "initial import of %s" % name)

    def path(self, name):
        return os.path.join(self.base, name)

    def add_file(self, name, i):
        rng = self.c.rng
        lang = rng.choices([lang for lang, _ in LANGS], [w for _, w in LANGS])[0]
        folder = rng.choice(["src", "src/" + self.c.word(), "lib", "internal/" + self.c.word()])
        stem = (
            "%s_%s" % (self.c.word(), i)
            if lang in ("py", "go", "rs")
            else "%s%d" % (_camel([self.c.word(), "mod"]), i)
        )
        rel = "%s/%s.%s" % (folder, stem, lang)
        functions = []
        for _ in range(rng.randint(4, 12)):
            parts = [self.c.word(), self.c.rare_word()]
            fn = (
                "_".join(parts)
                if lang in ("py", "rs")
                else (_camel(parts) if lang != "go" else _camel(parts).title())
            )
            if fn not in [f for f, _ in functions]:
                functions.append((fn, rng.randint(1, 999)))
        self.files[name][rel] = [lang, functions, rng.randint(2, 9)]
        self.write(name, rel)

    def write(self, name, rel):
        lang, functions, salt = self.files[name][rel]
        full = os.path.join(self.path(name), rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as fh:
            fh.write(render(lang, functions, salt))

    def churn(self, names, edits):
        """Commit a round of changes: edited bodies, a new function, now and then a rename."""
        rng = self.c.rng
        for name in names:
            files = self.files[name]
            for _ in range(edits):
                rel = rng.choice(sorted(files))
                fns = files[rel][1]
                k = rng.randrange(len(fns))
                fns[k] = (fns[k][0], fns[k][1] + 1)
                if rng.random() < 0.2:
                    fns.append((_camel([self.c.word(), self.c.rare_word(), "v%d" % rng.randint(2, 99)]), 7))
                self.write(name, rel)
            if rng.random() < 0.3:
                rel = rng.choice(sorted(files))
                new = rel.rsplit("/", 1)[0] + "/moved_" + rel.rsplit("/", 1)[1]
                git(self.path(name), "mv", rel, new)
                files[new] = files.pop(rel)
            git(self.path(name), "add", "-A")
            git(self.path(name), "commit", "-q", "-m", "%s %s" % (self.c.word(), self.c.sentence(2, 5)))

    def cite(self, name, cross=None):
        rng = self.c.rng
        target = cross or name
        rel = rng.choice(sorted(self.files[target]))
        spec = rel
        if rng.random() < 0.75:
            spec += "#" + rng.choice(self.files[target][rel][1])[0]
        return (target + ":" + spec) if target != name else spec


def make_items(repos, corpus, n, about):
    rng = corpus.rng
    items = []
    for _ in range(n):
        name = rng.choice(about)
        claim_words = corpus.sentence(5, 13).split()
        files = []
        for _ in range(rng.choices([0, 1, 2, 3], [25, 50, 20, 5])[0]):
            other = rng.choice(REPO_NAMES) if rng.random() < 0.1 else None
            files.append(repos.cite(name, other))
        if files and rng.random() < 0.5:  # claims often name the symbol they are about
            sym = files[0].rpartition("#")[2] if "#" in files[0] else None
            if sym:
                claim_words.insert(rng.randrange(len(claim_words) + 1), sym)
        item = {"kind": rng.choice(KINDS), "claim": " ".join(claim_words), "repo": name, "files": files}
        if rng.random() < 0.55:
            item["detail"] = corpus.sentence(12, 50)
        if rng.random() < 0.4:
            item["confidence"] = round(rng.uniform(0.3, 1.0), 2)
        items.append(item)
    return items


def populate(store, repos, corpus, target, progress):
    """Capture until the store holds ``target`` items; churn history every few batches."""
    have = store.one("SELECT count(*) FROM evidence")[0]
    rng = corpus.rng
    batches = 0
    started = time.perf_counter()
    while have < target:
        n = min(BATCH, target - have)
        home = rng.choice(REPO_NAMES)
        ws = [w for w, members in WORKSPACES.items() if home in members]
        about = [home] * 4 + WORKSPACES[rng.choice(ws)]
        items = make_items(repos, corpus, n, about)
        res = wctx.capture(store, items, summary=corpus.sentence(4, 10), cwd=repos.path(home), agent="bench")
        have += sum(1 for e in res["evidence"] if not e["duplicate"])
        batches += 1
        if batches % 10 == 0:
            repos.churn(rng.sample(REPO_NAMES, 3), edits=4)
        if progress and batches % 25 == 0:
            progress("  captured %d items (%.0f items/s)" % (have, have / (time.perf_counter() - started)))
    return have


def make_queries(repos, corpus, n):
    """Agent-like queries: a distinctive word or two, a common one, sometimes a symbol, some filler."""
    rng = corpus.rng
    out = []
    for _ in range(n):
        words = [corpus.rare_word() for _ in range(rng.randint(1, 2))] + [corpus.word()]
        if rng.random() < 0.3:
            name = rng.choice(REPO_NAMES)
            rel = rng.choice(sorted(repos.files[name]))
            words.append(rng.choice(repos.files[name][rel][1])[0])
        if rng.random() < 0.5:
            words = rng.sample(FILLER, 2) + words
        rng.shuffle(words)
        out.append((rng.choice(REPO_NAMES), " ".join(words)))
    return out


# ----------------------------------------------------------------------------------------------
# Measurements
# ----------------------------------------------------------------------------------------------


def pct(values, q):
    values = sorted(values)
    if not values:
        return 0.0
    k = (len(values) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def build_baseline(store, path):
    """A bare FTS5 table with the very texts wctx indexes, in its own database file."""
    if os.path.exists(path):
        os.remove(path)
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("ATTACH DATABASE ? AS w", (store.path,))
    # The columns the store's own FTS table has (they changed with the schema).
    columns = ", ".join(row[1] for row in con.execute("PRAGMA w.table_info(evidence_fts)"))
    con.execute(
        "CREATE VIRTUAL TABLE fts USING fts5(%s, tokenize = 'unicode61 remove_diacritics 2')" % columns
    )
    con.execute("BEGIN")
    con.execute("INSERT INTO fts(rowid, %s) SELECT rowid, %s FROM w.evidence_fts" % (columns, columns))
    con.execute("COMMIT")
    con.execute("DETACH DATABASE w")
    con.execute("INSERT INTO fts(fts) VALUES ('optimize')")
    return con


def bench_search(store, base_con, queries, passes):
    """Interleaved per query: wctx.search then the bare FTS5 query, ``passes`` timed rounds."""
    exprs = [wctx.fts_query(wctx.query_terms(q)) for _, q in queries]
    sql = "SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT 10"
    for (repo, q), expr in zip(queries, exprs):  # warm-up: page cache, statement cache, freshness cache
        wctx.search(store, q, repo=repo, limit=10)
        base_con.execute(sql, (expr,)).fetchall()
    ours, base, results, candidates = [], [], 0, []
    ours_cpu, base_cpu = [], []  # CPU time of this process: less disturbed by other jobs' load
    for _ in range(passes):
        for (repo, q), expr in zip(queries, exprs):
            t0, c0 = time.perf_counter(), time.process_time()
            res = wctx.search(store, q, repo=repo, limit=10)
            t1, c1 = time.perf_counter(), time.process_time()
            base_con.execute(sql, (expr,)).fetchall()
            t2, c2 = time.perf_counter(), time.process_time()
            ours.append((t1 - t0) * 1000.0)
            base.append((t2 - t1) * 1000.0)
            ours_cpu.append((c1 - c0) * 1000.0)
            base_cpu.append((c2 - c1) * 1000.0)
            results += len(res["results"])
            candidates.append(res["candidates"])
    out = {
        "queries": len(queries),
        "timed_calls": len(ours),
        "p50_ms": round(pct(ours, 0.5), 3),
        "p95_ms": round(pct(ours, 0.95), 3),
        "fts_p50_ms": round(pct(base, 0.5), 3),
        "fts_p95_ms": round(pct(base, 0.95), 3),
        "cpu_p50_ms": round(pct(ours_cpu, 0.5), 3),
        "cpu_p95_ms": round(pct(ours_cpu, 0.95), 3),
        "fts_cpu_p50_ms": round(pct(base_cpu, 0.5), 3),
        "fts_cpu_p95_ms": round(pct(base_cpu, 0.95), 3),
        "mean_results": round(results / max(1, len(ours)), 2),
        "median_candidates": statistics.median(candidates) if candidates else 0,
    }
    out["ratio_p50"] = round(out["p50_ms"] / out["fts_p50_ms"], 2) if out["fts_p50_ms"] else None
    out["ratio_p95"] = round(out["p95_ms"] / out["fts_p95_ms"], 2) if out["fts_p95_ms"] else None
    return out


def _run(argv, env):
    t0 = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit("benchmark command failed: %s\n%s" % (" ".join(argv), done.stderr.decode()))
    return elapsed


def bench_cli(home, queries, runs, tmp):
    """Median wall times, interleaved: the bare-import baseline, ``python wctx.py search`` (a script
    named on the command line is compiled from source on every run: Python never caches it) and
    ``python -m wctx search`` (imported, so its .pyc is cached, as for an installed ``wctx``).

    The .pyc cache is a private PYTHONPYCACHEPREFIX, so nothing is written into the checkout."""
    py = sys.executable
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pycache")
    env["WCTX_HOME"] = home
    script = os.path.join(ROOT, "wctx.py")
    env["PYTHONPATH"] = ROOT
    base = [py, "-c", "import sqlite3, json, subprocess, argparse"]
    tail = [["search", "--repo", repo, "--limit", "10", *q.split()] for repo, q in queries]
    for argv in [base, [py, script] + tail[0], [py, "-m", "wctx"] + tail[1]]:  # warm-up: .pyc, page cache
        _run(argv, env)
    ours, module, theirs = [], [], []
    for i in range(runs):
        theirs.append(_run(base, env))
        ours.append(_run([py, script] + tail[i % len(tail)], env))
        module.append(_run([py, "-m", "wctx"] + tail[i % len(tail)], env))
    b, o, m = statistics.median(theirs), statistics.median(ours), statistics.median(module)
    return {
        "runs": runs,
        "baseline_ms": round(b * 1000, 1),
        "search_ms": round(o * 1000, 1),
        "ratio": round(o / b, 2),
        "module_search_ms": round(m * 1000, 1),
        "module_ratio": round(m / b, 2),
    }


def bench_verify(store, repos, count, repo_count):
    """verify of ``count`` items whose anchors all lie in the first ``repo_count`` repos, vs. one
    ``git cat-file --batch-check`` per repo over the same objects."""
    names = REPO_NAMES[:repo_count]
    ids_by_name = {r["name"]: r["id"] for r in store.all("SELECT id, name FROM repos")}
    allowed = [ids_by_name[n] for n in names]
    marks = ",".join("?" * len(allowed))
    rows = store.all(
        "SELECT e.rid, e.id FROM evidence e WHERE e.status = 'active' AND e.repo_id IN (%s) "
        "AND NOT EXISTS (SELECT 1 FROM anchors a WHERE a.evidence_rid = e.rid AND a.repo_id NOT IN (%s)) "
        "ORDER BY e.rid LIMIT ?" % (marks, marks),
        allowed + allowed + [count],
    )
    ids = [r["id"] for r in rows]
    rids = [r["rid"] for r in rows]
    specs = collections.defaultdict(set)
    for i in range(0, len(rids), 500):
        chunk = rids[i : i + 500]
        for a in store.all(
            "SELECT repo_name, path, commit_sha FROM anchors WHERE evidence_rid IN (%s)"
            % ",".join("?" * len(chunk)),
            chunk,
        ):
            if a["commit_sha"]:
                specs[a["repo_name"]].add(a["commit_sha"] + "^{commit}")
            if a["path"]:
                specs[a["repo_name"]].add("HEAD:" + a["path"])
    t0 = time.perf_counter()
    for name, wanted in specs.items():
        data = "".join(s + "\n" for s in sorted(wanted)).encode()
        subprocess.run(
            ["git", "-C", repos.path(name), "cat-file", "--batch-check"],
            input=data, check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
    base = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = wctx.verify(store, ids=ids)
    ours = time.perf_counter() - t0
    return {
        "items": len(ids),
        "repos": len(names),
        "objects": sum(len(v) for v in specs.values()),
        "verify_s": round(ours, 3),
        "batch_check_s": round(base, 3),
        "ratio": round(ours / base, 1) if base else None,
        "verdicts": res["summary"],
    }


# ----------------------------------------------------------------------------------------------
# Main
# ----------------------------------------------------------------------------------------------


def table(report):
    g = GOALS
    lines = ["%-34s %12s %12s %8s   %s" % ("measure", "wctx", "baseline", "ratio", "goal")]
    for size, s in report["search"].items():
        lines.append(
            "%-34s %9.2f ms %9.2f ms %7.2fx   %s"
            % (
                "search p50 @ %s items" % size,
                s["p50_ms"],
                s["fts_p50_ms"],
                s["ratio_p50"] or 0,
                "<= %g ms" % g["search_p50_ms"],
            )
        )
        lines.append(
            "%-34s %9.2f ms %9.2f ms %7.2fx   %s"
            % (
                "search p95 @ %s items" % size,
                s["p95_ms"],
                s["fts_p95_ms"],
                s["ratio_p95"] or 0,
                "<= %g ms" % g["search_p95_ms"],
            )
        )
    for size, s in report["search"].items():
        if "cpu_p50_ms" in s:
            lines.append(
                "%-34s %9.2f ms %9.2f ms %7.2fx   %s"
                % (
                    "search CPU p50 / p95 @ %s" % size,
                    s["cpu_p50_ms"],
                    s["fts_cpu_p50_ms"],
                    s["cpu_p50_ms"] / s["fts_cpu_p50_ms"] if s["fts_cpu_p50_ms"] else 0,
                    "(process time)",
                )
            )
            lines.append(
                "%-34s %9.2f ms %9.2f ms %7.2fx"
                % (
                    "",
                    s["cpu_p95_ms"],
                    s["fts_cpu_p95_ms"],
                    s["cpu_p95_ms"] / s["fts_cpu_p95_ms"] if s["fts_cpu_p95_ms"] else 0,
                )
            )
    for size, c in report["cli"].items():
        lines.append(
            "%-34s %9.1f ms %9.1f ms %7.2fx   %s"
            % (
                "CLI wctx.py search @ %s" % size,
                c["search_ms"],
                c["baseline_ms"],
                c["ratio"],
                "<= %gx" % g["cli_ratio"],
            )
        )
        if "module_ratio" in c:
            lines.append(
                "%-34s %9.1f ms %9.1f ms %7.2fx   %s"
                % (
                    "CLI -m wctx search @ %s" % size,
                    c["module_search_ms"],
                    c["baseline_ms"],
                    c["module_ratio"],
                    "(cached .pyc)",
                )
            )
    v = report.get("verify")
    if v:
        lines.append(
            "%-34s %10.2f s %10.3f s %7.1fx   %s"
            % (
                "verify %d items / %d repos" % (v["items"], v["repos"]),
                v["verify_s"],
                v["batch_check_s"],
                v["ratio"] or 0,
                "<= %g s" % g["verify_s"],
            )
        )
    lines.append(
        "baselines: bare FTS5 MATCH+bm25 LIMIT 10 | python -c 'import sqlite3, json, subprocess, argparse' | "
        "git cat-file --batch-check per repo"
    )
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small run: 2,000 items, fewer queries and runs")
    parser.add_argument("--sizes", help="comma-separated corpus sizes (default 10000,100000)")
    parser.add_argument("--queries", type=int, help="distinct queries per size (default 200)")
    parser.add_argument("--passes", type=int, default=3, help="timed passes over the queries (default 3)")
    parser.add_argument("--cli-runs", type=int, help="timed CLI runs per command (default 30)")
    parser.add_argument("--verify-items", type=int, help="items for the verify measure (default 10000)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--keep", metavar="DIR", help="build in DIR and keep it (default: a temp dir, removed)"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)

    sizes = (
        [int(s) for s in args.sizes.split(",")] if args.sizes else ([2000] if args.quick else [10000, 100000])
    )
    nq = args.queries or (40 if args.quick else 200)
    cli_runs = args.cli_runs or (8 if args.quick else 30)
    verify_items = args.verify_items or (1000 if args.quick else 10000)
    files_per_repo = 30

    def progress(text):
        sys.stderr.write(text + "\n")

    tmp = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="wctx-search-bench-")
    os.makedirs(tmp, exist_ok=True)
    report = {
        "python": sys.version.split()[0],
        "sqlite": sqlite3.sqlite_version,
        "cpus": os.cpu_count(),
        "load_average_start": [round(x, 1) for x in os.getloadavg()],
        "seed": args.seed,
        "command": "python3 bench/search.py"
        + (" " + " ".join(argv if argv is not None else sys.argv[1:])).rstrip(),
        "search": {},
        "cli": {},
        "build": {},
    }
    try:
        words, weights = vocabulary()
        corpus = Corpus(args.seed, words, weights)
        progress("building 10 repositories in %s" % tmp)
        repos = Repos(os.path.join(tmp, "repos"), corpus, files_per_repo)
        home = os.path.join(tmp, "home")
        store = wctx.open_store(home)
        for ws, members in WORKSPACES.items():
            for name in members:
                wctx.register_repo(store, repos.path(name), name=name, workspace=ws)
        for a, kind, b in RELATIONS:
            wctx.relate(store, a, kind, b)
        report["vocabulary"] = len(words)
        report["files"] = sum(len(f) for f in repos.files.values())
        queries = make_queries(repos, corpus, nq)
        for size in sizes:
            t0 = time.perf_counter()
            populate(store, repos, corpus, size, progress)
            report["build"][str(size)] = round(time.perf_counter() - t0, 1)
            progress("%d items; measuring search" % size)
            base_con = build_baseline(store, os.path.join(tmp, "baseline-%d.db" % size))
            report["search"][str(size)] = bench_search(store, base_con, queries, args.passes)
            base_con.close()
            progress("measuring the CLI")
            report["cli"][str(size)] = bench_cli(home, queries, cli_runs, tmp)
        progress("measuring verify")
        report["verify"] = bench_verify(store, repos, verify_items, 5)
        report["files"] = sum(len(f) for f in repos.files.values())
        report["load_average_end"] = [round(x, 1) for x in os.getloadavg()]
        store.close()
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(
            "wctx search bench: Python %s, SQLite %s, %s CPUs (load average %s -> %s), %d repos, %d files, "
            "%d-word vocabulary"
            % (
                report["python"],
                report["sqlite"],
                report["cpus"],
                report["load_average_start"][0],
                report["load_average_end"][0],
                len(REPO_NAMES),
                report["files"],
                report["vocabulary"],
            )
        )
        print(table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
