"""Repositories as people have them: one repository with several checkouts (linked worktrees,
second clones), removed and registered again, renamed, imported before it is registered; git's
refusal of a checkout owned by another user."""

import json
import os
import subprocess

import pytest
from conftest import Checkout, git

import wctx


def _capture(run_cli, cwd, claim, *files, repo=None):
    argv = ["capture", "--finding", claim, "--json"]
    for f in files:
        argv += ["--file", f]
    if repo:
        argv += ["--repo", repo]
    res = run_cli(argv, cwd=cwd)
    assert res.code == 0, res
    return res.json["evidence"][0]["id"]


def _verify(run_cli, eid, cwd=None):
    res = run_cli(["verify", eid, "--json"], cwd=cwd)
    assert res.err == "", res
    (item,) = res.json["items"]
    return item


def _found(run_cli, query, cwd):
    res = run_cli(["search", query, "--json"], cwd=cwd)
    assert res.code == 0, res
    return {r["id"]: r for r in res.json["results"]}, res.json


def _one_line_error(res, code):
    assert res.code == code, res
    assert res.err.startswith("wctx: ") and res.err.count("\n") == 1, res
    assert "Traceback" not in res.err and res.out == ""


# ----------------------------------------------------------------------------------------------
# One repository, many checkouts
# ----------------------------------------------------------------------------------------------


def test_linked_worktree_is_a_checkout_sharing_evidence_both_ways(product, run_cli, tmp_path):
    sdk = product.sdk
    wt_path = str(tmp_path / "sdk-feature")
    sdk.git("worktree", "add", "-q", "-b", "feature", wt_path)
    wt = Checkout(os.path.realpath(wt_path))
    wt.write("src/client.py", wt.read("src/client.py").replace("min(attempts, 3)", "min(attempts, 5)"))
    feature_head = wt.commit("retry five times on the feature branch")

    # Captured in the worktree without registering it: it is upload-sdk, stamped with the
    # worktree's own commit, branch and file content.
    on_feature = _capture(run_cli, wt.path, "retry_policy allows five attempts", "src/client.py#retry_policy")
    item = wctx.get_evidence(product.store, on_feature)
    assert item["repo"] == "upload-sdk"
    file_anchor = [a for a in item["anchors"] if a["path"] == "src/client.py"][0]
    assert (file_anchor["commit"], file_anchor["branch"]) == (feature_head, "feature")
    assert file_anchor["blob"] == wt.blob("src/client.py") != sdk.blob("src/client.py")

    on_main = _capture(
        run_cli, sdk.path, "formatSize rounds to one decimal", "src/upload/upload.ts#formatSize"
    )
    main_anchor = [a for a in wctx.get_evidence(product.store, on_main)["anchors"] if a["path"]][0]
    assert (main_anchor["commit"], main_anchor["branch"]) == (sdk.head, "main")

    # Search from either checkout has upload-sdk's scope and finds both items; so does docs-ui.
    for cwd in (wt.path, sdk.path, product.ui.path):
        hits, res = _found(run_cli, "retry_policy attempts formatSize rounds", cwd)
        assert {on_feature, on_main} <= set(hits), (cwd, res)
        assert all(h["freshness"]["verdict"] == "current" for h in hits.values()), res
    hits, res = _found(run_cli, "retry_policy", wt.path)
    assert res["searched"][0] == "upload-sdk" and "other" not in res["searched"]

    # Each item is judged in the checkout that recorded it, and verify says which one.
    for cwd in (sdk.path, wt.path):
        feature = _verify(run_cli, on_feature, cwd)
        assert feature["verdict"] == "current", feature
        assert feature["anchors"][0]["checkout"] == wt.path
        assert "(in checkout %s)" % wt.path in feature["reasons"][0]
        main = _verify(run_cli, on_main, cwd)
        assert main["verdict"] == "current", main
        assert main["anchors"][0]["checkout"] == os.path.realpath(sdk.path)

    # A change in the worktree makes its item stale; the main checkout's item is untouched.
    wt.write("src/client.py", wt.read("src/client.py").replace("min(attempts, 5)", "max(attempts, 5)"))
    assert _verify(run_cli, on_feature, sdk.path)["verdict"] == "stale"
    hits, _ = _found(run_cli, "retry_policy attempts", product.ui.path)
    assert hits[on_feature]["freshness"]["verdict"] == "stale"
    assert _verify(run_cli, on_main, wt.path)["verdict"] == "current"

    listed = run_cli(["repo", "list", "--json"]).json["repos"]
    (entry,) = [r for r in listed if r["name"] == "upload-sdk"]
    assert [(c["kind"], c["path"]) for c in entry["checkouts"]] == [
        ("registered", os.path.realpath(sdk.path)),
        ("worktree", wt.path),
    ]
    assert "worktree %s" % wt.path in run_cli(["repo", "list"]).out
    # Registering the worktree explicitly says what it is and creates no second repository.
    added = run_cli(["repo", "add", wt.path, "--json"])
    assert added.code == 0 and added.json["checkout"] is True, added
    assert "a checkout of upload-sdk (a linked worktree of it)" in added.json["message"]
    assert [r["name"] for r in wctx.list_repos(product.store)] == [
        "api-gateway",
        "docs-ui",
        "other",
        "upload-sdk",
    ]


