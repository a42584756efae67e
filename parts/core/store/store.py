from __future__ import annotations

import json
import os

from .caches import BUILT_ONCE, clear_caches
from .constants import SCHEMA_APP_ID
from .errors import NotFoundError, WctxError
from .head import __version__
from .helpers import shell_command, utc_now
from .redaction import stored_list, stored_text, stored_values
from .schema import MIGRATIONS
from .words import index_text

# ----------------------------------------------------------------------------------------------
# Store
# ----------------------------------------------------------------------------------------------


def default_home():
    env = os.environ.get("WCTX_HOME")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    return os.path.join(os.path.expanduser("~"), ".wctx")


def fts5_available(sqlite3_module=None):
    """True when this Python's SQLite has FTS5."""
    if sqlite3_module is None:
        import sqlite3 as sqlite3_module
    try:
        con = sqlite3_module.connect(":memory:")
        try:
            con.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        finally:
            con.close()
        return True
    except sqlite3_module.Error:
        return False


FTS5_MISSING = (
    "this Python's SQLite (%s) was built without FTS5, which wctx needs for search; "
    "use a Python whose sqlite3 has FTS5 (python.org builds and most distributions do)"
)


def _stored_params(params):
    if isinstance(params, dict):
        return {k: stored_text(v) if isinstance(v, str) else v for k, v in params.items()}
    return stored_list(params)


def _stored_rows(seq):
    """executemany's rows with every text value as stored_text makes it. Each distinct value is
    passed once, and when none changes (the common case) the rows go to SQLite as they are."""
    rows = seq if seq.__class__ is list else list(seq)
    if not rows or not set(map(type, rows)) <= {tuple, list}:
        return [_stored_params(p) for p in rows]
    import itertools

    try:
        changed = stored_values(set(itertools.chain.from_iterable(rows)))
    except TypeError:  # an unhashable value: SQLite refuses it, row by row as ever
        return [_stored_params(p) for p in rows]
    if not changed:
        return rows
    return [[changed.get(v, v) if isinstance(v, str) else v for v in r] for r in rows]


def _is_write(sql):
    return sql.lstrip()[:7].upper() in ("INSERT ", "UPDATE ", "REPLACE", "DELETE ", "INSERT\n", "UPDATE\n")


@BUILT_ONCE
def _store_connection_class():
    import sqlite3

    class _StoreConnection(sqlite3.Connection):
        """The one write boundary: every text parameter of every INSERT, UPDATE, REPLACE or
        DELETE passes stored_text before SQLite sees it (DELETE too, so a WHERE matches what was
        stored)."""

        def execute(self, sql, params=()):
            if params and _is_write(sql):
                params = _stored_params(params)
            return super().execute(sql, params)

        def executemany(self, sql, seq):
            if _is_write(sql):
                seq = _stored_rows(seq)
            return super().executemany(sql, seq)

    return _StoreConnection


