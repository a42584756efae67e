from __future__ import annotations

import json
import os
import time

from .constants import VERDICT_SEVERITY
from .errors import WctxError
from .git import (
    HEAD_RACY_SECONDS,
    GitError,
    GitRepo,
    GitStopped,
    UnreadableFile,
    blob_id,
    git_dir_of,
    git_view,
    read_repo_file,
    recent_head_token,
)
from .head import __version__
from .helpers import commit_subject, short_sha, utc_now
from .history import HISTORY_MAX_PARSES, SymbolHistory, symbol_histories
from .records import _repos
from .symbols import language_of, symbol_hashes_of, symbol_lines

# ----------------------------------------------------------------------------------------------
# Freshness: did what an item cites change since it was captured?
# ----------------------------------------------------------------------------------------------


def _describe_commits(commits, limit=3):
    shown = "; ".join(
        '%s %s "%s"' % (c["short"], c["date"], commit_subject(c["subject"])) for c in commits[:limit]
    )
    more = " and %d more" % (len(commits) - limit) if len(commits) > limit else ""
    return shown + more


def _commits_touching(log, path):
    """Commits (newest first) that touched ``path``, following renames backwards."""
    return [commit for commit, _ in _touching_with_paths(log, path)]


def _touching_with_paths(log, path):
    """[(commit, the file's path right after that commit)], newest first, renames followed."""
    name = path
    hits = []
    for commit in log:
        for status, old, new in commit["changes"]:
            if new == name or old == name:
                hits.append((commit, name))
                if status == "R" and new == name:
                    name = old
                break
    return hits


def _plural(n, word, plural=None):
    return "%d %s" % (n, word if n == 1 else plural or word + "s")


class _SymbolChange:
    """The reason for a cited symbol whose text differs from capture, finished once the commits
    that changed it are known (FreshnessChecker walks them in one batch per repository and range).

    ``base``..``tip`` is the range walked: the recorded commit to HEAD, or, for a checkout moved
    behind its recorded commit, HEAD to that commit (the commits the checkout lacks)."""

    __slots__ = ("g", "anchor_id", "label", "symbol", "since", "path", "base", "tip", "now", "uncommitted_file",
                 "notes", "behind", "ahead", "history", "text", "start")  # fmt: skip

    def __init__(self, g, anchor_id, label, symbol, since, path, now, uncommitted_file, notes, behind, ahead):
        self.g, self.anchor_id, self.label, self.symbol, self.since = g, anchor_id, label, symbol, since
        self.now, self.uncommitted_file, self.notes = now, uncommitted_file, notes
        self.behind, self.ahead = behind, ahead
        self.path = path  # the file's name at ``base``
        self.base, self.tip = (g.head, since) if behind and not ahead else (since, g.head)
        self.history = None
        self.text = None
        self.start = None  # (blob, hash, extents) of the symbol at ``base``, as capture stamped it

    def history_key(self):
        """What the commits named depend on: the range, the file's name at its start, the symbol,
        the locator's version and the walk's bound."""
        return _key_digest(__version__, str(HISTORY_MAX_PARSES), self.base, self.tip, self.path, self.symbol)

    def finish(self, history):
        """``history``: a SymbolHistory, or None when git could not tell (the verdict stands)."""
        self.history = history
        since = short_sha(self.since)
        parts = []
        if history is None:
            where = "changed since %s (which commits changed it is unknown)" % since
        elif self.behind and not self.ahead:
            where = "differs from capture: the checkout is %s behind the recorded commit %s" % (
                _plural(self.behind, "commit"), since)  # fmt: skip
            if history.named:
                where += ", and %s it lacks changed it: %s" % (
                    "1 commit" if len(history.named) == 1 else "%d commits" % len(history.named),
                    _describe_commits(history.named))  # fmt: skip
        else:
            if history.named:
                parts.append("%s since %s: %s" % (_plural(len(history.named), "commit"), since,
                                                 _describe_commits(history.named)))  # fmt: skip
            if self.uncommitted_file:
                parts.append("uncommitted changes in the working tree")
            if not parts:
                parts.append("content differs from capture")
            where = ("changed in " if history.named else "changed: ") + ", and ".join(parts)
        if history is not None and not (self.behind and not self.ahead):
            if history.intact:
                where += "; the file changed in %s that left it intact" % _plural(
                    history.intact, "other commit" if history.named else "commit"
                )
            if self.behind:
                where += "; the checkout also lacks %s of the recorded commit's history" % _plural(
                    self.behind, "commit")  # fmt: skip
        if history is not None and history.unexamined:
            where += "; %s that touched the file %s not examined (the walk stops at %d versions)" % (
                _plural(history.unexamined, "later commit"), "was" if history.unexamined == 1 else "were",
                HISTORY_MAX_PARSES)  # fmt: skip
        if self.now is None:
            path = self.label.rpartition("#")[0]
            text = "symbol %s no longer found in %s (%s)" % (self.symbol, path, where)
        else:
            text = "%s %s" % (self.label, where)
        self.text = "; ".join([text] + self.notes)

    def __str__(self):
        return self.text


def _stamped_start(a, change):
    """(blob, hash, extents) of anchor ``a``'s symbol where ``change``'s walk starts, when capture
    stamped them there: the walk starts at the recorded commit, under the cited path, and the
    file was committed as stamped (not dirty). Else None: the walk locates it."""
    extents = symbol_lines(a.get("symbol_lines"))
    if (
        extents is None
        or a["dirty"]
        or not a["blob"]
        or change.base != a["commit_sha"]
        or change.path != a["path"]
    ):
        return None
    return a["blob"], a["symbol_hash"], extents


def _deletion_of(log, path):
    """(commit that deleted ``path``, the name it had then), following renames forward through
    ``log`` (newest first); (None, last name) when no commit in it deleted the file."""
    name = path
    for commit in reversed(log):
        for status, old, new in commit["changes"]:
            if old == name:
                if status == "D":
                    return commit, name
                if status == "R":
                    name = new
                break
    return None, name


class AnchorFacts:
    """What git and the disk say of one anchor (a cited file or ``path#symbol``), gathered once by
    FreshnessChecker._anchor_facts for ANCHOR_RULE to decide on and _anchor_reason to word."""

    __slots__ = (
        "a",  # the anchor row: path, symbol, recorded commit, blob and symbol hash...
        "g",  # the GitRepo of the checkout that judges it
        "no_git",  # why git cannot be asked there (nothing else is then known)
        "commit_ok",  # the recorded commit is in that checkout
        "unreadable",  # why what is at the cited path is not read (a FIFO, a symlink out...)
        "path",  # the cited path, or where a rename was followed to
        "followed",  # where a rename was followed to
        "missing",  # no file at the cited path, nor where it went
        "gone_in",  # the commit since the recorded one that deleted it
        "last_name",  # its name when it was deleted (renames followed forward)
        "never_committed",  # missing, and neither the recorded commit nor HEAD has it
        "checked_out",  # missing, the recorded commit has it, HEAD's line never did: "branch B"
        "same_blob",  # the file holds the recorded blob
        "uncommitted",  # the file differs from HEAD's
        "known_change",  # a _SymbolChange whose commits an earlier check named for this range
        "touching",  # the commits since the recorded one that touched the file, newest first
        "behind",  # commits of the recorded one's history the checkout lacks (none touched it)
        "ahead",  # and commits it has beyond it
        "now",  # the cited symbol's hash in the file now (None: not found)
        "symbol_uncommitted",  # the uncommitted edit is in the symbol (asked for a walk only)
    )

    def __init__(self, a):
        self.a, self.path = a, a["path"]
        self.g = self.no_git = self.unreadable = self.followed = None
        self.gone_in = self.last_name = self.checked_out = self.known_change = self.now = None
        self.commit_ok = self.missing = self.never_committed = self.same_blob = False
        self.uncommitted = self.symbol_uncommitted = False
        self.touching = ()
        self.behind = self.ahead = 0

    @property
    def label(self):
        return self.path + ("#" + self.a["symbol"] if self.a["symbol"] else "")

    @property
    def notes(self):
        return ["followed rename %s -> %s" % (self.a["path"], self.followed)] if self.followed else []

    @property
    def walkable(self):
        """The commits that changed the symbol can be walked: some touched the file since the
        recorded commit, or the checkout lacks some of the recorded commit's history."""
        return self.commit_ok and bool(self.touching or self.behind)


