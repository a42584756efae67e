from __future__ import annotations

import os
import sys

from .adapters import find_running_session
from .authors import NO_IDENTITY_FIX, hidden_list, hide, missing_identity, set_identity, whoami
from .brief import agent_command, brief
from .caches import BUILT_ONCE
from .capture import capture
from .cli_format import format_item, format_search, format_verify
from .demo import run_demo
from .doctor import doctor, format_doctor
from .errors import MissingSymbolError, UsageError
from .evaluation import format_eval_report, run_retrieval_eval
from .exporting import export_evidence
from .freshness import _plural
from .git import git_toplevel
from .helpers import is_tty, printable_path, shell_command, short_sha, split_claim, utc_now
from .hooks import (
    HOOK_AGENTS,
    hook_fixes,
    hook_status,
    install_hook,
    run_brief_hook,
    run_import_hook,
    uninstall_hook,
)
from .importing import import_evidence
from .items import (
    confirm,
    forget,
    get_evidence,
    get_session,
    list_sessions,
    retract,
    supersede,
    verify,
    verify_exit_code,
)
from .manifests import accept_suggestion, decline_suggestion, suggest_relations
from .records import resolve_repo
from .report import ReportServer, render_report_html, workspace_report
from .repos import (
    _workspace_id,
    add_to_workspace,
    delete_workspace,
    list_relations,
    list_repos,
    list_workspaces,
    register_repo,
    relate,
    remove_from_workspace,
    remove_repo,
    rename_repo,
    show_workspace,
    unrelate,
)
from .search import search
from .sessions import (
    COMMIT_FROM_IMPORT,
    COMMIT_FROM_SESSION,
    ImportInterrupted,
    import_transcripts,
    session_activity,
    sessions_touching,
)
from .store import open_store, schema_version
from .sync import _sync_get, _sync_set, check_sync_remote, sync_memory
from .untrusted import UNTRUSTED_NOTICE, json_text, terminal_text

# ----------------------------------------------------------------------------------------------
# CLI: commands (each cmd_x(args, store) -> exit code; its docstring is its help)
# ----------------------------------------------------------------------------------------------


def emit(args, data, text):
    """Print a command's result: JSON, or text passed through terminal_text (it quotes recorded
    text, file names and commit subjects, none of which may drive the terminal or an agent)."""
    if getattr(args, "json", False):
        sys.stdout.write(json_text(data) + "\n")
    elif text:
        sys.stdout.write(terminal_text(text) + "\n")


def warn(warnings):
    """Print each warning on stderr, one line each, through terminal_text as results are."""
    for w in warnings:
        sys.stderr.write("wctx: warning: %s\n" % terminal_text(w))


def cmd_init(args, store):
    """Create the store (in --home, $WCTX_HOME or ~/.wctx). Example: wctx init"""
    emit(
        args,
        {"store": store.path, "schema": schema_version(store)},
        "store ready at %s (schema %d)" % (store.path, schema_version(store)),
    )
    return 0


def cmd_doctor(args, store):
    """Check Python, SQLite and FTS5, git, the store and its schema, write access, registered
    repositories missing on disk, the current repository and its workspaces, and print the exact
    MCP command line for this file. Changes nothing. Exit 0 when healthy, 1 otherwise.

    Example: wctx doctor --json
    """
    report = doctor(args.home)
    emit(args, report, format_doctor(report))
    return 0 if report["healthy"] else 1


def cmd_repo_add(args, store):
    """Register a git checkout. A linked worktree or a second clone (same root commit and remote)
    of a registered repository becomes a checkout of it; --same-as NAME says so explicitly. A
    repository registered before comes back with its evidence and relations.

    Example: wctx repo add ../upload-sdk --workspace uploads
    """
    res = register_repo(store, args.path, name=args.name, workspace=args.workspace, same_as=args.same_as)
    suggested = suggest_relations(store, repo=res["repo"]["name"])
    res["suggested"] = [s.as_dict() for s in suggested]
    text = res["message"]
    if suggested:
        text += "\n%d relation%s suggested by the manifests (%s); review them: wctx relate --suggest" % (
            len(suggested),
            "" if len(suggested) == 1 else "s",
            ", ".join("%s %s %s" % (s.from_repo.name, s.kind, s.to_repo.name) for s in suggested[:3]),
        )
    emit(args, res, text)
    return 0


def cmd_repo_list(args, store):
    """List registered repositories and their checkouts. Example: wctx repo list"""
    repos = list_repos(store)
    lines = []
    for r in repos:
        lines.append(
            "%-20s %s%s%s"
            % (
                r["name"],
                r["path"],
                "  [" + ", ".join(r["workspaces"]) + "]" if r["workspaces"] else "",
                "" if r["exists"] else "  (missing on disk)",
            )
        )
        for c in r["checkouts"][1:]:
            lines.append(
                "%-20s   %s %s%s" % ("", c["kind"], c["path"], "" if c["exists"] else "  (missing on disk)")
            )
    emit(args, {"repos": repos}, "\n".join(lines) or "no repositories registered (wctx repo add PATH)")
    return 0


def cmd_repo_remove(args, store):
    """Unregister a repository, or one checkout of it given by path; its evidence, relations and
    workspaces are kept, dormant, until it is registered again. Example: wctx repo remove upload-sdk"""
    res = remove_repo(store, args.name)
    emit(args, res, res["message"])
    return 0


def cmd_repo_rename(args, store):
    """Rename a registered repository; its evidence and relations follow. Example: wctx repo rename upload-sdk sdk"""
    res = rename_repo(store, args.old, args.new)
    emit(args, res, res["message"])
    return 0


def cmd_workspace_list(args, store):
    """List workspaces and their repositories. Example: wctx workspace list"""
    ws = list_workspaces(store)
    text = (
        "\n".join("%-20s %s" % (w["name"], ", ".join(w["repos"]) or "(empty)") for w in ws)
        or "no workspaces yet"
    )
    emit(args, {"workspaces": ws}, text)
    return 0


