from __future__ import annotations

import json
import os

from .authors import SESSION_WHO_COLUMNS, hidden_reason, row_recorded_by
from .capture import _restamp
from .constants import MAX_CLAIM_CHARS, MAX_SUMMARY_CHARS, VERDICTS
from .dependencies import DependencyReader, dependency_gits, read_dependencies, stamp_dependencies
from .errors import UsageError
from .freshness import (
    FreshnessChecker,
    _cache_key,
    _cache_rows,
    _load_anchors,
    _plural,
    _with_dependencies,
    _write_freshness_cache,
)
from .git import UnreadableFile, read_repo_file
from .helpers import clean_text, short_sha, utc_now
from .provenance import _repo_provenance, _stamp_anchors
from .records import _repos, _resolve_ids, _resolve_session_id, resolve_repo
from .redaction import stored_text
from .repos import _repo_dict
from .results import _evidence_rows, _result_dict
from .store import _select_in
from .symbols import symbol_hash_of
from .topology import Topology, _relation_label, reach_text

# ----------------------------------------------------------------------------------------------
# Service: verify, show, sessions, status changes, orientation
# ----------------------------------------------------------------------------------------------


def verify(store, ids=None, repo=None, cwd=None, about=None, offset=0, limit=None):
    """Exact freshness verdicts (git, no cache) for the given ids, or every active item in scope
    (``repo`` or the cwd's repository and what relates to it); ``about`` keeps the items about that
    one repository. Items citing no file are also summarised per repository under ``fileless``.

    Without ids, ``offset``/``limit`` take one page of the scope's items (oldest first) and only
    that page is checked (summary and fileless count the page); "total" counts the whole scope."""
    pairs, total = _verify_pairs(store, ids, repo, cwd, about, offset, limit)
    rids = [rid for rid, _ in pairs]
    anchors = _load_anchors(store, rids)
    # Refresh the search cache with what we compute exactly, under keys taken before the check.
    repos = {r.id: r for r in _repos(store)}
    heads = {}
    keyed = _with_dependencies(store, anchors)
    keys = {rid: _cache_key(repos, keyed[rid], heads) for rid in rids}
    checker = FreshnessChecker(store, remember=True)
    computed = checker.check_items(anchors)
    _write_freshness_cache(
        store, _changed_rows(store, _cache_rows(checker, computed, keyed, repos, heads, keys.get))
    )
    items = []
    summary = {v: 0 for v in VERDICTS}
    fileless = {}
    for rid, eid in pairs:
        c = computed[rid]
        summary[c["verdict"]] += 1
        cites_file = any(a["path"] for a in anchors[rid])
        items.append({"id": eid, "verdict": c["verdict"], "reasons": c["reasons"], "anchors": c["anchors"],
                      "cites_file": cites_file})  # fmt: skip
        if c.get("dependencies"):
            items[-1]["dependencies"] = c["dependencies"]
        if not cites_file and anchors[rid]:
            _count_fileless(fileless, anchors[rid][0], eid, c["verdict"], checker.moved)
    out = {
        "items": items,
        "summary": summary,
        "fileless": sorted(fileless.values(), key=lambda g: g["repo"]),
    }
    if total is not None:
        out["total"] = total
    return out


def _verify_pairs(store, ids, repo, cwd, about, offset, limit):
    """([(rid, id)] verify checks, the scope's whole count or None): the given ids (those about
    ``about``), else one page of the active items in scope, oldest first."""
    if ids:
        pairs = _resolve_ids(store, ids)
        if about:
            about_repo = resolve_repo(store, about)
            rows = _evidence_rows(store, [rid for rid, _ in pairs])
            pairs = [(rid, eid) for rid, eid in pairs if rows[rid]["repo_id"] == about_repo.id]
        return pairs, None
    if about:
        about_repo = resolve_repo(store, about)
        scope = [about_repo.id]
        if repo is not None:
            origin = resolve_repo(store, repo, cwd=cwd)
            if about_repo.id not in Topology(store, origin).repo_ids():
                raise UsageError(
                    "%s is not in the scope of %s (no workspace or relation connects them)"
                    % (about_repo.name, origin.name)
                )
    else:
        scope = Topology(store, resolve_repo(store, repo, cwd=cwd)).repo_ids()
    where = "status = 'active' AND repo_id IN (%s)" % ",".join("?" * len(scope))
    total, page = None, ""
    if offset or limit is not None:
        total = store.one("SELECT count(*) FROM evidence WHERE " + where, scope)[0]
        page = " LIMIT %d OFFSET %d" % (-1 if limit is None else int(limit), int(offset))
    rows = store.all("SELECT rid, id FROM evidence WHERE " + where + " ORDER BY rid" + page, scope)
    return [(r["rid"], r["id"]) for r in rows], total