# Facts -> verdict, as a table read top to bottom: the first row whose facts hold decides, and its
# form names the sentence _anchor_reason gives.
ANCHOR_RULE = (
    # the facts                                            verdict           form
    (lambda f: f.no_git is not None,                       "unknown",        "no_git"),
    (lambda f: f.unreadable is not None,                   "unknown",        "unreadable"),
    (lambda f: f.missing and f.checked_out is not None,    "stale",          "not_checked_out"),
    (lambda f: f.missing and f.commit_ok,                  "stale",          "deleted"),
    (lambda f: f.missing and not f.a["commit_sha"],        "stale",          "gone_no_commit"),
    (lambda f: f.missing,                                  "stale",          "gone_history_gone"),
    (lambda f: f.same_blob,                                "current",        "unchanged"),
    (lambda f: f.known_change is not None,                 "stale",          "symbol_changed_known"),
    (lambda f: not f.a["symbol"],                          "stale",          "changed"),
    (lambda f: not f.a["symbol_hash"],                     "possibly_stale", "not_located"),
    (lambda f: f.now == f.a["symbol_hash"],                "current",        "symbol_unchanged"),
    (lambda f: f.walkable,                                 "stale",          "symbol_changed"),
    (lambda f: f.now is None,                              "stale",          "symbol_gone"),
    (lambda f: True,                                       "stale",          "changed"),
)  # fmt: skip


def anchor_verdict(facts):
    """(verdict, reason form) of one anchor's facts: the first row of ANCHOR_RULE that holds."""
    return next((verdict, form) for holds, verdict, form in ANCHOR_RULE if holds(facts))


def _changed_where(f):
    """How a file whose content differs from capture changed: the commits since the recorded one
    that touched it, uncommitted changes, a checkout behind it, or a recorded commit gone."""
    a = f.a
    since = short_sha(a["commit_sha"])
    if not f.commit_ok:
        if a["commit_sha"]:
            where = "changed, and the recorded commit %s is gone (history rewritten)" % since
        else:
            where = "changed (no commit was recorded: %s had no commits at capture)" % a["repo_name"]
        return where + ("; uncommitted changes in the working tree" if f.uncommitted else "")
    if f.behind and not f.touching:
        where = "differs from capture: the checkout is %s behind the recorded commit %s" % (
            _plural(f.behind, "commit"), since)  # fmt: skip
        return where + (", and has uncommitted changes" if f.uncommitted else "")
    parts = []
    if f.touching:
        parts.append(
            "%s since %s: %s" % (_plural(len(f.touching), "commit"), since, _describe_commits(f.touching))
        )
    if f.uncommitted:
        parts.append("uncommitted changes in the working tree")
    if not parts:
        parts.append(
            "content differs from capture (it was %s then)" % ("uncommitted" if a["dirty"] else "committed")
        )
    return ("changed in " if f.touching else "changed: ") + ", and ".join(parts)


def _deleted_where(f):
    """When a file that is no longer there was deleted: in which commit, or not committed yet,
    or never committed at all; and its name then, when a commit renamed it first."""
    if f.gone_in is not None:
        where = " in " + _describe_commits([f.gone_in], 1)
    elif f.never_committed:
        where = " (it was never committed)"
    else:
        where = " (not committed yet)"
    if f.last_name != f.a["path"]:  # renamed in a commit first, then deleted
        where = " (renamed to %s first)%s" % (f.last_name, where)
    return where


def _worst(verdicts):
    return max(verdicts, key=lambda v: VERDICT_SEVERITY[v]) if verdicts else "unknown"


WARM_PAIRS = 20000  # a repository's cited (path, commit) pairs asked of git at once, at most
# Whether this process lives long enough for FreshnessChecker._warm to pay: the MCP server says so
# when it starts serving. A one-shot command (search, verify, a hook) asks git about what it
# shows only: warming reads every cited pair of a repository, which a page never needs.
WARM_GIT_VIEWS = False
FILE_MEMO_BYTES = 64 * 1024 * 1024  # cited files a verify keeps in memory while it runs


class _Suffixed:
    """A reason with a note after it; the reason may be a symbol change whose text is known only
    once the batch has run (see check_items), so it is joined when it is turned into text."""

    __slots__ = ("reason", "suffix")

    def __init__(self, reason, suffix):
        self.reason = reason
        self.suffix = suffix

    def __str__(self):
        return str(self.reason) + self.suffix


class _Dependent:
    """The reason of an item whose dependency changed: "depends on REPO LABEL, which changed in
    …", made from the dependency's own reason when it is turned into text (a symbol change is
    finished after the batch, as the cited ones are)."""

    __slots__ = ("repo", "label", "reason")

    def __init__(self, repo, label, reason):
        self.repo, self.label, self.reason = repo, label, reason

    def __str__(self):
        text = str(self.reason)
        if text.startswith(self.label + " "):
            return "depends on %s %s, which %s" % (self.repo, self.label, text[len(self.label) + 1 :])
        return "depends on %s %s: %s" % (self.repo, self.label, text)