def cmd_workspace_show(args, store):
    """Show one workspace: repositories, relations, evidence counts. Example: wctx workspace show uploads"""
    ws = show_workspace(store, args.name)
    lines = ["workspace %s" % ws["name"]]
    for r in ws["repos"]:
        lines.append(
            "  %-20s %s  (%s)%s"
            % (r["name"], r["path"], _plural(r["evidence"], "item"), "" if r["exists"] else " missing")
        )
    for rel in ws["relations"]:
        lines.append("  %s %s %s" % (rel["from"], rel["kind"], rel["to"]))
    emit(args, ws, "\n".join(lines))
    return 0


def cmd_workspace_add(args, store):
    """Put a registered repository in a workspace; a new workspace needs --create.

    Example: wctx workspace add uploads docs-ui
    """
    res = add_to_workspace(store, args.workspace, args.repo, create=args.create)
    emit(args, res, res["message"])
    return 0


def cmd_workspace_remove(args, store):
    """Take a repository out of a workspace, or delete the workspace when no repository is named
    (its repositories stay registered). Example: wctx workspace remove uploads docs-ui"""
    if args.repo:
        res = remove_from_workspace(store, args.workspace, args.repo)
    else:
        res = delete_workspace(store, args.workspace)
    emit(args, res, res["message"])
    return 0


def cmd_relate(args, store):
    """Declare that one repository relates to another, or review the relations the repositories'
    manifests suggest (--suggest): each is declared only on --yes or a yes at the terminal, and
    one declined (--no, or no at the terminal) is not suggested again.

    Example: wctx relate docs-ui uses upload-sdk
    """
    if args.suggest:
        if args.from_repo or args.kind or args.to_repo or args.remove or args.note:
            raise UsageError("relate --suggest takes no FROM KIND TO, --note or --remove")
        if args.yes and args.no:
            raise UsageError("--yes and --no contradict each other")
        return _review_suggestions(args, store)
    if args.yes or args.no:
        raise UsageError("--yes and --no go with --suggest")
    if not (args.from_repo and args.kind and args.to_repo):
        raise UsageError("relate needs FROM KIND TO (or --suggest)")
    if args.remove:
        res = unrelate(store, args.from_repo, args.kind, args.to_repo)
    else:
        res = relate(store, args.from_repo, args.kind, args.to_repo, note=args.note)
    emit(args, res, res["message"])
    return 0


def _answered_suggestions(args, suggestions, interactive):
    """(lines still to print, declared, declined): each suggestion with its reasons, declared or
    declined as --yes or --no says, or as answered at the terminal (q stops asking)."""
    lines, declared, declined = [], [], []
    for s in suggestions:
        lines.append("suggested: %s %s %s" % (s.from_repo.name, s.kind, s.to_repo.name))
        lines.extend("  because %s" % e for e in s.evidence)
        if interactive:
            sys.stdout.write("\n".join(lines) + "\n")
            lines = []
            answer = input("declare it? [y/N/q] ").strip().lower()
            if answer == "q":
                break
            (declared if answer in ("y", "yes") else declined).append(s)
        elif args.yes:
            declared.append(s)
        elif args.no:
            declined.append(s)
    return lines, declared, declined


def _review_suggestions(args, store):
    suggestions = suggest_relations(store)
    interactive = not (args.yes or args.no or args.json) and is_tty(sys.stdin) and is_tty(sys.stdout)
    lines, declared, declined = _answered_suggestions(args, suggestions, interactive)
    for s in declared:
        lines.append(accept_suggestion(store, s)["message"] + " (declared)")
    for s in declined:
        lines.append(decline_suggestion(store, s)["message"])
    if not suggestions:
        lines.append("no relations suggested: every dependency the manifests declare between registered "
                     "repositories is declared or declined")  # fmt: skip
    elif not (declared or declined or interactive):
        lines.append(
            "nothing declared: run wctx relate --suggest --yes to declare these (or --no to decline them)"
        )
    emit(
        args,
        {
            "suggestions": [s.as_dict() for s in suggestions],
            "declared": [s.as_dict() for s in declared],
            "declined": [s.as_dict() for s in declined],
        },
        "\n".join(lines),
    )
    return 0


def cmd_relations(args, store):
    """List declared relations. Example: wctx relations --repo upload-sdk"""
    rels = list_relations(store, args.repo)
    text = (
        "\n".join(
            "%s %s %s%s" % (r["from"], r["kind"], r["to"], "  (%s)" % r["note"] if r["note"] else "")
            for r in rels
        )
        or "no relations declared (wctx relate FROM KIND TO)"
    )
    emit(args, {"relations": rels}, text)
    return 0


@BUILT_ONCE
def _ordered_action():
    # argparse classes are made on first use: importing argparse is ~1.5 ms that --version skips.
    import argparse

    class _Ordered(argparse.Action):
        """Keeps capture's flags in the order typed, so --repo/--file/--confidence attach to the item
        flag before them."""

        def __call__(self, parser, namespace, values, option_string=None):
            ordered = getattr(namespace, "ordered", None) or []
            ordered.append((self.dest, values))
            namespace.ordered = ordered

    return _Ordered


ITEM_FLAGS = {
    "finding": "finding",
    "decision": "decision",
    "dead_end": "dead_end",
    "question": "question",
    "constraint": "constraint",
    "known_issue": "known_issue",
    "note": "note",
}


def items_from_flags(ordered):
    """Turn ordered (flag, value) pairs into capture items. --repo, --file, --depends-on and
    --confidence after an item flag belong to that item; before the first item flag they are
    defaults for all items. --symptom describes the one item before it, so it has no default."""
    defaults = {"repo": None, "files": [], "depends_on": [], "confidence": None}
    items = []
    for dest, value in ordered:
        if dest == "symptom":
            if not items:
                raise UsageError(
                    "--symptom describes the item flag before it (--finding, --note, ...); give one first"
                )
            if "symptom" in items[-1]:
                raise UsageError("item %d has two --symptom; give it one" % len(items))
            if not value.strip():
                raise UsageError("--symptom is empty: say how the problem shows itself, or leave it out")
            items[-1]["symptom"] = value
        elif dest in ITEM_FLAGS:
            claim, detail = split_claim(value)
            items.append(
                {
                    "kind": ITEM_FLAGS[dest],
                    "claim": claim,
                    "detail": detail,
                    "repo": None,
                    "files": [],
                    "depends_on": [],
                    "confidence": None,
                }
            )
        else:
            target = items[-1] if items else defaults
            if dest == "file":
                target["files"].append(value)
            elif dest == "depends_on":
                target["depends_on"].append(value)
            else:
                target[dest] = value
    for item in items:
        item["repo"] = item["repo"] or defaults["repo"]
        item["files"] = defaults["files"] + item["files"]
        item["depends_on"] = defaults["depends_on"] + item["depends_on"]
        if item["confidence"] is None:
            item["confidence"] = defaults["confidence"]
    return items


