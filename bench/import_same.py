#!/usr/bin/env python3
"""Transcript import gives the same store as another revision's wctx.py, byte for byte.

    python3 bench/import_same.py                  # this tree's wctx.py against main's
    python3 bench/import_same.py --base HEAD~3    # against any revision

Material: every real transcript in ../shared/data/transcripts (Claude Code with subagent files,
Codex rollouts, sanitised) and every transcript template in tests/fixtures/transcripts (all three
agents), filled in with two real git repositories registered in one workspace, so that files,
commands and record_evidence calls land in repositories with provenance.

Each wctx.py runs in its own process and home, with os.urandom and the clock fixed, and does:
`import FILE` for each file, `import DIR` again (unchanged), `import --force DIR`, then prints
`export`, `sessions --json`, `sessions show ID --json` for each session and `search --all`.
The two outputs must be equal byte for byte; the first difference is printed. Exit 0 when equal.
"""

import argparse
import difflib
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _shared_transcripts():
    """shared/data/transcripts beside this tree or beside a folder above it (a worktree)."""
    folder = ROOT
    while os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
        candidate = os.path.join(folder, "shared", "data", "transcripts")
        if os.path.isdir(candidate):
            return candidate
    return os.path.join(os.path.dirname(ROOT), "shared", "data", "transcripts")


SHARED = _shared_transcripts()
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "transcripts")
GEMINI_SESSION = "7c2e9d41-5b3a-4f8e-9a61-2d4c8b0e1f37"  # the session id in gemini_multi_repo.jsonl

DRIVER = r"""
import contextlib, importlib.util, io, json, os, random, sys
module_path, home, material = sys.argv[1:4]
stream = random.Random(43)
os.urandom = lambda n: bytes(stream.getrandbits(8) for _ in range(n))
spec = importlib.util.spec_from_file_location("wctx", module_path)
wctx = importlib.util.module_from_spec(spec)
sys.modules["wctx"] = wctx
spec.loader.exec_module(wctx)
clock = [0]
def utc_now():
    clock[0] += 1
    return "2026-12-07T10:%02d:%02dZ" % divmod(clock[0] % 3600, 60)
wctx.utc_now = utc_now
for name in ("CLAUDE_CODE_SESSION_ID", "CODEX_THREAD_ID", "CLAUDECODE", "WCTX_HOME"):
    os.environ.pop(name, None)
def run(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = wctx.main(["--home", home] + list(args))
        except SystemExit as e:
            code = e.code
    text = out.getvalue().replace(material, "@MATERIAL@").replace(home, "@HOME@")
    sys.stdout.write("$ wctx %s -> %s\n%s" % (" ".join(args).replace(material, "@MATERIAL@"), code, text))
    sys.stdout.write(err.getvalue().replace(material, "@MATERIAL@").replace(home, "@HOME@"))
    return out.getvalue()
for repo in ("repo-a", "repo-b"):
    run("repo", "add", os.path.join(material, repo), "--workspace", "product")
files = []
for root, dirs, names in os.walk(os.path.join(material, "transcripts")):
    dirs.sort()
    files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".jsonl")]
for path in files:
    run("import", "--json", path)
run("import", "--json", os.path.join(material, "transcripts"))
run("import", "--json", "--force", os.path.join(material, "transcripts"))
run("export")
listing = json.loads(run("sessions", "--json", "--limit", "1000"))
for s in listing["sessions"] if isinstance(listing, dict) else listing:
    run("sessions", "show", s["id"], "--json")
    run("sessions", "show", s["id"])
run("sessions")
run("search", "--all", "upload retry")
"""


