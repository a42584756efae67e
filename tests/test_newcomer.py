"""What a newcomer trips on: typos answered with the names meant, lines that say which item they
are about, counts that agree, labels and bylines that fit where they are shown."""

from __future__ import annotations

import pytest
from conftest import db_snapshot

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
