from __future__ import annotations

import json
import os
import re

from .authors import MAX_AUTHOR_CHARS, _store_machine_id
from .caches import _CLEAN_TEXTS, _INDEXED_TEXTS, BUILT_ONCE
from .capture import _EVENT_INSERT, _FTS_INSERT, DuplicateIndex, _check_confidence, _event_row
from .constants import (
    EVIDENCE_KINDS,
    MAX_CLAIM_CHARS,
    MAX_DETAIL_CHARS,
    MAX_FILES_PER_ITEM,
    MAX_SUMMARY_CHARS,
    MAX_SYMPTOM_CHARS,
    RELATION_KINDS,
    REPO_NAME_RE,
    STATUSES,
    _lazy_pattern,
)
from .errors import NotFoundError, UsageError, WctxError
from .git import GitError, git_path, is_object_id
from .helpers import clean_text, is_utf8, utc_now
from .items import _forget_rows, _load_histories, _scrub_store, _session_dict
from .records import _repos, resolve_repo
from .redaction import _stored_claim, _stored_noting, identifier_fault, shown_text, stored_key, stored_text
from .repos import _identity_of, _workspace_id
from .results import _stamp_seconds
from .store import _select_in
from .words import index_text

# ----------------------------------------------------------------------------------------------
# Sharing: evidence as append-only JSONL with stable ids, imported idempotently
# ----------------------------------------------------------------------------------------------
#
# A team shares memory through a git repository it already has: ``wctx export --dir DIR`` writes
# one file per session (``DIR/<session id>.jsonl``), so two people exporting never write the same
# file and a merge never conflicts; ``wctx import-evidence DIR`` reads them back. Ids are global,
# so importing twice changes nothing. A repository is matched by name when its root commit agrees,
# else by root commit (the same project registered under another name or path).

EXPORT_FORMAT = 1
_ANCHOR_FIELDS = (
    "repo",
    "root_commit",
    "path",
    "symbol",
    "commit",
    "branch",
    "blob",
    "dirty",
    "symbol_hash",
    "symbol_lang",
)


_SHARED_MEMO_CHARS = 200  # values up to this long are cleaned once per export (LocalPaths.shared)
_SHARED_MEMO = 50_000  # values and anchors an export keeps cleaned at most


class LocalPaths:
    """This machine's absolute paths, to keep them out of what leaves it: in free text a registered
    checkout's path becomes the repository's name and the home directory ``~``."""

    __slots__ = ("prefixes", "_names", "_pattern", "_shared", "_anchors")

    def __init__(self, store):
        prefixes = [(r.path, r.name) for r in _repos(store) if r.path]
        home = os.path.expanduser("~")
        if home and home != "/":
            prefixes.append((home, "~"))
        self.prefixes = sorted(prefixes, key=lambda p: -len(p[0]))  # longest first: the innermost
        self._names = dict(self.prefixes)
        alternatives = "|".join(re.escape(p) for p, _ in self.prefixes)
        self._pattern = re.compile(r"(%s)(?=$|[/\s\"'`),;:\]])" % alternatives) if alternatives else None
        self._shared = {}
        self._anchors = {}

    def shared(self, text):
        """``text`` as it may leave this machine: local paths stripped, then redacted. One export
        passes the same short values again and again (repository names, paths, symbols,
        branches), so each distinct one is cleaned once; free text (a claim, a detail) is seldom
        seen twice and is not kept, and the memo starts again past _SHARED_MEMO entries, so that
        what an export holds does not grow with the store."""
        if len(text) > _SHARED_MEMO_CHARS:
            return stored_text(self.strip(text))
        out = self._shared.get(text)
        if out is None:
            if len(self._shared) >= _SHARED_MEMO:
                self._shared.clear()
            out = self._shared[text] = stored_text(self.strip(text))
        return out

    def shared_anchor(self, anchor):
        """shareable_record of one anchor (flat: ids, names, paths), made once per distinct
        anchor: many items cite the same file at the same commit. The result is shared between
        the records that cite it, which nothing modifies."""
        try:
            key = tuple(anchor.items())
            out = self._anchors.get(key)
        except TypeError:  # a value that is not flat: nothing to share
            return shareable_record(anchor, self)
        if out is None:
            if len(self._anchors) >= _SHARED_MEMO:
                self._anchors.clear()
            out = self._anchors[key] = shareable_record(anchor, self)
        return out

    def strip(self, value):
        if self._pattern is None or not isinstance(value, str):
            return value
        return self._pattern.sub(lambda m: self._names[m.group(1)], value)

    def cwd_in_repo(self, cwd, repo):
        """``cwd`` relative to the checkout of ``repo`` (``.`` at its top), or None."""
        for prefix, name in self.prefixes:
            if name == repo and name != "~" and (cwd == prefix or cwd.startswith(prefix + "/")):
                return os.path.relpath(cwd, prefix)
        return None


# Export fields whose values are ids, hashes, timestamps or enumerations (validated on import):
# nothing free-form to redact or to strip of local paths.
_STRUCTURAL_FIELDS = frozenset(
    ("type", "id", "session", "kind", "status", "commit", "blob", "root_commit", "symbol_hash",
     "symbol_lang", "created_at", "updated_at", "started_at", "ended_at", "superseded_by", "confirmed_at", "event", "at", "forgotten_at")
)  # fmt: skip


def shareable_record(record, local):
    """One export record made safe to leave this machine (``local``: its LocalPaths): redacted
    again, no absolute path (a session's cwd becomes relative to its repository, free text loses
    this machine's paths)."""
    out = dict(record)
    shared = local.shared
    for key, value in record.items():
        if value.__class__ is str:
            if key not in _STRUCTURAL_FIELDS:
                out[key] = shared(value)
        elif value.__class__ is list and value:  # anchors, history events: objects with text of their own
            if key == "anchors":
                out[key] = [local.shared_anchor(v) if v.__class__ is dict else v for v in value]
            else:
                out[key] = [shareable_record(v, local) if v.__class__ is dict else v for v in value]
    cwd = record.get("cwd") if record.get("type") == "session" else None
    if isinstance(cwd, str):
        out["cwd"] = local.cwd_in_repo(cwd, record.get("repo"))
    return out


_EXPORT_PART = 5000  # items export_records reads at a time


