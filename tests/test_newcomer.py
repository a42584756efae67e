"""What a newcomer trips on: typos answered with the names meant, lines that say which item they
are about, counts that agree, labels and bylines that fit where they are shown."""

from __future__ import annotations

import os
import sys

import pytest
from browser import Browser, find_chromium
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


def test_the_freshness_audit_counts_and_names_every_item(family, run_cli, wctx_home):
    lib, app = family
    ids = _two_cited_one_not(lib, run_cli)
    with running(wctx_home, lib.path) as server:
        server.initialize()
        result = server.call("workspace_overview", {"verify": True})
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


# -- a search narrowed to one kind counts its candidates exactly ---------------------------------


def test_a_search_narrowed_to_one_kind_counts_exactly(family, run_cli, wctx_home):
    lib, app = family
    store = wctx.open_store(wctx_home)
    try:
        kinds = ["note", "finding", "decision", "note"]  # 600 notes among 1,200 items, all matching
        items = [
            {"kind": kinds[n % 4], "claim": "queue backpressure seen under load %d" % n, "repo": "webkit"}
            for n in range(1200)
        ]
        for start in range(0, len(items), 100):
            wctx.capture(store, items[start : start + 100], cwd=lib.path)
    finally:
        store.close()
    res = run_cli(["search", "queue", "backpressure", "--kind", "note", "--json"], cwd=lib.path)
    assert res.code == 0, res
    assert (res.json["candidates"], res.json["candidates_exact"]) == (600, True)
    text = run_cli(["search", "queue", "backpressure", "--kind", "note"], cwd=lib.path).out
    assert " from 600 candidates" in text, text
    with running(wctx_home, lib.path) as server:
        server.initialize()
        found = server.call("search_evidence", {"query": "queue backpressure", "kinds": ["note"]})
        assert found["structuredContent"]["candidates"] == 600, found["structuredContent"]
        assert found["structuredContent"].get("candidates_exact", True) is True
        assert "of 600 matching" in found["content"][0]["text"]


# -- agents by the names people type; hooks install says when nobody is set to record as ---------


