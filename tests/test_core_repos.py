"""Repositories, workspaces and relations: registration by real path, unique names, root commits,
removal that keeps evidence, and relation traversal with the direction in every reason."""

from __future__ import annotations

import os

import pytest
from conftest import db_snapshot

import wctx


def one_line_error(res, code):
    assert res.code == code, res
    assert res.err.startswith("wctx: ") and res.err.count("\n") == 1, res
    assert "Traceback" not in res.err


# ----------------------------------------------------------------------------------------------
# Registration
# ----------------------------------------------------------------------------------------------


def test_register_records_real_path_root_commit_and_workspace(git_repo, run_cli):
    repo = git_repo("upload-sdk", {"a.py": "x = 1\n"})
    root = repo.head
    repo.write("b.py", "y = 2\n")
    repo.commit("second")
    res = run_cli(["repo", "add", repo.path, "--workspace", "uploads", "--json"])
    assert res.code == 0, res
    out = res.json
    assert out["created"] is True
    assert out["repo"]["name"] == "upload-sdk"
    assert out["repo"]["path"] == os.path.realpath(repo.path)
    assert out["repo"]["root_commit"] == root
    assert out["repo"]["workspaces"] == ["uploads"]
    listed = run_cli(["repo", "list", "--json"]).json["repos"]
    assert [(r["name"], r["root_commit"], r["exists"]) for r in listed] == [("upload-sdk", root, True)]
    assert run_cli(["workspace", "list", "--json"]).json == {
        "workspaces": [{"name": "uploads", "repos": ["upload-sdk"]}]
    }


def test_symlink_and_subdirectory_resolve_to_the_same_repo(git_repo, run_cli, tmp_path):
    repo = git_repo("upload-sdk", {"src/deep/a.py": "x = 1\n"})
    alias = tmp_path / "alias-of-sdk"
    os.symlink(repo.path, str(alias))
    first = run_cli(["repo", "add", repo.path, "--json"])
    assert first.code == 0 and first.json["created"] is True
    for path in (str(alias), repo.file("src"), repo.file("src/deep"), str(alias / "src")):
        again = run_cli(["repo", "add", path])
        assert again.code == 0, again
        assert "already registered as upload-sdk" in again.out
    # A different requested name does not rename or duplicate it.
    renamed = run_cli(["repo", "add", str(alias), "--name", "other-name", "--json"])
    assert renamed.json["created"] is False and renamed.json["repo"]["name"] == "upload-sdk"
    assert "kept the name upload-sdk; rename with: wctx repo rename upload-sdk NEW" in renamed.json["message"]
    assert [r["name"] for r in run_cli(["repo", "list", "--json"]).json["repos"]] == ["upload-sdk"]


def test_registering_twice_can_add_a_workspace(git_repo, run_cli):
    repo = git_repo("upload-sdk", {"a.py": "x = 1\n"})
    run_cli(["repo", "add", repo.path, "--workspace", "one"])
    res = run_cli(["repo", "add", repo.path, "--workspace", "two", "--json"])
    assert res.json["created"] is False
    assert res.json["repo"]["workspaces"] == ["one", "two"]


def test_names_are_unique(git_repo, run_cli, tmp_path):
    first = git_repo("app", {"a.py": "x = 1\n"}, parent=tmp_path / "team-a")
    second = git_repo("app", {"b.py": "y = 1\n"}, parent=tmp_path / "team-b")
    assert run_cli(["repo", "add", first.path]).code == 0
    home = os.environ["WCTX_HOME"]
    before = db_snapshot(home)
    clash = run_cli(["repo", "add", second.path])
    one_line_error(clash, 2)
    assert "the name app is taken" in clash.err and "--name" in clash.err
    assert db_snapshot(home) == before
    ok = run_cli(["repo", "add", second.path, "--name", "app-b", "--json"])
    assert ok.code == 0 and ok.json["repo"]["name"] == "app-b"


@pytest.mark.parametrize("name", ["has space", "-dash", "a/b", "x" * 65, "..", "caf\u00e9"])
def test_bad_repo_names_are_refused(git_repo, run_cli, name):
    repo = git_repo("fine", {"a.py": "x = 1\n"})
    res = run_cli(["repo", "add", repo.path, "--name=" + name])
    one_line_error(res, 2)
    assert "is not valid" in res.err