def cmd_capture(args, store):
    """Record what this session learned, attached to the repository it is about.

    Example:
      wctx capture --summary "traced the upload failure into the SDK" \\
        --finding "SDK swallows the 419 :: returns it terminal, no retry" \\
        --repo my-sdk --symptom "uploads fail once the page sat open a while; a retry by hand works" \\
        --file "src/upload/upload.ts#uploadDocument"

    --repo, --file, --depends-on and --confidence after an item flag (--finding, --decision,
    --dead-end, --question, --constraint, --known-issue, --note) belong to that item; given before
    the first item flag they apply to every item. "claim :: detail" splits the claim from its
    detail. --symptom, after an item flag, says how the problem shows itself to someone who has not
    found the cause (their words): searches use it as the asker's vocabulary. What a cited symbol
    calls in related repositories is read at capture; --depends-on REPO:PATH#SYMBOL names a
    dependency no reading finds.

    Without --session, run inside a Claude Code or Codex session, the items join that session
    (found by CLAUDE_CODE_SESSION_ID, CODEX_THREAD_ID, or for older Claude Code the newest
    transcript of the cwd; see: wctx sessions); elsewhere a new session starts, and it says so.
    """
    ordered = getattr(args, "ordered", None) or []
    for dest, value in ordered + [
        ("summary", args.summary),
        ("session", args.session),
        ("agent", args.agent),
    ]:
        # Given, so it must say something (an item flag's empty claim is refused as such, below).
        if value is not None and not value.strip() and dest not in ITEM_FLAGS:
            raise UsageError("--%s is empty: give it a value, or leave it out" % dest.replace("_", "-"))
    items = items_from_flags(ordered)
    agent, external_id, found = args.agent, None, None
    if not args.session and agent == "cli":
        found = find_running_session(os.getcwd())
        if found:
            agent, external_id = found["agent"], found["external_id"]
    try:
        res = capture(
            store, items, summary=args.summary, session_id=args.session, agent=agent, external_id=external_id,
            allow_missing_symbol=args.allow_missing_symbol,
        )  # fmt: skip
    except MissingSymbolError as e:
        raise MissingSymbolError("%s; or keep it as typed: --allow-missing-symbol" % e) from None
    warn(res["warnings"])
    if args.session:
        res["attached"] = None
        note = ""
    elif found:
        res["attached"] = {"agent": found["agent"], "external_id": found["external_id"], "how": found["how"]}
        note = " (the running %s session %s, found by %s)" % (
            found["agent"],
            found["external_id"],
            found["how"],
        )
    else:
        res["attached"] = None
        note = " (new: no running agent session found)"
    text = "\n".join(
        ["session %s%s" % (res["session"], note)]
        + [
            "%s %s %s%s"
            % (
                e["id"],
                e["kind"],
                e["repo"],
                " (%s)" % e["message"].split(": ", 1)[1] if e["duplicate"] else "",
            )
            for e in res["evidence"]
        ]
    )
    emit(
        args,
        {
            "session": res["session"],
            "evidence": res["evidence"],
            "warnings": res["warnings"],
            "attached": res["attached"],
        },
        text,
    )
    return 0


def cmd_search(args, store):
    """Search evidence from the current repository outward. Example: wctx search "upload 419 retry" """
    res = search(
        store,
        " ".join(args.query),
        repo=args.repo,
        limit=args.limit,
        kinds=args.kind,
        all_scope=args.all,
        rank=args.rank,
        include_inactive=args.all_status,
        workspace=args.workspace,
        author=args.author,
        include_hidden=args.include_hidden,
        all_matches=args.all_matches,
    )
    emit(args, res, format_search(res, detail=args.detail))
    return 0


def cmd_whoami(args, store):
    """Who this store records as (each new session is stamped with it, and teammates see it), where
    that comes from, and this machine's id. --set NAME changes it for later sessions (earlier ones
    keep theirs); --unset returns to git's user.name and user.email; WCTX_AUTHOR overrides both.

    Example: wctx whoami --set "Ada Lovelace <ada@example.com>"
    """
    if args.set is not None or args.unset:
        set_identity(store, None if args.unset else args.set)
    me = whoami(store)
    text = (
        "%s (from %s), machine %s" % (me["author"], me["source"], me["machine"])
        if me["author"]
        else (
            'no identity: set git\'s user.name and user.email, or wctx whoami --set "Name <email>"; machine %s'
            % me["machine"]
        )
    )
    emit(args, me, text)
    return 0


def cmd_hide(args, store):
    """Keep an item, or everything one author recorded, out of your own searches and briefings.
    Nothing is deleted, nothing travels to teammates; wctx unhide brings it back, wctx hide --list
    shows what is hidden, and wctx search --include-hidden searches it too.

    Example: wctx hide ev-3f9a
             wctx hide --author "mallory@example.com"
    """
    if args.list:
        if args.ids or args.author:
            raise UsageError("--list takes no ids and no --author")
        rows = hidden_list(store)
        text = "\n".join(
            "%s %s (%s, hidden %s)"
            % (r["kind"], r["value"], _plural(r["items"], "item"), r["created_at"][:10])
            for r in rows
        )
        emit(args, {"hidden": rows}, text or "nothing hidden")
        return 0
    return _hide_or_unhide(args, store, undo=False)


def cmd_unhide(args, store):
    """Bring back into your own searches and briefings what wctx hide kept out.

    Example: wctx unhide ev-3f9a
             wctx unhide --author "mallory@example.com"
    """
    return _hide_or_unhide(args, store, undo=True)


