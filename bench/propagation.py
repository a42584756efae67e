#!/usr/bin/env python3
"""Freshness that follows calls across repositories (#31), measured on a real Python family.

A citing repository (flask) and the repositories it calls (werkzeug, click, jinja), each moved
from T0 to T1 (the first-parent commits before two dates, say a year apart):

1. Temporary worktrees at T0 (the repositories themselves are left alone); wctx registers the
   four in one workspace, declares ``CITING depends_on OTHER`` for each, and captures one finding
   per function and method of the citing package (found by ``ast``), through ``wctx.capture``.
   The same capture without the relations, timed in the same run, is the cost baseline.
2. Two oracles, run in subprocesses on the T0 code (the packages importable from the worktrees,
   plus ``--import`` repositories such as markupsafe, itsdangerous and blinker) and sharing no
   wctx code:
   - static: each cited function's source parsed with ``ast``; every call and every name it loads
     is resolved at run time (the module's globals, the function's own imports, attributes of
     modules and classes) to the object Python would find; those defined in a related package
     are its references (a class called counts as its own ``__init__``, else its body);
   - dynamic: the citing repository's own test suite, run with a profiler that records each call
     whose caller is a cited function and whose callee is a related package's code (instance
     methods, properties and inherited methods included, which no name reading can see).
   Each referenced (or wctx-named) definition's source is taken with ``inspect.getsource`` at T0
   and at T1 (a new process per version); "changed" means the texts differ (after dedent and
   trailing blanks) or the definition is gone at T1.
3. The worktrees move to T1; ``wctx verify --json`` over the citing repository's items. Each
   dependency verify reports as stale (so the item is possibly stale) is an alert.

Figures: precision (alerts whose dependency's text really changed), the share of alerts that
point at a definition an oracle says the function really references, recall of real changes
(a referenced definition whose text changed) against each oracle and both, alerts per real
change, and what the reading misses, by kind.

Usage::

    python3 bench/propagation.py --repo PATH/flask --repo PATH/werkzeug --repo PATH/click \\
        --repo PATH/jinja --import PATH/markupsafe --import PATH/itsdangerous --import PATH/blinker \\
        --t0 2024-06-01 --t1 2025-06-01 [--wctx PATH/wctx.py] [--json OUT]

The first --repo cites; the others are what it calls.
"""

from __future__ import annotations

import argparse
import ast
import collections
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GIT_SAFE = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"]


def git(repo, *args):
    proc = subprocess.run(["git", *GIT_SAFE, "-C", repo, *args], capture_output=True, check=False)
    if proc.returncode != 0:
        raise SystemExit("git %s failed: %s" % (" ".join(args), proc.stderr.decode("utf-8", "replace")))
    return proc.stdout.decode()


def commit_before(repo, date):
    sha = git(repo, "rev-list", "-1", "--first-parent", "--before=" + date, "HEAD").strip()
    if not sha:
        raise SystemExit("%s has no commit before %s" % (repo, date))
    return sha


def source_dir(checkout):
    """Where the repository's packages are imported from: src/ when it has one."""
    return os.path.join(checkout, "src") if os.path.isdir(os.path.join(checkout, "src")) else checkout


def package_of(checkout):
    base = source_dir(checkout)
    names = sorted(
        n for n in os.listdir(base) if os.path.isfile(os.path.join(base, n, "__init__.py")) and n != "tests"
    )
    if len(names) != 1:
        raise SystemExit("%s: expected one package under %s, found %s" % (checkout, base, names))
    return names[0]


