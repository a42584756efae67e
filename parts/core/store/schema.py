from __future__ import annotations

import os

from .helpers import claim_key
from .words import _fts_paths, _fts_symbols, index_text

# ----------------------------------------------------------------------------------------------
# Schema and migrations (append-only: never edit a migration that has shipped; add a new one)
# ----------------------------------------------------------------------------------------------


# The migrations in order: @migration appends each one as it is defined, so a migration cannot be
# left out of the list, and a number out of turn (a gap, or two m015s from two branches) stops the
# module at import, in the tests, before any store is touched.
MIGRATIONS = []


def migration(function):
    """Register ``function`` (named ``mNNN_what``) as migration NNN, the next one."""
    number = int(function.__name__[1:4])
    if number != len(MIGRATIONS) + 1:
        raise AssertionError(
            f"{function.__name__} is out of turn: the next migration is {len(MIGRATIONS) + 1}"
        )
    MIGRATIONS.append(function)
    return function


def _run_script(db, script):
    # sqlite3's executescript() commits first; statements one by one keep the migration atomic.
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


@migration
def m001_initial(db):
    _run_script(
        db,
        """
        CREATE TABLE workspaces(
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            created_at TEXT NOT NULL
        );
        CREATE TABLE repos(
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            path TEXT NOT NULL UNIQUE,
            root_commit TEXT,
            added_at TEXT NOT NULL
        );
        CREATE TABLE workspace_repos(
            workspace_id INTEGER NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
            repo_id INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
            PRIMARY KEY(workspace_id, repo_id)
        );
        CREATE TABLE relations(
            id INTEGER PRIMARY KEY,
            from_repo INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            to_repo INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
            note TEXT,
            created_at TEXT NOT NULL,
            UNIQUE(from_repo, kind, to_repo)
        );
        CREATE TABLE sessions(
            id TEXT PRIMARY KEY,
            agent TEXT NOT NULL,
            external_id TEXT,
            cwd TEXT,
            repo_id INTEGER REFERENCES repos(id) ON DELETE SET NULL,
            repo_name TEXT,
            branch TEXT,
            commit_sha TEXT,
            started_at TEXT,
            ended_at TEXT,
            summary TEXT,
            created_at TEXT NOT NULL
        );
        CREATE UNIQUE INDEX sessions_external ON sessions(agent, external_id)
            WHERE external_id IS NOT NULL;
        CREATE TABLE evidence(
            rid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            session_id TEXT NOT NULL REFERENCES sessions(id),
            repo_id INTEGER REFERENCES repos(id) ON DELETE SET NULL,
            repo_name TEXT NOT NULL,
            kind TEXT NOT NULL,
            claim TEXT NOT NULL,
            detail TEXT,
            confidence REAL,
            status TEXT NOT NULL DEFAULT 'active',
            superseded_by TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX evidence_repo ON evidence(repo_id, status, created_at);
        CREATE INDEX evidence_session ON evidence(session_id);
        CREATE TABLE anchors(
            id INTEGER PRIMARY KEY,
            evidence_rid INTEGER NOT NULL REFERENCES evidence(rid) ON DELETE CASCADE,
            repo_id INTEGER REFERENCES repos(id) ON DELETE SET NULL,
            repo_name TEXT NOT NULL,
            root_commit TEXT,
            path TEXT,
            symbol TEXT,
            commit_sha TEXT,
            branch TEXT,
            blob TEXT,
            dirty INTEGER,
            symbol_hash TEXT,
            symbol_lang TEXT
        );
        CREATE INDEX anchors_evidence ON anchors(evidence_rid);
        CREATE INDEX anchors_repo_path ON anchors(repo_id, path);
        CREATE TABLE freshness_cache(
            evidence_rid INTEGER PRIMARY KEY REFERENCES evidence(rid) ON DELETE CASCADE,
            cache_key TEXT NOT NULL,
            verdict TEXT NOT NULL,
            reasons TEXT NOT NULL,
            computed_at TEXT NOT NULL
        );
        """,
    )


