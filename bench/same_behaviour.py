#!/usr/bin/env python3
"""Show that a refactor changed nothing a user sees: run a fixed script of CLI and MCP calls over a
real workspace and compare the outputs of two builds byte for byte.

The workspace is four real repositories (encode's httpx, httpcore, starlette and uvicorn, cloned
locally under REPOS): each is checked out 25 first-parent commits back, items citing functions,
classes and constants of the files changed since are captured (with symptoms, confidence, a
cross-repository finding), the clones move to their newest commit, and then: search with reasons
(text, JSON, detail, fts, all), verify with reasons, the briefing of each repository, show,
sessions, retract, supersede, confirm, forget, import of the test fixtures' Claude Code, Codex and
Gemini CLI transcripts and of shared/data's real ones, export, report (text, JSON, page), sync
between two stores through a bare repository, doctor, two refused inputs, and an MCP session
(tools/list and every read tool, a record, a search).

    python3 bench/same_behaviour.py record CHECKOUT OUTDIR --repos REPOS   # outputs of CHECKOUT/wctx.py
    python3 bench/same_behaviour.py compare CHECKOUT BASEDIR --repos REPOS # run CHECKOUT, diff with BASEDIR

For example, before a refactor: `git worktree add /tmp/before HEAD` and
`python3 bench/same_behaviour.py record /tmp/before /tmp/before-out --repos /work/repos/encode`;
after each step: `python3 bench/same_behaviour.py compare . /tmp/before-out --repos /work/repos/encode`.

Normalised: the temporary root, durations, timestamps, generated ids (ev-, ses-, ...) and hex
strings of 7+ characters are replaced by placeholders numbered by first appearance, so two runs of
the same code give the same bytes and a difference is a change of behaviour.
"""

import argparse
import ast
import difflib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPOS = None  # set from --repos
NAMES = ["httpx", "httpcore", "starlette", "uvicorn"]
BACK = 25
FIXTURES = os.path.join(os.path.dirname(HERE), "tests", "fixtures", "transcripts")
SHARED = next(  # the real agent transcripts in shared/data beside the checkout (or a worktree's parents)
    (
        os.path.join(up, "shared", "data", "transcripts")
        for up in [
            os.path.dirname(os.path.dirname(HERE)),
            os.path.dirname(os.path.dirname(os.path.dirname(HERE))),
        ]
        if os.path.isdir(os.path.join(up, "shared", "data", "transcripts"))
    ),
    os.path.join(os.path.dirname(os.path.dirname(HERE)), "shared", "data", "transcripts"),
)


class Norm:
    def __init__(self, root, checkout=None):
        self.root = root
        self.checkout = checkout
        self.map = {}
        self.secrets = {}

    def sub(self, kind, token):
        key = (kind, token)
        if key not in self.map:
            self.map[key] = "<%s%d>" % (kind, sum(1 for k in self.map if k[0] == kind) + 1)
        return self.map[key]

    def __call__(self, text):
        text = text.replace(os.path.realpath(self.root), "<ROOT>").replace(self.root, "<ROOT>")
        if self.checkout:  # the build measured, wherever it is checked out
            text = text.replace(self.checkout, "<CHECKOUT>")
            text = re.sub(r'"(bytes|tokens)": \d+', r'"\1": <N>', text)
        text = re.sub(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?", "<TS>", text)
        text = re.sub(r"\b\d+(\.\d+)? ?(ms|s|µs)\b", "<DUR>", text)
        text = re.sub(r'"(ms|elapsed_ms|took_ms|seconds)": [0-9.]+', r'"\1": <N>', text)
        text = re.sub(
            r"(?:(?<=\\n)|(?<![A-Za-z0-9]))(ev|ses)-[0-9a-f]{6,}\b",
            lambda m: self.sub(m.group(1), m.group(0)),
            text,
        )
        text = re.sub(r"(?:(?<=\\n)|(?<![A-Za-z0-9]))(evt|mch|req|tok)-[0-9a-f]{6,}\b", r"<\1>", text)
        for token, name in self.secrets.items():
            text = text.replace(token, name)
        text = re.sub(r"(pushed |commit |HEAD is now at )[0-9a-f]{7,40}\b", r"\1<PUSHED>", text)
        return text


def git(*args, cwd=None):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def symbols_of(source):
    tree = ast.parse(source)
    defs, consts = [], []
    for node in tree.body:
        if isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        ) and not node.name.startswith("__"):
            defs.append(node.name)
        elif (
            isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
        ):
            if node.targets[0].id.isupper():
                consts.append(node.targets[0].id)
    return defs, consts


