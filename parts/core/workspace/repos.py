from __future__ import annotations

import os
import re

from .constants import MAX_CLAIM_CHARS, RELATION_KINDS, REPO_NAME_RE
from .errors import NotFoundError, UsageError, WctxError
from .git import (
    GitError,
    check_checkout,
    common_git_dir,
    dubious_ownership_message,
    git_toplevel,
    linked_worktrees,
    run_git,
)
from .helpers import clean_text, is_utf8, printable_path, short_sha, unknown_name, utc_now
from .records import Repo, _repos, resolve_repo
from .redaction import identifier_fault, stored_text

# ----------------------------------------------------------------------------------------------
# Service: workspaces, repositories, relations
# ----------------------------------------------------------------------------------------------


def _check_name(name, what, hint=""):
    """``name`` as a repository or workspace name, or a UsageError saying why not. A name is an
    identifier that users type and teammates' records carry: never one that the store would
    redact (identifier_fault), and the error shows its stored form, never the secret."""
    if not name or not REPO_NAME_RE.match(name):
        raise UsageError(
            "%s name %r is not valid: use letters, digits, '.', '_' or '-' (at most 64, starting with a letter or digit)%s"
            % (what, name, hint)
        )
    fault = identifier_fault(name)
    if fault:
        raise UsageError(
            "%s name %s %s; names are identifiers, stored and shared as they are: choose another%s"
            % (what, stored_text(name), fault, hint)
        )
    return name


def _workspace_id(store, name, create):
    if not is_utf8(name):
        raise UsageError("workspace name %s is not valid UTF-8" % printable_path(name))
    row = store.one("SELECT id FROM workspaces WHERE name = ?", (name,))
    if row:
        return row["id"]
    if not create:
        names = [r["name"] for r in store.all("SELECT name FROM workspaces")]
        raise NotFoundError(unknown_name("workspace", name, names))
    return store.db.execute(
        "INSERT INTO workspaces(name, created_at) VALUES (?, ?)", (name, utc_now())
    ).lastrowid


def _git_refusal(path):
    """Why git refuses to work in ``path`` when it is a checkout git will not touch (owned by
    another user), with git's own fix; else None."""
    try:
        run_git(path, ["rev-parse", "--show-toplevel"])
    except GitError as e:
        if "dubious ownership" in e.stderr.decode("utf-8", "replace"):
            return dubious_ownership_message(path, e.stderr)
    except WctxError:
        pass
    return None


def _root_commit(top):
    """The repository's root commit (the smallest when history has several), or None."""
    code, out = run_git(top, ["rev-list", "--max-parents=0"], ok_codes=(0, 128), revs=["HEAD"])
    roots = sorted(out.decode("ascii", "replace").split()) if code == 0 else []
    return roots[0] if roots else None


def _remote_urls(top):
    """The repository's remote URLs, normalised so that ssh and https spellings of one URL meet
    (host and path, no user or credentials, no trailing .git); a local remote is its real path."""
    try:
        _, out = run_git(top, ["config", "-z", "--get-regexp", r"^remote\..*\.url$"], ok_codes=(0, 1))
    except GitError:
        return set()
    urls = set()
    for entry in out.split(b"\0"):
        if b"\n" not in entry:
            continue
        url = entry.split(b"\n", 1)[1].decode("utf-8", "replace").strip()
        local = url[len("file://") :] if url.startswith("file://") else url
        if os.path.isabs(local):
            urls.add(os.path.realpath(local))
            continue
        m = re.match(
            r"^(?:[A-Za-z][A-Za-z0-9+.-]*://)?(?:[^@/]*@)?([^/:]+)(?::\d+)?[:/]+(.*?)(?:\.git)?/*$", url
        )
        urls.add((m.group(1).lower() + "/" + m.group(2)) if m else url)
    return urls


def _same_remote(top, other):
    """True when two checkouts name the same remote, or one is the other's remote (a clone)."""
    mine, theirs = _remote_urls(top), _remote_urls(other)
    return bool(mine & theirs) or os.path.realpath(other) in mine or os.path.realpath(top) in theirs