@migration
def m002_fts(db):
    # The FTS row id is the evidence rid; the table keeps its own copy of the text so that
    # deletes and updates need nothing but the rid.
    db.execute(
        "CREATE VIRTUAL TABLE evidence_fts USING fts5("
        "claim, symbols, paths, detail, summary, tokenize = 'unicode61 remove_diacritics 2')"
    )


@migration
def m003_session_activity(db):
    # What an imported transcript says a session did, per repository. Derived rows only: a
    # re-import replaces them, so importing twice changes nothing and a grown transcript extends.
    _run_script(
        db,
        """
        ALTER TABLE sessions ADD COLUMN title TEXT;
        ALTER TABLE sessions ADD COLUMN agent_version TEXT;
        CREATE TABLE session_imports(
            session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
            transcript TEXT NOT NULL,
            size INTEGER NOT NULL,
            head_hash TEXT NOT NULL,
            repos_key TEXT NOT NULL,
            lines INTEGER NOT NULL,
            bad_lines INTEGER NOT NULL,
            redacted_values INTEGER NOT NULL,
            compactions INTEGER NOT NULL,
            cwds TEXT NOT NULL,
            tool_calls TEXT NOT NULL,
            errors TEXT NOT NULL,
            subagents TEXT NOT NULL,
            summaries TEXT NOT NULL,
            parent_external_id TEXT,
            imported_at TEXT NOT NULL
        );
        CREATE INDEX session_imports_transcript ON session_imports(transcript);
        CREATE TABLE session_repos(
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            repo_id INTEGER REFERENCES repos(id) ON DELETE SET NULL,
            repo_name TEXT NOT NULL,
            root_commit TEXT,
            is_cwd INTEGER NOT NULL,
            commit_sha TEXT,
            commit_source TEXT NOT NULL,
            branch TEXT,
            branch_source TEXT,
            reads INTEGER NOT NULL,
            edits INTEGER NOT NULL,
            commands INTEGER NOT NULL,
            recorded_at TEXT NOT NULL,
            PRIMARY KEY(session_id, repo_name)
        );
        CREATE INDEX session_repos_repo ON session_repos(repo_id);
        CREATE TABLE session_files(
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            repo_id INTEGER REFERENCES repos(id) ON DELETE SET NULL,
            repo_name TEXT NOT NULL,
            path TEXT NOT NULL,
            reads INTEGER NOT NULL,
            edits INTEGER NOT NULL,
            PRIMARY KEY(session_id, repo_name, path)
        );
        CREATE INDEX session_files_repo_path ON session_files(repo_id, path);
        CREATE TABLE session_commands(
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            tool TEXT,
            command TEXT NOT NULL,
            cwd TEXT,
            repo_name TEXT,
            at TEXT,
            subagent TEXT,
            PRIMARY KEY(session_id, seq)
        )
        """,
    )


@migration
def m004_session_live_evidence(db):
    # Evidence a session recorded live through wctx's MCP server, found in its transcript: listed
    # with the imported session, while it stays in the server's own session.
    db.execute("ALTER TABLE session_imports ADD COLUMN live_evidence TEXT NOT NULL DEFAULT '[]'")


@migration
def m005_sync(db):
    # wctx sync: the remembered remote and this machine's id (sync_state), the remote files already
    # imported by blob id (sync_files), sessions recorded on other machines (sync_foreign: never
    # exported as ours) and the newest version of their items seen (sync_seen: a later local
    # change is exported as an event).
    _run_script(
        db,
        """
        CREATE TABLE sync_state(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE sync_files(path TEXT PRIMARY KEY, blob TEXT NOT NULL);
        CREATE TABLE sync_foreign(session_id TEXT PRIMARY KEY);
        CREATE TABLE sync_seen(id TEXT PRIMARY KEY, updated_at TEXT NOT NULL)
        """,
    )


