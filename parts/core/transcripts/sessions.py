from __future__ import annotations

import json
import os
import re

from .adapters import (
    COMMAND_TOOLS,
    TRANSCRIPT_ADAPTERS,
    TRANSCRIPT_AGENTS,
    fingerprint_files,
    iter_transcript_files,
    parse_transcript,
    session_transcript_path,
)
from .authors import recorder
from .capture import capture
from .constants import MAX_SUMMARY_CHARS
from .errors import NotFoundError, UsageError, WctxError
from .git import GitError, GitRepo, repo_relative_path
from .helpers import new_id, utc_now
from .items import _session_dict
from .records import _repo_containing, _repos, resolve_repo
from .redaction import stored_cut, stored_key, stored_text

# ----------------------------------------------------------------------------------------------
# Service: session import (what a transcript says a session did, per repository)
# ----------------------------------------------------------------------------------------------

# session_repos.commit_source: where a repository's commit for a session comes from.
COMMIT_FROM_SESSION = "session"  # recorded by the agent at session start (Codex session_meta)
COMMIT_FROM_IMPORT = "head_at_import"  # the repo's HEAD when wctx imported the transcript
COMMIT_UNKNOWN = "unknown"  # the repo is not on this machine
# Prefix of session_imports.head_hash while an import is not finished (see _store_transcript).
IMPORT_PENDING = "pending:"
OUTSIDE = ""  # session_files.repo_name for paths outside every repo


def _transcript_fingerprint(path):
    """(total size, hash of the first 64 KiB) of a transcript and its subagent files: equal
    fingerprints mean nothing new to import; the same head with a larger size means it grew."""
    import hashlib

    size = 0
    for p in fingerprint_files(path):
        try:
            size += os.stat(p).st_size
        except OSError:
            pass
    with open(path, "rb") as fh:
        head = hashlib.sha256(fh.read(65536)).hexdigest()[:32]
    return size, head


def _repos_key(repos):
    import hashlib

    return hashlib.sha256("\n".join(sorted(r.path for r in repos)).encode("utf-8")).hexdigest()[:16]


class _RepoMapper:
    """Maps absolute paths from a transcript to (repo, repo-relative path); caches per directory."""

    def __init__(self, repos):
        self.repos = repos
        self.by_dir = {}

    def place(self, path):
        folder, name = os.path.split(path)
        if folder not in self.by_dir:
            real = os.path.realpath(folder)
            repo = _repo_containing(self.repos, real) if self.repos else None
            self.by_dir[folder] = (repo, real)
        repo, real = self.by_dir[folder]
        if repo is None:
            return None, path
        rel = os.path.relpath(os.path.join(real, name), repo.path).replace(os.sep, "/")
        return repo, rel


def _existing_evidence_ids(store, result):
    """Evidence ids a record_evidence tool result mentions that this store already holds: the
    MCP server recorded them live, so importing the call again would duplicate them."""
    text = result if isinstance(result, str) else json.dumps(result, default=str)
    ids = set(re.findall(r"\bev-[0-9a-f]{6,}\b", text or ""))
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    return [r["id"] for r in store.all("SELECT id FROM evidence WHERE id IN (%s)" % marks, sorted(ids))]