def test_second_clone_is_a_checkout_and_verify_uses_the_one_holding_the_commit(product, run_cli, tmp_path):
    sdk = product.sdk
    clone_path = str(tmp_path / "elsewhere" / "sdk-clone")
    git(str(tmp_path), "clone", "-q", sdk.path, clone_path)
    clone = Checkout(os.path.realpath(clone_path))
    git(clone.path, "checkout", "-q", "-b", "local-work")
    clone.write("src/client.py", clone.read("src/client.py") + "\n\ndef backoff(n):\n    return 2 ** n\n")
    clone_head = clone.commit("backoff, only in the clone")

    added = run_cli(["repo", "add", clone.path, "--json"])
    assert added.code == 0, added
    assert added.json["checkout"] is True and added.json["repo"]["name"] == "upload-sdk"
    assert "same root commit and remote" in added.json["message"]

    in_clone = _capture(run_cli, clone.path, "backoff doubles each time", "src/client.py#backoff")
    anchor = [a for a in wctx.get_evidence(product.store, in_clone)["anchors"] if a["path"]][0]
    assert anchor["commit"] == clone_head and anchor["branch"] == "local-work"
    assert sdk.git("cat-file", "-t", clone_head, check=False).strip() != "commit"  # not in the main checkout

    in_main = _capture(
        run_cli, sdk.path, "formatSize rounds to one decimal", "src/upload/upload.ts#formatSize"
    )
    for cwd in (clone.path, sdk.path):
        hits, res = _found(run_cli, "backoff doubles formatSize rounds", cwd)
        assert {in_clone, in_main} <= set(hits), res
        assert {hits[in_clone]["freshness"]["verdict"], hits[in_main]["freshness"]["verdict"]} == {"current"}

    # Verify uses the checkout that holds the recorded commit, whatever the caller's checkout.
    judged = _verify(run_cli, in_clone, sdk.path)
    assert judged["verdict"] == "current" and judged["anchors"][0]["checkout"] == clone.path, judged
    # The recorded checkout gone from the record (an item a teammate captured in their own clone):
    # the commit still decides which checkout judges.
    product.store.db.execute("UPDATE anchors SET checkout = NULL")
    judged = _verify(run_cli, in_clone, sdk.path)
    assert judged["verdict"] == "current" and judged["anchors"][0]["checkout"] == clone.path, judged
    clone.write("src/client.py", clone.read("src/client.py").replace("2 ** n", "3 ** n"))
    assert _verify(run_cli, in_clone, sdk.path)["verdict"] == "stale"
    assert _verify(run_cli, in_main, clone.path)["verdict"] == "current"

    # Removing the clone as a checkout keeps the repository and its evidence.
    removed = run_cli(["repo", "remove", clone.path, "--json"])
    assert removed.code == 0 and "removed checkout %s of upload-sdk" % clone.path in removed.json["message"]
    assert "upload-sdk" in [r["name"] for r in wctx.list_repos(product.store)]


def test_a_fork_with_another_remote_stays_apart_unless_told(product, git_repo, run_cli, tmp_path):
    sdk = product.sdk
    fork = Checkout(os.path.realpath(str(tmp_path / "fork")))
    git(str(tmp_path), "clone", "-q", sdk.path, fork.path)
    fork.git("remote", "set-url", "origin", "https://example.invalid/someone/fork.git")
    added = run_cli(["repo", "add", fork.path, "--json"])
    assert added.code == 0 and added.json["created"] is True and added.json["repo"]["name"] == "fork", added
    run_cli(["repo", "remove", "fork"])
    same = run_cli(["repo", "add", fork.path, "--same-as", "upload-sdk", "--json"])
    assert same.code == 0 and same.json["checkout"] is True, same
    # --same-as a repository with other history is refused and changes nothing.
    stranger = git_repo("stranger", {"x.py": "x = 1\n"})
    other = run_cli(["repo", "add", stranger.path, "--same-as", "upload-sdk"])
    _one_line_error(other, 2)
    assert "root commit" in other.err


