"""What a newcomer trips on: typos answered with the names meant, lines that say which item they
are about, counts that agree, labels and bylines that fit where they are shown."""

from __future__ import annotations

import os
import sys

import pytest
from conftest import db_snapshot

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_helpers.fixtures import running  # noqa: E402

import wctx

ROUTING_PY = """class Router:
    def add_route(self, path, endpoint):
        self.routes.append((path, endpoint))

    def url_path_for(self, name):
        return name


def request_response(func):
    return func
"""

APP_PY = """from starlite.routing import Router


def build_app():
    return Router()
"""


@pytest.fixture
def family(git_repo, store):
    """Two registered repositories, 'webkit' used by 'webapp', in workspace 'site'."""
    lib = git_repo("webkit", {"webkit/routing.py": ROUTING_PY, "notes:todo.txt": "a file with a colon\n"})
    app = git_repo("webapp", {"webapp/main.py": APP_PY})
    for repo in (lib, app):
        wctx.register_repo(store, repo.path, workspace="site")
    wctx.relate(store, "webapp", "uses", "webkit")
    return lib, app


# -- a typo in a --file repository prefix --------------------------------------------------------


def test_a_mistyped_repository_prefix_is_named_as_an_unknown_repository(family, run_cli, wctx_home):
    lib, app = family
    before = db_snapshot(wctx_home)
    res = run_cli(
        ["capture", "--finding", "routes are matched in order", "--file", "webkti:webkit/routing.py#Router"],
        cwd=app.path,
    )
    assert res.code == 1, res
    assert "unknown repository 'webkti' (did you mean webkit?" in res.err
    assert "does not exist" not in res.err
    assert db_snapshot(wctx_home) == before


def test_a_path_with_a_colon_that_exists_is_still_a_path(family, run_cli):
    lib, app = family
    res = run_cli(
        ["capture", "--note", "the todo list lives here", "--file", "notes:todo.txt", "--json"], cwd=lib.path
    )
    assert res.code == 0, res
    shown = run_cli(["show", res.json["evidence"][0]["id"], "--json"])
    assert "notes:todo.txt" in shown.out


def test_a_mistyped_workspace_names_the_known_ones(family, run_cli):
    lib, app = family
    res = run_cli(["search", "routes", "--workspace", "stie"], cwd=app.path)
    assert res.code == 1, res
    assert "unknown workspace 'stie' (did you mean site?; known: site)" in res.err


# -- a typo in a symbol name ---------------------------------------------------------------------


def test_a_mistyped_symbol_is_refused_with_the_nearest_symbols_of_its_file(family, run_cli, wctx_home):
    lib, app = family
    before = db_snapshot(wctx_home)
    res = run_cli(
        [
            "capture",
            "--finding",
            "routes are matched in order",
            "--file",
            "webkit/routing.py#Router.add_rout",
        ],
        cwd=lib.path,
    )
    assert res.code == 2, res
    assert (
        "symbol Router.add_rout was not found in webkit:webkit/routing.py (did you mean Router.add_route"
        in res.err
    )
    assert "--allow-missing-symbol" in res.err
    assert db_snapshot(wctx_home) == before


def test_a_symbol_kept_as_typed_when_the_user_insists(family, run_cli):
    lib, app = family
    res = run_cli(
        ["capture", "--finding", "a handler not written yet", "--file", "webkit/routing.py#mount_all",
         "--allow-missing-symbol", "--json"],
        cwd=lib.path,
    )  # fmt: skip
    assert res.code == 0, res
    assert "symbol mount_all was not found in webkit:webkit/routing.py" in res.err
    assert "webkit/routing.py#mount_all" in run_cli(["show", res.json["evidence"][0]["id"]]).out