def _hide_or_unhide(args, store, undo):
    changed = hide(store, args.ids, args.author, undo=undo)
    verb = "shown again" if undo else "hidden"
    text = (
        "\n".join("%s %s: %s" % (kind, value, verb) for kind, value in changed)
        or "nothing changed (already %s)" % verb
    )
    emit(args, {"changed": [{"kind": k, "value": v} for k, v in changed], "action": verb}, text)
    return 0


def cmd_show(args, store):
    """Show one evidence item in full, with provenance and live freshness. Example: wctx show ev-3f9a"""
    item = get_evidence(store, args.id)
    emit(args, item, format_item(item))
    return 0


def cmd_verify(args, store):
    """Check whether what items cite changed since capture. Exit 1 when an item is stale or unknown.

    Example: wctx verify --about upload-sdk     (no ids: every active item in the current scope)

    possibly_stale alone (an item citing no file whose repository moved on) exits 0 unless
    --strict. Items citing no file are summarised per repository; --all lists them one by one.
    """
    res = verify(store, args.ids or None, repo=args.repo, about=args.about)
    emit(args, res, format_verify(res, list_all=args.all or bool(args.ids), detail=args.detail))
    return verify_exit_code(res, strict=args.strict)


def _commit_label(repo):
    """How sure we are of a repository's commit for a session, said plainly."""
    if repo["commit_source"] == COMMIT_FROM_SESSION:
        return "commit %s (recorded by the agent at session start)" % short_sha(repo["commit"])
    if repo["commit_source"] == COMMIT_FROM_IMPORT:
        return "HEAD at import %s (the session recorded no commit for this repository)" % short_sha(
            repo["commit"]
        )
    return "commit unknown (repository not on this machine)"


def format_session(res, limit=20):
    s, act = res["session"], res.get("activity")
    lines = [
        "session %s  %s%s"
        % (s["id"], s["agent"], "  (%s)" % s["external_id"] if s.get("external_id") else ""),
        UNTRUSTED_NOTICE,
    ]
    if act and act.get("title"):
        lines.append("title:    " + act["title"])
    if s.get("summary"):
        lines.append("summary:  " + s["summary"])
    lines.append(
        "ran in:   %s  (%s, branch %s)"
        % (
            s["cwd"] or "?",
            "repo " + s["repo"] if s["repo"] else "no registered repository",
            s["branch"] or "?",
        )
    )
    lines.append("time:     %s .. %s" % (s["started_at"] or "?", s["ended_at"] or "?"))
    if act:
        lines.extend(_activity_lines(s, act, limit))
    lines.append("evidence (%d):" % len(res["evidence"]))
    for e in res["evidence"]:
        lines.append("  %s [%s] %s (%s)" % (e["id"], e["kind"], e["claim"], e["repo"]))
    live = (act or {}).get("live_evidence") or []
    if live:
        lines.append("recorded live through wctx's MCP server (%d):" % len(live))
        for e in live:
            lines.append(
                "  %s [%s] %s (%s; in session %s)" % (e["id"], e["kind"], e["claim"], e["repo"], e["session"])
            )
    return "\n".join(lines)


def _activity_lines(s, act, limit):
    """What a session's transcript says it did: where it ran, the repositories, files and
    commands it touched, its tool calls, errors and subagents (``limit`` of each list)."""
    lines = [
        "transcript: %s  (%s %s, %d lines, %d unparsable, imported %s)"
        % (
            act["transcript"],
            s["agent"],
            act["agent_version"] or "?",
            act["lines"],
            act["unparsable_lines"],
            act["imported_at"],
        )
    ]
    if len(act["cwds"]) > 1:
        lines.append(
            "cwd changes: %d  (%s)"
            % (len(act["cwds"]) - 1, " -> ".join(act["cwds"][:6]) + (" …" if len(act["cwds"]) > 6 else ""))
        )
    lines.append("repositories:")
    lines.extend(_repo_activity_line(r) for r in act["repos"] or ())
    if not act["repos"]:
        lines.append("  (none registered)")
    lines.extend(_file_lines(act["files"], limit))
    lines.extend(_command_lines(act, limit))
    if act["tool_calls"]:
        top = sorted(act["tool_calls"].items(), key=lambda kv: (-kv[1], kv[0]))
        lines.append("tool calls: " + ", ".join("%s %d" % kv for kv in top))
    if act["errors"]:
        lines.append("tool errors (%d):" % len(act["errors"]))
        for e in act["errors"][:limit]:
            lines.append("  %s: %s" % (e["tool"], e["error"][:160]))
    if act["subagents"]:
        lines.append(
            "subagents (%d): %s"
            % (
                len(act["subagents"]),
                ", ".join(
                    "%s%s (%d tool calls)"
                    % (a["id"], " " + a["type"] if a.get("type") else "", a["tool_calls"])
                    for a in act["subagents"]
                ),
            )
        )
    return lines


def _repo_activity_line(r):
    branch = ""
    if r["branch"]:
        branch = "  branch %s%s" % (
            r["branch"],
            " (at import)" if r["branch_source"] == COMMIT_FROM_IMPORT else "",
        )
    return "  %s%s  %d read, %d edited, %d commands  %s%s" % (
        r["repo"],
        " (ran here)" if r["ran_here"] else "",
        r["reads"],
        r["edits"],
        r["commands"],
        _commit_label(r),
        branch,
    )


def _file_lines(files, limit):
    """The files a session touched, in registered repositories and (if any) outside them."""
    lines = []
    inside = [f for f in files if f["repo"]]
    outside = [f for f in files if not f["repo"]]
    for title, group in (
        ("files in registered repositories", inside),
        ("outside every registered repository", outside),
    ):
        if not group and title.startswith("outside"):
            continue
        lines.append("%s (%d):" % (title, len(group)))
        for f in group[:limit]:
            where = "%s:%s" % (f["repo"], f["path"]) if f["repo"] else f["path"]
            lines.append("  %s  read %d, edited %d" % (where, f["reads"], f["edits"]))
        if len(group) > limit:
            lines.append("  … %d more (--json for all)" % (len(group) - limit))
    return lines