def _no_identity(monkeypatch, tmp_path):
    monkeypatch.delenv("WCTX_AUTHOR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "nobody"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


@pytest.mark.parametrize(
    "typed, canonical", [("gemini", "gemini-cli"), ("claude", "claude-code"), ("Codex", "codex")]
)
def test_agents_are_accepted_by_the_names_people_type(typed, canonical, run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    res = run_cli(["hooks", "install", typed, "--dry-run", "--json"])
    assert res.code == 0, res
    assert res.json["agent"] == canonical if "agent" in res.json else canonical in res.out
    transcript = tmp_path / "empty.jsonl"
    transcript.write_text("")
    res = run_cli(["import", str(transcript), "--agent", typed])
    assert "invalid choice" not in res.err, res


def test_hooks_install_warns_when_nobody_is_set_to_record_as(run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    _no_identity(monkeypatch, tmp_path)
    assert "unknown author" in run_cli(["hooks", "install", "claude-code", "--dry-run"]).err  # no store yet
    assert run_cli(["init"]).code == 0
    res = run_cli(["hooks", "install", "claude-code", "--dry-run"])
    assert res.code == 0, res
    doctor = run_cli(["doctor", "--json"])
    (identity,) = [c for c in doctor.json["checks"] if c["name"] == "identity"]
    assert identity["detail"] in res.err and identity["fix"] in res.err, res.err
    assert run_cli(["whoami", "--set", "Grace Hopper <grace@example.com>"]).code == 0
    assert "unknown author" not in run_cli(["hooks", "install", "claude-code", "--dry-run"]).err


# -- --author by a word of the name; a lone repository's search says how to reach the others ------


def test_author_matches_a_word_of_the_name_or_email(family, run_cli, monkeypatch):
    lib, app = family
    for who, claim in (("Bob Berg <bob.berg@example.com>", "router caches compiled paths"),
                       ("Alice Ames <alice@example.com>", "router sorts routes by length")):  # fmt: skip
        monkeypatch.setenv("WCTX_AUTHOR", who)
        assert run_cli(["capture", "--finding", claim], cwd=lib.path).code == 0
    for typed in ("bob", "BERG", "bob.berg"):
        res = run_cli(["search", "router", "--author", typed, "--json"], cwd=lib.path)
        assert res.code == 0, res
        assert [r["claim"] for r in res.json["results"]] == ["router caches compiled paths"], typed


def test_a_search_from_a_lone_repository_points_to_all(family, git_repo, store, run_cli):
    lib, app = family
    lone = git_repo("scratchpad", {"notes.py": "x = 1\n"})
    wctx.register_repo(store, lone.path, workspace="attic")
    assert run_cli(["capture", "--finding", "router caches compiled paths"], cwd=lib.path).code == 0
    res = run_cli(["search", "router", "caches"], cwd=lone.path)
    assert res.code == 0, res
    assert "--all" in res.out, res.out
    assert (
        "router caches compiled paths" in run_cli(["search", "router", "caches", "--all"], cwd=lone.path).out
    )


# -- the briefing's code references: the item's own repository, and no match on common names -----

SERVER_PY = """class Server:
    def __call__(self, scope):
        return scope

    def close(self):
        return None

    def serve_forever(self):
        return None
"""


def test_code_references_label_the_items_repository_and_skip_common_names(family, git_repo, store, run_cli):
    lib, app = family
    srv = git_repo("webserve", {"webserve/server.py": SERVER_PY})
    wctx.register_repo(store, srv.path, workspace="site")
    wctx.relate(store, "webapp", "uses", "webserve")
    ids = {}
    for key, about, cwd, spec in (
        (
            "routes",
            "webserve",
            srv.path,
            "webkit:webkit/routing.py#Router.add_route",
        ),  # about one repo, citing another
        ("forever", "webserve", srv.path, "webserve/server.py#Server.serve_forever"),
        ("call", "webserve", srv.path, "webserve/server.py#Server.__call__"),
        ("close", "webserve", srv.path, "webserve/server.py#Server.close"),
        ("own", "webkit", lib.path, "webkit/routing.py#request_response"),
    ):
        res = run_cli(
            ["capture", "--finding", "%s matters" % key, "--repo", about, "--file", spec, "--json"], cwd=cwd
        )
        assert res.code == 0, res
        ids[key] = res.json["evidence"][0]["id"]
    app.write(
        "webapp/main.py",
        APP_PY
        + "from webserve.server import Server\n\n\n"
        + "def request_response(func):\n    return func\n\n\n"
        + "def run(handle):\n    server = Server()\n    server.serve_forever()\n    handle.close()\n"
        + "    server(None)\n    server.__call__(None)\n    Router().add_route('/', run)\n",
    )
    res = wctx.brief(store, cwd=app.path)
    refs = next(s for s in res["sections"] if s["key"] == "code_references")["items"]
    assert {i["id"] for i in refs} == {ids["routes"], ids["forever"]}, [i["reasons"][0] for i in refs]
    routes = next(i for i in refs if i["id"] == ids["routes"])
    assert (
        "; webserve finding %s cites webkit:webkit/routing.py#Router.add_route" % ids["routes"]
        in routes["reasons"][0]
    )


# -- the report's graph: no edge through another repository's box, no label under one -----------

GEOMETRY = """(function () {
  function inside(p, r, pad) {
    return p.x > r.x - pad && p.x < r.x + r.width + pad && p.y > r.y - pad && p.y < r.y + r.height + pad;
  }
  function meets(a, b) {
    return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
  }
  var boxes = {};
  document.querySelectorAll('#graph .node').forEach(function (n) {
    boxes[n.getAttribute('data-repo')] = n.querySelector('rect').getBBox();
  });
  var faults = [];
  document.querySelectorAll('#graph .edge').forEach(function (e) {
    var path = e.querySelector('path'), total = path.getTotalLength();
    var from = e.getAttribute('data-from'), to = e.getAttribute('data-to');
    for (var i = 0; i <= 200; i++) {
      var p = path.getPointAtLength(total * i / 200);
      Object.keys(boxes).forEach(function (name) {
        if (name !== from && name !== to && inside(p, boxes[name], -1)) faults.push(from + '->' + to + ' crosses ' + name);
      });
    }
  });
  var labels = Array.prototype.map.call(document.querySelectorAll('#graph .edge-label'), function (t) {
    return [t.getAttribute('data-from') + '->' + t.getAttribute('data-to'), t.getBBox()];
  });
  labels.forEach(function (l, i) {
    Object.keys(boxes).forEach(function (name) {
      if (meets(l[1], boxes[name])) faults.push('label of ' + l[0] + ' under ' + name);
    });
    labels.slice(i + 1).forEach(function (m) { if (meets(l[1], m[1])) faults.push('labels ' + l[0] + ' and ' + m[0]); });
  });
  return Array.from(new Set(faults)).sort();
})()"""


def test_report_graph_routes_edges_around_boxes_and_keeps_labels_clear(git_repo, store, run_cli, tmp_path):
    path = find_chromium()
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("headless Chromium is not installed (required under CI=true)")
        pytest.skip("headless Chromium is not installed")
    names = ["front", "frame", "server", "codec", "store"]
    for name in names:
        wctx.register_repo(store, git_repo(name, {"a.txt": name}).path, workspace="stack")
    # front -> frame -> server is a chain; front -> server skips the middle row, where frame
    # stands in the way of a straight line, as do codec and store on their own rows.
    for a, kind, b in (("front", "uses", "frame"), ("frame", "depends_on", "server"),
                       ("front", "uses", "server"), ("server", "calls", "codec"),
                       ("codec", "imports", "store"), ("front", "shares_schema_with", "store")):  # fmt: skip
        wctx.relate(store, a, kind, b)
    out = tmp_path / "report.html"
    assert run_cli(["report", "--html", "-o", str(out), "--workspace", "stack"]).code == 0
    with Browser(path) as browser:
        browser.open("file://" + str(out))
        assert browser.eval("document.querySelectorAll('#graph .edge').length") == 6
        assert browser.eval(GEOMETRY) == []


def test_a_mistyped_repository_name_offers_the_nearest(family, run_cli):
    lib, app = family
    res = run_cli(["search", "routes", "--repo", "webap"], cwd=lib.path)
    assert res.code == 1 and "unknown repository 'webap' (did you mean webapp?" in res.err, res