def test_record_evidence_refuses_a_mistyped_symbol_and_names_the_nearest(family, wctx_home):
    lib, app = family
    before = db_snapshot(wctx_home)
    with running(wctx_home, app.path) as server:
        server.initialize()
        item = {"kind": "finding", "claim": "url_path_for reverses a route", "repo": "webkit",
                "files": ["webkit/routing.py#Router.url_path_fr"]}  # fmt: skip
        result = server.call("record_evidence", {"items": [item]})
        assert result["isError"] is True, result
        text = result["content"][0]["text"]
        assert "did you mean Router.url_path_for?" in text and "the file alone" in text
        assert db_snapshot(wctx_home) == before
        item["files"] = ["webkit/routing.py#Router.url_path_for"]
        assert server.call("record_evidence", {"items": [item]})["isError"] is False


# -- verify names every item it checked ----------------------------------------------------------


def _two_cited_one_not(lib, run_cli):
    """Items about webkit: two cite a file, one cites none; webkit then moves on."""
    ids = []
    for argv in (
        ["--finding", "routes match in order", "--file", "webkit/routing.py#Router.add_route"],
        ["--decision", "reversing stays by name", "--file", "webkit/routing.py#Router.url_path_for"],
        ["--note", "the router is the hot path of every request"],
    ):
        res = run_cli(["capture", *argv, "--json"], cwd=lib.path)
        assert res.code == 0, res
        ids.append(res.json["evidence"][0]["id"])
    lib.write("README.md", "moved on\n")
    lib.commit("docs")
    return ids


def test_verify_names_the_item_that_cites_no_file(family, run_cli):
    lib, app = family
    ids = _two_cited_one_not(lib, run_cli)
    res = run_cli(["verify", "--about", "webkit"], cwd=lib.path)
    for eid in ids:
        assert eid in res.out, res.out
    assert "3 checked" in res.out


def test_verify_freshness_counts_and_names_every_item(family, run_cli, wctx_home):
    lib, app = family
    ids = _two_cited_one_not(lib, run_cli)
    with running(wctx_home, lib.path) as server:
        server.initialize()
        result = server.call("verify_freshness", {})
        assert result["isError"] is False, result
        text = result["content"][0]["text"]
        checked = int(text.split(" checked")[0])
        assert checked == sum(result["structuredContent"]["summary"].values()) == 3, text
        for eid in ids:
            assert eid in text, text
            assert eid in str(result["structuredContent"]), result["structuredContent"]


# -- a one-line reason counts the commits it does not show ---------------------------------------


def test_a_one_line_reason_counts_every_commit_it_leaves_out_and_cuts_subjects_at_a_word(family, run_cli):
    lib, app = family
    res = run_cli(
        [
            "capture",
            "--finding",
            "routes match in order",
            "--file",
            "webkit/routing.py#Router.add_route",
            "--json",
        ],
        cwd=lib.path,
    )
    eid = res.json["evidence"][0]["id"]
    subjects = []
    for n in range(7):
        text = lib.read("webkit/routing.py")
        lib.write(
            "webkit/routing.py", text.replace("self.routes.append(", "self.routes.append(  # %d\n" % n, 1)
        )
        subjects.append("routing: keep the registration order of routes stable across reloads, step %d" % n)
        lib.commit(subjects[-1])
    for n in range(2):  # the file changes elsewhere, leaving the symbol intact
        lib.write("webkit/routing.py", lib.read("webkit/routing.py") + "\n# trailer %d\n" % n)
        lib.commit("trailer %d" % n)
    detail = run_cli(["verify", eid, "--detail"], cwd=lib.path).out
    assert "changed in 7 commits" in detail, detail
    line = next(x for x in run_cli(["verify", eid], cwd=lib.path).out.splitlines() if x.startswith(eid))
    shown = line.count('"') // 2
    assert 0 < shown < 7, line
    assert " and %d more" % (7 - shown) in line, line
    for quoted in line.split('"')[1::2]:
        whole = [s for s in subjects if s.startswith(quoted.rstrip("…"))]
        assert whole, (quoted, line)
        if quoted != whole[0]:  # cut: at a word, and marked
            assert quoted.endswith("…") and whole[0][len(quoted) - 1] == " ", quoted
