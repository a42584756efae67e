from __future__ import annotations

import json
import os
import re

from .authors import store_machine_id
from .items import _load_histories, _session_dict
from .records import _repos, resolve_repo
from .redaction import stored_text
from .shared_records import ANCHOR_FIELDS, EXPORT_FORMAT
from .store import _select_in

# ----------------------------------------------------------------------------------------------
# Export: this machine's evidence as shared records, made safe to leave it
# ----------------------------------------------------------------------------------------------
#
# What leaves this machine is decided here: shareable_record redacts every free-text field again
# and strips this machine's paths (LocalPaths); export_evidence writes one file per session and
# rewrites a file only when its records changed.

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
            anchors[a[0]].append(dict(zip(ANCHOR_FIELDS, a[1:])))
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
    merged = _shared_file_records(old_text)
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


def _shared_file_records(old_text):
    """{(type, id): record} of the sessions, items and tombstones a shared file already holds."""
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
    return merged


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


def export_text(records):
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
                path = os.path.join(out_dir, "topology-%s.jsonl" % store_machine_id(store))
                text = export_text(topology)
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
        stream.write(export_text(topology))
    return counts


def _export_session(out_dir, stream, sid, records, local, counts):
    """export_evidence's output for one session's records: to ``stream``, or its file in
    ``out_dir`` (merged with what the file already holds, left alone when it says the same)."""
    if out_dir is None:
        stream.write(export_text(shareable_record(r, local) for r in records))
        return
    path = os.path.join(out_dir, sid + ".jsonl")
    old = _read_shared_file(path)
    ours = _merge_export(None, [shareable_record(r, local) for r in records])
    text = export_text(ours)
    if old is not None and old != text:
        # The file holds something else (an older state, a teammate's lines): merge per id.
        # A file that already says exactly what the store says is left alone unparsed.
        text = export_text(_merge_export(old, ours))
    if old != text:
        _write_shared_file(path, text)
        counts["files"] += 1
