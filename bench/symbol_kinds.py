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
    args = parser.parse_args()
    base, new = load(args.base, "wctx_base"), load(args.wctx, "wctx_new")
    by_language = material(args.repo, new.language_of, args.files)
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
    main()
