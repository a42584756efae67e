"""Every command example in README.md and in docs/*.md runs as written, in a throwaway workspace.

What counts as an example (the convention is also stated in the README, under Commands), in each
of those files:

- every fenced block tagged ``sh``: each logical line (``\\`` continuations joined) is one
  command; comment-only and blank lines are not commands;
- every fenced block, tagged or not, whose lines start with ``$ ``: those lines are commands and
  the others are sample output (not compared);
- the first ``wctx …`` code span in the example column of a table under a heading "Commands"
  (the README's one-line-per-command table).

A fenced block preceded by ``<!-- readme-test: skip REASON -->`` is not run (kept for what cannot
run offline, such as ``pip download``); the reason is required.

The workspace is a fake ``$HOME`` holding ``~/src/upload-sdk`` and ``~/src/docs-ui`` (the quick
start's repositories, registered in workspace ``uploads``, ``docs-ui uses upload-sdk``, two items
captured), ``~/src/team-memory`` (a clone with a local remote), a Claude Code transcript and Codex
rollouts at the paths the README names, ``~/bin``, and a copy of this checkout at ``~/src/wctx``.
``wctx`` on ``PATH`` is the installed command (``wctx:main``) and ``python3`` is this interpreter.
The checkout copy holds what the examples use: the two generated files, ``parts/`` (the build),
``tests/`` (the contributing loop runs one test file), ``docs/``, ``zipapp/``, ``eval/``, ``bench/``.
Every example starts from the same state: a fenced block's commands run in order, starting in the
checkout copy (``cd`` carries over between them); a table example runs in ``~/src/docs-ui``.
Placeholders the README uses for ids (``ev-3f9a``, ``ev-old``, ``ev-new``, ``ses-1a2b``) are
replaced by real ids of the workspace. Each command must exit 0.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT

README = os.path.join(ROOT, "README.md")
DOCS = os.path.join(ROOT, "docs")
CI_RUN = os.path.join(ROOT, ".ci", "run")
README_MAX_LINES = 400
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "transcripts")
SKIP_MARK = re.compile(r"^<!--\s*readme-test:\s*skip\b\s*(.*?)\s*-->\s*$")
# What a copy of the checkout needs so that its commands (demo, build, eval, bench) run.
CHECKOUT_PARTS = (
    "wctx.py",
    "wctx_mcp.py",
    "pyproject.toml",
    "README.md",
    "zipapp",
    "eval",
    "bench",
    "parts",
    "docs",
    "tests",
)
CLAUDE_TRANSCRIPT = ".claude/projects/-home-me-src-docs-ui/0ccf1a04-….jsonl"
CODEX_ROLLOUT = (
    ".codex/sessions/2026/03/02/rollout-2026-03-02T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
)
COMMAND_TIMEOUT = 300


class Example:
    """One runnable unit of a documentation file: the commands of a fenced block, or one table
    example."""

    __slots__ = ("doc", "line", "commands", "start", "skip")

    def __init__(self, line, commands, start, skip=None, doc="README.md"):
        self.doc = doc  # the file, relative to the checkout (README.md, docs/commands.md, ...)
        self.line = line  # line of the block's opening fence or the table row
        self.commands = commands  # [(line, command text)]
        self.start = start  # "checkout" or "docs-ui"
        self.skip = skip

    @property
    def where(self):
        return "%s:%d" % (self.doc, self.line)


def _logical_lines(lines, first_line):
    """(line number, text) of each command of an ``sh`` block, continuations joined."""
    out, buf, start = [], [], None
    for offset, raw in enumerate(lines):
        if start is None:
            start = first_line + offset
        if raw.rstrip().endswith("\\"):
            buf.append(raw.rstrip()[:-1])
            continue
        buf.append(raw)
        text = " ".join(part.strip() for part in buf).strip()
        if text and not text.startswith("#"):
            out.append((start, text))
        buf, start = [], None
    return out


def documentation_files():
    """README.md, then every docs/*.md in name order (paths relative to the checkout)."""
    names = sorted(n for n in os.listdir(DOCS) if n.endswith(".md")) if os.path.isdir(DOCS) else []
    return ["README.md"] + ["docs/" + n for n in names]


def readme_examples(path=README, doc=None):
    doc = doc or os.path.basename(path)
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    examples = []
    i, section = 0, ""
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            section = line.lstrip("#").strip()
        fence = re.match(r"^```\s*(\S*)\s*$", line)
        if fence:
            lang = fence.group(1)
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            body = lines[i + 1 : j]
            skip = None
            k = i - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            mark = SKIP_MARK.match(lines[k]) if k >= 0 else None
            if mark:
                skip = mark.group(1) or ""
            prompts = [(i + 2 + n, b[2:]) for n, b in enumerate(body) if b.startswith("$ ")]
            if prompts:
                commands = prompts
            elif lang == "sh":
                commands = _logical_lines(body, i + 2)
            else:
                commands = []
            if commands or skip is not None:
                examples.append(Example(i + 1, commands, "checkout", skip, doc))
            i = j + 1
            continue
        if section == "Commands" and line.startswith("| `"):
            cells = line.split("|")
            if len(cells) > 2:
                span = re.search(r"`(wctx [^`]*)`", cells[2])
                if span:
                    examples.append(Example(i + 1, [(i + 1, span.group(1))], "docs-ui", doc=doc))
        i += 1
    return examples


def _git(cwd, *args):
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, env=_env_cache["env"])


_env_cache = {}

UPLOAD_TS = """export async function uploadDocument(doc: Doc): Promise<Result> {
  const res = await post("/upload", doc);
  if (res.status === 419) {
    return { ok: false, terminal: true };
  }
  return { ok: true };
}
"""


def _build_workspace(base):
    """Create the workspace under ``base`` and return (home, env)."""
    home = os.path.join(base, "home")
    src = os.path.join(home, "src")
    os.makedirs(os.path.join(home, "bin"))
    os.makedirs(src)
    with open(os.path.join(home, ".gitconfig"), "w") as fh:
        fh.write(
            "[user]\n\tname = README test\n\temail = readme@example.invalid\n"
            "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
        )
    checkout = os.path.join(src, "wctx")
    os.makedirs(checkout)
    for part in CHECKOUT_PARTS:
        source = os.path.join(ROOT, part)
        if os.path.isdir(source):
            shutil.copytree(
                source, os.path.join(checkout, part), ignore=shutil.ignore_patterns("__pycache__", "dist")
            )
        elif os.path.exists(source):
            shutil.copy2(source, os.path.join(checkout, part))
    bin_dir = os.path.join(home, "bin")
    os.symlink(sys.executable, os.path.join(bin_dir, "python3"))
    with open(os.path.join(bin_dir, "wctx"), "w") as fh:
        # What `pip install .` puts on PATH: a script that calls wctx:main.
        fh.write(
            "#!%s\nimport sys\nsys.path.insert(0, %r)\nimport wctx\nsys.exit(wctx.main())\n"
            % (sys.executable, checkout)
        )
    os.chmod(os.path.join(bin_dir, "wctx"), 0o755)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GIT_", "WCTX_", "CLAUDE", "CODEX_")) and k not in ("XDG_CONFIG_HOME",)
    }
    env.update(
        HOME=home,
        PATH=bin_dir + os.pathsep + env.get("PATH", "/usr/bin:/bin"),
        XDG_CACHE_HOME=os.path.join(home, ".cache"),
        PYTHONDONTWRITEBYTECODE="1",
    )
    _env_cache["env"] = env

    sdk = os.path.join(src, "upload-sdk")
    ui = os.path.join(src, "docs-ui")
    for repo, files in (
        (sdk, {"src/upload/upload.ts": UPLOAD_TS, "src/upload.ts": "export * from './upload/upload';\n"}),
        (ui, {"src/app.ts": "import { uploadDocument } from 'upload-sdk';\n"}),
    ):
        os.makedirs(repo)
        _git(repo, "init", "-q")
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(repo, rel)), exist_ok=True)
            with open(os.path.join(repo, rel), "w") as fh:
                fh.write(text)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", "initial")
    remote = os.path.join(base, "team-memory.git")
    _git(base, "init", "-q", "--bare", remote)
    _git(src, "clone", "-q", remote, "team-memory")
    with open(os.path.join(src, "team-memory", "README"), "w") as fh:
        fh.write("team memory\n")
    _git(os.path.join(src, "team-memory"), "add", "-A")
    _git(os.path.join(src, "team-memory"), "commit", "-qm", "start")
    _git(os.path.join(src, "team-memory"), "push", "-q", "origin", "HEAD")
    for rel, fixture in (
        (CLAUDE_TRANSCRIPT, "claude_multi_repo.jsonl"),
        (CODEX_ROLLOUT, "codex_items.jsonl"),
    ):
        target = os.path.join(home, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(os.path.join(FIXTURES, fixture), target)

    def wctx_cmd(*args, cwd=ui):
        proc = subprocess.run(
            ["wctx", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=COMMAND_TIMEOUT
        )
        assert proc.returncode == 0, "workspace set-up failed: wctx %s\n%s%s" % (
            args,
            proc.stdout,
            proc.stderr,
        )
        return proc.stdout

    wctx_cmd("repo", "add", sdk, "--workspace", "uploads")
    wctx_cmd("repo", "add", ui, "--workspace", "uploads")
    wctx_cmd("relate", "docs-ui", "uses", "upload-sdk")
    wctx_cmd(
        "capture",
        "--summary",
        "traced the upload failure into the SDK",
        "--finding",
        "SDK swallows the 419 :: returns it terminal, no retry",
        "--repo",
        "upload-sdk",
        "--file",
        "src/upload/upload.ts#uploadDocument",
        "--finding",
        "retry 419 in the SDK, not the UI",
        "--repo",
        "upload-sdk",
    )
    wctx_cmd("import", os.path.join(home, CLAUDE_TRANSCRIPT))
    subprocess.run(
        [sys.executable, "zipapp/build.py"], cwd=checkout, env=env, check=True, capture_output=True
    )
    return home, env


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    base = str(tmp_path_factory.mktemp("readme"))
    home, env = _build_workspace(base)
    ids = _placeholder_ids(home, env)
    snapshot = os.path.join(base, "snapshot")
    src = os.path.join(home, "src")
    shutil.copytree(home, snapshot, symlinks=True, ignore=lambda d, names: ["wctx"] if d == src else [])
    return {"base": base, "home": home, "env": env, "snapshot": snapshot, "ids": ids}


def _placeholder_ids(home, env):
    import json

    def out(*args):
        return subprocess.run(
            ["wctx", *args, "--json"],
            cwd=os.path.join(home, "src", "docs-ui"),
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    items = json.loads(out("search", "419", "--all"))["results"]
    sessions = json.loads(out("sessions"))
    sessions = sessions.get("sessions", sessions) if isinstance(sessions, dict) else sessions
    assert len(items) >= 2 and sessions, "workspace set-up: expected two items and a session"
    return {
        "ev-3f9a": items[0]["id"],
        "ev-old": items[1]["id"],
        "ev-new": items[0]["id"],
        "ses-1a2b": sessions[0]["id"],
    }


def _restore(ws):
    """Put the workspace back to its snapshot (the checkout copy is kept)."""
    home = ws["home"]
    for name in os.listdir(home):
        if name == "src":
            continue
        path = os.path.join(home, name)
        shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.remove(path)
    for name in os.listdir(os.path.join(home, "src")):
        if name != "wctx":
            shutil.rmtree(os.path.join(home, "src", name))
    for name in os.listdir(ws["snapshot"]):
        source, target = os.path.join(ws["snapshot"], name), os.path.join(home, name)
        if name == "src":
            for sub in os.listdir(source):
                shutil.copytree(os.path.join(source, sub), os.path.join(target, sub), symlinks=True)
        elif os.path.isdir(source) and not os.path.islink(source):
            shutil.copytree(source, target, symlinks=True)
        else:
            shutil.copy2(source, target, follow_symlinks=False)


def _substitute(command, ids):
    for placeholder, real in ids.items():
        command = re.sub(r"(?<![\w-])%s(?![\w-])" % re.escape(placeholder), real, command)
    return command


def _run_example(example, ws):
    """Run a block's commands in one bash process (so ``cd`` and shell variables carry over from
    one line to the next, as in a terminal), each one's output captured apart; the first command
    that exits non-zero fails the test with its README line."""
    _restore(ws)
    home = ws["home"]
    start = os.path.join(home, "src", "wctx" if example.start == "checkout" else "docs-ui")
    state = os.path.join(ws["base"], "state")
    script = ['cd "$1" || exit 97', "set -o pipefail"]
    for n, (_, command) in enumerate(example.commands):
        script.append(
            '{ %s\n} >"$2.%d.out" 2>"$2.%d.err" </dev/null; __rc=$?\n'
            'if [ $__rc -ne 0 ]; then echo %d >"$2.failed"; pwd >"$2.cwd"; exit $__rc; fi'
            % (_substitute(command, ws["ids"]), n, n, n)
        )
    for name in os.listdir(ws["base"]):
        if name.startswith("state."):
            os.remove(os.path.join(ws["base"], name))
    limit = COMMAND_TIMEOUT * len(example.commands)
    try:
        proc = subprocess.run(
            ["bash", "-c", "\n".join(script), "readme", start, state],
            env=ws["env"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=limit,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("%s: the block did not finish within %d s" % (example.where, limit))
    if proc.returncode == 0:
        return
    if not os.path.exists(state + ".failed"):
        pytest.fail("%s: the block could not run: %s" % (example.where, proc.stderr[-3000:]))
    with open(state + ".failed") as fh:
        n = int(fh.read())
    line, command = example.commands[n]
    outputs = []
    for ext in ("out", "err"):
        with open("%s.%d.%s" % (state, n, ext), errors="replace") as fh:
            outputs.append(fh.read()[-3000:])
    with open(state + ".cwd") as fh:
        cwd = fh.read().strip()
    pytest.fail(
        "%s:%d: `%s` exited %d (run as `%s` in %s)\n--- stdout ---\n%s\n--- stderr ---\n%s"
        % (
            example.doc,
            line,
            command,
            proc.returncode,
            _substitute(command, ws["ids"]),
            cwd,
            outputs[0],
            outputs[1],
        )
    )


def all_examples():
    examples = []
    for doc in documentation_files():
        examples.extend(readme_examples(os.path.join(ROOT, doc), doc))
    return examples


EXAMPLES = all_examples()


def test_readme_examples_are_found():
    """The extraction itself: a change that hides the examples from this test fails here."""
    runnable = [e for e in EXAMPLES if e.skip is None]
    in_readme = [e for e in runnable if e.doc == "README.md"]
    in_docs = [e for e in runnable if e.doc != "README.md"]
    assert sum(len(e.commands) for e in in_readme) >= 30
    assert any(e.start == "docs-ui" for e in in_readme), "no example found in the README's Commands table"
    for doc in ("docs/commands.md", "docs/agents.md", "docs/mcp.md", "docs/sharing.md", "docs/install.md"):
        assert any(e.doc == doc for e in in_docs), "no runnable example found in %s" % doc
    for e in EXAMPLES:
        if e.skip is not None:
            assert e.skip, "%s: a readme-test skip marker needs a reason" % e.where
    assert len([e for e in EXAMPLES if e.skip is not None]) <= 3, (
        "skip markers are for the rare example that cannot run offline"
    )


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.where for e in EXAMPLES])
def test_readme_example_runs(example, workspace):
    if example.skip is not None:
        pytest.skip("%s: %s" % (example.where, example.skip))
    _run_example(example, workspace)


def test_extraction_follows_the_convention(tmp_path):
    sample = tmp_path / "README.md"
    sample.write_text(
        "# x\n\n```sh\nwctx a \\\n  --b c   # note\n# only a comment\n\nwctx d\n```\n\n"
        "<!-- readme-test: skip needs the network -->\n```sh\npip download x\n```\n\n"
        '```\n$ wctx e\noutput line\n$ wctx f\n```\n\n```json\n{"a": 1}\n```\n\n'
        "## Commands\n\n| command | example |\n| --- | --- |\n| `g` | `wctx g --h` — does g |\n",
        encoding="utf-8",
    )
    found = [(e.line, e.commands, e.start, e.skip) for e in readme_examples(str(sample))]
    assert found == [
        (3, [(4, "wctx a --b c   # note"), (8, "wctx d")], "checkout", None),
        (12, [(13, "pip download x")], "checkout", "needs the network"),
        (16, [(17, "wctx e"), (19, "wctx f")], "checkout", None),
        (30, [(30, "wctx g --h")], "docs-ui", None),
    ]
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "x.md").write_text("# x\n\n```sh\nwctx h\n```\n", encoding="utf-8")
    found = readme_examples(str(tmp_path / "docs" / "x.md"), "docs/x.md")
    assert [(e.where, e.commands) for e in found] == [("docs/x.md:3", [(4, "wctx h")])]


def test_the_doctor_sample_shows_the_current_schema_version():
    import wctx

    shown = set()
    for doc in documentation_files():
        with open(os.path.join(ROOT, doc), encoding="utf-8") as fh:
            shown.update(int(n) for n in re.findall(r"schema version (\d+) \(current\)", fh.read()))
    assert shown, "no doctor sample line 'schema version N (current)' in README.md or docs/"
    assert shown == {len(wctx.MIGRATIONS)}, "a doctor sample's schema version is stale"


def test_the_readme_stays_short():
    """The README is for users: the reference lives in docs/, figures in bench/RESULTS.md (with
    the command and commit that give them), so it holds no timing and no "at <commit>" stamp."""
    with open(README, encoding="utf-8") as fh:
        text = fh.read()
    lines = text.splitlines()
    assert len(lines) <= README_MAX_LINES, "README.md has %d lines; at most %d" % (
        len(lines),
        README_MAX_LINES,
    )
    timings = re.findall(r"\b\d[\d.,]*\s?(?:ms|µs|s)\b(?!\w)", text)
    assert not timings, "README.md: timings belong in bench/RESULTS.md: %s" % timings[:5]
    stamps = re.findall(r"\bat (?:commit )?[0-9a-f]{7,40}\b", text)
    assert not stamps, "README.md: commit stamps belong in bench/RESULTS.md: %s" % stamps[:5]


def test_ci_runs_the_readme_test_command():
    """The README's test command (the block that runs the whole suite) is what CI runs, line for
    line."""
    whole_suite = "python3 -m pytest -q"
    blocks = [
        e for e in readme_examples() if any(c.split("#")[0].strip() == whole_suite for _, c in e.commands)
    ]
    assert len(blocks) == 1, "README.md: expected one block holding the test command"
    if not os.path.exists(CI_RUN):
        if os.environ.get("CI") == "true":
            pytest.fail(".ci/run is missing")
        pytest.skip(".ci/run is not in this copy (an unpacked sdist)")
    with open(CI_RUN, encoding="utf-8") as fh:
        ci_lines = {line.strip() for line in fh}
    for line, command in blocks[0].commands:
        plain = command.split("#", 1)[0].strip()
        assert plain in ci_lines, "README.md:%d: .ci/run does not run `%s`" % (line, plain)