def git(cwd, *args):
    env = dict(os.environ, GIT_AUTHOR_DATE="2026-01-01T00:00:00Z", GIT_COMMITTER_DATE="2026-01-01T00:00:00Z")
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com")
    env.update(GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    return subprocess.run(
        ["git", "-C", cwd] + list(args), env=env, check=True, capture_output=True, text=True
    ).stdout


def make_repo(path, files):
    os.makedirs(path)
    git(path, "init", "-q", "-b", "main")
    for name, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(path, name)), exist_ok=True)
        with open(os.path.join(path, name), "w", encoding="utf-8") as fh:
            fh.write(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "start")
    return git(path, "rev-parse", "HEAD").strip()


def make_material(where):
    """Two repositories and the transcripts, in ``where``."""
    a, b = os.path.join(where, "repo-a"), os.path.join(where, "repo-b")
    commit_a = make_repo(a, {"app/main.py": "def main():\n    return 1\n"})
    make_repo(b, {"src/upload.py": "def upload_document():\n    retry = 0\n"})
    outside = os.path.join(where, "outside")
    os.makedirs(outside)
    out = os.path.join(where, "transcripts")
    shutil.copytree(
        SHARED, os.path.join(out, "shared"), ignore=shutil.ignore_patterns("*.md", "*.json", "LICENSES")
    )
    for root, _dirs, names in os.walk(FIXTURES):
        for name in names:
            if not name.endswith(".jsonl") or name == "unknown_format.jsonl":
                continue
            src = os.path.join(root, name)
            dest = os.path.join(out, "fixtures", os.path.relpath(src, FIXTURES))
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(src, encoding="utf-8") as fh:
                text = fh.read()
            for key, value in (
                ("@REPO_A@", a),
                ("@REPO_B@", b),
                ("@OUTSIDE@", outside),
                ("@COMMIT_A@", commit_a),
            ):
                text = text.replace(key, value)
            with open(dest, "w", encoding="utf-8") as fh:
                fh.write(text)
    # Gemini CLI's layout too: <project>/.project_root names the root, a subagent sits in
    # chats/<parent session id>/.
    project = os.path.join(out, "gemini", "tmp", "repo-a")
    os.makedirs(os.path.join(project, "chats", GEMINI_SESSION))
    with open(os.path.join(project, ".project_root"), "w", encoding="utf-8") as fh:
        fh.write(a)
    for name, dest in (
        ("gemini_multi_repo.jsonl", "session-2026-03-02T09-00-%s.jsonl" % GEMINI_SESSION[:8]),
        ("gemini_subagent.jsonl", os.path.join(GEMINI_SESSION, "sub-91ab.jsonl")),
    ):
        shutil.copy(os.path.join(out, "fixtures", name), os.path.join(project, "chats", dest))


def run_version(module_path, home, material):
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, module_path, home, material],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, GIT_CONFIG_NOSYSTEM="1"),
    )
    if proc.returncode != 0:
        sys.exit("%s failed:\n%s" % (module_path, proc.stderr[-3000:]))
    return proc.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default="main", help="git revision whose wctx.py is the reference")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="wctx-import-same-")
    try:
        base = os.path.join(work, "base_wctx.py")
        with open(base, "w", encoding="utf-8") as fh:
            fh.write(git(ROOT, "show", "%s:wctx.py" % args.base))
        # One material for both, so that paths and commits are the same in both outputs.
        material = os.path.join(work, "material")
        make_material(material)
        outputs = []
        for name, module in (("base", base), ("this", os.path.join(ROOT, "wctx.py"))):
            outputs.append(run_version(module, os.path.join(work, "home-" + name), material))
        before, after = outputs
        files = sum(
            1
            for _r, _d, n in os.walk(os.path.join(material, "transcripts"))
            for x in n
            if x.endswith(".jsonl")
        )
        if before == after:
            print(
                "same: %d transcript files, %d bytes of output, %s wctx.py vs this tree"
                % (files, len(after), args.base)
            )
            return 0
        diff = difflib.unified_diff(
            before.splitlines(True), after.splitlines(True), args.base, "this tree", n=2
        )
        sys.stdout.writelines(list(diff)[:80])
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
