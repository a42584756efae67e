from __future__ import annotations

import json
import os

from .authors import recorder
from .constants import (
    EVIDENCE_KINDS,
    MAX_CLAIM_CHARS,
    MAX_DETAIL_CHARS,
    MAX_FILES_PER_ITEM,
    MAX_ITEMS_PER_CAPTURE,
    MAX_SUMMARY_CHARS,
    MAX_SYMPTOM_CHARS,
)
from .dependencies import (
    DependencyReader,
    _insert_dependencies,
    dependency_gits,
    explicit_dependencies,
    read_dependencies,
    stamp_dependencies,
)
from .errors import MissingSymbolError, UsageError
from .freshness import _load_anchors
from .helpers import claim_key, clean_text, new_id, printable_path, split_claim, utc_now
from .provenance import _parse_file_spec, _repo_provenance, _stamp_anchors
from .records import Repo, _repo_containing, _repos, _resolve_session_id, resolve_repo
from .redaction import stored_key, stored_text
from .store import _select_in
from .vocabulary import _fts_code
from .words import _fts_paths, _fts_symbols

# ----------------------------------------------------------------------------------------------
# Service: capture
# ----------------------------------------------------------------------------------------------


def _check_confidence(value):
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise UsageError("confidence must be a number from 0 to 1")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise UsageError("confidence %r is not a number from 0 to 1" % (value,)) from None
    if not (0.0 <= number <= 1.0):  # also rejects NaN
        raise UsageError("confidence %s is outside 0..1" % value)
    return number


# An item's search row: SQLite applies index_text (registered as wctx_index_text) to each text
# after the write boundary (stored_text) redacted it, so the index words are those of the text
# as stored and the boundary sees the texts as written, once.
_FTS_INSERT = (
    "INSERT INTO evidence_fts(rowid, claim, symbols, paths, detail, symptom) VALUES "
    "(?, wctx_index_text(?), wctx_index_text(?), wctx_index_text(?), wctx_index_text(?), wctx_index_text(?))"
)
# The same with the vocabulary of the code it cites (vocabulary.py, given twice: its index words
# are searched, the words as written name what a query word matched), for an item stamped here.
_FTS_INSERT_CODE = (
    "INSERT INTO evidence_fts(rowid, claim, symbols, paths, detail, code, code_words, symptom) VALUES "
    "(?, wctx_index_text(?), wctx_index_text(?), wctx_index_text(?), wctx_index_text(?), wctx_index_text(?), ?, "
    "wctx_index_text(?))"
)


_EVIDENCE_INSERT = (
    "INSERT INTO evidence(id, session_id, repo_id, repo_name, kind, claim, claim_key, detail, confidence, "
    "status, created_at, updated_at, symptom) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?)"
)


def _prepare_item(store, repos, item, number, default_repo, cwd, notes=None):
    if not isinstance(item, dict):
        raise UsageError("item %d must be an object" % number)
    unknown = set(item) - {"kind", "claim", "detail", "symptom", "repo", "files", "confidence", "depends_on"}
    if unknown:
        raise UsageError("item %d has unknown field(s): %s" % (number, ", ".join(sorted(unknown))))
    kind = item.get("kind")
    if kind not in EVIDENCE_KINDS:
        raise UsageError("item %d: unknown kind %r (one of: %s)" % (number, kind, ", ".join(EVIDENCE_KINDS)))
    claim = clean_text(item.get("claim"), "item %d claim" % number, MAX_CLAIM_CHARS, required=True)
    detail = clean_text(item.get("detail"), "item %d detail" % number, MAX_DETAIL_CHARS)
    if detail is None and "::" in claim:
        claim, detail = split_claim(claim)
        if not claim:
            raise UsageError("item %d: the claim before '::' is empty" % number)
    symptom = clean_text(item.get("symptom"), "item %d symptom" % number, MAX_SYMPTOM_CHARS)
    confidence = _check_confidence(item.get("confidence"))
    repo = _item_repo(store, item, number, default_repo, cwd)
    files = item.get("files") or []
    if isinstance(files, str):
        files = [files]
    if not isinstance(files, list):
        raise UsageError("item %d: files must be a list of strings like path#symbol" % number)
    if len(files) > MAX_FILES_PER_ITEM:
        raise UsageError("item %d cites %d files; the limit is %d" % (number, len(files), MAX_FILES_PER_ITEM))
    cited = []
    for spec in files:
        if not isinstance(spec, str):
            raise UsageError("item %d: files must be strings like path#symbol" % number)
        cited.append(_parse_file_spec(spec, repos, repo, cwd, notes))
    depends_on = item.get("depends_on") or []
    if isinstance(depends_on, str):
        depends_on = [depends_on]
    if not isinstance(depends_on, list):
        raise UsageError("item %d: depends_on must be a list of strings like repo:path#symbol" % number)
    if len(depends_on) > MAX_FILES_PER_ITEM:
        raise UsageError(
            "item %d depends on %d symbols; the limit is %d" % (number, len(depends_on), MAX_FILES_PER_ITEM)
        )
    return {
        "kind": kind,
        "claim": stored_text(claim),
        "detail": stored_text(detail),
        "symptom": stored_text(symptom),
        "confidence": confidence,
        "repo": repo,
        "cited": cited,
        "explicit": explicit_dependencies(depends_on, repos, cwd, number),
    }


