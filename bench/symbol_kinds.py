#!/usr/bin/env python3
"""What the symbol locator finds, and what it costs, against another build, in one run.

For every source file of a language wctx reads under the ``--repo`` directories (read-only), the
names declared at the start of a line by a keyword (``def``, ``class``, ``func``, ``fn``,
``const``, ``var``, ``let``, ``type``, ``static``, ``struct``, ``enum``, ...) and the names assigned
at the start of a line (``X = ...``, ``X: T = ...``) are cited one by one, as verify does:
``symbol_hashes_of`` per file, the caches emptied before each build's pass. Both builds read the
same files and names, in alternating rounds (the machine is shared: only the ratio is reported).

    python3 bench/symbol_kinds.py --base OLD/wctx.py --repo /work/repos/encode/uvicorn ...

Reports, per language: files, names, the share each build locates, and the time of the new build
over the base (median over the rounds), over all the names and over the names the base build
locates (the same work for both: what existing citations cost).

With ``--same``, it checks instead that every name the base build locates (and ``Owner.name``
for each name declared inside a type's body) is located by the new build with the same lines and
the same hash, so an item recorded before keeps its hash; each difference is listed and the exit
status is 1 when there is one:

    python3 bench/symbol_kinds.py --same --base OLD/wctx.py --repo DIR ...

With ``--same-masks``, it compares the text the locator reads (comments and strings blanked) of
every source file under the directories, whatever ``--files`` says, and lists the files that differ.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

_DECLARED = re.compile(
    r"^[ \t]*(?:export[ \t]+|pub(?:\([^)\n]*\))?[ \t]+|public[ \t]+|private[ \t]+|static[ \t]+)*"
    r"(?:def|class|func|fn|const|var|let|type|static|struct|enum|trait|interface|val)[ \t]+([A-Za-z_]\w*)",
    re.M,
)
_ASSIGNED = re.compile(r"^[ \t]*([A-Za-z_]\w*)[ \t]*(?::[^=\n]+)?=[^=]", re.M)
_OWNER = re.compile(r"\b(?:class|struct|interface|enum|trait|impl|module|object|record)[ \t]+([A-Za-z_]\w*)")
_SKIP_DIRS = {".git", "node_modules", "vendor", "target", "build", "dist", "__pycache__"}


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def material(repos, language_of, per_language):
    """{language: [(path, bytes, [names])]}, at most ``per_language`` files each."""
    out = {}
    for repo in repos:
        for top, dirs, files in os.walk(repo):
            dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
            for name in sorted(files):
                path = os.path.join(top, name)
                language = language_of(path)
                if language is None or len(out.get(language, ())) >= per_language:
                    continue
                with open(path, "rb") as fh:
                    data = fh.read()
                if len(data) > 400_000:
                    continue
                text = data.decode("utf-8", "replace")
                names = sorted(set(_DECLARED.findall(text)) | set(_ASSIGNED.findall(text)))
                if names:
                    out.setdefault(language, []).append((os.path.relpath(path, repo), data, names))
    return out


def qualified(text, names):
    """``Owner.name`` for the names declared in the 3,000 characters after each type's header."""
    out = []
    for owner in _OWNER.finditer(text):
        inner = set(_DECLARED.findall(text, owner.end(), owner.end() + 3000)) & set(names)
        out.extend("%s.%s" % (owner.group(1), name) for name in sorted(inner) if name != owner.group(1))
    return sorted(set(out))[:200]


def stamps(module, path, data, names):
    """{name: (hash, lines)} of the names ``module`` locates in one file."""
    module.clear_caches()
    out = {}
    for name in names:
        found = module.symbol_stamp_of(data, path, name)
        if found[0] is not None:
            out[name] = found
    return out


def same_stamps(base, new, by_language):
    """Print, per language, the names the base build locates and those the new one stamps
    differently; list each difference. True when there is none."""
    print("| language | files | names located by the base | same hash and lines in the new |")
    print("| --- | ---: | ---: | ---: |")
    differences = []
    for language in sorted(by_language):
        located = kept = 0
        for path, data, names in by_language[language]:
            cited = names + qualified(data.decode("utf-8", "replace"), names)
            before, after = stamps(base, path, data, cited), stamps(new, path, data, cited)
            located += len(before)
            for name, stamp in sorted(before.items()):
                if after.get(name) == stamp:
                    kept += 1
                else:
                    differences.append((path, name, stamp, after.get(name)))
        print("| %s | %d | %d | %d |" % (language, len(by_language[language]), located, kept))
    for path, name, before, after in differences:
        print("differs: %s#%s %s -> %s" % (path, name, before, after))
    return not differences


def same_masks(base, new, repos):
    """Print the files whose masked text differs between the builds; True when none does."""
    files = differ = 0
    for repo in repos:
        for top, dirs, names in os.walk(repo):
            dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
            for name in sorted(names):
                path = os.path.join(top, name)
                language = new.language_of(path)
                if language is None or os.path.getsize(path) > 400_000:
                    continue
                with open(path, "rb") as fh:
                    source = fh.read().decode("utf-8", "surrogateescape")
                files += 1
                if base._mask_source(source, language) != new._mask_source(source, language):
                    differ += 1
                    print("differs: %s (%s)" % (path, language))
    print("%d files, %d differ" % (files, differ))
    return not differ


def run(module, files):
    module.clear_caches()
    found = 0
    start = time.perf_counter()
    for path, data, names in files:
        found += sum(v is not None for v in module.symbol_hashes_of(data, path, names).values())
    return time.perf_counter() - start, found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", required=True, help="the wctx.py to compare against")
    parser.add_argument("--wctx", default=os.path.join(ROOT, "wctx.py"))
    parser.add_argument("--repo", action="append", required=True)
    parser.add_argument("--files", type=int, default=150, help="files per language (default 150)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--same", action="store_true", help="check hashes and lines, not speed")
    parser.add_argument("--same-masks", action="store_true", help="check the masked text of every file")
    args = parser.parse_args()
    base, new = load(args.base, "wctx_base"), load(args.wctx, "wctx_new")
    if args.same_masks:
        return 0 if same_masks(base, new, args.repo) else 1
    by_language = material(args.repo, new.language_of, args.files)
    if args.same:
        return 0 if same_stamps(base, new, by_language) else 1
    print("| language | files | names | located, base | located, new | time new / base | same names |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for language in sorted(by_language):
        files = by_language[language]
        names = sum(len(n) for _, _, n in files)
        known = []  # the names the base build locates: the same work for both builds
        for path, data, cited in files:
            base.clear_caches()
            hashes = base.symbol_hashes_of(data, path, cited)
            known.append((path, data, [n for n in cited if hashes[n] is not None]))
        ratios, same, found = [], [], {}
        for _ in range(args.rounds):
            t_base, found["base"] = run(base, files)
            t_new, found["new"] = run(new, files)
            ratios.append(t_new / t_base if t_base else float("nan"))
            t_base, _ = run(base, known)
            t_new, _ = run(new, known)
            same.append(t_new / t_base if t_base else float("nan"))
        row = (language, len(files), names, found["base"] / names, found["new"] / names)
        print(
            "| %s | %d | %d | %.3f | %.3f | %.2f | %.2f |"
            % (row + (statistics.median(ratios), statistics.median(same)))
        )


if __name__ == "__main__":
    sys.exit(main())
