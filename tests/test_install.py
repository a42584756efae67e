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
PROJECT_FILES = ("pyproject.toml", "README.md", "LICENSE", "wctx.py", "wctx_mcp.py")
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
    # Offline when the venv can already build a wheel with the setuptools pyproject.toml names
    # (>= 77, for the SPDX license string); otherwise pip fetches that build backend, as any
    # user's pip would.
    probe = (
        "import sys, setuptools\n"
        "sys.exit(int(setuptools.__version__.split('.')[0]) < 77)\n"
        "import setuptools.command.bdist_wheel"
    )
    can_build = run([python, "-c", probe]).returncode == 0
    pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps"]
    if can_build:
        pip.append("--no-build-isolation")
    done = run([*pip, str(source)], cwd=str(base))
    assert done.returncode == 0, done.stdout + done.stderr
    # An interpreter whose setuptools builds this project (for the sdist test): the venv's when
    # new enough, else a second venv given the build backend pyproject.toml names.
    build_python = python
    if not can_build:
        build_dir = base / "build-venv"
        assert run([sys.executable, "-m", "venv", str(build_dir)]).returncode == 0
        build_python = str(build_dir / "bin" / "python")
        done = run(
            [build_python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "setuptools>=77"]
        )
        assert done.returncode == 0, done.stdout + done.stderr
    return {
        "python": python,
        "wctx": str(env_dir / "bin" / "wctx"),
        "base": base,
        "build_python": build_python,
    }


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


def test_the_sdist_carries_its_tests_license_and_metadata(venv, tmp_path):
    """`python -m build --sdist` as a packager runs it: the archive holds the tests, their fixtures
    and the zipapp build, and the metadata has the SPDX license, classifiers and keywords."""
    import tarfile

    source = tmp_path / "source"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".git", "__pycache__", "*.egg-info", "build", "dist", "node_modules", ".ci"
        ),
    )
    build = "import sys\nfrom setuptools import build_meta\nprint(build_meta.build_sdist(sys.argv[1]))"
    python = venv["build_python"]
    done = run([python, "-c", build, str(tmp_path / "dist")], cwd=str(source))
    assert done.returncode == 0, done.stdout + done.stderr
    archive = tmp_path / "dist" / done.stdout.strip().splitlines()[-1]
    with tarfile.open(str(archive)) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
        top = tar.getnames()[0].split("/")[0]
        pkg_info = tar.extractfile(top + "/PKG-INFO").read().decode()
    for needed in (
        "LICENSE",
        "tests/conftest.py",
        "tests/test_hooks.py",
        "tests/fixtures/transcripts/gemini_multi_repo.jsonl",
        "tests/mcp_helpers/wire.py",
        "zipapp/build.py",
        "eval/corpus",
        "parts/MANIFEST",
        "docs/commands.md",
    ):
        assert any(n == needed or n.startswith(needed + "/") for n in names), needed
    assert "License-Expression: MIT" in pkg_info
    assert "Classifier: Programming Language :: Python :: 3.8" in pkg_info
    assert "Keywords:" in pkg_info and "gemini-cli" in pkg_info
    assert not any("__pycache__" in n for n in names)
    # Its tests run from the unpacked archive (one module here; CI runs the suite from the tree).
    with tarfile.open(str(archive)) as tar:
        tar.extractall(str(tmp_path / "unpacked"))  # noqa: S202 - our own archive
    unpacked = tmp_path / "unpacked" / top
    done = run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_import_gemini.py"],
        cwd=str(unpacked),
        env={k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"},
    )
    assert done.returncode == 0 and " passed" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