def export_records(store, repo=None, sessions=None):
    """Yield (session id, record) pairs: each session followed by its evidence, oldest first;
    with ``sessions`` (a set of ids), only those sessions'. The sessions are read in order, a part
    of about _EXPORT_PART items at a time (a session never split), each part by the tables'
    indexes: what an export holds does not grow with the store."""
    params = []
    where = []
    if repo:
        r = resolve_repo(store, repo)
        where = ["e.repo_id = ?"]
        params = [r.id]
    cursor = store.db.cursor()
    cursor.row_factory = None  # plain tuples: no sqlite3.Row per item, read by column index below
    count = "SELECT e.session_id, count(*) FROM evidence e WHERE %s GROUP BY e.session_id"
    if sessions is None:
        sizes = cursor.execute(count % " AND ".join(where or ["1"]), params).fetchall()
    else:
        sizes, wanted = [], sorted(sessions)
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            clause = " AND ".join(where + ["e.session_id IN (%s)" % ",".join("?" * len(chunk))])
            sizes += cursor.execute(count % clause, params + chunk).fetchall()
    sizes.sort()
    part, held = [], 0
    for sid, n in sizes:
        part.append(sid)
        held += n
        if held >= _EXPORT_PART:
            yield from _export_part(store, cursor, part, where, params)
            part, held = [], 0
    if part:
        yield from _export_part(store, cursor, part, where, params)


def _export_part(store, cursor, sessions, where, params):
    """export_records of ``sessions`` (ids, in order), read by the tables' indexes."""
    select = (
        "SELECT e.rid, e.id, e.session_id, e.repo_name, r.root_commit, e.kind, e.claim, e.detail, "
        "e.confidence, e.status, e.superseded_by, e.created_at, e.updated_at, e.confirmed_at, e.symptom "
        "FROM evidence e LEFT JOIN repos r ON r.id = e.repo_id%s ORDER BY e.session_id, e.created_at, e.id"
    )
    rows = []
    for i in range(0, len(sessions), 500):  # in session order, as one query would give them
        chunk = sessions[i : i + 500]
        clause = " WHERE " + " AND ".join(where + ["e.session_id IN (%s)" % ",".join("?" * len(chunk))])
        rows += cursor.execute(select % clause, params + chunk).fetchall()
    if not rows:
        return
    # Anchors by item, each read straight into its export form.
    anchors = {r[0]: [] for r in rows}
    anchor_select = (
        "SELECT evidence_rid, repo_name, root_commit, path, symbol, commit_sha, branch, blob, dirty, "
        "symbol_hash, symbol_lang FROM anchors WHERE evidence_rid IN (%s) ORDER BY evidence_rid, id"
    )
    rids = list(anchors)
    for i in range(0, len(rids), 500):
        chunk = rids[i : i + 500]
        for a in cursor.execute(anchor_select % ",".join("?" * len(chunk)), chunk):
            anchors[a[0]].append(dict(zip(_ANCHOR_FIELDS, a[1:])))
    histories = _load_histories(store, rids)
    session_rows = {
        s["id"]: s for s in _select_in(store, "SELECT * FROM sessions WHERE id IN (%s)", {r[2] for r in rows})
    }
    history_fields = ("id", "event", "at", "agent", "session", "note", "commits", "previous")
    current = None
    for row in rows:
        rid, eid, sid, repo_name, repo_root, kind, claim, detail = row[:8]
        confidence, status, superseded_by, created_at, updated_at, confirmed_at, symptom = row[8:]
        if sid != current:  # rows come ordered by session: each session once, before its items
            current = sid
            yield sid, dict(_session_dict(session_rows[sid]), type="session", format=EXPORT_FORMAT)
        cited = anchors[rid]
        record = {
                "type": "evidence",
                "format": EXPORT_FORMAT,
                "id": eid,
                "session": sid,
                "repo": repo_name,
                "root_commit": repo_root
                or next((a["root_commit"] for a in cited if a["repo"] == repo_name), None),
                "kind": kind,
                "claim": claim,
                "detail": detail,
                "confidence": confidence,
                "status": status,
                "superseded_by": superseded_by,
                "created_at": created_at,
                "updated_at": updated_at,
                "confirmed_at": confirmed_at,
                "history": [{k: h[k] for k in history_fields} for h in histories.get(rid, ())],
                "anchors": cited,
            }  # fmt: skip
        if symptom:  # only then: the records of items without one stay what they were
            record["symptom"] = symptom
        yield sid, record


def tombstone_records(store):
    """(session id, record) for each thing forgotten here: its id and the reason, never content."""
    for r in store.all("SELECT * FROM tombstones ORDER BY forgotten_at, id"):
        yield (
            r["session_id"],
            {
                "type": "tombstone",
                "format": EXPORT_FORMAT,
                "id": r["id"],
                "kind": r["kind"],
                "session": r["session_id"],
                "reason": r["reason"],
                "forgotten_at": r["forgotten_at"],
            },
        )


def _merge_export(old_text, records):
    """Merge this store's records of one session with what its shared file already holds, so that
    an export never drops a line someone else wrote: per id the newer record wins (updated_at for
    evidence, ended_at for the session), and records only the file knows are kept."""
    merged = {}
    for line in (old_text or "").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue  # a damaged line is not ours to repair; import-evidence reports it
        if (
            isinstance(rec, dict)
            and rec.get("type") in ("session", "evidence", "tombstone")
            and isinstance(rec.get("id"), str)
        ):
            merged[(rec["type"], rec["id"])] = rec
    for rec in records:
        key = (rec["type"], rec["id"])
        field = {"evidence": "updated_at", "tombstone": "forgotten_at"}.get(rec["type"], "ended_at")
        theirs = merged.get(key)
        if theirs is None or str(rec.get(field) or "") >= str(theirs.get(field) or ""):
            merged[key] = rec
    # A tombstone removes what it names from the shared file too: the content never travels on.
    for key in [k for k in merged if k[0] == "tombstone"]:
        merged.pop(("evidence", key[1]), None)
        if merged[key].get("kind") == "session":
            merged.pop(("session", key[1]), None)
    ordered = [r for k, r in merged.items() if k[0] == "session"]
    ordered += sorted((r for k, r in merged.items() if k[0] == "evidence"),
                      key=lambda r: (str(r.get("created_at") or ""), r["id"]))  # fmt: skip
    ordered += sorted((r for k, r in merged.items() if k[0] == "tombstone"), key=lambda r: r["id"])
    return ordered