class FreshnessChecker:
    """Computes verdicts for many items with git work batched per repository."""

    def __init__(self, store, shared=False, remember=False):
        self.store = store
        # ``remember``: keep what git and parsing told this call in anchor_checks for the next
        # (verify and the cached verdicts do; a command that must change nothing does not).
        self.remember = remember
        self.repos = {r.id: r for r in _repos(store)}
        # ``shared``: ask git through the process's views of each checkout (git_view), as the
        # cached verdicts do; else afresh (verify, confirm: git's word now, no cache).
        self.shared = shared
        self.git = {}
        self.head_blobs = {}
        self.followed = {}  # {(repo id, cited path): path it was followed to}, for the cache keys
        # Repos where git could not run here (not on PATH, a distrusted owner...): verdicts that
        # touch them say so, but are not cached for other callers whose git works.
        self.git_failed = set()
        # Per call: many items cite the same file and symbol. {(root, rel): (bytes, {format: blob})}
        # up to FILE_MEMO_BYTES in all, and {(blob, rel): {symbol: hash}}.
        self.files = {}
        self.file_bytes = 0
        self.unreadable = {}  # {(root, rel): why read_repo_file refused it}
        self.symbol_hashes = {}
        self.cited = {}  # {rel: {symbols cited in it in this call}}: one parse serves them all
        self.touching = {}  # {(checkout, recorded commit, path): commits that touched it since}
        self.judges = {}  # {(repo id, recorded checkout, commit): _git_for's answer}
        # What earlier checks learned per anchor (anchor_checks: {id: (hash key, hash, history
        # key, history)}), and what this one learned, written at the end.
        self.checks = {}
        self.learned = {}
        self.symbol_changes = []  # _SymbolChange reasons that check_items finishes in one batch
        self.moved = {}  # {(repo id, recorded commit): commits since}, for items citing no file
        self.dependencies = {}  # {rid: [dependency rows]} of the items of this call
        self.dependency_checks = {}  # {what a dependency was stamped with: (verdict, reason)}

    def cacheable(self):
        """A test of an item's anchors (every column): whether the verdict this call computed for
        it may be cached under its key. Not where git could not run (another caller's git may),
        nor where a recorded commit was missing: a fetch (or a push into the repository) can bring
        it while HEAD, the index and every cited file stay as the key saw them."""
        absent = set()
        for g, _ in self.git.values():
            if g is not None:
                absent |= g.absent
        failed = self.git_failed

        def test(anchors):
            return not any(a["repo_id"] in failed or a["commit_sha"] in absent for a in anchors)

        return test

    def _read(self, root, rel):
        """read_repo_file, remembered for the rest of this call (within a memory budget)."""
        key = (root, rel)
        if key in self.files:
            return self.files[key][0]
        try:
            data = read_repo_file(root, rel)
        except UnreadableFile as e:  # a FIFO, a device, a symlink out, too large: not compared
            self.unreadable[key] = str(e)
            return None
        if data is not None and self.file_bytes + len(data) <= FILE_MEMO_BYTES:
            self.files[key] = (data, {})
            self.file_bytes += len(data)
        return data

    def _blob(self, root, rel, data, object_format):
        memo = self.files.get((root, rel))
        if memo is None or memo[0] is not data:
            return blob_id(data, object_format)
        if object_format not in memo[1]:
            memo[1][object_format] = blob_id(data, object_format)
        return memo[1][object_format]

    def _symbol_hash(self, blob, data, rel, symbol, anchor_id=None):
        """The hash of ``symbol`` in the file's content ``data`` (blob id ``blob``): from what an
        earlier check of this anchor learned of that blob, else by locating it (every symbol
        this call cites in the file at once)."""
        key = _key_digest(__version__, blob, language_of(rel), symbol)
        known = self.checks.get(anchor_id)
        if known is not None and known[0] == key:
            return known[1]
        memo = self.symbol_hashes.get((blob, rel))
        if memo is None or symbol not in memo:
            wanted = sorted(self.cited.get(rel, set()) | {symbol})
            memo = self.symbol_hashes[(blob, rel)] = symbol_hashes_of(data, rel, wanted)
        if anchor_id is not None:
            self._learn(anchor_id, hash_key=key, symbol_hash=memo[symbol])
        return memo[symbol]

    def _learn(self, anchor_id, **values):
        row = self.learned.get(anchor_id)
        if row is None:
            old = self.checks.get(anchor_id) or (None, None, None, None)
            row = self.learned[anchor_id] = dict(
                zip(("hash_key", "symbol_hash", "history_key", "history"), old)
            )
        row.update(values)

    def _load_checks(self, anchors):
        """What earlier checks learned of these anchors (and dependencies, whose ids are
        ("dependency", stamp): see _load_dependencies)."""
        ids = [a["id"] for a in anchors if a.get("id") is not None and a["symbol"] and a["symbol_hash"]]
        cursor = self.store.db.cursor()
        cursor.row_factory = None  # plain tuples: no sqlite3.Row per row
        for table, key, wanted, as_id in (
            ("anchor_checks", "anchor_id", [i for i in ids if not isinstance(i, tuple)], lambda k: k),
            ("dependency_checks", "stamp", list({i[1] for i in ids if isinstance(i, tuple)}), _dependency_id),
        ):
            for i in range(0, len(wanted), 500):
                chunk = wanted[i : i + 500]
                cursor.execute(
                    "SELECT %s, hash_key, symbol_hash, history_key, history FROM %s WHERE %s IN (%s)"
                    % (key, table, key, ",".join("?" * len(chunk))),
                    chunk,
                )
                for found, hash_key, symbol_hash, history_key, history in cursor:
                    self.checks[as_id(found)] = (hash_key, symbol_hash, history_key, history)

    def _save_checks(self):
        """Keep what this call learned for the next (best effort, as the freshness cache)."""
        import sqlite3

        rows = [(i, r["hash_key"], r["symbol_hash"], r["history_key"], r["history"]) for i, r in self.learned.items()
                if self.checks.get(i) != (r["hash_key"], r["symbol_hash"], r["history_key"], r["history"])]  # fmt: skip
        self.learned = {}
        if not rows or not self.remember or self.store.readonly:
            return
        try:
            for table, key, chosen in (
                ("anchor_checks", "anchor_id", [r for r in rows if not isinstance(r[0], tuple)]),
                ("dependency_checks", "stamp", [(r[0][1],) + r[1:] for r in rows if isinstance(r[0], tuple)]),
            ):
                if chosen:
                    self.store.write_keeping_memo(
                        "INSERT OR REPLACE INTO %s(%s, hash_key, symbol_hash, history_key, history) "
                        "VALUES (?, ?, ?, ?, ?)" % (table, key),
                        chosen,
                    )
        except sqlite3.OperationalError as e:
            self.store.notice("freshness was computed but not cached (%s)" % e)

    def _git_at(self, repo, path):
        """(GitRepo, None) for one checkout, or (None, why git cannot be asked there)."""
        if path in self.git:
            return self.git[path]
        if not os.path.isdir(path):
            result = (None, "repository %s is not on this machine (%s is missing)" % (repo.name, path))
        else:
            g = git_view(path) if self.shared else GitRepo(path)
            try:
                g.info()
                result = (g, None)
            except GitError as e:
                refused = (
                    isinstance(e, GitStopped) or "core.worktree" in str(e) or "dubious ownership" in str(e)
                )
                result = (None, str(e) if refused else "%s is no longer a git repository" % path)
                self.git_failed.add(repo.id)
            except WctxError as e:
                result = (None, str(e))
                self.git_failed.add(repo.id)
        self.git[path] = result
        return result

    def _git_for(self, a):
        """(GitRepo, None) for the checkout that judges anchor ``a``, or (None, why it is unknown).

        A repository may have several checkouts (linked worktrees, second clones), each with its
        own HEAD and working tree. The one that judges is the checkout the capture ran in, when it
        still holds the recorded commit; else the first that holds it (the registered path
        first); else the registered path, which then says the commit is gone."""
        repo = self.repos.get(a["repo_id"]) if a["repo_id"] is not None else None
        if repo is None:
            return None, "repository %s is not registered on this machine" % a["repo_name"]
        if a["repo_id"] in self.git:  # git broke in this repository during this call (_git_broke)
            return self.git[a["repo_id"]]
        key = (a["repo_id"], a.get("checkout"), a["commit_sha"])
        if key not in self.judges:  # asked several times per anchor, and many anchors share one
            self.judges[key] = self._judge(repo, a.get("checkout"), a["commit_sha"])
        return self.judges[key]

    def _judge(self, repo, recorded, commit):
        order = repo.all_checkouts()
        if recorded in order:
            order = [recorded] + [p for p in order if p != recorded]
        first = None
        for path in order:
            g, why = self._git_at(repo, path)
            if g is None:
                continue
            if len(order) == 1 or not commit or g.commits_exist([commit]).get(commit):
                return g, None
            first = first or g
        if first is not None:
            return first, None
        return self._git_at(repo, repo.home)

    def judged_view(self, a):
        """Anchor ``a``'s repository seen through the checkout that judges it (None: unregistered),
        so that re-stamping an item (confirm) reads the same checkout its verdict came from."""
        repo = self.repos.get(a["repo_id"]) if a["repo_id"] is not None else None
        g = self._git_for(a)[0] if repo is not None else None
        return repo.at(g.path) if g is not None else repo

    def checkout_note(self, a, g):
        """Which checkout judged ``a``, for repositories that have more than one."""
        repo = self.repos.get(a["repo_id"])
        if g is None or repo is None or len(repo.all_checkouts()) < 2:
            return None
        return g.path

    def _head_blob(self, g, path):
        key = (g.path, path)
        if key not in self.head_blobs:
            found = g.batch_check(["HEAD:" + path]) if g.head else {}
            hit = found.get("HEAD:" + path)
            self.head_blobs[key] = hit[0] if hit and hit[1] == "blob" else None
        return self.head_blobs[key]

    def prefetch(self, anchors):
        """One cat-file per checkout for every recorded commit and HEAD:path we will need."""
        by_repo = {}
        for a in anchors:
            by_repo.setdefault(a["repo_id"], []).append(a)
        for repo_id, items in by_repo.items():
            repo = self.repos.get(repo_id) if repo_id is not None else None
            if repo is None:
                continue
            try:
                self._prefetch_repo(repo, items)
            except GitError as e:
                self._git_broke(repo_id, e)

    def _prefetch_repo(self, repo, items):
        self._warm(repo)
        commits = [a["commit_sha"] for a in items if a["commit_sha"]]
        if len(repo.all_checkouts()) > 1:  # which checkout holds which commit decides the judge
            for path in repo.all_checkouts():
                g, _ = self._git_at(repo, path)
                if g is not None:
                    g.commits_exist(commits)
        by_git = {}
        for a in items:
            g, _ = self._git_for(a)
            if g is not None:
                by_git.setdefault(g.path, (g, []))[1].append(a)
        for g, judged in by_git.values():
            self._prefetch_checkout(g, judged)

    def _prefetch_checkout(self, g, judged):
        commits = [a["commit_sha"] for a in judged if a["commit_sha"]]
        # The files whose content moved need their commit's log (log_since): all in one.
        g.log_candidates.update(a["commit_sha"] for a in judged if a["path"] and a["commit_sha"])
        paths = [a["path"] for a in judged if a["path"] and (g.path, a["path"]) not in self.head_blobs]
        if g.head and paths:
            # With each cited path at its recorded commit, which _anchor_facts reads of a path that
            # is not at HEAD, and the recorded commits themselves: one cat-file per checkout for all.
            found = g.batch_check(
                [c + "^{commit}" for c in dict.fromkeys(commits)]
                + ["HEAD:" + p for p in paths]
                + ["%s:%s" % (a["commit_sha"], a["path"]) for a in judged if a["path"] and a["commit_sha"]]
            )
            for p in paths:
                hit = found.get("HEAD:" + p)
                self.head_blobs[(g.path, p)] = hit[0] if hit and hit[1] == "blob" else None
        g.commits_exist(commits)

    def _warm(self, repo):
        """The first time this process asks about a checkout in its present state (git_view):
        every commit the repository's items were recorded at, and each path they cite at HEAD
        and at that commit, in one cat-file, so that later calls over other items of the
        repository find git's answers there (up to WARM_PAIRS cited paths and commits)."""
        if not (self.shared and WARM_GIT_VIEWS):  # a fresh GitRepo (verify) forgets it at once
            return
        pairs = None
        for path in repo.all_checkouts():
            g, _ = self._git_at(repo, path)
            if g is None or g.warmed:
                continue
            g.warmed = True
            if pairs is None:
                pairs = self.store.all(
                    "SELECT DISTINCT path, commit_sha FROM anchors WHERE repo_id = ? LIMIT ?",
                    (repo.id, WARM_PAIRS + 1),
                )
                if len(pairs) > WARM_PAIRS:
                    return
            specs = [c + "^{commit}" for c in dict.fromkeys(c for _, c in pairs if c)]
            if g.head:
                specs += ["HEAD:" + p for p in dict.fromkeys(p for p, _ in pairs if p)]
            specs += ["%s:%s" % (c, p) for p, c in pairs if p and c]
            g.batch_check(specs)

    def check_items(self, anchors_by_rid):
        """{rid: {"verdict", "reasons", "anchors": [...][, "dependencies": [...]]}} for the given
        anchors, with the items' dependencies (read from the store) checked alongside."""
        every = [a for anchors in anchors_by_rid.values() for a in anchors]
        self.dependencies = _load_dependencies(self.store, list(anchors_by_rid))
        # A dependency whose file still holds the recorded blob, or whose symbol's text is the
        # recorded one, is current without asking git (most are): only the others join the batch
        # per repository.
        depended = [d for deps in self.dependencies.values() for d in deps]
        self._load_checks(depended)
        depended = [d for d in depended if not self._unchanged(d)]
        # One batch per repository for the cited files and the dependencies alike.
        self.prefetch(every + depended)
        self.cited = {}
        for a in every + depended:
            if a["path"] and a["symbol"]:
                self.cited.setdefault(a["path"], set()).add(a["symbol"])
        self._load_checks(every)
        self.symbol_changes = []
        results = {
            rid: self.check_item(anchors, self.dependencies.get(rid, ()))
            for rid, anchors in anchors_by_rid.items()
        }
        if self.symbol_changes:
            self._finish_symbol_changes()
        for res in results.values():  # symbol changes and checkout notes become text now
            res["reasons"] = [str(r) for r in res["reasons"]]
            for a in res["anchors"]:
                change = a["reason"].reason if isinstance(a["reason"], _Suffixed) else a["reason"]
                if isinstance(change, _SymbolChange) and change.history is not None:
                    a["changed_in"] = [c["sha"] for c in change.history.named]
                a["reason"] = str(a["reason"])
            for d in res.get("dependencies", ()):
                d["reason"] = str(d["reason"])
        self._save_checks()
        return results

    def _finish_symbol_changes(self):
        """Which commits changed each changed symbol (see history.symbol_histories): from what an
        earlier check of the anchor learned for the same range, else one walk per repository and
        range for all the symbols asked about in it."""
        by_range = {}
        for change in self.symbol_changes:
            known = self.checks.get(change.anchor_id)
            if known is not None and known[2] == change.history_key() and known[3]:
                change.finish(SymbolHistory.from_json(json.loads(known[3])))
                continue
            by_range.setdefault((change.g.path, change.base, change.tip), (change.g, []))[1].append(change)
        for (_, base, tip), (g, changes) in by_range.items():
            targets, known = {}, {}
            for change in changes:
                targets.setdefault(change.path, []).append(change.symbol)
                if change.start is not None:
                    known[(change.path, change.symbol)] = change.start
            try:
                found = symbol_histories(g, base, tip, targets, known)
            except GitError:  # the verdict stands (the symbol's text differs); the commits are unknown
                for rid in [r.id for r in self.repos.values() if g.path in r.all_checkouts()]:
                    self.git_failed.add(rid)
                for change in changes:
                    change.finish(None)
                continue
            for change in changes:
                history = found[(change.path, change.symbol)]
                change.finish(history)
                if change.anchor_id is not None:
                    self._learn(change.anchor_id, history_key=change.history_key(),
                                history=json.dumps(history.as_json() + [change.behind]))  # fmt: skip
        self.symbol_changes = []

    def _guarded(self, check, a):
        """check(a), or unknown when git fails in a's repository: one broken repository (a corrupt
        index, a refused filter, a damaged object store) never breaks a call over the others."""
        try:
            return check(a)
        except GitError as e:
            return "unknown", self._git_broke(a["repo_id"], e)

    def _git_broke(self, repo_id, error):
        """Remember that git failed in this repository: its other anchors are unknown at once and
        nothing about it is cached."""
        repo = self.repos.get(repo_id)
        reason = "cannot check %s: %s" % (repo.name if repo else "this repository", error)
        self.git[repo_id] = (None, reason)
        self.git_failed.add(repo_id)
        return reason

    def _unchanged(self, d):
        """True when dependency ``d``'s file, in the checkout that stamped it, still has the
        recorded blob (then it is current, and nothing else about it needs git)."""
        key = d["id"]
        if key in self.dependency_checks:
            return self.dependency_checks[key][0] == "current"
        repo = self.repos.get(d["repo_id"]) if d["repo_id"] is not None else None
        if repo is None or not d["blob"] or not d["path"]:
            return False
        root = d.get("checkout") if d.get("checkout") in repo.all_checkouts() else repo.home
        data = self._read(root, d["path"])
        if data is None:
            return False
        blob = self._blob(root, d["path"], data, _object_format(d["blob"]))
        if blob == d["blob"]:
            self.dependency_checks[key] = ("current", "%s unchanged since capture" % d["path"])
            return True
        # The file changed: the symbol's text may not have (parsed once per blob, or known from an
        # earlier check of the same blob).
        if not d["symbol"] or not d["symbol_hash"]:
            return False
        if self._symbol_hash(blob, data, d["path"], d["symbol"], key) != d["symbol_hash"]:
            return False
        self.dependency_checks[key] = ("current", "symbol %s unchanged; other parts of %s changed" % (
            d["symbol"], d["path"]))  # fmt: skip
        return True

    def check_dependency(self, d):
        """(verdict, reason) of one dependency, judged as a cited file is; each distinct stamp once
        per call, however many items depend on it."""
        key = d["id"]
        if key not in self.dependency_checks:
            self.dependency_checks[key] = self._guarded(self.check_file_anchor, d)
        return self.dependency_checks[key]

    def check_item(self, anchors, dependencies=()):
        file_anchors = [a for a in anchors if a["path"]]
        checked = []
        for a in file_anchors or anchors[:1]:
            verdict, reason = self._guarded(
                self.check_file_anchor if a["path"] else self.check_repo_anchor, a
            )
            where = self.checkout_note(a, self._git_for(a)[0])
            if where is not None:  # several checkouts: say which one judged
                reason = _Suffixed(reason, " (in checkout %s)" % where)
            checked.append((a, verdict, reason))
        if not checked:
            return {"verdict": "unknown", "reasons": ["nothing recorded to compare"], "anchors": []}
        # A dependency whose text changed (or vanished) makes the item possibly stale; one that is
        # unchanged, or cannot be checked here, changes nothing.
        depended = []
        for d in dependencies:
            v, r = self.check_dependency(d)
            label = d["path"] + ("#" + d["symbol"] if d["symbol"] else "")
            depended.append((d, v, _Dependent(d["repo_name"], label, r)))
        alerts = [("possibly_stale", r) for _, v, r in depended if v in ("stale", "possibly_stale")]
        verdict = _worst([v for _, v, _ in checked] + [v for v, _ in alerts])
        # The reasons that decide the verdict come first (the item's own before its dependencies').
        ordered = sorted([(v, r) for _, v, r in checked] + alerts, key=lambda t: -VERDICT_SEVERITY[t[0]])
        out = {
            "verdict": verdict,
            "reasons": [r for _, r in ordered],
            "anchors": [
                {
                    "repo": a["repo_name"],
                    "path": a["path"],
                    "symbol": a["symbol"],
                    "commit": a["commit_sha"],
                    "checkout": self.checkout_note(a, self._git_for(a)[0]),
                    "verdict": v,
                    "reason": r,
                }
                for a, v, r in checked
            ],
        }
        if depended:
            out["dependencies"] = [
                {"repo": d["repo_name"], "path": d["path"], "symbol": d["symbol"], "how": d["how"],
                 "source": d["source"], "commit": d["commit_sha"], "verdict": v, "reason": r}
                for d, v, r in depended
            ]  # fmt: skip
        return out

    def check_repo_anchor(self, a):
        g, why = self._git_for(a)
        name = a["repo_name"]
        if g is None:
            return "unknown", why
        commit = a["commit_sha"]
        if not commit:
            return "unknown", "no commit was recorded for %s (it had no commits at capture)" % name
        if not g.head:
            return "unknown", "%s has no commits now" % name
        if commit == g.head:
            return "current", "cites no file; %s is still at %s" % (name, short_sha(commit))
        if not g.commits_exist([commit])[commit]:
            return (
                "unknown",
                "cites no file, and the recorded commit %s is not in %s (history rewritten?)"
                % (
                    short_sha(commit),
                    name,
                ),
            )
        behind, moved = g.behind_ahead(commit)
        if behind and not moved:
            return "possibly_stale", "%s's checkout is %s behind the recorded commit %s; this item cites no file" % (
                name, _plural(behind, "commit"), short_sha(commit))  # fmt: skip
        self.moved[(a["repo_id"], commit)] = moved
        if behind:
            return "possibly_stale", "%s moved %s since %s, on a line of history that lacks %s of it; this item cites no file" % (
                name, _plural(moved, "commit"), short_sha(commit), _plural(behind, "commit"))  # fmt: skip
        return "possibly_stale", "%s moved %s since %s; this item cites no file" % (
            name,
            _plural(moved, "commit"),
            short_sha(commit),
        )

    def check_file_anchor(self, a):
        """(verdict, reason) of one cited file or ``path#symbol``: its facts gathered once
        (_anchor_facts), the verdict decided by ANCHOR_RULE, the reason worded by _anchor_reason."""
        facts = self._anchor_facts(a)
        verdict, form = anchor_verdict(facts)
        return verdict, self._anchor_reason(facts, form)

    def _anchor_facts(self, a):
        """What git and the disk say of anchor ``a``, asked in the order ANCHOR_RULE reads it and
        only as far as the verdict still depends on it (a file that holds its recorded blob needs
        no history, a deleted one no symbol)."""
        f = AnchorFacts(a)
        g, f.no_git = self._git_for(a)
        if g is None:
            return f
        f.g = g
        commit = a["commit_sha"]
        f.commit_ok = bool(commit) and g.commits_exist([commit]).get(commit, False)
        root = self.repos[a["repo_id"]].at(g.path).path
        data = self._read(root, a["path"])
        if data is None and (root, a["path"]) in self.unreadable:
            # Something is there, but not a file wctx reads: what it was cannot be compared.
            f.unreadable = self.unreadable[(root, a["path"])]
            return f
        if data is None:
            new_path = self._followed_path(g, a, f.commit_ok, root)
            data = self._read(root, new_path) if new_path is not None else None
            if data is None:
                f.missing = True
                self._deletion_facts(f, g)
                return f
            self.followed[(a["repo_id"], a["path"])] = f.path = f.followed = new_path
        self._content_facts(f, g, root, data)
        return f

    def _content_facts(self, f, g, root, data):
        """For a file that is there (``data``): whether it holds the recorded blob and, when not,
        the commits that touched it, and the cited symbol's hash now."""
        a, commit = f.a, f.a["commit_sha"]
        blob = self._blob(root, f.path, data, g.object_format)
        f.uncommitted = self._head_blob(g, f.path) != blob
        f.same_blob = blob == a["blob"]
        if f.same_blob:
            return
        symbol, recorded = a["symbol"], a["symbol_hash"]
        if symbol and recorded and f.commit_ok and commit != g.head:
            f.known_change = self._cached_change(g, a, f.label, f.path, blob, data, f.uncommitted, f.notes)
            if f.known_change is not None:
                return
        if f.commit_ok:
            f.touching = self._touching(g, commit, f.path)
            if not f.touching and commit != g.head:
                f.behind, f.ahead = g.behind_ahead(commit)
        if symbol and recorded:
            f.now = self._symbol_hash(blob, data, f.path, symbol, a.get("id"))
            if f.now != recorded and f.walkable and f.uncommitted:
                # Whether the uncommitted edit is in the symbol or elsewhere in its file.
                f.symbol_uncommitted = self._head_symbol_hash(g, f.path, symbol) != f.now

    def _followed_path(self, g, a, commit_ok, root):
        """Where the cited path went, when it is no longer there: a rename since the recorded
        commit, or (that commit gone) the one file at HEAD with the recorded content; else None."""
        path = a["path"]
        if commit_ok:
            new_path = g.renames_since(a["commit_sha"]).get(path)
            if new_path is not None:
                return new_path
            # Edited as well as renamed, one diff over the whole range may no longer see a rename
            # that the commits, one by one, show.
            gone_in, last_name = _deletion_of(g.log_since(a["commit_sha"]), path)
            if gone_in is None and last_name != path and self._read(root, last_name) is not None:
                return last_name
            return None
        if a["blob"]:
            # History is gone, so git cannot say where the file went: follow identical content,
            # but only when exactly one file holds it (empty __init__.py files and copies must not
            # make a deleted file look current).
            moved = g.head_tree_blobs().get(a["blob"], [])
            if len(moved) == 1:
                return moved[0]
        return None

    def _deletion_facts(self, f, g):
        """For a missing file whose recorded commit is here: the commit that deleted it, its name
        then, and, when no commit since deleted it and HEAD lacks it, whether it was ever
        committed or HEAD is on a line of history that never had it (another branch)."""
        if not f.commit_ok:
            return
        commit, path = f.a["commit_sha"], f.a["path"]
        f.gone_in, f.last_name = _deletion_of(g.log_since(commit), path)
        if f.gone_in is None and self._head_blob(g, f.last_name) is None:
            spec = "%s:%s" % (commit, path)
            if not g.batch_check([spec]).get(spec):
                f.never_committed = True
            else:
                f.checked_out = "branch " + g.branch() if g.branch() else "commit " + short_sha(g.head)

    def _anchor_reason(self, f, form):
        """The reason ANCHOR_RULE's ``form`` gives for anchor facts ``f``: every sentence a cited
        file or symbol gets is worded here. A symbol whose text changed gets a _SymbolChange, which
        names the commits once the batch has walked them (check_items)."""
        a, label, path, symbol = f.a, f.label, f.path, f.a["symbol"]
        since = short_sha(a["commit_sha"])
        if form == "symbol_changed":
            # Name only the commits whose diff changed the symbol, not all that touched the file.
            f.known_change = _SymbolChange(f.g, a.get("id"), label, symbol, a["commit_sha"],
                                           a["path"] if f.touching else path, f.now, f.symbol_uncommitted,
                                           f.notes, f.behind, f.ahead)  # fmt: skip
            f.known_change.start = _stamped_start(a, f.known_change)
        if form in ("symbol_changed", "symbol_changed_known"):
            self.symbol_changes.append(f.known_change)  # finished in one batch per range
            return f.known_change
        if form in ("no_git", "unreadable"):
            return f.no_git or f.unreadable
        if form == "not_checked_out":
            return "%s is not in the checked-out %s (recorded at %s%s)" % (
                label, f.checked_out, since, " on " + a["branch"] if a["branch"] else "")  # fmt: skip
        if form == "deleted":
            return "%s was deleted%s" % (label, _deleted_where(f))
        if form == "gone_no_commit":
            return "%s no longer exists (no commit was recorded: %s had no commits at capture)" % (
                label, a["repo_name"])  # fmt: skip
        if form == "gone_history_gone":
            return "%s no longer exists, and the recorded commit %s is gone, so a rename could not be followed" % (
                label, since)  # fmt: skip
        if form == "unchanged":
            text = "%s unchanged since capture" % label
            if symbol and not a["symbol_hash"]:
                text = "%s unchanged since capture; symbol %s was never located in it (judged by the file)" % (
                    path, symbol)  # fmt: skip
            if not f.commit_ok and a["commit_sha"]:
                text += " (the recorded commit %s is gone, but the content is identical)" % since
        elif form == "symbol_unchanged":
            text = "symbol %s unchanged; other parts of %s %s" % (symbol, path, _changed_where(f))
        elif form == "not_located":
            text = "symbol %s could not be located at capture, so only file-level change is known: %s %s" % (
                symbol, path, _changed_where(f))  # fmt: skip
        elif form == "symbol_gone":
            text = "symbol %s no longer found in %s (%s)" % (symbol, path, _changed_where(f))
        else:
            text = "%s %s" % (label, _changed_where(f))
        return "; ".join([text] + f.notes)

    def _cached_change(self, g, a, label, path, blob, data, uncommitted, notes):
        """A changed symbol whose commits an earlier check named for this very range: its reason
        without reading the range's log (None when that is not known)."""
        now = self._symbol_hash(blob, data, path, a["symbol"], a.get("id"))
        known = self.checks.get(a.get("id"))
        if now == a["symbol_hash"] or known is None or not known[3]:
            return None
        change = _SymbolChange(
            g, a.get("id"), label, a["symbol"], a["commit_sha"], a["path"], now, False, notes, 0, 1
        )
        if known[2] != change.history_key():
            return None
        change.behind = json.loads(known[3])[3]
        change.uncommitted_file = uncommitted and self._head_symbol_hash(g, path, a["symbol"]) != now
        return change  # finished from what was learned, with the others

    def _touching(self, g, commit, path):
        """_commits_touching, once per checkout, recorded commit and path in a call."""
        key = (g.path, commit, path)
        if key not in self.touching:
            self.touching[key] = _commits_touching(g.log_since(commit), path)
        return self.touching[key]

    def _head_symbol_hash(self, g, path, symbol):
        """The symbol's hash in the file as HEAD has it (to tell an uncommitted edit of the
        symbol from one elsewhere in its file)."""
        blob = self._head_blob(g, path)
        if blob is None:
            return None
        memo = self.symbol_hashes.get((blob, path))
        if memo is None or symbol not in memo:
            data = g.read_blobs([blob]).get(blob)
            if data is None:
                return None
            memo = self.symbol_hashes[(blob, path)] = symbol_hashes_of(
                data, path, sorted(self.cited.get(path, set()) | {symbol})
            )
        return memo[symbol]