@migration
def m006_lifecycle(db):
    # Keeping memory true: the duplicate rule's key, confirmations and repeats as a per-item history
    # (the provenance an event replaced travels with it), and tombstones for what was forgotten.
    _run_script(
        db,
        """
        ALTER TABLE evidence ADD COLUMN claim_key TEXT;
        ALTER TABLE evidence ADD COLUMN confirmed_at TEXT;
        CREATE INDEX evidence_claim_key ON evidence(repo_name, claim_key);
        CREATE TABLE evidence_events(
            id TEXT PRIMARY KEY,
            evidence_rid INTEGER NOT NULL REFERENCES evidence(rid) ON DELETE CASCADE,
            event TEXT NOT NULL,
            session_id TEXT,
            agent TEXT,
            note TEXT,
            at TEXT NOT NULL,
            previous TEXT,
            commits TEXT
        );
        CREATE INDEX evidence_events_item ON evidence_events(evidence_rid, at);
        CREATE TABLE tombstones(
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            session_id TEXT,
            reason TEXT NOT NULL,
            forgotten_at TEXT NOT NULL
        )
        """,
    )
    rows = db.execute("SELECT rid, claim FROM evidence").fetchall()
    db.executemany("UPDATE evidence SET claim_key = ? WHERE rid = ?", [(claim_key(r[1]), r[0]) for r in rows])


@migration
def m007_repository_identity(db):
    # One repository, many checkouts; nothing orphaned. ``checkouts`` holds a repository's checkouts
    # besides its registered path (second clones; linked worktrees are also found through git's own
    # records). ``anchors.checkout`` is the checkout a capture ran in (NULL: the registered path), a
    # local fact that never travels. The ``dormant_*`` tables keep, by identity (root commit + name,
    # never a path), what a removed or not-yet-registered repository had: its last path, relations
    # and workspace memberships, restored when it is registered again. Declined suggestions stay
    # declined.
    _run_script(
        db,
        """
        CREATE TABLE checkouts(
            id INTEGER PRIMARY KEY,
            repo_id INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
            path TEXT NOT NULL UNIQUE,
            added_at TEXT NOT NULL
        );
        CREATE INDEX checkouts_repo ON checkouts(repo_id);
        ALTER TABLE anchors ADD COLUMN checkout TEXT;
        CREATE TABLE dormant_repos(
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            root_commit TEXT,
            path TEXT,
            removed_at TEXT NOT NULL
        );
        CREATE TABLE dormant_relations(
            id INTEGER PRIMARY KEY,
            from_name TEXT NOT NULL,
            from_root TEXT,
            kind TEXT NOT NULL,
            to_name TEXT NOT NULL,
            to_root TEXT,
            note TEXT,
            created_at TEXT NOT NULL
        );
        CREATE TABLE dormant_members(
            id INTEGER PRIMARY KEY,
            workspace TEXT NOT NULL,
            repo_name TEXT NOT NULL,
            root_commit TEXT
        );
        CREATE TABLE declined_relations(
            from_name TEXT NOT NULL,
            from_root TEXT,
            kind TEXT NOT NULL,
            to_name TEXT NOT NULL,
            to_root TEXT,
            declined_at TEXT NOT NULL
        )
        """,
    )


