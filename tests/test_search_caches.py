"""Nothing kept between searches serves a stale answer.

Search keeps what it derives from the store per store generation (Store.memo), verdicts in the
freshness cache keyed by what can be checked without git, what git said per checkout state
(git_view, recent_head_token) and served MCP entries (wctx_mcp._STABLE_CACHE). Each test here
builds one of those caches in a long-lived reader (the real `wctx mcp` process, or an open Store),
changes what it was derived from in another process or on disk, and asks again: the answer must
be the truth of now, a verdict must name the commit that changed the code, and an item forgotten,
retracted or superseded must not come back.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from conftest import git  # noqa: E402
from mcp_helpers.fixtures import Servers  # noqa: E402

import wctx  # noqa: E402

WCTX = os.path.join(os.path.dirname(HERE), "wctx.py")

SEND_V1 = "def uploadDocument(doc):\n    return send(doc)\n\n\ndef send(doc):\n    return 419\n"
SEND_V2 = "def uploadDocument(doc):\n    return send(doc)\n\n\ndef send(doc):\n    return 420\n"  # same size


@pytest.fixture
def servers(tmp_path):
    s = Servers(tmp_path)
    yield s
    s.close()


def cli(home, *argv, cwd=None):
    """The wctx CLI in a process of its own: another process changing the store."""
    proc = subprocess.run(
        [sys.executable, WCTX, "--home", str(home), *argv],
        cwd=str(cwd) if cwd else None,
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"),
    )
    assert proc.returncode == 0, (argv, proc.stdout, proc.stderr)
    return proc.stdout


def cli_capture(home, cwd, claim, *extra):
    out = cli(home, "capture", "--json", "--finding", claim, *extra, cwd=cwd)
    return json.loads(out)["evidence"][0]["id"]


def found(server, query, **args):
    """The detailed results by id, each with its freshness as {verdict, reasons} and its status."""
    results = server.call_ok("search_evidence", dict({"query": query, "detail": True}, **args))["results"]
    return {
        r["id"]: dict(r, freshness={"verdict": r.get("verdict"), "reasons": r.get("freshness", [])},
                      status=r.get("status", "active"))
        for r in results
    }  # fmt: skip


def short(sha):
    return sha[:7]


def head_of(path):
    return git(path, "rev-parse", "HEAD").strip()


# -- a long-lived MCP server while the CLI changes the store and the checkout ----------------------


def test_server_follows_capture_commit_confirm_retract_supersede_and_forget_by_the_cli(servers):
    env = servers.env
    home, sdk = env["home"], env["sdk"]
    server = servers.start(cwd=sdk)
    server.initialize()
    assert found(server, "send status quirk") == {}  # the empty answer is memoised too

    first = cli_capture(home, sdk, "send returns the status quirk", "--file", "src/upload.py#send")
    hit = found(server, "send status quirk")[first]
    assert hit["freshness"]["verdict"] == "current"
    assert "confirmed_at" not in hit  # never confirmed: nothing empty is sent

    # The cited symbol changes in a commit: the verdict is stale and names that commit.
    with open(os.path.join(str(sdk), "src", "upload.py"), "w") as fh:
        fh.write(SEND_V2)
    git(sdk, "commit", "-q", "-am", "send returns 420")
    changed = head_of(sdk)
    hit = found(server, "send status quirk")[first]
    assert hit["freshness"]["verdict"] == "stale"
    assert short(changed) in " ".join(hit["freshness"]["reasons"])

    # Re-confirmed by another process: current again, and the confirmation is counted.
    cli(home, "confirm", first, cwd=sdk)
    hit = found(server, "send status quirk")[first]
    assert hit["freshness"]["verdict"] == "current", hit
    assert hit["confirmed_at"]

    # Superseded, then retracted: out of the default search, each shown as such with --all-status.
    second = cli_capture(home, sdk, "send returns the status quirk 420 now", "--file", "src/upload.py#send")
    cli(home, "supersede", first, "--by", second)
    assert set(found(server, "send status quirk")) == {second}
    every = found(server, "send status quirk", include_inactive=True)
    assert every[first]["status"] == "superseded"
    cli(home, "retract", second)
    assert found(server, "send status quirk") == {}
    assert found(server, "send status quirk", include_inactive=True)[second]["status"] == "retracted"

    # Forgotten: gone from every search, inactive ones included, and its text is not served.
    cli(home, "forget", first, second, "--reason", "wrong", "--yes")
    assert found(server, "send status quirk", include_inactive=True) == {}
    third = cli_capture(home, sdk, "send keeps one more quirk")
    assert set(found(server, "send quirk", include_inactive=True)) == {third}


def test_server_sees_head_moves_by_checkout_reset_and_packed_refs(servers):
    env = servers.env
    home, sdk = env["home"], env["sdk"]
    item = cli_capture(home, sdk, "send returns the status quirk", "--file", "src/upload.py#send")
    start = head_of(sdk)
    branch = git(sdk, "symbolic-ref", "--short", "HEAD").strip()
    server = servers.start(cwd=sdk)
    server.initialize()

    def verdict():
        fresh = found(server, "send status quirk")[item]["freshness"]
        return fresh["verdict"], " ".join(fresh["reasons"])

    assert verdict()[0] == "current"
    git(sdk, "checkout", "-q", "-b", "other")
    with open(os.path.join(str(sdk), "src", "upload.py"), "w") as fh:
        fh.write(SEND_V2)
    git(sdk, "commit", "-q", "-am", "send returns 420")
    moved = head_of(sdk)
    v, why = verdict()
    assert v == "stale" and short(moved) in why
    git(sdk, "checkout", "-q", branch)  # back to the commit it was recorded at
    assert verdict()[0] == "current"
    git(sdk, "reset", "-q", "--hard", moved)  # the branch itself moves
    v, why = verdict()
    assert v == "stale" and short(moved) in why
    git(sdk, "pack-refs", "--all")  # the branch is only in packed-refs now
    v, why = verdict()
    assert v == "stale" and short(moved) in why
    git(sdk, "reset", "-q", "--hard", start)
    git(sdk, "pack-refs", "--all")
    assert verdict()[0] == "current"


# -- the store file replaced under a running server (a restore from backup) ----------------------


def copy_store(home, to):
    src = sqlite3.connect(os.path.join(str(home), "wctx.db"))
    dst = sqlite3.connect(str(to))
    src.backup(dst)
    src.close()
    dst.close()


def put_store(backup, home):
    db = os.path.join(str(home), "wctx.db")
    for suffix in ("-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.unlink(db + suffix)
    tmp = db + ".restoring"
    with open(str(backup), "rb") as src, open(tmp, "wb") as dst:
        dst.write(src.read())
    os.replace(tmp, db)


def test_server_reads_a_restored_store_not_what_it_kept_of_the_old_one(servers, tmp_path):
    env = servers.env
    home, sdk = env["home"], env["sdk"]
    item = cli_capture(home, sdk, "send returns the status quirk")
    cli(home, "search", "send status quirk", cwd=sdk)  # every verdict cached: the server writes none
    backup = tmp_path / "backup.db"
    copy_store(home, backup)  # the item active
    cli(home, "retract", item)
    cli(home, "search", "send status quirk", cwd=sdk)
    server = servers.start(cwd=sdk)
    server.initialize()
    assert found(server, "send status quirk") == {}
    assert found(server, "send status quirk", include_inactive=True)[item]["status"] == "retracted"
    put_store(backup, home)
    assert set(found(server, "send status quirk")) == {item}
    assert found(server, "send status quirk", include_inactive=True)[item]["status"] == "active"
    shown = server.call_ok("get_evidence", {"id": item})
    assert shown["evidence"]["status"] == "active"


def test_an_open_store_reopened_on_a_restored_file_forgets_what_it_derived_from_the_old(product, tmp_path):
    home, sdk = product.store.home, product.sdk
    item = cli_capture(home, sdk.path, "send returns the status quirk")
    backup = tmp_path / "backup.db"
    copy_store(home, backup)
    cli(home, "retract", item)
    cli(home, "search", "--all-status", "send status quirk", cwd=sdk.path)  # verdicts cached
    with wctx.open_store(home) as reader:  # a long-lived reader that writes nothing
        hits = wctx.search(reader, "send status quirk", cwd=sdk.path, include_inactive=True)["results"]
        assert [r["status"] for r in hits] == ["retracted"]
        put_store(backup, home)
        reader.ensure_current()  # as the MCP server does before each call
        hits = wctx.search(reader, "send status quirk", cwd=sdk.path, include_inactive=True)["results"]
        assert [r["status"] for r in hits] == ["active"]


# -- a cited file edited so that its size and mtime stay the same -----------------------------------


def _search(store, cwd, query="send status quirk"):
    return {r["id"]: r for r in wctx.search(store, query, cwd=cwd)["results"]}


def cached(store, evidence_id):
    """Whether the freshness cache holds a verdict for the item (so the next search may use it)."""
    row = store.one(
        "SELECT 1 FROM freshness_cache c JOIN evidence e ON e.rid = c.evidence_rid WHERE e.id = ?",
        (evidence_id,),
    )
    return row is not None


def _cited_item(product, settled=True):
    """(cited file, item id): a committed file, cited by an item a search finds ``current``;
    ``settled``: the file last modified long ago, so that the verdict is cached, else just now."""
    sdk = product.sdk
    path = sdk.write("src/send.py", SEND_V1)
    sdk.commit("send")
    now = os.stat(path).st_mtime_ns
    os.utime(path, ns=(10**18, 10**18) if settled else (now, now))  # long ago (2001), or just now
    rid = wctx.capture(
        product.store,
        [{"kind": "finding", "claim": "send returns the status quirk", "files": ["src/send.py#send"]}],
        cwd=sdk.path,
    )["evidence"][0]["id"]
    assert _search(product.store, sdk.path)[rid]["freshness"]["verdict"] == "current"
    assert cached(product.store, rid) or not settled
    return path, rid


def _drop_topic_keeping_a_mirror(sdk, branch, tmp_path):
    """Mirror ``sdk`` (branch ``topic`` with it), then go back to ``branch`` and delete ``topic``
    and its commits from ``sdk``; returns the mirror's path, where a fetch finds them again."""
    mirror = str(tmp_path / "mirror")
    git(tmp_path, "clone", "-q", "--mirror", sdk.path, mirror)
    sdk.git("checkout", "-q", branch)
    sdk.git("branch", "-q", "-D", "topic")
    sdk.git("reflog", "expire", "--expire=now", "--all")
    sdk.git("gc", "-q", "--prune=now")
    return mirror


