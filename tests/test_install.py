"""`pip install .` gives a working `wctx` command, installs both modules, and pulls in nothing else.

The project files are copied to a temp dir first so that the build never writes build/ or
*.egg-info into the shared checkout; the venv is private to the test.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROJECT_FILES = ("pyproject.toml", "README.md", "wctx.py", "wctx_mcp.py")
TIMEOUT = 300


def run(argv, **kwargs):
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("text", True)
    kwargs.setdefault("timeout", TIMEOUT)
    return subprocess.run(argv, **kwargs)


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    missing = [name for name in PROJECT_FILES if not os.path.exists(os.path.join(ROOT, name))]
    if missing:
        pytest.skip("not written yet: " + ", ".join(missing))
    base = tmp_path_factory.mktemp("install")
    source = base / "source"
    source.mkdir()
    for name in PROJECT_FILES:
        shutil.copy2(os.path.join(ROOT, name), source / name)
    env_dir = base / "venv"
    done = run([sys.executable, "-m", "venv", str(env_dir)])
    if done.returncode != 0:
        pytest.skip("cannot create a venv here: " + done.stderr.strip()[-300:])
    python = str(env_dir / "bin" / "python")
    # Offline when the venv can already build a wheel (setuptools >= 70.1, or setuptools + wheel);
    # otherwise pip fetches the build backend named in pyproject.toml, as any user's pip would.
    probe = "import setuptools\ntry:\n    import setuptools.command.bdist_wheel\nexcept ImportError:\n    import wheel"
    can_build = run([python, "-c", probe]).returncode == 0
    pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps"]
    if can_build:
        pip.append("--no-build-isolation")
    done = run([*pip, str(source)], cwd=str(base))
    assert done.returncode == 0, done.stdout + done.stderr
    return {"python": python, "wctx": str(env_dir / "bin" / "wctx"), "base": base}


def test_console_command_prints_the_version(venv):
    done = run([venv["wctx"], "--version"], cwd=str(venv["base"]))
    assert done.returncode == 0, done.stderr
    with open(os.path.join(ROOT, "wctx.py"), encoding="utf-8") as handle:
        version = next(line for line in handle if line.startswith("__version__")).split('"')[1]
    assert version in done.stdout


def test_both_modules_installed_without_dependencies(venv):
    code = (
        "import json, wctx, wctx_mcp, importlib.metadata as md;"
        "print(json.dumps([wctx.__file__, wctx_mcp.__file__, md.requires('wctx') or [], md.version('wctx')]))"
    )
    done = run([venv["python"], "-c", code], cwd=str(venv["base"]))
    assert done.returncode == 0, done.stderr
    wctx_file, mcp_file, requires, version = json.loads(done.stdout)
    assert "site-packages" in wctx_file and "site-packages" in mcp_file
    assert [req for req in requires if "extra ==" not in req] == []  # dev extras only
    assert version


def test_installed_command_captures_and_searches(venv, tmp_path):
    repo = tmp_path / "upload-sdk"
    repo.mkdir()
    git = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com"]
    run([*git, "init", "-q"], cwd=str(repo), check=True)
    (repo / "upload.py").write_text("def upload_document(doc):\n    return 419\n")
    run([*git, "add", "-A"], cwd=str(repo), check=True)
    run([*git, "commit", "-q", "-m", "initial"], cwd=str(repo), check=True)
    env = dict(os.environ, WCTX_HOME=str(tmp_path / "home"))

    def wctx(*args):
        done = run([venv["wctx"], *args], cwd=str(repo), env=env)
        assert done.returncode == 0, f"{args}: {done.stderr}"
        return done.stdout

    wctx("repo", "add", str(repo))
    wctx(
        "capture",
        "--finding",
        "upload_document returns 419 without retry",
        "--file",
        "upload.py#upload_document",
    )
    found = json.loads(wctx("search", "419 retry", "--json"))
    assert [result["claim"] for result in found["results"]] == ["upload_document returns 419 without retry"]


def test_installed_doctor_names_a_working_mcp_command(venv, tmp_path):
    env = dict(os.environ, WCTX_HOME=str(tmp_path / "home"))
    done = run([venv["wctx"], "doctor", "--json"], cwd=str(tmp_path), env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    command = json.loads(done.stdout)["mcp_command"]
    # The installed console script (bytecode cached, so the client's first answer comes fast),
    # the same file mcp-info and the hooks name.
    assert command[1] == venv["wctx"]
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    served = run(command, cwd=str(tmp_path), env=env, input=json.dumps(initialize) + "\n")
    assert served.returncode == 0, served.stderr
    reply = json.loads(served.stdout.splitlines()[0])
    assert reply["result"]["serverInfo"]["name"]