class Store:
    """One SQLite connection per process, in WAL mode, with explicit short transactions.

    ``readonly``: None, or why the store was opened read-only (see _connect); reads work, writes
    are refused with a clear error, the freshness cache is not written. ``notices`` collects
    one-line remarks a command shows once (results not cached, ...)."""

    def __init__(self, home, con, readonly=None):
        self.home = home
        self.db = con
        self._depth = 0
        self.readonly = readonly
        self.notices = []
        self._noticed = set()
        self._identity = _file_identity(self.path)
        self._memo = {}
        self._generation = None
        self.scrub_due = False  # an import inside a caller's transaction forgot something

    @property
    def path(self):
        return os.path.join(self.home, "wctx.db")

    def close(self):
        self.db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def atomic(self):
        return _Atomic(self)

    def snapshot(self):
        """A read transaction: every query in it sees the store at one moment, whatever another
        process commits meanwhile (WAL: writers are not held up). Not inside ``atomic``."""
        return _Snapshot(self)

    def generation(self):
        """Changes whenever this store's content may have: another connection committed
        (PRAGMA data_version) or this one wrote (total_changes)."""
        return (self.db.execute("PRAGMA data_version").fetchone()[0], self.db.total_changes)

    def begin_read(self):
        """Start of a read that uses ``memo``: drops what was memoised if the store changed."""
        gen = self.generation()
        if gen != self._generation:
            self._memo = {}
            self._generation = gen

    def memo(self, key, build):
        """A value derived from the store, kept until ``begin_read`` sees a new generation.
        ``build`` None only looks (None when absent)."""
        if key in self._memo:
            return self._memo[key]
        if build is None:
            return None
        value = self._memo[key] = build()
        return value

    def write_keeping_memo(self, sql, rows):
        """``executemany`` in a transaction of its own that keeps what ``memo`` holds: for a table
        nothing memoised derives from (the freshness cache, which a search writes as it reads, so
        that the next search keeps the words and counts it knows). A commit by another connection
        before or after still drops it at the next ``begin_read``."""
        with self.atomic():
            db = self.db
            kept = self._generation is not None and self.generation() == self._generation
            db.executemany(sql, rows)
        if kept and self.db is db:
            self._generation = (self._generation[0], db.total_changes)

    def note_written(self, sessions=(), items=()):
        """Name in sync_changes (m021) the sessions that just got an item, an anchor or a history
        event by an insert: ``sessions`` by id, ``items`` by the row id of the item written to.
        The store's triggers name every update and delete; inserts into those tables are named
        here, by each function that makes them, in the same transaction (an insert trigger would
        cost every import several microseconds an item)."""
        named = sorted(set(sessions))
        if items:
            named += [
                r[0]
                for r in _select_in(
                    self, "SELECT DISTINCT session_id FROM evidence WHERE rid IN (%s)", set(items)
                )
                if r[0] not in named
            ]
        if named:
            self.db.executemany("INSERT INTO sync_changes(session_id) VALUES (?)", [(sid,) for sid in named])

    def one(self, sql, params=()):
        return self.db.execute(sql, params).fetchone()

    def all(self, sql, params=()):
        return self.db.execute(sql, params).fetchall()

    def notice(self, text):
        if text not in self._noticed:
            self._noticed.add(text)
            self.notices.append(text)

    def ensure_current(self):
        """Make sure this connection still reads and writes the file at ``path``: a long-lived
        process (the MCP server) whose store was deleted would otherwise keep acknowledging writes
        into an unlinked file, and one whose store was replaced (a restore) would write into the
        old one. Replaced: reopen the new file. Deleted: refuse loudly, recreate nothing."""
        now = _file_identity(self.path)
        if now == self._identity:
            return
        if now is None:
            raise WctxError(
                "the store %s was deleted while wctx was running; nothing was recorded "
                "(restart wctx to start a new store there)" % self.path
            )
        con, readonly = _connect(self.path)
        fresh = Store(self.home, con, readonly)
        try:
            migrate(fresh)
        except BaseException:
            con.close()
            raise
        old, self.db, self.readonly = self.db, con, readonly
        self._identity = fresh._identity
        # What was memoised came from the old file; the generation of a new connection says
        # nothing about the old one's (both may read (2, 0)), so it cannot tell by itself.
        self._memo, self._generation = {}, None
        clear_caches()
        old.close()


def _file_identity(path):
    """(device, inode) of the store file, None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


class _Snapshot:
    __slots__ = ("db",)

    def __init__(self, store):
        self.db = store.db

    def __enter__(self):
        self.db.execute("BEGIN")

    def __exit__(self, *exc):
        if self.db.in_transaction:
            self.db.execute("COMMIT")


class _Atomic:
    """BEGIN IMMEDIATE ... COMMIT, a SAVEPOINT when nested, rollback on any exception.

    Before a rollback it checks that a transaction is still open: SQLite ends one by itself on
    some errors (a full disk, an I/O error), and a ROLLBACK then would raise "no transaction is
    active" in place of the error that matters."""

    def __init__(self, store):
        self.store = store

    def __enter__(self):
        s = self.store
        if s._depth == 0:
            if s.readonly:
                raise WctxError(
                    "the store %s is read-only here (%s): reads work, nothing can be recorded%s"
                    % (s.path, s.readonly, _sandbox_hint(s.home))
                )
            s.ensure_current()
            s.db.execute("BEGIN IMMEDIATE")
        else:
            s.db.execute("SAVEPOINT wctx_%d" % s._depth)
        s._depth += 1
        return s

    def __exit__(self, exc_type, exc, tb):
        s = self.store
        s._depth -= 1
        db = s.db
        if s._depth == 0:
            if exc_type is None:
                try:
                    db.execute("COMMIT")
                except BaseException:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    raise
            elif db.in_transaction:
                db.execute("ROLLBACK")
        elif not db.in_transaction:
            pass  # SQLite already rolled the whole transaction back; the outer level reports it
        elif exc_type is None:
            db.execute("RELEASE wctx_%d" % s._depth)
        else:
            db.execute("ROLLBACK TO wctx_%d" % s._depth)
            db.execute("RELEASE wctx_%d" % s._depth)
        return False


