from __future__ import annotations

from .authors import store_machine_id
from .caches import CLEAN_TEXTS
from .capture import _EVENT_INSERT, _FTS_INSERT, DuplicateIndex, _check_confidence, _event_row
from .constants import MAX_CLAIM_CHARS, MAX_DETAIL_CHARS, MAX_SYMPTOM_CHARS
from .errors import UsageError
from .helpers import clean_text, utc_now
from .items import _forget_rows, _scrub_store
from .records import _repos
from .redaction import stored_claim, stored_key, stored_noting, stored_text
from .repos import _workspace_id, identity_of
from .shared_records import (
    ANCHOR_FIELDS,
    TOPOLOGY_TYPES,
    RecordError,
    export_lines,
    export_sources,
    field_checks,
    field_plan,
    parse_export,
    record_line,
    reread_items,
    scan_export,
)
from .store import _select_in

# ----------------------------------------------------------------------------------------------
# Import: shared records into this store, idempotently and in one transaction
# ----------------------------------------------------------------------------------------------
#
# What joins this store from outside is decided here: each record has passed validate_record;
# an item keeps its global id, so importing twice changes nothing; an item another machine owns
# changes only by the rules of _may_change; what was forgotten here stays forgotten.


def _leaves_repository(path):
    """Whether an imported anchor's repo-relative ``path`` could name a file outside its
    repository: absolute, or with a ".." part. The one test both import paths apply."""
    return path.startswith("/") or (".." in path and ".." in path.split("/"))


def _record_anchors(rec, local_repo):
    """An export record's anchors, matched to this machine's repositories."""
    anchors = []
    for a in rec.get("anchors", []):
        if not isinstance(a, dict) or not isinstance(a.get("repo"), str):
            raise UsageError("evidence %s has a malformed anchor" % rec["id"])
        path = a.get("path")
        if path is not None and (not isinstance(path, str) or _leaves_repository(path)):
            raise UsageError("evidence %s cites a path outside its repository: %r" % (rec["id"], path))
        arepo = local_repo(a["repo"], a.get("root_commit"))
        anchors.append({k: a.get(k) for k in ANCHOR_FIELDS})
        anchors[-1]["repo_id"] = arepo.id if arepo else None
        anchors[-1]["repo"] = arepo.name if arepo else a["repo"]
    return anchors


def _bulk_anchors(rec, repo_here):
    """What the bulk writer needs of a validated evidence record's anchors, in one pass: their
    rows but the item's rid, what the item cites (as _cited_set gives it from _record_anchors'
    anchors) and its search row's symbols and paths texts (_fts_symbols, _fts_paths).
    ``repo_here``: (name, root commit) -> (id here or None, name here)."""
    rows, cited, symbols, paths = [], [], {}, {}
    for a in rec["anchors"]:
        path, symbol = a["path"], a["symbol"]
        if path is not None and _leaves_repository(path):
            raise UsageError("evidence %s cites a path outside its repository: %r" % (rec["id"], path))
        repo_id, name = repo_here(a["repo"], a["root_commit"])
        rows.append((repo_id, name, a["root_commit"], path, symbol, a["commit"], a["branch"], a["blob"],
                     a["dirty"], a["symbol_hash"], a["symbol_lang"]))  # fmt: skip
        if symbol:
            symbols[symbol] = None
        if path:
            paths[path] = None
            cited.append((name, path, symbol or None))
    return rows, frozenset(cited), " ".join(symbols), " ".join(paths)


def _anchor_rows(rid, anchors):
    return [
        (rid, a["repo_id"], a["repo"], a["root_commit"], a["path"], a["symbol"], a["commit"], a["branch"],
         a["blob"], a["dirty"], a["symbol_hash"], a["symbol_lang"])
        for a in anchors
    ]  # fmt: skip


_RECORD_ANCHOR_INSERT = (
    "INSERT INTO anchors(evidence_rid, repo_id, repo_name, root_commit, path, symbol, commit_sha, branch, "
    "blob, dirty, symbol_hash, symbol_lang) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _insert_record_anchors(store, rid, anchors):
    store.db.executemany(_RECORD_ANCHOR_INSERT, _anchor_rows(rid, anchors))
    store.note_written(items=[rid])


def _history_rows(rid, rec, known):
    """Event rows for the record's history events whose ids are not in ``known`` (ids are global;
    ``known`` is updated)."""
    rows = []
    for h in rec.get("history") or ():
        if h["id"] not in known:
            known.add(h["id"])
            rows.append(_event_row(rid, h["event"], h.get("session"), h.get("agent"), stored_text(h.get("note")),
                                   h["at"], h.get("previous") or [], h.get("commits") or {}, event_id=h["id"]))  # fmt: skip
    return rows


class GcPaused:
    """Cyclic garbage collection paused: an import builds hundreds of thousands of small dicts
    and lists, none in a cycle, and each collection would walk all of them again."""

    __slots__ = ("was",)

    def __enter__(self):
        import gc

        self.was = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc):
        import gc

        if self.was:
            gc.enable()


