#!/usr/bin/env python3
"""Are the commits wctx names as having changed a cited symbol the ones that did? An oracle that
shares no code with wctx, over real histories with merges, reverts, cherry-picks and renames.

For each repository given: T1 is HEAD, T0 the first-parent commit about ``--span`` days before.
The oracle (``git show`` of each version, symbols found by ``ast`` or tree-sitter through
bench/freshness.py's Oracle) picks symbols whose text differs between T0 and T1 (following git's
own rename detection), up to ``--symbols`` per repository. Each is captured through wctx at T0 in
a temporary worktree, the worktree moves to T1, and ``wctx.verify`` names commits per citation
(``anchors[].changed_in``). Then, per named commit C, the oracle reads the symbol's text at C and
at each parent of C:

- precision: a named commit is right when it is not a merge and its text differs from its
  parent's, or it is a merge and its text differs from every parent's;
- recall of the first real change: walking T0's first-parent line to T1, the first commit whose
  text differs from T0's; when that commit is a merge that took the text from its second parent,
  the walk goes down that side (from the merge base) until a commit that made the change.
  Recall counts the stale citations whose reason names it.

A second pass checks a checkout moved backwards: captured at T1, moved to T0, the reason must say
how many commits behind (``git rev-list --count T0..T1``).

Usage::

    python3 bench/freshness_reasons.py --repo PATH [--repo PATH ...] [--span 365] [--symbols 300]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import freshness as symbols_bench  # noqa: E402  (bench/freshness.py: the independent parsers)
from freshness_verify import GIT_SAFE, commit_before, git  # noqa: E402


class History:
    """Texts of symbols at commits, read with one ``git cat-file --batch`` kept open."""

    def __init__(self, repo, oracle):
        self.repo = repo
        self.oracle = oracle
        self.proc = subprocess.Popen(["git", *GIT_SAFE, "-C", repo, "cat-file", "--batch"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)  # fmt: skip
        self.symbols = {}  # blob id -> ({name: text}, duplicates)
        self.parents = {}

    def blob(self, commit, path):
        self.proc.stdin.write(("%s:%s\n" % (commit, path)).encode())
        self.proc.stdin.flush()
        header = self.proc.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            return None, None
        data = self.proc.stdout.read(int(header[2]) + 1)[:-1]
        return header[0].decode(), data

    def text(self, commit, names, symbol):
        """The symbol's normalised text at ``commit`` (the file under the first of ``names`` that
        exists there); None when absent, "" when the file is absent, "dup" when defined twice."""
        for path in names:
            blob, data = self.blob(commit, path)
            if blob is None:
                continue
            if blob not in self.symbols:
                language = symbols_bench.EXTENSIONS.get(os.path.splitext(path)[1].lower())
                self.symbols[blob] = self.oracle.symbols(language, data) if language else ({}, set())
            texts, duplicates = self.symbols[blob]
            if symbol in duplicates:
                return "dup"
            return symbols_bench.normalise(texts[symbol]) if symbol in texts else None
        return ""

    def parents_of(self, commit):
        if commit not in self.parents:
            self.parents[commit] = (
                git(self.repo, "rev-list", "--parents", "-n", "1", commit).decode().split()[1:]
            )
        return self.parents[commit]

    def changed(self, commit, names, symbol):
        """Whether ``commit``'s diff against its parent(s) changed the symbol's text."""
        now = self.text(commit, names, symbol)
        before = [self.text(p, names, symbol) for p in self.parents_of(commit)]
        return bool(before) and all(now != b for b in before)

    def first_change(self, start, end, names, symbol):
        """The commit that first made the text differ from ``start``'s along the first-parent line
        from ``start`` to ``end``, going down a merged branch when the change came from it."""
        base = self.text(start, names, symbol)
        chain = (
            git(self.repo, "rev-list", "--first-parent", "--reverse", "%s..%s" % (start, end))
            .decode()
            .split()
        )
        for commit in chain:
            if self.text(commit, names, symbol) == base:
                continue
            parents = self.parents_of(commit)
            if len(parents) < 2:
                return commit
            now = self.text(commit, names, symbol)
            side = [p for p in parents[1:] if self.text(p, names, symbol) == now]
            if not side:
                return commit  # the merge itself made the text
            fork = git(self.repo, "merge-base", parents[0], side[0]).decode().strip()
            return self.first_change(fork, side[0], names, symbol) or commit
        return None

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def file_names(repo, t0, t1, path):
    """Every name the file at ``path`` (at T0) had up to T1, by git's own rename detection."""
    names = [path]
    out = git(
        repo, "log", "--reverse", "--format=", "--name-status", "-M", "--first-parent", "%s..%s" % (t0, t1)
    )
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        fields = line.split("\t")
        if len(fields) == 3 and fields[0].startswith("R") and fields[1] in names and fields[2] not in names:
            names.append(fields[2])
    return list(reversed(names))  # the newest name first