# What search reads of an item's anchors to rank and show it and to look its verdict up; a
# verdict that has to be computed reads every column (freshness_of).
SEARCH_ANCHOR_COLUMNS = ("evidence_rid", "repo_id", "repo_name", "path", "symbol")


def _load_anchors(store, rids, columns=None):
    """{rid: [anchor row as a dict, in recording order]}: every column, or ``columns`` (which
    include evidence_rid)."""
    out = {rid: [] for rid in rids}
    rids = list(rids)
    cursor = store.db.cursor()
    cursor.row_factory = None  # plain tuples zipped with the column names: no sqlite3.Row per row
    for i in range(0, len(rids), 500):
        chunk = rids[i : i + 500]
        # In the order of the anchors_evidence index: no sort; per item still in id order.
        cursor.execute(
            "SELECT %s FROM anchors WHERE evidence_rid IN (%s) ORDER BY evidence_rid, id"
            % (", ".join(columns) if columns else "*", ",".join("?" * len(chunk))),
            chunk,
        )
        names = [d[0] for d in cursor.description]
        at = names.index("evidence_rid")
        for row in cursor:
            out[row[at]].append(dict(zip(names, row)))
    return out


DEPENDENCY_KEY_COLUMNS = ("evidence_rid", "repo_id", "repo_name", "path", "symbol", "commit_sha")