def import_evidence(store, paths):
    """Import exported JSONL (files or directories) idempotently, in one transaction, holding
    at no time more than a chunk of its items (see scan_export)."""
    try:
        with GcPaused():
            others, count, kept, seen = scan_export(paths)
            items = kept if kept is not None else reread_items(paths, seen)
            return _import_stream(store, others, items, count)
    except RecordError as e:
        where = record_line(export_sources(paths), e.record)
        raise UsageError("%s: %s" % (where, e) if where else str(e)) from None


def import_evidence_data(store, label, data):
    """Import one export file's bytes (named ``label`` in errors), all or nothing; returns
    (counts, records)."""
    with GcPaused():
        records = parse_export(label, export_lines(data))
        try:
            return import_records(store, records), records
        except RecordError as e:
            where = record_line([(label, export_lines(data))], e.record)
            raise UsageError("%s: %s" % (where, e) if where else str(e)) from None


_STATUS_ORDER = {"active": 0, "superseded": 1, "retracted": 2}


def _status_change_wins(rec, row):
    """Whether an imported record's status replaces the stored one: it is newer, or from the same
    second (timestamps have one-second resolution) and further along the lifecycle, since an
    item only ever moves from active to superseded to retracted."""
    status = rec.get("status", "active")
    if status == row["status"]:
        return False
    theirs, ours = rec.get("updated_at") or "", row["updated_at"] or ""
    return theirs > ours or (
        theirs == ours and _STATUS_ORDER.get(status, 0) > _STATUS_ORDER.get(row["status"], 0)
    )


_IMPORT_CHUNK = 2000  # evidence records prepared, checked and written per batch of executemany
_IMPORTED_COLUMNS = (
    "e.rid, e.id, e.repo_name, e.claim_key, e.updated_at, e.status, e.confirmed_at, "
    "(SELECT machine FROM sessions WHERE id = e.session_id) AS machine"
)
_IMPORTED_ROW = "SELECT %s FROM evidence e WHERE e.id IN (%%s)" % _IMPORTED_COLUMNS
_IMPORTED_ALIAS_ROW = (
    "SELECT a.id AS alias, %s FROM evidence_aliases a JOIN evidence e ON e.rid = a.evidence_rid "
    "WHERE a.id IN (%%s)" % _IMPORTED_COLUMNS
)
_IMPORTED_RID_ROW = "SELECT %s FROM evidence e WHERE e.rid = ?" % _IMPORTED_COLUMNS


def _kept_out(forgotten, eid, machine):
    """True when a tombstone keeps the item (or session) ``eid`` of ``machine`` out of this store:
    forgotten here or by a file given to import-evidence, or by its own machine; False when only
    another machine's tombstone names it; None when nothing does."""
    if eid not in forgotten:
        return None
    by = forgotten[eid]
    return by is None or machine is None or by == machine


def _differs(rec, row):
    """Whether an imported record of an item here would change it (a status or a confirmation)."""
    return _status_change_wins(rec, row) or (rec.get("confirmed_at") or "") > (row["confirmed_at"] or "")


def _may_change(item_machine, source, own):
    """Whether an import may delete or change an item recorded on ``item_machine`` (None: not
    known) by a record from ``source`` (the team directory of the machine that wrote it; None for
    a file given to import-evidence). An item of this machine changes here only; a teammate's only
    from that teammate's own directory. The one place this is decided."""
    if item_machine is not None and item_machine == own:
        return False
    return source is None or item_machine is None or item_machine == source


_REFUSED_WHAT = {
    "forget": "a forget of an item recorded on %s (only the machine that recorded an item forgets it for others)",
    "change": "a status change or confirmation of an item recorded on %s (only the machine that recorded "
    "an item changes it for others)",
    "item": "a new item claiming a session recorded on %s (an item joins only a session of the machine "
    "it came from)",
}