def _item_repo(store, item, number, default_repo, cwd):
    """The repository item ``number`` is about: the one it names, else the one the cwd is in."""
    if item.get("repo") is not None and not isinstance(item["repo"], str):
        raise UsageError("item %d: repo must be a repository name" % number)
    if item.get("repo"):
        return resolve_repo(store, item["repo"], cwd=cwd)
    if default_repo is not None:
        return default_repo
    raise UsageError(
        "item %d: no repository given and %s is not inside a registered repository (pass --repo NAME)"
        % (number, cwd)
    )


def _summary_key(text):
    return " ".join(text.casefold().split())


def _cited_set(anchors):
    """The (repository, path, symbol) triples an item cites, from stamped anchors or anchor rows."""
    out = set()
    for a in anchors:
        if a.get("path"):
            repo = a["repo"].name if isinstance(a.get("repo"), Repo) else a.get("repo_name") or a.get("repo")
            out.add((repo, a["path"], a.get("symbol") or None))
    return frozenset(out)


# The duplicate rule, for capture, the MCP server, transcript import and import-evidence alike.
DUPLICATE_STATUS = "active"  # only an active item is repeated; a retracted or superseded one stays apart


def repeats(existing, new):
    """THE duplicate rule: does an item recorded now (``new``) repeat the active item
    ``existing``? Each is (repository name, claim_key of the claim, cited set, detail). Yes when
    both are about the same repository, their claims have the same key (the words, with case,
    punctuation and Unicode forms folded), they cite exactly the same (repository, path, symbol),
    and the new detail adds nothing: none, or words the existing detail already holds (None:
    not compared). A new detail that says more makes a new item, so it is never dropped."""
    if existing[:3] != new[:3]:
        return False
    detail = _folded_detail(new[3])
    return not detail or detail in _folded_detail(existing[3])


def _folded_detail(detail):
    return " ".join((detail or "").split()).casefold()


def find_duplicate(store, repo_name, claim, cited, detail=None):
    """The active item that ``claim`` about ``repo_name`` citing ``cited`` (a _cited_set) with
    ``detail`` repeats (see repeats), as its evidence row (a dict), or None."""
    return DuplicateIndex(store).find(repo_name, claim_key(claim), cited, detail)