@migration
def m008_session_fts(db):
    # A session's summary was copied into the search row of every item of the session, so each new
    # summary rewrote them all (recording grew quadratic). It is now indexed once per session, kept
    # by triggers whatever writes sessions. Rows carry the session id, which is what search joins
    # on: a VACUUM may renumber sessions' rowids, and OR REPLACE keeps that from colliding.
    db.execute(
        "CREATE VIRTUAL TABLE session_fts USING fts5(summary, session UNINDEXED, "
        "tokenize = 'unicode61 remove_diacritics 2')"
    )
    db.execute(
        "INSERT INTO session_fts(rowid, summary, session) SELECT rowid, summary, id FROM sessions "
        "WHERE coalesce(summary, '') != ''"
    )
    db.execute(
        "CREATE TRIGGER session_fts_insert AFTER INSERT ON sessions WHEN coalesce(new.summary, '') != '' BEGIN "
        "INSERT OR REPLACE INTO session_fts(rowid, summary, session) VALUES (new.rowid, new.summary, new.id); END"
    )
    db.execute(
        "CREATE TRIGGER session_fts_update AFTER UPDATE OF summary ON sessions "
        "WHEN new.summary IS NOT old.summary BEGIN "
        "DELETE FROM session_fts WHERE rowid = old.rowid; "
        "INSERT OR REPLACE INTO session_fts(rowid, summary, session) SELECT new.rowid, new.summary, new.id "
        "WHERE coalesce(new.summary, '') != ''; END"
    )
    db.execute(
        "CREATE TRIGGER session_fts_delete AFTER DELETE ON sessions BEGIN "
        "DELETE FROM session_fts WHERE rowid = old.rowid; END"
    )
    db.execute(
        "CREATE VIRTUAL TABLE evidence_text USING fts5(claim, symbols, paths, detail, "
        "tokenize = 'unicode61 remove_diacritics 2')"
    )
    db.execute(
        "INSERT INTO evidence_text(rowid, claim, symbols, paths, detail) "
        "SELECT rowid, claim, symbols, paths, detail FROM evidence_fts"
    )
    db.execute("DROP TABLE evidence_fts")
    db.execute("ALTER TABLE evidence_text RENAME TO evidence_fts")


@migration
def m009_briefing_served(db):
    # What a briefing showed, per repository, with the verdict it had then: an item that goes
    # stale afterwards is reported by the next briefing, once.
    _run_script(
        db,
        """
        CREATE TABLE briefing_served(
            repo_id INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
            evidence_rid INTEGER NOT NULL REFERENCES evidence(rid) ON DELETE CASCADE,
            verdict TEXT NOT NULL,
            served_at TEXT NOT NULL,
            PRIMARY KEY(repo_id, evidence_rid)
        )
        """,
    )


@migration
def m010_anchor_symbols(db):
    # Recall by code reference reads, per related repository, the anchors citing given symbols
    # and the files cited without one: a covering index answers both without touching the table
    # (at 10,000 items the table scans cost more than the rest of a briefing).
    db.execute("CREATE INDEX anchors_repo_symbol ON anchors(repo_id, symbol, path, repo_name, evidence_rid)")


@migration
def m011_evidence_aliases(db):
    # Another store's id for an item recorded here too: the same finding captured independently
    # on two machines is one item on each, and each keeps the other's id for it, so a status
    # change, confirmation or forget made there under its id reaches the twin here.
    db.execute(
        "CREATE TABLE evidence_aliases (id TEXT PRIMARY KEY, "
        "evidence_rid INTEGER NOT NULL REFERENCES evidence(rid) ON DELETE CASCADE)"
    )
    db.execute("CREATE INDEX evidence_aliases_rid ON evidence_aliases(evidence_rid)")


@migration
def m012_index_words(db):
    # The search rows hold index words (index_text: light stems and identifier parts) instead of
    # the texts as written, so that a query term is one exact token, whose posting list FTS5 walks
    # lazily, not a prefix, whose whole posting list it builds (twice under bm25). Rebuilt from the
    # stored items and anchors. Summaries are indexed by the same function, which every
    # connection registers as wctx_index_text for the triggers that keep session_fts.
    db.execute(
        "CREATE VIRTUAL TABLE evidence_words USING fts5(claim, symbols, paths, detail, "
        "tokenize = 'unicode61 remove_diacritics 2')"
    )
    anchors = {}
    for rid, path, symbol in db.execute(
        "SELECT evidence_rid, path, symbol FROM anchors ORDER BY evidence_rid, id"
    ):
        anchors.setdefault(rid, []).append({"path": path, "symbol": symbol})
    items = db.execute(
        "SELECT e.rid, e.claim, e.detail FROM evidence e WHERE e.rid IN (SELECT rowid FROM evidence_fts)"
    ).fetchall()
    db.executemany(
        "INSERT INTO evidence_words(rowid, claim, symbols, paths, detail) VALUES (?, ?, ?, ?, ?)",
        [
            (rid, index_text(claim), index_text(_fts_symbols(anchors.get(rid, ()))),
             index_text(_fts_paths(anchors.get(rid, ()))), index_text(detail))
            for rid, claim, detail in items
        ],
    )  # fmt: skip
    db.execute("DROP TABLE evidence_fts")
    db.execute("ALTER TABLE evidence_words RENAME TO evidence_fts")
    for name in ("session_fts_insert", "session_fts_update"):
        db.execute("DROP TRIGGER %s" % name)
    db.execute(
        "CREATE TRIGGER session_fts_insert AFTER INSERT ON sessions WHEN coalesce(new.summary, '') != '' BEGIN "
        "INSERT OR REPLACE INTO session_fts(rowid, summary, session) "
        "VALUES (new.rowid, wctx_index_text(new.summary), new.id); END"
    )
    db.execute(
        "CREATE TRIGGER session_fts_update AFTER UPDATE OF summary ON sessions "
        "WHEN new.summary IS NOT old.summary BEGIN "
        "DELETE FROM session_fts WHERE rowid = old.rowid; "
        "INSERT OR REPLACE INTO session_fts(rowid, summary, session) "
        "SELECT new.rowid, wctx_index_text(new.summary), new.id WHERE coalesce(new.summary, '') != ''; END"
    )
    db.execute("DELETE FROM session_fts")
    db.execute(
        "INSERT INTO session_fts(rowid, summary, session) SELECT rowid, wctx_index_text(summary), id "
        "FROM sessions WHERE coalesce(summary, '') != ''"
    )