def _refuse(counts, what, item_machine, source, own, asked=None):
    """Count one record _may_change refused, under its one-line reason (counts["refusals"]:
    {reason: how many}), so that the command that imported it says so. ``asked``: (kind, id
    here) of this machine's own item or session that a teammate forgot, said as a request with
    the command that honours it for everyone."""
    owner = "this machine" if item_machine == own else "machine %s" % item_machine[:8]
    reason = _REFUSED_WHAT[what] % owner
    if asked is not None:
        kind, eid = asked
        reason = (
            'a request to forget %s, recorded here; to forget it for everyone: wctx forget %s%s --reason "%s"'
            % (
                eid if kind == "evidence" else "session " + eid,
                "" if kind == "evidence" else "--session ",
                eid,
                "asked by machine %s" % source[:8],
            )
        )
    if source is not None:
        reason = "from machine %s: %s" % (source[:8], reason)
    counts["refused"] += 1
    counts["refusals"][reason] = counts["refusals"].get(reason, 0) + 1


def _local_id(store, eid):
    """The id here of an item another machine calls ``eid`` (its twin's, for an alias)."""
    if not eid:
        return eid
    row = store.one(
        "SELECT e.id FROM evidence_aliases a JOIN evidence e ON e.rid = a.evidence_rid WHERE a.id = ?", (eid,)
    )
    return row["id"] if row else eid


class _ImportBatch:
    """Rows an import has decided to write, written together (executemany per table, in the
    order foreign keys need) when a chunk ends or before anything reads the store."""

    __slots__ = ("store", "evidence", "anchors", "fts", "events", "confidence")

    def __init__(self, store):
        self.store = store
        self.evidence, self.anchors, self.fts, self.events, self.confidence = [], [], [], [], []

    def flush(self):
        db = self.store.db
        if self.evidence:
            db.executemany(
                "INSERT INTO evidence(rid, id, session_id, repo_id, repo_name, kind, claim, claim_key, detail, "
                "confidence, status, superseded_by, created_at, updated_at, confirmed_at, symptom) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                self.evidence,
            )
            db.executemany(_RECORD_ANCHOR_INSERT, self.anchors)
            db.executemany(_FTS_INSERT, self.fts)
        if self.events:
            db.executemany(_EVENT_INSERT, self.events)
        if self.evidence or self.events:
            new = {row[0] for row in self.evidence}
            self.store.note_written(
                sessions={row[2] for row in self.evidence},
                items={row[1] for row in self.events if row[1] not in new}
                | {row[0] for row in self.anchors if row[0] not in new},
            )
        if self.confidence:
            db.executemany("UPDATE evidence SET confidence = ? WHERE rid = ?", self.confidence)
        self.evidence, self.anchors, self.fts, self.events, self.confidence = [], [], [], [], []


