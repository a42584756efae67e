"""Shared fixtures: real temporary git repositories, a per-test wctx store, and two ways to run
the CLI (in-process through ``wctx.main([...])`` and as a ``python3 wctx.py`` subprocess).

Shared by every test file: keep additions small and general.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def _load_parts_build():
    import importlib.util

    spec = importlib.util.spec_from_file_location("wctx_parts_build", os.path.join(ROOT, "parts", "build.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _built_from_current_parts():
    """Tests run what users get, wctx.py and wctx_mcp.py, and those are built from parts/. After a
    part changed (the developer's loop: edit a part, run its tests) they are rebuilt here first;
    under CI=true a stale file fails the run instead, since CI checks what is committed."""
    parts = os.path.join(ROOT, "parts")
    if not os.path.isdir(parts):
        return  # an installed copy without its parts: nothing to build from
    outputs = [os.path.join(ROOT, name) for name in ("wctx.py", "wctx_mcp.py")]
    newest_part = max(
        os.stat(os.path.join(folder, name)).st_mtime
        for folder, _, names in os.walk(parts)
        for name in names
        if name.endswith(".py") or name == "MANIFEST"
    )
    if all(os.path.exists(p) and os.stat(p).st_mtime >= newest_part for p in outputs):
        return
    build = _load_parts_build()
    try:
        built = build.build_all()
    except build.BuildError as exc:
        pytest.exit(f"build failed: {exc}", returncode=1)
    if os.environ.get("CI") == "true":
        stale = build.stale_outputs(built)
        if stale:
            names = ", ".join(os.path.basename(p) for p in stale)
            pytest.exit(f"{names} not what parts/ give: run python3 parts/build.py and commit", returncode=1)
        return
    for path in build.write_outputs(built):
        sys.stderr.write(f"rebuilt {os.path.basename(path)} from parts/\n")


_built_from_current_parts()

import wctx  # noqa: E402

WCTX_SCRIPT = os.path.join(ROOT, "wctx.py")

# Identity and isolation for the git commands the tests themselves run: nothing is read from the
# machine's global or system git config, and commits never need a configured user.
GIT_TEST_ENV = {
    "GIT_AUTHOR_NAME": "wctx test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "wctx test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
}
GIT_TEST_OPTIONS = [
    "-c",
    "commit.gpgsign=false",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "init.defaultBranch=main",
    "-c",
    "core.hooksPath=/dev/null",
]


def git_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_TEST_ENV)
    return env


def git(path, *args, check=True):
    """Run git in ``path`` for test set-up; returns stdout as text."""
    proc = subprocess.run(
        ["git", *GIT_TEST_OPTIONS, "-C", str(path), *args],
        env=git_env(),
        capture_output=True,
        check=False,
    )
    if check and proc.returncode != 0:
        raise AssertionError("git %s failed: %s" % (" ".join(args), proc.stderr.decode("utf-8", "replace")))
    return proc.stdout.decode("utf-8", "replace")


class Checkout:
    """A real git repository in a temporary directory, with helpers to change it."""

    def __init__(self, path):
        self.path = str(path)
        self.name = os.path.basename(self.path)

    def __fspath__(self):
        return self.path

    def __str__(self):
        return self.path

    def file(self, rel):
        return os.path.join(self.path, *rel.split("/"))

    def write(self, rel, text):
        full = self.file(rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        return full

    def read(self, rel):
        with open(self.file(rel), encoding="utf-8") as fh:
            return fh.read()

    def git(self, *args, check=True):
        return git(self.path, *args, check=check)

    def commit(self, message="change", *paths):
        """Stage everything (or ``paths``) and commit; returns the new HEAD sha."""
        if paths:
            self.git("add", "-A", "--", *paths)
        else:
            self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head

    @property
    def head(self):
        return self.git("rev-parse", "HEAD").strip()

    def blob(self, rel):
        """The blob id of the file as it is on disk."""
        return self.git("hash-object", "--no-filters", "--", rel).strip()


@pytest.fixture
def git_repo(tmp_path):
    """Factory: ``git_repo(name, {rel: text}, message="initial")`` -> Checkout with one commit
    (no commit at all when ``files`` is None and ``commit`` is False)."""
    made = {}

    def make(name, files=None, message="initial", commit=True, parent=None):
        base = parent if parent is not None else tmp_path / "repos"
        path = os.path.join(str(base), name)
        os.makedirs(path, exist_ok=True)
        git(path, "init", "-q")
        repo = Checkout(path)
        for rel, text in (files or {}).items():
            repo.write(rel, text)
        if commit:
            repo.commit(message)
        made[name] = repo
        return repo

    return make


@pytest.fixture
def wctx_home(tmp_path, monkeypatch):
    """A fresh, empty store directory for this test, exported as $WCTX_HOME."""
    home = tmp_path / "wctx-home"
    monkeypatch.setenv("WCTX_HOME", str(home))
    # Hermetic: a capture run from inside an agent session (these tests run under Claude Code or
    # Codex too) must not join that session or read the agent's transcripts.
    for var in ("CLAUDE_CODE_SESSION_ID", "CODEX_THREAD_ID", "CLAUDECODE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "no-claude-config"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "no-codex-home"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "no-gemini-home"))
    return str(home)


def db_snapshot(home):
    """Every row of every table of the store in ``home`` (read through a separate read-only
    connection), plus user_version: compare two snapshots to prove that nothing changed."""
    import sqlite3

    path = os.path.join(str(home), "wctx.db")
    if not os.path.exists(path):
        return None
    con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        snap = {"user_version": con.execute("PRAGMA user_version").fetchone()[0]}
        names = [
            r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        ]
        for name in names:
            rows = con.execute('SELECT * FROM "%s"' % name.replace('"', '""')).fetchall()
            snap[name] = sorted(rows, key=repr)
        return snap
    finally:
        con.close()


def store_file_bytes(home):
    """The raw bytes of the store in ``home``: its database file, then its write-ahead log if it
    has one (what a search of the disk for a secret would read)."""
    raw = b""
    for name in ("wctx.db", "wctx.db-wal"):
        path = os.path.join(str(home), name)
        if os.path.exists(path):
            with open(path, "rb") as fh:
                raw += fh.read()
    return raw


@pytest.fixture
def store(wctx_home):
    """The service-layer store in this test's $WCTX_HOME, closed at the end."""
    s = wctx.open_store(wctx_home)
    try:
        yield s
    finally:
        s.close()


def older_schema(monkeypatch, migrations):
    """A store left at an older schema (``migrations``, a prefix of wctx.MIGRATIONS) that today's
    code writes into, a test's shortcut to an old store: anchors get the columns today's capture
    stamps, added for each insert and dropped after, as that store never had them."""
    monkeypatch.setattr(wctx, "MIGRATIONS", migrations)
    names = [m.__name__ for m in migrations]
    if "m022_symptom" not in names:
        # Items get the symptom column today's capture writes, for each capture only; their search
        # row has no column for it (the symptom given to it is bound to nothing).
        capture_with_symptom = wctx.capture

        def capture_without_symptom(store, *args, **kwargs):
            store.db.execute("ALTER TABLE evidence ADD COLUMN symptom TEXT")
            try:
                return capture_with_symptom(store, *args, **kwargs)
            finally:
                store.db.execute("ALTER TABLE evidence DROP COLUMN symptom")

        monkeypatch.setattr(wctx, "capture", capture_without_symptom)
        if "m017_code_vocabulary" in names:
            monkeypatch.setattr(
                wctx,
                "_FTS_INSERT_CODE",
                "INSERT INTO evidence_fts(rowid, claim, symbols, paths, detail, code, code_words) SELECT ?, "
                "wctx_index_text(?), wctx_index_text(?), wctx_index_text(?), wctx_index_text(?), "
                "wctx_index_text(?), ? FROM (SELECT ?)",
            )
    if "m021_sync_changes" not in names:
        # Today's capture names the sessions it writes to for sync, for each capture only.
        capture_naming = wctx.capture

        def capture_with_sync_changes(store, *args, **kwargs):
            store.db.execute("CREATE TABLE sync_changes(seq INTEGER PRIMARY KEY, session_id TEXT)")
            try:
                return capture_naming(store, *args, **kwargs)
            finally:
                store.db.execute("DROP TABLE sync_changes")

        monkeypatch.setattr(wctx, "capture", capture_with_sync_changes)
    if "m019_authorship" not in names:
        # Sessions get the author and machine today's capture stamps, for each capture only.
        capture = wctx.capture

        def capture_with_authorship(store, *args, **kwargs):
            for column in ("author", "machine"):
                store.db.execute("ALTER TABLE sessions ADD COLUMN %s TEXT" % column)
            try:
                return capture(store, *args, **kwargs)
            finally:
                for column in ("author", "machine"):
                    store.db.execute("ALTER TABLE sessions DROP COLUMN %s" % column)

        monkeypatch.setattr(wctx, "capture", capture_with_authorship)
    if "m016_anchor_symbol_lines" in names:
        return
    insert_anchors = wctx._insert_anchors

    def insert_then_drop(store, rid, anchors):
        store.db.execute("ALTER TABLE anchors ADD COLUMN symbol_lines TEXT")
        insert_anchors(store, rid, anchors)
        store.db.execute("ALTER TABLE anchors DROP COLUMN symbol_lines")

    monkeypatch.setattr(wctx, "_insert_anchors", insert_then_drop)


def cli_arg(value):
    """An argv element as Python would see it: bytes are decoded the way sys.argv is (lone
    surrogates for bytes that are not valid UTF-8)."""
    if isinstance(value, bytes):
        return os.fsdecode(value)
    return str(value)


class CliResult:
    def __init__(self, code, out, err):
        self.code = code
        self.out = out
        self.err = err

    @property
    def json(self):
        return json.loads(self.out)

    def __repr__(self):
        return "CliResult(code=%r, out=%r, err=%r)" % (self.code, self.out[:2000], self.err[:2000])


@pytest.fixture
def run_cli(capsys, wctx_home):
    """``run_cli(argv, cwd=None)`` runs ``wctx.main(argv)`` in-process from ``cwd`` and returns
    CliResult(code, out, err). argparse errors (SystemExit) come back as their exit code."""

    def run(argv, cwd=None):
        capsys.readouterr()
        before = os.getcwd()
        if cwd is not None:
            os.chdir(str(cwd))
        try:
            try:
                code = wctx.main([cli_arg(a) for a in argv])
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
        finally:
            os.chdir(before)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


@pytest.fixture
def run_wctx(wctx_home):
    """``run_wctx(argv, cwd=None, env=None)`` runs ``python3 wctx.py ARGV`` as a subprocess with
    this test's $WCTX_HOME; returns CliResult."""

    def run(argv, cwd=None, env=None):
        full_env = dict(os.environ, WCTX_HOME=wctx_home)
        full_env.update(env or {})
        proc = subprocess.run(
            [sys.executable, WCTX_SCRIPT, *[a if isinstance(a, bytes) else str(a) for a in argv]],
            cwd=str(cwd) if cwd is not None else None,
            env=full_env,
            capture_output=True,
            check=False,
        )
        return CliResult(
            proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
        )

    return run


# A small product: docs-ui uses upload-sdk, upload-sdk depends_on api-gateway (so the UI reaches
# the gateway in two hops), all in workspace "uploads"; "other" lives alone in workspace "elsewhere".

SDK_UPLOAD_TS = """export interface UploadOptions {
  expiresIn?: number;
}

export async function uploadDocument(file: Blob, opts: UploadOptions = {}) {
  const res = await fetch("/api/upload", { method: "POST", body: file });
  if (res.status === 419) {
    throw new Error("upload failed");
  }
  return res.json();
}

export function formatSize(bytes: number): string {
  return (bytes / 1024).toFixed(1) + " kB";
}
"""

SDK_CLIENT_PY = """def connect(url):
    return {"url": url}


def retry_policy(attempts):
    return min(attempts, 3)
"""

UI_BUTTON_TSX = """import { uploadDocument } from "upload-sdk";

export function UploadButton() {
  return <button onClick={() => uploadDocument(pickFile())}>Upload</button>;
}
"""

GATEWAY_ROUTES_GO = """package gateway

func HandleUpload(w Writer, r *Request) {
	w.WriteHeader(419)
}
"""

OTHER_MAIN_PY = 'def main():\n    print("unrelated")\n'


class Product:
    def __init__(self, store, sdk, ui, gateway, other):
        self.store = store
        self.sdk = sdk
        self.ui = ui
        self.gateway = gateway
        self.other = other


@pytest.fixture
def product(git_repo, store):
    """Four registered repos (see above) and an open store."""
    sdk = git_repo("upload-sdk", {"src/upload/upload.ts": SDK_UPLOAD_TS, "src/client.py": SDK_CLIENT_PY})
    ui = git_repo("docs-ui", {"src/UploadButton.tsx": UI_BUTTON_TSX})
    gateway = git_repo("api-gateway", {"routes.go": GATEWAY_ROUTES_GO})
    other = git_repo("other", {"main.py": OTHER_MAIN_PY})
    for repo in (sdk, ui, gateway):
        wctx.register_repo(store, repo.path, workspace="uploads")
    wctx.register_repo(store, other.path, workspace="elsewhere")
    wctx.relate(store, "docs-ui", "uses", "upload-sdk")
    wctx.relate(store, "upload-sdk", "depends_on", "api-gateway")
    return Product(store, sdk, ui, gateway, other)


@pytest.fixture(autouse=True)
def _fresh_process_caches():
    """Each test starts with the process-wide caches empty, as a new wctx process would."""
    wctx.clear_caches()


@pytest.fixture(autouse=True)
def _outside_any_agent_session(monkeypatch):
    """Tests behave the same when run inside a Claude Code or Codex session: the variables those
    agents set (which `wctx capture` uses to find the running session) are cleared."""
    for name in ("CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CLAUDE_SESSION_ID", "CODEX_THREAD_ID"):
        monkeypatch.delenv(name, raising=False)


def missing(reason):
    """What a test needs is not on this machine: skip, saying so; under CI=true, fail (CI must
    provide everything the tests need, so an absence there is a broken set-up, not a pass)."""
    if os.environ.get("CI") == "true":
        pytest.fail("%s (required under CI=true)" % reason)
    pytest.skip(reason)


def capture_item(product, claim, repo="upload-sdk", detail=None, files=None, summary=None, session_id=None):
    """Capture one finding about ``repo`` of the ``product`` fixture, from that repository's
    checkout; returns (evidence id, session id)."""
    cwd = {"upload-sdk": product.sdk, "docs-ui": product.ui, "api-gateway": product.gateway}[repo].path
    item = {"kind": "finding", "claim": claim, "repo": repo}
    if detail:
        item["detail"] = detail
    if files:
        item["files"] = files
    res = wctx.capture(product.store, [item], cwd=cwd, summary=summary, session_id=session_id)
    return res["evidence"][0]["id"], res["session"]