def test_non_git_directory_and_missing_path_are_refused(run_cli, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    res = run_cli(["repo", "add", str(plain)])
    one_line_error(res, 2)
    assert "is not inside a git checkout" in res.err
    res = run_cli(["repo", "add", str(tmp_path / "missing")])
    one_line_error(res, 1)
    assert "no such directory" in res.err
    assert run_cli(["repo", "list", "--json"]).json == {"repos": []}


def test_repo_without_commits_registers_with_no_root_commit(git_repo, run_cli):
    repo = git_repo("empty", commit=False)
    res = run_cli(["repo", "add", repo.path, "--json"])
    assert res.code == 0, res
    assert res.json["repo"]["root_commit"] is None


def test_remove_keeps_evidence_and_re_adding_reattaches_it(product, run_cli):
    store = product.store
    cap = wctx.capture(
        store,
        [
            {
                "kind": "finding",
                "claim": "formatSize rounds to one decimal",
                "repo": "upload-sdk",
                "files": ["src/upload/upload.ts#formatSize"],
            }
        ],
        cwd=product.ui.path,
    )
    eid = cap["evidence"][0]["id"]
    removed = run_cli(["repo", "remove", "upload-sdk", "--json"])
    assert removed.code == 0, removed
    assert removed.json["evidence_kept"] == 1
    assert removed.json["relations_kept"] == 2
    assert "1 evidence item and 2 relations kept dormant" in removed.json["message"]
    assert [r["name"] for r in wctx.list_repos(store)] == ["api-gateway", "docs-ui", "other"]
    # The item still exists and says honestly that its repository is not registered here.
    shown = run_cli(["show", eid, "--json"])
    assert shown.code == 0, shown
    assert shown.json["freshness"]["verdict"] == "unknown"
    assert any("not registered" in r for r in shown.json["freshness"]["reasons"])
    # Removed repos are no longer searched from their old neighbours.
    assert wctx.search(store, "formatSize", repo="docs-ui")["results"] == []

    readd = run_cli(["repo", "add", product.sdk.path, "--workspace", "uploads", "--json"])
    assert readd.code == 0 and readd.json["created"] is True
    assert (
        "restored relations: docs-ui uses upload-sdk, upload-sdk depends_on api-gateway"
        in readd.json["message"]
    )
    assert [r["id"] for r in wctx.search(store, "formatSize", repo="docs-ui")["results"]] == [eid]
    found = wctx.search(store, "formatSize", repo="upload-sdk")["results"]
    assert [r["id"] for r in found] == [eid]
    assert found[0]["freshness"]["verdict"] == "current"
    assert wctx.get_evidence(store, eid)["freshness"]["verdict"] == "current"


def test_remove_unknown_repo(product, run_cli):
    before = db_snapshot(product.store.home)
    res = run_cli(["repo", "remove", "nope"])
    one_line_error(res, 1)
    assert "unknown repository 'nope'" in res.err
    assert db_snapshot(product.store.home) == before


# ----------------------------------------------------------------------------------------------
# Relations
# ----------------------------------------------------------------------------------------------


def test_relate_and_list_relations(product, run_cli):
    res = run_cli(["relate", "api-gateway", "provides_api", "docs-ui", "--note", "REST", "--json"])
    assert res.code == 0, res
    assert res.json["created"] is True
    again = run_cli(["relate", "api-gateway", "provides_api", "docs-ui"])
    assert again.code == 0 and "already recorded" in again.out
    rels = run_cli(["relations", "--json"]).json["relations"]
    assert {"from": "api-gateway", "kind": "provides_api", "to": "docs-ui", "note": "REST"} in rels
    assert {"from": "docs-ui", "kind": "uses", "to": "upload-sdk", "note": None} in rels
    assert len(rels) == 3


@pytest.mark.parametrize(
    "argv,code,message",
    [
        (["relate", "docs-ui", "loves", "upload-sdk"], 2, "unknown relation kind 'loves'"),
        (["relate", "docs-ui", "uses", "nope"], 1, "unknown repository 'nope'"),
        (["relate", "nope", "uses", "docs-ui"], 1, "unknown repository 'nope'"),
        (["relate", "docs-ui", "uses", "docs-ui"], 2, "cannot relate to itself"),
    ],
)
def test_bad_relations_are_refused_and_nothing_is_written(product, run_cli, argv, code, message):
    before = db_snapshot(product.store.home)
    res = run_cli(argv)
    one_line_error(res, code)
    assert message in res.err
    assert db_snapshot(product.store.home) == before


def _capture(store, repo, claim, cwd, files=()):
    return wctx.capture(
        store, [{"kind": "finding", "claim": claim, "repo": repo, "files": list(files)}], cwd=cwd
    )["evidence"][0]["id"]


def _reasons(result, eid):
    hits = [r for r in result["results"] if r["id"] == eid]
    assert hits, "expected %s among %s" % (eid, [r["id"] for r in result["results"]])
    return hits[0]["reasons"]


def test_traversal_goes_both_ways_and_says_which_way(product):
    store = product.store
    in_ui = _capture(store, "docs-ui", "the button double submits uploads", product.ui.path)
    in_sdk = _capture(store, "upload-sdk", "uploads time out after thirty seconds", product.sdk.path)
    from_sdk = wctx.search(store, "uploads", cwd=product.sdk.path)
    assert "docs-ui uses upload-sdk (direct consumer)" in _reasons(from_sdk, in_ui)
    assert "same repository" in _reasons(from_sdk, in_sdk)
    from_ui = wctx.search(store, "uploads", cwd=product.ui.path)
    assert "docs-ui uses upload-sdk (upstream dependency)" in _reasons(from_ui, in_sdk)
    # Same repo outranks the related one when both match equally.
    assert [r["id"] for r in from_ui["results"]][:1] == [in_ui]


def test_two_hops_name_the_repo_in_between(product):
    store = product.store
    in_gateway = _capture(
        store, "api-gateway", "gateway answers 419 when the session expired", product.gateway.path
    )
    in_ui = _capture(store, "docs-ui", "the UI shows 419 as a generic error", product.ui.path)
    from_ui = wctx.search(store, "419", cwd=product.ui.path)
    assert "2 hops via upload-sdk" in _reasons(from_ui, in_gateway)
    from_gateway = wctx.search(store, "419", cwd=product.gateway.path)
    assert "2 hops via upload-sdk" in _reasons(from_gateway, in_ui)
    from_sdk = wctx.search(store, "419", cwd=product.sdk.path)
    assert "upload-sdk depends on api-gateway (upstream dependency)" in _reasons(from_sdk, in_gateway)


def test_same_workspace_without_relation(product, git_repo):
    store = product.store
    site = git_repo("docs-site", {"index.md": "# docs\n"})
    wctx.register_repo(store, site.path, workspace="uploads")
    in_site = _capture(store, "docs-site", "the upload guide is outdated", site.path)
    res = wctx.search(store, "upload guide", cwd=product.sdk.path)
    assert "same workspace uploads" in _reasons(res, in_site)
    assert "docs-site" in res["searched"]


def test_provider_relation_labels(product):
    store = product.store
    wctx.relate(store, "api-gateway", "provides_api", "docs-ui")
    in_gateway = _capture(store, "api-gateway", "the upload endpoint is rate limited", product.gateway.path)
    in_ui = _capture(store, "docs-ui", "the upload form retries on rate limits", product.ui.path)
    from_ui = wctx.search(store, "rate limited", cwd=product.ui.path)
    assert "api-gateway provides api docs-ui (upstream provider)" in _reasons(from_ui, in_gateway)
    from_gateway = wctx.search(store, "rate limited", cwd=product.gateway.path)
    assert "api-gateway provides api docs-ui (direct consumer)" in _reasons(from_gateway, in_ui)


def test_unrelated_workspace_gives_zero_results_and_all_widens(product, run_cli):
    store = product.store
    in_other = _capture(store, "other", "uploads in the other product are synchronous", product.other.path)
    in_sdk = _capture(store, "upload-sdk", "uploads are asynchronous", product.sdk.path)
    # From the other product: nothing of the uploads workspace, and vice versa.
    res = run_cli(["search", "uploads", "asynchronous", "--json"], cwd=product.other.path)
    assert res.code == 0, res
    assert [r["id"] for r in res.json["results"]] == [in_other]
    assert res.json["searched"] == ["other"]
    for origin in (product.sdk, product.ui, product.gateway):
        res = run_cli(["search", "synchronous uploads other product", "--json"], cwd=origin.path)
        assert in_other not in [r["id"] for r in res.json["results"]]
        assert "other" not in res.json["searched"]
    # --all widens on purpose and says so.
    wide = run_cli(["search", "uploads", "--all", "--json"], cwd=product.sdk.path)
    assert {r["id"] for r in wide.json["results"]} == {in_other, in_sdk}
    assert "outside the caller's workspaces (--all)" in _reasons(wide.json, in_other)
    assert sorted(wide.json["searched"]) == ["api-gateway", "docs-ui", "other", "upload-sdk"]


def test_search_from_outside_any_repo_needs_a_repo(product, run_cli, tmp_path):
    res = run_cli(["search", "uploads"], cwd=str(tmp_path))
    one_line_error(res, 1)
    assert "not inside a registered repository" in res.err
    assert run_cli(["search", "uploads", "--repo", "upload-sdk", "--json"], cwd=str(tmp_path)).code == 0
    assert run_cli(["search", "uploads", "--all", "--json"], cwd=str(tmp_path)).code == 0


def test_related_repositories_and_workspace_show(product, run_cli):
    rel = wctx.related_repositories(product.store, "upload-sdk")
    got = {(r["repo"], r["kind"], r["direction"], r["label"]) for r in rel["relations"]}
    assert got == {
        ("docs-ui", "uses", "incoming", "docs-ui uses upload-sdk (direct consumer)"),
        ("api-gateway", "depends_on", "outgoing", "upload-sdk depends on api-gateway (upstream dependency)"),
    }
    show = run_cli(["workspace", "show", "uploads", "--json"])
    assert show.code == 0, show
    assert [r["name"] for r in show.json["repos"]] == ["api-gateway", "docs-ui", "upload-sdk"]
    missing = run_cli(["workspace", "show", "nope"])
    one_line_error(missing, 1)
    assert "unknown workspace 'nope'" in missing.err


def test_another_project_registered_under_a_removed_name_does_not_inherit_its_evidence(
    product, git_repo, tmp_path
):
    store = product.store
    eid = _capture(
        store,
        "upload-sdk",
        "formatSize rounds to one decimal",
        product.ui.path,
        files=["src/upload/upload.ts#formatSize"],
    )
    wctx.remove_repo(store, "upload-sdk")
    impostor = git_repo(
        "upload-sdk", {"src/upload/upload.ts": "// a different project\n"}, parent=tmp_path / "elsewhere"
    )
    assert impostor.head != product.sdk.head
    wctx.register_repo(store, impostor.path, workspace="uploads")
    assert wctx.search(store, "formatSize rounds", repo="upload-sdk")["results"] == []
    item = wctx.get_evidence(store, eid)
    assert item["freshness"]["verdict"] == "unknown"
    # The real checkout, registered again, gets its evidence back.
    wctx.remove_repo(store, "upload-sdk")
    wctx.register_repo(store, product.sdk.path, workspace="uploads")
    hits = wctx.search(store, "formatSize rounds", repo="upload-sdk")["results"]
    assert [(h["id"], h["freshness"]["verdict"]) for h in hits] == [(eid, "current")]


def test_a_repo_alone_in_its_workspace_sees_nothing_of_the_others(product, git_repo, run_cli):
    store = product.store
    lonely = git_repo("lonely", {"x.py": "x = 1\n"})
    wctx.register_repo(store, lonely.path, workspace="solo")
    _capture(store, "upload-sdk", "uploads retry twice on 419", product.sdk.path)
    _capture(store, "other", "uploads in the other product", product.other.path)
    for query in ("uploads retry 419", "has anyone looked at this?", ""):
        res = run_cli(["search", query, "--json"], cwd=lonely.path)
        assert res.code == 0, res
        assert res.json["results"] == [] and res.json["searched"] == ["lonely"], query
    assert run_cli(["verify", "--json"], cwd=lonely.path).json["items"] == []
    wide = run_cli(["search", "uploads retry 419", "--all", "--json"], cwd=lonely.path).json
    assert "uploads retry twice on 419" in [r["claim"] for r in wide["results"]]