def _import_sessions(store, records, forgotten, by_name, session_map, held):
    """Write the import's new sessions (one executemany); fill ``session_map`` (import id -> id
    here, which differs when the agent's own session id is already known) and ``held`` ({id here:
    its machine} of the sessions that were here before, which an item may join only when
    _may_change allows). Returns how many."""
    recs = [r for r in records if r["type"] == "session" and r["id"] not in forgotten]
    present = {
        r["id"]: r["machine"]
        for r in _select_in(
            store, "SELECT id, machine FROM sessions WHERE id IN (%s)", {r["id"] for r in recs}
        )
    }
    held.update(present)
    external = {}  # (agent, external id) -> session id, for sessions this import writes
    rows = []
    own = store_machine_id(store)
    for rec in recs:
        sid = rec["id"]
        if sid in present:
            session_map[sid] = sid
            continue
        agent = stored_key(rec.get("agent") or "unknown")  # as a transcript import keys them
        external_id = stored_key(rec.get("external_id"))
        if external_id:
            key = (agent, external_id)
            row = store.one("SELECT id, machine FROM sessions WHERE agent = ? AND external_id = ?", key)
            if row is not None or key in external:
                session_map[sid] = row["id"] if row is not None else external[key]
                if row is not None:
                    held[row["id"]] = row["machine"]
                continue
            external[key] = sid
        repo = by_name.get(rec.get("repo"))
        rows.append((sid, agent, external_id, rec.get("cwd"), repo.id if repo else None, rec.get("repo"),
                     rec.get("branch"), rec.get("commit"), rec.get("started_at"), rec.get("ended_at"),
                     stored_text(rec.get("summary")), utc_now(), rec.get("author"),
                     # another store's record never makes an item this machine's ("you")
                     None if rec.get("machine") == own else rec.get("machine")))  # fmt: skip
        present[sid] = None
        session_map[sid] = sid
    store.db.executemany(
        "INSERT INTO sessions(id, agent, external_id, cwd, repo_id, repo_name, branch, commit_sha, "
        "started_at, ended_at, summary, created_at, author, machine) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    return len(rows)


def _import_update(store, rec, row, local_repo, known_events):
    """An imported record of an item already here: take over a newer status or confirmation and
    history events not seen yet. Returns (changed, whether the duplicate rule's view moved)."""
    changed = False
    if _status_change_wins(rec, row):
        store.db.execute(
            "UPDATE evidence SET status = ?, superseded_by = ?, updated_at = ? WHERE rid = ?",
            (rec["status"], _local_id(store, rec.get("superseded_by")), rec["updated_at"], row["rid"]),
        )
        changed = True
    if (rec.get("confirmed_at") or "") > (row["confirmed_at"] or ""):
        # Confirmed there after it was here: take over the newer provenance.
        anchors = _record_anchors(rec, local_repo)
        store.db.execute("DELETE FROM anchors WHERE evidence_rid = ?", (row["rid"],))
        _insert_record_anchors(store, row["rid"], anchors)
        store.db.execute(
            "UPDATE evidence SET confirmed_at = ?, updated_at = max(updated_at, ?) WHERE rid = ?",
            (rec["confirmed_at"], rec.get("updated_at") or rec["confirmed_at"], row["rid"]),
        )
        store.db.execute("DELETE FROM freshness_cache WHERE evidence_rid = ?", (row["rid"],))
        changed = True
    events = _history_rows(row["rid"], rec, known_events)
    if events:
        store.db.executemany(_EVENT_INSERT, events)
        store.note_written(items=[row["rid"]])
    return changed or bool(events), changed


# SQLite's page cache while a large import writes (the default is 2 MiB): room for every page the
# import writes (about 2 KiB an item, with its anchors, search row and indexes), so that none is
# spilled to the log and read back before the commit (at 100,000 items, 64 MiB read 600 MB back
# and wrote 400 MB; enough room reads 180 MB, what the checkpoint copies, and writes 360 MB).
# Pages are only allocated as they are used; the connection's own size comes back after. It is
# the most an import holds in memory, so it stops at _BULK_CACHE_MAX_KIB: an import of a million
# items (2 GB of pages) spills what does not fit to the log rather than take gigabytes of memory.
_BULK_CACHE_KIB = 65536
_BULK_CACHE_KIB_PER_ITEM = 3
_BULK_CACHE_MAX_KIB = 96 << 10


_BULK_CACHE_MIN_RECORDS = 5000  # imports from this size on get a page cache of their own


def _bulk_cache_kib(items):
    """The page cache (KiB) for an import of ``items`` records."""
    return max(_BULK_CACHE_KIB, min(_BULK_CACHE_MAX_KIB, items * _BULK_CACHE_KIB_PER_ITEM))


class BulkCache:
    """The connection's page cache made large enough for an import of ``items`` records (never
    smaller than it is) for the length of a with block, then as it was."""

    __slots__ = ("store", "items", "before")

    def __init__(self, store, items):
        self.store, self.items, self.before = store, items, None

    def __enter__(self):
        if self.items >= _BULK_CACHE_MIN_RECORDS:
            db = self.store.db
            before = db.execute("PRAGMA cache_size").fetchone()[0]  # < 0: KiB; else pages
            kib = -before if before < 0 else before * db.execute("PRAGMA page_size").fetchone()[0] // 1024
            if kib < _bulk_cache_kib(self.items):
                db.execute("PRAGMA cache_size = %d" % -_bulk_cache_kib(self.items))
                self.before = before
        return self

    def __exit__(self, *exc):
        if self.before is not None:
            self.store.db.execute("PRAGMA cache_size = %d" % self.before)


# A large import into a store that holds fewer items than it brings sets these indexes aside and
# builds them again once at the end (one sort) rather than updating them row by row at scattered
# places, which is most of what SQLite spends on such an import. Both happen in the import's own
# transaction, so an error or a kill leaves the store as it was, indexes included. Nothing the
# import reads meanwhile needs them. The claim-key index stays: the duplicate rule reads each
# chunk's claims through it, including the items of the chunks before (held in memory instead,
# they would grow with the import).
_BULK_DEFERRED_INDEXES = (
    "evidence_repo",
    "evidence_session",
    "anchors_repo_path",
    "anchors_repo_symbol",
)
_BULK_INDEX_MIN = 5000  # new items from which an import sets the indexes aside


def _defer_indexes(store, new_items, stored_items):
    """Drop the deferrable indexes when an import of ``new_items`` into a store of about
    ``stored_items`` pays for it; returns the statements that create them again."""
    if new_items < _BULK_INDEX_MIN or new_items < stored_items:
        return []
    rows = _select_in(
        store,
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND name IN (%s)",
        _BULK_DEFERRED_INDEXES,
    )
    for r in rows:
        store.db.execute('DROP INDEX "%s"' % r["name"])
    return [r["sql"] for r in rows]


_INDEX_SORT_KIB = 16384  # the page cache while the indexes set aside are built again


def _restore_indexes(store, statements):
    """Build the indexes set aside again. SQLite sorts each one in memory up to the page cache's
    size, on top of the cache itself: with the cache made small meanwhile, a larger sort spills
    to a temporary file instead of doubling what the import holds."""
    if not statements:
        return
    db = store.db
    before = db.execute("PRAGMA cache_size").fetchone()[0]
    db.execute("PRAGMA cache_size = %d" % -_INDEX_SORT_KIB)
    try:
        for sql in statements:
            db.execute(sql)
    finally:
        db.execute("PRAGMA cache_size = %d" % before)


def import_records(store, records):
    """Import validated ``records`` (a list of any types) in one transaction."""
    items = [r for r in records if r["type"] == "evidence"]
    return _import_stream(store, [r for r in records if r["type"] != "evidence"], items, len(items))


def _import_stream(store, others, items, count):
    """Import ``others`` (validated sessions, tombstones and topology) and ``items`` (``count``
    validated evidence records, an iterable read once, in chunks) in one transaction."""
    try:
        with BulkCache(store, count + len(others)):
            return _import_records_in(store, others, items, count)
    finally:
        CLEAN_TEXTS.clear()
        field_checks.cache_clear()
        field_plan.cache_clear()


def _import_records_in(store, others, items, count):
    by_name, local_repo, repo_here = _repo_matchers(store)
    counts = {"sessions": 0, "evidence": 0, "updated": 0, "unchanged": 0, "duplicates": 0, "forgotten": 0,
              "refused": 0, "refusals": {}}  # fmt: skip
    own = store_machine_id(store)
    session_map = {}
    with store.atomic():
        now = utc_now()
        tombstones = [r for r in others if r["type"] == "tombstone"]
        scrub = _import_tombstones(store, tombstones, counts, own, now)
        # What stays forgotten, and by whom: a tombstone from one machine's directory keeps out only
        # that machine's items (checked against each record's session below).
        forgotten = {r["id"]: r["machine"] for r in store.all("SELECT id, machine FROM tombstones")}
        claimed = {r["id"]: r.get("machine") for r in others if r["type"] == "session"}
        for rec in others:
            if rec["type"] == "session" and _kept_out(forgotten, rec["id"], rec.get("machine")) is False:
                forgotten.pop(rec["id"], None)
        held = {}
        counts["sessions"] = _import_sessions(store, others, forgotten, by_name, session_map, held)
        run = _ItemRun(store, count, forgotten, session_map, local_repo, repo_here, counts, now)
        run.own, run.claimed, run.held = own, claimed, held
        for chunk in _chunked(items, _IMPORT_CHUNK):
            _import_chunk(run, chunk)
        run.batch.flush()
        _restore_indexes(store, run.deferred)
        counts.update(_import_topology(store, [r for r in others if r["type"] in TOPOLOGY_TYPES]))
    if scrub and store._depth == 0:  # VACUUM cannot run inside a caller's transaction
        _scrub_store(store)
    elif scrub:
        store.scrub_due = True  # for the caller, once its transaction is committed
    return counts


def _repo_matchers(store):
    """(this store's repositories by name; local_repo, repo_here: the repository here an imported
    record's (name, root commit) names, as a record and as (id here or None, name here), the
    second once per pair)."""
    repos = _repos(store)
    by_root = {r.root_commit: r for r in repos if r.root_commit}
    by_name = {r.name: r for r in repos}

    def local_repo(name, root):
        # Same name and no conflicting root commit wins (a fork shares its upstream's root
        # commit); otherwise the root commit finds the project registered under another name.
        named = by_name.get(name)
        if named is not None and (not root or not named.root_commit or named.root_commit == root):
            return named
        return by_root.get(root) or named

    here = {}

    def repo_here(name, root):
        out = here.get((name, root))
        if out is None:
            repo = local_repo(name, root)
            out = here[(name, root)] = (repo.id, repo.name) if repo else (None, name)
        return out

    return by_name, local_repo, repo_here


def _tombstone_target(store, t):
    """The row (rid, id, machine) here of what a tombstone names, or None."""
    if t["kind"] == "session":
        return store.one("SELECT id AS rid, id, machine FROM sessions WHERE id = ?", (t["id"],))
    return store.one(
        "SELECT e.rid, e.id, s.machine FROM evidence e JOIN sessions s ON s.id = e.session_id WHERE e.id = ?",
        (t["id"],),
    ) or store.one(
        "SELECT a.evidence_rid AS rid, e.id, s.machine FROM evidence_aliases a JOIN evidence e "
        "ON e.rid = a.evidence_rid JOIN sessions s ON s.id = e.session_id WHERE a.id = ?",
        (t["id"],),
    )


def _import_tombstones(store, tombstones, counts, own, now):
    """Forgotten elsewhere: forget it here too, whatever else the import holds about it, when the
    machine that forgot it may (_may_change); another's tombstone changes nothing. Whether
    anything was forgotten (the store is then scrubbed)."""
    scrub = False
    for t in tombstones:
        source = t.get("_from")
        row = _tombstone_target(store, t)
        if row is not None and not _may_change(row["machine"], source, own):
            # Asked of this machine's own item: a request that its owner sees and may honour.
            asked = (t["kind"], row["id"]) if row["machine"] == own and source is not None else None
            _refuse(counts, "forget", row["machine"], source, own, asked)
            continue
        if row is not None:
            if t["kind"] == "session":
                _forget_rows(store, [], [t["id"]], t["reason"], t.get("forgotten_at") or now)
            else:
                _forget_rows(store, [row["rid"]], [], t["reason"], t.get("forgotten_at") or now)
            counts["forgotten"] += 1
            scrub = True
        store.db.execute(
            "INSERT OR IGNORE INTO tombstones(id, kind, session_id, reason, forgotten_at, machine) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                t["id"],
                t["kind"],
                t["session"],
                stored_text(t["reason"]),
                t.get("forgotten_at") or now,
                source,
            ),
        )
    return scrub


