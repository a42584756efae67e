"""wctx sync: two machines (two stores, clones of the same repositories at different paths and
under other names) share memory through a bare git repository on disk, as a team would through
any git remote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest
from conftest import SDK_UPLOAD_TS, WCTX_SCRIPT, git, git_env

import wctx


class Machine:
    """One developer's machine: its own $HOME, $WCTX_HOME and checkouts."""

    def __init__(self, root, name):
        self.root = os.path.join(str(root), name)
        self.home = os.path.join(self.root, "home")
        self.store_dir = os.path.join(self.home, ".wctx")
        os.makedirs(self.home, exist_ok=True)

    def env(self):
        env = dict(git_env(), HOME=self.home, WCTX_HOME=self.store_dir)
        for var in ("CLAUDE_CODE_SESSION_ID", "CODEX_THREAD_ID", "CLAUDECODE"):
            env.pop(var, None)
        return env

    def wctx(self, *argv, cwd=None, check=True):
        proc = subprocess.run(
            [sys.executable, WCTX_SCRIPT, *argv],
            cwd=cwd or self.root,
            env=self.env(),
            capture_output=True,
            text=True,
            check=False,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                "wctx %s failed (%d): %s%s" % (argv, proc.returncode, proc.stdout, proc.stderr)
            )
        return proc

    def json(self, *argv, cwd=None):
        return json.loads(self.wctx(*argv, "--json", cwd=cwd).stdout)


@pytest.fixture
def team(tmp_path):
    """A bare team memory repository, an upstream project, and two machines holding clones of it
    at different paths (machine B calls the repository ``sdk``, machine A ``upload-sdk``)."""
    upstream = tmp_path / "upstream" / "upload-sdk"
    os.makedirs(str(upstream))
    git(upstream, "init", "-q")
    with open(os.path.join(str(upstream), "upload.ts"), "w") as fh:
        fh.write(SDK_UPLOAD_TS)
    git(upstream, "add", "-A")
    git(upstream, "commit", "-q", "-m", "initial")
    remote = str(tmp_path / "team-memory.git")
    git(tmp_path, "init", "-q", "--bare", remote)
    a, b = Machine(tmp_path, "alice"), Machine(tmp_path, "bob")
    a.repo = os.path.join(a.home, "src", "upload-sdk")
    b.repo = os.path.join(b.home, "work", "sdk")
    for m, name in ((a, "upload-sdk"), (b, "sdk")):
        git(tmp_path, "clone", "-q", str(upstream), m.repo)
        m.wctx("repo", "add", m.repo, "--name", name, "--workspace", "uploads")
    return remote, a, b


def remote_branches(remote):
    """The branches of the team's memory repository: the team's own, then one per workspace."""
    return git(remote, "for-each-ref", "--format=%(refname:short)", "refs/heads/").split()


def remote_files(remote, branch=None):
    """{path: text} of one branch of the team's memory, or of all of them (a path that two
    branches hold, such as a session with items in two workspaces, has both texts)."""
    files = {}
    for name in [branch] if branch else remote_branches(remote):
        for p in git(remote, "ls-tree", "-r", "--name-only", name).split():
            files[p] = files.get(p, "") + git(remote, "show", name + ":" + p)
    return files


def test_a_finding_captured_on_one_machine_is_found_current_on_another(team):
    remote, a, b = team
    a.wctx(
        "capture", "--summary", "traced the upload failure", "--finding",
        "uploadDocument swallows the 419 expiry :: no retry", "--file", "upload.ts#uploadDocument",
        cwd=a.repo,
    )  # fmt: skip
    out = a.json("sync", "--remote", remote)
    assert out["exported"]["files"] >= 1 and out["pushed"]
    got = b.json("sync", "--remote", remote)
    assert got["imported"]["evidence"] == 1 and got["skipped"] == []
    hits = b.json("search", "uploadDocument expiry", cwd=b.repo)["results"]
    assert [h["claim"] for h in hits] == ["uploadDocument swallows the 419 expiry"]
    assert hits[0]["repo"] == "sdk"  # mapped by root commit to bob's name for the repository
    verdict = json.loads(b.wctx("verify", hits[0]["id"], "--json", cwd=b.repo).stdout)
    assert verdict["items"][0]["verdict"] == "current", verdict


def test_the_remote_holds_no_path_or_user_name_of_the_exporting_machine(team):
    remote, a, b = team
    inside = os.path.join(a.repo, "upload.ts")
    ev = a.json(
        "capture", "--summary", "looked at %s and %s/notes.txt" % (inside, a.home),
        "--finding", "the expiry lives in %s" % inside, "--file", "upload.ts",
        cwd=a.repo,
    )  # fmt: skip
    a.wctx("confirm", ev["evidence"][0]["id"], "--note", "re-read %s" % inside, cwd=a.repo)
    a.wctx("sync", "--remote", remote)
    files = remote_files(remote)
    assert files
    blob = "\n".join(files.values())
    assert a.root not in blob and "alice" not in blob
    session = next(json.loads(line) for text in files.values() for line in text.splitlines()
                   if json.loads(line)["type"] == "session")  # fmt: skip
    assert session["cwd"] == "."
    assert "upload-sdk/upload.ts" in blob  # the checkout path became the repository's name
    # Plain export is as safe to share as sync.
    exported = a.wctx("export").stdout
    assert a.root not in exported and '"cwd": "."' in exported


def test_a_status_change_travels_from_the_items_own_machine_only(team):
    remote, a, b = team
    ev = a.json("capture", "--finding", "expiry is checked twice", "--file", "upload.ts", cwd=a.repo)
    item = ev["evidence"][0]["id"]
    other = a.json("capture", "--finding", "expiry is logged once", "--file", "upload.ts", cwd=a.repo)
    other = other["evidence"][0]["id"]
    a.wctx("sync", "--remote", remote)
    b.wctx("sync", "--remote", remote)
    # Bob retracts one of Alice's items: on his machine only (he can hide it; it is hers).
    b.wctx("retract", item)
    b.wctx("sync")  # the remote is remembered
    pulled = a.json("sync")
    assert pulled["imported"]["updated"] == 0
    assert a.json("show", item)["status"] == "active"
    assert b.json("show", item)["status"] == "retracted"
    # Alice retracts her own: it travels to Bob.
    a.wctx("retract", other)
    a.wctx("sync")
    assert b.json("sync")["imported"]["updated"] == 1
    assert b.json("show", other)["status"] == "retracted"
    # Alice's own session file still says what Alice recorded; Bob's change lives in Bob's file.
    owners = {p.split("/")[1] for p in remote_files(remote)}
    assert len(owners) == 2


def test_a_noop_sync_pushes_nothing(team):
    remote, a, _ = team
    a.wctx("capture", "--finding", "noop check", "--repo", "upload-sdk")
    a.wctx("sync", "--remote", remote)
    tip = git(remote, "rev-parse", "wctx-memory").strip()
    again = a.json("sync")
    assert again["noop"] is True and again["pushed"] is None
    assert git(remote, "rev-parse", "wctx-memory").strip() == tip


def test_a_push_rejected_because_another_machine_pushed_first_is_retried(team, monkeypatch):
    remote, a, b = team
    a.wctx("capture", "--finding", "alice learned this", "--repo", "upload-sdk")
    b.wctx("capture", "--finding", "bob learned that", "--repo", "sdk")
    b.wctx("sync", "--remote", remote)
    monkeypatch.setenv("HOME", a.home)
    store = wctx.open_store(a.store_dir)
    real_push = wctx._sync_push
    raced = []

    def push_after_bob(store_, remote_, updates_):
        if not raced:  # Bob pushes between Alice's fetch and her push
            b.wctx("capture", "--finding", "bob again", "--repo", "sdk")
            b.wctx("sync")
            raced.append(True)
        return real_push(store_, remote_, updates_)

    monkeypatch.setattr(wctx, "_sync_push", push_after_bob)
    try:
        report = wctx.sync_memory(store, remote=remote)
    finally:
        store.close()
    assert report.tries == 2 and report.pushed
    claims = {r["claim"] for r in a.json("search", "learned again bob alice", "--all")["results"]}
    assert claims == {"alice learned this", "bob learned that", "bob again"}
    b.wctx("sync")
    claims_b = {r["claim"] for r in b.json("search", "learned again bob alice", "--all")["results"]}
    assert claims_b == claims