def _object_format(object_id):
    return "sha256" if len(object_id) == 64 else "sha1"


def _dependency_id(stamp):
    return ("dependency", stamp)


def _load_dependencies(store, rids, columns=None):
    """{rid: [dependency row as a dict]} for the items that have any: every column, or
    ``columns``. With every column, ``id`` is ("dependency", a digest of what it was stamped
    with): dependencies stamped alike are checked once, and what a check learns of one
    (dependency_checks) serves every item that shares it."""
    out = {}
    rids = list(rids)
    cursor = store.db.cursor()
    cursor.row_factory = None
    for i in range(0, len(rids), 500):
        chunk = rids[i : i + 500]
        cursor.execute(
            "SELECT %s FROM dependencies WHERE evidence_rid IN (%s) ORDER BY evidence_rid, id"
            % (", ".join(columns) if columns else "*", ",".join("?" * len(chunk))),
            chunk,
        )
        names = [d[0] for d in cursor.description]
        at = names.index("evidence_rid")
        for row in cursor:
            d = dict(zip(names, row))
            if "id" in d:
                d["id"] = _dependency_id(
                    _key_digest(
                        *[
                            str(d[k])
                            for k in (
                                "repo_id",
                                "repo_name",
                                "path",
                                "symbol",
                                "commit_sha",
                                "blob",
                                "symbol_hash",
                                "checkout",
                            )
                        ]
                    )  # fmt: skip
                )
            out.setdefault(row[at], []).append(d)
    return out