def _chunked(items, size):
    """Lists of ``size`` of ``items`` (any iterable, read once), the last one shorter."""
    chunk = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class _ItemRun:
    """What an import carries from one chunk of items to the next: nothing that grows with the
    import (the next rid, the indexes set aside, the counts, a few small memos). What a chunk
    needs to know of the items before it (their ids, their claims, their history events) it
    reads from the store, where the chunks before it have been written."""

    __slots__ = ("store", "count", "done", "forgotten", "session_map", "local_repo", "repo_here", "counts",
                 "now", "batch", "next_rid", "deferred", "decided", "own", "claimed",
                 "held")  # fmt: skip

    def __init__(self, store, count, forgotten, session_map, local_repo, repo_here, counts, now):
        self.store, self.count, self.done = store, count, 0
        self.forgotten, self.session_map, self.counts, self.now = forgotten, session_map, counts, now
        self.local_repo, self.repo_here = local_repo, repo_here
        self.batch = _ImportBatch(store)
        self.next_rid = (store.one("SELECT max(rid) AS m FROM evidence")["m"] or 0) + 1
        self.deferred, self.decided = [], False
        self.own = None  # this store's machine id (_may_change)
        self.claimed = {}  # {session id: the machine its record names}, the import's sessions only
        self.held = {}  # {session id here: its machine}, of those that were here before the import