def identity_of(repos, name, root):
    """The registered repository a (name, root commit) identity names, or None: the root commit
    decides when both sides have one (preferring the same name among forks), else the name."""
    if root:
        same = [r for r in repos if r.root_commit == root]
        if len(same) > 1:
            same = [r for r in same if r.name == name] or same[:1]
        if same:
            return same[0]
    named = [r for r in repos if r.name == name and not root and not r.root_commit]
    return named[0] if named else None


def _waiting_names(store, root_commit, aliases):
    """The names under which this store keeps evidence waiting for a repository with this root
    commit (or, without history, these names): imported before registering, or kept after a remove.
    When several names share the root commit (forks), only the ones this registration answers to."""
    if root_commit:
        names = [
            r["repo_name"]
            for r in store.all(
                "SELECT DISTINCT repo_name FROM anchors WHERE repo_id IS NULL AND root_commit = ?",
                (root_commit,),
            )
        ]
        if len(names) > 1:
            names = [n for n in names if n in aliases]
        return names
    return [r["repo_name"] for r in store.all(
        "SELECT DISTINCT repo_name FROM anchors WHERE repo_id IS NULL AND root_commit IS NULL AND commit_sha IS NULL "
        "AND repo_name IN (%s)" % ",".join("?" * len(aliases)), sorted(aliases))]  # fmt: skip


def _attach_waiting(store, repo_id, repo_name, root_commit, aliases):
    """Attach what waits for this repository: evidence, anchors and sessions recorded under any of
    its names (taking its current name), dormant relations whose other end is registered, and
    workspace memberships. Returns (evidence attached, [relation labels], [workspaces])."""
    db = store.db
    names = _waiting_names(store, root_commit, aliases)
    attached = 0
    if names:
        marks = ",".join("?" * len(names))
        # An item counts once, whether it is about this repository or only cites files in it.
        rids = {r[0] for r in db.execute(
            "SELECT DISTINCT evidence_rid FROM anchors WHERE repo_id IS NULL AND root_commit IS ? AND repo_name IN (%s)"
            % marks, [root_commit, *names])}  # fmt: skip
        rids |= {r[0] for r in db.execute(
            "SELECT rid FROM evidence WHERE repo_id IS NULL AND repo_name IN (%s)" % marks, names)}  # fmt: skip
        if root_commit:
            db.execute(
                "UPDATE anchors SET repo_id = ?, repo_name = ? WHERE repo_id IS NULL AND root_commit = ? "
                "AND repo_name IN (%s)" % marks, [repo_id, repo_name, root_commit, *names])  # fmt: skip
        else:
            db.execute(
                "UPDATE anchors SET repo_id = ?, repo_name = ? WHERE repo_id IS NULL AND root_commit IS NULL "
                "AND commit_sha IS NULL AND repo_name IN (%s)" % marks, [repo_id, repo_name, *names])  # fmt: skip
        if root_commit:  # dependencies on its symbols, recorded before it went away
            db.execute(
                "UPDATE dependencies SET repo_id = ?, repo_name = ? WHERE repo_id IS NULL AND root_commit = ? "
                "AND repo_name IN (%s)" % marks, [repo_id, repo_name, root_commit, *names])  # fmt: skip
            db.execute("DELETE FROM freshness_cache WHERE evidence_rid IN (SELECT evidence_rid FROM dependencies "
                       "WHERE repo_id = ?)", (repo_id,))  # fmt: skip
        db.execute(
            "UPDATE evidence SET repo_id = ?, repo_name = ? WHERE repo_id IS NULL AND repo_name IN (%s) AND NOT EXISTS ("
            "SELECT 1 FROM anchors a WHERE a.evidence_rid = evidence.rid AND a.repo_name = evidence.repo_name "
            "AND a.repo_id IS NULL)" % marks, [repo_id, repo_name, *names])  # fmt: skip
        attached = len(rids)
        for table in ("sessions", "session_repos", "session_files"):
            db.execute(
                "UPDATE OR IGNORE %s SET repo_id = ?, repo_name = ? WHERE repo_id IS NULL AND repo_name IN (%s)"
                % (table, marks), [repo_id, repo_name, *names])  # fmt: skip
        db.execute("DELETE FROM freshness_cache WHERE evidence_rid IN (SELECT evidence_rid FROM anchors WHERE repo_id = ?)",
                   (repo_id,))  # fmt: skip
    aliases = set(aliases) | set(names)
    me = Repo(repo_id, repo_name, None, root_commit)

    def is_me(name, root):
        # The root commit decides; only two history-less identities meet by name.
        return root == root_commit if (root or root_commit) else name in aliases

    repos = [r for r in _repos(store) if r.id != repo_id]
    restored = []
    for row in store.all("SELECT * FROM dormant_relations ORDER BY id"):
        a = (
            me
            if is_me(row["from_name"], row["from_root"])
            else identity_of(repos, row["from_name"], row["from_root"])
        )
        b = (
            me
            if is_me(row["to_name"], row["to_root"])
            else identity_of(repos, row["to_name"], row["to_root"])
        )
        if a is None or b is None or me not in (a, b) or a is b:
            continue
        db.execute(
            "INSERT OR IGNORE INTO relations(from_repo, kind, to_repo, note, created_at) VALUES (?, ?, ?, ?, ?)",
            (a.id, row["kind"], b.id, row["note"], row["created_at"]),
        )
        db.execute("DELETE FROM dormant_relations WHERE id = ?", (row["id"],))
        restored.append("%s %s %s" % (a.name, row["kind"], b.name))
    workspaces = []
    for row in store.all("SELECT * FROM dormant_members ORDER BY id"):
        if not is_me(row["repo_name"], row["root_commit"]):
            continue
        ws = _workspace_id(store, row["workspace"], create=True)
        db.execute(
            "INSERT OR IGNORE INTO workspace_repos(workspace_id, repo_id) VALUES (?, ?)", (ws, repo_id)
        )
        db.execute("DELETE FROM dormant_members WHERE id = ?", (row["id"],))
        workspaces.append(row["workspace"])
    return attached, restored, sorted(set(workspaces))


