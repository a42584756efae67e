from __future__ import annotations

import os
import re

from .errors import NotFoundError, UsageError, WctxError
from .git import GitError, run_git
from .helpers import clean_text, utc_now
from .records import _resolve_ids
from .store import Store, _connect_readonly, default_home

# ----------------------------------------------------------------------------------------------
# Authorship: who recorded an item, and what this person keeps out of their own view
# ----------------------------------------------------------------------------------------------
# Every session carries its author (a person: "Name <email>") and its machine (the recording
# store's random id). Both are written once, when the session is recorded here or first arrives
# from a teammate, and every surface shows them: an item is "you" when its session's machine is
# this store's, and otherwise its author and machine. A person judges a teammate's evidence by
# hiding an item, or everything of an author, from their own searches and briefings: the table
# ``hidden`` is this store's alone (sync and export never read it), and nothing is deleted.

MAX_AUTHOR_CHARS = 200  # a name and an address; a longer one is refused, never cut


def store_machine_id(store):
    """This store's random id (made by migration 19, or by sync before it): the machine of every
    session recorded here, and the name of the store's own directory on a team branch."""
    row = store.one("SELECT value FROM sync_state WHERE key = 'machine'")
    if row is None:
        with store.atomic():
            store.db.execute(
                "INSERT OR IGNORE INTO sync_state(key, value) VALUES ('machine', ?)", (os.urandom(8).hex(),)
            )
        row = store.one("SELECT value FROM sync_state WHERE key = 'machine'")
    return row["value"]


def clean_author(value, what="author"):
    """An author as stored: one line of at most MAX_AUTHOR_CHARS characters, or None."""
    value = clean_text(value, what, MAX_AUTHOR_CHARS)
    if value is not None and ("\n" in value or "\r" in value):
        raise UsageError("%s must be one line" % what)
    return value


def _git_identity():
    """git's user.name and user.email from the user's own (global, then system) configuration,
    never a repository's: "Name <email>", the name alone, or None."""
    parts = {}
    for scope in ("--global", "--system"):  # one git process each, the second only if needed
        try:
            code, out = run_git(
                os.path.abspath(os.sep),
                ["config", scope, "--get-regexp", r"^user\.(name|email)$"],
                ok_codes=(0, 1),
            )
        except GitError:
            continue
        for line in out.decode("utf-8", "replace").splitlines():
            key, _, value = line.partition(" ")
            if value.strip():
                parts.setdefault(key.lower(), value.strip())
        if "user.name" in parts and "user.email" in parts:
            break
    name, email = parts.get("user.name"), parts.get("user.email")
    if name and email:
        return "%s <%s>" % (name, email)
    return name or (email and "<%s>" % email) or None


def recorder_identity(store):
    """Who records here, in this order: WCTX_AUTHOR, the identity set with ``wctx whoami --set``,
    git's user.name and user.email; None when none is set. The one place it is decided."""
    configured = os.environ.get("WCTX_AUTHOR")
    if configured and configured.strip():
        try:
            return clean_author(configured, "WCTX_AUTHOR")
        except UsageError:
            pass  # doctor names it; recording does not stop for it
    row = store.one("SELECT value FROM sync_state WHERE key = 'author'")
    if row is not None:
        return row["value"]
    return clean_author(_git_identity(), "git's user.name")


NO_IDENTITY = "no identity: teammates will see your items as recorded by an unknown author"
NO_IDENTITY_FIX = (
    'git config --global user.name "Your Name"; git config --global user.email you@example.com '
    '(or: wctx whoami --set "Your Name <you@example.com>")'
)


def missing_identity(store=None, home=None):
    """NO_IDENTITY when nobody is set to record as, else None: the one check and wording that
    doctor and hooks install share. Without ``store``, the store in ``home`` is read (read-only,
    and only if it exists: a store not yet made has no identity of its own)."""
    import sqlite3

    con = None
    try:
        if store is None:
            home = home or default_home()
            path = os.path.join(home, "wctx.db")
            if os.path.exists(path):
                con = _connect_readonly(path)
                con.row_factory = sqlite3.Row
                store = Store(home, con)
        try:
            author = recorder_identity(store) if store is not None else _unstored_identity()
        except (sqlite3.Error, WctxError):
            author = None
    except sqlite3.Error:
        author = _unstored_identity()
    finally:
        if con is not None:
            con.close()
    return None if author else NO_IDENTITY


