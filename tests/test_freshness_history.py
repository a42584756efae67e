"""Reasons on real histories: a stale citation names only the commits whose diff against their
parent(s) changed the cited symbol, on histories with merges, reverts, cherry-picks, renames, a
checkout moved backwards and files with many versions; the verdict comes from the two end states.

Each repository is built in the test with commits dated on purpose: git lists commits by date,
so a side branch's commit can sit between two commits of the main line, as on real projects."""

from __future__ import annotations

import os
import subprocess

from conftest import GIT_TEST_OPTIONS, git_env

import wctx

MODULE = """def alpha(x):
    return x + 1


def beta(y):
    return y * 2


def gamma(z):
    return z - 3
"""


class History:
    """A repository whose commits carry the dates we give them (seconds after a fixed start)."""

    def __init__(self, repo):
        self.repo = repo
        self.clock = 0

    def git(self, *args, when=None):
        env = git_env()
        if when is not None:
            stamp = "@%d +0000" % (1700000000 + when)
            env.update(GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
        proc = subprocess.run(["git", *GIT_TEST_OPTIONS, "-C", self.repo.path, *args], env=env,
                              capture_output=True, check=False)  # fmt: skip
        assert proc.returncode == 0, proc.stderr.decode()
        return proc.stdout.decode().strip()

    def edit(self, path, old, new, message, when):
        text = self.repo.read(path)
        assert old in text, (old, text)
        self.repo.write(path, text.replace(old, new, 1))
        return self.commit(message, when)

    def commit(self, message, when):
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message, when=when)
        return self.git("rev-parse", "HEAD")

    def merge(self, branch, message, when, ok=True):
        env_args = ["merge", "-q", "--no-ff", "--no-edit", "-m", message, branch]
        if ok:
            self.git(*env_args, when=when)
        else:  # a conflict, resolved by the caller and committed with commit()
            env = git_env()
            subprocess.run(["git", *GIT_TEST_OPTIONS, "-C", self.repo.path, *env_args], env=env,
                           capture_output=True, check=False)  # fmt: skip
        return self.git("rev-parse", "HEAD")


def setup(git_repo, store, files=None):
    repo = git_repo("lib", files or {"lib/mod.py": MODULE})
    wctx.register_repo(store, repo.path, name="lib")
    history = History(repo)
    history.git("branch", "-M", "main")
    return repo, history


def capture(store, repo, *cited):
    res = wctx.capture(store, [{"kind": "finding", "claim": "what we learned", "repo": "lib",
                                "files": list(cited)}], cwd=repo.path)  # fmt: skip
    return res["evidence"][0]["id"]


def verify(run_cli, eid):
    res = run_cli(["verify", eid, "--json"])
    assert res.err == "", res
    (item,) = res.json["items"]
    return item


def named(reason, commits):
    """Which of ``commits`` the reason names (by their short form)."""
    return {name for name, sha in commits.items() if sha[:7] in reason}


def test_merge_that_brings_in_an_unrelated_change_is_not_named(git_repo, store, run_cli):
    repo, h = setup(git_repo, store)
    eid = capture(store, repo, "lib/mod.py#alpha")
    h.git("checkout", "-q", "-b", "feature")
    side = h.edit("lib/mod.py", "y * 2", "y * 4", "beta doubles twice", when=300)
    h.git("checkout", "-q", "main")
    main = h.edit("lib/mod.py", "x + 1", "x + 10", "alpha adds ten", when=100)
    merge = h.merge("feature", "merge feature", when=400)
    item = verify(run_cli, eid)
    assert item["verdict"] == "stale"
    reason = item["reasons"][0]
    assert named(reason, {"main": main, "side": side, "merge": merge}) == {"main"}, reason
    assert reason.startswith("lib/mod.py#alpha changed in 1 commit since")


def test_clean_merge_of_a_branch_that_changed_the_symbol_names_the_branch_commit(git_repo, store, run_cli):
    repo, h = setup(git_repo, store)
    eid = capture(store, repo, "lib/mod.py#beta")
    h.git("checkout", "-q", "-b", "feature")
    side = h.edit("lib/mod.py", "y * 2", "y * 4", "beta doubles twice", when=100)
    h.git("checkout", "-q", "main")
    main = h.edit("lib/mod.py", "x + 1", "x + 10", "alpha adds ten", when=300)
    merge = h.merge("feature", "merge feature", when=400)
    reason = verify(run_cli, eid)["reasons"][0]
    assert named(reason, {"main": main, "side": side, "merge": merge}) == {"side"}, reason