@migration
def m013_sync_exported(db):
    # Incremental sync: per session file this machine last pushed, the digest of what it was built
    # from and the blob it became; a session whose digest has not moved is not built again.
    db.execute(
        "CREATE TABLE sync_exported(session_id TEXT PRIMARY KEY, digest TEXT NOT NULL, blob TEXT NOT NULL)"
    )


@migration
def m014_claim_key_digest(db):
    # The duplicate rule's key becomes a digest of the claim's folded words (claim_key) rather
    # than the words themselves: the same comparisons, a quarter less store. Made again from each
    # stored claim, as m006 first made it; its index built again once over the new keys rather
    # than updated row by row.
    db.execute("DROP INDEX evidence_claim_key")
    rows = db.execute("SELECT rid, claim FROM evidence").fetchall()
    db.executemany("UPDATE evidence SET claim_key = ? WHERE rid = ?", [(claim_key(r[1]), r[0]) for r in rows])
    db.execute("CREATE INDEX evidence_claim_key ON evidence(repo_name, claim_key)")


@migration
def m015_anchor_checks(db):
    # What verify last learned about each anchor that only git and a parse can tell: the cited
    # symbol's hash in the file's blob at the check, and the commits that changed it between its
    # recorded commit and HEAD then. Each is kept with the key it was computed for (see
    # freshness._check_keys) and used only while that key holds, so it never needs invalidating.
    _run_script(
        db,
        """
        CREATE TABLE anchor_checks(
            anchor_id INTEGER PRIMARY KEY REFERENCES anchors(id) ON DELETE CASCADE,
            hash_key TEXT,
            symbol_hash TEXT,
            history_key TEXT,
            history TEXT
        )
        """,
    )


@migration
def m016_anchor_symbol_lines(db):
    # Where a cited symbol lay in the blob capture stamped ("FIRST-LAST", comma-separated per
    # definition): the walk that names the commits which changed it starts from there instead of
    # parsing that version again. NULL for anchors stamped before, or imported: they are parsed.
    db.execute("ALTER TABLE anchors ADD COLUMN symbol_lines TEXT")


@migration
def m017_code_vocabulary(db):
    # Two more columns in an item's search row (vocabulary.py): ``code``, the index words of the
    # vocabulary of the code it cites, searched with its own bm25 weight, and ``code_words``, the
    # same words as written, unindexed, from which a reason names the word a query word matched.
    # Filled when an item is captured, confirmed or recorded again after its code changed; empty
    # for the items stored before (FTS5 takes no new column in place: the table is made again).
    db.execute(
        "CREATE VIRTUAL TABLE evidence_words USING fts5(claim, symbols, paths, detail, code, "
        "code_words UNINDEXED, tokenize = 'unicode61 remove_diacritics 2')"
    )
    db.execute(
        "INSERT INTO evidence_words(rowid, claim, symbols, paths, detail) "
        "SELECT rowid, claim, symbols, paths, detail FROM evidence_fts"
    )
    db.execute("DROP TABLE evidence_fts")
    db.execute("ALTER TABLE evidence_words RENAME TO evidence_fts")


