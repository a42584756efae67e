"""Regressions: each test names the bug it keeps fixed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
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


def test_export_never_drops_what_the_shared_file_already_holds(product, tmp_path):
    team = str(tmp_path / "team")
    first = wctx.capture(product.store, [{"kind": "finding", "claim": "alpha one", "repo": "upload-sdk"}],
                         cwd=product.sdk.path)  # fmt: skip
    sid = first["session"]
    wctx.export_evidence(product.store, out_dir=team)
    other = wctx.open_store(str(tmp_path / "home-b"))
    try:
        wctx.register_repo(other, product.sdk.path)
        wctx.import_evidence(other, [team])
        # Store A learns more in the same session and exports; store B, behind, exports too.
        wctx.capture(product.store, [{"kind": "finding", "claim": "alpha two", "repo": "upload-sdk"}],
                     session_id=sid, cwd=product.sdk.path)  # fmt: skip
        wctx.export_evidence(product.store, out_dir=team)
        wctx.export_evidence(other, out_dir=team)
    finally:
        other.close()
    with open(os.path.join(team, sid + ".jsonl"), encoding="utf-8") as fh:
        claims = [json.loads(line).get("claim") for line in fh]
    assert "alpha one" in claims and "alpha two" in claims


def test_export_of_one_repository_keeps_the_other_items_of_a_mixed_session(product, tmp_path):
    team = str(tmp_path / "team")
    cap = wctx.capture(product.store, [{"kind": "note", "claim": "about the sdk", "repo": "upload-sdk"},
                                       {"kind": "note", "claim": "about the ui", "repo": "docs-ui"}],
                       cwd=product.ui.path)  # fmt: skip
    wctx.export_evidence(product.store, out_dir=team)
    wctx.export_evidence(product.store, out_dir=team, repo="upload-sdk")
    with open(os.path.join(team, cap["session"] + ".jsonl"), encoding="utf-8") as fh:
        claims = [json.loads(line).get("claim") for line in fh]
    assert "about the ui" in claims and "about the sdk" in claims


@pytest.mark.parametrize(
    "record",
    [
        {"type": "session", "format": "2", "id": "ses-0000000001"},
        {"type": "session", "id": "ses-0000000001", "cwd": {"a": 1}},
        {"type": "evidence", "id": "ev-0000000077", "session": "ses-0000000001", "repo": "sdk", "kind": "note",
         "claim": "x", "anchors": [{"repo": "sdk", "path": "a\u0000b.py"}]},
        {"type": "evidence", "id": "ev-0000000078", "session": "ses-0000000001", "repo": "sdk", "kind": "note",
         "claim": "x", "anchors": [{"repo": "sdk", "path": "a.py", "symbol": 5}]},
        {"type": "evidence", "id": "ev-0000000079", "session": "ses-0000000001", "repo": "sdk", "kind": "note",
         "claim": "x", "updated_at": 5},
    ],
)  # fmt: skip
def test_import_evidence_refuses_wrongly_typed_fields_in_one_line(record, run_cli, tmp_path):
    path = tmp_path / "bad.jsonl"
    session = {"type": "session", "id": "ses-0000000001"}
    path.write_text(json.dumps(session) + "\n" + json.dumps(record) + "\n")
    res = run_cli(["import-evidence", path])
    assert res.code == 2, res
    assert "Traceback" not in res.err and len(res.err.strip().splitlines()) == 1


def test_a_new_repository_without_commits_does_not_inherit_a_removed_ones_evidence(git_repo, store, tmp_path):
    a = git_repo("api", {"f": "1\n"}, parent=tmp_path / "projA")
    wctx.register_repo(store, a.path, workspace="A")
    wctx.capture(store, [{"kind": "finding", "claim": "internal plan of project A"}], cwd=a.path)
    wctx.remove_repo(store, "api")
    b = git_repo("api", commit=False, parent=tmp_path / "projB")
    wctx.register_repo(store, b.path, workspace="B")
    assert wctx.search(store, "plan", cwd=b.path)["results"] == []


def test_repeating_an_item_with_new_files_or_confidence_records_it(product):
    first = wctx.capture(product.store, [{"kind": "finding", "claim": "null check missing", "repo": "upload-sdk",
                                          "files": ["src/client.py#connect"]}], cwd=product.sdk.path)  # fmt: skip
    sid = first["session"]
    same = wctx.capture(product.store, [{"kind": "finding", "claim": "null check missing", "repo": "upload-sdk",
                                         "files": ["src/client.py#connect"]}], session_id=sid, cwd=product.sdk.path)  # fmt: skip
    assert same["evidence"][0]["duplicate"] is True
    more = wctx.capture(product.store, [{"kind": "finding", "claim": "null check missing", "repo": "upload-sdk",
                                         "files": ["src/client.py#retry_policy"], "confidence": 0.9}],
                        session_id=sid, cwd=product.sdk.path)  # fmt: skip
    assert more["evidence"][0]["duplicate"] is False
    assert wctx.get_evidence(product.store, more["evidence"][0]["id"])["files"] == [
        "src/client.py#retry_policy"
    ]


def test_supersede_refuses_an_inactive_replacement_and_so_cycles(product):
    cap = wctx.capture(product.store, [{"kind": "finding", "claim": "version one", "repo": "upload-sdk"},
                                       {"kind": "finding", "claim": "version two", "repo": "upload-sdk"}],
                       cwd=product.sdk.path)  # fmt: skip
    a, b = (e["id"] for e in cap["evidence"])
    wctx.supersede(product.store, a, b)
    with pytest.raises(wctx.UsageError, match="is superseded"):
        wctx.supersede(product.store, b, a)
    assert [r["id"] for r in wctx.search(product.store, "version", cwd=product.sdk.path)["results"]] == [b]


def test_a_worktree_inside_a_registered_repo_is_not_that_repo(git_repo, store, run_cli):
    app = git_repo("app", {"a.py": "def foo():\n    return 1\n"})
    wctx.register_repo(store, app.path)
    worktree = os.path.join(app.path, ".claude", "worktrees", "fix")
    app.git("worktree", "add", "-q", worktree, "-b", "fix")
    with open(os.path.join(worktree, "a.py"), "w") as fh:
        fh.write("def foo():\n    return 42\n")
    # From inside the worktree: a checkout of app, stamped with the worktree's own file and HEAD,
    # never the main checkout's a.py at the main checkout's HEAD.
    res = run_cli(["capture", "--finding", "foo returns 42", "--file", "a.py#foo", "--json"], cwd=worktree)
    assert res.code == 0, res
    (anchor,) = [a for a in wctx.get_evidence(store, res.json["evidence"][0]["id"])["anchors"] if a["path"]]
    assert anchor["branch"] == "fix" and anchor["blob"] != app.blob("a.py")
    # Citing the worktree's file from the main checkout is refused with the way out.
    res = run_cli(
        ["capture", "--finding", "foo returns 42", "--file", ".claude/worktrees/fix/a.py#foo"], cwd=app.path
    )
    assert res.code == 2 and "inside another git checkout" in res.err and "wctx repo add" in res.err
    assert store.one("SELECT count(*) AS n FROM evidence")["n"] == 1