def test_racing_syncs_from_both_machines_converge_with_nothing_lost(team):
    remote, a, b = team
    for i in range(3):
        a.wctx("capture", "--finding", "alice race finding %d" % i, "--repo", "upload-sdk")
        b.wctx("capture", "--finding", "bob race finding %d" % i, "--repo", "sdk")
    a.wctx("sync", "--remote", remote)
    b.wctx("sync", "--remote", remote)
    errors = []

    def loop(machine, who):
        for i in range(3):
            machine.wctx("capture", "--finding", "%s late finding %d" % (who, i), "--repo",
                         "upload-sdk" if who == "alice" else "sdk")  # fmt: skip
            proc = machine.wctx("sync", check=False)
            if proc.returncode != 0:
                errors.append(proc.stderr)

    threads = [
        threading.Thread(target=loop, args=(a, "alice")),
        threading.Thread(target=loop, args=(b, "bob")),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    a.wctx("sync")
    b.wctx("sync")
    a.wctx("sync")
    want = {"%s race finding %d" % (w, i) for w in ("alice", "bob") for i in range(3)}
    want |= {"%s late finding %d" % (w, i) for w in ("alice", "bob") for i in range(3)}
    for m in (a, b):
        got = {r["claim"] for r in m.json("search", "race late finding", "--all", "--limit", "50")["results"]}
        assert got == want


def test_a_tampered_or_truncated_file_is_reported_and_skipped_whole(team, tmp_path):
    remote, a, b = team
    a.wctx("capture", "--finding", "good item travels", "--repo", "upload-sdk")
    a.wctx("sync", "--remote", remote)
    # Someone pushes a damaged file of a third machine: one good line, then a truncated one.
    work = str(tmp_path / "tamper")
    git(tmp_path, "clone", "-q", "-b", "wctx-memory", remote, work)
    good = next(
        line for text in remote_files(remote).values() for line in text.splitlines()
        if json.loads(line)["type"] == "session"
    )  # fmt: skip
    session = json.loads(good)
    session["id"] = "ses-00000000ff"
    evidence = {"type": "evidence", "format": 1, "id": "ev-00000000ff", "session": "ses-00000000ff",
                "repo": "upload-sdk", "kind": "finding", "claim": "half imported item", "anchors": []}  # fmt: skip
    bad_dir = os.path.join(work, "machines", "00000000000000ff", "sessions")
    os.makedirs(bad_dir)
    with open(os.path.join(bad_dir, "ses-00000000ff.jsonl"), "w") as fh:
        fh.write(
            json.dumps(session) + "\n" + json.dumps(evidence) + "\n" + '{"type": "evidence", "id": "ev-0\n'
        )
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "tamper")
    git(work, "push", "-q", "origin", "wctx-memory")
    got = b.json("sync", "--remote", remote)
    assert got["imported"]["evidence"] == 1  # alice's good item
    assert len(got["skipped"]) == 1 and "ses-00000000ff.jsonl:3" in got["skipped"][0]
    found = {r["claim"] for r in b.json("search", "item travels imported", "--all")["results"]}
    assert found == {"good item travels"}
    text = b.wctx("sync").stdout
    assert "skipped" in text and "ses-00000000ff.jsonl:3" in text


@pytest.mark.parametrize(
    "remote",
    ["-uhttp://x", "--upload-pack=touch /tmp/wctx-pwned", "ext::sh -c touch% /tmp/wctx-pwned", "a\nb", ""],
)
def test_a_remote_that_is_an_option_or_runs_a_program_is_refused(team, remote):
    _, a, _ = team
    proc = a.wctx("sync", "--remote", remote, check=False)
    assert proc.returncode == 2, proc
    assert proc.stderr.count("\n") == 1 and "remote" in proc.stderr
    assert not os.path.exists("/tmp/wctx-pwned")
    assert not os.path.exists(os.path.join(a.store_dir, "sync"))


def test_sync_without_a_remote_says_how_to_set_one(team):
    _, a, _ = team
    proc = a.wctx("sync", check=False)
    assert proc.returncode == 2 and "--remote" in proc.stderr


def test_an_unreachable_remote_is_one_line_and_changes_nothing(team, tmp_path):
    _, a, _ = team
    a.wctx("capture", "--finding", "stays put", "--repo", "upload-sdk")
    proc = a.wctx("sync", "--remote", str(tmp_path / "nowhere.git"), check=False)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "cannot fetch" in proc.stderr
    assert a.wctx("sync", check=False).returncode == 2  # a remote that failed is not remembered