def register_repo(store, path, name=None, workspace=None, same_as=None):
    """Register the git checkout containing ``path``; returns {repo, created, message}.

    A linked worktree of a registered repository, or a second clone of one (same root commit and
    a common remote, or ``same_as`` naming it), becomes a checkout of that repository. A
    repository registered before (same path, or same root commit) comes back under whatever name
    it is given now, with its evidence, relations and workspaces; evidence imported for it before
    it was registered attaches too."""
    path = os.path.abspath(os.path.expanduser(path))
    if not os.path.exists(path):
        raise NotFoundError("no such directory: %s" % path)
    top = git_toplevel(path)
    if top is None:
        raise UsageError(_git_refusal(path) or "%s is not inside a git checkout" % path)
    check_checkout(path, top)
    if not is_utf8(top):
        raise UsageError("%s: wctx needs repository paths that are valid UTF-8" % printable_path(top))
    fault = identifier_fault(top)
    if fault:  # stored redacted or cleaned, the path would lead nowhere
        raise UsageError(
            "the checkout's path %s %s; wctx keeps a checkout's path as it is: move or rename the directory"
            % (stored_text(top), fault)
        )
    if workspace is not None:
        _check_name(workspace, "workspace")
    if name is not None:
        _check_name(name, "repository")
    repos = _repos(store)
    existing = store.one("SELECT * FROM repos WHERE path = ?", (top,))
    as_checkout = store.one(
        "SELECT r.* FROM checkouts c JOIN repos r ON r.id = c.repo_id WHERE c.path = ?", (top,)
    )
    target, why, note = None, None, None
    if existing or as_checkout:
        row = existing or as_checkout
        if same_as and same_as != row["name"]:
            raise UsageError("%s is already registered as %s" % (top, row["name"]))
        messages = [
            "%s is already registered as %s" % (top, row["name"])
            if existing
            else "%s is already a checkout of %s" % (top, row["name"])
        ]
        if name and name != row["name"]:
            messages.append(
                "(kept the name %s; rename with: wctx repo rename %s NEW)" % (row["name"], row["name"])
            )
        created = False
        repo_id = row["id"]
        repo_name = row["name"]
        root_commit = row["root_commit"]
    else:
        root_commit = _root_commit(top)
        common = common_git_dir(top)
        if same_as:
            target = resolve_repo(store, same_as)
            if target.root_commit != root_commit:
                raise UsageError(
                    "%s is not a checkout of %s: its root commit (%s) is not %s's (%s)"
                    % (top, target.name, short_sha(root_commit) or "none", target.name,
                       short_sha(target.root_commit) or "none")
                )  # fmt: skip
            why = "as asked (--same-as)"
        else:
            for r in repos:
                if common and common_git_dir(r.home) == common and top in linked_worktrees(common):
                    target, why = r, "a linked worktree of it"
                    break
            if target is None and root_commit:
                for r in repos:
                    if r.root_commit == root_commit and os.path.isdir(r.home) and _same_remote(top, r.home):
                        target, why = r, "same root commit and remote"
                        break
                if target is not None and name and name != target.name:
                    note = (
                        "(it shares root commit and remote with %s; to make it a checkout of %s instead: "
                        "wctx repo remove %s && wctx repo add %s --same-as %s)" % (target.name, target.name, name, top, target.name)
                    )  # fmt: skip
                    target = None
        created = target is None
        if target is not None:
            repo_id, repo_name = target.id, target.name
            messages = ["registered %s as a checkout of %s (%s): it shares %s's evidence, scope and relations"
                        % (top, repo_name, why, repo_name)]  # fmt: skip
        else:
            dormant = store.all(
                "SELECT * FROM dormant_repos WHERE path = ? OR (root_commit IS NOT NULL AND root_commit = ?) "
                "ORDER BY path = ? DESC, id DESC",
                (top, root_commit, top),
            )
            taken_names = {r.name for r in repos}
            by_path = [d["name"] for d in dormant if d["path"] == top and d["name"] not in taken_names]
            repo_name = _check_name(
                name or (by_path[0] if by_path else os.path.basename(top)),
                "repository",
                "" if name or by_path else " (it comes from the directory's name: pass --name NAME)",
            )
            taken = store.one("SELECT path FROM repos WHERE name = ?", (repo_name,))
            if taken:
                raise UsageError(
                    "the name %s is taken by %s; choose another with --name" % (repo_name, taken["path"])
                )
            aliases = {repo_name} | {d["name"] for d in dormant}
            messages = ["registered %s as %s" % (top, repo_name)]
            if note:
                messages.append(note)
    with store.atomic():
        if created:
            # Never reuse a removed repository's id: rows that still carry it (caches, indexes) must not
            # become the new repository's.
            high = store.one("SELECT value FROM sync_state WHERE key = 'repo_id_high'")
            next_id = (
                max(
                    store.one("SELECT coalesce(max(id), 0) AS n FROM repos")["n"],
                    int(high["value"]) if high else 0,
                )
                + 1
            )
            repo_id = store.db.execute(
                "INSERT INTO repos(id, name, path, root_commit, added_at) VALUES (?, ?, ?, ?, ?)",
                (next_id, repo_name, top, root_commit, utc_now()),
            ).lastrowid
            attached, restored, back_in = _attach_waiting(store, repo_id, repo_name, root_commit, aliases)
            store.db.execute(
                "DELETE FROM dormant_repos WHERE path = ? OR (root_commit IS NOT NULL AND root_commit = ?)",
                (top, root_commit),
            )
            if attached:
                messages.append(
                    "; attached %d waiting item%s (recorded before it was registered here)"
                    % (attached, "" if attached == 1 else "s")
                )
            if restored:
                messages.append(
                    "; restored relation%s: %s" % ("" if len(restored) == 1 else "s", ", ".join(restored))
                )
            if back_in:
                messages.append(
                    "; back in workspace%s %s" % ("" if len(back_in) == 1 else "s", ", ".join(back_in))
                )
        elif target is not None:
            store.db.execute(
                "INSERT INTO checkouts(repo_id, path, added_at) VALUES (?, ?, ?)", (repo_id, top, utc_now())
            )
        if workspace:
            new_ws = store.one("SELECT id FROM workspaces WHERE name = ?", (workspace,)) is None
            ws = _workspace_id(store, workspace, create=True)
            cur = store.db.execute(
                "INSERT OR IGNORE INTO workspace_repos(workspace_id, repo_id) VALUES (?, ?)", (ws, repo_id)
            )
            if cur.rowcount:
                messages.append("in %sworkspace %s" % ("new " if new_ws else "", workspace))
            else:
                messages.append("(already in workspace %s)" % workspace)
    repo = store.one("SELECT * FROM repos WHERE id = ?", (repo_id,))
    text = " ".join(messages).replace(" ;", ";")
    return {
        "repo": _repo_dict(store, repo),
        "created": created,
        "checkout": target is not None,
        "message": text,
    }