def plan(root):
    """Clone each repo at T0 and pick the citations: changed files' defs and constants, one unchanged."""
    cites = {}
    for name in NAMES:
        dest = os.path.join(root, name)
        git("clone", "-q", "--shared", os.path.join(REPOS, name), dest)
        t1 = git("rev-parse", "HEAD", cwd=dest).strip()
        t0 = git("rev-parse", "HEAD~%d" % BACK, cwd=dest).strip()
        git("checkout", "-q", t0, cwd=dest)
        changed = sorted(
            p
            for p in git("diff", "--name-only", t0, t1, "--", "*.py", cwd=dest).split()
            if not p.startswith(("tests/", "docs/", "scripts/")) and os.path.exists(os.path.join(dest, p))
        )
        picks = []
        for path in changed[:3]:
            with open(os.path.join(dest, path), encoding="utf-8") as fh:
                defs, consts = symbols_of(fh.read())
            picks += ["%s#%s" % (path, d) for d in defs[:2]] + ["%s#%s" % (path, c) for c in consts[:1]]
        tracked = sorted(p for p in git("ls-files", "*.py", cwd=dest).split() if p.startswith(name))
        for path in tracked:
            if path not in changed:
                with open(os.path.join(dest, path), encoding="utf-8") as fh:
                    defs, _ = symbols_of(fh.read())
                if defs:
                    picks.append("%s#%s" % (path, defs[0]))
                    break
        cites[name] = (t0, t1, picks)
    return cites