def topology_records(store, repo=None):
    """The store's topology as export records: every repository (name and root commit), every
    relation and every workspace with its members, by identity; with ``repo``, what involves it."""
    repos = _repos(store)
    only = resolve_repo(store, repo) if repo else None
    names = {r.id: r for r in repos}
    out = []
    for r in repos:
        if only is None or r.id == only.id:
            out.append({"type": "repository", "format": EXPORT_FORMAT, "id": "repo:" + r.name,
                        "name": r.name, "root_commit": r.root_commit})  # fmt: skip
    for row in store.all("SELECT * FROM relations ORDER BY id"):
        a, b = names.get(row["from_repo"]), names.get(row["to_repo"])
        if a is None or b is None or (only is not None and only.id not in (a.id, b.id)):
            continue
        out.append({"type": "relation", "format": EXPORT_FORMAT, "id": "rel:%s:%s:%s" % (a.name, row["kind"], b.name),
                    "from": a.name, "from_root": a.root_commit, "kind": row["kind"], "to": b.name,
                    "to_root": b.root_commit, "note": row["note"], "created_at": row["created_at"]})  # fmt: skip
    for ws in store.all("SELECT * FROM workspaces ORDER BY name"):
        members = [names[r["repo_id"]] for r in store.all(
            "SELECT repo_id FROM workspace_repos WHERE workspace_id = ?", (ws["id"],)) if r["repo_id"] in names]  # fmt: skip
        if only is not None and only.id not in {m.id for m in members}:
            continue
        out.append({"type": "workspace", "format": EXPORT_FORMAT, "id": "ws:" + ws["name"], "name": ws["name"],
                    "repos": [{"repo": m.name, "root_commit": m.root_commit}
                              for m in sorted(members, key=lambda m: m.name)]})  # fmt: skip
    return out


# One encoder for every exported line (json.dumps with options builds a new one per call): keys
# sorted, so that the same record is always the same bytes and an unchanged file is not rewritten.
_export_line = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode


def _export_text(records):
    return "".join([_export_line(r) + "\n" for r in records])


def _write_shared_file(path, text):
    """Replace ``path`` with ``text`` through a rename, so a reader (a teammate's import, a git
    add) sees the old file or the new one, never half of one. No fsync per file: after a crash
    the next export rewrites any file that is not what the store says, and the shared copy's
    durability is the commit that follows, not this directory."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def _read_shared_file(path):
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def export_evidence(store, out_dir=None, stream=None, repo=None):
    """Write the export: one JSONL file per session into ``out_dir`` plus this store's topology
    in ``topology-<store id>.jsonl``, or everything to ``stream``. Each session is written as soon
    as its records are read (export_records reads them a part at a time): what an export holds is
    one session, whatever the store's size."""
    counts = {"sessions": 0, "evidence": 0, "files": 0, "topology": 0, "tombstones": 0}
    with store.snapshot():  # one moment of the store, whatever a capture commits meanwhile
        local = LocalPaths(store)
        tombstones = {}
        for sid, record in tombstone_records(store):
            tombstones.setdefault(sid, []).append(record)
            counts["tombstones"] += 1
        topology = [shareable_record(r, local) for r in topology_records(store, repo=repo)]
        counts["topology"] = len(topology)
        if out_dir is not None:
            os.makedirs(out_dir, exist_ok=True)
            # The topology file is this store's alone (named by its id), so it is rewritten whole.
            if topology:
                path = os.path.join(out_dir, "topology-%s.jsonl" % _store_machine_id(store))
                text = _export_text(topology)
                if _read_shared_file(path) != text:
                    _write_shared_file(path, text)
                    counts["files"] += 1
        current, records = None, []
        for sid, record in export_records(store, repo=repo):
            if sid != current:
                if records:
                    _export_session(
                        out_dir, stream, current, records + tombstones.pop(current, []), local, counts
                    )
                current, records = sid, []
            records.append(record)
            counts["sessions" if record["type"] == "session" else "evidence"] += 1
        if records:
            _export_session(out_dir, stream, current, records + tombstones.pop(current, []), local, counts)
        for sid, records in tombstones.items():
            _export_session(out_dir, stream, sid, records, local, counts)
    if out_dir is None:
        stream.write(_export_text(topology))
    return counts


def _export_session(out_dir, stream, sid, records, local, counts):
    """export_evidence's output for one session's records: to ``stream``, or its file in
    ``out_dir`` (merged with what the file already holds, left alone when it says the same)."""
    if out_dir is None:
        stream.write(_export_text(shareable_record(r, local) for r in records))
        return
    path = os.path.join(out_dir, sid + ".jsonl")
    old = _read_shared_file(path)
    ours = _merge_export(None, [shareable_record(r, local) for r in records])
    text = _export_text(ours)
    if old is not None and old != text:
        # The file holds something else (an older state, a teammate's lines): merge per id.
        # A file that already says exactly what the store says is left alone unparsed.
        text = _export_text(_merge_export(old, ours))
    if old != text:
        _write_shared_file(path, text)
        counts["files"] += 1


# -- Records from outside: one validator, field by field ------------------------------------------
# Every record that arrives from another store (an export file, a team's shared directory) passes
# validate_record before anything is stored. RECORD_FIELDS maps a record type to its fields and
# each field to a checker; a new record type adds its entry here and is validated the same way.
# A checker returns the value to keep or raises ValueError with what is wrong; fields a type does
# not declare are dropped, so nothing unchecked reaches the store.