def import_transcript(store, path, agent="auto", force=False, cwd_hint=None):
    """Import one transcript: the session, what it read, edited and ran in which repository, with
    per-repository provenance; explicit record_evidence calls become evidence. Idempotent.

    Returns {"session", "agent", "external_id", "transcript", "status": "imported"|"extended"|
    "reimported"|"unchanged"|"empty" (no activity: nothing stored), "files", "repos", "commands", "errors", "subagents", "evidence", "bad_lines",
    "warnings"}.
    """
    if not os.path.isfile(path):
        raise NotFoundError("no transcript at %s" % os.path.abspath(path))
    path = session_transcript_path(path)
    repos = _repos(store)
    size, head = _transcript_fingerprint(path)
    key = _repos_key(repos)
    before = store.one(
        "SELECT i.*, s.agent, s.external_id FROM session_imports i JOIN sessions s ON s.id = i.session_id "
        "WHERE i.transcript = ? ORDER BY i.imported_at DESC LIMIT 1",
        (path,),
    )
    if before is not None and agent not in (None, "auto") and agent != before["agent"]:
        # An unchanged file is not re-read, but a wrong --agent is still a wrong --agent.
        if agent not in TRANSCRIPT_ADAPTERS:
            raise UsageError("unknown agent %r (one of: %s)" % (agent, ", ".join(TRANSCRIPT_AGENTS)))
        raise UsageError("%s looks like a %s transcript, not %s" % (path, before["agent"], agent))
    if (
        before is not None
        and not force
        and before["size"] == size
        and before["head_hash"] == head
        and before["repos_key"] == key
    ):
        return {
            "session": before["session_id"],
            "agent": before["agent"],
            "external_id": before["external_id"],
            "transcript": path,
            "status": "unchanged",
            "bad_lines": before["bad_lines"],
            "warnings": [],
        }
    rec = parse_transcript(path, agent, cwd_hint=cwd_hint)
    if not transcript_has_activity(rec):
        return {
            "session": None,
            "agent": rec.agent,
            "external_id": rec.external_id,
            "transcript": path,
            "status": "empty",
            "bad_lines": rec.bad_lines,
            "warnings": [],
        }
    return _store_transcript(store, rec, repos, size, head, key)


def transcript_has_activity(rec):
    """Whether a transcript says a session did something: called a tool (a read, an edit, a
    command, a record_evidence call) or ran a subagent. Conversation alone, Claude Code's files of
    summary lines from other sessions, and a Codex rollout of meta records, messages and token
    counts are empty: importing them would list a session that did nothing."""
    return bool(rec.tool_calls or rec.subagents)


def _adopt_legacy_session(store, rec):
    """Give a session stored before ids were keyed (under the cleaned form of an id that the
    boundary changes) its keyed id, when this same transcript made it, so that a re-import
    finds it instead of adding a second session."""
    keyed = rec.external_id
    legacy = stored_text(rec.raw_external_id) if rec.raw_external_id else None
    if not legacy or legacy == keyed:
        return
    with store.atomic():
        if store.one("SELECT 1 FROM sessions WHERE agent = ? AND external_id = ?", (rec.agent, keyed)):
            return
        row = store.one(
            "SELECT s.id FROM sessions s JOIN session_imports i ON i.session_id = s.id "
            "WHERE s.agent = ? AND s.external_id = ? AND i.transcript = ?",
            (rec.agent, legacy, rec.path),
        )
        if row is not None:
            store.db.execute("UPDATE sessions SET external_id = ? WHERE id = ?", (keyed, row["id"]))


def _transcript_external_id(store, rec):
    """The id a transcript's session is stored under. Two transcripts that carry one session id
    (non-UUID file names, a copied file) are two sessions: while the first one's file still exists,
    the second gets the id plus a suffix naming its file, so neither import replaces the other's
    files and commands. A transcript that moved (old file gone) keeps its session."""
    rec.raw_external_id = rec.external_id
    eid = rec.external_id = stored_key(rec.external_id)
    if not eid:
        return eid
    row = store.one(
        "SELECT i.transcript FROM sessions s JOIN session_imports i ON i.session_id = s.id "
        "WHERE s.agent = ? AND s.external_id = ?",
        (rec.agent, eid),
    )
    if row is None or row["transcript"] == rec.path or not os.path.isfile(row["transcript"]):
        return eid
    import hashlib

    return "%s@%s" % (eid, hashlib.sha1(rec.path.encode("utf-8", "surrogateescape")).hexdigest()[:10])