def stale_symbols(repo, t0, t1, oracle, count, rng):
    """Up to ``count`` (path, symbol) whose text differs between T0 and T1, per the oracle."""
    blobs0 = symbols_bench.tree_blobs(repo, t0)
    blobs1 = symbols_bench.tree_blobs(repo, t1)
    moved = symbols_bench.renames(repo, t0, t1)
    found = []
    for path in sorted(blobs0):
        language = symbols_bench.EXTENSIONS.get(os.path.splitext(path)[1].lower())
        if not language or not oracle.available(language):
            continue
        target = moved.get(path, path)
        if target is None or target not in blobs1 or blobs1[target] == blobs0[path]:
            continue
        data = symbols_bench.read_blobs(repo, [blobs0[path], blobs1[target]])
        before = oracle.symbols(language, data.get(blobs0[path], b""))
        after = oracle.symbols(language, data.get(blobs1[target], b""))
        for name, text in before[0].items():
            if name in before[1] or name in after[1] or name not in after[0]:
                continue  # defined twice, or gone: no single text to compare
            if symbols_bench.normalise(after[0][name]) != symbols_bench.normalise(text):
                found.append((path, name))
    rng.shuffle(found)
    return sorted(found[:count])


def run_repo(repo, days, count, wctx, say):
    rng = random.Random(0)
    oracle = symbols_bench.Oracle()
    t0, t1 = commit_before(repo, days)
    chosen = stale_symbols(repo, t0, t1, oracle, count, rng)
    say("%s: %d stale symbols chosen" % (os.path.basename(repo), len(chosen)))
    scratch = tempfile.mkdtemp(prefix="wctx-reasons-bench-")
    worktree = os.path.join(scratch, "wt")
    git(repo, "worktree", "add", "--detach", "--quiet", worktree, t0)
    store = None
    report = {"repository": os.path.basename(repo), "t0": t0[:12], "t1": t1[:12],
              "commits": int(git(repo, "rev-list", "--count", "%s..%s" % (t0, t1)).decode()),
              "merges": int(git(repo, "rev-list", "--count", "--merges", "%s..%s" % (t0, t1)).decode())}  # fmt: skip
    history = History(repo, oracle)
    try:
        store = wctx.open_store(os.path.join(scratch, "home"))
        wctx.register_repo(store, worktree, name="bench")
        ids = []
        for i in range(0, len(chosen), 200):
            items = [{"kind": "finding", "claim": "about %s in %s" % (s, p), "repo": "bench", "files": ["%s#%s" % (p, s)]}
                     for p, s in chosen[i : i + 200]]  # fmt: skip
            ids += [e["id"] for e in wctx.capture(store, items, cwd=worktree, agent="bench")["evidence"]]
        git(worktree, "checkout", "--detach", "--quiet", t1)
        started = time.perf_counter()
        result = {i["id"]: i for i in wctx.verify(store, ids)["items"]}
        report["verify_s"] = round(time.perf_counter() - started, 2)
        named = right = firsts = first_named = stale = with_wrong = 0
        wrong, missed = [], []
        for (path, symbol), eid in zip(chosen, ids):
            item = result[eid]
            if item["verdict"] != "stale":
                continue
            stale += 1
            names = file_names(repo, t0, t1, path)
            shas = item["anchors"][0].get("changed_in")
            if shas is None:  # a wctx before changed_in: the short shas its reason lists
                shas = named_in_reason(repo, item["reasons"][0])
            wrong_here = False
            for sha in shas:
                named += 1
                if history.changed(sha, names, symbol):
                    right += 1
                else:
                    wrong_here = True
                    if len(wrong) < 5:
                        wrong.append("%s#%s %s" % (path, symbol, sha[:10]))
            with_wrong += wrong_here
            first = history.first_change(t0, t1, names, symbol)
            if first is not None:
                firsts += 1
                if first in shas:
                    first_named += 1
                elif len(missed) < 5:
                    missed.append("%s#%s %s: %s" % (path, symbol, first[:10], item["reasons"][0][:160]))
        report.update(
            citations=len(chosen), stale=stale, named=named, named_right=right, stale_naming_a_wrong_commit=with_wrong,
            precision=round(right / named, 4) if named else None,
            first_changes=firsts, first_change_named=first_named,
            recall_first=round(first_named / firsts, 4) if firsts else None,
            wrong=wrong, missed=missed,
        )  # fmt: skip
        # A checkout moved backwards: captured at T1, checked out at T0.
        behind = int(git(repo, "rev-list", "--count", "%s..%s" % (t0, t1)).decode())
        back = [wctx.capture(store, [{"kind": "finding", "claim": "at head: %s" % s, "repo": "bench",
                                      "files": ["%s#%s" % (names_at_t1(repo, t0, t1, p), s)]}], cwd=worktree,
                             agent="bench")["evidence"][0]["id"] for p, s in chosen[:20]]  # fmt: skip
        git(worktree, "checkout", "--detach", "--quiet", t0)
        said = [i for i in wctx.verify(store, back)["items"] if i["verdict"] == "stale"]
        pattern = re.compile(r"\b%d commits? behind\b" % behind)
        report["behind"] = {"commits": behind, "stale": len(said),
                            "say_how_far": sum(1 for i in said if pattern.search(i["reasons"][0]))}  # fmt: skip
    finally:
        history.close()
        if store is not None:
            store.close()
        subprocess.run(
            ["git", *GIT_SAFE, "-C", repo, "worktree", "remove", "--force", worktree], capture_output=True
        )
        subprocess.run(["git", *GIT_SAFE, "-C", repo, "worktree", "prune"], capture_output=True)
        shutil.rmtree(scratch, ignore_errors=True)
    return report