def _hook_import(machine, transcript):
    """What an agent's session-end hook runs, in the foreground so the test can read the log."""
    env = dict(machine.env(), WCTX_HOOK_FOREGROUND="1")
    payload = json.dumps({"transcript_path": transcript, "hook_event_name": "SessionEnd"})
    proc = subprocess.run(
        [sys.executable, WCTX_SCRIPT, "import", "--hook"], input=payload, env=env,
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0 and proc.stdout == ""
    with open(os.path.join(machine.store_dir, "hooks.log"), encoding="utf-8") as fh:
        return fh.read()


def test_auto_sync_runs_after_the_session_end_hook_and_fails_quietly_offline(team, tmp_path):
    from test_hooks import _render

    remote, a, b = team
    a.wctx("capture", "--finding", "auto synced finding", "--repo", "upload-sdk")
    assert a.wctx("sync", "--auto", "on", check=False).returncode == 2  # no remote to sync with yet
    a.wctx("sync", "--remote", remote)
    a.wctx("capture", "--finding", "captured after the first sync", "--repo", "upload-sdk")
    assert "on" in a.wctx("sync", "--auto", "on").stdout
    log = _hook_import(a, _render(tmp_path / "s.jsonl", a.repo, a.repo, str(tmp_path)))
    assert " ok SessionEnd imported " in log and " sync ok " in log
    b.wctx("sync", "--remote", remote)
    found = {r["claim"] for r in b.json("search", "finding captured sync", "--all")["results"]}
    assert found == {"auto synced finding", "captured after the first sync"}
    # Offline: the hook still succeeds and says why the sync did not happen.
    os.rename(remote, remote + ".away")
    log = _hook_import(a, _render(tmp_path / "t.jsonl", a.repo, a.repo, str(tmp_path)))
    assert " sync error " in log.splitlines()[-1] and "cannot fetch" in log.splitlines()[-1]
    a.wctx("sync", "--auto", "off")
    os.rename(remote + ".away", remote)
    log = _hook_import(a, _render(tmp_path / "u.jsonl", a.repo, a.repo, str(tmp_path)))
    assert " sync " not in log.splitlines()[-1]


def test_a_confirmation_on_one_machine_makes_the_item_current_on_the_other(team, tmp_path):
    remote, a, b = team
    ev = a.json("capture", "--finding", "uploadDocument gives up on 419", "--file",
                "upload.ts#uploadDocument", cwd=a.repo)  # fmt: skip
    item = ev["evidence"][0]["id"]
    a.wctx("sync", "--remote", remote)
    b.wctx("sync", "--remote", remote)
    # The upstream changes uploadDocument; both machines pull it.
    upstream = os.path.join(str(tmp_path), "upstream", "upload-sdk")
    path = os.path.join(upstream, "upload.ts")
    with open(path) as fh:
        text = fh.read()
    with open(path, "w") as fh:
        fh.write(text.replace('method: "POST"', 'method: "PUT"'))
    git(upstream, "commit", "-q", "-am", "use PUT")
    for m in (a, b):
        git(m.repo, "pull", "-q", "--ff-only")
        assert m.wctx("verify", item, cwd=m.repo, check=False).returncode == 1  # stale
    # Bob's confirmation re-stamps the item on his machine only; Alice's, her own item's owner,
    # travels.
    b.wctx("confirm", item, "--note", "still gives up on 419 after the PUT change", cwd=b.repo)
    b.wctx("sync")
    a.wctx("sync")
    assert a.wctx("verify", item, cwd=a.repo, check=False).returncode == 1
    a.wctx("confirm", item, "--note", "still gives up on 419 after the PUT change", cwd=a.repo)
    a.wctx("sync")
    b.wctx("sync")
    shown = b.json("show", item)
    assert any(h["event"] == "confirmed" for h in shown["history"]), shown
    result = json.loads(b.wctx("verify", item, "--json", cwd=b.repo).stdout)
    assert result["items"][0]["verdict"] == "current", result


def test_topology_travels_and_maps_to_the_other_machines_names(team, tmp_path):
    remote, a, b = team
    upstream = os.path.join(str(tmp_path), "upstream", "docs-ui")
    os.makedirs(upstream)
    git(upstream, "init", "-q")
    with open(os.path.join(upstream, "App.tsx"), "w") as fh:
        fh.write("export const App = () => null;\n")
    git(upstream, "add", "-A")
    git(upstream, "commit", "-q", "-m", "initial")
    for m, name in ((a, "docs-ui"), (b, "ui")):
        m.ui = os.path.join(m.home, "code", name)
        git(tmp_path, "clone", "-q", upstream, m.ui)
        m.wctx("repo", "add", m.ui, "--name", name, "--workspace", "uploads")
    a.wctx("relate", "docs-ui", "uses", "upload-sdk", "--note", "npm dependency")
    a.wctx("sync", "--remote", remote)
    topology = [p for p in remote_files(remote) if p.endswith("/topology.jsonl")]
    assert len(topology) == 1 and a.root not in remote_files(remote)[topology[0]]
    b.wctx("sync", "--remote", remote)
    relations = b.json("relations")
    found = {(r["from"], r["kind"], r["to"]) for r in relations["relations"]}
    assert ("ui", "uses", "sdk") in found, relations


def test_forget_by_the_items_own_machine_deletes_it_everywhere_and_anothers_only_there(team):
    remote, a, b = team
    mine = a.json("capture", "--finding", "forgettable alpha carries a pasted key", "--repo", "upload-sdk")
    theirs = a.json("capture", "--finding", "forgettable beta is wrong", "--repo", "upload-sdk")
    mine, theirs = mine["evidence"][0]["id"], theirs["evidence"][0]["id"]
    a.wctx("sync", "--remote", remote)
    b.wctx("sync", "--remote", remote)
    a.wctx("forget", mine, "--reason", "held a key", "--yes")  # Alice forgets her own item
    b.wctx("forget", theirs, "--reason", "wrong", "--yes")  # Bob forgets one of Alice's
    for _ in range(2):
        a.wctx("sync")
        b.wctx("sync")
    for m in (a, b):
        assert m.wctx("show", mine, check=False).returncode == 1
    # Bob's forget of Alice's item is his alone: it stays Alice's, on her machine and the branch.
    assert [r["id"] for r in a.json("search", "forgettable", "--all", "--all-status")["results"]] == [theirs]
    assert b.json("search", "forgettable", "--all", "--all-status")["results"] == []
    tree = "\n".join(remote_files(remote).values())
    assert "forgettable alpha" not in tree  # gone from the branch's files; tombstones name only ids
    assert mine in tree and "held a key" in tree


def test_a_retract_within_the_same_second_as_the_capture_still_travels(team, monkeypatch, capsys):
    remote, a, b = team
    monkeypatch.setattr(wctx, "utc_now", lambda: "2026-01-01T00:00:00Z")  # every step in one second

    def run(machine, *argv):
        monkeypatch.setenv("HOME", machine.home)
        capsys.readouterr()
        assert wctx.main(["--home", machine.store_dir, *argv]) == 0
        return capsys.readouterr().out

    item = json.loads(run(a, "capture", "--finding", "same second item", "--repo", "upload-sdk", "--json"))
    item = item["evidence"][0]["id"]
    run(a, "sync", "--remote", remote)
    run(b, "sync", "--remote", remote)
    run(a, "retract", item)
    run(a, "sync")
    run(b, "sync")
    run(a, "sync")
    for m in (a, b):
        assert json.loads(run(m, "show", item, "--json"))["status"] == "retracted", m.root


def test_no_revision_reaches_git_outside_the_end_of_options(team, monkeypatch):
    # Every commit a sync names to git (the fetched tip, the commit it built) goes through
    # run_git's revisions, which git reads after --end-of-options and never as an option.
    remote, a, b = team
    b.wctx("capture", "--finding", "bob learned that", "--repo", "sdk")
    b.wctx("sync", "--remote", remote)
    a.wctx("capture", "--finding", "alice learned this", "--repo", "upload-sdk")
    monkeypatch.setenv("HOME", a.home)
    calls = []
    real = wctx.run_git

    def recording(repo_path, args, *rest, **kw):
        calls.append((list(args), list(kw.get("revs") or ())))
        return real(repo_path, args, *rest, **kw)

    monkeypatch.setattr(wctx, "run_git", recording)
    store = wctx.open_store(a.store_dir)
    try:
        report = wctx.sync_memory(store, remote=remote)
        again = wctx.sync_memory(store)
    finally:
        store.close()
    assert report.pushed and report.imported["evidence"] == 1 and again.noop
    named = [revs for _, revs in calls if revs]
    assert any(wctx.is_object_id(r) for revs in named for r in revs)  # the fetched tip, by its id
    for args, _ in calls:
        for arg in args:
            assert not wctx.is_object_id(arg) and "^{" not in arg, (args, arg)


def test_each_tombstone_is_written_once_to_the_machines_events_file(team):
    remote, a, b = team
    ids = [a.json("capture", "--finding", "doomed %d" % i, "--repo", "upload-sdk")["evidence"][0]["id"]
           for i in range(2)]  # fmt: skip
    a.wctx("sync", "--remote", remote)
    b.wctx("sync", "--remote", remote)
    b.wctx("forget", *ids, "--reason", "wrong", "--yes")
    b.wctx("sync")
    events = [p for p in remote_files(remote) if p.endswith("/events.jsonl")]
    assert len(events) == 1
    lines = [json.loads(line) for line in remote_files(remote)[events[0]].splitlines()]
    tombstones = sorted(r["id"] for r in lines if r["type"] == "tombstone")
    assert tombstones == sorted(ids)


def test_a_file_whose_items_name_a_session_it_does_not_hold_is_skipped_whole(team, tmp_path):
    remote, a, b = team
    a.wctx("capture", "--summary", "alice's session", "--finding", "alice's item", "--repo", "upload-sdk")
    a.wctx("sync", "--remote", remote)
    files = remote_files(remote)
    session = next(json.loads(line) for text in files.values() for line in text.splitlines()
                   if json.loads(line)["type"] == "session")  # fmt: skip
    work = str(tmp_path / "stray")
    git(tmp_path, "clone", "-q", "-b", "wctx-memory", remote, work)
    stray = {"type": "evidence", "format": 1, "id": "ev-00000000ee", "session": session["id"],
             "repo": "upload-sdk", "kind": "finding", "claim": "stray item in another file", "anchors": []}  # fmt: skip
    own = dict(session, id="ses-00000000ee")
    mine = dict(stray, id="ev-00000000ef", session=own["id"], claim="well formed item of a third machine")
    bad_dir = os.path.join(work, "machines", "00000000000000ee", "sessions")
    os.makedirs(bad_dir)
    with open(os.path.join(bad_dir, "ses-00000000ee.jsonl"), "w") as fh:
        fh.write("".join(json.dumps(r) + "\n" for r in (own, mine, stray)))
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "stray")
    git(work, "push", "-q", "origin", "wctx-memory")
    got = b.json("sync", "--remote", remote)
    assert got["imported"]["evidence"] == 1 and got["imported"]["files"] == 2  # alice's file, her topology
    assert len(got["skipped"]) == 1 and "ses-00000000ee" in got["skipped"][0]
    found = {r["claim"] for r in b.json("search", "item", "--all")["results"]}
    assert found == {"alice's item"}