class DuplicateIndex:
    """The duplicate rule (repeats) over many claims at once: the active items of each
    (repository, claim key) asked about, with what they cite and their detail, loaded from the
    store in one query per 500 keys, then checked in memory. A bulk writer tells it what it
    inserts (``add``) and which items it changed otherwise (``refresh``)."""

    __slots__ = ("store", "items", "before_load")

    _COLUMNS = "rid, id, session_id, confidence, detail"

    def __init__(self, store, before_load=None):
        self.store = store
        self.items = {}  # (repo_name, claim_key) -> [(row dict, cited set)] in rid order
        self.before_load = before_load  # called before reading the store (a writer's flush)

    def _held(self, rows):
        anchors = _load_anchors(self.store, [r["rid"] for r in rows])
        return [
            (
                {k: r[k] for k in ("rid", "id", "session_id", "confidence", "detail")},
                _cited_set(anchors[r["rid"]]),
            )
            for r in sorted(rows, key=lambda r: r["rid"])
        ]

    def load(self, pairs, stored=True):
        """Read the active items of these (repository, claim key) pairs; ``stored``: False when
        the store holds no item at all (nothing to read)."""
        todo = {}
        for repo_name, key in pairs:
            if (repo_name, key) not in self.items:
                self.items[(repo_name, key)] = []
                todo.setdefault(repo_name, []).append(key)
        if not stored:
            return
        rows = []
        for repo_name, keys in todo.items():
            for i in range(0, len(keys), 500):
                chunk = keys[i : i + 500]
                rows += self.store.all(
                    "SELECT %s, repo_name, claim_key FROM evidence WHERE repo_name = ? AND claim_key IN (%s) "
                    "AND status = ? ORDER BY rid" % (self._COLUMNS, ",".join("?" * len(chunk))),
                    [repo_name, *chunk, DUPLICATE_STATUS],
                )
        by_rid = {r["rid"]: r for r in rows}
        for row, cited in self._held(rows):
            r = by_rid[row["rid"]]
            self.items[(r["repo_name"], r["claim_key"])].append((row, cited))

    def find(self, repo_name, key, cited, detail=None):
        """The first active item (lowest rid) that an item with this claim key about this
        repository citing ``cited`` with ``detail`` repeats (see repeats), or None."""
        if (repo_name, key) not in self.items:
            if self.before_load is not None:
                self.before_load()
            self.load([(repo_name, key)])
        for row, its_cited in self.items[(repo_name, key)]:
            if repeats((repo_name, key, its_cited, row["detail"]), (repo_name, key, cited, detail)):
                return row
        return None

    def add(self, repo_name, key, row, cited):
        """An active item just written (a higher rid than any before it)."""
        if (repo_name, key) in self.items:
            self.items[(repo_name, key)].append((dict(row, detail=row.get("detail")), cited))

    def refresh(self, repo_name, key, rid):
        """Read again the active items of (repo_name, key) after item ``rid``, which has that key,
        changed otherwise (its status or what it cites). Only the items already held and ``rid``
        itself can be among them, so they are read by rid: no query by claim key, whose index a
        bulk import may have set aside for the moment."""
        held = self.items.get((repo_name, key))
        if held is None:
            return  # never asked about: read when first asked
        if self.before_load is not None:
            self.before_load()
        rows = _select_in(
            self.store,
            "SELECT %s FROM evidence WHERE status = '%s' AND rid IN (%%s)"
            % (self._COLUMNS, DUPLICATE_STATUS),
            {row["rid"] for row, _ in held} | {rid},
        )
        self.items[(repo_name, key)] = self._held(rows)


def _insert_anchors(store, rid, anchors):
    store.db.executemany(
        "INSERT INTO anchors(evidence_rid, repo_id, repo_name, root_commit, path, symbol, commit_sha, branch, "
        "blob, dirty, symbol_hash, symbol_lang, checkout, symbol_lines) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (rid, a["repo"].id, a["repo"].name, a["repo"].root_commit, a["path"], a["symbol"], a["commit"],
             a["branch"], a["blob"], a["dirty"], a["symbol_hash"], a["symbol_lang"], a.get("checkout"), a.get("symbol_lines"))
            for a in anchors
        ],
    )  # fmt: skip
    store.note_written(items=[rid])


def _provenance_of(rows):
    """Anchor rows as the history keeps them: what an item was stamped with before an event."""
    return [
        {"repo": a["repo_name"], "path": a["path"], "symbol": a["symbol"], "commit": a["commit_sha"],
         "branch": a["branch"], "blob": a["blob"], "symbol_hash": a["symbol_hash"]}
        for a in rows
    ]  # fmt: skip


def _content_changed(rows, anchors):
    """True when a cited file's content (or a cited symbol's text, where it was located) differs
    between the stored anchor rows and freshly stamped ``anchors``."""
    now = {(a["repo"].name, a["path"], a["symbol"]): a for a in anchors if a["path"]}
    for r in rows:
        if not r["path"]:
            continue
        a = now.get((r["repo_name"], r["path"], r["symbol"]))
        if a is None:
            return True
        if r["symbol"] and r["symbol_hash"] and a["symbol_hash"]:
            if r["symbol_hash"] != a["symbol_hash"]:
                return True
        elif r["blob"] != a["blob"]:
            return True
    return False