def rewrite_keeping_mtime(path, text):
    st = os.stat(path)
    with open(path, "w") as fh:
        fh.write(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns) == (st.st_size, st.st_mtime_ns)


def test_an_edit_in_the_same_tick_to_the_same_size_is_seen(product):
    """An editor writes the cited file, a search caches its verdict, the file is written again
    within the filesystem's timestamp grain to the same size: size and mtime alone cannot tell."""
    sdk = product.sdk
    path, rid = _cited_item(product, settled=False)
    rewrite_keeping_mtime(path, SEND_V2)
    fresh = _search(product.store, sdk.path)[rid]["freshness"]
    assert fresh["verdict"] == "stale", fresh
    # A process of its own (no memo of this one) reads the same truth from the stored cache.
    with wctx.open_store(product.store.home) as other:
        assert _search(other, sdk.path)[rid]["freshness"]["verdict"] == "stale"


def test_an_edit_that_keeps_size_and_mtime_of_a_settled_file_is_seen(product):
    """A tool that restores the mtime it found (rsync -t, cp -p, touch -r) on a file whose verdict
    was cached long after it last changed: the change time and inode still tell."""
    sdk = product.sdk
    path, rid = _cited_item(product)
    before = os.stat(path)
    rewrite_keeping_mtime(path, SEND_V2)
    assert os.stat(path).st_ctime_ns != before.st_ctime_ns
    assert _search(product.store, sdk.path)[rid]["freshness"]["verdict"] == "stale"
    with wctx.open_store(product.store.home) as other:
        assert _search(other, sdk.path)[rid]["freshness"]["verdict"] == "stale"