def _unstored_identity():
    """recorder_identity where there is no store yet: WCTX_AUTHOR, else git's."""
    configured = os.environ.get("WCTX_AUTHOR")
    if configured and configured.strip():
        return configured
    try:
        return clean_author(_git_identity(), "git's user.name")
    except UsageError:
        return None


def recorder(store):
    """(author, machine) stamped on a session recorded here now."""
    return recorder_identity(store), store_machine_id(store)


def set_identity(store, author):
    """Set (or, with None, clear) the identity this store records under."""
    author = clean_author(author)
    with store.atomic():
        if author is None:
            store.db.execute("DELETE FROM sync_state WHERE key = 'author'")
        else:
            store.db.execute(
                "INSERT INTO sync_state(key, value) VALUES ('author', ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (author,),
            )


def whoami(store):
    """This store's identity, where it comes from, and its machine id."""
    if (os.environ.get("WCTX_AUTHOR") or "").strip():
        source = "WCTX_AUTHOR"
    elif store.one("SELECT 1 FROM sync_state WHERE key = 'author'") is not None:
        source = "wctx whoami --set"
    else:
        source = "git config user.name / user.email"
    author = recorder_identity(store)
    return {"author": author, "source": source if author else None, "machine": store_machine_id(store)}


def recorded_by(author, machine, mine):
    """How every surface names who recorded an item: "you" for this machine's, else the author and
    the machine's first eight hex digits."""
    if mine:
        return "you"
    who = author or "an unknown author"
    return "%s (machine %s)" % (who, machine[:8]) if machine else "%s (machine unknown)" % who


def short_recorded_by(text):
    """recorded_by where space is scarce (a search line, a briefing line): the author's name
    alone, else the local part of the email; "you" and an unknown author as they are. ``show``
    and the detailed forms keep the whole "Name <email> (machine …)"."""
    if not isinstance(text, str) or text == "you":
        return text
    who = text.rsplit(" (machine ", 1)[0]
    name, _, rest = who.partition("<")
    if name.strip():
        return name.strip()
    return rest.rstrip(">").split("@")[0].strip() or who


# The columns every reader of an item selects from its session ``s`` to say who recorded it.
SESSION_WHO_COLUMNS = (
    "s.author AS session_author, s.machine AS session_machine, (s.machine IS NOT NULL AND "
    "s.machine = (SELECT value FROM sync_state WHERE key = 'machine')) AS session_mine"
)


def row_recorded_by(row):
    """recorded_by for a row that holds SESSION_WHO_COLUMNS."""
    return recorded_by(row["session_author"], row["session_machine"], row["session_mine"])


def _known_authors(store):
    return [r["author"] for r in store.all("SELECT DISTINCT author FROM sessions WHERE author IS NOT NULL")]


def resolve_author(store, text):
    """The stored author a user means by ``text``: the whole "Name <email>", the name or the email
    (any case), else the one author with a word of the name or the email that starts with it
    (``bob``, ``berg``). ``me`` is not an author here; callers take it first."""
    text = clean_author(text)
    if text is None:
        raise UsageError("author is empty")
    authors = _known_authors(store)
    if text in authors:
        return text
    wanted = text.lower()
    found = []
    for author in authors:
        name, _, rest = author.partition(" <")
        email = rest[:-1] if rest.endswith(">") else ""
        if wanted in (author.lower(), name.strip().lower(), email.lower(), "<%s>" % email.lower()):
            found.append(author)
    if not found:  # then by word prefix: "bob" is "Bob Berg <bob.berg@example.com>"
        for author in authors:
            name, _, rest = author.partition(" <")
            words = name.lower().split() + [rest.lower().rstrip(">")]
            words += re.split(r"[^\w]+", rest.lower())  # the email's parts: bob, berg, example
            if any(w.startswith(wanted) for w in words if w):
                found.append(author)
    if len(found) == 1:
        return found[0]
    if found:
        raise UsageError(
            "author %s is ambiguous (%s); give the whole name and address" % (text, "; ".join(sorted(found)))
        )
    known = "; ".join(sorted(authors)[:8]) or "none recorded yet"
    raise NotFoundError("no author %s (known: %s)" % (text, known))