def _count_fileless(fileless, anchor, eid, verdict, moved_by):
    """Count an item that cites no file in its repository's group: how many, their verdicts, and
    how far the repository moved since they were stamped (0 for a current one)."""
    group = fileless.setdefault(anchor["repo_name"], {"repo": anchor["repo_name"], "items": 0, "verdicts": {},
                                                      "moved_min": None, "moved_max": None, "ids": []})  # fmt: skip
    group["items"] += 1
    group["ids"].append(eid)
    group["verdicts"][verdict] = group["verdicts"].get(verdict, 0) + 1
    moved = 0 if verdict == "current" else moved_by.get((anchor["repo_id"], anchor["commit_sha"]))
    if moved is not None:
        group["moved_min"] = moved if group["moved_min"] is None else min(group["moved_min"], moved)
        group["moved_max"] = moved if group["moved_max"] is None else max(group["moved_max"], moved)


def _changed_rows(store, rows):
    """The freshness cache rows that differ from what the cache holds: a verify that finds what
    the last one found writes nothing (each written row passes the redaction boundary)."""
    held = {}
    rids = [r[0] for r in rows]
    for i in range(0, len(rids), 500):
        chunk = rids[i : i + 500]
        for rid, key, verdict, reasons in store.db.execute(
            "SELECT evidence_rid, cache_key, verdict, reasons FROM freshness_cache WHERE evidence_rid IN (%s)"
            % ",".join("?" * len(chunk)),
            chunk,
        ):
            held[rid] = (key, verdict, reasons)
    return [r for r in rows if held.get(r[0]) != (r[1], r[2], r[3])]


def verify_exit_code(res, strict=False):
    """1 when an item is stale or unknown (or, with ``strict``, possibly stale); else 0."""
    failing = ("stale", "unknown", "possibly_stale") if strict else ("stale", "unknown")
    return 1 if any(res["summary"][v] for v in failing) else 0


def fileless_summary(group):
    """One line for a repository's items that cite no file: what moved, said once."""
    n = group["items"]
    low, high = group["moved_min"], group["moved_max"]
    if high is None:
        moved = "its commit could not be compared"
    elif high == 0:
        moved = "%s has not moved since" % group["repo"]
    else:
        span = _plural(high, "commit") if low == high else "%d to %d commits" % (low, high)
        moved = "%s moved %s since" % (group["repo"], span)
    # The ids are named, so that every item verify checked can be confirmed or shown by its id.
    ids = ", ".join(group.get("ids") or ())
    return "%s; %s%s" % (
        moved,
        "this item cites no file" if n == 1 else "%d items cite no file" % n,
        ": " + ids if ids else "",
    )


def get_evidence(store, evidence_id):
    """One item in full: text, session, every anchor's provenance, and a live freshness verdict."""
    ((rid, _),) = _resolve_ids(store, [evidence_id])
    row = _evidence_rows(store, [rid])[rid]
    anchors = _load_anchors(store, [rid])[rid]
    fresh = FreshnessChecker(store).check_items({rid: anchors})[rid]
    item = _result_dict(row, anchors)
    item["updated_at"] = row["updated_at"]
    item["hidden"] = hidden_reason(store, row["id"], row["session_author"])
    session = store.one("SELECT * FROM sessions WHERE id = ?", (row["session_id"],))
    item["session_info"] = _session_dict(session) if session else None
    verdict_by_anchor = {(x["repo"], x["path"], x["symbol"]): x for x in fresh["anchors"]}
    item["anchors"] = [
        {
            "repo": a["repo_name"],
            "root_commit": a["root_commit"],
            "path": a["path"],
            "symbol": a["symbol"],
            "commit": a["commit_sha"],
            "branch": a["branch"],
            "blob": a["blob"],
            "dirty": None if a["dirty"] is None else bool(a["dirty"]),
            "symbol_hash": a["symbol_hash"],
            "verdict": verdict_by_anchor.get((a["repo_name"], a["path"], a["symbol"]), {}).get("verdict"),
        }
        for a in anchors
    ]
    item["freshness"] = {"verdict": fresh["verdict"], "reasons": fresh["reasons"]}
    # What the cited symbols call in related repositories (read at capture or confirm) and what
    # the item named with depends_on, each with its own verdict.
    item["dependencies"] = [
        {"repo": d["repo"], "path": d["path"], "symbol": d["symbol"], "how": d["how"], "from": d["source"],
         "commit": d["commit"], "verdict": d["verdict"]}
        for d in fresh.get("dependencies", ())
    ]  # fmt: skip
    replaced = store.all("SELECT id FROM evidence WHERE superseded_by = ?", (row["id"],))
    item["supersedes"] = [r["id"] for r in replaced]
    item["history"] = item_history(store, rid)
    item["seen_by"] = [h["session"] for h in item["history"] if h["event"] == "seen"]
    return item