def _repo_dict(store, row):
    workspaces = [
        r["name"]
        for r in store.all(
            "SELECT w.name FROM workspaces w JOIN workspace_repos wr ON wr.workspace_id = w.id "
            "WHERE wr.repo_id = ? ORDER BY w.name",
            (row["id"],),
        )
    ]
    registered = [
        r["path"] for r in store.all("SELECT path FROM checkouts WHERE repo_id = ? ORDER BY id", (row["id"],))
    ]
    repo = Repo(row["id"], row["name"], row["path"], row["root_commit"], checkouts=registered)
    checkouts = [
        {
            "path": p,
            "kind": "registered" if p == row["path"] else "clone" if p in registered else "worktree",
            "exists": os.path.isdir(p),
        }
        for p in repo.all_checkouts()
    ]
    return {
        "name": row["name"],
        "path": row["path"],
        "root_commit": row["root_commit"],
        "workspaces": workspaces,
        "exists": os.path.isdir(row["path"]),
        "added_at": row["added_at"],
        "checkouts": checkouts,
    }


def list_repos(store):
    return [_repo_dict(store, row) for row in store.all("SELECT * FROM repos ORDER BY name")]


def remove_repo(store, name):
    """Unregister a repository (or one checkout of it, named by its path). Its evidence, relations
    and workspace memberships stay, dormant, keyed by root commit and name: registering it again
    (same path, or same root commit, under any name) brings them back."""
    checkout = None
    if os.sep in name or name in (".", ".."):
        checkout = store.one(
            "SELECT c.id, c.path, r.name FROM checkouts c JOIN repos r ON r.id = c.repo_id WHERE c.path = ?",
            (os.path.realpath(name),),
        )
    if checkout is not None:
        with store.atomic():
            store.db.execute("DELETE FROM checkouts WHERE id = ?", (checkout["id"],))
        return {
            "removed": checkout["name"],
            "checkout": checkout["path"],
            "evidence_kept": 0,
            "relations_kept": 0,
            "message": "removed checkout %s of %s (the repository stays registered)"
            % (checkout["path"], checkout["name"]),
        }
    repo = resolve_repo(store, name)
    with store.atomic():
        kept = store.one("SELECT count(*) AS n FROM evidence WHERE repo_id = ?", (repo.id,))["n"]
        relations = store.all(
            "SELECT a.name AS from_name, a.root_commit AS from_root, r.kind, b.name AS to_name, "
            "b.root_commit AS to_root, r.note, r.created_at FROM relations r JOIN repos a ON a.id = r.from_repo "
            "JOIN repos b ON b.id = r.to_repo WHERE r.from_repo = ? OR r.to_repo = ?",
            (repo.id, repo.id),
        )
        store.db.executemany(
            "INSERT INTO dormant_relations(from_name, from_root, kind, to_name, to_root, note, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [tuple(r) for r in relations],
        )
        store.db.execute(
            "INSERT INTO dormant_members(workspace, repo_name, root_commit) SELECT w.name, ?, ? FROM workspaces w "
            "JOIN workspace_repos wr ON wr.workspace_id = w.id WHERE wr.repo_id = ?",
            (repo.name, repo.root_commit, repo.id),
        )
        store.db.execute(
            "INSERT INTO dormant_repos(name, root_commit, path, removed_at) VALUES (?, ?, ?, ?)",
            (repo.name, repo.root_commit, repo.home, utc_now()),
        )
        store.db.execute(
            "INSERT INTO sync_state(key, value) VALUES ('repo_id_high', ?) ON CONFLICT(key) DO UPDATE SET "
            "value = max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))",
            (str(repo.id),),
        )
        store.db.execute("DELETE FROM repos WHERE id = ?", (repo.id,))
    return {
        "removed": repo.name,
        "evidence_kept": kept,
        "relations_kept": len(relations),
        "message": "removed %s (%d evidence item%s and %d relation%s kept dormant; registering it again, by path or "
        "root commit under any name, restores them)"
        % (repo.name, kept, "" if kept == 1 else "s", len(relations), "" if len(relations) == 1 else "s"),
    }