def _with_dependencies(store, anchors, columns=DEPENDENCY_KEY_COLUMNS):
    """``anchors`` ({rid: [anchor rows]}) with each item's dependencies after its anchors: what a
    cached verdict's key is made of (an edit in a dependency's file, or a commit in its
    repository, must change the key as an edit of a cited file does)."""
    deps = _load_dependencies(store, list(anchors), columns)
    if not deps:
        return anchors
    return {rid: rows + deps[rid] if rid in deps else rows for rid, rows in anchors.items()}


def _index_token(repo_path):
    """Size and mtime of the repository's index, where staged and committed renames and deletions
    show without running git; None when it cannot be read."""
    try:  # a checkout's own .git directory, the common case, without looking for a .git file first
        st = os.stat(os.path.join(repo_path, ".git", "index"))
    except OSError:
        gitdir = git_dir_of(repo_path)
        try:
            st = os.stat(os.path.join(gitdir, "index")) if gitdir else None
        except OSError:
            return None
    return "%d:%d" % (st.st_size, st.st_mtime_ns) if st else None


def _followed_in(key):
    """The renames a cache key was made with: {(repo id, old path): new path}, or None."""
    _, sep, extra = (key or "").partition(" ")
    if not sep:
        return None
    try:
        return {(r, old): new for r, old, new in json.loads(extra)}
    except (ValueError, TypeError):
        return None