def _history_event(r):
    return {
        "id": r["id"],
        "event": r["event"],
        "at": r["at"],
        "agent": r["agent"],
        "session": r["session_id"],
        "note": r["note"],
        "commits": json.loads(r["commits"]) if r["commits"] else {},
        "previous": json.loads(r["previous"]) if r["previous"] else [],
    }


def item_history(store, rid):
    """What happened to an item since capture, oldest first: confirmations (who, when, the
    commits it was re-stamped at and the provenance that replaced) and sessions that saw it again."""
    rows = store.all("SELECT * FROM evidence_events WHERE evidence_rid = ? ORDER BY at, rowid", (rid,))
    return [_history_event(r) for r in rows]


def _load_histories(store, rids=None):
    """{evidence rid: item_history} of every item that has one (of the items ``rids`` only, when
    given), in one query per 500 (for export)."""
    histories = {}
    if rids is None:
        rows = store.all("SELECT * FROM evidence_events ORDER BY evidence_rid, at, rowid")
    else:
        rows = _select_in(
            store,
            "SELECT * FROM evidence_events WHERE evidence_rid IN (%s) ORDER BY evidence_rid, at, rowid",
            rids,
        )
    for r in rows:
        histories.setdefault(r["evidence_rid"], []).append(_history_event(r))
    return histories


def confirm(store, ids, note=None, session_id=None, agent="cli"):
    """Someone re-checked these items against today's code: re-stamp their anchors at each
    repository's current commit, blob and symbol hash (the earlier provenance is kept in the item's
    history), so that they read ``current`` again. All or nothing: an item whose cited file or
    symbol no longer exists is refused, pointing to supersede."""
    note = stored_text(clean_text(note, "note", MAX_SUMMARY_CHARS))
    agent = clean_text(agent, "agent", 200, required=True)
    if session_id:
        session_id = _resolve_session_id(store, session_id)
    pairs = _resolve_ids(store, ids)
    pairs = list(dict((rid, eid) for rid, eid in pairs).items())
    rows = _evidence_rows(store, [rid for rid, _ in pairs])
    anchors = _load_anchors(store, [rid for rid, _ in pairs])
    checker = FreshnessChecker(store)
    before = checker.check_items(anchors)
    repos = {r.id: r for r in _repos(store)}
    gits = {}
    plans = [_confirm_plan(checker, repos, rows[rid], eid, anchors[rid], gits) for rid, eid in pairs]
    warnings, confirmed = [], []
    # What the cited symbols call is read again: the code may call something else now.
    dependency_gits(read_dependencies(DependencyReader(store), plans, warnings), gits)
    stamp_dependencies(plans, gits, _head_blob, warnings)
    now = utc_now()
    with store.atomic():
        for plan in plans:
            rid = plan["rid"]
            stamped = _stamp_anchors(plan["repo"], plan["cited"], gits, _head_blob, warnings)
            commits = _restamp(
                store, rid, stamped, "confirmed", session_id, agent, note, now, plan["dependencies"]
            )
            confirmed.append({"id": plan["eid"], "was": before[rid]["verdict"], "commits": commits})
    return {
        "confirmed": confirmed,
        "warnings": warnings,
        "message": "\n".join(
            "confirmed %s (was %s): re-stamped at %s"
            % (
                c["id"],
                c["was"].replace("_", " "),
                ", ".join("%s %s" % (n, short_sha(sha)) for n, sha in sorted(c["commits"].items())),
            )
            for c in confirmed
        ),
    }