_EVENT_INSERT = (
    "INSERT OR IGNORE INTO evidence_events(id, evidence_rid, event, session_id, agent, note, at, previous, "
    "commits) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _event_row(rid, event, session_id, agent, note, at, previous=None, commits=None, event_id=None):
    return (event_id or new_id("evt"), rid, event, session_id, agent, note, at,
            None if previous is None else json.dumps(previous), None if commits is None else json.dumps(commits))  # fmt: skip


def _add_event(store, rid, event, session_id, agent, note, at, previous=None, commits=None, event_id=None):
    store.db.execute(
        _EVENT_INSERT, _event_row(rid, event, session_id, agent, note, at, previous, commits, event_id)
    )
    store.note_written(items=[rid])


def _restamp(store, rid, anchors, event, session_id, agent, note, now, dependencies=None):
    """Replace an item's anchors by ``anchors`` (stamped now), keeping the old ones in its history,
    and its dependencies by ``dependencies`` when given."""
    old = _load_anchors(store, [rid])[rid]
    commits = {}
    for a in anchors:
        commits.setdefault(a["repo"].name, a["commit"])
    _add_event(store, rid, event, session_id, agent, note, now, _provenance_of(old), commits)
    store.db.execute("DELETE FROM anchors WHERE evidence_rid = ?", (rid,))
    _insert_anchors(store, rid, anchors)
    if dependencies is not None:
        store.db.execute("DELETE FROM dependencies WHERE evidence_rid = ?", (rid,))
        _insert_dependencies(store, rid, dependencies)
    store.db.execute(
        "UPDATE evidence_fts SET symbols = wctx_index_text(?), paths = wctx_index_text(?), "
        "code = wctx_index_text(?), code_words = ? WHERE rowid = ?",
        (_fts_symbols(anchors), _fts_paths(anchors), _fts_code(anchors), _fts_code(anchors), rid),
    )
    store.db.execute("UPDATE evidence SET confirmed_at = ?, updated_at = ? WHERE rid = ?", (now, now, rid))
    store.db.execute("DELETE FROM freshness_cache WHERE evidence_rid = ?", (rid,))
    return commits


def repeat_item(store, row, anchors, confidence, session_id, agent, now, symptom=None):
    """Someone recorded ``row``'s item again (inside the caller's transaction): note the session
    as having seen it, raise the confidence to the larger one and give it the ``symptom`` it
    lacked. Never re-stamped here (that is confirm, asked for): when the cited code changed since,
    the message says so and how to confirm. Returns the capture result entry, with a message
    saying what happened."""
    rid = row["rid"]
    said = []
    if confidence is not None and (row["confidence"] is None or confidence > row["confidence"]):
        store.db.execute("UPDATE evidence SET confidence = ? WHERE rid = ?", (confidence, rid))
        said.append("confidence raised to %g" % confidence)
    if symptom:
        held = store.one("SELECT symptom FROM evidence WHERE rid = ?", (rid,))[0]
        if not held:  # one it has already stays: the first asker's words are as good as the next
            store.db.execute(
                "UPDATE evidence SET symptom = ?, updated_at = ? WHERE rid = ?", (symptom, now, rid)
            )
            store.db.execute(
                "UPDATE evidence_fts SET symptom = wctx_index_text(?) WHERE rowid = ?", (symptom, rid)
            )
            said.append("how it shows itself added")
        elif held != symptom:
            said.append("its own symptom kept")
    seen = row["session_id"] != session_id and not store.one(
        "SELECT 1 FROM evidence_events WHERE evidence_rid = ? AND event = 'seen' AND session_id = ?",
        (rid, session_id),
    )
    if seen:
        _add_event(store, rid, "seen", session_id, agent, None, now)
        said.insert(0, "seen again by session %s" % session_id)
    else:
        said.insert(0, "already recorded")
    if _content_changed(_load_anchors(store, [rid])[rid], anchors):
        said.append(
            "the cited code changed since it was recorded; if the claim still holds: wctx confirm %s"
            % row["id"]
        )
    return {"id": row["id"], "duplicate": True, "message": "%s: %s" % (row["id"], "; ".join(said))}


def _refuse_missing_symbols(prepared):
    """A cited symbol that is not in its file is most often a typo: refused, naming the nearest
    symbols of that file, before anything is written. Citing the file alone, or insisting
    (allow_missing_symbol), stores what was asked; its freshness is then judged by the file."""
    for p in prepared:
        for a in p["anchors"]:
            if "nearest_symbols" in a:
                near = a["nearest_symbols"]
                raise MissingSymbolError(
                    "symbol %s was not found in %s:%s%s; cite %s, or the file alone (%s)"
                    % (a["symbol"], a["repo"].name, a["path"],
                       " (did you mean %s?)" % " or ".join(near) if near else "",
                       "one of those" if near else "a symbol it defines", a["path"])
                )  # fmt: skip


def capture(
    store,
    items,
    summary=None,
    session_id=None,
    cwd=None,
    agent="cli",
    external_id=None,
    allow_missing_symbol=False,
):
    """Record evidence items in one transaction, each stamped with its own repositories' provenance.
    A cited symbol its file does not define is refused (_refuse_missing_symbols) unless
    ``allow_missing_symbol``; then it is stored with a warning.

    Returns {"session", "evidence": [{"id", "kind", "repo", "duplicate"}], "warnings"}.
    """
    cwd = os.path.abspath(cwd or os.getcwd())
    summary = stored_text(clean_text(summary, "summary", MAX_SUMMARY_CHARS))
    agent = clean_text(agent, "agent", 200, required=True)
    external_id = stored_key(clean_text(external_id, "external id", 1000))  # as transcript imports key it
    if not items:
        raise UsageError("nothing to capture: give at least one item (--finding, --decision, --note, …)")
    if len(items) > MAX_ITEMS_PER_CAPTURE:
        raise UsageError("%d items in one capture; the limit is %d" % (len(items), MAX_ITEMS_PER_CAPTURE))
    repos = _repos(store)
    default_repo = _repo_containing(repos, cwd)
    warnings = []
    prepared = [
        _prepare_item(store, repos, item, n, default_repo, cwd, warnings) for n, item in enumerate(items, 1)
    ]
    if session_id is not None:  # given, so it must name a session: an empty one names none
        session_id = _resolve_session_id(store, session_id)

    gits = _stamp_prepared(store, prepared, default_repo, warnings, allow_missing_symbol)
    now = utc_now()
    author, machine = recorder(store) if session_id is None else (None, None)
    with store.atomic():
        if session_id is None and external_id:
            row = store.one(
                "SELECT id FROM sessions WHERE agent = ? AND external_id = ?", (agent, external_id)
            )
            session_id = row["id"] if row else None
        if session_id is None:
            session_id = new_id("ses")
            g = gits.get(default_repo.id) if default_repo else None
            _insert_session(
                store, session_id, agent, external_id, cwd, default_repo, g, summary, now, author, machine
            )
        else:
            _extend_session(store, session_id, summary, now)
        results = [_record_item(store, p, session_id, agent, now, warnings) for p in prepared]
    return {"session": session_id, "evidence": results, "warnings": warnings}


def _stamp_prepared(store, prepared, default_repo, warnings, allow_missing_symbol):
    """Provenance of the prepared items, stamped into them (p["anchors"], p["dependencies"]): git
    once per repository touched, before the write transaction opens. Returns {repo id: GitRepo}."""
    gits = {}
    touched = {p["repo"].id: p["repo"] for p in prepared}
    for p in prepared:
        for repo, _, _, _ in p["cited"]:
            touched[repo.id] = repo
    if default_repo is not None:
        touched.setdefault(default_repo.id, default_repo)
    for repo in touched.values():
        gits[repo.id] = _repo_provenance(repo)
    head_blob_cache = {}

    def head_blob(g, rel):
        key = (g.path, rel)
        if key not in head_blob_cache:
            hit = g.batch_check(["HEAD:" + rel]).get("HEAD:" + rel) if g.head else None
            head_blob_cache[key] = hit[0] if hit and hit[1] == "blob" else None
        return head_blob_cache[key]

    def prefetch(wanted):
        """HEAD blobs of {repo id: paths} in one cat-file per repository."""
        for rid, rels in wanted.items():
            g = gits.get(rid)
            if g is not None and g.head:
                found = g.batch_check(["HEAD:" + r for r in sorted(rels)])
                for r in rels:
                    hit = found.get("HEAD:" + r)
                    head_blob_cache[(g.path, r)] = hit[0] if hit and hit[1] == "blob" else None

    wanted = {}
    for p in prepared:
        for repo, rel, _, _ in p["cited"]:
            wanted.setdefault(repo.id, set()).add(rel)
    prefetch(wanted)
    for p in prepared:
        p["anchors"] = _stamp_anchors(p["repo"], p["cited"], gits, head_blob, warnings)
    if not allow_missing_symbol:
        _refuse_missing_symbols(prepared)
    # What the cited symbols call in related repositories, and what the items name with
    # depends_on: read now, once, and stamped as the cited files are.
    deps = read_dependencies(DependencyReader(store), prepared, warnings)
    for p in prepared:
        for repo, _, _, _ in p["explicit"]:
            if repo.id not in gits:
                gits[repo.id] = _repo_provenance(repo)
    dependency_gits(deps, gits)
    prefetch({rid: paths for rid, (_, paths) in deps.items()})
    stamp_dependencies(prepared, gits, head_blob, warnings)
    return gits


def _insert_session(
    store, session_id, agent, external_id, cwd, default_repo, g, summary, now, author, machine
):
    """A new session for a capture, in the repository the capture ran in (``g``: its GitRepo)."""
    store.db.execute(
        "INSERT INTO sessions(id, agent, external_id, cwd, repo_id, repo_name, branch, commit_sha, started_at, "
        "ended_at, summary, created_at, author, machine) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            session_id,
            agent,
            external_id,
            printable_path(cwd),
            default_repo.id if default_repo else None,
            default_repo.name if default_repo else None,
            g.branch() if g else None,
            g.head if g else None,
            now,
            now,
            summary,
            now,
            author,
            machine,
        ),
    )