def test_a_cited_file_replaced_by_rename_with_its_old_size_and_mtime_is_seen(product):
    sdk = product.sdk
    path, rid = _cited_item(product)
    st = os.stat(path)
    new = path + ".new"
    with open(new, "w") as fh:
        fh.write(SEND_V2)
    os.utime(new, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(new, path)  # as editors save: a new file renamed over the old
    assert _search(product.store, sdk.path)[rid]["freshness"]["verdict"] == "stale"


def test_packed_refs_rewritten_to_the_same_size_and_mtime_is_seen(product):
    """HEAD names a branch that lives only in packed-refs; the branch moves and is packed again,
    packed-refs keeping its size (one object id for another) and, here, its mtime. The item cites
    no file: only HEAD can tell."""
    sdk = product.sdk
    start = sdk.head
    rid = wctx.capture(
        product.store, [{"kind": "finding", "claim": "send returns the status quirk"}], cwd=sdk.path
    )["evidence"][0]["id"]
    sdk.write("src/other.py", "x = 1\n")
    moved = sdk.commit("another commit")
    sdk.git("reset", "-q", "--hard", start)
    sdk.git("pack-refs", "--all")
    packed = os.path.join(sdk.path, ".git", "packed-refs")
    st = os.stat(packed)
    fresh = _search(product.store, sdk.path)[rid]["freshness"]
    assert fresh["verdict"] == "current", fresh
    sdk.git("reset", "-q", "--hard", moved)
    sdk.git("pack-refs", "--all")
    os.utime(packed, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(packed).st_size == st.st_size
    for store in (product.store, wctx.open_store(product.store.home)):
        fresh = _search(store, sdk.path)[rid]["freshness"]
        assert fresh["verdict"] == "possibly_stale", fresh
        assert "moved 1 commit" in " ".join(fresh["reasons"])


def test_a_branch_that_is_a_symbolic_ref_is_followed_to_its_commit(product):
    """HEAD names a branch that is itself a symbolic ref (git symbolic-ref refs/heads/trunk
    refs/heads/main): the branch it names moving moves HEAD."""
    sdk = product.sdk
    branch = sdk.git("symbolic-ref", "HEAD").strip()
    sdk.git("symbolic-ref", "refs/heads/trunk", branch)
    sdk.git("symbolic-ref", "HEAD", "refs/heads/trunk")
    rid = wctx.capture(
        product.store, [{"kind": "finding", "claim": "send returns the status quirk"}], cwd=sdk.path
    )["evidence"][0]["id"]
    assert _search(product.store, sdk.path)[rid]["freshness"]["verdict"] == "current"
    moved = sdk.git("commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "another commit").strip()
    sdk.git("update-ref", branch, moved)  # moves the branch trunk names
    with open(os.path.join(sdk.path, ".git", "HEAD")) as fh:
        assert fh.read().strip() == "ref: refs/heads/trunk"
    assert sdk.head == moved
    for store in (product.store, wctx.open_store(product.store.home)):
        fresh = _search(store, sdk.path)[rid]["freshness"]
        assert fresh["verdict"] == "possibly_stale", fresh
        assert "moved 1 commit" in " ".join(fresh["reasons"])


def test_a_recorded_commit_fetched_later_is_found(product, tmp_path):
    """An item recorded at a commit this checkout does not have (a teammate's, imported; or here
    one that was dropped): once `git fetch` brings it, HEAD and the index as they were, the
    verdict is judged against it, in this process and in the next."""
    sdk = product.sdk
    branch = sdk.git("symbolic-ref", "--short", "HEAD").strip()
    sdk.git("checkout", "-q", "-b", "topic")
    sdk.write("src/topic.py", "x = 1\n")
    topic = sdk.commit("topic work")
    rid = wctx.capture(
        product.store, [{"kind": "finding", "claim": "send returns the status quirk"}], cwd=sdk.path
    )["evidence"][0]["id"]
    mirror = _drop_topic_keeping_a_mirror(sdk, branch, tmp_path)
    assert sdk.git("cat-file", "-t", topic, check=False).strip() != "commit"
    fresh = _search(product.store, sdk.path)[rid]["freshness"]
    assert fresh["verdict"] == "unknown" and "not in" in " ".join(fresh["reasons"]), fresh
    sdk.git("fetch", "-q", mirror, "topic")  # the commit is back; HEAD and the index are not moved
    assert sdk.git("cat-file", "-t", topic).strip() == "commit"
    for store in (product.store, wctx.open_store(product.store.home)):
        fresh = _search(store, sdk.path)[rid]["freshness"]
        assert fresh["verdict"] == "possibly_stale", fresh
        assert short(topic) in " ".join(fresh["reasons"])


def test_server_started_for_a_checkout_path_follows_a_rename_of_its_repository(servers, tmp_path):
    env = servers.env
    home, sdk = env["home"], env["sdk"]
    item = cli_capture(home, sdk, "send returns the status quirk")
    server = servers.start(cwd=tmp_path, args=("--repo", str(sdk)))  # outside it, named by path
    server.initialize()
    assert found(server, "send status quirk")[item]["repo"] == "upload-sdk"
    cli(home, "repo", "rename", "upload-sdk", "sdk-core")
    assert found(server, "send status quirk")[item]["repo"] == "sdk-core"
    recorded = server.call_ok(
        "record_evidence", {"items": [{"kind": "note", "claim": "one more send quirk"}]}
    )
    assert recorded["recorded"][0]["repo"] == "sdk-core"


def test_server_judges_an_item_recorded_in_a_linked_worktree_by_that_worktree(servers, tmp_path):
    env = servers.env
    home, sdk = env["home"], env["sdk"]
    tree = str(tmp_path / "sdk-topic")
    git(sdk, "worktree", "add", "-q", "-b", "topic", tree)
    server = servers.start(cwd=sdk)
    server.initialize()
    assert found(server, "send status quirk") == {}  # the server's view of the repository is kept
    item = cli_capture(home, tree, "send returns the status quirk", "--file", "src/upload.py#send")
    fresh = found(server, "send status quirk")[item]["freshness"]
    assert fresh["verdict"] == "current", fresh
    with open(os.path.join(tree, "src", "upload.py"), "w") as fh:
        fh.write(SEND_V2)
    git(tree, "commit", "-q", "-am", "send returns 420 on the topic branch")
    moved = head_of(tree)
    fresh = found(server, "send status quirk")[item]["freshness"]
    assert fresh["verdict"] == "stale" and short(moved) in " ".join(fresh["reasons"]), fresh
    assert head_of(sdk) != moved  # the registered checkout did not move: the worktree judged


def test_server_follows_a_checkout_moved_and_registered_again_at_its_new_path(servers, tmp_path):
    env = servers.env
    home, sdk = env["home"], env["sdk"]
    item = cli_capture(home, sdk, "send returns the status quirk", "--file", "src/upload.py#send")
    server = servers.start(cwd=tmp_path, args=("--workspace", "docs"))
    server.initialize()
    assert found(server, "send status quirk")[item]["freshness"]["verdict"] == "current"
    moved = str(tmp_path / "moved" / "upload-sdk")
    os.makedirs(os.path.dirname(moved))
    os.rename(str(sdk), moved)
    fresh = found(server, "send status quirk")[item]["freshness"]
    assert fresh["verdict"] == "unknown", fresh  # not on this machine where it was registered
    cli(home, "repo", "remove", "upload-sdk")
    cli(home, "repo", "add", moved, "--workspace", "docs")  # back with its evidence, at the new path
    fresh = found(server, "send status quirk")[item]["freshness"]
    assert fresh["verdict"] == "current", fresh
    with open(os.path.join(moved, "src", "upload.py"), "w") as fh:
        fh.write(SEND_V2)
    git(moved, "commit", "-q", "-am", "send returns 420")
    fresh = found(server, "send status quirk")[item]["freshness"]
    assert fresh["verdict"] == "stale" and short(head_of(moved)) in " ".join(fresh["reasons"]), fresh


# -- a long-lived process whose checkouts have been quiet: its kept HEAD tokens and git views ------


def test_kept_head_tokens_and_git_views_follow_commit_checkout_reset_pack_and_fetch(
    product, tmp_path, monkeypatch
):
    """With every checkout quiet for a while (HEAD_RACY_SECONDS: as if), this process keeps each
    HEAD token (recent_head_token) and what git said per checkout state (git_view) between
    searches; each way HEAD can move must still show in the next search's verdicts."""
    monkeypatch.setattr(wctx, "HEAD_RACY_SECONDS", -3600.0)
    store, sdk = product.store, product.sdk
    sdk.write("src/send.py", SEND_V1)
    start = sdk.commit("send")
    branch = sdk.git("symbolic-ref", "--short", "HEAD").strip()
    cites = wctx.capture(
        store,
        [{"kind": "finding", "claim": "send returns the status quirk", "files": ["src/send.py#send"]}],
        cwd=sdk.path,
    )["evidence"][0]["id"]
    bare = wctx.capture(store, [{"kind": "finding", "claim": "send status quirk, no file"}], cwd=sdk.path)
    bare = bare["evidence"][0]["id"]

    def verdicts():
        found = _search(store, sdk.path)
        return {
            k: (found[k]["freshness"]["verdict"], " ".join(found[k]["freshness"]["reasons"]))
            for k in (cites, bare)
        }

    assert [v for v, _ in verdicts().values()] == ["current", "current"]
    assert verdicts()[cites][0] == "current"  # now from what this process kept
    sdk.write("src/send.py", SEND_V2)
    changed = sdk.commit("send returns 420")
    got = verdicts()
    assert got[cites][0] == "stale" and short(changed) in got[cites][1], got
    assert got[bare][0] == "possibly_stale" and "moved 1 commit" in got[bare][1], got
    sdk.git("checkout", "-q", start)  # detached, at the recorded commit
    assert [v for v, _ in verdicts().values()] == ["current", "current"]
    sdk.git("checkout", "-q", branch)
    assert verdicts()[cites][0] == "stale"
    sdk.git("reset", "-q", "--hard", start)
    assert [v for v, _ in verdicts().values()] == ["current", "current"]
    sdk.git("reset", "-q", "--hard", changed)
    sdk.git("pack-refs", "--all")
    got = verdicts()
    assert got[cites][0] == "stale" and short(changed) in got[cites][1], got
    # A commit that leaves and comes back by fetch, HEAD and index unmoved meanwhile.
    sdk.git("checkout", "-q", "-b", "topic")
    topic_tip = sdk.git("commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "topic").strip()
    sdk.git("update-ref", "refs/heads/topic", topic_tip)
    sdk.git("reset", "-q", "--hard", topic_tip)
    late = wctx.capture(store, [{"kind": "finding", "claim": "send status quirk on topic"}], cwd=sdk.path)
    late = late["evidence"][0]["id"]
    mirror = _drop_topic_keeping_a_mirror(sdk, branch, tmp_path)
    assert _search(store, sdk.path)[late]["freshness"]["verdict"] == "unknown"
    assert _search(store, sdk.path)[late]["freshness"]["verdict"] == "unknown"
    sdk.git("fetch", "-q", mirror, "topic")
    fresh = _search(store, sdk.path)[late]["freshness"]
    assert fresh["verdict"] == "possibly_stale" and short(topic_tip) in " ".join(fresh["reasons"]), fresh


def test_server_shows_a_teammates_retraction_and_new_item_imported_by_another_process(servers, tmp_path):
    """A teammate records an item in their own store; it reaches this store by import-evidence in
    another process while the server runs, and so does their retraction of it: the server's next
    search shows the new item, then the item retracted."""
    env = servers.env
    home, sdk = env["home"], env["sdk"]
    server = servers.start(cwd=sdk)
    server.initialize()
    assert found(server, "send status quirk") == {}
    mate = tmp_path / "mate-home"
    cli(mate, "repo", "add", str(sdk))
    item = cli_capture(mate, sdk, "send returns the status quirk")
    theirs = tmp_path / "theirs.jsonl"
    theirs.write_text(cli(mate, "export"))
    cli(home, "import-evidence", str(theirs))
    assert set(found(server, "send status quirk")) == {item}
    cli(mate, "retract", item)
    theirs.write_text(cli(mate, "export"))
    cli(home, "import-evidence", str(theirs))
    assert found(server, "send status quirk") == {}
    assert found(server, "send status quirk", include_inactive=True)[item]["status"] == "retracted"


# -- verify refreshes the cache: with the verdicts of the files as it read them -----------------


def test_a_file_edited_while_verify_runs_is_not_cached_as_it_was_read(product, monkeypatch):
    """verify stores what it computed for later searches. A cited file edited after verify read
    it (and quiet again by the time verify stores its verdicts) must not lend the old verdict its
    new stat: the next search judges the file as it is."""
    sdk = product.sdk
    path = sdk.write("src/send.py", SEND_V1)
    sdk.commit("send")
    os.utime(path, (1e9, 1e9))
    rid = wctx.capture(
        product.store,
        [{"kind": "finding", "claim": "send returns the status quirk", "files": ["src/send.py#send"]}],
        cwd=sdk.path,
    )["evidence"][0]["id"]
    real = wctx.FreshnessChecker.check_items

    def check_then_edit(self, anchors_by_rid):
        out = real(self, anchors_by_rid)
        with open(path, "w") as fh:  # an agent's edit, just after verify read the file
            fh.write(SEND_V2)
        os.utime(path, (1.5e9, 1.5e9))  # and quiet by the time verify stores its verdicts
        return out

    monkeypatch.setattr(wctx.FreshnessChecker, "check_items", check_then_edit)
    checked = wctx.verify(product.store, [rid])
    assert checked["items"][0]["verdict"] == "current"  # what it read
    monkeypatch.setattr(wctx.FreshnessChecker, "check_items", real)
    fresh = _search(product.store, sdk.path)[rid]["freshness"]
    assert fresh["verdict"] == "stale", fresh


def test_a_reason_that_names_the_checked_out_branch_follows_a_switch_at_the_same_commit(product):
    """An item recorded on a topic branch, about a file the checked-out branch never had: its reason
    names the branch checked out. Another branch at the same commit checked out: HEAD's commit is
    the same, the branch the reason names is not."""
    sdk = product.sdk
    branch = sdk.git("symbolic-ref", "--short", "HEAD").strip()
    sdk.git("checkout", "-q", "-b", "topic")
    sdk.write("src/topic.py", SEND_V1)
    sdk.commit("topic adds send")
    rid = wctx.capture(
        product.store,
        [{"kind": "finding", "claim": "send returns the status quirk", "files": ["src/topic.py#send"]}],
        cwd=sdk.path,
    )["evidence"][0]["id"]
    sdk.git("checkout", "-q", branch)
    fresh = _search(product.store, sdk.path)[rid]["freshness"]
    assert "branch %s" % branch in " ".join(fresh["reasons"]), fresh
    index = os.path.join(sdk.path, ".git", "index")
    st = os.stat(index)
    sdk.git("switch", "-q", "-c", "elsewhere")  # the same commit, another branch
    # git switch leaves a settled index as it was; this one is young, so git may refresh it: put
    # its stat back as a settled one would have stayed.
    assert os.stat(index).st_size == st.st_size
    os.utime(index, ns=(st.st_atime_ns, st.st_mtime_ns))
    for store in (product.store, wctx.open_store(product.store.home)):
        fresh = _search(store, sdk.path)[rid]["freshness"]
        assert "branch elsewhere" in " ".join(fresh["reasons"]), fresh


# -- the bounded memos: starting over never loses what the search at hand asked for -----------------


def test_rank_rows_and_item_views_starting_over_keep_every_match_of_the_search_at_hand(product, monkeypatch):
    """A long-lived process keeps a bounded number of rank rows and item views per store generation
    and starts over when a search would pass the bound: that search still sees all its matches,
    in the order a fresh process gives them."""
    store, sdk = product.store, product.sdk
    items = [{"kind": "finding", "claim": "send quirk number %d" % i} for i in range(6)]
    items.append({"kind": "finding", "claim": "send quirk and a rare retry token"})
    wctx.capture(store, items, cwd=sdk.path)
    with wctx.open_store(store.home) as fresh:
        expected = [r["claim"] for r in wctx.search(fresh, "send quirk", cwd=sdk.path, limit=3)["results"]]
    assert expected[0] == "send quirk number 5"  # the newest of the best-matching
    monkeypatch.setattr(wctx, "RANK_ROWS_KEPT", 4)
    monkeypatch.setattr(wctx, "ITEM_VIEWS_KEPT", 4)
    one = wctx.search(store, "quirk number 5", cwd=sdk.path, limit=1)["results"]  # kept: 1 row of 4
    assert [r["claim"] for r in one] == ["send quirk number 5"]
    got = [r["claim"] for r in wctx.search(store, "send quirk", cwd=sdk.path, limit=3)["results"]]
    assert got == expected


def test_clear_caches_empties_every_process_cache_a_search_and_verify_filled(product):
    """One function empties every process-wide cache, whatever filled it: a store reopened on a
    new file and each test start from nothing."""
    _cited_item(product)
    wctx.search(product.store, "send status quirk", cwd=product.sdk.path)
    wctx.verify(product.store, cwd=product.sdk.path)
    filled = [c.name for c in wctx.CACHES if c.size()]
    assert len(filled) >= 5, filled  # a search and a verify go through many of them
    wctx.clear_caches()
    assert [c.name for c in wctx.CACHES if c.size()] == []


def test_every_process_cache_is_declared_in_the_caches_part():
    """A cache declared anywhere else would escape clear_caches() and the table that says what
    invalidates it: no part but caches.py makes an lru_cache or a module-level dict or set."""
    import re

    parts = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "parts")
    found = []
    for folder, _, names in sorted(os.walk(parts)):
        folder = os.path.relpath(folder, parts)
        for name in sorted(names):
            if name in ("caches.py", "build.py") or not name.endswith(".py"):
                continue
            with open(os.path.join(parts, folder, name), encoding="utf-8") as handle:
                for number, line in enumerate(handle, 1):
                    declared = re.match(
                        r"([A-Za-z_]\w*) = (\{\}|set\(\)|dict\(\)|collections\.OrderedDict\(\))", line
                    )
                    if "lru_cache" in line or (declared and "not a cache" not in line):
                        found.append(f"parts/{folder}/{name}:{number}: {line.strip()}")
    assert found == []