def _head_blob(g, rel):
    hit = g.batch_check(["HEAD:" + rel]).get("HEAD:" + rel) if g.head else None
    return hit[0] if hit and hit[1] == "blob" else None


def _confirm_plan(checker, repos, row, eid, anchors, gits):
    """What confirming one item re-stamps: its repository, the files and symbols it cites and the
    dependencies named at capture, each read now; a clear error (nothing changed) when any of
    them is gone or not on this machine. Opens each repository's provenance in ``gits``."""
    if row["status"] != "active":
        raise UsageError(
            "%s is %s%s; only an active item can be confirmed"
            % (eid, row["status"], " by " + row["superseded_by"] if row["superseded_by"] else "")
        )
    item_repo = repos.get(row["repo_id"]) if row["repo_id"] is not None else None
    own = [a for a in anchors if a["repo_id"] == row["repo_id"]]
    if item_repo is not None and own:
        item_repo = checker.judged_view(own[0])
    if item_repo is None:
        raise UsageError(
            "%s is about %s, which is not registered here; confirm it where it is" % (eid, row["repo_name"])
        )
    cited = [_confirmed_citation(checker, eid, a) for a in anchors if a["path"]]
    explicit = [
        _confirmed_dependency(repos, eid, d)
        for d in checker.dependencies.get(row["rid"], ())
        if d["how"] == "explicit"  # the others are read again from the cited symbols' text
    ]
    for repo in [item_repo] + [c[0] for c in cited] + [e[0] for e in explicit]:
        if repo.id not in gits:
            gits[repo.id] = _repo_provenance(repo)
    return {"rid": row["rid"], "eid": eid, "repo": item_repo, "cited": cited, "explicit": explicit}


def _confirmed_citation(checker, eid, a):
    """(repo, rel, full path, symbol) of a file an item cites, as it is now (followed if renamed)."""
    repo = checker.judged_view(a)
    if repo is None or not os.path.isdir(repo.path):
        raise UsageError(
            "%s cites %s:%s, and repository %s is not on this machine; confirm it where it is"
            % (eid, a["repo_name"], a["path"], a["repo_name"])
        )
    rel = a["path"]
    label = a["path"] + ("#" + a["symbol"] if a["symbol"] else "")
    try:
        data = read_repo_file(repo.path, rel)
        if data is None:
            rel = checker.followed.get((repo.id, a["path"]))
            data = read_repo_file(repo.path, rel) if rel else None
    except UnreadableFile as e:
        raise UsageError(
            "%s cites %s in %s, and %s; nothing to confirm" % (eid, label, repo.name, e)
        ) from None
    if data is None:
        raise UsageError(
            "%s cites %s, which no longer exists in %s; record what is true now and "
            "replace it: wctx supersede %s --by NEW-ID" % (eid, label, repo.name, eid)
        )
    if a["symbol"] and a["symbol_hash"] and symbol_hash_of(data, rel, a["symbol"]) is None:
        raise UsageError(
            "%s cites symbol %s, which is no longer found in %s:%s; record what is true now and "
            "replace it: wctx supersede %s --by NEW-ID" % (eid, a["symbol"], repo.name, rel, eid)
        )
    return (repo, rel, os.path.join(repo.path, *rel.split("/")), a["symbol"])


def _confirmed_dependency(repos, eid, d):
    """(repo, path, full path, symbol) of a dependency named at capture, which must still exist."""
    repo = repos.get(d["repo_id"]) if d["repo_id"] is not None else None
    label = "%s:%s%s" % (d["repo_name"], d["path"], "#" + d["symbol"] if d["symbol"] else "")
    if repo is None or read_repo_file(repo.path, d["path"]) is None:
        raise UsageError(
            "%s depends on %s, which is not on this machine or no longer exists; record what is true "
            "now and replace it: wctx supersede %s --by NEW-ID" % (eid, label, eid)
        )
    return (repo, d["path"], os.path.join(repo.path, *d["path"].split("/")), d["symbol"])


def _session_dict(row):
    return {
        "id": row["id"],
        "agent": row["agent"],
        "external_id": row["external_id"],
        "cwd": row["cwd"],
        "repo": row["repo_name"],
        "branch": row["branch"],
        "commit": row["commit_sha"],
        "started_at": row["started_at"],
        "ended_at": row["ended_at"],
        "summary": row["summary"],
        "author": row["author"],
        "machine": row["machine"],
    }