def _twins(team):
    """The same finding recorded independently on both machines, then shared both ways: each
    store keeps one item (its own) and knows the other machine's id for it."""
    remote, a, b = team
    spec = ("--finding", "uploadDocument drops the 419 expiry twin", "--file", "upload.ts#uploadDocument")
    mine = a.json("capture", *spec, cwd=a.repo)["evidence"][0]["id"]
    theirs = b.json("capture", *spec, cwd=b.repo)["evidence"][0]["id"]
    a.wctx("sync", "--remote", remote)
    b.wctx("sync", "--remote", remote)
    a.wctx("sync")
    for m in (a, b):
        hits = m.json("search", "uploadDocument expiry twin", "--all", "--all-status")["results"]
        assert len(hits) == 1, hits  # one item on each machine, not two
    return remote, a, b, mine, theirs


def test_a_status_change_of_one_twin_leaves_the_independent_record_of_the_other_machine(team):
    _, a, b, mine, theirs = _twins(team)
    assert a.json("show", theirs)["id"] == mine  # Bob's id finds Alice's twin on Alice's machine
    b.wctx("retract", theirs)
    for _ in range(2):
        b.wctx("sync")
        a.wctx("sync")
    # Alice recorded the same finding herself: Bob withdrawing his record does not withdraw hers.
    assert a.json("show", mine)["status"] == "active"
    hits = b.json("search", "uploadDocument expiry twin", "--all", "--all-status")["results"]
    assert [h["status"] for h in hits] == ["retracted"], hits


def test_a_confirmation_of_a_twin_stays_with_its_machine(team):
    _, a, b, mine, theirs = _twins(team)
    b.wctx("confirm", theirs, "--note", "re-read", cwd=b.repo)
    b.wctx("sync")
    a.wctx("sync")
    assert a.json("show", mine)["confirmed_at"] is None
    assert b.json("show", theirs)["confirmed_at"]


def test_forgetting_a_twin_on_one_machine_leaves_the_others_record_and_stays_gone_there(team):
    _, a, b, mine, theirs = _twins(team)
    b.wctx("forget", theirs, "--reason", "wrong", "--yes")
    for _ in range(2):
        b.wctx("sync")
        a.wctx("sync")
    assert b.json("search", "uploadDocument expiry twin", "--all", "--all-status")["results"] == []
    for item in (mine, theirs):
        assert b.wctx("show", item, check=False).returncode == 1, item
    assert [r["id"] for r in a.json("search", "uploadDocument expiry twin", "--all")["results"]] == [mine]


# A separate process that records findings into a store in a loop while something else runs, as a
# session-end hook or the MCP server would. Its patience for SQLite's write lock is shorter than
# the store's own (30 s), so that a sync holding the lock for seconds shows here at test scale:
# every write must be acknowledged, none may fail with "database is locked".
_WRITER = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
import wctx
home, repo, stop, patience_ms = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
store = wctx.open_store(home)
store.db.execute("PRAGMA busy_timeout = %d" % patience_ms)
print("ready", flush=True)
n = 0
while not os.path.exists(stop) or n < 3:
    item = {"kind": "finding", "claim": "concurrent finding number %d" % n, "detail": None,
            "repo": "sdk", "files": [], "confidence": None}
    try:
        got = wctx.capture(store, [item], summary="writer %d" % n, cwd=repo)
    except Exception as e:
        print(json.dumps({"error": "%s: %s" % (type(e).__name__, e), "n": n}), flush=True)
        sys.exit(1)
    print(json.dumps({"id": got["evidence"][0]["id"]}), flush=True)
    n += 1
    time.sleep(0.05)