def _sandbox_hint(home):
    """What to change when the store is read-only because an agent's sandbox keeps its shell from
    writing outside the project: Codex (its shell commands carry CODEX_THREAD_ID) lets a
    workspace-write sandbox write only to its writable roots (checked in codex-cli 0.171)."""
    if not os.environ.get("CODEX_THREAD_ID"):
        return ""
    return (
        "; in Codex's sandbox, make the store writable: writable_roots = [%s] under "
        "[sandbox_workspace_write] in ~/.codex/config.toml (or --add-dir %s for one run)"
        % (json.dumps(home), shell_command([home]))
    )


def _writable(path):
    """Can this process write the store file and create its -wal/-shm next to it?"""
    home = os.path.dirname(path)
    if not os.access(home, os.W_OK):
        return False
    return not os.path.exists(path) or os.access(path, os.W_OK)


def _connect_readonly(path):
    """A read-only connection that never writes the file or its directory: ``mode=ro``, or, when
    SQLite cannot open the WAL database that way (no -shm file and no right to create one, as on
    a read-only mount), ``immutable=1``."""
    import sqlite3
    from pathlib import Path

    uri = Path(path).as_uri()
    con = sqlite3.connect(
        uri + "?mode=ro", uri=True, timeout=30.0, isolation_level=None, check_same_thread=False
    )
    try:
        con.execute("PRAGMA user_version").fetchone()
        return con
    except sqlite3.OperationalError:
        con.close()
    return sqlite3.connect(uri + "?immutable=1", uri=True, isolation_level=None, check_same_thread=False)


STORE_DAMAGED_FIX = (
    "move it aside (mv wctx.db wctx.db.damaged) and run wctx init for a new store; evidence you "
    "exported or synced comes back with wctx import-evidence or wctx sync"
)


def store_open_problem(path, error):
    """(what is wrong, what to do) when SQLite cannot open or read the store file at ``path``:
    a file that is not a database or is cut short is damaged, which no permission change mends;
    anything else is about access."""
    import sqlite3

    text = str(error)
    damaged = isinstance(error, sqlite3.DatabaseError) and not isinstance(error, sqlite3.OperationalError)
    if damaged or "malformed" in text or "not a database" in text:
        return "%s is damaged: %s" % (path, text), STORE_DAMAGED_FIX
    return "cannot open %s: %s" % (
        path,
        text,
    ), "check that this user may read and write %s and its directory" % path


def _connect(path):
    """(connection, None) for the store file at ``path`` in WAL mode, or (read-only connection,
    why it is read-only): the file or its directory is not writable here, or the disk is too full
    or failing for SQLite to create the -wal/-shm files a writer needs (reading still works)."""
    import sqlite3

    why = None if _writable(path) else "no write access to it or its directory"
    try:
        try:
            con = _configure(path, why)
        except sqlite3.OperationalError as e:
            if why is not None or not os.path.isfile(path) or not os.path.getsize(path):
                raise
            why = "the disk is full or failing: %s" % e
            con = _configure(path, why)
    except sqlite3.DatabaseError as e:
        raise WctxError("%s; %s" % store_open_problem(path, e)) from None
    return con, why