def list_sessions(store, repo=None, limit=20):
    params = []
    sql = (
        "SELECT s.*, (SELECT count(*) FROM evidence e WHERE e.session_id = s.id) AS evidence_count "
        "FROM sessions s"
    )
    if repo:
        r = resolve_repo(store, repo)
        sql += (
            " WHERE s.repo_id = ? OR s.id IN (SELECT session_id FROM evidence WHERE repo_id = ?)"
            " OR s.id IN (SELECT session_id FROM session_repos WHERE repo_id = ?)"
        )
        params += [r.id, r.id, r.id]
    sql += " ORDER BY coalesce(s.ended_at, s.created_at) DESC LIMIT ?"
    params.append(int(limit))
    return [dict(_session_dict(row), evidence=row["evidence_count"]) for row in store.all(sql, params)]


def get_session(store, session_id, offset=0, limit=None):
    """A session and its evidence (oldest first); ``offset``/``limit`` load one page of it only,
    so that paging through a large session costs the pages, not the session per page. "total"
    counts all of the session's items."""
    sid = _resolve_session_id(store, session_id)
    row = store.one("SELECT * FROM sessions WHERE id = ?", (sid,))
    ev = store.all(
        "SELECT rid FROM evidence WHERE session_id = ? ORDER BY rid LIMIT ? OFFSET ?",
        (sid, -1 if limit is None else int(limit), int(offset)),
    )
    rids = [r["rid"] for r in ev]
    if offset or limit is not None:
        total = store.one("SELECT count(*) FROM evidence WHERE session_id = ?", (sid,))[0]
    else:
        total = len(rids)
    rows = _evidence_rows(store, rids)
    anchors = _load_anchors(store, rids)
    return {
        "session": _session_dict(row),
        "evidence": [_result_dict(rows[r], anchors[r]) for r in rids],
        "total": total,
    }


def _forget_rows(store, rids, sessions, reason, now):
    """Inside the caller's transaction: delete these evidence rows (anchors, history and cache go
    with them) and these sessions with all they hold, leaving a tombstone for each (no content)."""
    rids = list(rids)
    for sid in sessions:
        rids += [r["rid"] for r in store.all("SELECT rid FROM evidence WHERE session_id = ?", (sid,))]
    for rid in dict.fromkeys(rids):
        row = store.one("SELECT id, session_id FROM evidence WHERE rid = ?", (rid,))
        if row is None:
            continue
        # Other machines' ids for it are forgotten with it: their copies go too, and never come back.
        ids = [row["id"]] + [
            a["id"] for a in store.all("SELECT id FROM evidence_aliases WHERE evidence_rid = ?", (rid,))
        ]
        store.db.executemany(
            "INSERT OR REPLACE INTO tombstones(id, kind, session_id, reason, forgotten_at) VALUES (?, 'evidence', ?, ?, ?)",
            [(eid, row["session_id"], reason, now) for eid in ids],
        )
        store.db.execute("DELETE FROM evidence_fts WHERE rowid = ?", (rid,))
        store.db.execute("DELETE FROM evidence WHERE rid = ?", (rid,))
    for sid in sessions:
        store.db.execute(
            "INSERT OR REPLACE INTO tombstones(id, kind, session_id, reason, forgotten_at) VALUES (?, 'session', ?, ?, ?)",
            (sid, sid, reason, now),
        )
        store.db.execute("DELETE FROM sessions WHERE id = ?", (sid,))  # its files, commands, import go too


def _scrub_store(store):
    """Make deleted text leave the store's bytes: rebuild the FTS index (its segments keep the terms
    of deleted rows), rewrite the database (VACUUM, with freed pages zeroed) and empty the WAL.
    Returns a warning when another connection kept the WAL from being emptied, else None."""
    db = store.db
    db.execute("PRAGMA secure_delete = ON")
    with store.atomic():
        for table in ("evidence_fts", "session_fts"):
            db.execute("INSERT INTO %s(%s) VALUES ('rebuild')" % (table, table))
            db.execute("INSERT INTO %s(%s) VALUES ('optimize')" % (table, table))
    db.execute("VACUUM")
    busy, _, _ = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    if busy:
        return (
            "another wctx process has the store open, so its write-ahead log still holds old pages; "
            "run wctx forget again (or any write) once it has exited"
        )
    return None


