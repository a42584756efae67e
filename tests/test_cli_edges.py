"""The CLI at its edges, as a user meets them in a real multi-repository workspace: how a relative
``--file`` is resolved, flags in unusual places, idempotent re-imports, honest messages for
updates, retracting superseded items, and errors under ``--json``."""

from __future__ import annotations

import wctx


def _capture_json(run_cli, cwd, *argv):
    res = run_cli(["capture", *argv, "--json"], cwd=cwd)
    assert res.code == 0, res
    return res.json


def _files(store, eid):
    return ["%s:%s" % (a["repo"], a["path"]) for a in wctx.get_evidence(store, eid)["anchors"] if a["path"]]


# ----------------------------------------------------------------------------------------------
# --file: the current directory first, then the repository root, and say which when both exist
# ----------------------------------------------------------------------------------------------


def test_relative_file_resolves_against_the_cwd_first_and_says_so_when_the_root_has_one_too(
    git_repo, store, run_cli
):
    flask = git_repo(
        "flask",
        {
            "pyproject.toml": "[project]\nname = 'flask'\n",
            "examples/tutorial/pyproject.toml": "[project]\nname = 'x'\n",
        },
    )
    wctx.register_repo(store, flask.path)
    sub = flask.file("examples/tutorial")
    out = _capture_json(run_cli, sub, "--finding", "tutorial build", "--file", "pyproject.toml")
    assert _files(store, out["evidence"][0]["id"]) == ["flask:examples/tutorial/pyproject.toml"]
    joined = " ".join(out["warnings"])
    assert "examples/tutorial/pyproject.toml" in joined and "flask:pyproject.toml" in joined, out
    # The text output says it too.
    res = run_cli(["capture", "--finding", "tutorial build again", "--file", "pyproject.toml"], cwd=sub)
    assert res.code == 0 and "flask:pyproject.toml" in res.out + res.err, res


def test_relative_file_falls_back_to_the_repository_root_silently_when_only_it_exists(
    git_repo, store, run_cli
):
    flask = git_repo("flask", {"pyproject.toml": "x\n", "examples/tutorial/app.py": "x = 1\n"})
    wctx.register_repo(store, flask.path)
    out = _capture_json(
        run_cli, flask.file("examples/tutorial"), "--finding", "root file", "--file", "pyproject.toml"
    )
    assert _files(store, out["evidence"][0]["id"]) == ["flask:pyproject.toml"]
    assert out["warnings"] == []
    # Only in the cwd: the cwd's file, no warning either.
    out = _capture_json(run_cli, flask.file("examples/tutorial"), "--finding", "cwd file", "--file", "app.py")
    assert _files(store, out["evidence"][0]["id"]) == ["flask:examples/tutorial/app.py"]
    assert out["warnings"] == []


def test_repo_prefixed_file_is_always_repository_relative(git_repo, store, run_cli):
    flask = git_repo("flask", {"pyproject.toml": "x\n", "examples/tutorial/pyproject.toml": "y\n"})
    wctx.register_repo(store, flask.path)
    out = _capture_json(
        run_cli, flask.file("examples/tutorial"), "--finding", "root", "--file", "flask:pyproject.toml"
    )
    assert _files(store, out["evidence"][0]["id"]) == ["flask:pyproject.toml"]
    assert out["warnings"] == []


def test_cross_repo_file_keeps_the_item_repository_and_names_the_cwd_twin(git_repo, store, run_cli):
    sdk = git_repo("click", {"src/core.py": "def invoke():\n    pass\n"})
    ui = git_repo("flask", {"src/core.py": "def other():\n    pass\n"})
    wctx.register_repo(store, sdk.path)
    wctx.register_repo(store, ui.path)
    out = _capture_json(run_cli, ui.path, "--finding", "in click", "--repo", "click", "--file", "src/core.py")
    assert _files(store, out["evidence"][0]["id"]) == ["click:src/core.py"]
    assert any("flask:src/core.py" in w for w in out["warnings"]), out


def test_capture_file_dot_is_a_clear_error(git_repo, store, run_cli):
    repo = git_repo("click", {"a.py": "x\n"})
    wctx.register_repo(store, repo.path)
    before = store.one("SELECT count(*) AS n FROM evidence")["n"]
    for spec in (".", "./", "src/.."):
        res = run_cli(["capture", "--finding", "x", "--file", spec], cwd=repo.path)
        assert res.code == 2, res
        assert "outside" not in res.err and "directory" in res.err, res
        assert res.err.count("\n") == 1
    assert store.one("SELECT count(*) AS n FROM evidence")["n"] == before


def test_sessions_file_resolves_against_the_cwd_first(git_repo, store, run_cli):
    flask = git_repo("flask", {"pyproject.toml": "x\n", "examples/tutorial/pyproject.toml": "y\n"})
    wctx.register_repo(store, flask.path)
    res = run_cli(["sessions", "--file", "pyproject.toml", "--json"], cwd=flask.file("examples/tutorial"))
    assert res.code == 0, res
    assert res.json["path"] == "examples/tutorial/pyproject.toml"