class _Placed:
    """A transcript's activity placed in repositories: what the store step writes."""

    __slots__ = ("files", "per_repo", "commands", "cwd_repo", "branches")

    def __init__(self, rec, mapper):
        self.files = {}  # (repo_name, path) -> [repo, reads, edits]; outside: OUTSIDE, absolute path
        self.per_repo = {}  # repo id -> {"repo", "reads", "edits", "commands"}
        for abs_path, (reads, edits) in rec.files.items():
            repo, rel = mapper.place(abs_path)
            slot = self.files.setdefault((repo.name if repo else OUTSIDE, rel), [repo, 0, 0])
            slot[1] += reads
            slot[2] += edits
            if repo is not None:
                entry = self.repo_entry(repo)
                entry["reads"] += reads
                entry["edits"] += edits
        self.commands = []
        for n, c in enumerate(rec.commands):
            repo = mapper.place(os.path.join(c["cwd"], "_"))[0] if c.get("cwd") else None
            if repo is not None:
                self.repo_entry(repo)["commands"] += 1
            at = repo.name if repo else None
            # c["command"] is stored_cut already (add_command)
            self.commands.append(
                (n, c.get("tool"), c["command"], c.get("cwd"), at, c.get("at"), c.get("subagent"))
            )
        self.cwd_repo = mapper.place(os.path.join(rec.cwd, "_"))[0] if rec.cwd else None
        if self.cwd_repo is not None:
            self.repo_entry(self.cwd_repo)
        # The branch an agent records belongs to the repository of the cwd it recorded it in.
        self.branches = {}
        for where, branch in rec.branch_by_cwd.items():
            repo = mapper.place(os.path.join(where, "_"))[0]
            if repo is not None:
                self.branches[repo.id] = branch

    def repo_entry(self, repo):
        return self.per_repo.setdefault(repo.id, {"repo": repo, "reads": 0, "edits": 0, "commands": 0})

    def stored_files(self):
        """Rows of session_files. Two paths that differ only in a secret are one path once
        stored: counted together."""
        stored = {}
        for (name, p), (repo, r, e) in sorted(self.files.items()):
            at = (name, stored_text(p))
            _, r0, e0 = stored.get(at, (repo, 0, 0))
            stored[at] = (repo, r0 + r, e0 + e)
        return [(repo.id if repo else None, name, p, r, e) for (name, p), (repo, r, e) in stored.items()]


def _session_repo_rows(store, rec, placed, warnings):
    """Per repository the session touched: (repo, is_cwd, commit, commit source, branch, branch
    source, counts), sorted by name, and the rows a previous import kept ({repo name: row}). Git
    runs once per repository, before the write transaction."""
    session_row = store.one(
        "SELECT * FROM sessions WHERE agent = ? AND external_id = ?", (rec.agent, rec.external_id)
    )
    kept = {}
    if session_row is not None:
        kept = {
            r["repo_name"]: r
            for r in store.all("SELECT * FROM session_repos WHERE session_id = ?", (session_row["id"],))
        }
    rows = []
    for entry in sorted(placed.per_repo.values(), key=lambda e: e["repo"].name):
        repo = entry["repo"]
        is_cwd = placed.cwd_repo is not None and repo.id == placed.cwd_repo.id
        commit, source, branch, branch_source = _repo_commit(
            repo, rec.commit if is_cwd else None, kept.get(repo.name), placed.branches.get(repo.id), warnings
        )
        rows.append((repo, int(is_cwd), commit, source, branch, branch_source, entry))
    return rows, kept