def _recorded_elsewhere(store, rids):
    """{evidence id: who recorded it} of the items among ``rids`` that another machine recorded.
    Only the machine that recorded an item changes it for others (an import decides so,
    _may_change): a retract, supersede or forget of one applies on this machine only, and the
    command says so at once."""
    rows = _select_in(
        store,
        "SELECT e.id, " + SESSION_WHO_COLUMNS + " FROM evidence e JOIN sessions s ON s.id = e.session_id "
        "WHERE e.rid IN (%s)",
        set(rids),
    )
    return {r["id"]: row_recorded_by(r) for r in rows if r["session_machine"] and not r["session_mine"]}


def _local_only(elsewhere, then):
    """The sentence a change of teammates' items ends with (``then``: what the user can do)."""
    return "; ".join(
        "%s was recorded by %s: this applies on this machine only (only the machine that recorded an "
        "item changes it for others); %s" % (eid, who, then % {"id": eid})
        for eid, who in sorted(elsewhere.items())
    )


def _changed_here_only(store, rids, message):
    """(``message``, who recorded each teammate's item among ``rids``): the message ends with the
    sentence that a retract or supersede of a teammate's item leaves it active for the team."""
    elsewhere = _recorded_elsewhere(store, rids)
    if elsewhere:
        message += ". " + _local_only(
            elsewhere,
            "it stays active for the team; wctx hide %(id)s keeps a teammate's item out of your view",
        )
    return message, elsewhere


def forget(store, ids=(), session=None, reason=None):
    """Delete items (or a whole session with its items and imported activity) for good: their text
    leaves every byte of the store, and a tombstone (the id and the reason, never the content)
    stays, for export to carry to teammates. Not undoable."""
    reason = stored_text(clean_text(reason, "reason", MAX_CLAIM_CHARS, required=True))
    if not ids and not session:
        raise UsageError("nothing to forget: give evidence ids or --session ID")
    pairs = _resolve_ids(store, list(ids)) if ids else []
    sessions = [_resolve_session_id(store, session)] if session else []
    now = utc_now()
    elsewhere = _recorded_elsewhere(store, [rid for rid, _ in pairs])
    with store.atomic():
        count = store.one(
            "SELECT count(*) FROM evidence WHERE session_id IN (%s)" % ",".join("?" * len(sessions)), sessions
        )[0] if sessions else 0  # fmt: skip
        _forget_rows(store, [rid for rid, _ in pairs], sessions, reason, now)
    warning = _scrub_store(store)
    forgotten = [eid for _, eid in pairs]
    what = ", ".join(forgotten)
    if sessions:
        what = (what + "; " if what else "") + "session %s and its %s" % (sessions[0], _plural(count, "item"))
    message = "forgot %s (a tombstone with the reason stays for export)" % what
    if elsewhere:
        message += ". " + _local_only(
            elsewhere, "your next sync asks its author's machine to forget %(id)s, which it then shows them"
        )
    return {
        "forgotten": forgotten,
        "sessions": sessions,
        "reason": reason,
        "warnings": [warning] if warning else [],
        "local_only": elsewhere,
        "message": message,
    }


def retract(store, evidence_id, reason=None):
    ((rid, eid),) = _resolve_ids(store, [evidence_id])
    row = store.one("SELECT status, superseded_by FROM evidence WHERE rid = ?", (rid,))
    if row["status"] == "retracted":
        return {"id": eid, "status": "retracted", "message": "%s was already retracted (unchanged)" % eid}
    with store.atomic():
        # Retracted is the final word on an item: a superseded_by beside it would say two things.
        store.db.execute(
            "UPDATE evidence SET status = 'retracted', superseded_by = NULL, updated_at = ? WHERE rid = ?",
            (utc_now(), rid),
        )
    was = " (it was superseded by %s)" % row["superseded_by"] if row["superseded_by"] else ""
    message, elsewhere = _changed_here_only(
        store, [rid], "retracted %s%s (kept; visible with --all-status)" % (eid, was)
    )
    return {"id": eid, "status": "retracted", "local_only": elsewhere, "message": message}