def _extend_session(store, session_id, summary, now):
    """An existing session a capture joins: it ends now, and the summary is appended only when
    new (re-importing a transcript replays its record_evidence calls)."""
    row = store.one("SELECT summary FROM sessions WHERE id = ?", (session_id,))
    new_summary = row["summary"]
    if summary and (not row["summary"] or _summary_key(summary) not in _summary_key(row["summary"])):
        new_summary = summary if not row["summary"] else row["summary"] + "; " + summary
        new_summary = new_summary[-MAX_SUMMARY_CHARS:]
    store.db.execute(
        "UPDATE sessions SET ended_at = ?, summary = ? WHERE id = ?", (now, new_summary, session_id)
    )


def _record_item(store, p, session_id, agent, now, warnings):
    """Write one prepared item (or repeat the duplicate the one duplicate rule finds); its entry
    in capture's answer."""
    cited = _cited_set(p["anchors"])
    dup = find_duplicate(store, p["repo"].name, p["claim"], cited, stored_text(p["detail"]))
    if dup is not None:
        return _repeat_captured(store, dup, p, session_id, agent, now)
    eid = new_id("ev")
    rid = store.db.execute(
        _EVIDENCE_INSERT,
        (
            eid,
            session_id,
            p["repo"].id,
            p["repo"].name,
            p["kind"],
            p["claim"],
            claim_key(p["claim"]),
            p["detail"],
            p["confidence"],
            now,
            now,
            p["symptom"],
        ),
    ).lastrowid
    store.note_written(sessions=[session_id])
    _insert_anchors(store, rid, p["anchors"])
    _insert_dependencies(store, rid, p["dependencies"])
    code = _fts_code(p["anchors"])
    store.db.execute(
        _FTS_INSERT_CODE,
        (
            rid,
            p["claim"],
            _fts_symbols(p["anchors"]),
            _fts_paths(p["anchors"]),
            p["detail"] or "",
            code,
            code,
            p["symptom"] or "",
        ),
    )
    twin = find_duplicate(store, p["repo"].name, p["claim"], cited)
    if twin is not None and twin["rid"] != rid:
        warnings.append(
            "%s records the same claim about %s citing the same code, with another detail: yours "
            "is kept as %s; if it replaces that one: wctx supersede %s --by %s"
            % (twin["id"], p["repo"].name, eid, twin["id"], eid)
        )
    return {"id": eid, "kind": p["kind"], "repo": p["repo"].name, "duplicate": False}


def _repeat_captured(store, dup, p, session_id, agent, now):
    """A captured item that the duplicate rule finds already recorded: repeated on it, and a
    dependency named this time added to it (what is read from code is read again by confirm)."""
    entry = repeat_item(store, dup, p["anchors"], p["confidence"], session_id, agent, now, p["symptom"])
    have = {(r["repo_id"], r["path"], r["symbol"]) for r in store.all(
        "SELECT repo_id, path, symbol FROM dependencies WHERE evidence_rid = ? AND how = 'explicit'",
        (dup["rid"],))}  # fmt: skip
    named = [d for d in p["dependencies"] if d["how"] == "explicit"
             and (d["repo"].id, d["path"], d["symbol"]) not in have]  # fmt: skip
    if named:
        _insert_dependencies(store, dup["rid"], named)
        store.db.execute("DELETE FROM freshness_cache WHERE evidence_rid = ?", (dup["rid"],))
        entry["message"] += "; %d dependency named" % len(named) if len(named) == 1 else (
            "; %d dependencies named" % len(named))  # fmt: skip
    return dict(entry, kind=p["kind"], repo=p["repo"].name)
