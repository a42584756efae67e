from __future__ import annotations

import os
import re
import sys

from .adapters import TRANSCRIPT_AGENTS, agent_named
from .brief import BRIEF_BYTES_VARIABLE, BRIEF_DEFAULT_BYTES
from .caches import BUILT_ONCE
from .cli_commands import (
    _ordered_action,
    cmd_brief,
    cmd_capture,
    cmd_confirm,
    cmd_demo,
    cmd_doctor,
    cmd_eval_retrieval,
    cmd_export,
    cmd_forget,
    cmd_hide,
    cmd_hooks,
    cmd_import,
    cmd_import_evidence,
    cmd_init,
    cmd_instructions,
    cmd_mcp,
    cmd_mcp_info,
    cmd_relate,
    cmd_relations,
    cmd_repo_add,
    cmd_repo_list,
    cmd_repo_remove,
    cmd_repo_rename,
    cmd_report,
    cmd_retract,
    cmd_search,
    cmd_serve,
    cmd_sessions,
    cmd_show,
    cmd_supersede,
    cmd_sync,
    cmd_unhide,
    cmd_verify,
    cmd_whoami,
    cmd_workspace_add,
    cmd_workspace_list,
    cmd_workspace_remove,
    cmd_workspace_show,
)
from .constants import EVIDENCE_KINDS, RELATION_KINDS
from .errors import UsageError, WctxError
from .head import __version__
from .hooks import HOOK_AGENTS, run_brief_hook, run_import_hook
from .store import open_store
from .sync import SYNC_BRANCH
from .untrusted import json_text, terminal_text

# ----------------------------------------------------------------------------------------------
# CLI: parser and main()
# ----------------------------------------------------------------------------------------------

# Commands that run without opening the store.
NO_STORE_COMMANDS = {"demo", "doctor", "eval", "mcp", "mcp-info", "instructions"}
# Commands that record and so may create the store. Every other command only reads it (or
# changes what is already there): pointed at a store that does not exist, a mistyped WCTX_HOME
# say, it says so and creates nothing.
STORE_CREATING = (cmd_init, cmd_repo_add, cmd_workspace_add, cmd_capture, cmd_import_evidence, cmd_sync)


@BUILT_ONCE
def _parser_class():
    import argparse

    class _Parser(argparse.ArgumentParser):
        """argparse with one-line errors and exit code 2."""

        def error(self, message):
            raise UsageError("%s (see: %s --help)" % (message, self.prog))

    return _Parser