"""


def _push_big_pull(remote, root, sessions, per_session, machine="00000000000000aa"):
    """A third machine's share of the team branch, written straight into the remote with one
    git fast-import: ``sessions`` session files of ``per_session`` items each."""
    stream = [b"commit refs/heads/wctx-memory\n", b"committer t <t@example.invalid> 1700000000 +0000\n",
              b"data 4\nbig\n"]  # fmt: skip
    n = 0
    for s in range(sessions):
        sid = "ses-%010x" % (0xA000000000 + s)
        lines = [{"type": "session", "format": 1, "id": sid, "agent": "claude-code", "repo": "upload-sdk",
                  "started_at": "2026-01-01T00:00:00Z", "ended_at": "2026-01-01T01:00:00Z",
                  "summary": "bulk session %d" % s}]  # fmt: skip
        for _ in range(per_session):
            lines.append({"type": "evidence", "format": 1, "id": "ev-%010x" % (0xA000000000 + n), "session": sid,
                          "repo": "upload-sdk", "root_commit": root, "kind": "finding",
                          "claim": "bulk finding %d about the retry budget %d" % (n, n % 89), "status": "active",
                          "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
                          "anchors": [{"repo": "upload-sdk", "root_commit": root, "path": "upload.ts"}]})  # fmt: skip
            n += 1
        data = "".join(json.dumps(r) + "\n" for r in lines).encode()
        path = "machines/%s/sessions/%s.jsonl" % (machine, sid)
        stream.append(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))
    stream.append(b"done\n")
    subprocess.run(["git", "-C", remote, "fast-import", "--quiet", "--done"], input=b"".join(stream),
                   env=git_env(), check=True, capture_output=True)  # fmt: skip
    return n


def test_a_capture_during_a_large_sync_is_never_refused_for_a_locked_store(team, tmp_path):
    remote, _, b = team
    root = git(b.repo, "rev-list", "--max-parents=0", "HEAD").strip()
    total = _push_big_pull(remote, root, sessions=300, per_session=100)
    stop = str(tmp_path / "stop")
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, os.path.dirname(WCTX_SCRIPT), b.store_dir, b.repo, stop, "2000"],
        env=b.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout.readline().strip() == "ready"
        got = b.json("sync", "--remote", remote)
    finally:
        open(stop, "w").close()
        out, err = writer.communicate(timeout=120)
    lines = [json.loads(line) for line in out.splitlines()]
    assert [r for r in lines if "error" in r] == [] and writer.returncode == 0, (out, err)
    written = [r["id"] for r in lines]
    assert len(written) >= 3
    assert got["imported"]["evidence"] == total and got["skipped"] == []
    store = wctx.open_store(b.store_dir)
    try:
        held = {r["id"] for r in store.all("SELECT id FROM evidence")}
    finally:
        store.close()
    assert set(written) <= held
    assert len(held) == total + len(written)


def test_a_sync_killed_midway_is_completed_by_the_next_with_nothing_twice_or_lost(team):
    import signal
    import sqlite3
    import time

    remote, _, b = team
    root = git(b.repo, "rev-list", "--max-parents=0", "HEAD").strip()
    total = _push_big_pull(remote, root, sessions=300, per_session=100)
    mine = b.json("capture", "--finding", "bob's own finding before the pull", "--repo", "sdk")
    proc = subprocess.Popen([sys.executable, WCTX_SCRIPT, "sync", "--remote", remote], cwd=b.root, env=b.env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    db = sqlite3.connect(os.path.join(b.store_dir, "wctx.db"), timeout=60)
    try:
        while proc.poll() is None:  # kill it once some of the pull is in, and not all of it
            if db.execute("SELECT count(*) FROM sync_files").fetchone()[0] >= 3:
                os.kill(proc.pid, signal.SIGKILL)
                break
            time.sleep(0.005)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
        partly = db.execute("SELECT count(*) FROM evidence").fetchone()[0]
    finally:
        db.close()
    assert 1 < partly < total + 1
    got = b.json("sync")  # the remote was remembered before the kill
    assert got["skipped"] == []
    assert got["imported"]["evidence"] == total + 1 - partly
    again = b.json("sync")
    assert again["imported"]["evidence"] == 0 and again["imported"]["files"] == 0
    store = wctx.open_store(b.store_dir)
    try:
        ids = [r["id"] for r in store.all("SELECT id FROM evidence")]
        bulk = store.one("SELECT count(*) AS n FROM evidence WHERE claim LIKE 'bulk finding %'")["n"]
    finally:
        store.close()
    assert len(ids) == len(set(ids)) == total + 1 and bulk == total
    assert mine["evidence"][0]["id"] in ids
    # Bob's share of the branch holds his own session only: none of the pulled ones as his.
    ours = [p for p in remote_files(remote) if "/sessions/" in p and "/00000000000000aa/" not in p]
    assert len(ours) == 1
    text = remote_files(remote)[ours[0]]
    assert "bob's own finding" in text and "bulk finding" not in text


def _rebuilt_from_scratch_changes_nothing(machine):
    """A sync that has forgotten what it exported before, and what changed since, builds every
    file of this machine again (its own sessions and its changes to a teammate's items); the
    branch must already hold exactly those bytes (nothing to push), as an incremental sync left
    it."""
    import sqlite3

    db = sqlite3.connect(os.path.join(machine.store_dir, "wctx.db"))
    with db:
        db.execute("DELETE FROM sync_exported")
        db.execute("DELETE FROM sync_state WHERE key IN ('fingerprint', 'context', 'events')")
        db.execute("INSERT INTO sync_changes(session_id) SELECT id FROM sessions")
    db.close()
    again = machine.json("sync")
    assert again["noop"] is False and again["pushed"] is None, again
    assert again["exported"] == {"files": 0, "removed": 0}, again


def test_an_incremental_sync_leaves_the_branch_as_a_full_rebuild_would(team):
    remote, a, b = team

    def capture(m, claim, *more, **kw):
        return m.json("capture", "--finding", claim, *more, cwd=kw.get("cwd") or m.repo)["evidence"][0]["id"]

    def check():
        a.wctx("sync")
        _rebuilt_from_scratch_changes_nothing(a)

    first = capture(a, "uploadDocument retries once on 419", "--file", "upload.ts#uploadDocument")
    second = capture(a, "the expiry header is read twice", "--file", "upload.ts")
    third = capture(a, "the retry budget is global")
    session = a.json("show", third)["session"]
    a.json("sync", "--remote", remote)
    _rebuilt_from_scratch_changes_nothing(a)
    capture(a, "a fourth finding in a new session")
    check()
    a.wctx("capture", "--session", session, "--finding", "a later finding of the third session", cwd=a.repo)
    check()
    a.wctx("retract", first)
    check()
    a.wctx("confirm", second, "--note", "re-read", cwd=a.repo)
    check()
    newer = capture(a, "the retry budget is per client")
    a.wctx("supersede", third, "--by", newer)
    check()
    a.wctx("forget", newer, "--reason", "duplicate", "--yes")
    check()
    a.wctx("forget", "--session", session, "--reason", "a bad session", "--yes")
    check()
    # A teammate's finding, then their retraction of it and of one of ours (which stays theirs),
    # all imported here.
    bobs = capture(b, "bob's finding on the same upload path", "--file", "upload.ts")
    b.wctx("sync", "--remote", remote)
    check()
    b.wctx("retract", bobs)
    b.wctx("retract", second)
    b.wctx("sync")
    pulled = a.json("sync")
    assert pulled["imported"]["updated"] == 1
    _rebuilt_from_scratch_changes_nothing(a)
    assert a.json("show", bobs)["status"] == "retracted"
    assert a.json("show", second)["status"] == "active"
    # Our change to a teammate's item stays in our events file through later syncs about
    # other things, until the teammate's own file says the same.
    theirs = capture(b, "bob's second finding", "--file", "upload.ts")
    b.wctx("sync")
    a.wctx("sync")
    a.wctx("confirm", theirs, "--note", "re-read on alice's machine", cwd=a.repo)
    check()
    capture(a, "an unrelated finding of alice's")
    check()
    b.wctx("sync")
    a.wctx("sync")
    check()


def test_what_is_written_while_a_sync_pushes_goes_out_with_the_next_sync(team, monkeypatch):
    remote, a, b = team
    first = a.json("capture", "--finding", "the upload retries forever", "--repo", "upload-sdk")
    a.wctx("sync", "--remote", remote)
    a.wctx("capture", "--finding", "the retry has no jitter", "--repo", "upload-sdk")
    real_push = wctx._sync_push
    during = []

    def push_while_alice_works(store_, remote_, updates_):
        if not during:  # after the files were built from the store, before sync remembers them
            during.append(a.json("capture", "--finding", "captured during the push", "--repo", "upload-sdk"))
            a.wctx("retract", first["evidence"][0]["id"])
        return real_push(store_, remote_, updates_)

    monkeypatch.setattr(wctx, "_sync_push", push_while_alice_works)
    monkeypatch.setenv("HOME", a.home)
    store = wctx.open_store(a.store_dir)
    try:
        assert wctx.sync_memory(store).pushed
        again = wctx.sync_memory(store)
    finally:
        store.close()
    assert not again.noop and again.pushed, again.as_dict()
    b.wctx("sync", "--remote", remote)
    claims = {r["claim"] for r in b.json("search", "retry upload push jitter", "--all")["results"]}
    assert "captured during the push" in claims and "the retry has no jitter" in claims
    assert b.json("show", first["evidence"][0]["id"])["status"] == "retracted"


def test_an_item_imported_into_a_session_already_here_goes_out_with_the_next_sync(team, tmp_path):
    remote, a, b = team
    a.wctx("capture", "--summary", "the upload path", "--finding", "the upload retries on 503", cwd=a.repo)
    lines = [json.loads(line) for line in a.wctx("export").stdout.splitlines()]
    # A session that came by hand, in an export that names no machine (never one of this
    # machine's own sessions, which an import adds nothing to), and is synced once.
    session = dict(
        next(r for r in lines if r["type"] == "session"), id="ses-00000000cd", author="Carol <c@x.org>"
    )
    session.pop("machine", None)
    first = dict(next(r for r in lines if r["type"] == "evidence"), id="ev-00000000aa", session=session["id"])
    path = tmp_path / "more.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (session, first)) + "\n")
    a.wctx("import-evidence", str(path))
    a.wctx("sync", "--remote", remote)
    item = dict(first, id="ev-00000000ab", claim="the upload gives up after 5 tries")
    path.write_text("\n".join(json.dumps(r) for r in (session, item)) + "\n")
    a.wctx("import-evidence", str(path))
    assert a.json("sync")["pushed"]
    b.wctx("sync", "--remote", remote)
    claims = {r["claim"] for r in b.json("search", "upload tries retries", "--all")["results"]}
    assert claims == {"the upload retries on 503", "the upload gives up after 5 tries"}


def test_a_store_from_before_it_named_its_changes_shares_what_changed_before_the_upgrade(team):
    import sqlite3

    remote, a, b = team
    theirs = b.json("capture", "--finding", "bob's finding on the upload", "--file", "upload.ts", cwd=b.repo)
    theirs = theirs["evidence"][0]["id"]
    b.wctx("sync", "--remote", remote)
    a.wctx("sync", "--remote", remote)
    # Changed on a wctx from before m021: an item of Alice's own, and Bob's item retracted here.
    a.wctx("capture", "--finding", "alice's finding before the upgrade", "--repo", "upload-sdk")
    a.wctx("retract", theirs)
    db = sqlite3.connect(os.path.join(a.store_dir, "wctx.db"))
    with db:
        for (trigger,) in db.execute(
            "SELECT name FROM sqlite_master WHERE name LIKE 'sync_changes_%'"
        ).fetchall():
            db.execute("DROP TRIGGER %s" % trigger)
        db.execute("DROP TABLE sync_changes")
        db.execute("DELETE FROM sync_state WHERE key IN ('context', 'events')")
        db.execute("ALTER TABLE evidence DROP COLUMN symptom")  # and from before m022, which follows
        db.execute("DELETE FROM schema_migrations WHERE number >= 21")
        db.execute("PRAGMA user_version = 20")
    db.close()
    assert a.json("sync")["pushed"]
    events = [
        json.loads(line)
        for path, text in remote_files(remote).items()
        if path.endswith("events.jsonl")
        for line in text.splitlines()
    ]
    assert any(r.get("id") == theirs and r.get("status") == "retracted" for r in events), events
    b.wctx("sync")
    claims = {r["claim"] for r in b.json("search", "finding upgrade upload", "--all")["results"]}
    assert "alice's finding before the upgrade" in claims
    _rebuilt_from_scratch_changes_nothing(a)


def test_a_sync_after_one_capture_builds_only_that_session(team, monkeypatch):
    remote, a, _ = team
    for n in range(4):
        a.wctx("capture", "--finding", "finding %d of its own session" % n, "--repo", "upload-sdk")
    a.wctx("sync", "--remote", remote)
    late = a.json("capture", "--finding", "one more finding", "--repo", "upload-sdk")
    built = []
    real = wctx.export_records

    def spy(store_, repo=None, sessions=None):
        for sid, record in real(store_, repo=repo, sessions=sessions):
            built.append(sid)
            yield sid, record

    monkeypatch.setattr(wctx, "export_records", spy)
    monkeypatch.setenv("HOME", a.home)
    store = wctx.open_store(a.store_dir)
    try:
        report = wctx.sync_memory(store)
        assert report.pushed and set(built) == {late["session"]}
        built.clear()
        earlier = store.one("SELECT id, session_id FROM evidence WHERE claim LIKE 'finding 2 %'")
        wctx.retract(store, earlier["id"], reason="wrong")
        assert wctx.sync_memory(store).pushed and set(built) == {earlier["session_id"]}
    finally:
        store.close()


def test_a_branch_that_points_at_a_blob_is_named_with_its_repair(team, tmp_path):
    remote, a, _ = team
    a.wctx("capture", "--finding", "uploadDocument gives up on 419", "--repo", "upload-sdk")
    blob = subprocess.run(
        ["git", "-C", remote, "hash-object", "-w", "--stdin"], input=b"not a commit\n", capture_output=True,
        env=git_env(), check=True,
    ).stdout.decode().strip()  # fmt: skip
    # git refuses to point a branch at a blob; a damaged or hand-edited remote can still hold one.
    with open(os.path.join(remote, "refs", "heads", "wctx-memory"), "w") as fh:
        fh.write(blob + "\n")
    for _ in range(2):  # said the same each time, not once then "nothing to push"
        proc = a.wctx("sync", "--remote", remote, check=False)
        assert proc.returncode == 1 and proc.stdout == "" and proc.stderr.count("\n") == 1, proc
        assert "points at a blob, not a commit" in proc.stderr and ":refs/heads/wctx-memory" in proc.stderr
    os.remove(os.path.join(remote, "refs", "heads", "wctx-memory"))  # the repair it names
    assert a.json("sync", "--remote", remote)["pushed"]


def test_a_memory_file_larger_than_any_machine_writes_is_skipped_unread(team, monkeypatch, capsys, tmp_path):
    remote, a, b = team
    root = git(b.repo, "rev-list", "--max-parents=0", "HEAD").strip()
    _push_big_pull(remote, root, sessions=3, per_session=2)  # three small files of a third machine
    # A fourth machine's one session of 400 items (~150 kB).
    clone = str(tmp_path / "fourth")
    git(tmp_path, "clone", "-q", "-b", "wctx-memory", remote, clone)
    sid = "ses-00000000bb"
    lines = [{"type": "session", "format": 1, "id": sid, "agent": "cli", "repo": "upload-sdk"}]
    lines += [{"type": "evidence", "format": 1, "id": "ev-%010x" % (0xBB00000000 + n), "session": sid,
               "repo": "upload-sdk", "root_commit": root, "kind": "finding",
               "claim": "a large session's finding %d about the retry budget and its many callers" % n}
              for n in range(400)]  # fmt: skip
    path = os.path.join(clone, "machines", "00000000000000bb", "sessions", sid + ".jsonl")
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as fh:
        fh.write("".join(json.dumps(r) + "\n" for r in lines))
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", "large")
    git(clone, "push", "-q", "origin", "wctx-memory")
    monkeypatch.setattr(wctx, "_SYNC_FILE_MAX_BYTES", 64 * 1024)  # the 400-item file is ~150 kB
    monkeypatch.setenv("HOME", b.home)
    read = []
    real = wctx._sync_read_blobs
    monkeypatch.setattr(
        wctx, "_sync_read_blobs", lambda store, blobs: read.extend(blobs) or real(store, blobs)
    )
    capsys.readouterr()
    assert wctx.main(["--home", b.store_dir, "sync", "--remote", remote, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["imported"]["evidence"] == 6
    (skipped,) = got["skipped"]
    assert skipped.startswith("machines/00000000000000bb/sessions/") and "more than the 0 MiB" not in skipped
    assert "bytes, more than the" in skipped
    big_blob = git(remote, "rev-parse", "wctx-memory:" + skipped.split(":")[0]).strip()
    assert big_blob not in read  # its content was never read


def test_a_file_of_nothing_but_newlines_imports_as_nothing(team, tmp_path):
    remote, a, b = team
    clone = str(tmp_path / "blank")
    a.wctx("capture", "--finding", "uploadDocument gives up on 419", "--repo", "upload-sdk")
    a.wctx("sync", "--remote", remote)
    git(tmp_path, "clone", "-q", "-b", "wctx-memory", remote, clone)
    path = os.path.join(clone, "machines", "00000000000000cc", "sessions", "ses-00000000cc.jsonl")
    os.makedirs(os.path.dirname(path))
    with open(path, "wb") as fh:
        fh.write(b"\n" * 1_000_000)
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", "blank")
    git(clone, "push", "-q", "origin", "wctx-memory")
    got = b.json("sync", "--remote", remote)
    assert got["imported"]["evidence"] == 1 and got["skipped"] == []


# -- one branch per workspace: a person fetches only the workspaces they are in ----------------------


def _project(tmp_path, name, filename, text):
    upstream = os.path.join(str(tmp_path), "upstream", name)
    os.makedirs(upstream)
    git(upstream, "init", "-q")
    with open(os.path.join(upstream, filename), "w") as fh:
        fh.write(text)
    git(upstream, "add", "-A")
    git(upstream, "commit", "-q", "-m", "initial")
    return upstream


@pytest.fixture
def billing(team, tmp_path):
    """Carol, on the same team remote, works on another product: a billing service in the
    workspace ``billing``, and none of the ``uploads`` repositories."""
    remote, a, b = team
    upstream = _project(tmp_path, "billing", "invoice.py", "def total(lines):\n    return sum(lines)\n")
    c = Machine(tmp_path, "carol")
    c.repo = os.path.join(c.home, "src", "billing")
    git(tmp_path, "clone", "-q", upstream, c.repo)
    c.wctx("repo", "add", c.repo, "--name", "billing", "--workspace", "billing")
    return remote, a, b, c


def _claims(machine, query):
    return {r["claim"] for r in machine.json("search", query, "--all")["results"]}


def _has_object(machine, sha):
    store_git = os.path.join(machine.store_dir, "sync", "memory.git")
    return subprocess.run(["git", "-C", store_git, "cat-file", "-e", sha], env=git_env()).returncode == 0


def test_a_person_fetches_only_the_workspaces_they_are_in(billing):
    remote, a, b, c = billing
    a.wctx(
        "capture", "--finding", "uploadDocument gives up on a 419 expiry", "--file", "upload.ts", cwd=a.repo
    )
    c.wctx("capture", "--finding", "invoice total ignores refunds", "--file", "invoice.py", cwd=c.repo)
    a.wctx("sync", "--remote", remote)
    c.wctx("sync", "--remote", remote)
    assert sorted(remote_branches(remote)) == [
        "wctx-memory",
        "wctx-memory-ws/billing",
        "wctx-memory-ws/uploads",
    ]
    # Each item lives on its workspace's branch; the team's branch holds what everyone needs.
    uploads = remote_files(remote, "wctx-memory-ws/uploads")
    assert "gives up on a 419" in "".join(uploads.values()) and "refunds" not in "".join(uploads.values())
    team_branch = remote_files(remote, "wctx-memory")
    assert all(p.endswith("/topology.jsonl") for p in team_branch), sorted(team_branch)
    # Carol's machine never fetched the uploads branch: not one of its objects is here.
    uploads_tip = git(remote, "rev-parse", "wctx-memory-ws/uploads").strip()
    assert not _has_object(c, uploads_tip)
    assert "uploadDocument gives up on a 419 expiry" not in _claims(c, "upload expiry 419")
    text = c.wctx("sync").stdout
    assert "not pulled: the workspaces uploads" in text, text
    # Bob, in uploads, gets Alice's item and nothing of billing.
    got = b.json("sync", "--remote", remote)
    assert got["workspaces"] == ["uploads"] and got["elsewhere"] == ["billing"]
    assert "uploadDocument gives up on a 419 expiry" in _claims(b, "upload expiry 419")
    assert "invoice total ignores refunds" not in _claims(b, "invoice refunds")
    billing_tip = git(remote, "rev-parse", "wctx-memory-ws/billing").strip()
    assert not _has_object(b, billing_tip)


def test_joining_a_workspace_pulls_what_its_branch_holds(billing, tmp_path):
    remote, a, b, c = billing
    a.wctx(
        "capture", "--finding", "uploadDocument gives up on a 419 expiry", "--file", "upload.ts", cwd=a.repo
    )
    a.wctx("sync", "--remote", remote)
    c.wctx("sync", "--remote", remote)
    assert "uploadDocument gives up on a 419 expiry" not in _claims(c, "upload expiry 419")
    # Carol checks out the SDK and adds it to uploads: her next sync fetches that branch.
    sdk = os.path.join(c.home, "src", "sdk")
    git(tmp_path, "clone", "-q", os.path.join(str(tmp_path), "upstream", "upload-sdk"), sdk)
    c.wctx("repo", "add", sdk, "--name", "sdk", "--workspace", "uploads")
    got = c.json("sync")
    assert got["workspaces"] == ["billing", "uploads"] and got["imported"]["evidence"] == 1
    hits = c.json("search", "upload expiry 419", "--all")["results"]
    assert [(h["claim"], h["repo"]) for h in hits] == [("uploadDocument gives up on a 419 expiry", "sdk")]


def test_an_item_about_a_repository_in_no_workspace_reaches_everyone(billing, tmp_path):
    remote, a, b, c = billing
    upstream = _project(tmp_path, "tools", "lint.sh", "echo lint\n")
    tools = os.path.join(a.home, "src", "tools")
    git(tmp_path, "clone", "-q", upstream, tools)
    a.wctx("repo", "add", tools, "--name", "tools")
    a.wctx("capture", "--finding", "the lint script skips generated files", "--file", "lint.sh", cwd=tools)
    a.wctx("sync", "--remote", remote)
    assert "skips generated files" in "".join(remote_files(remote, "wctx-memory").values())
    for m in (b, c):
        m.wctx("sync", "--remote", remote)
        assert [r["claim"] for r in m.json("search", "lint generated", "--all")["results"]] == [
            "the lint script skips generated files"
        ]


def test_an_item_moves_to_the_team_branch_when_its_repository_leaves_every_workspace(team, tmp_path):
    remote, a, b = team
    item = a.json("capture", "--finding", "uploadDocument gives up on a 419 expiry", "--repo", "upload-sdk")
    item = item["evidence"][0]["id"]
    a.wctx("sync", "--remote", remote)
    a.wctx("workspace", "remove", "uploads", "upload-sdk")
    a.wctx("sync")
    assert item in "".join(remote_files(remote, "wctx-memory").values())
    assert item not in "".join(remote_files(remote, "wctx-memory-ws/uploads").values())
    b.wctx("sync", "--remote", remote)  # Bob still has the SDK in uploads: he reads both branches
    assert b.json("show", item)["claim"] == "uploadDocument gives up on a 419 expiry"


def test_a_noop_sync_fetches_nothing_and_still_names_a_skipped_file(team, monkeypatch):
    remote, a, _ = team
    a.wctx("capture", "--finding", "noop check", "--repo", "upload-sdk")
    a.wctx("sync", "--remote", remote)
    assert a.json("sync")["noop"] is True
    # The shortcut: a no-op sync lists the remote's branches and runs no fetch at all.
    monkeypatch.setenv("HOME", a.home)
    calls = []
    real = wctx.run_git

    def spy(path, args, *rest, **kw):
        calls.append(args[0])
        return real(path, args, *rest, **kw)

    monkeypatch.setattr(wctx, "run_git", spy)
    store = wctx.open_store(a.store_dir)
    try:
        report = wctx.sync_memory(store)
    finally:
        store.close()
    assert report.noop and "fetch" not in calls and "ls-remote" in calls, calls


# -- an incremental sync looks at what changed on the branch, not at every file it holds ----------


def _push_file(tmp_path, remote, path, text, branch="wctx-memory"):
    """Commit ``text`` as ``path`` (None: delete it) on ``branch`` of the team's remote, as a
    teammate's own git would."""
    work = str(tmp_path / ("push-%d" % len(os.listdir(str(tmp_path)))))
    git(tmp_path, "clone", "-q", "-b", branch, remote, work)
    full = os.path.join(work, path)
    if text is None:
        os.remove(full)
    else:
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as fh:
            fh.write(text)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "edit " + path)
    git(work, "push", "-q", "origin", branch)