_TIMESTAMP_RE = _lazy_pattern(r"\A\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?\Z")
_RECORD_ID_RE = _lazy_pattern(r"\A(?:(?:ev|ses)-[0-9a-f]{10}|[A-Za-z0-9_][\w.:-]{0,79})\Z")
_HEX_RE = _lazy_pattern(r"\A[0-9a-f]{8,64}\Z")
_EVENT_ID_RE = _lazy_pattern(r"\Aevt-[\w.:-]{1,80}\Z")
_REF_FORBIDDEN_RE = _lazy_pattern(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//")


def _v_text(limit, required=False, single_line=False):
    def check(value):
        if value is None or value == "":
            if required:
                raise ValueError("is required")
            return None
        if not isinstance(value, str):
            raise ValueError("must be text, not %s" % type(value).__name__)
        if not value.isascii() and not is_utf8(value):  # ASCII is UTF-8 (a flag, no encoding)
            raise ValueError("is not valid UTF-8")
        if "\x00" in value:
            raise ValueError("contains a NUL character")
        if single_line and ("\n" in value or "\r" in value):
            raise ValueError("must be one line")
        if len(value) > limit:
            raise ValueError("is %d characters; the limit is %d" % (len(value), limit))
        if required and not value.strip():
            raise ValueError("is empty")
        return value

    return check


def _v_object_id(value):
    """A recorded commit or blob: a full object id, the only form that ever reaches git."""
    if value is None:
        return None
    if not is_object_id(value):
        raise ValueError(
            "must be a full object id (40 or 64 lower-case hex digits), not %r"
            % (shown_text(str(value))[:80],)
        )
    return value


def _v_hex(value):
    if value is None:
        return None
    if not isinstance(value, str) or not _HEX_RE.match(value):
        raise ValueError("must be lower-case hex, not %r" % (shown_text(str(value))[:80],))
    return value


_OWN_ID_RE = _lazy_pattern(r"\A(?:ev|ses)-[0-9a-f]{10}\Z")  # the ids wctx makes: never a secret


def _v_key(value):
    """``value`` (an identifier that matched its pattern), refused when the redaction boundary
    would change it: stored as a [REDACTED …] marker, a key names no record, and every other key
    holding a secret of that kind becomes the same marker."""
    fault = None if _OWN_ID_RE.match(value) else identifier_fault(value)
    if fault:
        raise ValueError("%s (an identifier is stored as it is, never redacted)" % fault)
    return value


def _v_matching(pattern, what, key=False):
    """A checker for optional text that must match ``pattern`` (``what`` names it in errors);
    ``key``: an identifier the store keeps as a key, which must hold no secret (_v_key)."""

    def check(value):
        if value is None:
            return None
        if not isinstance(value, str) or not pattern.match(value):
            fault = identifier_fault(value) if key and isinstance(value, str) else None
            if fault:  # said without the value, which holds what looks like a secret
                raise ValueError("%s (an identifier is stored as it is, never redacted)" % fault)
            raise ValueError("is not %s: %r" % (what, shown_text(str(value))[:80]))
        return _v_key(value) if key else value

    return check


def _v_required(check):
    """``check``, with a missing value refused."""

    def required(value):
        if value is None:
            raise ValueError("is required")
        return check(value)

    return required


_v_record_id = _v_matching(_RECORD_ID_RE, "a valid id")  # a topology record's (never stored)
_v_required_id = _v_required(_v_record_id)
# An item's or a session's id is one wctx made (new_id): "ev-" or "ses-" and ten lower-case ASCII
# hex digits. Nothing else names one, so a twin in other case or other digits never arrives.
_v_key_id = _v_matching(
    _OWN_ID_RE, "an item or session id (ev- or ses- and 10 lower-case hex digits)", key=True
)
_v_required_key_id = _v_required(_v_key_id)
_v_repo_name = _v_matching(REPO_NAME_RE, "a repository name", key=True)
_v_required_repo = _v_required(_v_repo_name)
_v_machine = _v_matching(_lazy_pattern(r"\A[0-9a-f]{16}\Z"), "a machine id (16 lower-case hex digits)")


def _v_branch(value):
    """A branch name as git check-ref-format would accept it (and never an option)."""
    if value is None:
        return None
    if (
        not isinstance(value, str)
        or not value
        or len(value) > 255
        or not is_utf8(value)
        or value.startswith(("-", "/", "."))
        or value.endswith(("/", ".", ".lock"))
        or "/." in value
        or _REF_FORBIDDEN_RE.search(value)
    ):
        raise ValueError("is not a valid branch name: %r" % (shown_text(str(value))[:80],))
    return value


def _v_path(value):
    """A repo-relative path: never absolute, never leaving the repository, never an option."""
    if value is None:
        return None
    try:
        git_path(value)
    except GitError:
        raise ValueError("cites a path outside its repository: %r" % (shown_text(str(value))[:80],)) from None
    if value.startswith("-") or len(value) > 4096 or ("git" in value.lower() and _names_git_dir(value)):
        raise ValueError("cites a path outside its repository: %r" % (shown_text(str(value))[:80],))
    return value


def _names_git_dir(path):
    """Whether a part of ``path`` is the .git directory to some file system: in any case (macOS,
    Windows), with trailing dots or spaces (which NTFS drops), or as NTFS's short name GIT~1."""
    return any(p.rstrip(". ") == ".git" or p == "git~1" for p in path.lower().split("/"))


_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _is_calendar_time(value):
    """Whether the date, time and offset of a stamp _TIMESTAMP_RE matched exist: no month 13, no
    30 February, no hour 24 (a leap second's :60 is a time)."""
    y, mo, d = int(value[:4]), int(value[5:7]), int(value[8:10])
    if not 1 <= mo <= 12 or not 1 <= d <= _MONTH_DAYS[mo - 1]:
        return False
    if mo == 2 and d == 29 and (y % 4 or (y % 100 == 0 and y % 400)):
        return False
    if int(value[11:13]) > 23 or int(value[14:16]) > 59 or int(value[17:19]) > 60:
        return False
    offset = value[19:].lstrip(".0123456789")
    return offset in ("", "Z") or (int(offset[1:3]) <= 23 and int(offset[-2:]) <= 59)


def _v_timestamp(value):
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not _TIMESTAMP_RE.match(value) or not _is_calendar_time(value):
        raise ValueError("is not an ISO-8601 time: %r" % (shown_text(str(value))[:80],))
    return value


def _v_required_timestamp(value):
    if _stamp_seconds(value) is None or not _TIMESTAMP_RE.match(value) or not _is_calendar_time(value):
        raise ValueError("needs a time like 2026-03-01T12:00:00Z, not %r" % (shown_text(str(value))[:80],))
    return value


def _v_event_id(value):
    if not isinstance(value, str) or not _EVENT_ID_RE.match(value):
        raise ValueError("needs an id like evt-…, not %r" % (shown_text(str(value))[:80],))
    return _v_key(value)


def _v_commit_map(value):
    """{repository name: commit or None}."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError("must map repository names to commits")
    for name, commit in value.items():
        try:
            _v_repo_name(name)
            _v_object_id(commit)
        except ValueError as e:
            raise ValueError("%r: %s" % (name, e)) from None
    return value


def _v_enum(choices, default=None, what="value"):
    def check(value):
        if value is None:
            return default
        if not isinstance(value, str) or value not in choices:
            raise ValueError("unknown %s %r (one of %s)" % (what, value, ", ".join(choices)))
        return value

    return check


def _v_format(value):
    if value is None:
        return EXPORT_FORMAT
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError("must be a whole number")
    if value > EXPORT_FORMAT:
        raise ValueError("%s is newer than this wctx understands" % value)
    return value


def _v_confidence(value):
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise ValueError("must be a JSON number from 0 to 1, not %s" % type(value).__name__)
    try:
        return _check_confidence(value)
    except UsageError as e:
        raise ValueError(str(e).replace("confidence ", "", 1)) from None


def _v_dirty(value):
    if value not in (None, 0, 1, True, False):
        raise ValueError("must be 0 or 1")
    return None if value is None else int(value)


def _v_list_of(record_type, limit=MAX_FILES_PER_ITEM * 4):
    def check(value):
        if value is None:
            return []
        if not isinstance(value, list):
            raise ValueError("must be a list")
        if len(value) > limit:
            raise ValueError("has %d entries; the limit is %d" % (len(value), limit))
        try:
            return [_validate_fields(record_type, item) for item in value]
        except _FieldError:  # again, each entry named by its position, for the message
            return [_validate_fields(record_type, item, "[%d]." % i) for i, item in enumerate(value)]

    return check


RECORD_FIELDS = {
    "session": {
        "type": _v_enum(("session",)),
        "format": _v_format,
        "id": _v_required_key_id,
        "agent": _v_text(200, single_line=True),
        "external_id": _v_text(1000, single_line=True),
        "cwd": _v_text(4096, single_line=True),  # relative to the repository in exports
        "repo": _v_repo_name,
        "branch": _v_branch,
        "commit": _v_object_id,
        "started_at": _v_timestamp,
        "ended_at": _v_timestamp,
        "summary": _v_text(MAX_SUMMARY_CHARS),
        "author": _v_text(MAX_AUTHOR_CHARS, single_line=True),
        "machine": _v_machine,
    },
    "evidence": {
        "type": _v_enum(("evidence",)),
        "format": _v_format,
        "id": _v_required_key_id,
        "kind": _v_required(_v_enum(EVIDENCE_KINDS, what="kind")),
        "session": _v_required_key_id,
        "repo": _v_required_repo,
        "root_commit": _v_object_id,
        "claim": _v_text(MAX_CLAIM_CHARS, required=True),
        "detail": _v_text(MAX_DETAIL_CHARS),
        "symptom": _v_text(MAX_SYMPTOM_CHARS),
        "confidence": _v_confidence,
        "status": _v_enum(STATUSES, default="active", what="status"),
        "superseded_by": _v_key_id,
        "created_at": _v_timestamp,
        "updated_at": _v_timestamp,
        "anchors": _v_list_of("anchor"),
        "confirmed_at": _v_timestamp,
        "history": _v_list_of("history_event", limit=10000),
    },
    # Not a record of its own: what an evidence record's anchors list holds.
    "anchor": {
        "repo": _v_required_repo,
        "root_commit": _v_object_id,
        "path": _v_path,
        "symbol": _v_text(500, single_line=True),
        "commit": _v_object_id,
        "branch": _v_branch,
        "blob": _v_object_id,
        "dirty": _v_dirty,
        "symbol_hash": _v_hex,
        "symbol_lang": _v_text(40, single_line=True),
    },
    # An evidence record's history: confirmations and repeats, each with a global id.
    "history_event": {
        "id": _v_event_id,
        "event": _v_enum(("confirmed", "seen"), what="history event"),
        "at": _v_required_timestamp,
        "agent": _v_text(MAX_SUMMARY_CHARS),
        "session": _v_key_id,
        "note": _v_text(MAX_SUMMARY_CHARS),
        "commits": _v_commit_map,
        "previous": _v_list_of("previous_anchor"),
    },
    # What an item was stamped with before a history event.
    "previous_anchor": {
        "repo": _v_repo_name,
        "path": _v_path,
        "symbol": _v_text(500, single_line=True),
        "commit": _v_object_id,
        "branch": _v_branch,
        "blob": _v_object_id,
        "symbol_hash": _v_hex,
    },
}
# Topology: repositories by identity (root commit + name, never a path), the relations between them
# and the workspaces they form, so that a teammate's import recreates the product's shape.
RECORD_FIELDS["repository"] = {
    "type": _v_enum(("repository",)),
    "format": _v_format,
    "id": _v_required_id,
    "name": _v_required_repo,
    "root_commit": _v_object_id,
}
RECORD_FIELDS["relation"] = {
    "type": _v_enum(("relation",)),
    "format": _v_format,
    "id": _v_required_id,
    "from": _v_required_repo,
    "from_root": _v_object_id,
    "kind": _v_required(_v_enum(RELATION_KINDS, what="relation kind")),
    "to": _v_required_repo,
    "to_root": _v_object_id,
    "note": _v_text(MAX_CLAIM_CHARS),
    "created_at": _v_timestamp,
}
RECORD_FIELDS["workspace"] = {
    "type": _v_enum(("workspace",)),
    "format": _v_format,
    "id": _v_required_id,
    "name": _v_required_repo,  # workspace names follow the repository name rule
    "repos": _v_list_of("workspace_member", limit=10000),
}
RECORD_FIELDS["workspace_member"] = {"repo": _v_required_repo, "root_commit": _v_object_id}
# What was forgotten: the id and the reason, never the content. Importing one deletes the item.
RECORD_FIELDS["tombstone"] = {
    "type": _v_enum(("tombstone",)),
    "format": _v_format,
    "id": _v_required_key_id,
    "kind": _v_required(_v_enum(("evidence", "session"), what="tombstone kind")),
    "session": _v_required_key_id,
    "reason": _v_text(MAX_CLAIM_CHARS, required=True),
    "forgotten_at": _v_timestamp,
}
# The record types a file may hold (anchors live inside evidence, members inside workspaces).
RECORD_TYPES = ("session", "evidence", "repository", "relation", "workspace", "tombstone")
TOPOLOGY_TYPES = ("repository", "relation", "workspace")


class _FieldError(ValueError):
    pass


_ABSENT = object()


@BUILT_ONCE
def _field_checks(record_type):
    """(field, check, what check gives an absent field, or _ABSENT when it refuses one, the texts
    check has passed unchanged): most fields of most records are absent or null, and need no
    call; many others repeat a value already checked (a commit, a repository, a path)."""
    out = []
    for field, check in RECORD_FIELDS[record_type].items():
        try:
            absent = check(None)
        except ValueError:
            absent = _ABSENT
        out.append((field, check, absent, set()))
    return tuple(out)


# Each check is a pure function of the value, so a text it returned unchanged once passes again
# without the call. Short texts only, a bounded number per field; dropped after each import.
_PASSED_CHARS, _PASSED_MAX = 200, 8192


@BUILT_ONCE
def _field_plan(record_type):
    """(what an absent field of each kind gives, in declared order; {field: (check, passed)} of the
    fields a value needs checking for; the fields that refuse to be absent; those whose absent
    value is a fresh container), for the quick pass of _validate_fields."""
    entries = _field_checks(record_type)
    defaults = {f: None if absent is _ABSENT else absent for f, _, absent, _ in entries}  # declared order
    required = tuple(f for f, _, absent, _ in entries if absent is _ABSENT)
    containers = tuple(
        (f, absent.__class__) for f, _, absent, _ in entries if absent.__class__ in (list, dict)
    )
    return defaults, {f: (check, passed) for f, check, _, passed in entries}, required, containers


def _validate_fields(record_type, record, prefix=""):
    if not isinstance(record, dict):
        raise _FieldError("%s must be an object" % prefix.rstrip("."))
    # The quick pass: the record's own fields over the absent values, in declared order. Should
    # any field fail (or a required one be missing), the full pass below names the first one in
    # declared order, as it always did.
    defaults, checks, required, containers = _field_plan(record_type)
    clean = defaults.copy()
    try:
        for field, value in record.items():
            if value is None:
                continue
            entry = checks.get(field)
            if entry is None:
                continue  # not a declared field: ignored
            if value.__class__ is str and value in entry[1]:
                clean[field] = value
                continue
            out = clean[field] = entry[0](value)
            if out is value and value.__class__ is str and len(value) <= _PASSED_CHARS:
                passed = entry[1]
                if len(passed) >= _PASSED_MAX:
                    passed.clear()
                passed.add(value)
    except ValueError:
        pass
    else:
        if None not in map(record.get, required):
            for field, kind in containers:
                if record.get(field) is None:
                    clean[field] = kind()  # each record its own list
            return clean
    clean = {}
    for field, check, absent, passed in _field_checks(record_type):
        value = record.get(field)
        if value is None and absent is not _ABSENT:
            clean[field] = absent if absent.__class__ not in (list, dict) else absent.__class__()
            continue
        if value.__class__ is str and value in passed:
            clean[field] = value
            continue
        try:
            out = clean[field] = check(value)
        except _FieldError as e:
            raise _FieldError("%s%s%s" % (prefix, field, e)) from None
        except ValueError as e:
            raise _FieldError("%s%s: %s" % (prefix, field, e)) from None
        if out is value and value.__class__ is str and len(value) <= _PASSED_CHARS:
            if len(passed) >= _PASSED_MAX:
                passed.clear()
            passed.add(value)
    return clean


def validate_record(record, where):
    """The record with every declared field checked (and only those), or UsageError naming
    ``where`` (file:line), the field and what is wrong with it."""
    if not isinstance(record, dict) or record.get("type") not in RECORD_TYPES:
        raise UsageError("%s: not a wctx export record" % where)
    try:
        return _validate_fields(record["type"], record)
    except _FieldError as e:
        raise UsageError("%s: %s field %s" % (where, record["type"], e)) from None


def _export_files(paths):
    """[(file, whether named on the command line)] of an import of ``paths``, in order."""
    files = []
    for path in paths:
        if os.path.isdir(path):
            files.extend(
                (os.path.join(path, n), False) for n in sorted(os.listdir(path)) if n.endswith(".jsonl")
            )
        elif os.path.lexists(path):
            files.append((path, True))
        else:
            raise NotFoundError("no such file or directory: %s" % path)
    return files


class _RecordError(UsageError):
    """A valid record the import cannot take beside the others (an item of a session the import
    does not hold): ``record`` says which, for the file and line its message is given."""

    def __init__(self, message, record):
        super().__init__(message)
        self.record = record


def _export_sources(paths):
    """(file, its open file) for each file of an import of ``paths``, in order, each closed after."""
    for path, named in _export_files(paths):
        with _open_export(path, named) as fh:
            yield path, fh


def _record_line(sources, record):
    """ "file:line" of the first line of ``sources`` ([(label, raw lines)], an import's files read
    again for an error's message) that holds ``record`` as validated, or None."""
    needle = record["id"].encode()
    for label, lines in sources:
        for n, raw in enumerate(lines, 1):
            if needle in raw:
                try:
                    text = raw.decode("utf-8-sig" if n == 1 else "utf-8")
                    if validate_record(json.loads(text), label) == record:
                        return "%s:%d" % (label, n)
                except (ValueError, RecursionError, WctxError):
                    continue
    return None


def _open_export(path, named):
    """``path`` opened for reading when it is a regular file, else UsageError. A directory's entries
    (a teammate's checkout of the team's memory) are never followed as symbolic links (to
    /dev/zero, to a file outside it); a FIFO or a device is refused before it is read (it would
    block, or never end). ``named``: given on the command line, where a link is the user's own."""
    import stat

    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | (0 if named else getattr(os, "O_NOFOLLOW", 0))
    try:
        if not named and os.path.islink(path):
            raise UsageError("%s: a symbolic link, not a file; nothing was imported" % path)
        fd = os.open(path, flags)
    except OSError as e:
        raise UsageError("cannot read %s: %s; nothing was imported" % (path, e.strerror)) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UsageError("%s: not a regular file; nothing was imported" % path)
    return os.fdopen(fd, "rb")


def _export_lines(data):
    """An export file's raw lines as reading the file gives them: ended by LF (CRLF keeps its CR,
    which JSON takes as space), never by a lone CR, which JSONL does not end a line with."""
    return data.split(b"\n")


def _parse_export(label, lines):
    """Validated records of one export file (``lines``: its raw lines); errors name label:line."""
    return list(_export_records(label, lines))


def _export_json(label, lines):
    """(line number, parsed value) of each non-blank line of an export file (``lines``: its raw
    lines, read one at a time); a line that is not JSON is refused as label:line."""
    for n, raw in enumerate(lines, 1):
        if raw.strip():
            yield n, _json_line(label, n, raw)


def _json_line(label, n, raw):
    try:
        # an editor's byte order mark, at the start of the file, is no part of the first record
        return json.loads(raw.decode("utf-8-sig" if n == 1 else "utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise UsageError("%s:%d: not valid JSON" % (label, n)) from None
    except RecursionError:  # brackets nested deeper than the parser's stack
        raise UsageError("%s:%d: not valid JSON (nested too deeply)" % (label, n)) from None


def _export_records(label, lines):
    """Validated records of one export file, as they are read; errors name label:line."""
    for n, record in _export_json(label, lines):
        yield validate_record(record, "%s:%d" % (label, n))


# -- Reading an import: two passes over its files, neither holding every record ----------------
# An import may bring a million items (a team's whole memory), which held at once would take
# gigabytes. So the files are read twice, a line at a time: the first pass checks every record
# other than the items and keeps them (sessions, tombstones, topology: what the items are
# imported against, one record per tens of items); the second reads the items, checks them and
# imports them in chunks, in the import's one transaction, which a refused line rolls back. The
# first invalid line in file order is the one named: a refusal in the first pass checks the items
# before it. An import of few items keeps them from the first pass and reads its files once.
_STREAM_AFTER = 10000  # items an import holds from its first pass; beyond, it reads them again
_STREAM_AFTER_BYTES = 8 << 20  # nor more than this size of files (a few long items hold as much)
_NOT_AN_ITEM = ("session", "tombstone") + TOPOLOGY_TYPES  # what the first pass checks and keeps


def _plainly_an_item(raw):
    """Whether a line, if it is a record at all, is an item, seen without parsing it: its one
    "type" (a quote in a text is escaped, so none is inside one) is "evidence", and no \\u escape
    could spell another key. The first pass leaves such a line to the second, which checks it."""
    return b'"type": "evidence"' in raw and raw.count(b'"type"') == 1 and b"\\u" not in raw


def _scan_export(paths):
    """The first pass over an import's files: (its records other than items, in file order; how
    many items; the items when at most _STREAM_AFTER in at most _STREAM_AFTER_BYTES of files, else
    None; each file's stat signature)."""
    try:
        return _scan_export_files(paths)
    except UsageError:
        # The first pass leaves the items unchecked: one before the line refused may be the
        # first invalid line. Checking every record in order names the first (rarely needed).
        for path, fh in _export_sources(paths):
            for _ in _export_records(path, fh):
                pass
        raise


def _scan_export_files(paths):
    others, kept, count, size, seen = [], [], 0, 0, {}
    for path, fh in _export_sources(paths):
        seen[path] = _file_signature(fh)
        size += seen[path][1]
        if size > _STREAM_AFTER_BYTES:
            kept = None
        for n, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            if kept is None and _plainly_an_item(raw):
                count += 1
                continue  # parsed and checked when the second pass reads it
            record = _json_line(path, n, raw)
            if kept is None and record.__class__ is dict and record.get("type") == "evidence":
                count += 1
                continue  # checked when the second pass reads it
            record = validate_record(record, "%s:%d" % (path, n))
            if record["type"] != "evidence":
                others.append(record)
                continue
            count += 1
            kept.append(record)
            if count > _STREAM_AFTER:
                kept = None  # too many to hold: the second pass reads them again
    return others, count, kept, seen


def _reread_items(paths, seen):
    """The second pass: the items of an import's files, read and checked in file order (every
    record the first pass did not check and keep). A file that changed since the first pass is
    refused (the import is then rolled back)."""
    for path, fh in _export_sources(paths):
        if seen.get(path) != _file_signature(fh):
            raise UsageError("%s: changed while it was being imported; nothing was imported" % path)
        for n, record in _export_json(path, fh):
            if record.__class__ is not dict or record.get("type") not in _NOT_AN_ITEM:
                yield validate_record(record, "%s:%d" % (path, n))


def _file_signature(fh):
    st = os.fstat(fh.fileno())
    return st.st_ino, st.st_size, st.st_mtime_ns


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
        anchors.append({k: a.get(k) for k in _ANCHOR_FIELDS})
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


class _GcPaused:
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
    at no time more than a chunk of its items (see _scan_export)."""
    try:
        with _GcPaused():
            others, count, kept, seen = _scan_export(paths)
            items = kept if kept is not None else _reread_items(paths, seen)
            return _import_stream(store, others, items, count)
    except _RecordError as e:
        where = _record_line(_export_sources(paths), e.record)
        raise UsageError("%s: %s" % (where, e) if where else str(e)) from None


def import_evidence_data(store, label, data):
    """Import one export file's bytes (named ``label`` in errors), all or nothing; returns
    (counts, records)."""
    with _GcPaused():
        records = _parse_export(label, _export_lines(data))
        try:
            return _import_records(store, records), records
        except _RecordError as e:
            where = _record_line([(label, _export_lines(data))], e.record)
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
        _INDEXED_TEXTS.clear()


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
    own = _store_machine_id(store)
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


class _BulkCache:
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


def _import_records(store, records):
    """Import validated ``records`` (a list of any types) in one transaction."""
    items = [r for r in records if r["type"] == "evidence"]
    return _import_stream(store, [r for r in records if r["type"] != "evidence"], items, len(items))


def _import_stream(store, others, items, count):
    """Import ``others`` (validated sessions, tombstones and topology) and ``items`` (``count``
    validated evidence records, an iterable read once, in chunks) in one transaction."""
    try:
        with _BulkCache(store, count + len(others)):
            return _import_records_in(store, others, items, count)
    finally:
        _CLEAN_TEXTS.clear()
        _INDEXED_TEXTS.clear()
        _field_checks.cache_clear()
        _field_plan.cache_clear()


def _import_records_in(store, others, items, count):
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
        # local_repo's answer as (id here or None, name here), once per (name, root commit)
        out = here.get((name, root))
        if out is None:
            repo = local_repo(name, root)
            out = here[(name, root)] = (repo.id, repo.name) if repo else (None, name)
        return out

    counts = {"sessions": 0, "evidence": 0, "updated": 0, "unchanged": 0, "duplicates": 0, "forgotten": 0,
              "refused": 0, "refusals": {}}  # fmt: skip
    own = _store_machine_id(store)
    tombstones = [r for r in others if r["type"] == "tombstone"]
    session_map = {}
    scrub = False
    with store.atomic():
        # Forgotten elsewhere: forget it here too, whatever else the import holds about it, when
        # the machine that forgot it may (_may_change); another's tombstone changes nothing.
        now = utc_now()
        for t in tombstones:
            source = t.get("_from")
            if t["kind"] == "session":
                row = store.one("SELECT id AS rid, id, machine FROM sessions WHERE id = ?", (t["id"],))
            else:
                row = store.one(
                    "SELECT e.rid, e.id, s.machine FROM evidence e JOIN sessions s ON s.id = e.session_id "
                    "WHERE e.id = ?",
                    (t["id"],),
                ) or store.one(
                    "SELECT a.evidence_rid AS rid, e.id, s.machine FROM evidence_aliases a JOIN evidence e "
                    "ON e.rid = a.evidence_rid JOIN sessions s ON s.id = e.session_id WHERE a.id = ?",
                    (t["id"],),
                )
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
                 "now", "batch", "next_rid", "deferred", "decided", "symbol_words", "own", "claimed",
                 "held")  # fmt: skip

    def __init__(self, store, count, forgotten, session_map, local_repo, repo_here, counts, now):
        self.store, self.count, self.done = store, count, 0
        self.forgotten, self.session_map, self.counts, self.now = forgotten, session_map, counts, now
        self.local_repo, self.repo_here = local_repo, repo_here
        self.batch = _ImportBatch(store)
        self.next_rid = (store.one("SELECT max(rid) AS m FROM evidence")["m"] or 0) + 1
        self.deferred, self.decided = [], False
        self.symbol_words = {}  # {symbols text: index_text of it}, a few thousand at most
        self.own = None  # this store's machine id (_may_change)
        self.claimed = {}  # {session id: the machine its record names}, the import's sessions only
        self.held = {}  # {session id here: its machine}, of those that were here before the import


_SYMBOL_WORDS_KEPT = 4096


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
    store, batch, counts, local_repo, forgotten = (
        run.store,
        run.batch,
        run.counts,
        run.local_repo,
        run.forgotten,
    )
    batch.flush()  # the chunks before this one, in the store for the queries below
    plan = []
    own, claimed = run.own, run.claimed
    for rec in chunk:
        if _kept_out(forgotten, rec["id"], claimed.get(rec["session"])) or rec["session"] in forgotten:
            plan.append((rec, None, None))  # forgotten: an older copy elsewhere never brings it back
            continue
        sid = run.session_map.get(rec["session"])
        if sid is None:
            raise _RecordError(
                "evidence %s names session %s, which is not in the import" % (rec["id"], rec["session"]), rec
            )
        plan.append((rec, sid, None))
    stored = run.next_rid > 1  # a store with no item yet holds none of these ids, no twin of a claim
    existing = _known_items(store, {r["id"] for r, sid, _ in plan if sid is not None}) if stored else {}
    history_ids = {h["id"] for rec in chunk for h in rec.get("history") or ()}
    known_events = {
        r["id"] for r in _select_in(store, "SELECT id FROM evidence_events WHERE id IN (%s)", history_ids)
    }
    for i, (rec, sid, _) in enumerate(plan):
        if sid is None or rec["id"] in existing:
            continue
        repo = local_repo(rec["repo"], rec.get("root_commit"))
        claim, key, words = _stored_claim(clean_text(rec["claim"], "claim", MAX_CLAIM_CHARS, required=True))
        # the claim's index words now, from the words its key was made of, rather than the
        # words kept until its chunk is written
        indexed = None if words is None else index_text(claim, words)
        plan[i] = (rec, sid, (repo, repo.name if repo else rec["repo"], claim, key, indexed))
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
    symbol_words, repo_here, now = run.symbol_words, run.repo_here, run.now
    if len(symbol_words) > _SYMBOL_WORDS_KEPT:
        symbol_words.clear()
    for rec, sid, prepared in plan:
        if sid is None:
            counts["forgotten"] += 1
            continue
        row = existing.get(rec["id"])
        if row is not None:  # here already, or earlier in this import
            if not _may_change(row["machine"], rec.get("_from"), own):
                if _differs(rec, row):
                    _refuse(counts, "change", row["machine"], rec.get("_from"), own)
                else:
                    counts["unchanged"] += 1
                continue
            if batch.evidence or batch.events or batch.confidence:
                batch.flush()
            changed, moved = _import_update(store, rec, row, local_repo, known_events)
            if moved:
                dups.refresh(row["repo_name"], row["claim_key"], row["rid"])
                existing[rec["id"]] = store.one(_IMPORTED_RID_ROW, (row["rid"],))
            counts["updated" if changed else "unchanged"] += 1
            continue
        if sid in run.held and not _may_change(run.held[sid], rec.get("_from"), own):
            # A new item belongs to the machine it came from, never to the session it names.
            _refuse(counts, "item", run.held[sid], rec.get("_from"), own)
            continue
        repo, repo_name, claim, key, indexed = prepared
        anchor_rows, cited, symbols, paths = _bulk_anchors(rec, repo_here)
        confidence = _check_confidence(rec.get("confidence"))
        status = rec.get("status", "active")
        # Only an active record is one item with an active twin (as the duplicate rule only ever
        # matches active items here): a retracted one stays its own item, on both machines alike.
        dup = dups.find(repo_name, key, cited) if status == "active" else None
        if dup is not None:
            # The same item recorded independently elsewhere: one item, seen by that session too.
            if confidence is not None and (dup["confidence"] is None or confidence > dup["confidence"]):
                dup["confidence"] = confidence
                batch.confidence.append((confidence, dup["rid"]))
            if dup["session_id"] != sid:
                batch.events.append(_event_row(dup["rid"], "seen", sid, "import", None, rec.get("created_at") or now,
                                               event_id="evt-seen-" + rec["id"]))  # fmt: skip
            # Its id there names the twin here: what that machine later does to it (a status
            # change, a confirmation, a forget) reaches this item.
            batch.flush()
            store.db.execute(
                "INSERT OR IGNORE INTO evidence_aliases(id, evidence_rid) VALUES (?, ?)",
                (rec["id"], dup["rid"]),
            )
            twin = store.one(_IMPORTED_RID_ROW, (dup["rid"],))
            if _may_change(twin["machine"], rec.get("_from"), own):
                _, moved = _import_update(store, rec, twin, local_repo, known_events)
                if moved:
                    dups.refresh(repo_name, key, dup["rid"])
            existing[rec["id"]] = store.one(_IMPORTED_RID_ROW, (dup["rid"],))
            counts["duplicates"] += 1
            continue
        rid = run.next_rid
        run.next_rid += 1
        stamp = now  # the import's one moment, for a record without its own times
        detail = clean_text(rec.get("detail"), "detail", MAX_DETAIL_CHARS)
        detail = detail and _stored_noting(detail)
        symptom = clean_text(rec.get("symptom"), "symptom", MAX_SYMPTOM_CHARS)
        symptom = symptom and _stored_noting(symptom)
        batch.evidence.append((rid, rec["id"], sid, repo.id if repo else None, repo_name, rec["kind"], claim, key,
                               detail, confidence, status, _local_id(store, rec.get("superseded_by")),
                               rec.get("created_at") or stamp, rec.get("updated_at") or stamp,
                               rec.get("confirmed_at"), symptom))  # fmt: skip
        batch.anchors += [(rid,) + row for row in anchor_rows]
        batch.events += _history_rows(rid, rec, known_events)
        if indexed is not None:  # split once, for the claim key and the search words
            _INDEXED_TEXTS[claim] = indexed
        if symbols:  # few distinct symbol lists: their index words made once per import
            hit = symbol_words.get(symbols)
            if hit is None:
                hit = symbol_words[symbols] = index_text(symbols)
            _INDEXED_TEXTS[symbols] = hit
        batch.fts.append((rid, claim, symbols, paths, detail or "", symptom or ""))
        existing[rec["id"]] = {"rid": rid, "id": rec["id"], "repo_name": repo_name, "claim_key": key,
                               "updated_at": rec.get("updated_at") or stamp, "status": status,
                               "confirmed_at": rec.get("confirmed_at"),
                               "machine": claimed.get(rec["session"])}  # fmt: skip
        if status == "active":
            dups.add(
                repo_name,
                key,
                {"rid": rid, "id": rec["id"], "session_id": sid, "confidence": confidence},
                cited,
            )
        counts["evidence"] += 1
    batch.flush()
    # The texts this chunk found clean were kept for the writes just done; the next chunk
    # brings its own (a set of every claim of the import would hold them all).
    _CLEAN_TEXTS.clear()


def _import_topology(store, records):
    """Relations and workspace memberships from validated topology records, by identity: between
    repositories registered here they are declared at once; one whose repository is not registered
    yet waits (dormant) and is restored when it is. Nothing is removed: an import only adds."""
    repos = _repos(store)
    db = store.db
    counts = {"relations": 0, "memberships": 0, "waiting": 0}
    for rec in records:
        if rec["type"] == "relation":
            a = _identity_of(repos, rec["from"], rec["from_root"])
            b = _identity_of(repos, rec["to"], rec["to_root"])
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
                r = _identity_of(repos, m["repo"], m["root_commit"])
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