def _repo_commit(repo, session_commit, old, branch, warnings):
    """(commit, its source, branch, its source) of one repository for a session. Facts: the
    commit the agent recorded at session start (its cwd's repository only), the first import's,
    the repository's HEAD now. Rule: the agent's record, else the first import's (an import does
    not move it), else HEAD now when the repository is here, else unknown."""
    branch_source = "transcript" if branch else None
    if session_commit:
        return session_commit, COMMIT_FROM_SESSION, branch, branch_source
    if old is not None and old["commit_source"] != COMMIT_UNKNOWN:
        if not branch:
            branch, branch_source = old["branch"], old["branch_source"]
        return old["commit_sha"], old["commit_source"], branch, branch_source
    commit, source = None, COMMIT_UNKNOWN
    if os.path.isdir(repo.path):
        try:
            g = GitRepo(repo.path)
            commit, source = g.head, COMMIT_FROM_IMPORT
            if not branch:
                branch, branch_source = g.branch(), COMMIT_FROM_IMPORT
        except GitError as e:
            warnings.append("%s: %s" % (repo.name, e))
    return commit, source, branch, branch_source


def _store_transcript(store, rec, repos, size, head, key):
    rec.external_id = _transcript_external_id(store, rec)
    # Stored and looked up by its stored_key: two ids that differ only in what the boundary
    # strips or redacts stay two sessions.
    _adopt_legacy_session(store, rec)
    warnings = []
    placed = _Placed(rec, _RepoMapper(repos))
    now = utc_now()
    repo_rows, kept = _session_repo_rows(store, rec, placed, warnings)
    summary = stored_cut("; ".join(rec.summaries), MAX_SUMMARY_CHARS) or None
    author, machine = recorder(store)  # a transcript imported here is this person's session
    with store.atomic():
        sid, status = _write_session(store, rec, placed.cwd_repo, summary, (author, machine), now)
        for table in ("session_files", "session_commands", "session_repos", "session_imports"):
            store.db.execute("DELETE FROM %s WHERE session_id = ?" % table, (sid,))
        _write_activity(store, sid, placed, repo_rows, kept, now)
        _write_import(store, sid, rec, (size, head, key), now)
    evidence = _import_evidence_calls(store, sid, rec, warnings, head)
    files = placed.files
    return {
        "session": sid,
        "agent": rec.agent,
        "external_id": rec.external_id,
        "transcript": rec.path,
        "status": status,
        "cwd": rec.cwd,
        "repo": placed.cwd_repo.name if placed.cwd_repo else None,
        "files": {
            "read": sum(1 for v in files.values() if v[1]),
            "edited": sum(1 for v in files.values() if v[2]),
            "outside": sum(1 for k in files if k[0] == OUTSIDE),
        },
        "repos": [r[0].name for r in repo_rows],
        "tool_calls": sum(rec.tool_calls.values()),
        "commands": len(placed.commands),
        "errors": len(rec.errors),
        "subagents": len(rec.subagents),
        "evidence": evidence,
        "lines": rec.lines,
        "bad_lines": rec.bad_lines,
        "warnings": warnings,
    }


def _write_session(store, rec, cwd_repo, summary, recorded_by, now):
    """Insert the session, or update the one an earlier import stored; returns (id, status)."""
    session_branch = rec.branch_by_cwd.get(rec.cwd) or rec.branch
    row = store.one(
        "SELECT * FROM sessions WHERE agent = ? AND external_id = ?", (rec.agent, rec.external_id)
    )
    if row is None:
        sid = new_id("ses")
        store.db.execute(
            "INSERT INTO sessions(id, agent, external_id, cwd, repo_id, repo_name, branch, commit_sha, started_at, "
            "ended_at, summary, created_at, title, agent_version, author, machine) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                sid,
                rec.agent,
                rec.external_id,
                rec.cwd,
                cwd_repo.id if cwd_repo else None,
                cwd_repo.name if cwd_repo else None,
                session_branch,
                rec.commit,
                rec.started_at,
                rec.ended_at,
                summary,
                now,
                rec.title or None,
                rec.version,
            )
            + tuple(recorded_by),
        )
        return sid, "imported"
    sid = row["id"]
    prev = store.one("SELECT lines FROM session_imports WHERE session_id = ?", (sid,))
    status = "imported" if prev is None else ("extended" if rec.lines > prev["lines"] else "reimported")
    started = [x for x in (row["started_at"], rec.started_at) if x]
    ended = [x for x in (row["ended_at"], rec.ended_at) if x]
    # A transcript that records the commit at session start is the authority on it: without one
    # there, the session has none. Otherwise the commit stored before stays.
    commit = rec.commit or (None if rec.records_commit else row["commit_sha"])
    store.db.execute(
        "UPDATE sessions SET cwd = coalesce(?, cwd), repo_id = coalesce(?, repo_id), "
        "repo_name = coalesce(?, repo_name), branch = coalesce(?, branch), commit_sha = ?, started_at = ?, "
        "ended_at = ?, summary = coalesce(summary, ?), title = coalesce(?, title), "
        "agent_version = coalesce(?, agent_version) WHERE id = ?",
        (
            rec.cwd,
            cwd_repo.id if cwd_repo else None,
            cwd_repo.name if cwd_repo else None,
            session_branch,
            commit,
            min(started) if started else None,
            max(ended) if ended else None,
            summary,
            rec.title or None,
            rec.version,
            sid,
        ),
    )
    return sid, status