def _session_file(sid, claims, machine=None):
    records = [dict({"type": "session", "format": 1, "id": sid, "agent": "cli", "repo": "upload-sdk"},
                    **({"machine": machine} if machine else {}))]  # fmt: skip
    records += [{"type": "evidence", "format": 1, "id": "ev-%s%02d" % (sid[-8:], n), "session": sid,
                 "repo": "upload-sdk", "kind": "finding", "claim": claim} for n, claim in enumerate(claims)]  # fmt: skip
    return "".join(json.dumps(r) + "\n" for r in records)


def test_an_incremental_sync_reads_only_the_files_that_changed(team, tmp_path, monkeypatch):
    remote, a, b = team
    a.wctx("capture", "--finding", "alice starts the team's branch", "--repo", "upload-sdk")
    a.wctx("sync", "--remote", remote)
    for n in range(12):
        _push_file(tmp_path, remote, "machines/%016x/sessions/ses-%010x.jsonl" % (0xD0 + n, 0xD0 + n),
                   _session_file("ses-%010x" % (0xD0 + n), ["a teammate's finding number %d" % n]))  # fmt: skip
    assert b.json("sync", "--remote", remote)["imported"]["evidence"] == 13
    _push_file(tmp_path, remote, "machines/%016x/sessions/ses-%010x.jsonl" % (0xE0, 0xE0),
               _session_file("ses-%010x" % 0xE0, ["the one new finding since bob's sync"]))  # fmt: skip
    listed, read = [], []
    real = wctx.run_git

    def spy(path, args, *rest, **kw):
        out = real(path, args, *rest, **kw)
        if args[0] == "ls-tree":
            listed.extend(out[1].split(b"\0")[:-1])
        if args[:2] == ["cat-file", "--batch"]:
            read.extend(kw["input_bytes"].split())
        return out

    monkeypatch.setattr(wctx, "run_git", spy)
    monkeypatch.setenv("HOME", b.home)
    store = wctx.open_store(b.store_dir)
    try:
        report = wctx.sync_memory(store)
        machine = wctx.store_machine_id(store)
    finally:
        store.close()
    # The branch holds 13 session files of others; the sync read the one that is new, and listed
    # none of them: only bob's own files (he has no session), which it builds its commit on.
    assert report.imported["files"] == 1 and report.imported["evidence"] == 1 and len(read) == 1
    assert listed and {e.split(b"\t")[1].split(b"/")[1] for e in listed} == {machine.encode()}
    assert "the one new finding since bob's sync" in _claims(b, "new finding since")


