"""The single-file wctx.pyz: its build, and the archive at work under every Python 3.8-3.13 here.

The archive is built once per test session (zipapp/build.py into a temp dir, never into dist/ of
the shared checkout). Each interpreter that pyenv offers runs capture, search, verify and an MCP
initialize + tools/call over raw stdio against real temporary git repos with its own WCTX_HOME.
Versions absent from the machine are skipped with a message.
"""

import glob
import hashlib
import json
import marshal
import os
import queue
import re
import subprocess
import sys
import threading
import zipfile

import pytest
from conftest import missing

import wctx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "zipapp", "build.py")
SUPPORTED = ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13"]
TOO_OLD = ["2.7", "3.6", "3.7"]
TIMEOUT = 60


def pyenv_python(prefix):
    """The newest pyenv interpreter whose version is prefix.N ("3.8" -> ~/.pyenv/versions/3.8.18)."""
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    found = []
    for path in glob.glob(os.path.join(root, "versions", prefix + ".*", "bin", "python")):
        patch = os.path.basename(os.path.dirname(os.path.dirname(path)))[len(prefix) + 1 :]
        if patch.isdigit():
            found.append((int(patch), path))
    return max(found)[1] if found else None


def interpreter(prefix):
    python = pyenv_python(prefix)
    if python is None:
        missing(f"Python {prefix} is not installed on this machine (pyenv install {prefix}); not tested")
    return python


def run_build(output):
    done = subprocess.run(
        [sys.executable, BUILD, "-o", str(output)], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="session")
def pyz(tmp_path_factory):
    if not os.path.exists(os.path.join(ROOT, "wctx_mcp.py")):
        pytest.skip("wctx_mcp.py is not written yet")
    path = tmp_path_factory.mktemp("pyz") / "wctx.pyz"
    run_build(path)
    return str(path)


# -- the build ---------------------------------------------------------------------------------


def test_build_is_reproducible_and_reports_its_sha256(tmp_path):
    if not os.path.exists(os.path.join(ROOT, "wctx_mcp.py")):
        pytest.skip("wctx_mcp.py is not written yet")
    first, second = tmp_path / "a" / "wctx.pyz", tmp_path / "b" / "wctx.pyz"
    out = run_build(first)
    run_build(second)
    data = first.read_bytes()
    assert data == second.read_bytes()
    assert re.search(r"^sha256 ([0-9a-f]{64})$", out, re.M).group(1) == hashlib.sha256(data).hexdigest()
    assert re.search(r"^size\s+(\d+) bytes", out, re.M).group(1) == str(len(data))


def _code_without_docstrings(source):
    import ast

    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and len(body) > 1
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:]
    return ast.dump(tree, include_attributes=True)


def test_archive_layout(pyz):
    with open(pyz, "rb") as handle:
        assert handle.readline() == b"#!/usr/bin/env python3\n"
    assert os.access(pyz, os.X_OK)
    with zipfile.ZipFile(pyz) as archive:
        infos = archive.infolist()
        assert [info.filename for info in infos] == ["__main__.py", "wctx.py", "wctx_mcp.py"]
        for info in infos:
            assert info.compress_type == zipfile.ZIP_DEFLATED
            assert info.date_time == (1980, 1, 1, 0, 0, 0)
            assert info.external_attr >> 16 == 0o100644
        for name in ("wctx.py", "wctx_mcp.py"):
            with open(os.path.join(ROOT, name), "rb") as handle:
                source = handle.read()
            stored = archive.read(name)
            # The same code without its comments and internal docstrings, line for line: with
            # every docstring taken out of both, the same syntax tree, positions included.
            assert stored.count(b"\n") == source.count(b"\n") and len(stored) < len(source)
            assert b"\n# " not in stored[200:]
            assert _code_without_docstrings(stored) == _code_without_docstrings(source)
        # What wctx reads at run time stays: the commands' docstrings are their help, and the
        # library surface keeps its own.
        module = {}
        exec(compile(archive.read("wctx.py"), "wctx.py", "exec"), module)
        assert module["__doc__"] and module["cmd_capture"].__doc__ == wctx.cmd_capture.__doc__
        assert all(
            module[n].__doc__ == getattr(wctx, n).__doc__ for n in wctx.__all__ if callable(getattr(wctx, n))
        )
        assert archive.testzip() is None


