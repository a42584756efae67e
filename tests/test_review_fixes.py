"""Regressions found in review: each test names the bug it keeps fixed."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import WCTX_SCRIPT, git

import wctx


def test_a_deleted_file_is_stale_even_when_another_file_has_the_same_content(git_repo, store):
    # Empty __init__.py files share one blob: the deleted one must not "move" to its twin.
    repo = git_repo("pk", {"a/__init__.py": "", "b/__init__.py": ""})
    wctx.register_repo(store, repo.path)
    cap = wctx.capture(store, [{"kind": "constraint", "claim": "package b must stay importable",
                                "files": ["b/__init__.py"]}], cwd=repo.path)  # fmt: skip
    repo.git("rm", "-q", "b/__init__.py")
    repo.commit("drop b")
    item = wctx.verify(store, [cap["evidence"][0]["id"]])["items"][0]
    assert item["verdict"] == "stale"
    assert "b/__init__.py was deleted" in item["reasons"][0]
    assert "a/__init__.py" not in " ".join(item["reasons"])


def test_a_submodule_filter_never_runs(git_repo, store, tmp_path):
    marker = tmp_path / "PWNED"
    sub = git_repo("subsrc", {"f.txt": "hi\n", ".gitattributes": "* filter=evil\n"})
    sup = git_repo("super", {"top.txt": "x\n"})
    git(sup.path, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub.path, "sub")
    sup.commit("add submodule")
    git(os.path.join(sup.path, "sub"), "config", "filter.evil.clean", "sh -c 'touch %s; cat'" % marker)
    with open(os.path.join(sup.path, "sub", "f.txt"), "a") as fh:
        fh.write("changed\n")
    wctx.register_repo(store, sup.path)
    wctx.capture(store, [{"kind": "note", "claim": "top level file", "files": ["top.txt"]}], cwd=sup.path)
    os.remove(os.path.join(sup.path, "top.txt"))  # verify then asks git where the file went
    wctx.search(store, "", cwd=sup.path)  # the fallback runs git status
    wctx.verify(store, repo="super")
    assert not marker.exists()


def test_a_closed_pipe_ends_export_quietly(git_repo, store, wctx_home):
    repo = git_repo("many", {"f.py": "x = 1\n"})
    wctx.register_repo(store, repo.path)
    items = [{"kind": "note", "claim": "note %d %s" % (n, "padding " * 60)} for n in range(150)]
    wctx.capture(store, items, cwd=repo.path)
    proc = subprocess.Popen([sys.executable, WCTX_SCRIPT, "export"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, WCTX_HOME=wctx_home))  # fmt: skip
    proc.stdout.read(100)
    proc.stdout.close()  # the reader goes away, as `wctx export | head -c 100` does
    err = proc.stderr.read().decode()
    assert proc.wait() == 0
    assert "Traceback" not in err and "BrokenPipe" not in err
