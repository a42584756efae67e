from __future__ import annotations

import json
import os
import re
import time

from .authors import recorded_by, store_machine_id
from .constants import REPO_NAME_RE, _lazy_pattern
from .errors import UsageError, WctxError
from .exporting import (
    LocalPaths,
    export_records,
    export_text,
    shareable_record,
    tombstone_records,
    topology_records,
)
from .git import (
    GIT_NETWORK_SECONDS,
    GIT_SECONDS,
    WCTX_REFS,
    GitError,
    GitWriter,
    blob_id,
    is_object_id,
    run_git,
)
from .head import __version__
from .helpers import clean_text, short_sha
from .importing import BulkCache, GcPaused, import_records
from .items import _scrub_store
from .shared_records import EXPORT_FORMAT, parse_export
from .store import _select_in

# ----------------------------------------------------------------------------------------------
# Sync: team memory through a shared git repository, with no server of our own
# ----------------------------------------------------------------------------------------------
#
# ``wctx sync`` keeps a private bare repository under $WCTX_HOME/sync holding one branch of the
# team's memory repository. Each machine writes only below ``machines/<its id>/``: one file per
# session it recorded (``sessions/<session id>.jsonl``), ``events.jsonl`` for what it changed in
# other machines' items (status changes, confirmations, tombstones) and ``topology.jsonl`` (its
# repositories by identity, relations, workspaces). No two
# machines ever write the same file, so a push rejected because another machine pushed first is
# rebuilt on the new tip and retried: there is never anything to merge. Nothing is checked out:
# files are read with ``cat-file`` and commits written with ``fast-import``, so no attribute,
# filter, hook or checkout applies to the team's content on this machine. Every file read from the
# remote is untrusted and goes through import_evidence's validation; a file that fails is reported
# with its path and line and skipped whole.

SYNC_BRANCH = "wctx-memory"
SYNC_PUSH_TRIES = 12


def _sync_backoff(attempt):
    """Seconds to wait before try ``attempt`` (2 or more) after a refused push: a random share of
    a window that doubles from 0.2 s up to 4 s. Syncs refused together (a team syncing in the
    same minute) spread out instead of fetching and pushing again in step, each time one of them
    wins; the twelve tries wait 30 s at most in all, about half that on average."""
    import random

    return random.uniform(0, min(4.0, 0.1 * 2 ** (attempt - 1)))


_SYNC_FETCHED, _SYNC_OURS = WCTX_REFS  # the remote tip as last fetched; the commit we built to push
_SYNC_FILE = _lazy_pattern(
    r"^machines/([0-9a-f]{16})/(sessions/(?:ses-[0-9a-f]{10}|[\w.:-]{1,80})\.jsonl|events\.jsonl|topology\.jsonl)$"
)
_SYNC_BRANCH_NAME = _lazy_pattern(
    r"^(?!.*\.\.)(?!.*//)(?!.*@\{)[A-Za-z0-9][A-Za-z0-9._/-]{0,99}(?<![./])(?<!\.lock)$"
)


class SyncReport:
    """What one ``wctx sync`` did: counts, the files it skipped and why, the commit it pushed."""

    __slots__ = (
        "remote",
        "branch",
        "imported",
        "exported",
        "skipped",
        "pushed",
        "tries",
        "noop",
        "from_whom",
        "workspaces",
        "elsewhere",
        "refused",
    )

    def __init__(self, remote, branch):
        self.remote = remote
        self.branch = branch
        self.imported = {"files": 0, "sessions": 0, "evidence": 0, "updated": 0}
        self.exported = {"files": 0, "removed": 0}
        self.skipped = []  # "path:line: reason"
        self.pushed = None  # short sha of the commit pushed, or None
        self.tries = 0
        self.noop = False
        self.from_whom = {}  # who recorded the items new here: recorded_by text -> how many
        self.workspaces = []  # the workspaces whose branches this sync fetched and wrote
        self.elsewhere = []  # workspaces on the remote this machine is not in: not fetched
        self.refused = {}  # what a teammate's files asked that was not theirs to do: reason -> how many

    def as_dict(self):
        return {name: getattr(self, name) for name in self.__slots__}

    def branches(self, wanted, listed):
        """The workspaces this sync fetches and writes (``wanted``), and those it leaves alone."""
        self.workspaces = [ws for ws in wanted if ws]
        self.elsewhere = sorted(ws for ws in listed if ws and ws not in wanted)


def _sync_get(store, key):
    row = store.one("SELECT value FROM sync_state WHERE key = ?", (key,))
    return row["value"] if row else None