def test_merge_that_resolves_a_conflict_in_the_symbol_is_named(git_repo, store, run_cli):
    repo, h = setup(git_repo, store)
    eid = capture(store, repo, "lib/mod.py#alpha")
    h.git("checkout", "-q", "-b", "feature")
    side = h.edit("lib/mod.py", "x + 1", "x + 2", "alpha adds two", when=100)
    h.git("checkout", "-q", "main")
    main = h.edit("lib/mod.py", "x + 1", "x + 3", "alpha adds three", when=200)
    h.merge("feature", "merge feature", when=300, ok=False)
    repo.write("lib/mod.py", MODULE.replace("x + 1", "x + 5"))  # neither side's text
    merge = h.commit("merge feature, alpha adds five", when=300)
    reason = verify(run_cli, eid)["reasons"][0]
    assert named(reason, {"main": main, "side": side, "merge": merge}) == {"main", "side", "merge"}, reason


def test_revert_is_named_and_a_branch_commit_that_left_the_symbol_alone_is_not(git_repo, store, run_cli):
    repo, h = setup(git_repo, store)
    eid = capture(store, repo, "lib/mod.py#alpha")
    h.git("checkout", "-q", "-b", "feature")
    side = h.edit("lib/mod.py", "z - 3", "z - 4", "gamma subtracts four", when=150)
    h.git("checkout", "-q", "main")
    change = h.edit("lib/mod.py", "x + 1", "x + 10", "alpha adds ten", when=100)
    h.git("revert", "--no-edit", "HEAD", when=200)
    revert = h.git("rev-parse", "HEAD")
    h.merge("feature", "merge feature", when=300)
    again = h.edit("lib/mod.py", "x + 1", "x + 7", "alpha adds seven", when=400)
    item = verify(run_cli, eid)
    assert item["verdict"] == "stale"
    reason = item["reasons"][0]
    found = named(reason, {"change": change, "revert": revert, "again": again, "side": side})
    assert found == {"change", "revert", "again"}, reason
    assert "changed in 3 commits since" in reason


def test_cherry_pick_and_merge_name_only_commits_that_changed_the_symbol(git_repo, store, run_cli):
    repo, h = setup(git_repo, store)
    eid = capture(store, repo, "lib/mod.py#alpha")
    h.git("checkout", "-q", "-b", "feature")
    picked = h.edit("lib/mod.py", "x + 1", "x + 10", "alpha adds ten", when=100)
    h.git("checkout", "-q", "main")
    other = h.edit("lib/mod.py", "z - 3", "z - 4", "gamma subtracts four", when=150)
    h.git("cherry-pick", picked, when=200)
    copy = h.git("rev-parse", "HEAD")
    merge = h.merge("feature", "merge feature", when=300)
    reason = verify(run_cli, eid)["reasons"][0]
    found = named(reason, {"picked": picked, "copy": copy, "other": other, "merge": merge})
    assert found and found <= {"picked", "copy"}, reason


def test_change_made_before_a_rename_on_another_branch_is_followed(git_repo, store, run_cli):
    repo, h = setup(git_repo, store)
    eid = capture(store, repo, "lib/mod.py#alpha")
    h.git("checkout", "-q", "-b", "feature")
    h.git("mv", "lib/mod.py", "lib/module.py")
    moved = h.edit("lib/module.py", "z - 3", "z - 4", "rename the module, gamma subtracts four", when=100)
    h.git("checkout", "-q", "main")
    main = h.edit("lib/mod.py", "x + 1", "x + 10", "alpha adds ten", when=200)
    merge = h.merge("feature", "merge feature", when=300)
    assert os.path.exists(repo.file("lib/module.py")) and not os.path.exists(repo.file("lib/mod.py"))
    item = verify(run_cli, eid)
    assert item["verdict"] == "stale"
    reason = item["reasons"][0]
    assert "followed rename lib/mod.py -> lib/module.py" in reason
    assert named(reason, {"main": main, "moved": moved, "merge": merge}) == {"main"}, reason


