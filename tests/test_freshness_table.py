"""docs/freshness.md as a table: one row per case the page promises, each built as a real git
state after a capture, with the verdict and the reason sentence `wctx verify --json` gives."""

from __future__ import annotations

import os
import shutil

import pytest

import wctx

MOD = "def alpha(x):\n    return x + 1\n\n\ndef beta(y):\n    return y * 2\n"
NOTES = "the retry budget is three\n"
SDK = "def send(doc):\n    return doc\n\n\ndef size(doc):\n    return len(doc)\n"


def _commit(repo, ctx, message):
    """Commit everything; ctx["c"] is the commit as a reason names it: short sha, date, subject."""
    repo.commit(message)
    ctx["c"] = repo.git("show", "-s", "--date=short", '--format=%h %ad "%s"', "HEAD").strip()


def _edit(repo, rel, old, new):
    repo.write(rel, repo.read(rel).replace(old, new))


def _edit_alpha(repo):
    _edit(repo, "mod.py", "x + 1", "x + 2")


def _edit_beta(repo):
    _edit(repo, "mod.py", "y * 2", "y * 3")


def _forget_recorded(repo):
    """Rewrite the only commit (its content as the working tree has it) and drop the old one."""
    repo.git("add", "-A")
    repo.git("commit", "-q", "--amend", "--allow-empty", "-m", "rewritten")
    repo.git("reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all")
    repo.git("gc", "-q", "--prune=now")


def _rename(repo, old, new):
    os.makedirs(os.path.dirname(repo.file(new)) or ".", exist_ok=True)
    repo.git("mv", old, new)


def _nothing(repo, ctx):
    pass


def _on_feature_branch(repo):
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("feature.py", "def shiny():\n    return 1\n")
    repo.commit("feature work")


def _scratch(repo):
    repo.write("scratch.py", "def tmp():\n    return 0\n")


def _alpha_commit_then_capture(repo):
    _edit_alpha(repo)
    repo.commit("alpha adds two")


def _notes_commit_then_capture(repo):
    repo.write("notes.txt", "the retry budget is five\n")
    repo.commit("budget five")


def _no_commits(repo):
    repo.git("update-ref", "-d", "HEAD")


def _lacked(repo, ctx):
    """Move the checkout one commit behind the recorded one (which ctx["c"] describes)."""
    ctx["c"] = repo.git("show", "-s", "--date=short", '--format=%h %ad "%s"', "HEAD").strip()
    repo.git("reset", "-q", "--hard", "HEAD~1")


def _fifo(repo, ctx):
    os.remove(repo.file("notes.txt"))
    os.mkfifo(repo.file("notes.txt"))


def _damaged_commit(repo, ctx):
    """A commit since the recorded one whose object is damaged: git cannot read the history."""
    _edit_alpha(repo)
    sha = repo.commit("alpha adds two")
    loose = os.path.join(repo.path, ".git", "objects", sha[:2], sha[2:])
    os.chmod(loose, 0o644)
    with open(loose, "wb") as fh:
        fh.write(b"not a zlib stream")