def _known_items(store, ids):
    """{id: row} of the items here among ``ids`` (by their own id, or by an alias naming a twin)."""
    existing = {r["id"]: r for r in _select_in(store, _IMPORTED_ROW, ids)}
    existing.update((r["alias"], r) for r in _select_in(store, _IMPORTED_ALIAS_ROW, ids - set(existing)))
    return existing


def _import_chunk(run, chunk):
    """Import one chunk of validated items: what the store already holds of them (their ids,
    the items their claims could repeat, history event ids) is read first in a few queries,
    each record is decided in memory, and the chunk's rows are written with one executemany per
    table."""
    store, batch = run.store, run.batch
    batch.flush()  # the chunks before this one, in the store for the queries below
    plan = _chunk_plan(run, chunk)
    stored = run.next_rid > 1  # a store with no item yet holds none of these ids, no twin of a claim
    existing = _known_items(store, {r["id"] for r, sid, _ in plan if sid is not None}) if stored else {}
    history_ids = {h["id"] for rec in chunk for h in rec.get("history") or ()}
    known_events = {
        r["id"] for r in _select_in(store, "SELECT id FROM evidence_events WHERE id IN (%s)", history_ids)
    }
    _prepare_new_items(run, plan, existing)
    new = [(p[1], p[3]) for _, _, p in plan if p is not None]
    dups = DuplicateIndex(store, before_load=batch.flush)
    dups.load(new, stored)  # every claim of the chunk the duplicate rule will ask about
    if new and not run.decided:
        # The first chunk with new items tells how many the import brings (as its share of the
        # items left): enough, and the indexes that sort them are built once at the end.
        run.decided = True
        run.deferred = _defer_indexes(
            store, (run.count - run.done) * len(new) // len(chunk), run.next_rid - 1
        )
    run.done += len(chunk)
    for rec, sid, prepared in plan:
        _import_item(run, rec, sid, prepared, existing, dups, known_events)
    batch.flush()
    # The texts this chunk found clean were kept for the writes just done; the next chunk
    # brings its own (a set of every claim of the import would hold them all).
    CLEAN_TEXTS.clear()