def test_second_clones_of_one_remote_meet_whatever_the_url_spelling(product, run_cli, tmp_path):
    sdk = product.sdk
    sdk.git("remote", "add", "origin", "git@github.com:acme/upload-sdk.git")
    clone = Checkout(os.path.realpath(str(tmp_path / "c2")))
    git(str(tmp_path), "clone", "-q", sdk.path, clone.path)
    clone.git("remote", "set-url", "origin", "https://github.com/acme/upload-sdk")
    added = run_cli(["repo", "add", clone.path, "--json"])
    assert added.json["checkout"] is True, added


# ----------------------------------------------------------------------------------------------
# Git refusing a checkout owned by another user
# ----------------------------------------------------------------------------------------------


def test_dubious_ownership_is_reported_with_gits_own_fix(git_repo, run_cli, tmp_path, monkeypatch):
    if os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            pytest.fail("this test needs root to give a checkout to another user (chown)")
        pytest.skip("needs root to chown a checkout to another user")
    repo = git_repo("theirs", {"a.py": "x = 1\n"})
    # No safe.directory exception from the machine's own git configuration.
    empty = tmp_path / "gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    subprocess.run(["chown", "-R", "54321:54321", repo.path], check=True)
    res = run_cli(["repo", "add", repo.path])
    _one_line_error(res, 2)
    real = os.path.realpath(repo.path)
    assert "owned by another user" in res.err and "dubious ownership" in res.err, res
    assert "git config --global --add safe.directory %s" % real in res.err, res
    assert "not inside a git checkout" not in res.err
    assert run_cli(["repo", "list", "--json"]).json == {"repos": []}


def test_a_git_file_borrowing_a_registered_git_directory_is_not_a_checkout(product, run_cli, tmp_path):
    """Only a worktree git itself records (its git directory links back) is a checkout: a
    directory whose .git file merely points at upload-sdk's git directory gets nothing of it."""
    fake = tmp_path / "borrower"
    fake.mkdir()
    (fake / ".git").write_text("gitdir: %s\n" % os.path.join(product.sdk.path, ".git"))
    (fake / "src").mkdir()
    (fake / "src" / "client.py").write_text("def retry_policy(a):\n    return 0\n")
    res = run_cli(["capture", "--finding", "borrowed", "--file", "src/client.py"], cwd=str(fake))
    assert res.code != 0 and "not inside a registered repository" in res.err, res
    assert run_cli(["search", "retry", "--json"], cwd=str(fake)).code != 0


# ----------------------------------------------------------------------------------------------
# Nothing orphaned: remove and re-add, import before register
# ----------------------------------------------------------------------------------------------


def test_remove_and_re_add_under_a_new_name_restores_evidence_relations_and_workspaces(product, run_cli):
    eid = _capture(
        run_cli,
        product.ui.path,
        "formatSize rounds",
        "upload-sdk:src/upload/upload.ts#formatSize",
        repo="upload-sdk",
    )
    removed = run_cli(["repo", "remove", "upload-sdk", "--json"])
    assert removed.json["relations_kept"] == 2, removed
    assert wctx.list_relations(product.store) == []
    again = run_cli(["repo", "add", product.sdk.path, "--name", "sdk", "--json"])
    assert again.code == 0, again
    message = again.json["message"]
    assert "attached 1 waiting item" in message, message
    assert "restored relations: docs-ui uses sdk, sdk depends_on api-gateway" in message, message
    assert "back in workspace uploads" in message, message
    assert again.json["repo"]["workspaces"] == ["uploads"]
    item = wctx.get_evidence(product.store, eid)
    assert item["repo"] == "sdk" and item["freshness"]["verdict"] == "current"
    hits, res = _found(run_cli, "formatSize rounds", product.ui.path)
    assert eid in hits and "sdk" in res["searched"], res
    # Rename carries everything along too.
    assert run_cli(["repo", "rename", "sdk", "upload-sdk"]).code == 0
    assert {(r["from"], r["to"]) for r in wctx.list_relations(product.store)} == {
        ("docs-ui", "upload-sdk"),
        ("upload-sdk", "api-gateway"),
    }
    assert wctx.get_evidence(product.store, eid)["repo"] == "upload-sdk"
    _one_line_error(run_cli(["repo", "rename", "upload-sdk", "docs-ui"]), 2)


