"""The shipped modules need nothing newer than Python 3.8.

Three layers, each catching what the others miss:
- vermin (test-only tool) with target 3.8 finds newer library members and syntax (a line marked
  ``# novermin`` is a guarded use: ``import tomllib`` inside ``try``/``except ImportError``);
- an AST check finds what vermin lets through: builtin generics (`list[str]`) and `X | Y` unions
  evaluated at run time (in annotations they are fine only under `from __future__ import annotations`);
- the real Python 3.8 compiles both files, and Python 2.7/3.6 parse the archive's entry point.
"""

import ast
import glob
import os
import subprocess
import sys

import pytest
from conftest import missing

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHIPPED = [os.path.join(ROOT, name) for name in ("wctx.py", "wctx_mcp.py")]
ENTRY = os.path.join(ROOT, "zipapp", "pyz_main.py")
BUILTIN_GENERICS = {"list", "dict", "set", "frozenset", "tuple", "type"}
TYPE_NAMES = BUILTIN_GENERICS | {"int", "str", "bytes", "float", "bool", "object"}


def pyenv_python(prefix):
    """Path of the newest pyenv interpreter whose version starts with prefix ("3.8"), or None."""
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    found = []
    for path in glob.glob(os.path.join(root, "versions", prefix + ".*", "bin", "python")):
        patch = os.path.basename(os.path.dirname(os.path.dirname(path)))[len(prefix) + 1 :]
        if patch.isdigit():
            found.append((int(patch), path))
    return max(found)[1] if found else None


def shipped_files():
    missing = [path for path in SHIPPED if not os.path.exists(path)]
    if missing:
        pytest.skip("not written yet: " + ", ".join(os.path.basename(p) for p in missing))
    return SHIPPED


def test_vermin_finds_nothing_newer_than_38():
    pytest.importorskip("vermin", reason="vermin is a dev extra: pip install -e '.[dev]'")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, vermin; sys.exit(vermin.main())",
            "-t=3.8-",
            "--no-tips",
            "--violations",
        ]
        + shipped_files(),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def runtime_violations(path):
    """Builtin generics and `|` unions of types that Python 3.8 would evaluate (and fail on)."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    lazy_annotations = any(
        isinstance(node, ast.ImportFrom)
        and node.module == "__future__"
        and any(alias.name == "annotations" for alias in node.names)
        for node in tree.body
    )
    annotation_nodes = set()
    if lazy_annotations:
        for node in ast.walk(tree):
            roots = []
            if isinstance(node, ast.arg) and node.annotation is not None:
                roots.append(node.annotation)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
                roots.append(node.returns)
            elif isinstance(node, ast.AnnAssign):
                roots.append(node.annotation)
            for root in roots:
                annotation_nodes.update(id(sub) for sub in ast.walk(root))

    def is_type_operand(node):
        return (isinstance(node, ast.Constant) and node.value is None) or (
            isinstance(node, ast.Name) and node.id in TYPE_NAMES
        )

    problems = []
    for node in ast.walk(tree):
        if id(node) in annotation_nodes:
            continue
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id in BUILTIN_GENERICS
        ):
            problems.append(f"{path}:{node.lineno}: {node.value.id}[...] at run time needs 3.9")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            if is_type_operand(node.left) or is_type_operand(node.right):
                problems.append(f"{path}:{node.lineno}: X | Y type union at run time needs 3.10")
    return problems


def test_no_runtime_generics_or_unions():
    problems = []
    for path in shipped_files():
        problems.extend(runtime_violations(path))
    assert problems == []


def test_ast_check_catches_what_it_claims(tmp_path):
    """The checker itself: flags runtime use, allows lazy annotations."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from __future__ import annotations\n"
        "def f(a: list[str] | None) -> dict[str, int]:\n"
        "    return {}\n"
        "ALIAS = list[str]\n"
        "OPTIONAL = int | None\n"
        "flags = 1 | 2\n"
    )
    problems = runtime_violations(str(sample))
    assert [p.split(":")[1] for p in problems] == ["4", "5"]


def test_python38_compiles_shipped_modules(tmp_path):
    python38 = pyenv_python("3.8")
    if python38 is None:
        missing("Python 3.8 is not installed on this machine (pyenv install 3.8)")
    for index, path in enumerate(shipped_files()):
        compiled = str(tmp_path / f"out{index}.pyc")  # never write __pycache__ into the checkout
        done = subprocess.run(
            [
                python38,
                "-c",
                "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)",
                path,
                compiled,
            ],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("prefix", ["2.7", "3.6"])
def test_old_pythons_can_parse_the_archive_entry_point(prefix, tmp_path):
    """The version check in __main__.py must itself parse on interpreters it refuses."""
    python = pyenv_python(prefix)
    if python is None:
        missing(f"Python {prefix} is not installed on this machine (pyenv install {prefix})")
    done = subprocess.run(
        [python, "-c", "import sys; compile(open(sys.argv[1]).read(), sys.argv[1], 'exec')", ENTRY],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
