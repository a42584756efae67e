from __future__ import annotations

import os

from .errors import NotFoundError, UsageError
from .git import common_git_dir, linked_worktrees, nested_checkout
from .helpers import is_utf8, printable_path, unknown_name

# ----------------------------------------------------------------------------------------------
# Records and lookups
# ----------------------------------------------------------------------------------------------


class Repo:
    """A registered repository as seen through one of its checkouts: ``id``, ``name`` and
    ``root_commit`` are the repository's; ``path`` is the checkout (the registered path unless the
    caller stands in another checkout), ``home`` the registered path, ``checkouts`` the other
    registered checkouts (second clones)."""

    __slots__ = ("id", "name", "path", "root_commit", "home", "checkouts", "_all")

    def __init__(self, id, name, path, root_commit, home=None, checkouts=()):
        self.id = id
        self.name = name
        self.path = path
        self.root_commit = root_commit
        self.home = home or path
        self.checkouts = tuple(checkouts)
        self._all = None

    @property
    def checkout(self):
        """The checkout path when it is not the registered one, else None."""
        return self.path if self.path != self.home else None

    def at(self, path):
        """This repository seen through the checkout at ``path``."""
        return Repo(self.id, self.name, path, self.root_commit, self.home, self.checkouts)

    def all_checkouts(self):
        """Every checkout on this machine: the registered path first, then registered second
        clones, then linked worktrees git knows of (read from files, no git process)."""
        if self._all is None:
            paths = [self.home, *self.checkouts]
            common = common_git_dir(self.home)
            if common:
                paths.extend(linked_worktrees(common))
            self._all = list(dict.fromkeys(paths))
        return self._all


def _repos(store):
    extra = {}
    for r in store.all("SELECT repo_id, path FROM checkouts ORDER BY id"):
        extra.setdefault(r["repo_id"], []).append(r["path"])
    return [
        Repo(r["id"], r["name"], r["path"], r["root_commit"], checkouts=extra.get(r["id"], ()))
        for r in store.all("SELECT * FROM repos ORDER BY name")
    ]


def _checkout_root(path):
    """The nearest directory from ``path`` upwards that holds a ``.git`` (a checkout's top)."""
    current = path if os.path.isdir(path) else os.path.dirname(path)
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _repo_containing(repos, path):
    """The registered repository whose checkout contains ``path``, seen through that checkout, or
    None. This is the one lookup from a place on disk to a repository: capture, search, verify,
    briefs and import all ask it. A registered path or second clone matches by path (longest
    wins); a linked worktree of a registered repository matches through git's common directory."""
    real = os.path.realpath(path)
    best = None
    for repo in repos:
        for checkout in (repo.home, *repo.checkouts):
            if real == checkout or real.startswith(checkout.rstrip(os.sep) + os.sep):
                if best is None or len(checkout) > len(best.path):
                    best = repo.at(checkout)
    if best is not None and real != best.path:
        # Inside a worktree, submodule or nested repository of ``best``: its HEAD and files are not
        # ``best``'s, so it is not ``best`` (it may be a worktree of some registered repository).
        start = real if os.path.isdir(real) else os.path.dirname(real)
        if nested_checkout(best.path, start) is not None:
            best = None
    if best is None:
        top = _checkout_root(real)
        common = common_git_dir(top) if top else None
        # Only a worktree git itself records (its git directory links back to it): a ``.git`` file
        # that merely points at a registered repository's git directory is not one of its checkouts.
        if common and os.path.realpath(top) in linked_worktrees(common):
            for repo in repos:
                if common_git_dir(repo.home) == common:
                    return repo.at(os.path.realpath(top))
    return best


def _unknown_repo_message(store, name):
    names = [r.name for r in _repos(store)]
    if not names:
        return "unknown repository '%s' (registered: none; add one with: wctx repo add PATH)" % name
    return unknown_name("repository", name, names)


def resolve_repo(store, name_or_path=None, cwd=None):
    """The repository a command is about: a registered name or path, else the one holding cwd."""
    repos = _repos(store)
    if name_or_path:
        for repo in repos:
            if repo.name == name_or_path:
                # Named while standing in another checkout of it: that checkout's files and HEAD.
                here = _repo_containing([repo], cwd or os.getcwd())
                return here if here is not None else repo
        if os.sep in name_or_path or name_or_path in (".", "..") or os.path.isdir(name_or_path):
            base = cwd or os.getcwd()
            repo = _repo_containing(repos, os.path.join(base, name_or_path))
            if repo:
                return repo
        raise NotFoundError(_unknown_repo_message(store, name_or_path))
    here = cwd or os.getcwd()
    repo = _repo_containing(repos, here)
    if repo is None:
        raise NotFoundError(
            "%s is not inside a registered repository; pass --repo NAME or register it: wctx repo add PATH"
            % here
        )
    return repo


def _resolve_ids(store, ids):
    """Map user-typed evidence ids (full or unique prefix) to (rid, id) pairs, in order."""
    out = []
    for raw in ids:
        text = (raw or "").strip()
        if not text:
            raise UsageError("empty evidence id")
        if not is_utf8(text):
            raise UsageError("evidence id %s is not valid UTF-8" % printable_path(text))
        row = store.one("SELECT rid, id FROM evidence WHERE id = ?", (text,))
        if row is None:  # another machine's id for an item recorded here too
            row = store.one(
                "SELECT e.rid, e.id FROM evidence_aliases a JOIN evidence e ON e.rid = a.evidence_rid "
                "WHERE a.id = ?",
                (text,),
            )
        if row is None:
            rows = store.all(
                "SELECT rid, id FROM evidence WHERE substr(id, 1, ?) = ? LIMIT 3", (len(text), text)
            )
            if not rows:
                raise NotFoundError("no evidence with id %s" % text)
            if len(rows) > 1:
                raise UsageError(
                    "id %s is ambiguous (%s, …); type more of it" % (text, ", ".join(r["id"] for r in rows))
                )
            row = rows[0]
        out.append((row["rid"], row["id"]))
    return out


def _resolve_session_id(store, text):
    text = (text or "").strip()
    if not text:
        raise UsageError("session id is empty")
    if not is_utf8(text):
        raise UsageError("session id %s is not valid UTF-8" % printable_path(text))
    row = store.one("SELECT id FROM sessions WHERE id = ?", (text,))
    if row:
        return row["id"]
    rows = store.all("SELECT id FROM sessions WHERE substr(id, 1, ?) = ? LIMIT 3", (len(text), text))
    if not rows:
        raise NotFoundError("no session with id %s" % text)
    if len(rows) > 1:
        raise UsageError("session id %s is ambiguous; type more of it" % text)
    return rows[0]["id"]