def cited_functions(checkout, package):
    """[(path, qualname)] of the package's module-level functions and class methods."""
    base = source_dir(checkout)
    out = []
    for folder, _, files in os.walk(os.path.join(base, package)):
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            full = os.path.join(folder, name)
            rel = os.path.relpath(full, checkout).replace(os.sep, "/")
            with open(full, encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out.append((rel, node.name))
                elif isinstance(node, ast.ClassDef):
                    for inner in node.body:
                        if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            out.append((rel, "%s.%s" % (node.name, inner.name)))
    return sorted(set(out))


def module_of(checkout, path):
    """The dotted module of a repository-relative path (src/werkzeug/utils.py -> werkzeug.utils)."""
    rel = os.path.relpath(os.path.join(checkout, path), source_dir(checkout)).replace(os.sep, "/")
    parts = rel[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


# ---------------------------------------------------------------------------------------------
# The oracles: run in a subprocess with the checkouts' packages on sys.path
# ---------------------------------------------------------------------------------------------

ORACLE = r'''
import ast, builtins, importlib, inspect, json, os, sys, textwrap

def lookup(module, qualname):
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        inner = vars(obj).get(part) if isinstance(obj, type) or inspect.ismodule(obj) else None
        if inner is None:
            inner = getattr(obj, part)
        obj = inner
    for attr in ("__func__", "fget", "func", "callback"):  # classmethod/staticmethod, property, cached_property, a click command
        if not inspect.isfunction(obj) and not inspect.isclass(obj) and hasattr(obj, attr):
            obj = getattr(obj, attr)
    return inspect.unwrap(obj) if inspect.isfunction(obj) else obj  # the function a decorator wraps

def text(module, qualname):
    try:
        obj = lookup(module, qualname)
        src = inspect.getsource(obj)
    except Exception:
        return None
    lines = [l.rstrip() for l in textwrap.dedent(src).split("\n")]
    return "\n".join(lines).strip("\n")

def target(obj, called, packages):
    """(module, qualname) of what a resolved name stands for, or None."""
    if inspect.ismethod(obj):
        obj = obj.__func__
    obj = inspect.unwrap(obj) if inspect.isfunction(obj) else obj
    module = getattr(obj, "__module__", None) or ""
    if module.split(".")[0] not in packages:
        return None
    if inspect.isclass(obj):
        if not called:
            return None
        if "__init__" in vars(obj) and inspect.isfunction(vars(obj)["__init__"]):
            return (module, obj.__qualname__ + ".__init__")
        return (module, obj.__qualname__)
    if inspect.isfunction(obj):  # a closure counts as the definition that makes it
        return (obj.__module__, obj.__qualname__.split(".<locals>")[0])
    return None

def dotted(node):
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id] + names[::-1]

def static(module, qualname, packages):
    f = lookup(module, qualname)
    tree = ast.parse(textwrap.dedent(inspect.getsource(f)))
    fn = tree.body[0]
    imported, shadow = {}, set()
    for node in ast.walk(fn):
        if isinstance(node, ast.arg):
            shadow.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            shadow.add(node.id)
        elif isinstance(node, ast.Import):
            for a in node.names:
                try:
                    imported[a.asname or a.name.split(".")[0]] = importlib.import_module(a.asname and a.name or a.name.split(".")[0])
                except Exception:
                    pass
        elif isinstance(node, ast.ImportFrom):
            pkg = f.__module__ if node.level else None
            base = "." * node.level + (node.module or "")
            for a in node.names:
                try:
                    m = importlib.import_module(base, pkg.rpartition(".")[0] if pkg else None)
                    imported[a.asname or a.name] = getattr(m, a.name) if hasattr(m, a.name) else importlib.import_module(base + "." + a.name, pkg.rpartition(".")[0] if pkg else None)
                except Exception:
                    pass
    shadow -= set(imported)
    funcs = {id(n.func) for n in ast.walk(fn) if isinstance(n, ast.Call)}
    inner = {id(n.value) for n in ast.walk(fn) if isinstance(n, ast.Attribute)}
    found = {}
    for node in ast.walk(fn):
        if not isinstance(node, (ast.Name, ast.Attribute)) or id(node) in inner:
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            continue
        parts = dotted(node)
        if not parts:
            continue
        called = id(node) in funcs
        if parts[0] in imported:
            obj = imported[parts[0]]
        elif parts[0] in shadow or parts[0] not in f.__globals__:
            continue
        else:
            obj = f.__globals__[parts[0]]
        for attr in parts[1:]:
            if not (inspect.ismodule(obj) or inspect.isclass(obj)):
                obj = None
                break
            obj = getattr(obj, attr, None)
        if obj is None:
            continue
        t = target(obj, called, packages)
        if t is not None:
            key = "%s:%s" % t
            found[key] = "calls" if called or found.get(key) == "calls" else "uses"
    return found

mode = sys.argv[1]
request = json.load(sys.stdin)
if mode == "static":
    out = {}
    for module, qualname in request["functions"]:
        try:
            out["%s:%s" % (module, qualname)] = static(module, qualname, set(request["packages"]))
        except Exception as e:
            out["%s:%s" % (module, qualname)] = {"!error": type(e).__name__}
    json.dump(out, sys.stdout)
elif mode == "texts":
    json.dump({"%s:%s" % (m, q): text(m, q) for m, q in request["definitions"]}, sys.stdout)
'''

PROFILER = r"""
import json, os, sys, threading
CITING = os.path.realpath(os.environ["PROP_CITING"]) + os.sep
CALLED = tuple(os.path.realpath(p) + os.sep for p in json.loads(os.environ["PROP_CALLED"]))
EDGES = set()

def _profile(frame, event, arg):
    if event != "call":
        return
    code = frame.f_code
    if not code.co_filename.startswith(CALLED):
        return
    caller = frame.f_back
    if caller is not None and caller.f_code.co_filename.startswith(CITING):
        EDGES.add((caller.f_code.co_filename, caller.f_code.co_qualname, code.co_filename, code.co_qualname))

sys.setprofile(_profile)
threading.setprofile(_profile)

def pytest_sessionfinish(session, exitstatus):
    sys.setprofile(None)
    with open(os.environ["PROP_OUT"], "w") as fh:
        json.dump(sorted(EDGES), fh)
"""


def run_oracle(mode, request, pythonpath, scratch):
    script = os.path.join(scratch, "oracle.py")
    with open(script, "w") as fh:
        fh.write(ORACLE)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(pythonpath), PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run(
        [sys.executable, script, mode], input=json.dumps(request).encode(), capture_output=True, env=env,
        cwd=scratch, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit("oracle %s failed: %s" % (mode, proc.stderr.decode()[-3000:]))
    return json.loads(proc.stdout)


def dynamic_edges(citing, called, pythonpath, scratch):
    """[(caller file, caller qualname, callee file, callee qualname)] seen running the citing
    repository's tests."""
    plugin_dir = os.path.join(scratch, "plugin")
    os.makedirs(plugin_dir, exist_ok=True)
    with open(os.path.join(plugin_dir, "prop_profiler.py"), "w") as fh:
        fh.write(PROFILER)
    out = os.path.join(scratch, "edges.json")
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([plugin_dir] + pythonpath), PYTHONDONTWRITEBYTECODE="1",
        PROP_CITING=source_dir(citing), PROP_CALLED=json.dumps([source_dir(c) for c in called]), PROP_OUT=out,
    )  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-p", "prop_profiler", "tests"],
        cwd=citing, env=env, capture_output=True, check=False,
    )  # fmt: skip
    tail = proc.stdout.decode()[-300:].strip().splitlines()
    if not os.path.exists(out):
        raise SystemExit("the citing repository's tests did not run: %s" % proc.stderr.decode()[-2000:])
    with open(out) as fh:
        return [tuple(e) for e in json.load(fh)], tail[-1] if tail else ""


def top_qualname(qualname):
    """A nested function's frame belongs to the definition that holds it."""
    return qualname.split(".<locals>")[0].split(".<")[0]


# ---------------------------------------------------------------------------------------------
# wctx
# ---------------------------------------------------------------------------------------------


def load_wctx(path):
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    return importlib.import_module("wctx")


def capture_all(wctx, home, checkouts, names, cited, related):
    store = wctx.open_store(home)
    try:
        for name, checkout in zip(names, checkouts):
            wctx.register_repo(store, checkout, name=name, workspace="family")
        if related:
            for other in names[1:]:
                wctx.relate(store, names[0], "depends_on", other)
        ids, warnings = {}, []
        started = time.perf_counter()
        for i in range(0, len(cited), 100):
            chunk = cited[i : i + 100]
            res = wctx.capture(
                store,
                [{"kind": "finding", "claim": "finding about %s#%s" % c, "repo": names[0],
                  "files": ["%s#%s" % c]} for c in chunk],
                cwd=checkouts[0],
            )  # fmt: skip
            warnings += res["warnings"]
            for c, e in zip(chunk, res["evidence"]):
                ids[e["id"]] = c
        seconds = time.perf_counter() - started
        deps = {}
        for row in store.all(
            "SELECT e.id, d.repo_name, d.path, d.symbol, d.how FROM dependencies d JOIN evidence e "
            "ON e.rid = d.evidence_rid"
        ):
            deps.setdefault(row[0], []).append((row[1], row[2], row[3], row[4]))
        return ids, deps, warnings, seconds
    finally:
        store.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", action="append", required=True, help="the citing repository first")
    ap.add_argument("--import", dest="imports", action="append", default=[], help="also importable")
    ap.add_argument("--t0", required=True)
    ap.add_argument("--t1", required=True)
    ap.add_argument("--wctx", default=os.path.join(ROOT, "wctx.py"))
    ap.add_argument("--json")
    args = ap.parse_args()
    if len(args.repo) < 2:
        raise SystemExit("give the citing repository and at least one it calls")
    repos = [os.path.realpath(r) for r in args.repo]
    extra = [os.path.realpath(r) for r in args.imports]
    names = [os.path.basename(r.rstrip("/")) for r in repos]
    wctx = load_wctx(args.wctx)
    scratch = tempfile.mkdtemp(prefix="wctx-propagation-")
    worktrees = []
    try:
        commits = {}
        for repo in repos + extra:
            t0, t1 = commit_before(repo, args.t0), commit_before(repo, args.t1)
            path = os.path.join(scratch, "wt", os.path.basename(repo))
            git(repo, "worktree", "add", "-q", "--detach", path, t0)
            worktrees.append((repo, path))
            commits[repo] = (t0, t1, path)
        checkouts = [commits[r][2] for r in repos]
        pythonpath = [source_dir(commits[r][2]) for r in repos + extra]
        packages = [package_of(c) for c in checkouts]
        cited = cited_functions(checkouts[0], packages[0])
        print("cited: %d functions and methods of %s" % (len(cited), names[0]), file=sys.stderr)

        # wctx at T0: with the relations, and the same capture without them (the cost baseline).
        ids, deps, warnings, with_s = capture_all(
            wctx, os.path.join(scratch, "home"), checkouts, names, cited, True
        )
        _, _, _, without_s = capture_all(wctx, os.path.join(scratch, "home0"), checkouts, names, cited, False)
        by_cited = {c: eid for eid, c in ids.items()}
        # One capture as a user runs it (a new process), of the cited function with the most
        # dependencies, with and without the relations (median of 5 each).
        busiest = max(deps, key=lambda e: len(deps[e]))
        one = "%s#%s" % ids[busiest]
        one_capture = {}
        for label, home in (("with_relations", "home"), ("without", "home0")):
            runs = []
            for n in range(5):
                env = dict(os.environ, WCTX_HOME=os.path.join(scratch, home))
                started = time.perf_counter()
                subprocess.run([sys.executable, args.wctx, "capture", "--finding", "one capture %d" % n,
                                "--repo", names[0], "--file", one], cwd=checkouts[0], env=env,
                               capture_output=True, check=True)  # fmt: skip
                runs.append(time.perf_counter() - started)
            one_capture[label] = round(sorted(runs)[2] * 1000.0, 1)

        # The oracles at T0.
        functions = [(module_of(checkouts[0], p), q) for p, q in cited]
        static = run_oracle("static", {"functions": functions, "packages": packages[1:]}, pythonpath, scratch)
        edges, tests = dynamic_edges(checkouts[0], checkouts[1:], pythonpath, scratch)
        dynamic = collections.defaultdict(set)
        src_of = {source_dir(c) + os.sep: c for c in checkouts}
        for caller_file, caller_q, callee_file, callee_q in edges:
            caller_root = next(c for s, c in src_of.items() if caller_file.startswith(s))
            callee_root = next(c for s, c in src_of.items() if callee_file.startswith(s))
            caller = "%s:%s" % (
                module_of(caller_root, os.path.relpath(caller_file, caller_root)),
                top_qualname(caller_q),
            )
            callee = "%s:%s" % (
                module_of(callee_root, os.path.relpath(callee_file, callee_root)),
                top_qualname(callee_q),
            )
            dynamic[caller].add(callee)
        by_repo = dict(zip(names, checkouts))
        wctx_deps = {}  # {cited key: {definition key: how}}
        for eid, rows in deps.items():
            path, symbol = ids[eid]
            key = "%s:%s" % (module_of(checkouts[0], path), symbol)
            for repo_name, dep_path, dep_symbol, how in rows:
                wctx_deps.setdefault(key, {})[
                    "%s:%s" % (module_of(by_repo[repo_name], dep_path), dep_symbol)
                ] = how
        definitions = set()
        for found in (
            list(static.values()) + [dict.fromkeys(v) for v in dynamic.values()] + list(wctx_deps.values())
        ):
            definitions |= {k for k in found if not k.startswith("!")}
        definitions = sorted(definitions)
        request = {"definitions": [d.split(":", 1) for d in definitions]}
        before = run_oracle("texts", request, pythonpath, scratch)

        # Move everything to T1.
        for repo in repos + extra:
            git(commits[repo][2], "checkout", "-q", "--detach", commits[repo][1])
        after = run_oracle("texts", request, pythonpath, scratch)
        changed = {d: before[d] != after[d] for d in definitions if before.get(d) is not None}

        env = dict(os.environ, WCTX_HOME=os.path.join(scratch, "home"))
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, args.wctx, "verify", "--json", "--about", names[0], "--repo", names[0]],
                              capture_output=True, env=env, check=False)  # fmt: skip
        verify_s = time.perf_counter() - started
        if proc.returncode not in (0, 1):
            raise SystemExit("verify failed: %s" % proc.stderr.decode()[-2000:])
        verified = json.loads(proc.stdout)["items"]

        alerts = []  # (cited key, definition key)
        verdicts = collections.Counter()
        for item in verified:
            if item["id"] not in ids:
                continue  # the one-capture timing's items
            verdicts[item["verdict"]] += 1
            path, symbol = ids[item["id"]]
            key = "%s:%s" % (module_of(checkouts[0], path), symbol)
            for d in item.get("dependencies", ()):
                if d["verdict"] in ("stale", "possibly_stale"):
                    alerts.append((key, "%s:%s" % (module_of(by_repo[d["repo"]], d["path"]), d["symbol"])))

        def referenced(fn):
            return set(k for k in static.get(fn, {}) if not k.startswith("!")) | dynamic.get(fn, set())

        judged = [(f, d) for f, d in alerts if d in changed]
        right = [(f, d) for f, d in judged if changed[d]]
        really = [(f, d) for f, d in alerts if d in referenced(f)]
        alerted = set(alerts)
        fns = ["%s:%s" % f for f in functions]
        real = {}
        for name, refs in (("static", lambda f: {k for k in static.get(f, {}) if not k.startswith("!")}),
                           ("dynamic", lambda f: dynamic.get(f, set())), ("either", referenced)):  # fmt: skip
            pairs = {(f, d) for f in fns for d in refs(f) if changed.get(d)}
            caught = pairs & alerted
            real[name] = {"real_changes": len(pairs), "caught": len(caught),
                          "recall": round(len(caught) / len(pairs), 3) if pairs else None}  # fmt: skip
        # What the reading misses, by kind (the dynamic oracle's calls it did not name).
        missed = collections.Counter()
        missed_pairs = []
        for fn in fns:
            for d in referenced(fn):
                if not changed.get(d) or (fn, d) in alerted:
                    continue
                method = d.rsplit(".", 1)[-1]
                if d in static.get(fn, {}):
                    missed["named in the code, not read"] += 1
                elif method.startswith("__") and method != "__init__":
                    missed["run implicitly: a descriptor, a proxy's lookup, an operator"] += 1
                elif method == "__init__":
                    missed["a constructor reached without the class's name (an attribute holding it)"] += 1
                else:
                    missed["a method called on an instance (its type is not in the text)"] += 1
                missed_pairs.append("%s -> %s" % (fn, d))
        items_with_deps = sum(1 for c in cited if by_cited[c] in deps)
        figures = {
            "commits": {names[i]: [commits[r][0][:10], commits[r][1][:10]] for i, r in enumerate(repos)},
            "tests_run": tests,
            "cited": len(cited),
            "items_with_dependencies": items_with_deps,
            "dependencies": sum(len(v) for v in deps.values()),
            "unsure_notes": len([w for w in warnings if "not followed" in w]),
            "static_references": sum(len([k for k in v if not k.startswith("!")]) for v in static.values()),
            "dynamic_references": sum(len(v) for v in dynamic.values()),
            "capture_s": {"with_relations": round(with_s, 2), "without": round(without_s, 2)},
            "one_capture_ms": dict(one_capture, symbol=one, dependencies=len(deps[busiest])),
            "verify_s": round(verify_s, 2),
            "verdicts": dict(verdicts),
            "alerts": len(alerts),
            "precision": {
                "right": len(right),
                "judged": len(judged),
                "value": round(len(right) / len(judged), 3) if judged else None,
            },  # fmt: skip
            "alerts_really_referenced": {"n": len(really), "of": len(alerts)},
            "real": real,
            "alerts_per_real_change": round(len(alerts) / real["either"]["real_changes"], 3)
            if real["either"]["real_changes"]
            else None,
            "alerts_per_real_change_caught": round(len(alerts) / real["either"]["caught"], 3)
            if real["either"]["caught"]
            else None,
            "missed": dict(missed),
            "missed_pairs": sorted(missed_pairs),
            "only_wctx": sorted(
                "%s -> %s" % (f, d) for f, deps_ in wctx_deps.items() for d in deps_ if d not in referenced(f)
            )[:40],
            "wrong_alerts": sorted("%s -> %s" % a for a in alerts if a in judged and not changed[a[1]])[:20],
            "unsure": warnings[:20],
        }
        print(json.dumps(figures, indent=2))
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(figures, fh, indent=2)
    finally:
        for repo, path in worktrees:
            subprocess.run(
                ["git", *GIT_SAFE, "-C", repo, "worktree", "remove", "--force", path], capture_output=True
            )
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