def _chunk_plan(run, chunk):
    """[(record, its session here or None when it stays forgotten, None)] of one chunk; an item
    of a session the import does not hold is refused."""
    plan = []
    forgotten, claimed = run.forgotten, run.claimed
    for rec in chunk:
        if _kept_out(forgotten, rec["id"], claimed.get(rec["session"])) or rec["session"] in forgotten:
            plan.append((rec, None, None))  # forgotten: an older copy elsewhere never brings it back
            continue
        sid = run.session_map.get(rec["session"])
        if sid is None:
            raise RecordError(
                "evidence %s names session %s, which is not in the import" % (rec["id"], rec["session"]), rec
            )
        plan.append((rec, sid, None))
    return plan


def _prepare_new_items(run, plan, existing):
    """Fill in, for each item not here yet, (repository here, its name, stored claim, claim key,
    the claim's index words), in place."""
    for i, (rec, sid, _) in enumerate(plan):
        if sid is None or rec["id"] in existing:
            continue
        repo = run.local_repo(rec["repo"], rec.get("root_commit"))
        claim, key, _ = stored_claim(clean_text(rec["claim"], "claim", MAX_CLAIM_CHARS, required=True))
        plan[i] = (rec, sid, (repo, repo.name if repo else rec["repo"], claim, key))


def _import_item(run, rec, sid, prepared, existing, dups, known_events):
    """Decide one item of a chunk: forgotten, an update of one here, refused, a twin of one here,
    or a new item."""
    counts, own = run.counts, run.own
    if sid is None:
        counts["forgotten"] += 1
        return
    row = existing.get(rec["id"])
    if row is not None:  # here already, or earlier in this import
        _import_known_item(run, rec, row, existing, dups, known_events)
        return
    if sid in run.held and not _may_change(run.held[sid], rec.get("_from"), own):
        # A new item belongs to the machine it came from, never to the session it names.
        _refuse(counts, "item", run.held[sid], rec.get("_from"), own)
        return
    repo, repo_name, claim, key = prepared
    anchor_rows, cited, symbols, paths = _bulk_anchors(rec, run.repo_here)
    confidence = _check_confidence(rec.get("confidence"))
    status = rec.get("status", "active")
    # Only an active record is one item with an active twin (as the duplicate rule only ever
    # matches active items here): a retracted one stays its own item, on both machines alike.
    dup = dups.find(repo_name, key, cited) if status == "active" else None
    if dup is not None:
        _import_twin(run, rec, sid, dup, confidence, (repo_name, key), existing, dups, known_events)
        return
    rid = _add_new_item(
        run, rec, sid, prepared, confidence, status, (anchor_rows, symbols, paths), known_events
    )
    existing[rec["id"]] = {"rid": rid, "id": rec["id"], "repo_name": repo_name, "claim_key": key,
                           "updated_at": rec.get("updated_at") or run.now, "status": status,
                           "confirmed_at": rec.get("confirmed_at"),
                           "machine": run.claimed.get(rec["session"])}  # fmt: skip
    if status == "active":
        dups.add(
            repo_name, key, {"rid": rid, "id": rec["id"], "session_id": sid, "confidence": confidence}, cited
        )
    counts["evidence"] += 1


def _import_known_item(run, rec, row, existing, dups, known_events):
    """An item here already (or earlier in this import): updated when its machine may change it."""
    counts, own, batch = run.counts, run.own, run.batch
    if not _may_change(row["machine"], rec.get("_from"), own):
        if _differs(rec, row):
            _refuse(counts, "change", row["machine"], rec.get("_from"), own)
        else:
            counts["unchanged"] += 1
        return
    if batch.evidence or batch.events or batch.confidence:
        batch.flush()
    changed, moved = _import_update(run.store, rec, row, run.local_repo, known_events)
    if moved:
        dups.refresh(row["repo_name"], row["claim_key"], row["rid"])
        existing[rec["id"]] = run.store.one(_IMPORTED_RID_ROW, (row["rid"],))
    counts["updated" if changed else "unchanged"] += 1