# (case, set-up before the capture, cited, set-up after it, verdict, reason). In a reason, {rec}
# is the recorded commit's short sha, {c} the last commit as reasons name it, {path} the checkout;
# a reason ending in "..." is a prefix (git's own message follows).
ROWS = [
    # -- current: nothing cited changed ----------------------------------------------------------
    ("symbol untouched", None, "mod.py#alpha",
     lambda r, c: (r.write("other.txt", "x\n"), _commit(r, c, "unrelated")),
     "current", "mod.py#alpha unchanged since capture"),
    ("file untouched", None, "notes.txt", _nothing,
     "current", "notes.txt unchanged since capture"),
    ("edit beside the symbol", None, "mod.py#alpha",
     lambda r, c: (_edit_beta(r), _commit(r, c, "beta triples")),
     "current", "symbol alpha unchanged; other parts of mod.py changed in 1 commit since {rec}: {c}"),
    ("uncommitted edit beside the symbol", None, "mod.py#alpha", lambda r, c: _edit_beta(r),
     "current", "symbol alpha unchanged; other parts of mod.py changed: uncommitted changes in the "
     "working tree"),
    ("edit reverted", None, "notes.txt",
     lambda r, c: (r.write("notes.txt", "other\n"), r.commit("edit"), r.write("notes.txt", NOTES),
                   r.commit("revert")),
     "current", "notes.txt unchanged since capture"),
    ("file renamed", None, "mod.py#alpha",
     lambda r, c: (_rename(r, "mod.py", "pkg/mod.py"), _commit(r, c, "move mod")),
     "current", "pkg/mod.py#alpha unchanged since capture; followed rename mod.py -> pkg/mod.py"),
    ("file renamed, not committed", None, "notes.txt", lambda r, c: _rename(r, "notes.txt", "doc.txt"),
     "current", "doc.txt unchanged since capture; followed rename notes.txt -> doc.txt"),
    ("recorded commit gone, content identical", None, "mod.py#alpha",
     lambda r, c: _forget_recorded(r),
     "current", "mod.py#alpha unchanged since capture (the recorded commit {rec} is gone, but the "
     "content is identical)"),
    ("recorded commit gone, edit beside the symbol", None, "mod.py#alpha",
     lambda r, c: (_edit_beta(r), _forget_recorded(r)),
     "current", "symbol alpha unchanged; other parts of mod.py changed, and the recorded commit {rec} "
     "is gone (history rewritten)"),
    ("recorded commit gone, file moved: followed by its content", None, "mod.py#alpha",
     lambda r, c: (_rename(r, "mod.py", "lib/mod.py"), _forget_recorded(r)),
     "current", "lib/mod.py#alpha unchanged since capture (the recorded commit {rec} is gone, but the "
     "content is identical); followed rename mod.py -> lib/mod.py"),
    ("symbol never located, file untouched", None, "mod.py#Ghost", _nothing,
     "current", "mod.py unchanged since capture; symbol Ghost was never located in it (judged by the "
     "file)"),
    # -- stale: a cited symbol's text changed or vanished, a file cited whole changed or went -------
    ("symbol edited", None, "mod.py#alpha",
     lambda r, c: (_edit_alpha(r), _commit(r, c, "alpha adds two")),
     "stale", "mod.py#alpha changed in 1 commit since {rec}: {c}"),
    ("symbol edited, and the file beside it in an earlier commit", None, "mod.py#alpha",
     lambda r, c: (_edit_beta(r), r.commit("beta triples"), _edit_alpha(r), _commit(r, c, "alpha adds two")),
     "stale", "mod.py#alpha changed in 1 commit since {rec}: {c}; the file changed in 1 other commit "
     "that left it intact"),
    ("symbol edited, not committed", None, "mod.py#alpha", lambda r, c: _edit_alpha(r),
     "stale", "mod.py#alpha changed: uncommitted changes in the working tree"),
    ("symbol gone", None, "mod.py#alpha",
     lambda r, c: (_edit(r, "mod.py", "def alpha(", "def gamma("), _commit(r, c, "alpha becomes gamma")),
     "stale", "symbol alpha no longer found in mod.py (changed in 1 commit since {rec}: {c})"),
    ("renamed, then the symbol edited", None, "mod.py#alpha",
     lambda r, c: (_rename(r, "mod.py", "pkg/mod.py"), r.commit("move mod"),
                   _edit(r, "pkg/mod.py", "x + 1", "x + 2"), _commit(r, c, "alpha adds two")),
     "stale", "pkg/mod.py#alpha changed in 1 commit since {rec}: {c}; the file changed in 1 other "
     "commit that left it intact; followed rename mod.py -> pkg/mod.py"),
    ("file cited whole changed", None, "notes.txt",
     lambda r, c: (r.write("notes.txt", "the retry budget is five\n"), _commit(r, c, "budget five")),
     "stale", "notes.txt changed in 1 commit since {rec}: {c}"),
    ("file cited whole changed in four commits: the three latest named, the rest counted", None, "notes.txt",
     lambda r, c: [(r.write("notes.txt", "budget %d\n" % n), _commit(r, c, "budget %d" % n),
                    c.__setitem__("c%d" % n, c["c"])) for n in range(1, 5)],
     "stale", "notes.txt changed in 4 commits since {rec}: {c4}; {c3}; {c2} and 1 more"),
    ("file cited whole changed, not committed", None, "notes.txt", lambda r, c: r.write("notes.txt", "x\n"),
     "stale", "notes.txt changed: uncommitted changes in the working tree"),
    ("file deleted", None, "mod.py#alpha",
     lambda r, c: (r.git("rm", "-q", "mod.py"), _commit(r, c, "drop mod")),
     "stale", "mod.py#alpha was deleted in {c}"),
    ("file deleted, not committed", None, "notes.txt", lambda r, c: os.remove(r.file("notes.txt")),
     "stale", "notes.txt was deleted (not committed yet)"),
    ("file renamed, then deleted", None, "mod.py#alpha",
     lambda r, c: (_rename(r, "mod.py", "old.py"), r.commit("move mod"), r.git("rm", "-q", "old.py"),
                   _commit(r, c, "drop old")),
     "stale", "mod.py#alpha was deleted (renamed to old.py first) in {c}"),
    ("file only on another branch", _on_feature_branch, "feature.py#shiny",
     lambda r, c: r.git("checkout", "-q", "main"),
     "stale", "feature.py#shiny is not in the checked-out branch main (recorded at {rec} on feature)"),
    ("file never committed, deleted", _scratch, "scratch.py#tmp", lambda r, c: os.remove(r.file("scratch.py")),
     "stale", "scratch.py#tmp was deleted (it was never committed)"),
    ("recorded commit gone, symbol edited", None, "mod.py#alpha",
     lambda r, c: (_edit_alpha(r), _forget_recorded(r)),
     "stale", "mod.py#alpha changed, and the recorded commit {rec} is gone (history rewritten)"),
    ("recorded commit gone, file deleted", None, "notes.txt",
     lambda r, c: (r.git("rm", "-q", "notes.txt"), _forget_recorded(r)),
     "stale", "notes.txt no longer exists, and the recorded commit {rec} is gone, so a rename could not "
     "be followed"),
    ("checkout behind a commit that changed the symbol", _alpha_commit_then_capture, "mod.py#alpha", _lacked,
     "stale", "mod.py#alpha differs from capture: the checkout is 1 commit behind the recorded commit "
     "{rec}, and 1 commit it lacks changed it: {c}"),
    ("checkout behind a commit that changed the file cited whole", _notes_commit_then_capture, "notes.txt",
     _lacked,
     "stale", "notes.txt differs from capture: the checkout is 1 commit behind the recorded commit {rec}"),
    ("no commit at capture, symbol edited", _no_commits, "mod.py#alpha",
     lambda r, c: (_edit_alpha(r), r.commit("first")),
     "stale", "mod.py#alpha changed (no commit was recorded: lib had no commits at capture)"),
    ("no commit at capture, file deleted", _no_commits, "notes.txt",
     lambda r, c: os.remove(r.file("notes.txt")),
     "stale", "notes.txt no longer exists (no commit was recorded: lib had no commits at capture)"),
    # -- possibly_stale: only a file-level change is known --------------------------------------
    ("symbol never located, file changed", None, "mod.py#Ghost",
     lambda r, c: (_edit_beta(r), _commit(r, c, "beta triples")),
     "possibly_stale", "symbol Ghost could not be located at capture, so only file-level change is "
     "known: mod.py changed in 1 commit since {rec}: {c}"),
    ("cites no file, repository moved on", None, None,
     lambda r, c: (r.write("other.txt", "x\n"), r.commit("move on")),
     "possibly_stale", "lib moved 1 commit since {rec}; this item cites no file"),
    ("cites no file, checkout behind", _notes_commit_then_capture, None, _lacked,
     "possibly_stale", "lib's checkout is 1 commit behind the recorded commit {rec}; this item cites no "
     "file"),
    ("cites no file, repository unchanged", None, None, _nothing,
     "current", "cites no file; lib is still at {rec}"),
    # -- unknown: nothing can be compared ------------------------------------------------------
    ("cites no file, recorded commit gone", None, None,
     lambda r, c: (r.write("other.txt", "x\n"), _forget_recorded(r)),
     "unknown", "cites no file, and the recorded commit {rec} is not in lib (history rewritten?)"),
    ("repository not on this machine", None, "mod.py#alpha", lambda r, c: shutil.rmtree(r.path),
     "unknown", "repository lib is not on this machine ({path} is missing)"),
    ("repository no longer a git repository", None, "mod.py#alpha",
     lambda r, c: shutil.rmtree(os.path.join(r.path, ".git")),
     "unknown", "{path} is no longer a git repository"),
    ("git fails in the repository", None, "mod.py#alpha", _damaged_commit,
     "unknown", "cannot check lib: ..."),
    ("a cited path that is not a regular file", None, "notes.txt", _fifo,
     "unknown", "notes.txt is a FIFO, not a regular file"),
]  # fmt: skip