def _configure(path, readonly):
    import sqlite3

    if readonly:
        con = _connect_readonly(path)
    else:
        con = sqlite3.connect(
            path,
            timeout=30.0,
            isolation_level=None,
            check_same_thread=False,
            factory=_store_connection_class(),
        )
    try:
        con.row_factory = sqlite3.Row
        con.create_function("wctx_index_text", 1, index_text)  # session_fts's triggers (m012)
        con.execute("PRAGMA busy_timeout = 30000")
        # SQLite's temporary files (sorts, temporary indexes, statement journals, VACUUM's copy)
        # go to TMPDIR or /var/tmp, outside the store: kept in memory instead, nothing of the store
        # is written anywhere but its own directory.
        con.execute("PRAGMA temp_store = MEMORY")
        # Refuse another program's database before switching it to WAL, a change that persists.
        app_id = con.execute("PRAGMA application_id").fetchone()[0]
        if app_id != SCHEMA_APP_ID and con.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            raise WctxError("%s is not a wctx store (another program's database?)" % path)
        if not readonly:
            mode = con.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise WctxError("could not switch %s to WAL mode (got %s)" % (path, mode))
            con.execute("PRAGMA synchronous = NORMAL")
        con.execute("PRAGMA foreign_keys = ON")
    except BaseException:
        con.close()
        raise
    return con


def open_store(home=None, create=True):
    """Open (migrating as needed) the store in ``home`` or $WCTX_HOME or ~/.wctx; create it only
    with ``create`` (commands that record), else a missing store is a NotFoundError."""
    import sqlite3

    if not fts5_available(sqlite3):  # say so plainly here, not as "no such module: fts5" later
        raise WctxError(FTS5_MISSING % sqlite3.sqlite_version)
    named = "--home" if home else ("$WCTX_HOME" if os.environ.get("WCTX_HOME") else None)
    home = os.path.abspath(os.path.expanduser(home)) if home else default_home()
    path = os.path.join(home, "wctx.db")
    if not os.path.exists(path) and not create:
        raise NotFoundError(
            "no wctx store at %s (%s; nothing was created: check the path, or run wctx init to start one there)"
            % (path, "from " + named if named else "the default")
        )
    try:
        os.makedirs(home, exist_ok=True)
    except OSError as e:
        raise WctxError("cannot create the store directory %s: %s" % (home, e.strerror)) from None
    if not os.path.exists(path) and not os.access(home, os.W_OK):
        raise WctxError("cannot create the store %s: its directory is not writable" % path)
    con, readonly = _connect(path)
    store = Store(home, con, readonly)
    try:
        migrate(store)
    except BaseException:
        con.close()
        raise
    return store


def migrate(store):
    import sqlite3

    db = store.db
    try:
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    except sqlite3.DatabaseError as e:
        raise WctxError("the store %s is unreadable: %s" % (store.path, e)) from None
    if tables and app_id != SCHEMA_APP_ID:
        raise WctxError("%s is not a wctx store (another program's database?)" % store.path)
    if version > len(MIGRATIONS):
        raise WctxError(
            "the store %s has schema version %d but this wctx %s knows only up to %d; "
            "upgrade wctx to use it" % (store.path, version, __version__, len(MIGRATIONS))
        )
    if version == len(MIGRATIONS):
        return
    if not fts5_available(sqlite3):
        raise WctxError(FTS5_MISSING % sqlite3.sqlite_version)
    if store.readonly:
        raise WctxError(
            "the store %s is read-only here and has schema version %d; this wctx needs %d: "
            "open it once with write access to upgrade it" % (store.path, version, len(MIGRATIONS))
        )
    for number in range(version + 1, len(MIGRATIONS) + 1):
        migration = MIGRATIONS[number - 1]
        # Each migration and its record commit together: a crash leaves the previous version.
        with store.atomic():
            current = db.execute("PRAGMA user_version").fetchone()[0]
            if current >= number:  # another process migrated while we waited for the lock
                continue
            if number == 1:
                db.execute("PRAGMA application_id = %d" % SCHEMA_APP_ID)
                db.execute(
                    "CREATE TABLE IF NOT EXISTS schema_migrations("
                    "number INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
                )
            migration(db)
            db.execute(
                "INSERT INTO schema_migrations(number, name, applied_at) VALUES (?, ?, ?)",
                (number, migration.__name__, utc_now()),
            )
            db.execute("PRAGMA user_version = %d" % number)


def schema_version(store):
    return store.db.execute("PRAGMA user_version").fetchone()[0]


def _select_in(store, sql, values):
    """Rows of ``sql`` (whose one ``%s`` is an IN list) for all ``values``, 500 per query."""
    values = list(values)
    rows = []
    for i in range(0, len(values), 500):
        chunk = values[i : i + 500]
        rows += store.all(sql % ",".join("?" * len(chunk)), chunk)
    return rows