def _write_activity(store, sid, placed, repo_rows, kept, now):
    """The session's files, commands and repositories with their provenance."""
    store.db.executemany(
        "INSERT INTO session_files(session_id, repo_id, repo_name, path, reads, edits) VALUES (?, ?, ?, ?, ?, ?)",
        [(sid,) + f for f in placed.stored_files()],
    )
    store.db.executemany(
        "INSERT INTO session_commands(session_id, seq, tool, command, cwd, repo_name, at, subagent) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(sid,) + c for c in placed.commands],
    )
    store.db.executemany(
        "INSERT INTO session_repos(session_id, repo_id, repo_name, root_commit, is_cwd, commit_sha, commit_source, "
        "branch, branch_source, reads, edits, commands, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (sid, repo.id, repo.name, repo.root_commit, is_cwd, commit, source, branch, bsource)
            + (
                e["reads"],
                e["edits"],
                e["commands"],
                kept[repo.name]["recorded_at"] if repo.name in kept else now,
            )
            for repo, is_cwd, commit, source, branch, bsource, e in repo_rows
        ],
    )


def _write_import(store, sid, rec, fingerprint, now):
    """What the import read: the transcript, its fingerprint (size, head, repos key) and counts."""
    size, head, key = fingerprint
    store.db.execute(
        "INSERT INTO session_imports(session_id, transcript, size, head_hash, repos_key, lines, bad_lines, "
        "redacted_values, compactions, cwds, tool_calls, errors, subagents, summaries, parent_external_id, "
        "imported_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            sid,
            rec.path,
            size,
            # Not yet the fingerprint while record_evidence calls remain to be captured (each in
            # its own transaction): a kill before they are all in makes the next import redo them
            # (the duplicate rule keeps those already in) instead of "unchanged".
            IMPORT_PENDING + head if rec.evidence_calls else head,
            key,
            rec.lines,
            rec.bad_lines,
            rec.redacted_values,
            rec.compactions,
            json.dumps(rec.cwds),
            json.dumps(rec.tool_calls, sort_keys=True),
            json.dumps(rec.errors),  # each stored_cut already (_error_excerpt)
            json.dumps(rec.subagents),
            json.dumps(rec.summaries),  # redacted value by value at the store's boundary
            rec.parent_external_id,
            now,
        ),
    )