def _checkout_heads(repo):
    """[(checkout, "checkout@HEAD token")] for the checkouts of ``repo`` whose HEAD can be read
    (another checkout that went away is left out: the ones left judge), or None when the
    registered one's cannot."""
    out = []
    for root in repo.all_checkouts():
        token = recent_head_token(root)
        if token is None:
            if root == repo.home:
                return None
            continue
        out.append((root, "%s@%s" % (root, token)))
    return out


def _cache_key(repos, anchors, heads=None, followed=None):
    """What can be checked without git: each checkout's HEAD and each cited file's stamp, as the
    freshness cache stores it (_cache_inputs, hashed), or None."""
    inputs = _cache_inputs(repos, anchors, heads, followed)
    return None if inputs is None else _hashed_key(inputs)


def _hashed_key(inputs):
    """The stored form of _cache_inputs: a SHA-1 of the text, then the renames it followed."""
    text, used = inputs
    key = _sha1_hex(text.encode("utf-8", "surrogateescape"))
    return key + " " + json.dumps(used) if used else key


def _cache_inputs(repos, anchors, heads=None, followed=None):
    """(the text _cache_key hashes, the renames it followed): each checkout's HEAD and each cited
    file's stamp (_file_stamp); None when something cannot be read or a cited file changed too
    recently to trust its stat.

    ``heads`` (a dict: {repo id: _checkout_heads}, and each cited file's stat) may be shared by
    the caller so that one call over many items reads each checkout's HEAD once. A repository with several checkouts counts them all (any
    of them may be the one that judges). A cited file that is gone (renamed or deleted) counts by
    the checkout's index and, when the check followed it to a new path (``followed``:
    {(repo id, old path): new path}), by that file's stamp too; the key then ends with
    " " and those renames as JSON, so that a lookup can check the same files (_followed_in)."""
    parts = [__version__]
    heads = {} if heads is None else heads
    used = []
    for a in anchors:
        repo = repos.get(a["repo_id"])
        if repo is None:
            parts.append("norepo:%s" % a["repo_name"])
            continue
        checkouts = heads.get(repo.id, False)  # read once per call, not once per anchor
        if checkouts is False:
            checkouts = heads[repo.id] = _checkout_heads(repo)
        if checkouts is None:
            return None
        for root, head in checkouts:
            parts.append(head)
            if not a["path"]:
                continue
            key = (root, a["path"])  # the shared map also keeps each file's stat for the call
            if key not in heads:
                heads[key] = _file_stamp(os.path.join(root, *a["path"].split("/")))
            if heads[key] is not None:
                if not heads[key]:
                    return None
                parts.append("%s:%s" % (a["path"], heads[key]))
                continue
            # Renamed or deleted: git sees that through HEAD (in the key) and the index.
            index_key = ("index", root)
            if index_key not in heads:
                heads[index_key] = _index_token(root)
            new = followed.get((repo.id, a["path"])) if followed else None
            if heads[index_key] is None:
                return None
            if new is None:
                parts.append("%s:gone@%s" % (a["path"], heads[index_key]))
                continue
            # Followed to ``new``: an edit there must show in the key.
            stamp = _file_stamp(os.path.join(root, *new.split("/")))
            if not stamp:
                return None
            parts.append("%s->%s:%s@%s" % (a["path"], new, stamp, heads[index_key]))
            used.append([repo.id, a["path"], new])
    return "\n".join(parts), used