def test_a_file_that_could_not_be_imported_is_named_again_and_read_once_repaired(team, tmp_path):
    remote, a, b = team
    a.wctx("capture", "--finding", "alice starts the team's branch", "--repo", "upload-sdk")
    a.wctx("sync", "--remote", remote)
    sid, path = "ses-00000000f1", "machines/00000000000000f1/sessions/ses-00000000f1.jsonl"
    _push_file(tmp_path, remote, path, _session_file(sid, ["damaged file's finding"]) + '{"type": "evid\n')
    link = "machines/00000000000000f2/sessions/ses-00000000f2.jsonl"
    work = str(tmp_path / "link")
    git(tmp_path, "clone", "-q", "-b", "wctx-memory", remote, work)
    os.makedirs(os.path.join(work, os.path.dirname(link)))
    os.symlink("/etc/passwd", os.path.join(work, link))
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "a link")
    git(work, "push", "-q", "origin", "wctx-memory")
    first = b.json("sync", "--remote", remote)
    assert sorted(s.split(":")[0] for s in first["skipped"]) == [path, link]
    # Someone else's change moves the branch: bob's next sync imports it, and still names both
    # files it could not read, although neither changed.
    a.wctx("capture", "--finding", "alice's later finding about retries", "--repo", "upload-sdk")
    a.wctx("sync", "--remote", remote)
    _push_file(tmp_path, remote, "machines/00000000000000f3/sessions/ses-00000000f3.jsonl",
               _session_file("ses-00000000f3", ["a third teammate's finding"]))  # fmt: skip
    second = b.json("sync")
    assert second["imported"]["evidence"] == 2 and second["noop"] is False
    assert sorted(s.split(":")[0] for s in second["skipped"]) == [path, link]
    # A store last synced by an earlier wctx, which did not keep what it could not import: its
    # next sync reads every file, and names both again.
    store = wctx.open_store(b.store_dir)
    try:
        with store.atomic():
            store.db.execute("DELETE FROM sync_state WHERE key = 'unread' OR key LIKE 'unread %'")
    finally:
        store.close()
    _push_file(tmp_path, remote, "machines/00000000000000f5/sessions/ses-00000000f5.jsonl",
               _session_file("ses-00000000f5", ["a fifth teammate's finding"]))  # fmt: skip
    upgraded = b.json("sync")
    assert upgraded["imported"]["evidence"] == 1
    assert sorted(s.split(":")[0] for s in upgraded["skipped"]) == [path, link]
    # Repaired, the file is read by the next sync, whatever else changed.
    _push_file(tmp_path, remote, path, _session_file(sid, ["damaged file's finding"]))
    third = b.json("sync")
    assert third["imported"]["evidence"] == 1
    assert [s.split(":")[0] for s in third["skipped"]] == [link]
    assert "damaged file's finding" in _claims(b, "damaged file finding")