def test_checkout_moved_backwards_says_how_far_behind(git_repo, store, run_cli):
    repo, h = setup(git_repo, store)
    base = h.git("rev-parse", "HEAD")
    for n in range(4):
        h.edit("lib/mod.py", "z - %d" % (3 + n), "z - %d" % (4 + n), "gamma step %d" % n, when=100 + n)
    changed = h.edit("lib/mod.py", "x + 1", "x + 10", "alpha adds ten", when=200)
    eid = capture(store, repo, "lib/mod.py#alpha")
    untouched = capture(store, repo, "lib/mod.py#beta")
    fileless = wctx.capture(store, [{"kind": "note", "claim": "no file cited", "repo": "lib"}], cwd=repo.path)
    h.git("checkout", "-q", base)  # five commits behind the capture
    item = verify(run_cli, eid)
    assert item["verdict"] == "stale"
    reason = item["reasons"][0]
    assert "5 commits behind" in reason, reason
    assert changed[:7] in reason, reason  # the commit the checkout lacks that changed alpha
    assert verify(run_cli, untouched)["verdict"] == "current"
    note = verify(run_cli, fileless["evidence"][0]["id"])["reasons"][0]
    assert "5 commits behind" in note and "moved" not in note, note


def test_a_file_with_many_versions_still_names_the_first_change(git_repo, store, run_cli):
    repo, h = setup(git_repo, store)
    eid = capture(store, repo, "lib/mod.py#alpha")
    first = h.edit("lib/mod.py", "x + 1", "x + 10", "alpha adds ten", when=10)
    for n in range(230):  # many later versions of the file that leave alpha alone
        h.edit("lib/mod.py", "z - %d" % (3 + n), "z - %d" % (4 + n), "gamma step %d" % n, when=20 + n)
    item = verify(run_cli, eid)
    assert item["verdict"] == "stale"
    reason = item["reasons"][0]
    assert reason.startswith("lib/mod.py#alpha changed in 1 commit since"), reason
    assert first[:7] in reason and '"alpha adds ten"' in reason, reason
    assert "230 other commits that left it intact" in reason, reason


def test_reasons_follow_new_commits_after_a_first_verify(git_repo, store, run_cli):
    repo, h = setup(git_repo, store)
    eid = capture(store, repo, "lib/mod.py#alpha", "lib/mod.py#gamma")
    first = h.edit("lib/mod.py", "x + 1", "x + 10", "alpha adds ten", when=10)
    before = verify(run_cli, eid)
    assert first[:7] in before["reasons"][0] and "changed in 1 commit" in before["reasons"][0]
    second = h.edit("lib/mod.py", "x + 10", "x + 11", "alpha adds eleven", when=20)
    after = verify(run_cli, eid)
    alpha = [r for r in after["reasons"] if "#alpha" in r][0]
    assert "changed in 2 commits" in alpha and first[:7] in alpha and second[:7] in alpha, alpha
    repo.write("lib/mod.py", repo.read("lib/mod.py").replace("z - 3", "z - 30"))  # uncommitted
    now = verify(run_cli, eid)
    gamma = [r for r in now["reasons"] if "#gamma" in r][0]
    assert "uncommitted changes in the working tree" in gamma, gamma