def _home_after_the_command(parser):
    """``--home DIR`` is accepted after the command word too (``wctx search x --home DIR``); left
    out, it does not override one given before the command."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                if "--home" not in sub._option_string_actions:
                    sub.add_argument("--home", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
                _home_after_the_command(sub)


class _Inert:
    """Accepts any parser call and does nothing: stands in for the parsers of commands not run."""

    def __getattr__(self, name):
        return lambda *args, **kw: self

    def __setattr__(self, name, value):
        pass


class _OneCommand:
    """The subparsers action, building only the parser of the command about to run (building the
    dozens of parsers of every command is most of the CLI's start-up)."""

    def __init__(self, sub, name):
        self.sub = sub
        self.name = name
        self.found = False

    def add_parser(self, name, **kw):
        if name != self.name:
            return _Inert()
        self.found = True
        return self.sub.add_parser(name, **kw)


def _hook_call(argv):
    """The hook entry point for exactly the command lines `hooks install` writes (``[--home DIR]
    brief --hook AGENT``, ``[--home DIR] import --hook``), as a function of no arguments: agents
    run them at every session start and end, and building the CLI parser would cost more than
    parsing them. None for any other command line (the parser then reads it)."""
    home = None
    if len(argv) > 2 and argv[0] == "--home":
        home, argv = argv[1], argv[2:]
    if argv == ["import", "--hook"]:
        return lambda: run_import_hook(home)
    if len(argv) == 3 and argv[:2] == ["brief", "--hook"] and argv[2] in HOOK_AGENTS:
        return lambda: run_brief_hook(argv[2], home)
    return None


def _command_in(argv):
    """The command word of a command line, when only ``--home DIR`` precedes it; else None."""
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--home":
            i += 2
        elif word.startswith("--home="):
            i += 1
        elif word.startswith("-"):
            return None
        else:
            return word
    return None


def _first_sentence(doc):
    """A command's one-line help: the first sentence of its docstring (which may wrap)."""
    para = " ".join((doc or "").strip().split("\n\n")[0].split())
    match = re.match(r"(.+?\.)(?:\s|$)", para)
    return match.group(1) if match else (para or None)


def build_parser(only=None):
    """The CLI's parser; with ``only``, one holding just that command (full help and errors for
    everything else come from the complete parser)."""
    import argparse

    _Parser, _Ordered = _parser_class(), _ordered_action()
    parser = _Parser(
        prog="wctx",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version="wctx " + __version__)
    parser.add_argument("--home", help="store directory (default: $WCTX_HOME or ~/.wctx)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    if only is not None:
        sub = _OneCommand(sub, only)

    def command(name, func, json_flag=True, **kw):
        doc = (func.__doc__ or "").strip()
        p = sub.add_parser(
            name,
            help=_first_sentence(doc),
            description=doc,
            formatter_class=argparse.RawDescriptionHelpFormatter,
            **kw,
        )
        p.set_defaults(func=func)
        if json_flag:
            p.add_argument("--json", action="store_true", help="machine-readable output")
        return p

    command("init", cmd_init)
    command("doctor", cmd_doctor)

    repo = sub.add_parser("repo", help="register, list and remove repositories")
    repo_sub = repo.add_subparsers(dest="repo_command", metavar="ACTION", parser_class=_Parser)
    repo_sub.required = True
    p = repo_sub.add_parser(
        "add", help=_first_sentence(cmd_repo_add.__doc__), description=cmd_repo_add.__doc__
    )
    p.set_defaults(func=cmd_repo_add)
    p.add_argument("path")
    p.add_argument("--name", help="short unique name (default: the directory name)")
    p.add_argument("--workspace", help="workspace to put it in (created if new)")
    p.add_argument("--same-as", metavar="NAME", help="register it as a checkout of repository NAME")
    p.add_argument("--json", action="store_true")
    p = repo_sub.add_parser(
        "rename", help=_first_sentence(cmd_repo_rename.__doc__), description=cmd_repo_rename.__doc__
    )
    p.set_defaults(func=cmd_repo_rename)
    p.add_argument("old", metavar="OLD")
    p.add_argument("new", metavar="NEW")
    p.add_argument("--json", action="store_true")
    p = repo_sub.add_parser(
        "list", help=_first_sentence(cmd_repo_list.__doc__), description=cmd_repo_list.__doc__
    )
    p.set_defaults(func=cmd_repo_list)
    p.add_argument("--json", action="store_true")
    p = repo_sub.add_parser(
        "remove", help=_first_sentence(cmd_repo_remove.__doc__), description=cmd_repo_remove.__doc__
    )
    p.set_defaults(func=cmd_repo_remove)
    p.add_argument("name")
    p.add_argument("--json", action="store_true")

    ws = sub.add_parser("workspace", help="list and show workspaces")
    ws_sub = ws.add_subparsers(dest="ws_command", metavar="ACTION", parser_class=_Parser)
    ws_sub.required = True
    p = ws_sub.add_parser(
        "list", help=_first_sentence(cmd_workspace_list.__doc__), description=cmd_workspace_list.__doc__
    )
    p.set_defaults(func=cmd_workspace_list)
    p.add_argument("--json", action="store_true")
    p = ws_sub.add_parser(
        "show", help=_first_sentence(cmd_workspace_show.__doc__), description=cmd_workspace_show.__doc__
    )
    p.set_defaults(func=cmd_workspace_show)
    p.add_argument("name")
    p.add_argument("--json", action="store_true")
    for action, func in (("add", cmd_workspace_add), ("remove", cmd_workspace_remove)):
        p = ws_sub.add_parser(action, help=_first_sentence(func.__doc__), description=func.__doc__)
        p.set_defaults(func=func)
        p.add_argument("workspace")
        if action == "add":
            p.add_argument("repo")
            p.add_argument("--create", action="store_true", help="create the workspace if it is new")
        else:
            p.add_argument("repo", nargs="?", help="leave out to delete the workspace")
        p.add_argument("--json", action="store_true")

    p = command("relate", cmd_relate)
    p.add_argument("from_repo", metavar="FROM", nargs="?")
    p.add_argument("kind", metavar="KIND", nargs="?", help="one of: " + ", ".join(RELATION_KINDS))
    p.add_argument("to_repo", metavar="TO", nargs="?")
    p.add_argument("--suggest", action="store_true", help="review relations the manifests suggest")
    p.add_argument("--yes", action="store_true", help="with --suggest: declare every suggestion")
    p.add_argument("--no", action="store_true", help="with --suggest: decline every suggestion (remembered)")
    p.add_argument("--note", help="why they relate")
    p.add_argument("--remove", action="store_true", help="remove this relation instead")

    p = command("relations", cmd_relations)
    p.add_argument("--repo", help="only relations of this repository")

    p = command("capture", cmd_capture)
    p.add_argument("--summary", help="what the session was about")
    for flag, dest in (
        ("--finding", "finding"),
        ("--decision", "decision"),
        ("--dead-end", "dead_end"),
        ("--question", "question"),
        ("--constraint", "constraint"),
        ("--known-issue", "known_issue"),
        ("--note", "note"),
    ):
        p.add_argument(
            flag,
            dest=dest,
            action=_Ordered,
            metavar="CLAIM",
            help="add a %s item ('claim :: detail')" % dest.replace("_", " "),
        )
    p.add_argument(
        "--repo",
        dest="repo",
        action=_Ordered,
        metavar="NAME",
        help="repository the item is about (default: the cwd's)",
    )
    p.add_argument(
        "--symptom",
        dest="symptom",
        action=_Ordered,
        metavar="TEXT",
        help="how the problem shows itself, in the words of someone who has not found the cause "
        "(the item before it)",
    )
    p.add_argument(
        "--file",
        dest="file",
        action=_Ordered,
        metavar="PATH[#SYMBOL]",
        help="cited file, repeatable; repo-name:path for another repo",
    )
    p.add_argument(
        "--depends-on",
        dest="depends_on",
        action=_Ordered,
        metavar="REPO:PATH[#SYMBOL]",
        help="a symbol the item depends on that its cited code does not visibly call, repeatable: "
        "its change makes the item possibly stale",
    )
    p.add_argument(
        "--confidence",
        dest="confidence",
        action=_Ordered,
        metavar="0..1",
        help="stated confidence of the item",
    )
    p.add_argument(
        "--allow-missing-symbol",
        action="store_true",
        help="store a cited symbol its file does not define, as typed (refused by default: a typo)",
    )
    p.add_argument("--session", help="append to this session instead of starting one")
    p.add_argument("--agent", default="cli", help="who is recording (default: cli)")

    p = command("search", cmd_search)
    p.add_argument("query", nargs="*", help="words to look for (may be empty)")
    p.add_argument("--repo", help="search as if from this repository (default: the cwd's)")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--kind", action="append", choices=EVIDENCE_KINDS, help="only this kind (repeatable)")
    p.add_argument("--all", action="store_true", help="search every repository, related or not")
    p.add_argument("--workspace", help="outside every registered repository: search this workspace")
    p.add_argument("--rank", choices=("topology", "fts"), default="topology")
    p.add_argument("--all-status", action="store_true", help="include superseded and retracted items")
    p.add_argument("--detail", action="store_true", help="every field and reason of each result")
    p.add_argument("--author", metavar="WHO", help="only items this author recorded ('me': this machine's)")
    p.add_argument("--include-hidden", action="store_true", help="include what wctx hide keeps out")
    p.add_argument(
        "--all-matches", action="store_true", help="also the weak matches held back when stronger ones exist"
    )

    p = command("show", cmd_show)
    p.add_argument("id")

    p = command("verify", cmd_verify)
    p.add_argument("ids", nargs="*", metavar="ID")
    p.add_argument(
        "--repo", help="where the scope starts when no ids are given (default: the cwd's repository)"
    )
    p.add_argument("--about", metavar="REPO", help="only items about this repository")
    p.add_argument("--strict", action="store_true", help="exit 1 for possibly_stale items too")
    p.add_argument("--all", action="store_true", help="list items that cite no file one by one")
    p.add_argument("--detail", action="store_true", help="every reason of each item, not only the first")

    p = command("sessions", cmd_sessions)
    p.add_argument("action", nargs="?", choices=("list", "show"), default="list")
    p.add_argument("session_id", nargs="?")
    p.add_argument("--repo")
    p.add_argument("--file", metavar="PATH", help="only sessions whose transcript read or edited this file")
    p.add_argument("--limit", type=int, default=20)

    p = command("import", cmd_import)
    p.add_argument("paths", nargs="*", metavar="PATH", help="transcript files, or directories of them")
    p.add_argument(
        "--agent",
        type=agent_named,
        choices=("auto",) + TRANSCRIPT_AGENTS,
        default="auto",
        help="transcript format (default: detect)",
    )
    p.add_argument(
        "--force", action="store_true", help="re-read transcripts even when unchanged since their last import"
    )
    p.add_argument(
        "--hook",
        action="store_true",
        help="read an agent hook's JSON on stdin; never fails (see: wctx hooks)",
    )
    p.set_defaults(no_store=True)

    p = command("hooks", cmd_hooks)
    p.add_argument("action", choices=("install", "uninstall", "status"))
    p.add_argument("agent", nargs="?", type=agent_named, choices=HOOK_AGENTS)
    p.add_argument("--settings", metavar="FILE", help="settings file to change (default: the agent's own)")
    p.add_argument(
        "--python", default=None, help="interpreter the hook command runs (default: the one running wctx now)"
    )
    p.add_argument("--dry-run", action="store_true", help="show the change, write nothing")
    p.add_argument("--probe", action="store_true", help="status: run each installed hook command once")
    p.add_argument(
        "--allow-read-tools",
        action="store_true",
        help="install claude-code: also add wctx's read-only MCP tools to permissions.allow (claude -p needs it)",
    )
    p.set_defaults(no_store=True)

    p = command("brief", cmd_brief)
    p.add_argument("--repo", help="the repository to brief on (default: the cwd's)")
    p.add_argument("--files", nargs="+", metavar="PATH", default=[], help="files to recall by code reference")
    p.add_argument(
        "--max-bytes",
        metavar="N",
        help="size bound in bytes (default $%s, else %d)" % (BRIEF_BYTES_VARIABLE, BRIEF_DEFAULT_BYTES),
    )
    p.add_argument(
        "--max-tokens", metavar="N", help="size bound in tokens of 4 bytes (instead of --max-bytes)"
    )
    p.add_argument(
        "--hook",
        metavar="AGENT",
        type=agent_named,
        choices=HOOK_AGENTS,
        help="read a SessionStart hook's JSON on stdin",
    )
    p.set_defaults(no_store=True)

    p = command("confirm", cmd_confirm)
    p.add_argument("ids", nargs="+", metavar="ID")
    p.add_argument("--note", help="what you checked")
    p.add_argument("--session", help="the session that did the checking")

    p = command("forget", cmd_forget)
    p.add_argument("ids", nargs="*", metavar="ID")
    p.add_argument(
        "--session",
        metavar="ID",
        help="forget this session, everything it recorded and its imported activity",
    )
    p.add_argument("--reason", required=True, help="why (kept in the tombstone; never the content)")
    p.add_argument("--yes", action="store_true", help="do not ask (needed without a terminal)")

    for name, func in (("hide", cmd_hide), ("unhide", cmd_unhide)):
        p = command(name, func)
        p.add_argument("ids", nargs="*", metavar="ID")
        p.add_argument(
            "--author", metavar="WHO", help="everything this author recorded (name, email or both)"
        )
        if name == "hide":
            p.add_argument(
                "--list", action="store_true", help="what is hidden, and how many items each keeps out"
            )
        else:
            p.set_defaults(list=False)
    p = command("whoami", cmd_whoami)
    group = p.add_mutually_exclusive_group()
    group.add_argument("--set", metavar="'NAME <EMAIL>'", help="record later sessions under this identity")
    group.add_argument("--unset", action="store_true", help="back to git's user.name and user.email")

    p = command("retract", cmd_retract)
    p.add_argument("id")
    p = command("supersede", cmd_supersede)
    p.add_argument("old", metavar="OLD")
    p.add_argument("--by", required=True, metavar="NEW")

    p = command("mcp", cmd_mcp, json_flag=False)
    p.add_argument("--repo", help="default repository for the tools (a registered name or path)")
    p.add_argument(
        "--workspace", help="default workspace when the server runs outside a registered repository"
    )
    p.add_argument(
        "--text-only",
        action="store_true",
        help="answer with the text block alone: no outputSchema or structuredContent, half the bytes",
    )

    p = command("mcp-info", cmd_mcp_info)
    p.add_argument("--repo", help="put --repo NAME in the snippets")
    p.add_argument("--workspace", help="put --workspace NAME in the snippets")

    p = command("instructions", cmd_instructions)
    p.add_argument(
        "--write",
        action="store_true",
        help="install into CLAUDE.md, AGENTS.md and GEMINI.md of this repository",
    )

    ev = sub.add_parser("eval", help="measure retrieval quality on a judged corpus")
    ev_sub = ev.add_subparsers(dest="eval_command", metavar="WHAT", parser_class=_Parser)
    ev_sub.required = True
    p = ev_sub.add_parser(
        "retrieval", help=_first_sentence(cmd_eval_retrieval.__doc__), description=cmd_eval_retrieval.__doc__
    )
    p.set_defaults(func=cmd_eval_retrieval)
    p.add_argument("--corpus", metavar="DIR", help="corpus directory (default: eval/corpus next to wctx.py)")
    p.add_argument("--json", action="store_true", help="machine-readable report")

    p = command("sync", cmd_sync)
    p.add_argument("--remote", help="the team's memory repository: URL or path (remembered)")
    p.add_argument("--branch", help="branch to share through (default %s; remembered)" % SYNC_BRANCH)
    p.add_argument(
        "--auto",
        choices=("on", "off"),
        help="sync after every session an agent hook imports (failures are logged, never block the agent)",
    )
    p = command("export", cmd_export)
    p.add_argument("--dir", help="write one JSONL file per session into this directory")
    p.add_argument("--repo", help="only evidence about this repository")
    p = command("import-evidence", cmd_import_evidence)
    p.add_argument(
        "paths", nargs="+", metavar="PATH", help="JSONL files or directories written by wctx export"
    )

    p = command("report", cmd_report)
    p.add_argument("--html", action="store_true", help="write the HTML page (default: a text summary)")
    p.add_argument("--workspace", help="only this workspace (default: every registered repository)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the page to FILE (default: standard output)")

    p = command("serve", cmd_serve, json_flag=False)
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)")
    p.add_argument("--workspace", help="only this workspace (default: every registered repository)")

    p = command("demo", cmd_demo, json_flag=False)
    p.add_argument("--keep", metavar="DIR", help="build the demo in DIR and keep it")

    if only is not None and not sub.found:
        return build_parser()
    _home_after_the_command(parser)
    return parser


def _fail(error, as_json):
    """One line on stderr; under --json also {"error", "code"} on stdout, for a program to read."""
    sys.stderr.write("wctx: %s\n" % terminal_text(str(error)))
    if as_json:
        sys.stdout.write(json_text({"error": str(error), "code": error.exit_code}) + "\n")
    return error.exit_code


def _parsed(argv):
    """(parser, parsed arguments) of a command line; a UsageError when it does not parse."""
    command = _command_in(argv)
    parser = build_parser(only=command)
    if command != "search":
        return parser, parser.parse_args(argv)
    # A query word may begin with '-' ("-etag"): argparse would call it an unknown option.
    args, extra = parser.parse_known_args(argv)
    if any(word.startswith("--") for word in extra):
        parser.error("unrecognized arguments: %s" % " ".join(extra))
    args.query = list(args.query or []) + extra
    return parser, args


def _reader_gone():
    """The reader went away (wctx export | head): not an error. Point stdout at /dev/null so the
    interpreter's final flush does not complain either."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    return 0


def _is_store_error(e):
    """A damaged, full or unwritable store surfaces mid-command as sqlite3.DatabaseError: one
    line, not a traceback. IntegrityError is a wctx bug and keeps its traceback."""
    sqlite3 = sys.modules.get("sqlite3")
    return (
        sqlite3 is not None
        and isinstance(e, sqlite3.DatabaseError)
        and not isinstance(e, sqlite3.IntegrityError)
    )


def main(argv=None):
    """Entry point: parse, run one command, map errors to one line on stderr and an exit code."""
    if (sys.argv[1:] if argv is None else list(argv)) == ["--version"]:
        # Answered before building the parser (dozens of subparsers): start-up is the budget here.
        sys.stdout.write("wctx %s\n" % __version__)
        return 0
    argv = sys.argv[1:] if argv is None else list(argv)
    hook = _hook_call(argv)
    if hook is not None:
        return hook()
    wants_json = "--json" in argv[: argv.index("--")] if "--" in argv else "--json" in argv
    try:
        parser, args = _parsed(argv)
    except UsageError as e:
        return _fail(e, wants_json)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    store = None
    try:
        if args.command not in NO_STORE_COMMANDS and not getattr(args, "no_store", False):
            store = open_store(args.home, create=args.func in STORE_CREATING)
        return args.func(args, store)
    except WctxError as e:
        return _fail(e, getattr(args, "json", False))
    except KeyboardInterrupt:
        sys.stderr.write("wctx: interrupted\n")
        return 130
    except BrokenPipeError:
        return _reader_gone()
    except Exception as e:
        if not _is_store_error(e):
            raise
        where = store.path if store is not None else "the store"
        sys.stderr.write("wctx: store error in %s: %s\n" % (where, terminal_text(str(e))))
        return 1
    finally:
        if store is not None:
            for text in store.notices:
                sys.stderr.write("wctx: %s\n" % terminal_text(text))
            store.close()


if __name__ == "__main__":
    sys.exit(main())