def rename_repo(store, old, new):
    """Give a registered repository a new name; its evidence, sessions and relations follow."""
    repo = resolve_repo(store, old)
    _check_name(new, "repository")
    if new == repo.name:
        raise UsageError("%s is already called %s" % (old, new))
    taken = store.one("SELECT path FROM repos WHERE name = ?", (new,))
    if taken:
        raise UsageError("the name %s is taken by %s" % (new, taken["path"]))
    db = store.db
    with store.atomic():
        db.execute("UPDATE repos SET name = ? WHERE id = ?", (new, repo.id))
        for table in ("evidence", "anchors", "dependencies", "sessions", "session_repos", "session_files"):
            db.execute("UPDATE OR IGNORE %s SET repo_name = ? WHERE repo_id = ?" % table, (new, repo.id))
        db.execute(
            "UPDATE session_commands SET repo_name = ? WHERE repo_name = ? AND session_id IN "
            "(SELECT session_id FROM session_repos WHERE repo_id = ?)",
            (new, repo.name, repo.id),
        )
        for table, name_col, root_col in (
            ("dormant_relations", "from_name", "from_root"),
            ("dormant_relations", "to_name", "to_root"),
            ("declined_relations", "from_name", "from_root"),
            ("declined_relations", "to_name", "to_root"),
        ):
            db.execute(
                "UPDATE %s SET %s = ? WHERE %s = ? AND %s IS ?" % (table, name_col, name_col, root_col),
                (new, repo.name, repo.root_commit),
            )
        # Cached reasons name the repository (a dependency's too).
        db.execute(
            "DELETE FROM freshness_cache WHERE evidence_rid IN (SELECT evidence_rid FROM anchors WHERE repo_id = ? "
            "UNION SELECT evidence_rid FROM dependencies WHERE repo_id = ?)",
            (repo.id, repo.id),
        )
    return {"from": repo.name, "to": new, "message": "renamed %s to %s" % (repo.name, new)}