def _sync_set(store, key, value):
    with store.atomic():
        if value is None:
            store.db.execute("DELETE FROM sync_state WHERE key = ?", (key,))
        else:
            store.db.execute(
                "INSERT INTO sync_state(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )


def check_sync_remote(remote):
    """A remote git can reach (URL, scp-like ``host:path`` or a local path), never an option or a
    transport that runs a program (``ext::``). Local paths are made absolute."""
    remote = clean_text(remote, "remote", 2000, required=True)
    if remote.startswith("-") or any(c in remote for c in "\n\r\t"):
        raise UsageError("remote %r is not a repository URL or path" % remote)
    transport = remote.split("::", 1)[0] if "::" in remote else None
    if transport is not None and "/" not in transport:
        raise UsageError("remote %r: transport helpers (%s::) are not allowed" % (remote, transport))
    local = os.path.expanduser(remote)
    if "://" in remote and not remote.startswith("file://"):
        return remote
    if remote.startswith("file://"):
        local = remote[len("file://") :]
    elif re.match(r"^[\w.@-]+:", remote) and not os.path.exists(local):
        return remote  # scp-like user@host:path
    return os.path.abspath(local)


def check_sync_branch(branch):
    branch = clean_text(branch, "branch", 100, required=True)
    if not _SYNC_BRANCH_NAME.match(branch):
        raise UsageError("branch %r is not a plain branch name" % branch)
    return branch


def _sync_dir(store):
    return os.path.join(store.home, "sync", "memory.git")


def _sync_git(store, args, input_bytes=None, ok_codes=(0,), network=False, revs=(), paths=None):
    # Our private repository's config is ours alone; for the network we run the user's own ssh
    # (GIT_SSH_COMMAND, else their global core.sshCommand, else ssh), never a repository's.
    extra = ["-c", "protocol.ext.allow=never", "-c", "core.bare=true"]
    if network:
        extra += ["-c", "core.sshCommand=" + _user_ssh_command(store)]
    return run_git(
        _sync_dir(store),
        list(args),
        input_bytes=input_bytes,
        ok_codes=ok_codes,
        extra_options=extra,
        revs=revs,
        paths=paths,
        seconds=GIT_NETWORK_SECONDS if network else GIT_SECONDS,
        network=network,
    )


def _user_ssh_command(store):
    code, out = run_git(_sync_dir(store), ["config", "--global", "--get", "core.sshCommand"], ok_codes=(0, 1))
    value = out.decode("utf-8", "replace").strip() if code == 0 else ""
    return value or "ssh"


def _sync_init(store):
    path = _sync_dir(store)
    if not os.path.isfile(os.path.join(path, "HEAD")):
        os.makedirs(path, exist_ok=True)
        run_git(path, ["init", "--quiet", "--bare"])
    return store_machine_id(store)


def workspace_branch(branch, workspace):
    """The team branch (``workspace`` empty) or the branch of one workspace beside it: git can
    fetch one branch without the others, so each workspace's memory is a branch of its own."""
    return "%s-ws/%s" % (branch, workspace) if workspace else branch


def _fetched_ref(workspace):
    return _SYNC_FETCHED + ("-ws/" + workspace if workspace else "")


def _sync_list(store, remote, branch):
    """{workspace ('' for the team's branch): tip} of the branches the remote holds, through one
    ``ls-remote``: names and commit ids only, nothing downloaded."""
    prefix = "refs/heads/%s-ws/" % branch
    try:
        _, out = _sync_git(
            store,
            ["ls-remote", "--refs", "--end-of-options", remote, "refs/heads/" + branch, prefix + "*"],
            network=True,
        )
    except GitError as e:
        raise WctxError("sync: cannot fetch from %s: %s" % (remote, str(e).split(": ", 2)[-1])) from None
    tips = {}
    for line in out.decode("utf-8", "replace").splitlines():
        sha, _, ref = line.partition("\t")
        if not is_object_id(sha):
            continue
        if ref == "refs/heads/" + branch:
            tips[""] = sha
        elif ref.startswith(prefix) and REPO_NAME_RE.match(ref[len(prefix) :]):
            tips[ref[len(prefix) :]] = sha
    return tips


def _sync_local_tips(store):
    """{workspace: commit id} of the branches as last fetched here."""
    _, out = _sync_git(store, ["for-each-ref", "--format=%(objectname) %(refname)", _SYNC_FETCHED])
    _, more = _sync_git(store, ["for-each-ref", "--format=%(objectname) %(refname)", _SYNC_FETCHED + "-ws/"])
    tips = {}
    for line in (out + more).decode("utf-8", "replace").splitlines():
        sha, _, ref = line.partition(" ")
        if ref == _SYNC_FETCHED:
            tips[""] = sha
        elif ref.startswith(_SYNC_FETCHED + "-ws/"):
            tips[ref[len(_SYNC_FETCHED + "-ws/") :]] = sha
    return tips


def _sync_fetch(store, remote, branch, listed, workspaces):
    """Fetch, in one ``git fetch``, the branches of ``workspaces`` ('' for the team's) that the
    remote lists and this machine does not hold at that tip yet; returns {workspace: tip} of each
    of them the remote holds. A branch that points at anything but a commit is one line naming
    its repair."""
    have = _sync_local_tips(store)
    specs = [
        "+refs/heads/%s:%s" % (workspace_branch(branch, ws), _fetched_ref(ws))
        for ws in workspaces
        if listed.get(ws) and have.get(ws) != listed[ws]
    ]
    if specs:
        try:
            _sync_git(
                store, ["fetch", "--quiet", "--no-tags", "--end-of-options", remote, *specs], network=True
            )
        except GitError as e:
            raise WctxError("sync: cannot fetch from %s: %s" % (remote, str(e).split(": ", 2)[-1])) from None
        have = _sync_local_tips(store)
    tips = {ws: have[ws] for ws in workspaces if listed.get(ws) and ws in have}
    _, out = _sync_git(
        store, ["cat-file", "--batch-check"], input_bytes="".join(t + "\n" for t in tips.values()).encode()
    )
    kinds = dict(line.split()[:2] for line in out.decode("ascii", "replace").splitlines() if line.strip())
    for ws, tip in sorted(tips.items()):
        if kinds.get(tip) != "commit":  # the branch holds no commit: nothing can be built on it
            name = workspace_branch(branch, ws)
            raise WctxError(
                "sync: the branch %s of %s points at a %s, not a commit, so nothing was imported or pushed; "
                "repair it there (push its last good commit to it with --force, or delete it: "
                "git push %s :refs/heads/%s, and the next sync starts it again)"
                % (name, remote, kinds.get(tip) or "damaged object", remote, name)
            )
    return tips


def _sync_tree(store, tip, under=None):
    """({path: blob id}, {path: blob id}) of the memory files in ``tip`` (those ``under`` one
    directory only, when given; other files in the branch are ignored): plain files, then names
    on anything else (a symbolic link, whose blob is the link's target: no machine wrote it as
    memory)."""
    if tip is None:
        return {}, {}
    _, out = _sync_git(
        store, ["ls-tree", "-r", "-z", "--full-tree"], revs=[tip], paths=[under] if under else None
    )
    files, links = {}, {}
    for entry in out.split(b"\0"):
        meta, _, path = entry.partition(b"\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == b"blob":
            _sync_entry(files, links, parts[0], parts[2], path)
    return files, links


def _sync_entry(files, links, mode, blob, path):
    """File one branch entry (git's mode, blob id and path, as bytes) as _sync_tree returns it."""
    name = path.decode("utf-8", "replace")
    if not _SYNC_FILE.match(name):
        return
    if mode in (b"100644", b"100755"):
        files[name] = blob.decode("ascii")
    elif mode != b"160000":  # a blob on another mode: a symbolic link
        links[name] = blob.decode("ascii")


def _sync_changed(store, since, tip, unread):
    """_sync_tree's answer for just what a sync must look at in ``tip`` when the last sync left
    the branch at ``since``: the memory files added or changed between the two (``git diff-tree``,
    which reads only the trees that differ, so it costs what changed, not what the branch holds),
    and those of ``unread`` ({path: [kind, blob id]}: what the last sync could not import, tried
    again) that ``tip`` still holds as they were. None when ``since`` is not known here (a first
    sync, another remote, or its commit gone): then every file is looked at."""
    if since is None or tip is None:
        return None
    files, links = {}, {}
    if since != tip:
        try:
            _, out = _sync_git(store, ["diff-tree", "-r", "-z", "--no-renames"], revs=[since, tip])
        except GitError:
            return None
        fields = out.split(b"\0")
        touched = set()
        for meta, path in zip(fields[0::2], fields[1::2]):
            parts = meta.lstrip(b":").split()
            if len(parts) != 5:
                continue
            touched.add(path.decode("utf-8", "replace"))
            if parts[3].strip(b"0"):  # not deleted
                _sync_entry(files, links, parts[1], parts[3], path)
    else:
        touched = set()
    for path, (kind, blob) in unread.items():
        if path not in touched:
            (links if kind == "link" else files)[path] = blob
    return files, links


def _sync_blob_sizes(store, blobs):
    """{blob id: size in bytes} through one ``cat-file --batch-check``, reading no content."""
    blobs = list(dict.fromkeys(blobs))
    if not blobs:
        return {}
    _, out = _sync_git(
        store, ["cat-file", "--batch-check"], input_bytes="".join(b + "\n" for b in blobs).encode()
    )
    sizes = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == b"blob":
            sizes[parts[0].decode("ascii")] = int(parts[2])
    return sizes


def _sync_read_blobs(store, blobs):
    """{blob id: bytes} through one ``cat-file --batch``."""
    blobs = list(dict.fromkeys(blobs))
    if not blobs:
        return {}
    _, out = _sync_git(store, ["cat-file", "--batch"], input_bytes="".join(b + "\n" for b in blobs).encode())
    result, pos = {}, 0
    for blob in blobs:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) == 3 and header[1] == b"blob":
            size = int(header[2])
            result[blob] = out[pos : pos + size]
            pos += size + 1
    return result


def _sync_version(record):
    """What makes one state of an item differ from another (kept in sync_seen.updated_at): its
    timestamp alone cannot tell, since a retract can land within the second of the capture."""
    return _sync_version_of(
        record.get("updated_at"),
        record.get("status"),
        record.get("superseded_by"),
        record.get("confirmed_at"),
        len(record.get("history") or ()),
    )


def _sync_version_of(updated_at, status, superseded_by, confirmed_at, events):
    """_sync_version from an item's row and its count of history events."""
    return "%s|%s|%s|%s|%d" % (
        updated_at or "",
        status or "active",
        superseded_by or "",
        confirmed_at or "",
        events,
    )


def _sync_import(store, machine, workspace, files, report, tip):
    """Import the other machines' files among ``files`` ({path: blob id} of the branch at ``tip``:
    all of them, or those _sync_changed names) that changed since we last read them: sessions
    first (the events of one machine may refer to another's sessions), each file all or nothing.

    The import is a run of short transactions, not one: a teammate's whole memory in one would hold
    the store's write lock for as long as it takes, and a capture, a session-end hook or the MCP
    server waiting to write meanwhile would give up ("database is locked") once the store's busy
    timeout ran out. Each batch of files (about _SYNC_BATCH_BYTES; a larger file alone) is
    parsed and checked outside any transaction, then imported together with what sync remembers of
    it (blob ids read, sessions that are another machine's, versions seen) in one transaction: a
    sync killed at any point leaves whole batches imported and remembered, and the next sync
    imports the rest, nothing twice."""
    seen = _sync_files_read(
        store, workspace, [p for p in files if not p.startswith("machines/%s/" % machine)]
    )
    todo = sorted(
        (p for p, b in files.items() if seen.get(p) != b and not p.startswith("machines/%s/" % machine)),
        key=lambda p: (p.endswith("events.jsonl"), p),
    )
    # Blobs are read a batch at a time, never all at once: what a sync holds is one batch's files
    # and their records, whatever the team's memory weighs. A file larger than any a machine
    # writes is skipped unread.
    sizes = _sync_blob_sizes(store, [files[p] for p in todo])
    for path in [p for p in todo if sizes.get(files[p], 0) > _SYNC_FILE_MAX_BYTES]:
        report.skipped.append(
            "%s: %d bytes, more than the %d a memory file may hold; not read"
            % (path, sizes[files[path]], _SYNC_FILE_MAX_BYTES)
        )
        todo.remove(path)
    # One page cache for all the batches, sized to all they bring (about 400 bytes a line): each
    # batch's pages (and the indexes it updates) are still there for the next one.
    with BulkCache(store, sum(sizes.get(files[p], 0) for p in todo) // 400):
        _sync_import_batches(store, workspace, files, todo, sizes, report, tip)
    if store.scrub_due:  # something was forgotten: its text leaves the store's bytes, once
        store.scrub_due = False
        _scrub_store(store)


def _sync_files_read(store, workspace, paths):
    """{path: blob id} of each of ``paths`` that sync_files says was read from ``workspace``'s branch."""
    seen = {}
    for i in range(0, len(paths), 500):
        chunk = paths[i : i + 500]
        for path, blob in store.db.execute(
            "SELECT path, blob FROM sync_files WHERE workspace = ? AND path IN (%s)"
            % ",".join("?" * len(chunk)),
            [workspace, *chunk],
        ):
            seen[path] = blob
    return seen


def _sync_import_batches(store, workspace, files, todo, sizes, report, tip):
    forgotten = None
    for batch in _sync_batches(todo, files, sizes):
        data = _sync_read_blobs(store, [files[p] for p in batch])
        checked = []
        for path in batch:
            try:
                records = parse_export(path, _blob_lines(data.pop(files[path], b"")))
                if forgotten is None:
                    forgotten = {r["id"] for r in store.all("SELECT id FROM tombstones")}
                _sync_check_sessions(path, records, forgotten)
            except WctxError as e:
                report.skipped.append(str(e))
                continue
            checked.append((path, records))
        held = _sync_present(store, tip, files, _sync_copies(checked))
        parsed = [(path, _sync_owned(path, records, held)) for path, records in checked]
        # Should a batch be refused, its files are imported one by one, so that only the file at
        # fault is skipped.
        groups = [parsed] if parsed else []
        while groups:
            group = groups.pop(0)
            try:
                counts = _sync_import_group(store, workspace, files, group)
            except WctxError as e:
                if len(group) > 1:
                    groups[:0] = [[f] for f in group]
                else:
                    report.skipped.append(str(e) if group[0][0] in str(e) else "%s: %s" % (group[0][0], e))
                continue
            report.imported["files"] += len(group)
            for key in ("sessions", "evidence", "updated"):
                report.imported[key] += counts.get(key, 0)
            for who, n in counts.get("from_whom", {}).items():
                report.from_whom[who] = report.from_whom.get(who, 0) + n
            for why, n in counts.get("refusals", {}).items():
                report.refused[why] = report.refused.get(why, 0) + n


_SYNC_BATCH_BYTES = 1 << 20  # a teammate's files imported per transaction: about 2,000 lines
_SYNC_FILE_MAX_BYTES = 64 << 20  # a memory file larger than this is skipped unread


def _sync_batches(todo, files, sizes):
    """``todo`` in order, cut into runs of session and topology files of about
    _SYNC_BATCH_BYTES each (one bulk write for many small files); each machine's events file
    alone, after them."""
    batch, held = [], 0
    for path in todo:
        size = sizes.get(files[path], 0)
        if batch and (held + size > _SYNC_BATCH_BYTES or path.endswith("events.jsonl")):
            yield batch
            batch, held = [], 0
        batch.append(path)
        held += size
    if batch:
        yield batch


def _blob_lines(data):
    """A file's lines one at a time, as ``export_lines`` cuts them (at LF only), without a list
    of them all: a file of nothing but newlines costs its bytes, not a string per line."""
    start = 0
    while True:
        end = data.find(b"\n", start)
        if end < 0:
            yield data[start:]
            return
        yield data[start:end]
        start = end + 1


def _sync_import_group(store, workspace, files, group):
    """Import ``group`` (parsed files) and remember it, in one transaction; returns the counts."""
    # Another machine's session files bring its sessions: each one this store does not hold yet
    # is that machine's (never exported as ours). One it already holds is its own, shared back,
    # or another machine's already, remembered so by the batch that first brought it.
    brought = {
        r["id"] for path, records in group if "/sessions/" in path for r in records if r["type"] == "session"
    }
    owners = _sync_session_owners(group)
    items = {r["id"]: r["session"] for _, records in group for r in records if r["type"] == "evidence"}
    with store.atomic():
        held = {r["id"] for r in _select_in(store, "SELECT id FROM sessions WHERE id IN (%s)", brought)}
        known = {r["id"] for r in _select_in(store, "SELECT id FROM evidence WHERE id IN (%s)", set(items))}
        counts = import_records(store, [r for _, records in group for r in records])
        foreign = [(i,) for i in sorted(brought - held)]
        versions = [
            (r["id"], _sync_version(r)) for _, records in group for r in records if r["type"] == "evidence"
        ]
        store.db.executemany(
            "INSERT INTO sync_files(workspace, path, blob) VALUES (?, ?, ?) "
            "ON CONFLICT(workspace, path) DO UPDATE SET blob = excluded.blob",
            [(workspace, path, files[path]) for path, _ in group],
        )
        store.db.executemany("INSERT OR IGNORE INTO sync_foreign(session_id) VALUES (?)", foreign)
        # A session's own machine has the last word on who recorded it: another machine that
        # shared it back (or claimed it first) never decides that for good. A session already
        # known as one machine's never becomes another's (whose items it could then take).
        store.db.executemany(
            "UPDATE sessions SET author = ?, machine = ? WHERE id = ? AND (author IS NOT ? OR machine IS NOT ?) "
            "AND (machine IS NULL OR machine = ?) AND id IN (SELECT session_id FROM sync_foreign)",
            [(a, m, sid, a, m, m) for sid, (a, m) in owners.items()],
        )
        counts["from_whom"] = _sync_from_whom(store, [sid for eid, sid in items.items() if eid not in known])
        store.db.executemany(
            "INSERT INTO sync_seen(id, updated_at) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET "
            "updated_at = excluded.updated_at",
            versions,
        )
    return counts


def _sync_session_owners(group):
    """{session id: (author, machine)} for the sessions a group's files bring from the machine
    that recorded them (a session file under machines/<id>/ naming that id, or no machine: the
    directory is the one word on it that another machine cannot write). Records with no machine
    take their directory's, before they are imported, and every record is marked with the
    directory it came from."""
    owners = {}
    for path, records in group:
        m = _SYNC_FILE.match(path)
        if m is None:
            continue
        machine = m.group(1)
        for r in records:
            r["_from"] = machine  # which machine's directory a record came from (_may_change)
        if "/sessions/" not in path:
            continue
        for r in records:
            if r["type"] == "session":
                if not r.get("machine"):
                    r["machine"] = machine
                if r["machine"] == machine:
                    owners[r["id"]] = (r.get("author"), machine)
    return owners


def _sync_copies(checked):
    """The paths where the session files of other machines would be, for the sessions that the
    files of ``checked`` ([(path, records)]) hold on behalf of another machine."""
    paths = set()
    for path, records in checked:
        m = _SYNC_FILE.match(path)
        if m is None or "/sessions/" not in path:
            continue
        for r in records:
            if r["type"] == "session" and r.get("machine") not in (None, m.group(1)):
                paths.add("machines/%s/sessions/%s.jsonl" % (r["machine"], r["id"]))
    return paths


def _sync_present(store, tip, files, paths):
    """Which of ``paths`` the branch at ``tip`` holds as a memory file: ``files`` answers for
    those it lists, git (one ``cat-file --batch-check``) for the others, since ``files`` may be
    only what changed."""
    held = {p for p in paths if p in files}
    ask = sorted(p for p in paths - held if _SYNC_FILE.match(p))
    if ask and tip:
        _, out = _sync_git(
            store,
            ["cat-file", "--batch-check"],
            input_bytes="".join("%s:%s\n" % (tip, p) for p in ask).encode(),
        )
        for path, line in zip(ask, out.decode("utf-8", "replace").splitlines()):
            if line.split()[1:2] == ["blob"]:
                held.add(path)
    return held


def _sync_owned(path, records, held):
    """``records`` of one machine's session file without the sessions (and their items) that
    another machine recorded and shares in its own file on the branch (``held``: the paths of
    those files the branch holds, _sync_present): those are read from their own machine's file,
    never from a copy another machine wrote."""
    m = _SYNC_FILE.match(path)
    if m is None or "/sessions/" not in path:
        return records
    copies = {
        r["id"]
        for r in records
        if r["type"] == "session"
        and r.get("machine") not in (None, m.group(1))
        and "machines/%s/sessions/%s.jsonl" % (r["machine"], r["id"]) in held
    }
    if not copies:
        return records
    return [r for r in records if r["id"] not in copies and r.get("session") not in copies]


def _sync_from_whom(store, sessions):
    """{who recorded them: how many} for the items new here of these sessions (one per item)."""
    counted = {}
    rows = {
        r["id"]: r
        for r in _select_in(store, "SELECT id, author, machine FROM sessions WHERE id IN (%s)", set(sessions))
    }
    for sid in sessions:
        r = rows.get(sid)
        who = (
            recorded_by(r["author"], r["machine"], False) if r is not None else recorded_by(None, None, False)
        )
        counted[who] = counted.get(who, 0) + 1
    return counted


def _sync_check_sessions(path, records, forgotten):
    """A file's items belong to sessions the file itself holds (as import_evidence of that file
    alone requires), checked before files are imported together."""
    held = {r["id"] for r in records if r["type"] == "session"}
    for r in records:
        if r["type"] == "evidence" and r["session"] not in held:
            if r["id"] in forgotten or r["session"] in forgotten:
                continue
            if any(t["type"] == "tombstone" and t["id"] in (r["id"], r["session"]) for t in records):
                continue
            raise UsageError(
                "%s: evidence %s names session %s, which is not in the file" % (path, r["id"], r["session"])
            )


def sync_routes(store):
    """{repository name: [workspace, ...]}: where this machine shares an item about each of its
    repositories that is in a workspace, one branch per workspace (an item about a repository in
    two workspaces goes to both). An item about any other repository goes to the team's branch.
    A workspace whose name git cannot take as a branch's (``a..b``, ``x.lock``) has none: its
    items stay on the team's branch."""
    routes = {}
    for r in store.all(
        "SELECT r.name AS repo, w.name AS workspace FROM workspace_repos m JOIN repos r ON r.id = m.repo_id "
        "JOIN workspaces w ON w.id = m.workspace_id ORDER BY w.name"
    ):
        if _SYNC_BRANCH_NAME.match(workspace_branch(SYNC_BRANCH, r["workspace"])):
            routes.setdefault(r["repo"], []).append(r["workspace"])
    return routes


def sync_workspaces(store, routes=None):
    """The workspaces whose branches this machine fetches and writes: each workspace that holds
    one of its repositories (a workspace a teammate made arrives with the team's topology and
    holds a repository here as soon as one of its members is registered here)."""
    routes = sync_routes(store) if routes is None else routes
    return sorted({ws for names in routes.values() for ws in names})


class _SyncSince:
    """What changed since the last sync, as the store recorded it (m021): ``mark`` is this sync's
    row in sync_changes, and the sessions named before it are the ones written since the last
    sync that pushed; ``everything`` is set when what shapes every file moved (another version of
    wctx, this machine's paths, a repository's identity, where a repository's items go: the
    context) or no sync of this store has recorded its context yet. ``events`` are the teammates'
    sessions whose items this machine had changed when its events files were last built: their
    changes are in those files until the teammate's own file catches up."""

    __slots__ = ("mark", "context", "everything", "events")

    def __init__(self, store, local, routes):
        self.mark = store.db.execute("INSERT INTO sync_changes(session_id) VALUES (NULL)").lastrowid
        self.context = _sync_context(store, local, routes)
        self.everything = self.context != _sync_get(store, "context")
        self.events = set(json.loads(_sync_get(store, "events") or "[]"))

    def sessions(self, store, foreign):
        """The sessions (of this machine's own, or with ``foreign`` the teammates') named since
        the last sync; None for this machine's own when every one counts (``everything``). The
        teammates' are always those named: m021 named every session a store held before it."""
        if self.everything and not foreign:
            return None
        return {
            r[0]
            for r in store.db.execute(
                "SELECT DISTINCT session_id FROM sync_changes WHERE seq < ? AND session_id IS NOT NULL "
                "AND %s (SELECT 1 FROM sync_foreign f WHERE f.session_id = sync_changes.session_id)"
                % ("EXISTS" if foreign else "NOT EXISTS"),
                (self.mark,),
            )
        }


def _sync_context(store, local, routes):
    """A digest of what shapes every file this machine exports: this version of wctx and its
    export format, this machine's paths, its repositories' identities, and the branch each
    repository's items go to. Part of each session's digest; a change builds every file again."""
    import hashlib

    rows = store.db.execute("SELECT id, name, root_commit FROM repos ORDER BY id").fetchall()
    context = repr(
        (__version__, EXPORT_FORMAT, local.prefixes, sorted(routes.items()), [tuple(r) for r in rows])
    )
    return hashlib.blake2b(context.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _sync_payload(store, machine, trees, routes, since, local, blobs):
    """What this machine's share of the team's branches must be, built from the store: returns
    ({workspace: {path: blob id}} of each file built (its bytes written by ``blobs``, _SyncBlobs), {workspace: {paths of its tree kept as they
    are}}, {(workspace, session id): (digest, blob id)} of every session file of ours, the
    teammates' sessions whose items changed here). ``trees`` holds each branch's {path: blob id}
    ('' the team's), ``routes`` where each repository's items go (sync_routes), ``since`` what
    changed since the last sync (_SyncSince). A session's file is built again only when its
    session was written since (and its digest moved), or a branch no longer holds the file we
    pushed; the result is byte for byte what building every file would give. Nothing here reads
    the whole store unless ``since.everything``."""
    base = "machines/%s/" % machine
    digests, build, kept, exported = _sync_plan(store, since, trees, base)
    changed_foreign = _sync_foreign_changed(store, since)
    out = _SyncFiles(trees, blobs, local)
    events = _sync_build_sessions(store, out, routes, base, (build, changed_foreign), digests, exported)
    events.setdefault("", []).extend(record for _, record in tombstone_records(store))
    for ws, records in events.items():
        if records:
            out.add(ws, base + "events.jsonl", out.encode(records))
    topology = topology_records(store)
    if topology:
        out.add("", base + "topology.jsonl", out.encode(topology))
    return out.files, kept, exported, changed_foreign


def _sync_plan(store, since, trees, base):
    """(digest of each session of ours, the sessions whose files are built again, {workspace:
    {paths kept as they are}}, {(workspace, session id): (digest, blob id)} of the files kept)."""
    marks = {}
    for r in store.all("SELECT * FROM sync_exported"):
        marks.setdefault(r["session_id"], {})[r["workspace"]] = (r["digest"], r["blob"])

    def held(sid):  # every branch still holds the file of this session we pushed last
        path = base + "sessions/%s.jsonl" % sid
        return all(trees.get(ws, {}).get(path) == b for ws, (_, b) in marks[sid].items())

    written = since.sessions(store, foreign=False)
    if written is not None:
        written |= {sid for sid in marks if not held(sid)}
    digests = _session_digests(store, since.context, written)
    kept, exported, build = {}, {}, set()
    for sid in set(digests) if written is None else written:
        digest, mine = digests.get(sid), marks.get(sid)
        if digest is None:  # no item left: its files go
            continue
        if mine and all(d == digest for d, _ in mine.values()) and held(sid):
            continue
        build.add(sid)
    for sid, mine in marks.items():  # the files that stay as they are
        gone = sid not in digests and (written is None or sid in written)  # no item of it left
        if sid in build or gone:
            continue
        for ws, mark in mine.items():
            kept.setdefault(ws, set()).add(base + "sessions/%s.jsonl" % sid)
            exported[ws, sid] = mark
    return digests, build, kept, exported


class _SyncFiles:
    """The files a sync builds: {workspace: {path: blob id}}, each file's bytes written as a blob
    (by ``blobs``, _SyncBlobs) unless the branch already holds them."""

    __slots__ = ("trees", "blobs", "local", "files")

    def __init__(self, trees, blobs, local):
        self.trees, self.blobs, self.local, self.files = trees, blobs, local, {}

    def encode(self, records):
        return export_text(shareable_record(r, self.local) for r in records).encode("utf-8")

    def add(self, ws, path, data):
        sha = blob_id(data)
        if self.trees.get(ws, {}).get(path) != sha:
            self.blobs.write(sha, data)
        self.files.setdefault(ws, {})[path] = sha
        return sha


def _sync_build_sessions(store, out, routes, base, wanted, digests, exported):
    """Build the session files of ``wanted`` (the sessions to build again; teammates' sessions
    whose items changed here) and return {workspace: [records]} of the events to tell.

    Records come a session at a time (export_records): each session's files are built and
    written as soon as its last record is read, so that what a sync holds is one session, not
    every file it builds (a first sync builds them all)."""
    build, changed_foreign = wanted
    events, session_records, told = {}, {}, set()

    def build_file(sid, records):  # one session's files, one per branch its items go to
        by_branch = {}
        for r in records:
            if r.get("type") == "evidence":
                for ws in routes.get(r["repo"], ("",)):
                    by_branch.setdefault(ws, [records[0]] if records[0].get("type") == "session" else [])
                    by_branch[ws].append(r)
        for ws, held_records in by_branch.items():
            sha = out.add(ws, base + "sessions/%s.jsonl" % sid, out.encode(held_records))
            exported[ws, sid] = (digests[sid], sha)

    def tell(sid, record):  # a teammate's item changed here, on every branch its repository goes to
        for ws in routes.get(record["repo"], ("",)):
            if (ws, sid) not in told and session_records.get(sid) is not None:
                told.add((ws, sid))
                events.setdefault(ws, []).append(session_records[sid])
            events.setdefault(ws, []).append(record)

    wanted = build | changed_foreign
    seen = _sync_seen_versions(store, changed_foreign)
    current, records = None, []
    for sid, record in export_records(store, sessions=wanted) if wanted else ():
        if sid != current:
            if records:
                build_file(current, records)
            current, records = sid, []
        kind = record.get("type")
        if sid in build:
            if kind in ("session", "evidence"):
                records.append(record)
        elif kind == "session":
            session_records[sid] = record
        elif kind != "evidence":
            events.setdefault("", []).append(record)
        elif _sync_version(record) != seen.get(record["id"]):
            tell(sid, record)
    if records:
        build_file(current, records)
    return events


class _SyncBlobs:
    """The files a sync builds, written into its repository as blobs as they are built (one
    ``git fast-import``, started at the first), so that none is held until the commit: the commit
    names each by its id. Use as a context manager around the building."""

    def __init__(self, store):
        self.store = store
        self.writer = None
        self.written = set()

    def write(self, sha, data):
        if sha in self.written:
            return
        if self.writer is None:
            self.writer = GitWriter(
                _sync_dir(self.store),
                ["fast-import", "--quiet", "--done"],
                extra_options=["-c", "protocol.ext.allow=never", "-c", "core.bare=true"],
            ).__enter__()
        self.written.add(sha)
        self.writer.write(b"blob\ndata %d\n%s\n" % (len(data), data))

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        if self.writer is not None:
            if kind is None:
                self.writer.write(b"done\n")
            return self.writer.__exit__(kind, value, tb)
        return False


def _session_digests(store, context, sessions=None):
    """{session id: digest} of this machine's own sessions with items (``sessions`` of them, or
    every one when None): what its exported file is built from, so that the same digest means the
    same file. An item's text, kind, session and creation never change in place (a forget deletes
    the row, a capture or an import adds one), so its row id stands for them, beside every column
    that does change (repository, confidence, status, replacement, update, confirmation); an
    anchor changes in place only in its repository (a confirmation replaces it), a history event
    never; the session's row is taken whole. What shapes every file (``context``,
    _sync_context) is part of each digest. Read in the caller's snapshot."""
    import hashlib

    cursor = store.db.cursor()
    cursor.row_factory = None
    if sessions is None:
        sessions = [
            r[0]
            for r in cursor.execute(
                "SELECT DISTINCT e.session_id FROM evidence e "
                "WHERE NOT EXISTS (SELECT 1 FROM sync_foreign f WHERE f.session_id = e.session_id)"
            )
        ]
    ids = sorted(sessions)
    columns = [r[1] for r in cursor.execute("PRAGMA table_info(sessions)")]
    row = " || ',' || ".join("quote(%s)" % c for c in columns)
    digests = {}
    for chunk in [ids[i : i + 500] for i in range(0, len(ids), 500)]:  # a chunk's texts held at a time
        parts = {}
        clause = "e.session_id IN (%s)" % ",".join("?" * len(chunk))
        # Fields joined by "|" (none of these values holds one: ids, names, timestamps,
        # statuses, numbers), items by ";".
        for sid, text in cursor.execute(
            "SELECT e.session_id, group_concat(rid || '|' || ifnull(repo_id, '') || '|' || repo_name || '|' || "
            "ifnull(confidence, '') || '|' || status || '|' || ifnull(superseded_by, '') || '|' || "
            "ifnull(updated_at, '') || '|' || ifnull(confirmed_at, ''), ';') FROM evidence e "
            "WHERE %s GROUP BY e.session_id" % clause,
            chunk,
        ):
            parts[sid] = [context, text]
        for sid, text in cursor.execute(
            "SELECT e.session_id, group_concat(a.id || '|' || a.evidence_rid || '|' || ifnull(a.repo_id, '') || "
            "'|' || a.repo_name, ';') FROM anchors a JOIN evidence e ON e.rid = a.evidence_rid WHERE %s "
            "GROUP BY e.session_id" % clause,
            chunk,
        ):
            parts[sid].append("anchors " + text)
        for sid, text in cursor.execute(
            "SELECT e.session_id, group_concat(h.rowid || '|' || h.evidence_rid, ';') "
            "FROM evidence_events h JOIN evidence e ON e.rid = h.evidence_rid WHERE %s GROUP BY e.session_id"
            % clause,
            chunk,
        ):
            parts[sid].append("events " + text)
        sql = "SELECT id, %s FROM sessions WHERE id IN (%%s)" % row
        for sid, text in _select_in_cursor(cursor, sql, list(parts)):
            parts[sid].append("session " + text)
        for sid, p in parts.items():
            digests[sid] = hashlib.blake2b(
                "\n".join(p).encode("utf-8", "surrogatepass"), digest_size=16
            ).hexdigest()
    return digests


def _select_in_cursor(cursor, sql, values):
    """_select_in on a plain-tuple cursor."""
    rows = []
    for i in range(0, len(values), 500):
        chunk = values[i : i + 500]
        rows += cursor.execute(sql % ",".join("?" * len(chunk)), chunk).fetchall()
    return rows


def _sync_foreign_changed(store, since):
    """The teammates' sessions one of whose items changed here since it was imported (its version,
    _sync_version, is not the one sync_seen holds): their changes are this machine's events, and
    only these sessions of a teammate's memory are built into records. Only the sessions written
    since the last sync and those whose changes the events files already hold are looked at."""
    ids = sorted(since.sessions(store, foreign=True) | since.events)
    if not ids:
        return set()
    where = "e.session_id IN (%s) AND e.session_id IN (SELECT session_id FROM sync_foreign)"
    values = [ids[i : i + 500] for i in range(0, len(ids), 500)]
    store.db.create_function("wctx_sync_version", 5, _sync_version_of)
    changed = set()
    for chunk in values:
        clause = where % ",".join("?" * len(chunk))
        changed.update(
            r[0]
            for r in store.db.execute(
                "SELECT DISTINCT e.session_id FROM evidence e LEFT JOIN sync_seen s ON s.id = e.id "
                "WHERE %s AND s.updated_at IS NOT wctx_sync_version(e.updated_at, e.status, e.superseded_by, "
                "e.confirmed_at, (SELECT count(*) FROM evidence_events h WHERE h.evidence_rid = e.rid))"
                % clause,
                chunk,
            )
        )
    return changed


def _sync_seen_versions(store, sessions):
    """{item id: version last imported} of the items of ``sessions``."""
    return {
        r[0]: r[1]
        for r in _select_in(
            store,
            "SELECT s.id, s.updated_at FROM sync_seen s JOIN evidence e ON e.id = s.id WHERE e.session_id IN (%s)",
            sessions,
        )
    }


def _sync_commit(store, machine, tip, tree, payload, kept):
    """Build the commit that puts ``payload`` ({path: blob id} of blobs already written,
    _SyncBlobs) on top of ``tip`` (one fast-import), keeping the files ``kept`` as the tip holds
    them; None when the tip already holds exactly our files."""
    base = "machines/%s/" % machine
    ours = {p: b for p, b in tree.items() if p.startswith(base)}
    changed = {p: sha for p, sha in payload.items() if ours.get(p) != sha}
    removed = sorted(p for p in ours if p not in payload and p not in kept)
    if not changed and not removed:
        return None, 0, 0
    stamp = int(time.time())
    message = (
        "wctx sync from machine %s: %d files written, %d removed\n" % (machine, len(changed), len(removed))
    ).encode()
    stream = [
        b"commit %s\n" % _SYNC_OURS.encode(),
        b"committer wctx <%s@wctx.invalid> %d +0000\n" % (machine.encode(), stamp),
        b"data %d\n%s" % (len(message), message),
    ]
    if tip:
        stream.append(b"from %s\n" % tip.encode())
    for path in sorted(changed):
        stream.append(b"M 100644 %s %s\n" % (changed[path].encode("ascii"), path.encode()))
    for path in removed:
        stream.append(b"D %s\n" % path.encode())
    stream.append(b"done\n")
    _sync_git(store, ["fast-import", "--quiet", "--force", "--done"], input_bytes=b"".join(stream))
    _, out = _sync_git(store, ["rev-parse", "--verify"], revs=[_SYNC_OURS + "^{commit}"])
    return out.decode("ascii").strip(), len(changed), len(removed)


# A remote on a path is someone's repository on this machine: git runs the receiving end of a push
# there, as this user, under that repository's configuration. Its command line outranks that
# configuration and turns off what would run a program: hooks (wherever core.hooksPath points),
# the alternates' refs command, and checking the pushed files out (updateInstead) through its
# filters (a checked-out branch is refused instead).
_SYNC_RECEIVE_PACK = (
    "git -c core.hooksPath=/dev/null -c core.alternateRefsCommand=true -c core.fsmonitor=false "
    "-c receive.denyCurrentBranch=refuse receive-pack"
)


def _sync_push(store, remote, updates):
    """Push each (commit, branch) of ``updates`` as that branch's new tip, in one ``git push``.
    Returns {branch: git's reason} for each update refused (another machine pushed first, or
    updated the ref at the same moment): the caller fetches, rebuilds and tries again."""
    args = ["push", "--porcelain", "--quiet"]
    if remote.startswith("/"):  # a path (check_sync_remote makes every local remote absolute)
        args.append("--receive-pack=" + _SYNC_RECEIVE_PACK)
    specs = ["%s:refs/heads/%s" % (commit, branch) for commit, branch in updates]
    code, out = _sync_git(store, [*args, "--end-of-options", remote, *specs], ok_codes=(0, 1), network=True)
    if code == 0:
        return {}
    # Porcelain output: one line per ref, "!" in front of a ref that was not updated.
    refused = {}
    for line in out.decode("utf-8", "replace").splitlines():
        fields = line.split("\t")
        if line[:1] == "!" and len(fields) >= 3:
            refused[fields[1].split(":")[-1][len("refs/heads/") :]] = fields[2]
    if refused:
        return refused
    raise WctxError("sync: push to %s failed (git push exit 1, no ref refused)" % remote)


def _store_fingerprint(store):
    """What moves the files of a sync besides the sessions sync_changes names (m021): the
    relations, workspaces and tombstones (one-second timestamps, so counts and lengths too). Small
    tables: reading them costs the same at any size of the store."""
    row = store.one(
        "SELECT (SELECT count(*) || ':' || total(length(note)) FROM relations) AS r, "
        "(SELECT count(*) FROM workspace_repos) AS w, (SELECT count(*) FROM tombstones) AS t, "
        "(SELECT count(*) FROM repos) AS p"
    )
    return "|".join(str(row[k]) for k in ("r", "w", "t", "p"))


def _sync_quiet(store, routes):
    """Nothing written here since the last sync that could change a file of ours: no session
    named in sync_changes, the small tables and the context as that sync left them."""
    return (
        store.one("SELECT 1 FROM sync_changes LIMIT 1") is None
        and _store_fingerprint(store) == _sync_get(store, "fingerprint")
        and _sync_context(store, LocalPaths(store), routes) == _sync_get(store, "context")
    )


def sync_memory(store, remote=None, branch=None):
    """List the team's branches, fetch the team's own and those of the workspaces this machine is
    in, import what is new, export this store's records to the branch each belongs to, commit and
    push; retry after a rejected push. The first call's remote and branch are remembered."""
    remote = check_sync_remote(remote) if remote else _sync_get(store, "remote")
    if remote is None:
        raise UsageError("no sync remote yet: wctx sync --remote URL|PATH (it is remembered)")
    branch = check_sync_branch(branch) if branch else (_sync_get(store, "branch") or SYNC_BRANCH)
    machine = _sync_init(store)
    report = SyncReport(remote, branch)
    synced_with = _sync_get(store, "remote")
    same = remote == synced_with and branch == _sync_get(store, "branch")
    last = _sync_remembered_tips(store) if same else {}
    unread = _sync_remembered_unread(store) if same else {}
    refused = {}
    for attempt in range(1, SYNC_PUSH_TRIES + 1):
        if attempt > 1:
            time.sleep(_sync_backoff(attempt))
        report.tries = attempt
        refused = _sync_attempt(store, (remote, branch), machine, report, (last, unread), attempt)
        if not refused:
            break
    else:
        raise WctxError(
            "sync: %d pushes to %s were refused (last: %s); run wctx sync again"
            % (SYNC_PUSH_TRIES, remote, "; ".join("%s %s" % kv for kv in sorted(refused.items())))
        )
    return report


def _sync_attempt(store, where, machine, report, remembered, attempt):
    """One try of a sync: fetch and import, build this machine's files, commit and push them.
    Returns {ref: why} of the pushes refused (empty when done: pushed, or nothing to push)."""
    remote, branch = where
    listed = _sync_list(store, remote, branch)
    if attempt == 1:  # reachable: remembered now, so that a sync interrupted later needs no arguments
        _sync_set(store, "remote", remote)
        _sync_set(store, "branch", branch)
    routes = sync_routes(store)
    wanted = _sync_wanted(store, routes)
    report.branches(wanted, listed)
    if attempt == 1 and _sync_nothing_new(store, listed, wanted, remembered[0], routes):
        report.noop = True
        report.skipped = _sync_remembered_skips(store)
        return {}
    tips, trees, left, routes, wanted = _sync_read_all(
        store, where, machine, listed, (routes, wanted), remembered, report
    )
    report.branches(wanted, listed)
    fingerprint, local = _store_fingerprint(store), LocalPaths(store)
    since = _SyncSince(store, local, routes)
    with store.snapshot(), _SyncBlobs(store) as blobs:  # the files, from one moment of the store
        payload, kept, exported, events = _sync_payload(store, machine, trees, routes, since, local, blobs)
    commits, written, removed = _sync_commit_all(store, machine, wanted, tips, trees, (payload, kept))
    pushed = {ws: tips[ws] for ws in wanted if ws in tips and ws not in commits}
    refused = _sync_push_commits(store, where, commits, (written, removed), report) if commits else {}
    if not refused:  # nothing to push, or pushed: what this sync leaves for the next
        pushed.update(commits)
        state = (fingerprint, since, events, left)
        _sync_remember(store, remote, branch, wanted, pushed, state, exported, report.skipped)
    return refused


def _sync_push_commits(store, where, commits, counts, report):
    """Push each branch's new commit; {ref: why} of those refused (none: the report says what)."""
    remote, branch = where
    refused = _sync_push(
        store, remote, [(c, workspace_branch(branch, ws)) for ws, c in sorted(commits.items())]
    )
    if not refused:
        report.exported = {"files": counts[0], "removed": counts[1]}
        report.pushed = short_sha(commits.get("") or next(iter(commits.values())))
    return refused


def _sync_nothing_new(store, listed, wanted, last, routes):
    """Nobody pushed to our branches and nothing changed here: nothing to fetch, build or push."""
    return (
        json.dumps(wanted) == _sync_get(store, "workspaces")
        and all(listed.get(ws) == last.get(ws) for ws in wanted)
        and _sync_quiet(store, routes)
    )


def _sync_commit_all(store, machine, wanted, tips, trees, built):
    """({workspace: commit} of the branches whose files changed, files written, files removed)."""
    payload, kept = built
    commits, written, removed = {}, 0, 0
    for ws in wanted:
        commit, n_written, n_removed = _sync_commit(
            store, machine, tips.get(ws), trees.get(ws, {}), payload.get(ws, {}), kept.get(ws, set())
        )
        if commit is not None:
            commits[ws] = commit
            written += n_written
            removed += n_removed
    return commits, written, removed


def _sync_read_all(store, where, machine, listed, routed, remembered, report):
    """Fetch and import the branches of ``wanted``, and of the workspaces what they bring puts
    this machine in: (tips, {workspace: its tree of our files}, {workspace: files not imported},
    the routes and workspaces after)."""
    last, unread = remembered
    routes, wanted = routed
    tips, trees, left = {}, {}, {}
    while [ws for ws in wanted if ws not in trees]:
        todo = [ws for ws in wanted if ws not in trees]
        tips.update(_sync_fetch(store, where[0], where[1], listed, todo))
        for ws in todo:  # the team's branch first: its topology says which workspaces hold what
            # Compared with the tip the last sync left only where that sync also said what it
            # could not import (a sync of an earlier wctx did not): else every file is read.
            since = last.get(ws) if ws in unread else None
            trees[ws], left[ws] = _sync_read_branch(
                store, machine, ws, tips.get(ws), since, unread.get(ws, {}), report
            )
        routes = sync_routes(store)
        wanted = _sync_wanted(store, routes)
    return tips, trees, left, routes, wanted


def _sync_read_branch(store, machine, workspace, tip, since, unread, report):
    """Import what the branch of ``workspace`` at ``tip`` brings from the other machines: when the
    last sync left it at ``since``, only the files changed since and those that sync could not
    import (``unread``); else every file. Returns ({path: blob id} of this machine's own files on
    the branch, which the commit builds on, {path: [kind, blob id]} of the files of others it
    could not import, for the next sync to try again and to name again)."""
    base = "machines/%s/" % machine
    changed = _sync_changed(store, since, tip, unread)
    if changed is None:
        files, links = _sync_tree(store, tip)
        own = {p: b for p, b in files.items() if p.startswith(base)}
    else:
        files, links = changed
        own = _sync_tree(store, tip, under=base.rstrip("/"))[0] if tip else {}
    for path in sorted(links):
        why = "%s: a symbolic link, not a file" % path
        if why not in report.skipped:  # once, however many times a rejected push fetches again
            report.skipped.append(why)
    with GcPaused():  # as import_evidence: thousands of parsed records, none in a cycle
        _sync_import(store, machine, workspace, files, report, tip)
    others = [p for p in files if not p.startswith(base)]
    read = _sync_files_read(store, workspace, others)
    left = {p: ["file", files[p]] for p in others if read.get(p) != files[p]}
    left.update((p, ["link", b]) for p, b in links.items())
    return own, left


def _sync_wanted(store, routes):
    """The branches this machine fetches, by workspace: the team's (''), each workspace it is in,
    and each one it pushed a session file to before (to take that file out when its items now
    belong elsewhere)."""
    before = {r["workspace"] for r in store.all("SELECT DISTINCT workspace FROM sync_exported")}
    return [""] + sorted((set(sync_workspaces(store, routes)) | before) - {""})


def _sync_remembered_tips(store):
    """{workspace: tip} of each branch as the last sync left it."""
    tips = {}
    for r in store.all("SELECT key, value FROM sync_state WHERE key = 'tip' OR key LIKE 'tip %'"):
        tips[r["key"][4:]] = r["value"]
    return tips


def _sync_remembered_unread(store):
    """{workspace: {path: [kind, blob id]}} of the files the last sync could not import."""
    unread = {}
    for r in store.all("SELECT key, value FROM sync_state WHERE key = 'unread' OR key LIKE 'unread %'"):
        unread[r["key"][7:]] = json.loads(r["value"])
    return unread


def _sync_remembered_skips(store):
    return json.loads(_sync_get(store, "skipped") or "[]")


def _sync_remember(store, remote, branch, wanted, tips, state, exported, skipped):
    """What a sync leaves for the next: where it synced, the branches it fetched (``wanted``) and
    each one's tip as it left it (a workspace's under "tip NAME"), the files it skipped (said again
    while nothing moves), ``state``: (the small tables' fingerprint, the _SyncSince it built from,
    the teammates' sessions whose changes its events files hold, {workspace: the files of
    others it could not import}), and ``exported``: (workspace,
    session id) -> (digest, blob id) of each session file of ours the branches now hold. The
    sessions named in sync_changes up to its mark are done with; those named after it, by another
    process meanwhile, stay for the next sync."""
    fingerprint, since, events, unread = state
    before = {
        (r["workspace"], r["session_id"]): (r["digest"], r["blob"])
        for r in store.all("SELECT * FROM sync_exported")
    }
    with store.atomic():
        store.db.execute(
            "DELETE FROM sync_state WHERE key IN ('tip', 'unread') OR key LIKE 'tip %' OR key LIKE 'unread %'"
        )
        for key, value in (
            ("remote", remote),
            ("branch", branch),
            ("fingerprint", fingerprint),
            ("context", since.context),
            ("events", json.dumps(sorted(events)) if events else None),
            ("workspaces", json.dumps(wanted)),
            ("skipped", json.dumps(skipped) if skipped else None),
            *((("tip " + ws).strip(), tip) for ws, tip in sorted(tips.items())),
            *((("unread " + ws).strip(), json.dumps(files)) for ws, files in sorted(unread.items())),
        ):
            _sync_set(store, key, value)
        store.db.execute("DELETE FROM sync_changes WHERE seq <= ?", (since.mark,))
        store.db.executemany(
            "DELETE FROM sync_exported WHERE workspace = ? AND session_id = ?",
            [key for key in before if key not in exported],
        )
        store.db.executemany(
            "INSERT INTO sync_exported(workspace, session_id, digest, blob) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(workspace, session_id) DO UPDATE SET digest = excluded.digest, blob = excluded.blob",
            [
                (ws, sid, d, b)
                for (ws, sid), (d, b) in sorted(exported.items())
                if before.get((ws, sid)) != (d, b)
            ],
        )