def test_items_captured_at_many_commits_read_the_same_as_each_checked_alone(git_repo, store, run_cli):
    """verify over items recorded at many commits (on the main line, on a merged branch, on a
    branch the checkout lacks) says for each what verifying it alone says: the commits that
    touched its file since its own commit, in order, and how far behind and ahead it is."""
    repo, h = setup(git_repo, store, {"lib/mod.py": MODULE, "lib/other.py": "A = 1\n"})
    ids = [capture(store, repo, "lib/mod.py", "lib/mod.py#beta")]
    h.edit("lib/mod.py", "x + 1", "x + 2", "alpha adds two", when=100)
    ids.append(capture(store, repo, "lib/mod.py#alpha", "lib/other.py"))
    h.git("checkout", "-q", "-b", "feature")
    h.edit("lib/mod.py", "y * 2", "y * 3", "beta triples", when=150)
    ids.append(capture(store, repo, "lib/mod.py", "lib/mod.py#gamma"))
    h.git("checkout", "-q", "-b", "abandoned")
    h.edit("lib/other.py", "A = 1", "A = 5", "other five", when=160)
    ids.append(capture(store, repo, "lib/mod.py", "lib/other.py"))
    fileless = wctx.capture(store, [{"kind": "note", "claim": "no file cited", "repo": "lib"}], cwd=repo.path)
    ids.append(fileless["evidence"][0]["id"])
    h.git("checkout", "-q", "main")
    h.edit("lib/other.py", "A = 1", "A = 2", "other two", when=200)
    ids.append(capture(store, repo, "lib/other.py", "lib/mod.py#beta"))
    h.merge("feature", "merge feature", when=300)
    h.edit("lib/mod.py", "z - 3", "z - 4", "gamma minus four", when=400)
    h.edit("lib/other.py", "A = 2", "A = 3", "other three", when=500)
    alone = {}
    for eid in ids:
        store.db.execute("DELETE FROM anchor_checks")
        alone[eid] = verify(run_cli, eid)
    store.db.execute("DELETE FROM anchor_checks")
    res = run_cli(["verify", *ids, "--json"])
    together = {item["id"]: item for item in res.json["items"]}
    for eid in ids:
        assert together[eid] == alone[eid], (together[eid], alone[eid])
    assert [together[eid]["verdict"] for eid in ids] == ["stale"] * 4 + ["possibly_stale", "stale"]
    assert "lacks 1 commit" in together[ids[4]]["reasons"][0], together[ids[4]]
    whole = [r for r in together[ids[0]]["reasons"] if r.startswith("lib/mod.py changed")][0]
    assert "changed in 3 commits since" in whole, whole


def test_the_walk_starts_from_where_capture_found_the_symbol_and_reads_the_same_without_it(
    git_repo, store, run_cli
):
    """Capture records where a cited symbol lies; the walk that names the commits starts there.
    An anchor without those lines (stamped by an older wctx, imported) or with lines that do not
    fit the file is located afresh and names the same commits."""
    body = "".join("def f%d(v):\n    return v + %d\n\n\n" % (n, n) for n in range(30))
    repo, h = setup(git_repo, store, {"lib/mod.py": body})
    stamped, bare, odd = [
        wctx.capture(store, [{"kind": "finding", "claim": "f20 finding %d" % n, "repo": "lib",
                              "files": ["lib/mod.py#f20"]}], cwd=repo.path)["evidence"][0]["id"]
        for n in range(3)
    ]  # fmt: skip
    lines = store.one(
        "SELECT a.symbol_lines FROM anchors a JOIN evidence e ON e.rid = a.evidence_rid "
        "WHERE e.id = ? AND a.symbol IS NOT NULL",
        (stamped,),
    )[0]
    assert lines == "81-82", lines  # f20's two lines
    with store.atomic():
        for eid, value in ((bare, None), (odd, "400-410")):
            store.db.execute(
                "UPDATE anchors SET symbol_lines = ? WHERE symbol IS NOT NULL "
                "AND evidence_rid = (SELECT rid FROM evidence WHERE id = ?)",
                (value, eid),
            )
    h.edit("lib/mod.py", "def f0(v):\n", "def f0(v):\n    # one more line above f20\n", "f0 grows", when=100)
    first = h.edit("lib/mod.py", "v + 20", "v + 200", "f20 changes", when=200)
    h.edit("lib/mod.py", "v + 25", "v + 250", "f25 changes", when=300)
    second = h.edit("lib/mod.py", "def f20(v):\n", "def f20(v):\n    v = -v\n", "f20 negates", when=400)
    reasons = {eid: verify(run_cli, eid)["reasons"] for eid in (stamped, bare, odd)}
    assert reasons[stamped] == reasons[bare] == reasons[odd], reasons
    assert reasons[stamped][0].startswith("lib/mod.py#f20 changed in 2 commits since"), reasons
    assert first[:7] in reasons[stamped][0] and second[:7] in reasons[stamped][0]