def _import_evidence_calls(store, sid, rec, warnings, head):
    """record_evidence calls to wctx's own MCP server are explicit records: import them into this
    session unless the call failed or the server already stored them (its result names the ids).
    When all are in, the import's fingerprint (``head``) is written: the import is complete."""
    out, live_ids = [], []
    ended = store.one("SELECT ended_at FROM sessions WHERE id = ?", (sid,))["ended_at"]
    for call in rec.evidence_calls:
        if call.get("ok") is False:
            continue
        live = _existing_evidence_ids(store, call.get("result"))
        if live:
            out.extend({"id": i, "duplicate": True} for i in live)
            live_ids.extend(i for i in live if i not in live_ids)
            continue
        args = call.get("arguments") or {}
        items = (
            args.get("items")
            if isinstance(args.get("items"), list)
            else [
                {
                    k: v
                    for k, v in args.items()
                    if k in ("kind", "claim", "detail", "symptom", "repo", "files", "confidence")
                }
            ]
        )
        try:
            result = capture(
                store,
                items,
                summary=args.get("summary"),
                session_id=sid,
                cwd=call.get("cwd") or rec.cwd,
                agent=rec.agent,
                # A call that did not fail was accepted once: the code may have moved on since.
                allow_missing_symbol=True,
            )
        except WctxError as e:
            warnings.append("record_evidence call %s not imported: %s" % (call.get("call_id") or "?", e))
            continue
        out.extend(result["evidence"])
        warnings.extend(result["warnings"])
    if rec.evidence_calls:
        with store.atomic():
            # capture() stamps the session's end with now; the transcript's span is the truth.
            store.db.execute(
                "UPDATE sessions SET ended_at = ? WHERE id = ? AND ? IS NOT NULL", (ended, sid, ended)
            )
            store.db.execute(
                "UPDATE session_imports SET live_evidence = ?, head_hash = ? WHERE session_id = ?",
                (json.dumps(live_ids), head, sid),
            )
    return out


def sessions_touching(store, repo, path, cwd=None, limit=20):
    """Sessions whose imported transcript read or edited ``path`` of ``repo`` ("session X edited
    src/upload.ts in upload-sdk"), most recent first."""
    cwd = cwd or os.getcwd()
    r = resolve_repo(store, repo, cwd=cwd)
    passed_over = []
    rel, _ = repo_relative_path(r.path, path, cwd=cwd, passed_over=passed_over)
    warnings = [
        "--file %s: read %s:%s; %s:%s exists too: name it so to mean that one"
        % (path, r.name, rel, r.name, other)
        for other in passed_over
    ]
    rows = store.all(
        "SELECT f.reads, f.edits, s.* FROM session_files f JOIN sessions s ON s.id = f.session_id "
        "WHERE f.repo_id = ? AND f.path = ? ORDER BY coalesce(s.ended_at, s.created_at) DESC LIMIT ?",
        (r.id, rel, int(limit)),
    )
    return {
        "repo": r.name,
        "path": rel,
        "sessions": [dict(_session_dict(row), reads=row["reads"], edits=row["edits"]) for row in rows],
        "warnings": warnings,
    }


class ImportInterrupted(KeyboardInterrupt):
    """Ctrl-C during import_transcripts. Each transcript is imported in its own transaction, so
    what came before stays imported and the one under way left nothing: ``results`` and
    ``failed`` say how far it got, of ``total`` files."""

    def __init__(self, results, failed, total):
        super().__init__()
        self.results, self.failed, self.total = results, failed, total


def import_transcripts(store, paths, agent="auto", force=False, progress=None):
    """Import transcript files and directories of them. A file that cannot be imported is
    reported in "failed" and the others go on. ``progress(done, total, path)`` is called per file.

    Returns {"results": [import_transcript() dicts], "failed": [{"transcript", "error"}]}.
    """
    files = []
    for p in paths:
        p = os.path.abspath(os.path.expanduser(p))
        if not os.path.exists(p):
            raise NotFoundError("no such file or directory: %s" % p)
        files.extend(iter_transcript_files(p))
    results, failed, seen = [], [], set()
    for n, path in enumerate(files, 1):
        if progress:
            progress(n, len(files), path)
        try:
            target = session_transcript_path(path)
            if target in seen:
                continue  # a subagent file of a session already imported in this run
            seen.add(target)
            results.append(import_transcript(store, target, agent=agent, force=force))
        except KeyboardInterrupt:
            raise ImportInterrupted(results, failed, len(files)) from None
        except WctxError as e:
            if len(files) == 1 and len(paths) == 1 and os.path.isfile(paths[0]):
                raise
            failed.append({"transcript": path, "error": str(e)})
        except Exception as e:  # noqa: BLE001 - one file's surprise must not stop a directory import
            if len(files) == 1 and len(paths) == 1 and os.path.isfile(paths[0]):
                raise
            failed.append({"transcript": path, "error": "%s: %s" % (type(e).__name__, e)})
    return {"results": results, "failed": failed}