def test_import_before_register_attaches_on_register(product, run_cli, tmp_path, git_repo):
    eid = _capture(run_cli, product.sdk.path, "uploads retry twice on 419", "src/client.py#retry_policy")
    team = str(tmp_path / "team")
    assert run_cli(["export", "--dir", team]).code == 0
    # A teammate's machine: nothing registered yet, then a clone of upload-sdk under another name.
    other_home = str(tmp_path / "teammate")
    clone = Checkout(os.path.realpath(str(tmp_path / "mine" / "clone-of-sdk")))
    git(str(tmp_path), "clone", "-q", product.sdk.path, clone.path)
    imported = run_cli(["--home", other_home, "import-evidence", team, "--json"])
    assert imported.code == 0, imported
    again = run_cli(["--home", other_home, "import-evidence", team, "--json"])
    assert again.code == 0
    added = run_cli(["--home", other_home, "repo", "add", clone.path, "--json"])
    assert added.code == 0 and "attached 1 waiting item" in added.json["message"], added
    res = run_cli(["--home", other_home, "search", "retry 419", "--json"], cwd=clone.path)
    assert [r["id"] for r in res.json["results"]] == [eid], res
    assert res.json["results"][0]["freshness"]["verdict"] == "current"


def test_topology_travels_so_a_teammates_import_recreates_it(product, run_cli, tmp_path):
    eid = _capture(run_cli, product.sdk.path, "uploads retry twice on 419", "src/client.py#retry_policy")
    team = str(tmp_path / "team")
    exported = run_cli(["export", "--dir", team, "--json"])
    assert exported.code == 0 and exported.json["topology"] > 0, exported
    (topo,) = [n for n in os.listdir(team) if n.startswith("topology-")]
    with open(os.path.join(team, topo), encoding="utf-8") as fh:
        text = fh.read()
    assert str(tmp_path) not in text  # identities, never a local path
    other = str(tmp_path / "teammate")
    # The teammate has upload-sdk and docs-ui (under another name), not api-gateway yet.
    clones = {}
    for repo, name in ((product.sdk, "upload-sdk"), (product.ui, "ui")):
        clones[name] = os.path.realpath(str(tmp_path / "mine" / name))
        git(str(tmp_path), "clone", "-q", repo.path, clones[name])
        assert run_cli(["--home", other, "repo", "add", clones[name], "--name", name]).code == 0
    imported = run_cli(["--home", other, "import-evidence", team, "--json"])
    assert imported.code == 0, imported
    assert imported.json["relations"] == 1 and imported.json["waiting"] >= 1, imported.json
    rels = run_cli(["--home", other, "relations", "--json"]).json["relations"]
    assert [(r["from"], r["kind"], r["to"]) for r in rels] == [("ui", "uses", "upload-sdk")]
    ws = run_cli(["--home", other, "workspace", "show", "uploads", "--json"]).json
    assert sorted(r["name"] for r in ws["repos"]) == ["ui", "upload-sdk"]
    # Search from the consumer reaches the SDK's evidence through the imported relation.
    hits = run_cli(["--home", other, "search", "retry 419", "--json"], cwd=clones["ui"]).json["results"]
    assert [h["id"] for h in hits] == [eid]
    # api-gateway registered later: its relation and workspace come back on their own.
    gw = os.path.realpath(str(tmp_path / "mine" / "gw"))
    git(str(tmp_path), "clone", "-q", product.gateway.path, gw)
    added = run_cli(["--home", other, "repo", "add", gw, "--name", "gateway", "--json"])
    assert "restored relation: upload-sdk depends_on gateway" in added.json["message"], added
    assert "back in workspace uploads" in added.json["message"]
    again = run_cli(["--home", other, "import-evidence", team, "--json"])
    assert again.json["relations"] == 0 and again.json["waiting"] == 0, again.json


def test_bad_topology_records_are_refused_and_change_nothing(product, run_cli, tmp_path):
    from conftest import db_snapshot

    bad = tmp_path / "bad.jsonl"
    before = db_snapshot(product.store.home)
    for record in (
        {"type": "relation", "id": "r1", "from": "a", "kind": "eats", "to": "b"},
        {"type": "relation", "id": "r1", "from": "-x", "kind": "uses", "to": "b"},
        {"type": "relation", "id": "r1", "from": "a", "from_root": "--all", "kind": "uses", "to": "b"},
        {"type": "workspace", "id": "w", "name": "w", "repos": [{"repo": "../x"}]},
        {"type": "repository", "id": "x", "name": "ok", "root_commit": "HEAD"},
    ):
        bad.write_text(json.dumps(record) + "\n")
        res = run_cli(["import-evidence", str(bad)])
        _one_line_error(res, 2)
        assert "bad.jsonl:1" in res.err, res
    assert db_snapshot(product.store.home) == before


def test_doctor_in_a_worktree_knows_its_repository(product, run_cli, tmp_path):
    wt = str(tmp_path / "sdk-wt")
    product.sdk.git("worktree", "add", "-q", "-b", "wt", wt)
    res = run_cli(["doctor", "--json"], cwd=wt)
    (check,) = [c for c in res.json["checks"] if c["name"] == "current repository"]
    assert check["status"] == "ok" and check["detail"].startswith("upload-sdk ("), check