def words(cite):
    sym = cite.split("#")[1]
    return " ".join(w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", sym)) or sym


def script(cites, root):
    """The fixed list of steps: (label, cwd repo or None, argv after 'wctx', stdin)."""
    steps = [("init", None, ["init"], None), ("whoami", None, ["whoami"], None)]
    for name in NAMES:
        steps.append(("repo-add-" + name, None, ["repo", "add", os.path.join(root, name)], None))
    steps += [
        ("relate-1", None, ["relate", "httpx", "depends_on", "httpcore"], None),
        ("relate-2", None, ["relate", "uvicorn", "uses", "starlette"], None),
        ("relations", None, ["relations"], None),
        ("repo-list", None, ["repo", "list"], None),
        ("workspace-list", None, ["workspace", "list"], None),
    ]
    kinds = ["--finding", "--decision", "--known-issue", "--dead-end", "--constraint", "--note", "--question"]
    n = 0
    for name in NAMES:
        t0, t1, picks = cites[name]
        argv = ["capture", "--summary", "what was learned about %s" % name]
        for i, cite in enumerate(picks):
            kind = kinds[(n + i) % len(kinds)]
            argv += [
                kind,
                "%s %s decides how %s behaves :: detail %d on %s" % (name, words(cite), words(cite), i, cite),
            ]
            argv += ["--repo", name, "--file", cite]
            if i % 2 == 0:
                argv += ["--symptom", "requests hang when %s misbehaves" % words(cite)]
            if i == 1:
                argv += ["--confidence", "0.7"]
        n += len(picks)
        steps.append(("capture-" + name, name, argv, None))
    steps.append(
        (
            "capture-cross",
            "httpx",
            [
                "capture",
                "--finding",
                "the bug is in the transport pool, not the client :: seen with timeouts",
                "--repo",
                "httpcore",
                "--file",
                cites["httpcore"][2][0],
                "--symptom",
                "the client times out under load",
                "--question",
                "does the client retry on a closed connection",
                "--repo",
                "httpx",
                "--json",
            ],
            None,
        )
    )
    steps.append(("checkout-t1", None, None, None))
    queries = [
        "connection pool timeout",
        "redirect",
        "lifespan startup",
        "headers encoding",
        "requests hang",
        "client times out under load",
        "stream response",
        "websocket close",
        "url",
        "decides behaves",
    ]
    for q in queries:
        steps.append(("search-" + q.replace(" ", "_"), "httpx", ["search", *q.split()], None))
    steps += [
        ("search-detail", "uvicorn", ["search", "--detail", "requests", "hang"], None),
        ("search-json", "httpx", ["search", "--json", "pool", "timeout"], None),
        ("search-fts", "httpx", ["search", "--rank", "fts", "pool", "timeout"], None),
        ("search-all", "starlette", ["search", "--all", "--all-matches", "--limit", "30", "request"], None),
        ("search-kind", "httpx", ["search", "--kind", "finding", "client"], None),
        ("verify", "httpx", ["verify", "--all"], None),
        ("verify-detail", "uvicorn", ["verify", "--all", "--detail"], None),
        ("verify-json", "starlette", ["verify", "--all", "--json"], None),
        ("verify-repo", "httpcore", ["verify", "--strict"], None),
    ]
    for name in NAMES:
        steps.append(("brief-" + name, name, ["brief"], None))
    steps += [
        ("brief-json", "httpx", ["brief", "--json"], None),
        ("show-1", None, ["show", "@ID1"], None),
        ("show-json", None, ["show", "--json", "@ID2"], None),
        ("sessions", None, ["sessions"], None),
        ("sessions-json", None, ["sessions", "--json"], None),
        ("sessions-show", None, ["sessions", "show", "@SES1"], None),
        ("retract", None, ["retract", "@ID3"], None),
        ("supersede", None, ["supersede", "--by", "@ID4", "@ID5"], None),
        ("confirm", None, ["confirm", "@ID6"], None),
        ("forget", None, ["forget", "--reason", "wrong", "--yes", "@ID7"], None),
        ("import-fixtures", None, ["import", os.path.join(root, "transcripts")], None),
        ("import-again", None, ["import", "--json", os.path.join(root, "transcripts")], None),
        ("import-shared", None, ["import", SHARED], None),
        ("sessions-after-import", None, ["sessions", "--json", "--limit", "50"], None),
        ("export", None, ["export"], None),
        ("export-json", None, ["export", "--json", "--repo", "httpx"], None),
        ("report", None, ["report"], None),
        ("report-json", None, ["report", "--json"], None),
        ("report-html", None, ["report", "--html", "-o", os.path.join(root, "page.html")], None),
        ("sync-a", "httpx", ["sync", "--remote", os.path.join(root, "team.git")], None),
        ("whoami-b", "HOME_B", ["whoami"], None),
        ("repo-add-b", "HOME_B", ["repo", "add", os.path.join(root, "httpx")], None),
        ("sync-b", "HOME_B", ["sync", "--remote", os.path.join(root, "team.git")], None),
        ("search-b", "HOME_B", ["search", "--all", "pool", "timeout"], None),
        ("verify-b", "HOME_B", ["verify", "--all"], None),
        ("doctor", "httpx", ["doctor"], None),
        ("bad-capture", "httpx", ["capture", "--finding", "x", "--file", "nope.py#nothing"], None),
        ("bad-show", None, ["show", "ev-0000000000"], None),
    ]
    return steps


def mcp_session(wctx_py, env, cwd, ids):
    with open(os.path.join(os.path.dirname(wctx_py), "wctx_mcp.py"), encoding="utf-8") as fh:
        older = '"name": "verify_freshness"' in fh.read()  # before the audit joined the overview
    audit = ("verify_freshness", {}) if older else ("workspace_overview", {"verify": True})
    calls = [
        ("tools/list", {}),
        ("tools/call", {"name": "workspace_overview", "arguments": {}}),
        ("tools/call", {"name": "search_evidence", "arguments": {"query": "connection pool timeout"}}),
        ("tools/call", {"name": "search_evidence", "arguments": {"query": "requests hang", "limit": 5}}),
        ("tools/call", {"name": "get_evidence", "arguments": {"id": ids[0]}}),
        ("tools/call", {"name": audit[0], "arguments": audit[1]}),
        (
            "tools/call",
            {
                "name": "record_evidence",
                "arguments": {
                    "summary": "mcp golden",
                    "items": [
                        {
                            "kind": "finding",
                            "claim": "the pool is reused after close",
                            "repo": "httpcore",
                            "symptom": "second request fails",
                        }
                    ],
                },
            },
        ),
        ("tools/call", {"name": "search_evidence", "arguments": {"query": "pool reused after close"}}),
    ]
    msgs = [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "golden", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    for i, (method, params) in enumerate(calls, 1):
        msgs.append({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
    proc = subprocess.run(
        [sys.executable, wctx_py, "mcp"],
        input="".join(json.dumps(m) + "\n" for m in msgs),
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )
    return proc.stdout + "\n--stderr--\n" + proc.stderr


def run(checkout, outdir):
    wctx_py = os.path.join(checkout, "wctx.py")
    root = tempfile.mkdtemp(prefix="golden-")
    norm = Norm(root, checkout)
    try:
        cites = plan(root)
        os.makedirs(os.path.join(root, "transcripts"))
        for name in sorted(os.listdir(FIXTURES)):  # the well-formed single-file fixtures
            if name.endswith(".jsonl") and name not in ("unknown_format.jsonl", "claude_secrets.jsonl"):
                shutil.copy(os.path.join(FIXTURES, name), os.path.join(root, "transcripts", name))
        a, b = os.path.join(root, "httpx"), os.path.join(root, "httpcore")
        for dirpath, _, files in os.walk(os.path.join(root, "transcripts")):
            for f in files:
                p = os.path.join(dirpath, f)
                text = open(p, encoding="utf-8").read()
                for k, v in (
                    ("@REPO_A@", a),
                    ("@REPO_B@", b),
                    ("@OUTSIDE@", root),
                    ("@COMMIT_A@", cites["httpx"][0]),
                    ("@EV_LIVE@", "ev-0123456789"),
                    ("@PROJECT_HASH@", hashlib.sha256(a.encode()).hexdigest()),
                ):
                    text = text.replace(k, v)
                open(p, "w", encoding="utf-8").write(text)
        git("init", "-q", "--bare", os.path.join(root, "team.git"))
        os.makedirs(outdir, exist_ok=True)
        base_env = {
            k: v for k, v in os.environ.items() if not k.startswith(("WCTX_", "CLAUDE", "CODEX_", "GEMINI_"))
        }
        base_env.update(
            WCTX_AUTHOR="Golden Tester <golden@example.com>",
            TZ="UTC",
            GIT_AUTHOR_DATE="2026-01-01T00:00:00Z",
            GIT_COMMITTER_DATE="2026-01-01T00:00:00Z",
            GIT_AUTHOR_NAME="g",
            GIT_AUTHOR_EMAIL="g@example.com",
            GIT_COMMITTER_NAME="g",
            GIT_COMMITTER_EMAIL="g@example.com",
            COLUMNS="100",
            NO_COLOR="1",
        )
        homes = {"A": os.path.join(root, "homeA"), "B": os.path.join(root, "homeB")}
        ids, sessions = [], []
        for number, (label, where, argv, stdin) in enumerate(script(cites, root), 1):
            if argv is None:  # checkout-t1
                for name in NAMES:
                    git("checkout", "-q", cites[name][1], cwd=os.path.join(root, name))
                continue
            env = dict(base_env, WCTX_HOME=homes["B" if where == "HOME_B" else "A"])
            cwd = root if where is None else os.path.join(root, "httpx" if where == "HOME_B" else where)
            args = []
            for arg in argv:
                m = re.fullmatch(r"@ID(\d+)", arg)
                s = re.fullmatch(r"@SES(\d+)", arg)
                if m:
                    arg = ids[int(m.group(1)) % len(ids)] if ids else "ev-missing"
                elif s:
                    arg = sessions[0] if sessions else "ses-missing"
                args.append(arg)
            proc = subprocess.run(
                [sys.executable, wctx_py, *args],
                cwd=cwd,
                env=env,
                capture_output=True,
                text=True,
                input=stdin,
                timeout=600,
            )
            for found in re.findall(r"machine ([0-9a-f]{8,})", proc.stdout + proc.stderr):
                norm.secrets.setdefault(found, "<MACHINE>")
            for found in re.findall(r"\bev-[0-9a-f]{10}\b", proc.stdout):
                if found not in ids:
                    ids.append(found)
            for found in re.findall(r"\bses-[0-9a-f]{10}\b", proc.stdout):
                if found not in sessions:
                    sessions.append(found)
            text = "$ wctx %s\n[rc %d]\n%s\n--stderr--\n%s" % (
                " ".join(argv),
                proc.returncode,
                proc.stdout,
                proc.stderr,
            )
            with open(os.path.join(outdir, "%03d-%s.txt" % (number, label)), "w", encoding="utf-8") as fh:
                fh.write(norm(text))
        page = os.path.join(root, "page.html")
        if os.path.exists(page):
            with open(os.path.join(outdir, "900-page.html"), "w", encoding="utf-8") as fh:
                fh.write(norm(open(page, encoding="utf-8").read()))
        env = dict(base_env, WCTX_HOME=homes["A"])
        with open(os.path.join(outdir, "950-mcp.txt"), "w", encoding="utf-8") as fh:
            fh.write(norm(mcp_session(wctx_py, env, os.path.join(root, "httpx"), ids or ["ev-missing"])))
    finally:
        shutil.rmtree(root, ignore_errors=True)


def compare(base, got):
    differ = same_but_order = 0
    names = sorted(set(os.listdir(base)) | set(os.listdir(got)))
    for name in names:
        pa, pb = os.path.join(base, name), os.path.join(got, name)
        a = open(pa, encoding="utf-8").read() if os.path.exists(pa) else ""
        b = open(pb, encoding="utf-8").read() if os.path.exists(pb) else ""
        if a != b and sorted(x.rstrip(",") for x in a.splitlines()) == sorted(
            x.rstrip(",") for x in b.splitlines()
        ):
            same_but_order += 1
        elif a != b:
            differ += 1
            sys.stdout.writelines(
                difflib.unified_diff(
                    a.splitlines(True), b.splitlines(True), "base/" + name, "now/" + name, n=1
                )
            )
    if same_but_order:
        print("%d outputs equal up to the order of lines (ties ordered by random ids)" % same_but_order)
    print("%d of %d outputs differ" % (differ, len(names)))
    return 1 if differ else 0


def main(argv=None):
    global REPOS
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("action", choices=["record", "compare"])
    ap.add_argument("checkout", help="a checkout whose wctx.py runs the script")
    ap.add_argument("outputs", help="record: where to write the outputs; compare: the recorded outputs")
    ap.add_argument(
        "--repos", required=True, help="folder holding clones of httpx, httpcore, starlette, uvicorn"
    )
    args = ap.parse_args(argv)
    REPOS = os.path.abspath(args.repos)
    if args.action == "record":
        run(os.path.abspath(args.checkout), os.path.abspath(args.outputs))
        return 0
    got = tempfile.mkdtemp(prefix="same-behaviour-")
    run(os.path.abspath(args.checkout), got)
    code = compare(os.path.abspath(args.outputs), got)
    print("outputs of this run kept in", got)
    return code


if __name__ == "__main__":
    sys.exit(main())