def _command_lines(act, limit):
    withheld = act.get("commands_withheld") or 0
    if withheld:
        lines = [
            "commands (%d stored, %d withheld: the transcript holds them as redaction placeholders "
            "such as [REDACTED…], or empty, so there was no command to keep):"
            % (len(act["commands"]), withheld)
        ]
    else:
        lines = ["commands (%d):" % len(act["commands"])]
    for c in act["commands"][:limit]:
        text = c["command"].splitlines()[0] if c["command"] else ""
        lines.append("  $ %s%s" % (text[:160], "  [%s]" % c["repo"] if c["repo"] else ""))
    if len(act["commands"]) > limit:
        lines.append("  … %d more (--json for all)" % (len(act["commands"]) - limit))
    return lines


def format_import(res):
    lines = []
    for r in res["results"]:
        if r["status"] in ("unchanged", "empty"):
            lines.append("%s  %s  %s" % (r["session"] or "-", r["status"], r["transcript"]))
            continue
        lines.append(
            "%s  %s  %s %s: %d files read, %d edited (%d outside repos), %d commands, %d tool errors, %d subagents%s%s"
            % (
                r["session"],
                r["status"],
                r["agent"],
                r["external_id"],
                r["files"]["read"],
                r["files"]["edited"],
                r["files"]["outside"],
                r["commands"],
                r["errors"],
                r["subagents"],
                ", %d evidence" % len(r["evidence"]) if r["evidence"] else "",
                ", %d unparsable lines" % r["bad_lines"] if r["bad_lines"] else "",
            )
        )
        lines.append("    %s" % r["transcript"])
    for f in res["failed"]:
        lines.append("failed  %s: %s" % (f["transcript"], f["error"]))
    return "\n".join(lines) or "no transcripts found"


def cmd_import(args, store):
    """Import Claude Code, Codex and Gemini CLI session transcripts: what each session did, per
    repository.

    Where each session ran, which files of which repositories it read and edited, the commands it
    ran, with provenance per repository. Findings are never guessed from the transcript's prose;
    only explicit record_evidence calls become evidence.

    Examples:
      wctx import ~/.claude/projects/-home-me-src-app/0ccf1a04-….jsonl
      wctx import ~/.codex/sessions/2026/03/02          (every rollout below, progress on stderr)
      wctx import --hook        (what agent hooks run: the hook's JSON on stdin; never fails, logs to $WCTX_HOME/hooks.log)
    """
    if args.hook:
        return run_import_hook(args.home)
    if not args.paths:
        raise UsageError("give transcript files or directories to import (or --hook)")
    show = not args.json and is_tty(sys.stderr)

    def progress(done, total, path):
        if show and total > 3:
            sys.stderr.write("\rimporting %d/%d %s\x1b[K" % (done, total, os.path.basename(path)[:60]))
            if done == total:
                sys.stderr.write("\n")

    own = open_store(args.home)
    try:
        res = import_transcripts(own, args.paths, agent=args.agent, force=args.force, progress=progress)
    except ImportInterrupted as stop:
        done = [r["status"] for r in stop.results]
        sys.stderr.write(
            "%swctx: interrupted after %d of %d transcripts: %d imported, %d unchanged, %d failed; what was "
            "imported stays, the one under way left nothing: run the same command again to go on\n"
            % (
                "\n" if show else "",
                len(stop.results) + len(stop.failed),
                stop.total,
                sum(1 for s in done if s not in ("unchanged", "empty")),
                sum(1 for s in done if s in ("unchanged", "empty")),
                len(stop.failed),
            )
        )
        return 130
    finally:
        own.close()
    for r in res["results"]:
        warn(r.get("warnings") or ())
    emit(args, res, format_import(res))
    return 1 if res["failed"] else 0


def cmd_sessions(args, store):
    """List sessions, or show one with what it did per repository.

    Examples:
      wctx sessions                    (most recent first; --repo NAME for one repository's)
      wctx sessions show ses-1a2b      (agent, cwd, branch, time span, files per repo, commands, errors, evidence)
      wctx sessions --file src/upload.ts --repo upload-sdk   (sessions that read or edited it)
    """
    if args.action == "show":
        if not args.session_id:
            raise UsageError("sessions show needs a session id")
        res = get_session(store, args.session_id)
        res["activity"] = session_activity(store, res["session"]["id"])
        emit(args, res, format_session(res))
        return 0
    if args.session_id:
        raise UsageError(
            "unexpected argument %r (did you mean: wctx sessions show %s?)"
            % (args.session_id, args.session_id)
        )
    if args.file:
        res = sessions_touching(store, args.repo, args.file, limit=args.limit)
        text = "\n".join(
            "%s  %-11s %s %s:%s  %s%s"
            % (
                s["id"],
                s["agent"],
                "edited" if s["edits"] else "read",
                res["repo"],
                res["path"],
                s["ended_at"] or "",
                "  " + s["summary"][:60] if s["summary"] else "",
            )
            for s in res["sessions"]
        ) or "no imported session read or edited %s:%s" % (res["repo"], res["path"])
        warn(res["warnings"])
        emit(args, res, text)
        return 0
    sessions = list_sessions(store, repo=args.repo, limit=args.limit)
    ids = [s["id"] for s in sessions]
    counts = {}
    if ids:
        for row in store.all(
            "SELECT session_id, sum(reads > 0) AS r, sum(edits > 0) AS e FROM session_files WHERE session_id IN (%s) "
            "GROUP BY session_id" % ",".join("?" * len(ids)),
            ids,
        ):
            counts[row["session_id"]] = (row["r"], row["e"])
    for s in sessions:
        r, e = counts.get(s["id"], (0, 0))
        s["files_read"], s["files_edited"] = r, e
    text = (
        "\n".join(
            "%s  %-11s %-16s %3d items %3d edited  %s%s"
            % (
                s["id"],
                s["agent"],
                s["repo"] or "-",
                s["evidence"],
                s["files_edited"],
                s["ended_at"] or "",
                "  " + s["summary"][:60] if s["summary"] else "",
            )
            for s in sessions
        )
        or "no sessions yet"
    )
    emit(args, {"sessions": sessions}, text)
    return 0