def relate(store, from_repo, kind, to_repo, note=None):
    if kind not in RELATION_KINDS:
        raise UsageError("unknown relation kind '%s' (one of: %s)" % (kind, ", ".join(RELATION_KINDS)))
    a = resolve_repo(store, from_repo)
    b = resolve_repo(store, to_repo)
    if a.id == b.id:
        raise UsageError("a repository cannot relate to itself")
    note = stored_text(clean_text(note, "note", MAX_CLAIM_CHARS))
    with store.atomic():
        cur = store.db.execute(
            "INSERT OR IGNORE INTO relations(from_repo, kind, to_repo, note, created_at) VALUES (?, ?, ?, ?, ?)",
            (a.id, kind, b.id, note, utc_now()),
        )
        created = bool(cur.rowcount)
        said = ""
        if not created:
            old = store.one(
                "SELECT note FROM relations WHERE from_repo = ? AND kind = ? AND to_repo = ?",
                (a.id, kind, b.id),
            )["note"]
            if note and note != old:
                store.db.execute(
                    "UPDATE relations SET note = ? WHERE from_repo = ? AND kind = ? AND to_repo = ?",
                    (note, a.id, kind, b.id),
                )
                said = ": note updated (%s)" % ("was: %s" % old if old else "it had none")
            else:
                said = " (already recorded, unchanged)"
                note = old
    return {
        "from": a.name,
        "kind": kind,
        "to": b.name,
        "note": note,
        "created": created,
        "updated": bool(not created and said.startswith(": note updated")),
        "message": "%s %s %s%s" % (a.name, kind, b.name, said),
    }


def unrelate(store, from_repo, kind, to_repo):
    a = resolve_repo(store, from_repo)
    b = resolve_repo(store, to_repo)
    with store.atomic():
        cur = store.db.execute(
            "DELETE FROM relations WHERE from_repo = ? AND kind = ? AND to_repo = ?", (a.id, kind, b.id)
        )
    if not cur.rowcount:
        raise NotFoundError("no relation %s %s %s" % (a.name, kind, b.name))
    return {"message": "removed relation %s %s %s" % (a.name, kind, b.name)}