@migration
def m018_dependencies(db):
    # What the symbols an item cites refer to in related repositories (read at capture and
    # confirm), and what an item names with --depends-on: each stamped as an anchor is (the
    # repository's HEAD, the file's blob, the symbol's hash), so verify compares it the same way.
    # ``how``: calls, uses or explicit; ``source``: the cited path#symbol that refers to it.
    # dependency_checks is anchor_checks for dependencies, keyed by a digest of what a dependency
    # was stamped with (many items share one), so that it holds no path or symbol of an item.
    _run_script(
        db,
        """
        CREATE TABLE dependencies(
            id INTEGER PRIMARY KEY,
            evidence_rid INTEGER NOT NULL REFERENCES evidence(rid) ON DELETE CASCADE,
            how TEXT NOT NULL,
            source TEXT,
            repo_id INTEGER REFERENCES repos(id) ON DELETE SET NULL,
            repo_name TEXT NOT NULL,
            root_commit TEXT,
            path TEXT NOT NULL,
            symbol TEXT,
            commit_sha TEXT,
            branch TEXT,
            blob TEXT,
            dirty INTEGER,
            symbol_hash TEXT,
            symbol_lang TEXT,
            checkout TEXT,
            symbol_lines TEXT
        );
        CREATE INDEX dependencies_evidence ON dependencies(evidence_rid);
        CREATE TABLE dependency_checks(
            stamp TEXT PRIMARY KEY,
            hash_key TEXT,
            symbol_hash TEXT,
            history_key TEXT,
            history TEXT
        )
        """,
    )


@migration
def m019_authorship(db):
    # Who recorded each session: ``author`` (the person: git's user.name <user.email> on the
    # recording machine, or an identity set with wctx whoami --set) and ``machine`` (the recording
    # store's random id). Written once, when the session is recorded or first arrives; no import
    # rewrites them, except a session's own machine, whose shared files are the word on it.
    # Sessions recorded here before are this machine's (its id is made now if sync never did);
    # those another machine shared before keep an unknown author. ``hidden``: what this person
    # keeps out of their own searches and briefings (an item by id, or everything of an author);
    # it never leaves this store. A tombstone's ``machine`` is the team directory it came from
    # (NULL: forgotten here, or by a file given to import-evidence).
    db.execute(
        "INSERT OR IGNORE INTO sync_state(key, value) VALUES ('machine', ?)",
        (os.urandom(8).hex(),),
    )
    _run_script(
        db,
        """
        ALTER TABLE sessions ADD COLUMN author TEXT;
        ALTER TABLE sessions ADD COLUMN machine TEXT;
        ALTER TABLE tombstones ADD COLUMN machine TEXT;
        UPDATE sessions SET machine = (SELECT value FROM sync_state WHERE key = 'machine')
            WHERE id NOT IN (SELECT session_id FROM sync_foreign);
        CREATE INDEX sessions_author ON sessions(author);
        CREATE TABLE hidden(
            kind TEXT NOT NULL CHECK (kind IN ('item', 'author')),
            value TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY(kind, value)
        )
        """,
    )