def cmd_hooks(args, store):
    """Brief agents at session start and import their sessions at session end: install, remove or
    show the hooks of Claude Code, Codex and Gemini CLI.

    Examples:
      wctx hooks install claude-code   (SessionStart + SessionEnd in $CLAUDE_CONFIG_DIR/settings.json or ~/.claude/settings.json)
      wctx hooks install claude-code --allow-read-tools  (also lets claude -p use wctx's read-only MCP tools)
      wctx hooks install codex         (SessionStart + SessionEnd, or Stop before Codex 0.145, in ~/.codex/hooks.json)
      wctx hooks install gemini-cli    (SessionStart + SessionEnd in ~/.gemini/settings.json)
      wctx hooks install gemini        (an agent may be named as its program is: claude, codex, gemini)
      wctx hooks uninstall claude-code (removes exactly what install added)
      wctx hooks status                (--probe runs each installed command once, as doctor does)
    Installing is idempotent, prints the diff of the settings file, keeps the previous file as
    <settings>.wctx-backup, then runs each hook command once from a clean shell with a probe
    payload: exit 1 when one cannot run. The commands run this wctx as installed here.
    """
    if args.action == "status":
        res = hook_status(probe=args.probe, home=args.home)
        lines = [line for h in res for line in _hook_status_lines(h)]
        failed = [f for h in res for f in h["failed"]]
        lines.extend("fix: " + fix for fix in hook_fixes(res, _wctx_here(args)))
        emit(args, {"hooks": res}, "\n".join(lines))
        return 1 if failed else 0
    if not args.agent:
        raise UsageError("hooks %s needs an agent: %s" % (args.action, ", ".join(HOOK_AGENTS)))
    if args.action == "install":
        res = install_hook(
            args.agent,
            settings=args.settings,
            python=args.python,
            dry_run=args.dry_run,
            home=args.home,
            allow_read_tools=args.allow_read_tools,
        )
        head = _installed_head(res, args.dry_run)
        # Said where the hook is set up, as doctor says it: the sessions it imports carry no author.
        problem = missing_identity(home=args.home)
        if problem:
            warn(["%s; set one: %s" % (problem, NO_IDENTITY_FIX)])
    else:
        res = uninstall_hook(args.agent, settings=args.settings, dry_run=args.dry_run)
        head = _uninstalled_head(res, args.dry_run)
    emit(args, res, "\n".join([head] + _hook_change_lines(res)))
    return 1 if any(not p["ok"] for p in res.get("probes") or ()) else 0


def _hook_change_lines(res):
    """What an install or uninstall did to the settings file, and how each hook ran when probed."""
    parts = []
    if res.get("backup"):
        parts.append("previous file kept as " + res["backup"])
    if res.get("diff"):
        parts.append(res["diff"].rstrip("\n"))
    parts.extend("note: " + n for n in res.get("notes") or ())
    for p in res.get("probes") or ():
        parts.append(
            "probe %s: %s"
            % (
                p["event"],
                "ran from a clean shell" if p["ok"] else "FAILED, the hook cannot run: " + p["error"],
            )
        )
    return parts


def _hook_status_lines(h):
    """One agent's hooks: installed or not where, then how each is trusted, probed and served."""
    lines = [
        "%-12s %s  %s%s"
        % (
            h["agent"],
            ("installed (%s)" % ", ".join(h["commands"])) if h["installed"] else "not installed",
            h["settings"],
            "  (%s)" % h["problem"] if h.get("problem") else "",
        )
    ]
    for t in h.get("trust") or ():
        lines.append("  trust %-12s %s" % (t["event"], t["trust"].replace("untrusted", "not trusted")))
    for p in h.get("probes") or ():
        lines.append("  probe %-12s %s" % (p["event"], "ok" if p["ok"] else "FAILED: " + p["error"]))
    for server in (h.get("gemini_mcp") or {}).get("servers") or ():
        lines.append(
            "  mcp   %-12s gemini -p gets %s (%s)"
            % (server["name"], "its tools" if server["headless"] else "no wctx tools", server["why"])
        )
    return lines


def _installed_head(res, dry_run):
    head = "%s %s hooks in %s:" % (
        "would add" if dry_run and res["changed"] else ("added" if res["changed"] else "already present:"),
        " + ".join(res["events"]),
        res["settings"],
    )
    return head + "".join("\n  %-12s %s" % (event, cmd) for event, cmd in res["commands"].items())


def _uninstalled_head(res, dry_run):
    if not res["removed"]:
        head = "no wctx hook in %s; nothing changed" % res["settings"]
    else:
        head = "%s %d wctx hook%s from %s" % (
            "would remove" if dry_run else "removed",
            res["removed"],
            "" if res["removed"] == 1 else "s",
            res["settings"],
        )
    if res.get("permissions_removed"):
        head += "\n%s from permissions.allow: %s" % (
            "would remove" if dry_run else "removed",
            ", ".join(res["permissions_removed"]),
        )
    return head


def _wctx_here(args):
    """How to spell wctx for this store in a suggested command: with --home when one was given."""
    return agent_command() + (" --home " + shell_command([os.path.abspath(args.home)]) if args.home else "")


def cmd_brief(args, store):
    """Print the session briefing for this repository: evidence recorded about it from other
    repositories since its last session, what related repositories' evidence says about the code
    being changed (recall by code reference), open questions and known issues nearby, items gone
    stale since last shown, and how to search and record. Labelled untrusted recorded history.

    Examples:
      wctx brief                                  (the repository of the cwd; 1,500 bytes at most)
      wctx brief --repo docs-ui --files src/App.tsx --max-bytes 3000
      wctx brief --hook claude-code               (what SessionStart hooks run: JSON in, the agent's JSON out)
    """
    if args.hook:
        return run_brief_hook(args.hook, args.home)
    own = open_store(args.home, create=False)  # a briefing only reads
    try:
        res = brief(
            own, repo=args.repo, files=args.files, max_bytes=args.max_bytes, max_tokens=args.max_tokens
        )
    finally:
        own.close()
    emit(args, res, res["text"])
    return 0


def cmd_confirm(args, store):
    """Say that you re-checked items against today's code: their anchors are re-stamped at each
    repository's current commit (the earlier provenance stays in their history, see: wctx show) and
    they read current again. An item whose cited file or symbol is gone is refused: supersede it.

    Example: wctx confirm ev-3f9a1c2b7d --note "re-read uploadDocument after the retry change"
    """
    res = confirm(store, args.ids, note=args.note, session_id=args.session)
    warn(res["warnings"])
    emit(args, res, res["message"])
    return 0