def test_build_has_no_package_that_could_shadow_stdlib_zipapp():
    assert not os.path.exists(os.path.join(ROOT, "zipapp", "__init__.py"))


def test_build_fails_clearly_on_a_broken_module(tmp_path):
    project = tmp_path / "project"
    (project / "zipapp").mkdir(parents=True)
    for name in ("build.py", "pyz_main.py"):
        (project / "zipapp" / name).write_bytes(open(os.path.join(ROOT, "zipapp", name), "rb").read())
    (project / "wctx.py").write_text('__version__ = "1.0"\ndef main(:\n')
    (project / "wctx_mcp.py").write_text("")
    done = subprocess.run(
        [sys.executable, str(project / "zipapp" / "build.py")],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("build failed: ") and "does not compile" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (project / "dist" / "wctx.pyz").exists()


# -- old interpreters are refused in one line ----------------------------------------------------


@pytest.mark.parametrize("prefix", TOO_OLD)
def test_too_old_python_gets_one_clear_line(pyz, prefix):
    python = interpreter(prefix)
    done = subprocess.run([python, pyz, "--version"], capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("wctx needs Python 3.8 or newer, but this is Python " + prefix)


# -- the archive at work under each supported interpreter ----------------------------------------


def git(cwd, *args):
    subprocess.run(
        ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        timeout=TIMEOUT,
    )


def make_repo(path, files):
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    for rel, text in files.items():
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


@pytest.fixture
def workspace(tmp_path):
    """Two related git repos and a private WCTX_HOME (and pyz cache) for one interpreter's run."""
    sdk = make_repo(
        tmp_path / "upload-sdk",
        {
            "src/upload.py": "def upload_document(doc):\n    return post(doc)\n\n\ndef post(doc):\n    return 419\n"
        },
    )
    ui = make_repo(tmp_path / "docs-ui", {"app.py": "from sdk import upload_document\n"})
    env = dict(os.environ)
    env.update(
        WCTX_HOME=str(tmp_path / "home"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        HOME=str(tmp_path),
        GIT_CONFIG_NOSYSTEM="1",
    )
    for name in ("WCTX_PYZ_CACHE", "PYTHONDONTWRITEBYTECODE"):  # as on a typical user's machine
        env.pop(name, None)
    return {"sdk": sdk, "ui": ui, "env": env, "tmp": tmp_path}


def run_pyz(python, pyz, args, ws, cwd=None, ok=True):
    done = subprocess.run(
        [python, pyz, *args],
        cwd=str(cwd or ws["ui"]),
        env=ws["env"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert "Traceback" not in done.stderr, done.stderr
    if ok:
        assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stderr}"
    return done


@pytest.mark.parametrize("prefix", SUPPORTED)
def test_cli_capture_search_verify(pyz, workspace, prefix):
    python = interpreter(prefix)
    ws = workspace
    version = run_pyz(python, pyz, ["--version"], ws).stdout
    assert version_of_source() in version

    run_pyz(python, pyz, ["repo", "add", str(ws["sdk"]), "--workspace", "product"], ws)
    run_pyz(python, pyz, ["repo", "add", str(ws["ui"]), "--workspace", "product"], ws)
    captured = run_pyz(
        python,
        pyz,
        [
            "capture",
            "--summary",
            "traced the upload failure into the SDK",
            "--finding",
            "SDK swallows the 419 :: upload_document returns it as terminal, no retry",
            "--repo",
            "upload-sdk",
            "--file",
            "src/upload.py#upload_document",
            "--json",
        ],
        ws,
    )
    evidence_id = json.loads(captured.stdout)["evidence"][0]["id"]

    found = json.loads(run_pyz(python, pyz, ["search", "419 retry", "--json"], ws).stdout)
    assert [r["id"] for r in found["results"]] == [evidence_id]
    assert found["results"][0]["repo"] == "upload-sdk"

    verdict = json.loads(run_pyz(python, pyz, ["verify", evidence_id, "--json"], ws).stdout)
    assert verdict["items"][0]["verdict"] == "current"

    # Change the cited symbol: verify now says stale (exit 1 is the "verdict" exit code).
    source = ws["sdk"] / "src" / "upload.py"
    source.write_text(source.read_text().replace("return post(doc)", "return post(doc, retries=3)"))
    stale = run_pyz(python, pyz, ["verify", evidence_id, "--json"], ws, ok=False)
    assert stale.returncode in (0, 1), stale.stderr
    assert json.loads(stale.stdout)["items"][0]["verdict"] == "stale"

    # The compiled-module cache was written for this interpreter and is reused.
    cached = glob.glob(os.path.join(ws["tmp"], "cache", "wctx", "pyz", "wctx-*.bin"))
    assert len(cached) == 1, cached


@pytest.mark.parametrize(
    "setting",
    [{"WCTX_PYZ_CACHE": "0"}, {"PYTHONDONTWRITEBYTECODE": "1"}],
    ids=["cache-off", "dont-write-bytecode"],
)
def test_compiled_module_cache_can_be_turned_off(pyz, workspace, setting):
    workspace["env"].update(setting)
    assert run_pyz(sys.executable, pyz, ["--version"], workspace).stdout.strip()
    assert not os.path.exists(os.path.join(workspace["tmp"], "cache", "wctx"))


def test_unwritable_cache_only_costs_a_compile(pyz, workspace):
    workspace["env"]["WCTX_PYZ_CACHE"] = "/proc/wctx-cannot-write-here"
    done = run_pyz(sys.executable, pyz, ["--version"], workspace)
    assert done.stdout.strip() == "wctx " + version_of_source()
    assert done.stderr == ""


def test_a_read_only_user_cache_falls_back_to_pycache_beside_the_archive(pyz, workspace, tmp_path):
    """A read-only home (some sandboxes) must not mean a compile of wctx.py at every run: the
    compiled module goes to __pycache__ beside the archive, as a module's .pyc would."""
    copy = tmp_path / "vendored" / "wctx.pyz"
    copy.parent.mkdir()
    copy.write_bytes(open(pyz, "rb").read())
    workspace["env"]["XDG_CACHE_HOME"] = "/proc/wctx-cannot-write-here"
    for _ in range(2):
        done = run_pyz(sys.executable, str(copy), ["--version"], workspace)
        assert done.stdout.strip() == "wctx " + version_of_source() and done.stderr == ""
    assert glob.glob(str(copy.parent / "__pycache__" / "wctx-*.bin"))


def _plant_cache_entry(archive, folder, marker):
    """A compiled-module entry, named as the archive looks for it, whose code writes ``marker``."""
    import hashlib
    import zipfile

    with zipfile.ZipFile(archive) as z:
        digest = hashlib.sha256(z.read("wctx.py")).hexdigest()
    origin = os.path.join(str(archive), "wctx.py")
    code = compile("open(%r, 'w').write('ran')\nraise SystemExit(7)\n" % str(marker), origin, "exec")
    os.makedirs(folder, exist_ok=True)
    entry = os.path.join(folder, "wctx-%s.%s.bin" % (digest[:24], sys.implementation.cache_tag))
    with open(entry, "wb") as handle:
        handle.write(marshal.dumps(code))
    return entry


def test_a_cache_entry_another_user_could_have_written_never_runs(pyz, workspace, tmp_path):
    """An archive in a shared folder (a download in /tmp): anyone may create __pycache__ there.
    An entry in a folder others can write, or owned by someone else, is compiled anew, not run."""
    shared = tmp_path / "shared"
    shared.mkdir()
    copy = shared / "wctx.pyz"
    copy.write_bytes(open(pyz, "rb").read())
    workspace["env"]["XDG_CACHE_HOME"] = "/proc/wctx-cannot-write-here"
    marker = tmp_path / "planted-code-ran"
    folder = shared / "__pycache__"
    entry = _plant_cache_entry(copy, str(folder), marker)
    os.chmod(str(folder), 0o777)  # world-writable, as a folder under /tmp is
    done = run_pyz(sys.executable, str(copy), ["--version"], workspace)
    assert done.stdout.strip() == "wctx " + version_of_source() and not marker.exists(), done
    # A private folder holding an entry that others may write: refused too.
    os.chmod(str(folder), 0o700)
    entry = _plant_cache_entry(copy, str(folder), marker)
    os.chmod(entry, 0o666)
    done = run_pyz(sys.executable, str(copy), ["--version"], workspace)
    assert done.stdout.strip() == "wctx " + version_of_source() and not marker.exists(), done
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # only root can give a file to another user
        entry = _plant_cache_entry(copy, str(folder), marker)
        os.chmod(entry, 0o600)
        os.chown(entry, 65534, 65534)
        done = run_pyz(sys.executable, str(copy), ["--version"], workspace)
        assert done.stdout.strip() == "wctx " + version_of_source() and not marker.exists(), done
    # The same entry in a folder only this user can write is what the cache is for: it is used.
    entry = _plant_cache_entry(copy, str(folder), marker)
    os.chmod(entry, 0o600)
    done = run_pyz(sys.executable, str(copy), ["--version"], workspace, ok=False)
    assert done.returncode == 7 and marker.exists(), done


def test_compiled_module_cache_survives_a_corrupt_entry(pyz, workspace):
    run_pyz(sys.executable, pyz, ["--version"], workspace)
    (entry,) = glob.glob(os.path.join(workspace["tmp"], "cache", "wctx", "pyz", "wctx-*.bin"))
    with open(entry, "wb") as handle:
        handle.write(b"not marshal data")
    assert version_of_source() in run_pyz(sys.executable, pyz, ["--version"], workspace).stdout
    with open(entry, "rb") as handle:
        assert handle.read() != b"not marshal data"  # rewritten by the run that recompiled


def version_of_source():
    with open(os.path.join(ROOT, "wctx.py"), encoding="utf-8") as handle:
        return re.search(r'^__version__ = "([^"]+)"', handle.read(), re.M).group(1)


class StdioClient:
    """A raw MCP client: newline-delimited JSON-RPC over the server's stdin/stdout."""

    def __init__(self, argv, env, cwd):
        self.proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.lines = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, message):
        self.proc.stdin.write(json.dumps(message).encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def request(self, method, params=None):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}})
        while True:
            line = self.lines.get(timeout=TIMEOUT)
            assert line is not None, "server closed stdout: " + self.proc.stderr.read().decode()
            message = json.loads(line)
            if message.get("id") == self.next_id:
                return message

    def close(self):
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=TIMEOUT)
        finally:
            self.proc.stdout.close()
            self.proc.stderr.close()