@migration
def m020_sync_workspaces(db):
    # Sync lays the team's memory out as one branch per workspace beside the team's own branch,
    # so that a person fetches only the workspaces they are in. What sync remembers of the files it
    # read (sync_files) and of the session files it pushed (sync_exported) is kept per branch:
    # ``workspace`` names the workspace whose branch holds the file, '' the team's branch (which is
    # where every file was before).
    _run_script(
        db,
        """
        CREATE TABLE sync_files_by_branch(
            workspace TEXT NOT NULL DEFAULT '',
            path TEXT NOT NULL,
            blob TEXT NOT NULL,
            PRIMARY KEY(workspace, path)
        );
        INSERT INTO sync_files_by_branch(workspace, path, blob) SELECT '', path, blob FROM sync_files;
        DROP TABLE sync_files;
        ALTER TABLE sync_files_by_branch RENAME TO sync_files;
        CREATE TABLE sync_exported_by_branch(
            workspace TEXT NOT NULL DEFAULT '',
            session_id TEXT NOT NULL,
            digest TEXT NOT NULL,
            blob TEXT NOT NULL,
            PRIMARY KEY(workspace, session_id)
        );
        INSERT INTO sync_exported_by_branch(workspace, session_id, digest, blob)
            SELECT '', session_id, digest, blob FROM sync_exported;
        DROP TABLE sync_exported;
        ALTER TABLE sync_exported_by_branch RENAME TO sync_exported
        """,
    )


@migration
def m021_sync_changes(db):
    # What changed since the last sync, kept by the store itself: every write to an item, its
    # anchors, its history or its session appends the session's id to sync_changes (once for a run
    # of writes to the same session), whatever process writes. A sync
    # builds again only the files of the sessions named there, and a sync with nothing named and
    # nothing moved on the remote does nothing, whatever the store's size. A sync marks where it
    # starts with a row whose session_id is NULL and, once pushed, deletes the rows up to its mark:
    # what another process writes meanwhile stays for the next sync. Every session a store holds
    # now is named once, so that the first sync after this migration looks at all of them.
    db.execute("CREATE TABLE sync_changes(seq INTEGER PRIMARY KEY, session_id TEXT)")
    db.execute("INSERT INTO sync_changes(session_id) SELECT id FROM sessions ORDER BY rowid")
    # Updates and deletes are named by triggers, whatever runs them; inserts of items, anchors
    # and history events are named by the few functions that insert them (Store.note_written):
    # the mere presence of an insert trigger on those tables costs an import several
    # microseconds an item. The test sits in each trigger's WHEN clause, where it is cheapest.
    last = "(SELECT session_id FROM sync_changes ORDER BY seq DESC LIMIT 1)"
    of_item = "(SELECT session_id FROM evidence WHERE rid = %s.evidence_rid)"
    for table, event, row in (
        ("evidence", "UPDATE", "new"),
        ("evidence", "DELETE", "old"),
        ("anchors", "UPDATE", "new"),
        ("anchors", "DELETE", "old"),
        ("evidence_events", "DELETE", "old"),
        ("sessions", "INSERT", "new"),
        ("sessions", "UPDATE", "new"),
        ("sessions", "DELETE", "old"),
    ):
        session = {"evidence": row + ".session_id", "sessions": row + ".id"}.get(table) or of_item % row
        db.execute(
            "CREATE TRIGGER sync_changes_%s_%s AFTER %s ON %s WHEN %s IS NOT %s BEGIN "
            "INSERT INTO sync_changes(session_id) SELECT %s WHERE %s IS NOT NULL; END"
            % (table, event.lower(), event, table, session, last, session, session)
        )


@migration
def m022_symptom(db):
    # How the problem shows itself, in the words of someone who has not found the cause yet
    # (``symptom``): stored with the item and searched in its own column of the search row, with
    # its own bm25 weight. FTS5 takes no new column in place: the table is made again, every row
    # copied as it is (the index words already made), the symptom empty for the items before.
    db.execute("ALTER TABLE evidence ADD COLUMN symptom TEXT")
    db.execute(
        "CREATE VIRTUAL TABLE evidence_words USING fts5(claim, symbols, paths, detail, code, symptom, "
        "code_words UNINDEXED, tokenize = 'unicode61 remove_diacritics 2')"
    )
    db.execute(
        "INSERT INTO evidence_words(rowid, claim, symbols, paths, detail, code, symptom, code_words) "
        "SELECT rowid, claim, symbols, paths, detail, code, '', code_words FROM evidence_fts"
    )
    db.execute("DROP TABLE evidence_fts")
    db.execute("ALTER TABLE evidence_words RENAME TO evidence_fts")