@pytest.mark.parametrize(
    "before, cited, after, verdict, reason", [row[1:] for row in ROWS], ids=[row[0] for row in ROWS]
)
def test_freshness_promise(git_repo, store, run_cli, before, cited, after, verdict, reason):
    repo = git_repo("lib", {"mod.py": MOD, "notes.txt": NOTES})
    if before is not None:
        before(repo)
    wctx.register_repo(store, repo.path)
    res = wctx.capture(
        store,
        [{"kind": "finding", "claim": "a finding", "files": [cited] if cited else []}],
        cwd=repo.path,
        allow_missing_symbol=True,
    )
    eid = res["evidence"][0]["id"]
    recorded = wctx.get_evidence(store, eid)["anchors"][0]["commit"]
    ctx = {"rec": (recorded or "")[:7], "path": repo.path}
    after(repo, ctx)
    out = run_cli(["verify", eid, "--json"])
    assert out.err == "", out
    (item,) = out.json["items"]
    assert item["verdict"] == verdict, item
    expected = reason.format(**ctx)
    if expected.endswith("..."):
        assert item["reasons"][0].startswith(expected[:-3]), item
    else:
        assert item["reasons"] == [expected], item


def test_a_changed_dependency_makes_the_item_possibly_stale(git_repo, store, run_cli):
    """The cited code is unchanged, but a symbol it depends on in a related repository changed."""
    lib = git_repo("lib", {"mod.py": MOD})
    sdk = git_repo("sdk", {"sdk.py": SDK})
    wctx.register_repo(store, lib.path)
    wctx.register_repo(store, sdk.path)
    res = wctx.capture(
        store,
        [{"kind": "finding", "claim": "alpha relies on send", "files": ["mod.py#alpha"],
          "depends_on": ["sdk:sdk.py#send"]}],
        cwd=lib.path,
    )  # fmt: skip
    eid = res["evidence"][0]["id"]
    recorded = sdk.head[:7]
    ctx = {}
    _edit(sdk, "sdk.py", "return len(doc)", "return 0")
    sdk.commit("size is zero")
    out = run_cli(["verify", eid, "--json"])
    assert out.json["items"][0]["verdict"] == "current", out
    _edit(sdk, "sdk.py", "return doc\n", "return [doc]\n")
    _commit(sdk, ctx, "send wraps")
    (item,) = run_cli(["verify", eid, "--json"]).json["items"]
    assert item["verdict"] == "possibly_stale", item
    assert item["reasons"] == [
        "depends on sdk sdk.py#send, which changed in 1 commit since %s: %s; the file changed in 1 "
        "other commit that left it intact" % (recorded, ctx["c"]),
        "mod.py#alpha unchanged since capture",
    ]