def supersede(store, old_id, new_id):
    (old_rid, old), (new_rid, new) = _resolve_ids(store, [old_id, new_id])
    if old_rid == new_rid:
        raise UsageError("an item cannot supersede itself")
    # Only an active item can replace another: this also rules out cycles (A by B, then B by A),
    # which would leave every version out of search.
    status = store.one("SELECT status FROM evidence WHERE rid = ?", (new_rid,))["status"]
    if status != "active":
        raise UsageError("%s is %s; supersede with an active item" % (new, status))
    if store.one("SELECT status FROM evidence WHERE rid = ?", (old_rid,))["status"] == "retracted":
        raise UsageError("%s is retracted; a retracted item is not superseded" % old)
    with store.atomic():
        store.db.execute(
            "UPDATE evidence SET status = 'superseded', superseded_by = ?, updated_at = ? WHERE rid = ?",
            (new, utc_now(), old_rid),
        )
    message, elsewhere = _changed_here_only(store, [old_rid], "%s is superseded by %s" % (old, new))
    return {
        "id": old,
        "status": "superseded",
        "superseded_by": new,
        "local_only": elsewhere,
        "message": message,
    }


def related_repositories(store, repo=None, cwd=None):
    origin = resolve_repo(store, repo, cwd=cwd)
    topo = Topology(store, origin)
    relations = []
    for row in store.all(
        "SELECT r.kind, r.note, a.name AS a_name, b.name AS b_name, r.from_repo, r.to_repo FROM relations r "
        "JOIN repos a ON a.id = r.from_repo JOIN repos b ON b.id = r.to_repo "
        "WHERE r.from_repo = ? OR r.to_repo = ? ORDER BY a.name, b.name",
        (origin.id, origin.id),
    ):
        outgoing = row["from_repo"] == origin.id
        relations.append(
            {
                "repo": row["b_name"] if outgoing else row["a_name"],
                "kind": row["kind"],
                "direction": "outgoing" if outgoing else "incoming",
                "label": _relation_label(row["kind"], row["a_name"], row["b_name"], viewer_is_a=outgoing),
                "note": row["note"],
            }
        )
    reachable = [
        {"repo": topo.names[rid], "distance": d, "reason": reach_text(why)}
        for rid, (d, why) in sorted(topo.reach.items(), key=lambda kv: (kv[1][0], topo.names.get(kv[0], "")))
        if rid != origin.id
    ]
    return {
        "repo": origin.name,
        "path": origin.path,
        "workspaces": _repo_dict(store, store.one("SELECT * FROM repos WHERE id = ?", (origin.id,)))[
            "workspaces"
        ],
        "relations": relations,
        "reachable": reachable,
    }


def workspace_overview(store, repo=None, cwd=None, limit=5):
    """Where am I: the caller's repo, its workspaces, related repos, recent sessions, open questions
    and a few key findings nearby."""
    related = related_repositories(store, repo, cwd=cwd)
    origin = resolve_repo(store, related["repo"])
    scope = Topology(store, origin).repo_ids()
    marks = ",".join("?" * len(scope))

    def items(sql, params):
        rids = [r["rid"] for r in store.all(sql, params)]
        rows = _evidence_rows(store, rids)
        anchors = _load_anchors(store, rids)
        return [_result_dict(rows[r], anchors[r]) for r in rids]

    questions = items(
        "SELECT rid FROM evidence WHERE kind = 'question' AND status = 'active' AND repo_id IN (%s) "
        "ORDER BY created_at DESC, rid DESC LIMIT ?" % marks,
        scope + [limit],
    )
    key = items(
        "SELECT rid FROM evidence WHERE kind IN ('finding', 'decision', 'known_issue', 'constraint') "
        "AND status = 'active' AND repo_id IN (%s) ORDER BY (repo_id = ?) DESC, created_at DESC, rid DESC LIMIT ?"
        % marks,
        scope + [origin.id, limit],
    )
    counts = {
        r["repo_name"]: r["n"]
        for r in store.all(
            "SELECT repo_name, count(*) AS n FROM evidence WHERE status = 'active' AND repo_id IN (%s) GROUP BY repo_name"
            % marks,
            scope,
        )
    }
    return {
        "repo": related["repo"],
        "path": related["path"],
        "workspaces": related["workspaces"],
        "relations": related["relations"],
        "reachable": related["reachable"],
        "evidence_counts": counts,
        "recent_sessions": list_sessions(store, repo=origin.name, limit=limit),
        "open_questions": questions,
        "key_findings": key,
    }
