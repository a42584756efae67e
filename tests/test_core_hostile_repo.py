"""A repository whose config tries to make wctx run its programs: fsmonitor, hooks (in .git/hooks
and through core.hooksPath), clean/smudge filters, textconv and external diff drivers. Every wctx
command that runs git (register, capture, verify, search's fallback, show) must run none of them.
A control run of plain git proves the traps are armed."""

from __future__ import annotations

import os
import stat
import subprocess

import pytest
from conftest import git_env

import wctx

HOOK_NAMES = (
    "pre-commit",
    "post-commit",
    "post-checkout",
    "post-merge",
    "post-rewrite",
    "pre-auto-gc",
    "post-index-change",
    "reference-transaction",
    "fsmonitor-watchman",
    "pre-push",
)


def _script(path, marker):
    with open(path, "w") as fh:
        fh.write("#!/bin/sh\necho ran >> '%s'\ncat >/dev/null 2>&1 &\nexit 0\n" % marker)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _filter_script(path, marker):
    # A filter must pass content through, or git complains; it also leaves its mark.
    with open(path, "w") as fh:
        fh.write("#!/bin/sh\necho ran >> '%s'\ncat\n" % marker)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.fixture
def hostile(git_repo, store, tmp_path):
    """A registered-later repo full of traps; returns (repo, marker directory)."""
    marks = tmp_path / "marks"
    marks.mkdir()
    bin_dir = tmp_path / "evil-bin"
    bin_dir.mkdir()
    repo = git_repo(
        "hostile",
        {
            "src/app.py": "def handler(x):\n    return x\n\n\ndef other(y):\n    return y\n",
            "notes.txt": "plain\n",
            ".gitattributes": "* filter=evil diff=evil\n",
        },
    )
    ui = git_repo("hostile-ui", {"main.py": "print(1)\n"})
    wctx.register_repo(store, ui.path, workspace="traps")

    fsmonitor = str(bin_dir / "fsmonitor")
    _script(fsmonitor, str(marks / "fsmonitor"))
    clean = str(bin_dir / "clean")
    _filter_script(clean, str(marks / "filter-clean"))
    smudge = str(bin_dir / "smudge")
    _filter_script(smudge, str(marks / "filter-smudge"))
    textconv = str(bin_dir / "textconv")
    _filter_script(textconv, str(marks / "textconv"))
    external = str(bin_dir / "extdiff")
    _script(external, str(marks / "external-diff"))

    hooks_git = os.path.join(repo.path, ".git", "hooks")
    hooks_alt = str(tmp_path / "evil-hooks")
    os.makedirs(hooks_alt)
    for name in HOOK_NAMES:
        _script(os.path.join(hooks_git, name), str(marks / ("hook-git-" + name)))
        _script(os.path.join(hooks_alt, name), str(marks / ("hook-path-" + name)))

    # Arm the traps only now: nothing above ran with them.
    for key, value in (
        ("core.fsmonitor", fsmonitor),
        ("core.hooksPath", hooks_alt),
        ("filter.evil.clean", clean),
        ("filter.evil.smudge", smudge),
        ("filter.evil.required", "true"),
        ("diff.evil.textconv", textconv),
        ("diff.evil.command", external),
        ("diff.external", external),
        ("core.pager", external),
        ("pager.log", external),
        ("core.untrackedCache", "true"),
    ):
        repo.git("config", key, value)
    assert os.listdir(str(marks)) == []
    return repo, ui, marks


def _dirty(repo):
    # Modified tracked files and an untracked one: status/diff must look at content.
    repo.write("src/app.py", repo.read("src/app.py").replace("return y", "return y * 2"))
    repo.write("notes.txt", "changed\n")
    repo.write("untracked.txt", "new\n")


def test_malicious_repo_config_never_runs_anything(hostile, store, run_cli, run_wctx):
    repo, ui, marks = hostile
    # Register (rev-parse, rev-list) through the CLI, in-process and as a subprocess.
    res = run_cli(["repo", "add", repo.path, "--workspace", "traps"])
    assert res.code == 0, res
    assert run_wctx(["repo", "add", repo.path]).code == 0
    wctx.relate(store, "hostile-ui", "uses", "hostile")

    # Capture: HEAD, branch, blob ids of a clean and of a dirty file.
    cap = run_cli(
        [
            "capture",
            "--finding",
            "handler echoes",
            "--repo",
            "hostile",
            "--file",
            "src/app.py#handler",
            "--json",
        ],
        cwd=ui.path,
    )
    assert cap.code == 0, cap
    eid = cap.json["evidence"][0]["id"]
    _dirty(repo)
    cap2 = run_wctx(
        [
            "capture",
            "--question",
            "why notes?",
            "--file",
            "notes.txt",
            "--note",
            "dirty capture",
            "--file",
            "src/app.py#other",
            "--json",
        ],
        cwd=repo.path,
    )
    assert cap2.code == 0, cap2
    # Commit something so verify walks a log and a rename diff.
    subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "filter.evil.clean=",
         "-c", "filter.evil.smudge=", "-c", "filter.evil.required=false", "-C", repo.path, "commit", "-q", "-am", "edit"],
        env=git_env(), check=True, capture_output=True,
    )  # fmt: skip
    assert os.listdir(str(marks)) == [], "the test's own commit must not trip the traps"
    os.rename(repo.file("notes.txt"), repo.file("notes-moved.txt"))
    _dirty(repo)

    # Verify (cat-file, log, diff -M against the working tree, ls-tree), in and out of process.
    ver = run_cli(["verify", "--json"], cwd=repo.path)
    assert ver.code in (0, 1) and ver.err == "", ver
    assert run_wctx(["verify", eid, "--json"]).code in (0, 1)
    # Search: text mode and the vague fallback (git status of the caller's working tree).
    for argv in (
        ["search", "handler", "--json"],
        ["search", "has anyone looked at this?", "--json"],
        ["search"],
    ):
        res = run_cli(argv, cwd=repo.path)
        assert res.code == 0, res
    fallback = run_cli(["search", "anything here?", "--json"], cwd=repo.path).json
    assert fallback["mode"] == "fallback"
    assert any("uncommitted changes in your working tree" in r["reasons"][0] for r in fallback["results"])
    assert run_wctx(["search", "what about this?"], cwd=repo.path).code == 0
    assert run_cli(["show", eid]).code == 0
    assert run_cli(["repo", "list"]).code == 0

    assert sorted(os.listdir(str(marks))) == [], "wctx ran a program from the repository's config"


def test_the_traps_are_armed(hostile):
    """Control: plain git (without wctx's safety options) does run them, so the test above is real."""
    repo, _, marks = hostile
    _dirty(repo)
    plain_env = git_env()

    def plain_git(*args):
        return subprocess.run(
            ["git", "-C", repo.path, *args], env=plain_env, capture_output=True, check=False
        )

    plain_git("status")
    plain_git("diff")
    plain_git("add", "-A")
    plain_git("commit", "-q", "-m", "trap")
    ran = set(os.listdir(str(marks)))
    assert "fsmonitor" in ran
    assert "filter-clean" in ran
    assert {"hook-path-pre-commit", "hook-path-post-commit"} <= ran
    assert "external-diff" in ran or "textconv" in ran