@pytest.mark.parametrize("prefix", SUPPORTED)
def test_mcp_initialize_and_tool_call(pyz, workspace, prefix):
    python = interpreter(prefix)
    ws = workspace
    run_pyz(python, pyz, ["repo", "add", str(ws["sdk"]), "--workspace", "product"], ws)
    run_pyz(
        python,
        pyz,
        ["capture", "--finding", "SDK swallows the 419", "--repo", "upload-sdk", "--file", "src/upload.py"],
        ws,
    )
    # Start the server with exactly the command line `wctx doctor` prints for this archive.
    doctor = json.loads(run_pyz(python, pyz, ["doctor", "--json"], ws, cwd=ws["sdk"]).stdout)
    assert doctor["healthy"] is True
    command = doctor["mcp_command"]
    assert command == [command[0], os.path.abspath(pyz), "--home", ws["env"]["WCTX_HOME"], "mcp"]
    assert os.path.samefile(command[0], python)
    client = StdioClient(command, ws["env"], str(ws["sdk"]))
    try:
        init = client.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "pyz-test", "version": "1"},
            },
        )
        assert init["result"]["protocolVersion"] == "2025-06-18"
        assert init["result"]["serverInfo"]["version"] == version_of_source()
        client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = [tool["name"] for tool in client.request("tools/list")["result"]["tools"]]
        search_tool = next(name for name in tools if "search" in name)
        called = client.request("tools/call", {"name": search_tool, "arguments": {"query": "419"}})
        result = called["result"]
        assert not result.get("isError"), result
        assert "SDK swallows the 419" in json.dumps(result)
    finally:
        assert client.close() == 0