def cmd_forget(args, store):
    """Delete items, or a whole session (--session), for good: their text leaves every byte of the
    store, and export carries a tombstone (the id and the reason, never the content) that deletes
    your own items on a teammate's machine too (a teammate's item is forgotten here only, and their
    machine is asked to). Asks on a terminal; elsewhere needs --yes.

    Example: wctx forget ev-3f9a1c2b7d --reason "held a customer's API key" --yes
    """
    if not args.ids and not args.session:
        raise UsageError("nothing to forget: give evidence ids or --session ID")
    if not args.yes:
        if not (is_tty(sys.stdin) and is_tty(sys.stderr)):
            raise UsageError("forget deletes for good; pass --yes to confirm (no terminal to ask on)")
        what = ", ".join(args.ids) + (
            ("; " if args.ids else "") + "session " + args.session if args.session else ""
        )
        sys.stderr.write("Forget %s for good? Its text is deleted and cannot be recovered. [y/N] " % what)
        sys.stderr.flush()
        if sys.stdin.readline().strip().lower() not in ("y", "yes"):
            sys.stderr.write("wctx: nothing forgotten\n")
            return 1
    res = forget(store, args.ids, session=args.session, reason=args.reason)
    warn(res["warnings"])
    emit(args, res, res["message"])
    return 0


def cmd_retract(args, store):
    """Mark an item retracted (kept, hidden from default search). Example: wctx retract ev-3f9a"""
    res = retract(store, args.id)
    emit(args, res, res["message"])
    return 0


def cmd_supersede(args, store):
    """Mark an item replaced by a newer one. Example: wctx supersede ev-old --by ev-new"""
    res = supersede(store, args.old, args.by)
    emit(args, res, res["message"])
    return 0


def cmd_export(args, store):
    """Export evidence as JSONL with stable ids: to stdout, or one file per session into --dir
    (commit that directory to a shared git repository; files never collide, merges never conflict).

    Example: wctx export --dir ../team-memory/wctx
    """
    if args.dir:
        counts = export_evidence(store, out_dir=args.dir, repo=args.repo)
        text = "exported %d items from %d sessions and %d topology records to %s (%d files written)" % (
            counts["evidence"],
            counts["sessions"],
            counts["topology"],
            args.dir,
            counts["files"],
        )
        emit(args, counts, text)
    else:
        export_evidence(store, stream=sys.stdout, repo=args.repo)
    return 0


def _refused_lines(refusals):
    """One line per reason an import refused records for (import-evidence, sync): nothing of
    another machine's items changes here, and the user hears what was asked."""
    return [
        "refused %d: %s" % (n, why) for why, n in sorted(refusals.items(), key=lambda kv: (-kv[1], kv[0]))
    ]


def cmd_import_evidence(args, store):
    """Import evidence exported by wctx export (files or directories of .jsonl), idempotently: ids
    already present are skipped; a newer status (superseded, retracted) is taken over.

    Example: wctx import-evidence ../team-memory/wctx
    """
    counts = import_evidence(store, args.paths)
    text = "imported %d items and %d sessions (%d updated, %d already present)" % (
        counts["evidence"], counts["sessions"], counts["updated"], counts["unchanged"])  # fmt: skip
    if counts["duplicates"]:
        text += (
            "; %d repeated an item already here (kept as one, seen by the imported session)"
            % counts["duplicates"]
        )
    if counts["forgotten"]:
        text += "; %d skipped: forgotten on this machine" % counts["forgotten"]
    if counts["relations"] or counts["memberships"]:
        text += "; %d relations and %d workspace memberships added" % (
            counts["relations"],
            counts["memberships"],
        )
    if counts["waiting"]:
        text += (
            "; %d wait for repositories not registered here (restored by wctx repo add)" % counts["waiting"]
        )
    text = "\n".join([text] + _refused_lines(counts["refusals"]))
    emit(args, counts, text)
    return 0


def cmd_sync(args, store):
    """Share memory with the team through a git repository: fetch its branch, import what is new,
    export this store's records, commit and push (retried when another machine pushed first).
    The first call's --remote and --branch are remembered; later calls need no arguments.

    Example: wctx sync --remote git@example.com:team/memory.git
             wctx sync --auto on
    """
    if args.auto is not None:
        remote = check_sync_remote(args.remote) if args.remote else _sync_get(store, "remote")
        if args.auto == "on" and remote is None:
            raise UsageError("automatic sync needs a remote: wctx sync --remote URL|PATH --auto on")
        _sync_set(store, "auto", args.auto)
        if not args.remote:
            text = "automatic sync after each imported session: %s%s" % (
                args.auto,
                " (remote %s)" % remote if remote else "",
            )
            emit(args, {"auto": args.auto, "remote": remote}, text)
            return 0
    report = sync_memory(store, remote=args.remote, branch=args.branch)
    lines = [
        "synced with %s (branch %s%s)%s"
        % (
            report.remote,
            report.branch,
            "; workspaces %s" % ", ".join(report.workspaces) if report.workspaces else "",
            ": nothing new" if report.noop else "",
        )
    ]
    if not report.noop:
        lines.append(
            "imported %d items and %d sessions from %d files (%d updated); exported %d files%s"
            % (
                report.imported["evidence"], report.imported["sessions"], report.imported["files"],
                report.imported["updated"], report.exported["files"],
                ", pushed %s" % report.pushed if report.pushed else ", nothing to push",
            )
        )  # fmt: skip
    if report.from_whom:
        lines.append(
            "new items by: "
            + ", ".join(
                "%s %d" % (who, n) for who, n in sorted(report.from_whom.items(), key=lambda x: -x[1])
            )
        )
    if report.elsewhere:
        lines.append(
            "not pulled: the workspaces %s (none of your repositories is in them; wctx workspace add WS REPO "
            "joins one)" % ", ".join(report.elsewhere)
        )
    lines += _refused_lines(report.refused)
    lines += ["skipped %s" % reason for reason in report.skipped]
    emit(args, report.as_dict(), "\n".join(lines))
    return 0