def named_in_reason(repo, reason):
    """The commits a reason lists after "since SHA:" (short shas, resolved in ``repo``)."""
    _, _, listed = reason.partition(": ")
    shas = []
    for short in re.findall(r"(?:^|; )([0-9a-f]{7,40}) \d{4}-\d\d-\d\d ", listed):
        shas.append(git(repo, "rev-parse", short + "^{commit}").decode().strip())
    return shas


def names_at_t1(repo, t0, t1, path):
    moved = symbols_bench.renames(repo, t0, t1)
    return moved.get(path) or path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", action="append", required=True)
    parser.add_argument("--span", type=int, default=365)
    parser.add_argument("--symbols", type=int, default=300)
    parser.add_argument("--wctx", default=os.path.join(ROOT, "wctx.py"))
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(args.wctx)))
    import wctx  # noqa: E402

    def say(m):
        print(m, file=sys.stderr, flush=True)

    reports = [run_repo(os.path.realpath(r), args.span, args.symbols, wctx, say) for r in args.repo]
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(reports, fh, indent=1)
    total = {
        k: sum(r.get(k) or 0 for r in reports)
        for k in ("named", "named_right", "first_changes", "first_change_named")
    }
    for r in reports:
        print("%(repository)s %(t0)s..%(t1)s: %(commits)d commits (%(merges)d merges); %(stale)d/%(citations)d "
              "stale (%(stale_naming_a_wrong_commit)d naming a wrong commit); named %(named)d, right %(named_right)d "
              "(precision %(precision)s); first change named "
              "%(first_change_named)d/%(first_changes)d (recall %(recall_first)s); behind %(behind)s" % r)  # fmt: skip
        for w in r["wrong"]:
            print("   wrong: " + w)
        for m in r["missed"]:
            print("   missed: " + m)
    if total["named"] and total["first_changes"]:
        print("overall precision %.4f (%d/%d), recall of the first change %.4f (%d/%d)" % (
            total["named_right"] / total["named"], total["named_right"], total["named"],
            total["first_change_named"] / total["first_changes"], total["first_change_named"],
            total["first_changes"]))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