def test_a_copy_of_a_teammates_session_is_not_read_while_the_teammates_own_file_stands(team, tmp_path):
    remote, a, b = team
    a.wctx("capture", "--finding", "alice's own finding about the expiry", "--repo", "upload-sdk")
    a.wctx("sync", "--remote", remote)
    b.wctx("sync", "--remote", remote)
    files = remote_files(remote)
    (own,) = [p for p in files if "/sessions/" in p]
    machine, sid = own.split("/")[1], own.split("/")[-1][: -len(".jsonl")]
    # A third machine's file claims alice's session, with an item she never recorded. Alice's own
    # file did not change since bob last read it: only the copy is new on the branch.
    copy = "machines/00000000000000f4/sessions/%s.jsonl" % sid
    branch = next(name for name in remote_branches(remote) if own in remote_files(remote, name))
    text = _session_file(sid, ["an injected claim in alice's name"], machine=machine)
    _push_file(tmp_path, remote, copy, text, branch=branch)
    b.wctx("sync")
    assert "an injected claim in alice's name" not in _claims(b, "injected claim alice name")
    assert _claims(b, "alice own finding expiry") == {"alice's own finding about the expiry"}


def test_a_sync_whose_last_branch_tip_is_gone_reads_every_file(team, tmp_path):
    remote, a, b = team
    a.wctx("capture", "--finding", "alice's first finding on the branch", "--repo", "upload-sdk")
    a.wctx("sync", "--remote", remote)
    b.wctx("sync", "--remote", remote)
    a.wctx("capture", "--finding", "alice's second finding on the branch", "--repo", "upload-sdk")
    a.wctx("sync")
    # The commit bob's last sync left the branches at is no longer in his sync repository (pruned,
    # or a store copied from elsewhere): the next sync cannot compare with it, and reads it all.
    store = wctx.open_store(b.store_dir)
    try:
        with store.atomic():
            store.db.execute(
                "UPDATE sync_state SET value = ? WHERE key = 'tip' OR key LIKE 'tip %'", ("ab" * 20,)
            )
    finally:
        store.close()
    got = b.json("sync")
    assert got["imported"]["evidence"] == 1 and got["skipped"] == []
    assert _claims(b, "alice finding on the branch") == {
        "alice's first finding on the branch", "alice's second finding on the branch"}  # fmt: skip


# A wctx command in a process whose address space is limited to sys.argv[1] MB, run as the
# script runs.
LIMITED = r"""
import resource, runpy, sys
limit = int(sys.argv.pop(1)) << 20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="RLIMIT_AS bounds the address space on Linux"
)
def test_a_first_sync_or_export_of_a_large_memory_holds_a_session_of_it_at_a_time(team, tmp_path):
    # 30,000 items of 3 kB in 300 sessions: holding every file a first sync builds (and its
    # records) takes more than 256 MB of address space, every record an export writes more than
    # 120 MB; one session's file at a time takes neither.
    remote, a, _ = team
    words = " ".join("word%d" % (k % 400) for k in range(600))[:3000]
    corpus = tmp_path / "large.jsonl"
    with open(str(corpus), "w", encoding="utf-8") as fh:
        for s in range(300):
            sid = "ses-%010x" % (0xA000 + s)
            fh.write(
                json.dumps({"type": "session", "format": 1, "id": sid, "agent": "cli", "repo": "upload-sdk"})
            )
            fh.write("\n")
            for i in range(100):
                fh.write(json.dumps({"type": "evidence", "format": 1, "id": "ev-%010x" % (s * 100 + i), "session": sid,
                                     "repo": "upload-sdk", "kind": "finding",
                                     "claim": "item %d: %s" % (s * 100 + i, words)}) + "\n")  # fmt: skip
    assert a.json("import-evidence", str(corpus))["evidence"] == 30000

    def limited(mb, *argv):
        proc = subprocess.run(
            [sys.executable, "-c", LIMITED, str(mb), WCTX_SCRIPT, *argv],
            cwd=a.root, env=a.env(), capture_output=True,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stdout.decode("utf-8")

    def items(lines):
        return {json.loads(line)["id"] for line in lines if '"type": "evidence"' in line}

    assert json.loads(limited(256, "sync", "--remote", remote, "--json"))["exported"]["files"] >= 300
    assert len(items(line for text in remote_files(remote).values() for line in text.splitlines())) == 30000
    assert len(items(limited(120, "export").splitlines())) == 30000
    out = tmp_path / "export"
    assert json.loads(limited(120, "export", "--dir", str(out), "--json"))["evidence"] == 30000
    assert len(items(line for f in out.iterdir() for line in f.read_text("utf-8").splitlines())) == 30000