def _file_stamp(path):
    """What the freshness cache key holds of a cited file: size, mtime, change time and inode
    (an edit that keeps size and mtime, by a tool that restores the mtime or by a rename over the
    file, still moves the change time or the inode). None when the file is gone; "" when it was
    modified within HEAD_RACY_SECONDS: a second write within the same timestamp tick shows in no
    stat, so a verdict on it is not cached (as git treats a racily clean index entry, by mtime)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if st.st_mtime_ns >= time.time_ns() - int(HEAD_RACY_SECONDS * 1e9):
        return ""
    return "%d:%d:%d:%d" % (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def _key_digest(*parts):
    """A key of several strings, as one hex digest (stored text keeps no control characters)."""
    return _sha1_hex("\0".join(parts).encode("utf-8", "surrogateescape"))


def _sha1_hex(data):
    """hashlib.sha1(data).hexdigest(), through CPython's small built-in _sha1 module when it is
    there: importing hashlib loads OpenSSL (~2.5 ms), most of what a CLI search with a warm cache
    would otherwise import beyond sqlite3, json and argparse."""
    try:
        from _sha1 import sha1
    except ImportError:  # an interpreter built without it
        from hashlib import sha1
    return sha1(data).hexdigest()


def freshness_of(store, rids, use_cache=True, anchors=None, heads=None, repos=None):
    """{rid: {"verdict", "reasons"[, "anchors"]}}: cached where nothing checkable changed, else
    computed in one batch (and cached). ``anchors`` ({rid: [anchor rows]}, as _load_anchors
    returns, or with SEARCH_ANCHOR_COLUMNS) saves loading them again when the caller has them;
    ``heads`` (a dict) shares what was read of each checkout across the calls of one search, whose
    caller has begun the read (Store.begin_read); ``repos`` ({id: Repo}) saves a query."""
    rids = list(dict.fromkeys(rids))
    if not rids:
        return {}
    if anchors is None:
        anchors = _load_anchors(store, rids)
    repos = {r.id: r for r in _repos(store)} if repos is None else repos
    share, heads = heads, {} if heads is None else heads
    keyed = _with_dependencies(store, {rid: anchors[rid] for rid in rids})
    inputs = {rid: _cache_inputs(repos, keyed[rid], heads) for rid in rids}
    keys = {}  # hashed only where the inputs are not the ones a verdict was last matched with

    def key_of(rid):
        if rid not in keys:
            keys[rid] = None if inputs[rid] is None else _hashed_key(inputs[rid])
        return keys[rid]

    result, seen = _cached_verdicts(store, rids, use_cache, share, inputs, keyed, repos, heads, key_of)
    missing = [rid for rid in rids if rid not in result]
    if missing:
        checker = FreshnessChecker(store, shared=use_cache, remember=True)
        # Every column of the anchors (a caller may hold fewer: SEARCH_ANCHOR_COLUMNS).
        full = _load_anchors(store, missing)
        computed = checker.check_items(full)
        rows = _cache_rows(checker, computed, _with_dependencies(store, full), repos, heads, key_of)
        if use_cache:
            for rid, key, verdict, _, _ in rows:
                seen[rid] = (key, verdict, tuple(computed[rid]["reasons"]))
        _write_freshness_cache(store, rows)
        result.update(computed)
    return result


def _cached_verdicts(store, rids, use_cache, share, inputs, keyed, repos, heads, key_of):
    """({rid: {"verdict", "reasons"}} of the items whose cached verdict still holds, the cache
    rows seen), both empty without ``use_cache``. The cache rows this process has read or written
    are kept for the store generation (a write that may invalidate a verdict drops them): a search
    then reads no row twice. Each is checked against the key computed now, as a row read from the
    table is. ``matched`` keeps, per item, the unhashed inputs its row last matched (followed no
    rename): the same inputs again are the same key, so the row holds without hashing them."""
    result = {}
    if not use_cache:
        return result, {}
    if share is None:  # a search began its read already (and shares ``heads``)
        store.begin_read()
    seen = store.memo(("freshness-rows",), dict)
    matched = store.memo(("freshness-inputs",), dict)

    def hit(rid, stored, verdict, reasons):
        followed = _followed_in(stored)
        # made after following a rename: check the same new files
        key = _cache_key(repos, keyed[rid], heads, followed) if followed else key_of(rid)
        if key is not None and stored == key:
            result[rid] = {"verdict": verdict, "reasons": list(reasons)}
            if not followed:
                matched[rid] = (inputs[rid][0], stored)

    unread = []
    for rid in rids:
        if rid not in seen:
            unread.append(rid)
            continue
        text, known = inputs[rid], matched.get(rid)
        if text is not None and known is not None and known[0] == text[0] and not text[1]:
            stored, verdict, reasons = seen[rid]
            if stored == known[1]:
                result[rid] = {"verdict": verdict, "reasons": list(reasons)}
                continue
        hit(rid, *seen[rid])
    for i in range(0, len(unread), 500):
        chunk = unread[i : i + 500]
        for rid, stored, verdict, reasons in store.db.execute(
            "SELECT evidence_rid, cache_key, verdict, reasons FROM freshness_cache WHERE evidence_rid IN (%s)"
            % ",".join("?" * len(chunk)),
            chunk,
        ).fetchall():
            seen[rid] = (stored, verdict, tuple(json.loads(reasons)))
            hit(rid, *seen[rid])
    return result, seen


def _cache_rows(checker, computed, anchors, repos, heads, key_of):
    """The freshness cache rows for the verdicts ``checker`` just computed (``anchors``: every
    column, and the items' dependencies, see _with_dependencies): each under the key taken before the check (``key_of(rid)``), so that a file edited
    meanwhile makes the next lookup miss rather than lend the old verdict its new stat; under the
    key over the files the check followed where it followed a rename; none where
    FreshnessChecker.cacheable says a verdict may not be kept."""
    cacheable = checker.cacheable()
    now = utc_now()
    rows = []
    for rid, c in computed.items():
        key = key_of(rid)
        if key is not None and any((a["repo_id"], a["path"]) in checker.followed for a in anchors[rid]):
            key = _cache_key(repos, anchors[rid], heads, checker.followed)
        if key is not None and cacheable(anchors[rid]):
            rows.append((rid, key, c["verdict"], json.dumps(c["reasons"]), now))
    return rows


def _write_freshness_cache(store, rows):
    """Store computed verdicts for later searches. The cache is an optimisation: a read-only
    store, a full disk or a lock held past the busy timeout leaves the answer uncached (said once
    in ``store.notices``), never failed."""
    import sqlite3

    if not rows:
        return
    if store.readonly:
        store.notice("the store is read-only here (%s): freshness was computed, not cached" % store.readonly)
        return
    try:
        store.write_keeping_memo(
            "INSERT OR REPLACE INTO freshness_cache(evidence_rid, cache_key, verdict, reasons, computed_at) "
            "VALUES (?, ?, ?, ?, ?)",
            rows,
        )
    except sqlite3.OperationalError as e:
        store.notice("freshness was computed but not cached (%s)" % e)