def list_relations(store, repo=None):
    sql = (
        "SELECT a.name AS from_name, r.kind, b.name AS to_name, r.note FROM relations r "
        "JOIN repos a ON a.id = r.from_repo JOIN repos b ON b.id = r.to_repo"
    )
    params = ()
    if repo:
        rid = resolve_repo(store, repo).id
        sql += " WHERE r.from_repo = ? OR r.to_repo = ?"
        params = (rid, rid)
    rows = store.all(sql + " ORDER BY a.name, r.kind, b.name", params)
    return [{"from": r["from_name"], "kind": r["kind"], "to": r["to_name"], "note": r["note"]} for r in rows]


def list_workspaces(store):
    rows = store.all(
        "SELECT w.name, group_concat(r.name, ' ') AS repos FROM workspaces w "
        "LEFT JOIN workspace_repos wr ON wr.workspace_id = w.id LEFT JOIN repos r ON r.id = wr.repo_id "
        "GROUP BY w.id ORDER BY w.name"
    )
    return [{"name": r["name"], "repos": sorted((r["repos"] or "").split())} for r in rows]


def show_workspace(store, name):
    ws = _workspace_id(store, name, create=False)
    repos = store.all(
        "SELECT r.* FROM repos r JOIN workspace_repos wr ON wr.repo_id = r.id WHERE wr.workspace_id = ? ORDER BY r.name",
        (ws,),
    )
    ids = [r["id"] for r in repos]
    relations = [
        rel
        for rel in list_relations(store)
        if rel["from"] in {r["name"] for r in repos} or rel["to"] in {r["name"] for r in repos}
    ]
    counts = {}
    if ids:
        marks = ",".join("?" * len(ids))
        for row in store.all(
            "SELECT repo_name, count(*) AS n FROM evidence WHERE repo_id IN (%s) AND status = 'active' GROUP BY repo_name"
            % marks,
            ids,
        ):
            counts[row["repo_name"]] = row["n"]
    return {
        "name": name,
        "repos": [dict(_repo_dict(store, r), evidence=counts.get(r["name"], 0)) for r in repos],
        "relations": relations,
    }


def add_to_workspace(store, workspace, repo, create=False):
    """Put a repository in a workspace. A workspace that does not exist yet is made only when
    ``create`` says so: a mistyped name must not quietly become a new, empty product."""
    _check_name(workspace, "workspace")
    r = resolve_repo(store, repo)
    exists = store.one("SELECT id FROM workspaces WHERE name = ?", (workspace,)) is not None
    if not exists and not create:
        names = [w["name"] for w in store.all("SELECT name FROM workspaces ORDER BY name")]
        raise NotFoundError(
            "no workspace '%s' (existing: %s); to create it: wctx workspace add %s %s --create"
            % (workspace, ", ".join(names) or "none", workspace, r.name)
        )
    with store.atomic():
        ws = _workspace_id(store, workspace, create=True)
        store.db.execute(
            "INSERT OR IGNORE INTO workspace_repos(workspace_id, repo_id) VALUES (?, ?)", (ws, r.id)
        )
    return {
        "created": not exists,
        "message": ("created workspace %s; %s is in it" if not exists else "%s is in workspace %s")
        % ((workspace, r.name) if not exists else (r.name, workspace)),
    }


def delete_workspace(store, workspace):
    """Delete a workspace; its repositories stay registered (and in their other workspaces)."""
    ws = _workspace_id(store, workspace, create=False)
    with store.atomic():
        n = store.one("SELECT count(*) AS n FROM workspace_repos WHERE workspace_id = ?", (ws,))["n"]
        store.db.execute("DELETE FROM workspaces WHERE id = ?", (ws,))
        store.db.execute("DELETE FROM dormant_members WHERE workspace = ?", (workspace,))
    return {
        "removed": workspace,
        "message": "removed workspace %s (its %d repositor%s stay registered)"
        % (workspace, n, "y" if n == 1 else "ies"),
    }


def remove_from_workspace(store, workspace, repo):
    r = resolve_repo(store, repo)
    ws = _workspace_id(store, workspace, create=False)
    with store.atomic():
        cur = store.db.execute(
            "DELETE FROM workspace_repos WHERE workspace_id = ? AND repo_id = ?", (ws, r.id)
        )
    if not cur.rowcount:
        raise NotFoundError("%s is not in workspace %s" % (r.name, workspace))
    return {"message": "removed %s from workspace %s" % (r.name, workspace)}