class AuthorFilter:
    """Which items a search or briefing may show, as SQL on evidence ``e`` and as a test of an
    evidence row id: never a hidden item or one of a hidden author (unless ``include_hidden``),
    and with ``only`` (an author, or ``me``) nothing else."""

    __slots__ = ("sql", "params", "excluded", "allowed")

    def __init__(self, sql, params, excluded, allowed):
        self.sql, self.params, self.excluded, self.allowed = sql, params, excluded, allowed

    def admits(self, rid):
        return rid not in self.excluded and (self.allowed is None or rid in self.allowed)


_HIDDEN_SQL = (
    "e.id NOT IN (SELECT value FROM hidden WHERE kind = 'item') AND e.session_id NOT IN "
    "(SELECT s.id FROM sessions s JOIN hidden h ON h.kind = 'author' AND h.value = s.author)"
)


def author_filter(store, only=None, include_hidden=False):
    """The AuthorFilter of one search or briefing (``only``: None, ``me`` or an author as typed);
    None when it filters nothing. The rid sets are read once per store generation."""
    sql, params, excluded, allowed = [], [], frozenset(), None
    if not include_hidden and store.memo(("hidden-any",), lambda: store.one("SELECT 1 FROM hidden LIMIT 1")):
        sql.append(_HIDDEN_SQL)
        excluded = store.memo(
            ("hidden-rids",),
            lambda: frozenset(
                r["rid"] for r in store.all("SELECT e.rid FROM evidence e WHERE NOT (%s)" % _HIDDEN_SQL)
            ),
        )
    if only is not None:
        if only == "me":
            clause, value = "machine = ?", store_machine_id(store)
        else:
            clause, value = "author = ?", resolve_author(store, only)
        sql.append("e.session_id IN (SELECT id FROM sessions WHERE %s)" % clause)
        params.append(value)
        allowed = store.memo(
            ("author-rids", clause, value),
            lambda: frozenset(
                r["rid"]
                for r in store.all(
                    "SELECT e.rid FROM evidence e JOIN sessions s ON s.id = e.session_id WHERE s.%s" % clause,
                    (value,),
                )
            ),
        )
    if not sql:
        return None
    return AuthorFilter(sql, params, excluded, allowed)


def hide(store, ids=(), author=None, undo=False):
    """Hide (``undo``: show again) items by id, or everything of one author, in this store's own
    searches and briefings; returns what changed as (kind, value) pairs."""
    if bool(ids) == bool(author):
        raise UsageError(
            "name evidence ids or --author, not both" if ids else "name evidence ids or --author AUTHOR"
        )
    if author:
        if author == "me":
            raise UsageError("--author me: your own items are yours to retract or forget, not to hide")
        targets = [("author", resolve_author(store, author))]
    else:
        targets = [("item", eid) for _, eid in _resolve_ids(store, ids)]
    changed = []
    with store.atomic():
        for kind, value in targets:
            if undo:
                cur = store.db.execute("DELETE FROM hidden WHERE kind = ? AND value = ?", (kind, value))
            else:
                cur = store.db.execute(
                    "INSERT OR IGNORE INTO hidden(kind, value, created_at) VALUES (?, ?, ?)",
                    (kind, value, utc_now()),
                )
            if cur.rowcount:
                changed.append((kind, value))
    return changed


def hidden_reason(store, evidence_id, author):
    """Why this store hides an item ("this item", "its author X") or None: show says so."""
    rows = store.all(
        "SELECT kind FROM hidden WHERE (kind = 'item' AND value = ?) OR (kind = 'author' AND value = ?)",
        (evidence_id, author or ""),
    )
    kinds = {r["kind"] for r in rows}
    if "item" in kinds:
        return "this item"
    return "everything its author %s recorded" % author if kinds else None


def hidden_list(store):
    """What this store hides: [{kind, value, created_at, items}], items counting what it keeps out."""
    out = []
    for r in store.all("SELECT kind, value, created_at FROM hidden ORDER BY created_at, kind, value"):
        if r["kind"] == "item":
            n = store.one("SELECT COUNT(*) AS n FROM evidence WHERE id = ?", (r["value"],))["n"]
        else:
            n = store.one(
                "SELECT COUNT(*) AS n FROM evidence e JOIN sessions s ON s.id = e.session_id WHERE s.author = ?",
                (r["value"],),
            )["n"]
        out.append({"kind": r["kind"], "value": r["value"], "created_at": r["created_at"], "items": n})
    return out