def cmd_demo(args, store):
    """Run the whole loop in a throwaway directory: two repos, a cross-repo finding, search, an
    edit that makes it stale. Needs git only. Example: wctx demo"""
    return run_demo(sys.stdout, keep_dir=args.keep)


def format_report_summary(report):
    lines = [
        "%s: %s, %s"
        % (
            report.title,
            _plural(len(report.repos), "repository", "repositories"),
            _plural(len(report.relations), "relation"),
        )
    ]
    for repo in report.repos:
        c = report.counts.get(repo["name"], {})
        lines.append(
            "  %-24s %10s  %3d stale  %3d possibly stale  %3d unknown"
            % (
                repo["name"],
                _plural(c.get("items", 0), "item"),
                c.get("stale", 0),
                c.get("possibly_stale", 0),
                c.get("unknown", 0),
            )
        )
    lines.append("for the page: wctx report --html -o report.html (or live: wctx serve)")
    return "\n".join(lines)


def cmd_report(args, store):
    """The workspace at a glance: with --html, one self-contained page (graph, evidence by
    repository and kind, verdicts, open questions, a filter) that loads nothing from anywhere.

    Example: wctx report --html -o report.html     (then open report.html in a browser)
    """
    report = workspace_report(store, args.workspace)
    if not args.html:
        emit(
            args,
            {
                "title": report.title,
                "repos": report.repos,
                "relations": report.relations,
                "counts": report.counts,
            },
            format_report_summary(report),
        )
        return 0
    page = render_report_html(report, generated_at=utc_now())
    if not args.output or args.output == "-":
        sys.stdout.write(page)
        return 0
    target = os.path.abspath(args.output)
    if os.path.isdir(target):
        raise UsageError("%s is a directory; name the file to write" % printable_path(args.output))
    tmp = "%s.%d.tmp" % (target, os.getpid())
    try:
        with open(tmp, "w", encoding="utf-8", errors="replace", newline="\n") as fh:
            fh.write(page)
        os.replace(tmp, target)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise UsageError("cannot write %s: %s" % (printable_path(args.output), e.strerror or e)) from None
    sys.stdout.write(
        "wrote %s (%s, %d kB)\n"
        % (
            printable_path(args.output),
            _plural(len(report.items), "item"),
            (len(page.encode("utf-8")) + 1023) // 1024,
        )
    )
    return 0


def cmd_serve(args, store):
    """Serve the report page live on 127.0.0.1, read-only, behind a random token; Ctrl-C stops.

    Example: wctx serve --port 8765     (then open the URL it prints)
    """
    server = ReportServer(store, workspace=args.workspace, port=args.port)
    sys.stdout.write(
        "wctx: serving %s at %s (read-only, this machine only; Ctrl-C stops)\n"
        % ("workspace " + args.workspace if args.workspace else "every repository", server.url)
    )
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.stdout.write("wctx: stopped\n")
    return 0


def _mcp_module():
    # Imported only by the commands that need it, so other commands start without it.
    import wctx_mcp

    return wctx_mcp


def cmd_mcp(args, store):
    """Serve wctx to agents over MCP on stdin/stdout (the store opens on first use).

    Example: wctx mcp --repo my-sdk     (clients normally start this for you; see wctx mcp-info)
    """
    argv = (["--repo", args.repo] if args.repo else []) + (
        ["--workspace", args.workspace] if args.workspace else []
    )
    if args.text_only:
        argv.append("--text-only")
    return _mcp_module().main(argv, core=sys.modules[__name__], home=args.home)


def cmd_mcp_info(args, store):
    """Print the MCP tool surface and configuration snippets for Claude Code, Codex, Cursor, VS Code,
    Claude Desktop and Gemini CLI, with this file's absolute path filled in. Example: wctx mcp-info"""
    if args.repo or args.workspace:
        # Snippets for a repository or workspace that does not exist would start a server that
        # fails on every call: check them against the store (never created here).
        checked = open_store(args.home, create=False)
        try:
            if args.repo:
                resolve_repo(checked, args.repo)
            if args.workspace:
                _workspace_id(checked, args.workspace, create=False)
        finally:
            checked.close()
    mcp = _mcp_module()
    info = mcp.mcp_info(core=sys.modules[__name__], repo=args.repo, workspace=args.workspace, home=args.home)
    emit(args, info, mcp.format_mcp_info(info).rstrip("\n"))
    return 0


def cmd_instructions(args, store):
    """Print guidance for agents on when to search and what to record; --write installs it in the
    repository's CLAUDE.md, AGENTS.md and GEMINI.md (a marked block, replaced in place on later runs),
    naming the command that runs wctx on this machine.

    Example: wctx instructions --write
    """
    mcp = _mcp_module()
    if not args.write:
        emit(
            args,
            {"instructions": mcp.guidance_text(agent_command()), "mcp_instructions": mcp.INSTRUCTIONS},
            mcp.guidance_text(agent_command()).rstrip("\n"),
        )
        return 0
    root = git_toplevel(os.getcwd())
    if root is None:
        raise UsageError(
            "%s is not inside a git checkout; run wctx instructions --write in the repository" % os.getcwd()
        )
    try:
        res = mcp.write_instructions(root, command=agent_command())
    except (ValueError, OSError) as e:  # a guidance file that is a symlink out, a FIFO, not UTF-8
        raise UsageError(str(e)) from None
    emit(args, res, "\n".join("%s %s" % (f["action"], f["path"]) for f in res["files"]))
    return 0


def cmd_eval_retrieval(args, store):
    """Measure retrieval: build the judged corpus (real git repos, real captures, real history) in a
    temporary directory, run every query with --rank fts and --rank topology (and both with --all),
    and report hit@1, hit@5, MRR, nDCG@10, recall@10, attribution, pollution and p50 latency,
    overall and per query category. Example: wctx eval retrieval --json"""
    progress = None
    if is_tty(sys.stderr):

        def progress(text):
            sys.stderr.write("\r%-72s" % text[:72])
            sys.stderr.flush()

    try:
        report = run_retrieval_eval(args.corpus, progress=progress)
    finally:
        if progress is not None:
            sys.stderr.write("\r%72s\r" % "")
            sys.stderr.flush()
    emit(args, report, format_eval_report(report))
    return 0