def _live_evidence(store, ids):
    if not ids:
        return []
    rows = store.all(
        "SELECT id, kind, claim, repo_name, session_id FROM evidence WHERE id IN (%s)"
        % ",".join("?" * len(ids)),
        ids,
    )
    return [
        {
            "id": r["id"],
            "kind": r["kind"],
            "claim": r["claim"],
            "repo": r["repo_name"],
            "session": r["session_id"],
        }
        for r in sorted(rows, key=lambda r: ids.index(r["id"]))
    ]


def session_activity(store, session_id):
    """What imported transcripts say session ``session_id`` did, or None when none was imported:
    repositories with provenance, files with read/edit counts, commands, tool calls, errors,
    subagents."""
    row = store.one("SELECT * FROM session_imports WHERE session_id = ?", (session_id,))
    if row is None:
        return None
    session = store.one("SELECT title, agent_version FROM sessions WHERE id = ?", (session_id,))
    repos = [
        {
            "repo": r["repo_name"],
            "root_commit": r["root_commit"],
            "ran_here": bool(r["is_cwd"]),
            "commit": r["commit_sha"],
            "commit_source": r["commit_source"],
            "branch": r["branch"],
            "branch_source": r["branch_source"],
            "reads": r["reads"],
            "edits": r["edits"],
            "commands": r["commands"],
        }
        for r in store.all(
            "SELECT * FROM session_repos WHERE session_id = ? ORDER BY is_cwd DESC, edits DESC, repo_name",
            (session_id,),
        )
    ]
    files = [
        {"repo": f["repo_name"] or None, "path": f["path"], "reads": f["reads"], "edits": f["edits"]}
        for f in store.all(
            "SELECT * FROM session_files WHERE session_id = ? ORDER BY repo_name = '', repo_name, edits DESC, path",
            (session_id,),
        )
    ]
    commands = [
        {
            "command": c["command"],
            "tool": c["tool"],
            "cwd": c["cwd"],
            "repo": c["repo_name"],
            "at": c["at"],
            "subagent": c["subagent"],
        }
        for c in store.all("SELECT * FROM session_commands WHERE session_id = ? ORDER BY seq", (session_id,))
    ]
    tool_calls = json.loads(row["tool_calls"])
    # A command call whose command the transcript holds as a sanitiser's placeholder (or empty) is
    # counted as a call but stored as no command: say how many, not "commands (0)".
    command_calls = sum(tool_calls.get(t, 0) for t in COMMAND_TOOLS)
    return {
        "transcript": row["transcript"],
        "imported_at": row["imported_at"],
        "agent_version": session["agent_version"] if session else None,
        "title": session["title"] if session else None,
        "lines": row["lines"],
        "unparsable_lines": row["bad_lines"],
        "redacted_values": row["redacted_values"],
        "compactions": row["compactions"],
        "cwds": json.loads(row["cwds"]),
        "summaries": json.loads(row["summaries"]),
        "tool_calls": tool_calls,
        "repos": repos,
        "files": files,
        "commands": commands,
        "commands_withheld": max(0, command_calls - len(commands)),
        "errors": json.loads(row["errors"]),
        "subagents": json.loads(row["subagents"]),
        "parent_external_id": row["parent_external_id"],
        "live_evidence": _live_evidence(store, json.loads(row["live_evidence"] or "[]")),
    }