def _import_twin(run, rec, sid, dup, confidence, claim_of, existing, dups, known_events):
    """The same item recorded independently elsewhere: one item, seen by that session too."""
    store, batch = run.store, run.batch
    if confidence is not None and (dup["confidence"] is None or confidence > dup["confidence"]):
        dup["confidence"] = confidence
        batch.confidence.append((confidence, dup["rid"]))
    if dup["session_id"] != sid:
        batch.events.append(_event_row(dup["rid"], "seen", sid, "import", None, rec.get("created_at") or run.now,
                                       event_id="evt-seen-" + rec["id"]))  # fmt: skip
    # Its id there names the twin here: what that machine later does to it (a status
    # change, a confirmation, a forget) reaches this item.
    batch.flush()
    store.db.execute(
        "INSERT OR IGNORE INTO evidence_aliases(id, evidence_rid) VALUES (?, ?)",
        (rec["id"], dup["rid"]),
    )
    twin = store.one(_IMPORTED_RID_ROW, (dup["rid"],))
    if _may_change(twin["machine"], rec.get("_from"), run.own):
        _, moved = _import_update(store, rec, twin, run.local_repo, known_events)
        if moved:
            dups.refresh(claim_of[0], claim_of[1], dup["rid"])
    existing[rec["id"]] = store.one(_IMPORTED_RID_ROW, (dup["rid"],))
    run.counts["duplicates"] += 1


def _add_new_item(run, rec, sid, prepared, confidence, status, cites, known_events):
    """Queue a new item's rows (item, anchors, history, search row); its rid here."""
    store, batch, now = run.store, run.batch, run.now
    repo, repo_name, claim, key = prepared
    anchor_rows, symbols, paths = cites
    rid = run.next_rid
    run.next_rid += 1
    stamp = now  # the import's one moment, for a record without its own times
    detail = clean_text(rec.get("detail"), "detail", MAX_DETAIL_CHARS)
    detail = detail and stored_noting(detail)
    symptom = clean_text(rec.get("symptom"), "symptom", MAX_SYMPTOM_CHARS)
    symptom = symptom and stored_noting(symptom)
    batch.evidence.append((rid, rec["id"], sid, repo.id if repo else None, repo_name, rec["kind"], claim, key,
                           detail, confidence, status, _local_id(store, rec.get("superseded_by")),
                           rec.get("created_at") or stamp, rec.get("updated_at") or stamp,
                           rec.get("confirmed_at"), symptom))  # fmt: skip
    batch.anchors += [(rid,) + row for row in anchor_rows]
    batch.events += _history_rows(rid, rec, known_events)
    batch.fts.append((rid, claim, symbols, paths, detail or "", symptom or ""))
    return rid


def _import_topology(store, records):
    """Relations and workspace memberships from validated topology records, by identity: between
    repositories registered here they are declared at once; one whose repository is not registered
    yet waits (dormant) and is restored when it is. Nothing is removed: an import only adds."""
    repos = _repos(store)
    db = store.db
    counts = {"relations": 0, "memberships": 0, "waiting": 0}
    for rec in records:
        if rec["type"] == "relation":
            a = identity_of(repos, rec["from"], rec["from_root"])
            b = identity_of(repos, rec["to"], rec["to_root"])
            note = stored_text(rec.get("note"))
            if a is not None and b is not None:
                if a.id != b.id:
                    counts["relations"] += db.execute(
                        "INSERT OR IGNORE INTO relations(from_repo, kind, to_repo, note, created_at) VALUES (?, ?, ?, ?, ?)",
                        (a.id, rec["kind"], b.id, note, rec.get("created_at") or utc_now()),
                    ).rowcount
                continue
            if not store.one(
                "SELECT 1 FROM dormant_relations WHERE from_name = ? AND from_root IS ? AND kind = ? AND to_name = ? "
                "AND to_root IS ?", (rec["from"], rec["from_root"], rec["kind"], rec["to"], rec["to_root"])):  # fmt: skip
                db.execute(
                    "INSERT INTO dormant_relations(from_name, from_root, kind, to_name, to_root, note, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (rec["from"], rec["from_root"], rec["kind"], rec["to"], rec["to_root"], note,
                     rec.get("created_at") or utc_now()),
                )  # fmt: skip
                counts["waiting"] += 1
        elif rec["type"] == "workspace":
            ws = _workspace_id(store, rec["name"], create=True)
            for m in rec["repos"]:
                r = identity_of(repos, m["repo"], m["root_commit"])
                if r is not None:
                    counts["memberships"] += db.execute(
                        "INSERT OR IGNORE INTO workspace_repos(workspace_id, repo_id) VALUES (?, ?)",
                        (ws, r.id),
                    ).rowcount
                elif not store.one(
                    "SELECT 1 FROM dormant_members WHERE workspace = ? AND repo_name = ? AND root_commit IS ?",
                    (rec["name"], m["repo"], m["root_commit"]),
                ):
                    db.execute(
                        "INSERT INTO dormant_members(workspace, repo_name, root_commit) VALUES (?, ?, ?)",
                        (rec["name"], m["repo"], m["root_commit"]),
                    )
                    counts["waiting"] += 1
    return counts
