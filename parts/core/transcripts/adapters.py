from __future__ import annotations

import functools
import json
import os
import re

from .constants import _lazy_pattern
from .errors import UsageError
from .helpers import loads_json
from .redaction import stored_cut

# ----------------------------------------------------------------------------------------------
# Session adapters: the only code that knows a vendor's transcript format
# ----------------------------------------------------------------------------------------------
# One mapper per agent (Claude Code, Codex, Gemini CLI) streams that agent's JSONL transcript line
# by line into one vendor-neutral TranscriptRecord: where the session ran (cwd per line), branch,
# version, time span, the transcript's own summary lines, tool calls with the files they read and
# edited, commands, tool errors, subagents, and explicit record_evidence calls to wctx's own MCP
# server. The store step (sessions.py) reads only that record and knows no vendor. Message text
# is never looked at: no finding is ever inferred from prose.

AGENT_CLAUDE_CODE = "claude-code"
AGENT_CODEX = "codex"
AGENT_GEMINI = "gemini-cli"
# Every agent whose transcripts import; TRANSCRIPT_ADAPTERS (below the adapters) maps each to its
# parser, parse(path, rec, cwd_hint).
TRANSCRIPT_AGENTS = (AGENT_CLAUDE_CODE, AGENT_CODEX, AGENT_GEMINI)
# What a user may type for an agent wherever one is named (hooks, brief --hook, import --agent):
# the program's name as typed in a shell, or the name wctx gives it.
AGENT_ALIASES = {
    "claude": AGENT_CLAUDE_CODE,
    "claude-code": AGENT_CLAUDE_CODE,
    "claude_code": AGENT_CLAUDE_CODE,
    "codex": AGENT_CODEX,
    "codex-cli": AGENT_CODEX,
    "gemini": AGENT_GEMINI,
    "gemini-cli": AGENT_GEMINI,
    "gemini_cli": AGENT_GEMINI,
}


def agent_named(text):
    """The agent a user's word names (``gemini`` is gemini-cli); other words unchanged."""
    return AGENT_ALIASES.get(text.strip().lower(), text) if isinstance(text, str) else text


# Major versions of each agent whose transcript format the adapters were written against. A file
# from another major version is refused by name rather than half-parsed.
SUPPORTED_MAJOR_VERSIONS = {AGENT_CLAUDE_CODE: (1, 2), AGENT_CODEX: (0,)}

CLAUDE_READ_TOOLS = {"Read": "file_path", "NotebookRead": "notebook_path"}
CLAUDE_EDIT_TOOLS = {
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "Write": "file_path",
    "NotebookEdit": "notebook_path",
}
CLAUDE_COMMAND_TOOLS = ("Bash",)
CODEX_COMMAND_TOOLS = ("shell", "exec_command", "shell_command", "container.exec", "local_shell")
RECORD_EVIDENCE_TOOL = "record_evidence"
MAX_STORED_COMMAND = 2000  # characters kept of one command
MAX_STORED_ERROR = 300  # characters kept of one tool error (its first lines, whitespace folded)
MAX_ERRORS = 200  # tool errors kept per session

_CLAUDE_LINE_TYPES = frozenset(
    {
        "user",
        "assistant",
        "system",
        "summary",
        "progress",
        "file-history-snapshot",
        "queue-operation",
        "attachment",
        "permission-mode",
        "custom-title",
        "ai-title",
        "last-prompt",
        "agent-name",
        "mode",
    }
)
_CODEX_LINE_TYPES = frozenset(
    {
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
        "compacted",
        "world_state",
        "inter_agent_communication_metadata",
    }
)
_PATCH_PATH = _lazy_pattern(r"^\*\*\* (?:Update|Add|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M)
_PLACEHOLDER = _lazy_pattern(r"^\[(?:REDACTED|TRIMMED)[A-Z_]*(?: [^\]]*)?\]$|^\[trimmed for fixture\]$", re.I)
_SAFE_ID = _lazy_pattern(r"^[A-Za-z0-9_.-]{1,128}$")
_UUID = _lazy_pattern(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def is_redacted_value(value):
    """True for values a sanitiser replaced ("[REDACTED_ARGUMENTS len=.. sha=..]",
    "/redacted/path/<hash>", "redacted://url/<hash>", "[trimmed for fixture]"): never read as a
    path, command or id."""
    if not isinstance(value, str):
        return False
    v = value.strip()
    return bool(_PLACEHOLDER.match(v)) or v.startswith(("/redacted/", "redacted://"))


_PATH_PLACEHOLDER = _lazy_pattern(
    r"\[(?:REDACTED|TRIMMED)|(?:^|/)redacted/path/|redacted://|\[trimmed for fixture\]", re.I
)


def path_has_placeholder(path):
    """True when any part of a path is a sanitiser's placeholder ("[REDACTED]/src/a.py",
    "/home/u/[REDACTED]/x", "/redacted/path/<hash>/x"): such a path names no real file."""
    return isinstance(path, str) and bool(_PATH_PLACEHOLDER.search(path))


def _is_abs(path):
    return path.startswith("/") or (len(path) > 2 and path[1] == ":" and path[2] in "\\/")


class TranscriptRecord:
    """What one transcript says a session did, whatever agent wrote it: a mapper fills it line by
    line, the store step reads it."""

    def __init__(self, agent, path):
        self.agent = agent
        self.path = path
        self.external_id = None
        self.raw_external_id = None  # as the transcript gave it, before stored_key
        self.version = None
        self.cwd = None  # first known working directory
        self.cwds = []  # every change of working directory, in order
        self.branch = None  # last branch recorded
        self.branch_by_cwd = {}  # cwd -> branch the agent recorded there
        self.commit = None  # Codex session_meta: HEAD of the cwd's repository at session start
        self.started_at = None
        self.ended_at = None
        self.title = None
        self.summaries = []
        self.tool_calls = {}  # tool name -> calls
        self.files = {}  # absolute path -> [reads, edits]
        self.commands = []  # {"tool", "command", "cwd", "at", "subagent"?}
        self.errors = []  # {"tool", "error", "at"}
        self.subagents = []
        self.evidence_calls = []  # {"call_id", "arguments", "at", "cwd", "ok", "result"}
        self.parent_external_id = None
        # Whether the format records the commit at session start (Codex): if so, the transcript
        # is the authority on it, and a transcript without one says the session has none.
        self.records_commit = False
        self.lines = 0
        self.bad_lines = 0
        self.redacted_values = 0
        self.compactions = 0
        self.size = 0

    def see_time(self, ts):
        if isinstance(ts, str) and len(ts) >= 19 and ts[:4].isdigit() and ts[4] == "-":
            if self.started_at is None or ts < self.started_at:
                self.started_at = ts
            if self.ended_at is None or ts > self.ended_at:
                self.ended_at = ts

    def see_cwd(self, cwd):
        """Record a working directory; returns it, or None when it is missing or redacted."""
        if not isinstance(cwd, str) or not cwd:
            return None
        if is_redacted_value(cwd) or path_has_placeholder(cwd):
            self.redacted_values += 1
            return None
        if not _is_abs(cwd):
            return None
        if not self.cwds or self.cwds[-1] != cwd:
            self.cwds.append(cwd)
        if self.cwd is None:
            self.cwd = cwd
        return cwd

    def see_branch(self, branch, cwd):
        if isinstance(branch, str) and branch and not is_redacted_value(branch):
            self.branch = branch
            if cwd:
                self.branch_by_cwd[cwd] = branch

    def count_tool(self, name):
        if not isinstance(name, str) or not name:
            name = "(unnamed)"
        elif is_redacted_value(name):
            self.redacted_values += 1
            name = "(redacted)"
        self.tool_calls[name] = self.tool_calls.get(name, 0) + 1

    def touch(self, path, cwd, edit):
        """Record a read (edit=False) or an edit of ``path``, resolved against ``cwd``."""
        if not isinstance(path, str) or not path.strip():
            return
        if is_redacted_value(path) or path_has_placeholder(path):
            self.redacted_values += 1
            return
        path = path.strip()
        if not _is_abs(path):
            if not cwd:
                return  # a relative path with no known cwd cannot be placed: not recorded
            path = os.path.join(cwd, path)
        counts = self.files.setdefault(os.path.normpath(path), [0, 0])
        counts[1 if edit else 0] += 1

    def add_command(self, tool, text, cwd, ts):
        if not isinstance(text, str) or not text.strip():
            return
        if is_redacted_value(text):
            self.redacted_values += 1
            return
        text = stored_cut(text.strip(), MAX_STORED_COMMAND)  # redacted whole, then cut
        # Each goes into its own column: a field of another type in the transcript is dropped.
        self.commands.append(
            {
                "tool": tool if isinstance(tool, str) else None,
                "command": text,
                "cwd": cwd if isinstance(cwd, str) else None,
                "at": ts if isinstance(ts, str) else None,
            }
        )

    def add_error(self, tool, text, ts):
        if len(self.errors) >= MAX_ERRORS:
            return
        if isinstance(text, list):
            text = " ".join(
                p.get("text", "") for p in text if isinstance(p, dict) and isinstance(p.get("text"), str)
            )
        if not isinstance(text, str):
            text = "" if text is None else json.dumps(text, default=str)
        if is_redacted_value(text):
            text = "(redacted)"
        self.errors.append({"tool": tool, "error": _error_excerpt(text), "at": ts})

    def merge_subagent(self, sub, agent_id):
        for tool, n in sub.tool_calls.items():
            self.tool_calls[tool] = self.tool_calls.get(tool, 0) + n
        for path, (reads, edits) in sub.files.items():
            counts = self.files.setdefault(path, [0, 0])
            counts[0] += reads
            counts[1] += edits
        for c in sub.commands:
            c["subagent"] = agent_id
        self.commands.extend(sub.commands)
        self.errors.extend(sub.errors[: max(0, MAX_ERRORS - len(self.errors))])
        self.evidence_calls.extend(sub.evidence_calls)
        for cwd in sub.cwds:
            if cwd not in self.cwds:
                self.cwds.append(cwd)
        self.lines += sub.lines
        self.bad_lines += sub.bad_lines
        self.size += sub.size
        self.redacted_values += sub.redacted_values
        self.see_time(sub.started_at)
        self.see_time(sub.ended_at)


def _error_excerpt(text):
    """The start of a tool error as stored: its first lines with whitespace folded, redacted,
    then cut to MAX_STORED_ERROR characters. Only a window of the text is looked at (an error may
    be megabytes of output); a word the window's end cuts through is left out, so that no part of
    a secret reaches the redaction without the rest of it."""
    window = text[: MAX_STORED_ERROR * 4]
    words = window.split()
    if len(window) < len(text) and words and not text[len(window)].isspace():
        words.pop()  # cut through by the window
    return stored_cut(" ".join(words), MAX_STORED_ERROR)


# Lines an adapter could not digest, per thread: {thread: {"skip": {(path, n)}, "at": (path, n)}}.
# parse_transcript runs an adapter again without a line that made it raise (see _run_adapter), so
# a well-formed line of unexpected types is one bad line, whatever the adapter, never fatal.
_ADAPTER_LINES = {}  # the state of parses in progress, not a cache (see parts/core/caches.py)


def _json_lines(path, rec):
    """Yield each line of a JSONL file as a dict, streaming; count what cannot be parsed."""
    import _thread

    state = _ADAPTER_LINES.get(_thread.get_ident())
    with open(path, "rb") as fh:
        n = 0
        for raw in fh:
            n += 1
            rec.size += len(raw)
            if not raw.strip():
                continue
            rec.lines += 1
            if state is not None and (path, n) in state["skip"]:
                rec.bad_lines += 1
                continue
            try:
                obj = loads_json(raw)
                if b"\\ud" in raw.lower():  # a lone surrogate escape: text no store can hold
                    json.dumps(obj, ensure_ascii=False).encode("utf-8")
            except ValueError:  # also bad UTF-8, and a last line still being written
                rec.bad_lines += 1
                continue
            if not isinstance(obj, dict):
                rec.bad_lines += 1
                continue
            if state is not None:
                state["at"] = (path, n)
            yield obj
    if state is not None:
        state["at"] = None


# How many distinct lines of one transcript may make an adapter raise before the file is refused
# (each costs a re-read of the file).
MAX_ADAPTER_RETRIES = 50


def _run_adapter(parse, path, make_record):
    """``parse(path, rec)`` on a fresh record, again without each line that made it raise a
    type error (counted as a bad line). Returns the record; refuses the file in one line when a
    failure cannot be pinned on a line, or too many lines fail."""
    import _thread

    key = _thread.get_ident()
    state = {"skip": set(), "at": None}
    _ADAPTER_LINES[key] = state
    try:
        while True:
            rec = make_record()
            state["at"] = None
            try:
                parse(path, rec)
                return rec
            except (TypeError, AttributeError, KeyError, IndexError, ValueError, RecursionError) as e:
                at = state["at"]
                if at is None or at in state["skip"] or len(state["skip"]) >= MAX_ADAPTER_RETRIES:
                    where = "%s:%d" % at if at else path
                    raise UsageError(
                        "%s: cannot read this transcript (%s: %s)" % (where, type(e).__name__, e)
                    ) from None
                state["skip"].add(at)
    finally:
        _ADAPTER_LINES.pop(key, None)


def _check_version(agent, version, path):
    m = re.match(r"^(\d+)\.\d+", version if isinstance(version, str) else "")
    if m and int(m.group(1)) not in SUPPORTED_MAJOR_VERSIONS[agent]:
        raise UsageError(
            "%s: %s transcript format version %s is not supported (this wctx reads %s)"
            % (path, agent, version, ", ".join("%d.x" % v for v in SUPPORTED_MAJOR_VERSIONS[agent]))
        )


def _vendor_of(obj):
    """The agent whose transcript a record's shape belongs to, or None when it says nothing."""
    kind = obj.get("type")
    if kind in _CODEX_LINE_TYPES and "payload" in obj:
        return AGENT_CODEX
    if ("sessionId" in obj and "projectHash" in obj) or "$set" in obj or "$rewindTo" in obj:
        return AGENT_GEMINI
    if kind in GEMINI_MESSAGE_TYPES and "id" in obj and "content" in obj and "uuid" not in obj:
        return AGENT_GEMINI
    if kind in _CLAUDE_LINE_TYPES and any(k in obj for k in ("uuid", "message", "summary", "snapshot")):
        return AGENT_CLAUDE_CODE
    return None


def detect_transcript_agent(path):
    """Name the agent that wrote ``path`` ("claude-code", "codex" or "gemini-cli") from the shape
    of its first records, or raise UsageError naming what was found instead. A file whose records
    look like two vendors' is refused, never guessed."""
    first_keys = None
    votes = {}  # agent -> line number of its first record
    try:
        fh = open(path, "rb")
    except OSError as e:
        raise UsageError("cannot read %s: %s" % (path, e.strerror or e)) from None
    with fh:
        for n, raw in enumerate(fh):
            if n >= 50:
                break
            try:
                obj = loads_json(raw)
            except ValueError:
                continue
            if not isinstance(obj, dict):
                continue
            if first_keys is None:
                first_keys = sorted(obj)[:8]
            try:
                agent = _vendor_of(obj)
            except TypeError:  # a field of an unexpected type: this line says nothing
                continue
            if agent is not None:
                votes.setdefault(agent, n + 1)
            elif "instructions" in obj and "id" in obj and "type" not in obj and not votes:
                raise UsageError(
                    "%s: legacy Codex rollout format (before session_meta records, Codex < 0.30) is not supported"
                    % path
                )
    if len(votes) > 1:
        raise UsageError(
            "%s: records of more than one agent's format (%s); refusing to guess"
            % (path, ", ".join("%s from line %d" % kv for kv in sorted(votes.items(), key=lambda kv: kv[1])))
        )
    if votes:
        return next(iter(votes))
    if first_keys is None:
        raise UsageError("%s: not a JSONL transcript (no JSON object in its first lines)" % path)
    raise UsageError(
        "%s: unrecognised transcript format (first record has keys: %s); this wctx reads %s transcripts"
        % (path, ", ".join(first_keys), ", ".join(TRANSCRIPT_AGENTS))
    )


def parse_transcript(path, agent="auto", cwd_hint=None):
    """Parse one transcript file (with its subagent files) into a TranscriptRecord.

    ``cwd_hint`` (an agent hook's cwd) places a Gemini CLI session whose project folder does not
    name its root, when the file's projectHash confirms it."""
    path = os.path.abspath(path)
    detected = detect_transcript_agent(path)
    if agent not in (None, "auto") and agent != detected:
        if agent not in TRANSCRIPT_ADAPTERS:
            raise UsageError("unknown agent %r (one of: %s)" % (agent, ", ".join(TRANSCRIPT_AGENTS)))
        raise UsageError("%s looks like a %s transcript, not %s" % (path, detected, agent))
    parse = functools.partial(TRANSCRIPT_ADAPTERS[detected], cwd_hint=cwd_hint)
    rec = _run_adapter(parse, path, lambda: TranscriptRecord(detected, path))
    if rec.external_id is None:
        rec.external_id = os.path.splitext(os.path.basename(path))[0]
    return rec


def _first_session_ids(path, limit=20):
    """The sessionId values in the first records of a file (cheap: a few lines)."""
    ids, sidechain = set(), False
    try:
        with open(path, "rb") as fh:
            for n, raw in enumerate(fh):
                if n >= limit:
                    break
                try:
                    obj = loads_json(raw)
                except ValueError:
                    continue
                if isinstance(obj, dict) and isinstance(obj.get("sessionId"), str):
                    ids.add(obj["sessionId"])
                    sidechain = sidechain or obj.get("isSidechain") is True
    except OSError:
        pass
    return ids, sidechain


def claude_subagent_files(path):
    """Subagent transcripts of the Claude Code session in ``path``: <session>/subagents/*.jsonl
    (Claude Code 2.1+), and agent-*.jsonl next to it carrying its session id (earlier layout)."""
    found = []
    folder = os.path.join(os.path.splitext(path)[0], "subagents")
    if os.path.isdir(folder):
        found += sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".jsonl"))
    here = os.path.dirname(path)
    try:
        siblings = sorted(n for n in os.listdir(here) if n.startswith("agent-") and n.endswith(".jsonl"))
    except OSError:
        siblings = []
    if siblings and not os.path.basename(path).startswith("agent-"):
        mine = _first_session_ids(path)[0] | {os.path.splitext(os.path.basename(path))[0]}
        for name in siblings:
            ids, sidechain = _first_session_ids(os.path.join(here, name))
            if sidechain and ids & mine:
                found.append(os.path.join(here, name))
    return found


def session_transcript_path(path):
    """The file to import for ``path``: itself, or for a Claude Code subagent file (in
    <session>/subagents/, or an agent-*.jsonl next to its session) the session file it belongs to."""
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    if os.path.basename(folder) == "subagents":
        parent = os.path.dirname(folder) + ".jsonl"
        if not os.path.isfile(parent):
            raise UsageError(
                "%s is a subagent transcript and its session file %s is missing" % (path, parent)
            )
        return parent
    if os.path.basename(os.path.dirname(folder)) == "chats" and _SAFE_ID.match(os.path.basename(folder)):
        # Gemini CLI: chats/<parent session id>/<subagent>.jsonl; the parent is
        # chats/session-<time>-<first 8 characters of its id>.jsonl and starts with its full id.
        chats, parent_id = os.path.dirname(folder), os.path.basename(folder)
        for name in sorted(os.listdir(chats)):
            candidate = os.path.join(chats, name)
            if name.startswith("session-") and name.endswith("-%s.jsonl" % parent_id[:8]):
                if parent_id in _first_session_ids(candidate, limit=1)[0]:
                    return candidate
        raise UsageError("%s is a Gemini CLI subagent transcript and its session file is missing" % path)
    if os.path.basename(path).startswith("agent-"):
        ids, sidechain = _first_session_ids(path)
        for sid in sorted(ids) if sidechain else ():
            parent = os.path.join(folder, sid + ".jsonl")
            if _SAFE_ID.match(sid) and os.path.isfile(parent):
                return parent
    return path


def _by_type(handlers, kind):
    """A mapper's handler for a line's "type"; None for any other value (a list, a number)."""
    return handlers.get(kind) if isinstance(kind, str) else None


def _is_record_evidence(name):
    """mcp__<server>__record_evidence, where the server is wctx's own (its name contains "wctx")."""
    if not isinstance(name, str) or not name.endswith("__" + RECORD_EVIDENCE_TOOL):
        return False
    parts = name.split("__")
    return len(parts) >= 3 and parts[0] == "mcp" and "wctx" in "__".join(parts[1:-1]).lower()


# -- Claude Code: ~/.claude/projects/<encoded-cwd>/<session>.jsonl --------------------------------


class _ClaudeCodeMapper:
    """One Claude Code transcript file into the record, line by line. A tool_use block is logged
    again when its message is re-sent: the mapper keeps its id so that it is counted once, and
    so that its tool_result (a later line) settles it."""

    def __init__(self, path, rec):
        self.path, self.rec = path, rec
        self.pending = {}  # tool_use id -> (tool name, evidence call or None)
        self.seen = set()

    def run(self):
        for obj in _json_lines(self.path, self.rec):
            cwd = self.header(obj)
            kind = obj.get("type")
            line = _by_type(self.LINES, kind)
            if line is not None:
                line(self, obj, kind)
            elif kind in ("assistant", "user"):
                self.message(obj, cwd)

    def header(self, obj):
        """What every line may say (time, cwd, session id, version, branch); returns its cwd."""
        rec = self.rec
        rec.see_time(obj.get("timestamp"))
        cwd = rec.see_cwd(obj.get("cwd")) or (rec.cwds[-1] if rec.cwds else None)
        if rec.external_id is None:
            sid = obj.get("sessionId")
            if isinstance(sid, str) and sid and not is_redacted_value(sid):
                rec.external_id = sid
        version = obj.get("version")
        if isinstance(version, str) and not is_redacted_value(version) and version != rec.version:
            _check_version(AGENT_CLAUDE_CODE, version, self.path)
            rec.version = version
        rec.see_branch(obj.get("gitBranch"), cwd)
        return cwd

    def summary(self, obj, kind):
        text = obj.get("summary")
        if isinstance(text, str) and text.strip() and text.strip() not in self.rec.summaries:
            self.rec.summaries.append(text.strip())

    def title(self, obj, kind):
        title = obj.get("customTitle") or obj.get("aiTitle")
        if isinstance(title, str) and title.strip() and (kind == "custom-title" or not self.rec.title):
            self.rec.title = title.strip()

    def system(self, obj, kind):
        if obj.get("subtype") == "compact_boundary":
            self.rec.compactions += 1

    def message(self, obj, cwd):
        message = obj.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            return
        ts = obj.get("timestamp")
        for block in content:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "tool_use":
                self.tool_use(block, cwd, ts)
            elif btype == "tool_result":
                self.tool_result(block, ts)

    def tool_use(self, block, cwd, ts):
        rec = self.rec
        tid = block.get("id")
        if tid:
            if tid in self.seen:
                return
            self.seen.add(tid)
        name = block.get("name")
        args = block.get("input") if isinstance(block.get("input"), dict) else {}
        rec.count_tool(name)
        evidence = None
        if name in CLAUDE_READ_TOOLS:
            rec.touch(args.get(CLAUDE_READ_TOOLS[name]), cwd, edit=False)
        elif name in CLAUDE_EDIT_TOOLS:
            rec.touch(args.get(CLAUDE_EDIT_TOOLS[name]), cwd, edit=True)
        elif name in CLAUDE_COMMAND_TOOLS:
            rec.add_command(name, args.get("command"), cwd, ts)
        elif _is_record_evidence(name):
            evidence = {"call_id": tid, "arguments": args, "at": ts, "cwd": cwd, "ok": None, "result": None}
            rec.evidence_calls.append(evidence)
        if tid:
            self.pending[tid] = (name, evidence)

    def tool_result(self, block, ts):
        name, evidence = self.pending.get(block.get("tool_use_id"), (None, None))
        failed = bool(block.get("is_error"))
        if evidence is not None:
            evidence["ok"] = not failed
            evidence["result"] = block.get("content")
        if failed:
            self.rec.add_error(name or "(unknown tool)", block.get("content", block.get("text")), ts)

    # Lines that are not messages, by their "type"; user and assistant lines hold the tool calls.
    LINES = {"summary": summary, "custom-title": title, "ai-title": title, "system": system}


def _parse_claude_code(path, rec):
    _ClaudeCodeMapper(path, rec).run()


def _parse_claude_subagents(path, rec):
    """Claude Code keeps each subagent's transcript in its own file (see claude_subagent_files).
    Their reads, edits and commands belong to the session; each is also listed."""
    paths = claude_subagent_files(path)
    if not paths:
        return
    types = _claude_subagent_types(path)
    for sub_path in paths:
        name = os.path.basename(sub_path)
        sub = TranscriptRecord(AGENT_CLAUDE_CODE, sub_path)
        agent_id = None
        for obj in _json_lines(sub.path, TranscriptRecord(AGENT_CLAUDE_CODE, sub.path)):
            agent_id = obj.get("agentId")
            if agent_id:
                break
        _parse_claude_code(sub.path, sub)
        if not isinstance(agent_id, str) or not agent_id or is_redacted_value(agent_id):
            agent_id = os.path.splitext(name)[0].replace("agent-", "", 1)
        rec.subagents.append(
            {
                "id": agent_id,
                "type": types.get(agent_id) or ("compaction" if agent_id.startswith("acompact") else None),
                "transcript": sub.path,
                "tool_calls": sum(sub.tool_calls.values()),
                "files_read": sum(1 for c in sub.files.values() if c[0]),
                "files_edited": sum(1 for c in sub.files.values() if c[1]),
                "commands": len(sub.commands),
                "errors": len(sub.errors),
                "started_at": sub.started_at,
                "ended_at": sub.ended_at,
            }
        )
        rec.merge_subagent(sub, agent_id)


def _claude_subagent_types(path):
    """agentId -> subagent_type: the parent's Task call names the type, its agent_progress lines
    name the agentId (subagent files do not reliably carry either)."""
    tasks, types = {}, {}
    with open(path, "rb") as fh:
        for raw in fh:
            if b'"Task"' not in raw and b"agent_progress" not in raw:
                continue  # cheap pre-filter: most lines are neither
            try:
                obj = loads_json(raw)
            except ValueError:
                continue
            if not isinstance(obj, dict):
                continue
            message = obj.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            for b in content if isinstance(content, list) else ():
                if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == "Task":
                    tasks[b.get("id")] = (b.get("input") or {}).get("subagent_type")
            data = obj.get("data")
            if isinstance(data, dict) and data.get("type") == "agent_progress":
                parent = obj.get("parentToolUseID")
                if data.get("agentId") and parent in tasks:
                    types.setdefault(data["agentId"], tasks[parent])
    return types


# -- Codex: ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl -------------------------------------------


def _codex_arguments(raw):
    """Codex stores tool arguments as a JSON string; sanitised rollouts put a placeholder there.
    Returns a dict, or None when there is nothing trustworthy to read."""
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str) or is_redacted_value(raw):
        return None
    try:
        value = loads_json(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _patch_paths(text):
    """Paths an apply_patch body names (Update/Add/Delete File and Move to)."""
    if not isinstance(text, str) or "*** " not in text:
        return []
    return [m.group(1) or m.group(2) for m in _PATCH_PATH.finditer(text)]


def _command_text(args):
    cmd = args.get("cmd", args.get("command"))
    if isinstance(cmd, list):
        parts = [c for c in cmd if isinstance(c, str)]
        # ["bash", "-lc", "the command"] -> the command
        if (
            len(parts) == 3
            and parts[1] in ("-lc", "-c")
            and os.path.basename(parts[0]) in ("bash", "sh", "zsh")
        ):
            return parts[2]
        return " ".join(parts)
    return cmd if isinstance(cmd, str) else None


class _CodexMapper:
    """One Codex rollout into the record, line by line. A rollout names each call once when it is
    made (response_item) and again when it ends (event_msg): the mapper remembers call ids so that
    one edit, read or failure is counted once."""

    def __init__(self, path, rec):
        self.path, self.rec = path, rec
        self.cwd = None
        self.meta_seen = False
        self.names = {}  # call_id -> tool name
        self.patched = {}  # call_id -> paths counted (apply_patch input and patch_apply_end name the same edit)
        self.read_once = set()
        self.failed_calls = set()
        rec.records_commit = True

    def run(self):
        for obj in _json_lines(self.path, self.rec):
            ts = obj.get("timestamp")
            self.rec.see_time(ts)
            payload = obj.get("payload")
            line = _by_type(self.LINES, obj.get("type"))
            if isinstance(payload, dict) and line is not None:
                line(self, payload, ts)

    def session_meta(self, payload, ts):
        if self.meta_seen:
            return  # a forked or resumed rollout repeats earlier meta; the first one is this file's
        self.meta_seen = True
        rec = self.rec
        sid = payload.get("id") or payload.get("session_id")
        if isinstance(sid, str) and sid and not is_redacted_value(sid):
            rec.external_id = sid
        version = payload.get("cli_version")
        if isinstance(version, str) and not is_redacted_value(version):
            _check_version(AGENT_CODEX, version, self.path)
            rec.version = version
        self.cwd = rec.see_cwd(payload.get("cwd")) or self.cwd
        git = payload.get("git") if isinstance(payload.get("git"), dict) else {}
        commit = git.get("commit_hash")
        if isinstance(commit, str) and re.match(r"^[0-9a-f]{7,64}$", commit):
            rec.commit = commit
        rec.see_branch(git.get("branch"), self.cwd)
        parent = _codex_parent(payload)
        if parent is not None:
            rec.parent_external_id = parent

    def turn_context(self, payload, ts):
        self.cwd = self.rec.see_cwd(payload.get("cwd")) or self.cwd

    def compacted(self, payload, ts):
        self.rec.compactions += 1

    def response_item(self, payload, ts):
        ptype = payload.get("type")
        if ptype in ("function_call", "custom_tool_call"):
            self.tool_call(payload, ptype, ts)
        elif ptype == "local_shell_call":
            self.rec.count_tool("local_shell")
            action = payload.get("action") if isinstance(payload.get("action"), dict) else {}
            where = action.get("working_directory")
            where = where if isinstance(where, str) and _is_abs(where) else self.cwd
            self.rec.add_command("local_shell", _command_text(action), where, ts)
        elif ptype in ("function_call_output", "custom_tool_call_output"):
            self.tool_output(payload, ts)

    def tool_call(self, payload, ptype, ts):
        rec = self.rec
        name = _codex_tool_name(payload)
        call_id = payload.get("call_id")
        rec.count_tool(name)
        self.names[call_id] = name
        raw = payload.get("arguments") if ptype == "function_call" else payload.get("input")
        if is_redacted_value(raw):
            rec.redacted_values += 1
            return  # redacted arguments: the tool is counted, nothing else is read
        if name == "apply_patch":
            body = raw if ptype == "custom_tool_call" else (_codex_arguments(raw) or {}).get("input")
            self.patch(call_id, _patch_paths(body), self.cwd)
            return
        args = _codex_arguments(raw)
        if args is None:
            return
        if name in CODEX_COMMAND_TOOLS:
            self.command(name, call_id, args, ts)
        elif _is_record_evidence(name):
            rec.evidence_calls.append(
                {"call_id": call_id, "arguments": args, "at": ts, "cwd": self.cwd, "ok": None, "result": None}
            )

    def command(self, name, call_id, args, ts):
        where = args.get("workdir")
        if not (isinstance(where, str) and _is_abs(where) and not is_redacted_value(where)):
            where = self.cwd
        text = _command_text(args)
        if text and "*** Begin Patch" in text:  # apply_patch run through the shell
            self.patch(call_id, _patch_paths(text), where)
        else:
            self.rec.add_command(name, text, where, ts)

    def patch(self, call_id, paths, cwd):
        done = self.patched.setdefault(call_id, set()) if call_id else set()
        for p in paths:
            if not isinstance(p, str):
                continue
            key = os.path.normpath(p if _is_abs(p) else os.path.join(cwd or "", p))
            if key not in done:
                done.add(key)
                self.rec.touch(p, cwd, edit=True)

    def fail(self, call_id, tool, text, ts):
        """Keep a call's failure once, however many lines report it."""
        if call_id not in self.failed_calls:
            self.failed_calls.add(call_id)
            self.rec.add_error(tool, text, ts)

    def tool_output(self, payload, ts):
        call_id = payload.get("call_id")
        out = payload.get("output")
        # Codex's answer to a call of a tool it does not have (an MCP server not connected yet):
        # the call never ran.
        unsupported = isinstance(out, str) and out.startswith("unsupported call:")
        for call in self.rec.evidence_calls:
            if call["call_id"] == call_id and call["ok"] is None:
                call["ok"], call["result"] = not unsupported, out
        if not isinstance(out, str) or is_redacted_value(out) or call_id in self.failed_calls:
            return
        code = _codex_exit_code(out)
        if unsupported or (isinstance(code, int) and code != 0):
            self.fail(call_id, self.names.get(call_id) or "(tool)", out, ts)

    def event_msg(self, payload, ts):
        ptype = payload.get("type")
        if ptype == "item_completed" and isinstance(payload.get("item"), dict):
            # Newer rollouts report finished items; the same facts as the events below.
            ptype, payload = _codex_item_as_event(payload["item"], ptype, payload)
        end = _by_type(self.ENDS, ptype)
        if end is not None:
            end(self, payload, ts)

    def patch_end(self, payload, ts):
        changes = payload.get("changes") if isinstance(payload.get("changes"), dict) else {}
        paths = list(changes)
        for change in changes.values():
            if isinstance(change, dict) and isinstance(change.get("move_path"), str):
                paths.append(change["move_path"])
        self.patch(payload.get("call_id"), paths, self.cwd)
        if payload.get("success") is False:
            self.fail(payload.get("call_id"), "apply_patch", payload.get("stderr") or "patch failed", ts)

    def exec_end(self, payload, ts):
        call_id = payload.get("call_id")
        where = payload.get("cwd")
        if not (isinstance(where, str) and _is_abs(where)):
            where = self.cwd
        for parsed in payload.get("parsed_cmd") or ():
            if isinstance(parsed, dict) and parsed.get("type") == "read":
                if (call_id, parsed.get("path")) not in self.read_once:
                    self.read_once.add((call_id, parsed.get("path")))
                    self.rec.touch(parsed.get("path"), where, edit=False)
        code = payload.get("exit_code")
        if isinstance(code, int) and code != 0:
            text = "exit code %d: %s" % (code, payload.get("stderr") or "")
            self.fail(call_id, self.names.get(call_id) or "exec_command", text, ts)

    def mcp_end(self, payload, ts):
        """An MCP call ended: settle its record_evidence call, if it was one, and keep its failure."""
        inv = payload.get("invocation") if isinstance(payload.get("invocation"), dict) else {}
        result = payload.get("result")
        ok = result.get("Ok") if isinstance(result, dict) else None
        failed = isinstance(result, dict) and (
            "Err" in result or (isinstance(ok, dict) and bool(ok.get("isError")))
        )
        for call in self.rec.evidence_calls:
            if call["call_id"] == payload.get("call_id"):
                call["ok"], call["result"] = not failed, result
        if failed:
            detail = result.get("Err", ok)
            if isinstance(detail, dict) and isinstance(detail.get("content"), list):
                detail = detail["content"]  # the tool's own words, its text blocks
            elif not isinstance(detail, str):
                detail = json.dumps(detail, default=str)
            tool = "mcp__%s__%s" % (inv.get("server"), inv.get("tool"))
            self.fail(payload.get("call_id"), tool, detail, ts)

    # What each line of a rollout (its "type") and each event_msg that ends a call says.
    LINES = {
        "session_meta": session_meta,
        "turn_context": turn_context,
        "compacted": compacted,
        "response_item": response_item,
        "event_msg": event_msg,
    }
    ENDS = {"patch_apply_end": patch_end, "exec_command_end": exec_end, "mcp_tool_call_end": mcp_end}


def _parse_codex(path, rec, cwd_hint=None):
    _CodexMapper(path, rec).run()


def _codex_parent(payload):
    """The parent thread of a subagent's rollout, from its session_meta, or None."""
    source = payload.get("source")
    if not (isinstance(source, dict) and isinstance(source.get("subagent"), dict)):
        return None
    spawn = source["subagent"].get("thread_spawn")
    parent = payload.get("parent_thread_id") or (
        spawn.get("parent_thread_id") if isinstance(spawn, dict) else None
    )
    return parent if isinstance(parent, str) and not is_redacted_value(parent) else None


def _codex_exit_code(out):
    """A shell call's exit code from its output: {"output": ..., "metadata": {"exit_code": n}} in
    older rollouts, "Exit code: n" first in newer ones; None for anything else."""
    if out.startswith("{"):
        try:
            return (json.loads(out).get("metadata") or {}).get("exit_code")
        except (ValueError, AttributeError):
            return None
    m = re.match(r"^Exit code: (\d+)", out)
    return int(m.group(1)) if m else None


def _codex_item_as_event(item, ptype, payload):
    """A newer rollout's finished item as the (type, payload) of the event it replaced."""
    if item.get("type") == "FileChange":
        return "patch_apply_end", dict(item, call_id=item.get("id"), success=item.get("status") != "failed")
    if item.get("type") == "CommandExecution":
        return "exec_command_end", dict(item, call_id=item.get("id"))
    if item.get("type") == "McpToolCall":
        return "mcp_tool_call_end", _codex_mcp_item_as_end(item)
    return ptype, payload


def _codex_tool_name(payload):
    """A tool call's full name. Codex 0.171 and later send an MCP tool as its own name in the
    server's namespace (name "record_evidence", namespace "mcp__wctx"), earlier versions as one
    name; both read as mcp__<server>__<tool>, the name Claude Code gives it too."""
    name, space = payload.get("name"), payload.get("namespace")
    if isinstance(name, str) and isinstance(space, str) and space.startswith("mcp__"):
        return "%s__%s" % (space.rstrip("_"), name)
    return name


def _codex_mcp_item_as_end(item):
    """A newer rollout's finished McpToolCall item (server, tool, status, result with isError,
    error) in the shape of the mcp_tool_call_end event it replaced (invocation, result Ok/Err)."""
    result = item.get("result")
    if item.get("status") == "failed" and not isinstance(result, dict):
        result = {"Err": item.get("error") or "failed"}
    else:
        result = {"Ok": dict(result, isError=True) if item.get("status") == "failed" else result}
    return {
        "call_id": item.get("id"),
        "invocation": {"server": item.get("server"), "tool": item.get("tool")},
        "result": result,
    }


# -- Gemini CLI: ~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl --------------------------
# The first record holds sessionId, projectHash (sha256 of the project root), startTime and kind;
# then one record per message ({"id", "timestamp", "type": "user"|"gemini"|"info"|..., "content",
# "toolCalls": [...]}), written again whole when it changes, plus {"$set": {...}} metadata updates
# and {"$rewindTo": id} records that drop a message and everything after it. The project root is
# in <project>/.project_root; a subagent's file is chats/<parent session id>/<id>.jsonl.

GEMINI_READ_TOOLS = {"read_file": "file_path"}
GEMINI_EDIT_TOOLS = {"write_file": "file_path", "replace": "file_path"}
GEMINI_COMMAND_TOOLS = ("run_shell_command",)
GEMINI_MESSAGE_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
_GLOB_CHARS = _lazy_pattern(r"[*?\[\]{}]")


def gemini_home(env=None):
    env = os.environ if env is None else env
    return os.path.join(env.get("GEMINI_CLI_HOME") or os.path.expanduser("~"), ".gemini")


def _gemini_project_root(path, project_hash, hint=None):
    """The project root a Gemini CLI session file belongs to: <project>/.project_root next to its
    chats folder, or ``hint`` (the hook's cwd) when its sha256 is the file's projectHash."""
    import hashlib

    folder = os.path.dirname(os.path.abspath(path))
    for _ in range(2):  # chats/ for a session, chats/<parent>/ for a subagent
        parent = os.path.dirname(folder)
        if os.path.basename(folder) == "chats":
            try:
                with open(os.path.join(parent, ".project_root"), encoding="utf-8") as fh:
                    root = fh.read(4096).strip()
            except (OSError, UnicodeDecodeError):
                root = ""
            if root and _is_abs(root):
                return root
            break
        folder = parent
    if hint and isinstance(project_hash, str):
        if hashlib.sha256(hint.encode("utf-8", "surrogateescape")).hexdigest() == project_hash.lower():
            return hint
    return None


def _gemini_text(value):
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return " ".join(_gemini_text(v) for v in value)
    if isinstance(value, dict):
        for key in ("text", "output", "error", "message"):
            if isinstance(value.get(key), str):
                return value[key]
        response = value.get("functionResponse")
        if isinstance(response, dict):
            return _gemini_text(response.get("response"))
        return ""
    return ""


def _parse_gemini(path, rec, cwd_hint=None):
    messages = {}  # message id -> its latest record's tool calls (a message is re-written whole)
    order = []  # message ids in the order first seen
    project_hash = None
    for obj in _json_lines(path, rec):
        if "$rewindTo" in obj:
            _gemini_rewind(obj.get("$rewindTo"), messages, order)
            continue
        meta = obj.get("$set") if isinstance(obj.get("$set"), dict) else None
        if meta is None and "sessionId" in obj and "projectHash" in obj:
            meta = obj
        if meta is not None:
            named = _gemini_meta(meta, rec, messages, order)
            project_hash = project_hash if named is None else named
        elif isinstance(obj.get("id"), str) and obj.get("type") in GEMINI_MESSAGE_TYPES:
            _gemini_message(obj, messages, order, rec)
    root = _gemini_project_root(path, project_hash, cwd_hint)
    rec.see_cwd(root)
    for mid in order:
        for call in messages.get(mid, ()):
            _gemini_tool_call(call, root, rec)


def _gemini_rewind(target, messages, order):
    """{"$rewindTo": id}: that message and every later one are no longer the history."""
    cut = order.index(target) if target in order else 0
    for mid in order[cut:]:
        messages.pop(mid, None)
    del order[cut:]


def _gemini_meta(meta, rec, messages, order):
    """A session's first record or a {"$set": ...} update; returns the projectHash it names."""
    sid = meta.get("sessionId")
    if isinstance(sid, str) and sid and not is_redacted_value(sid) and rec.external_id is None:
        rec.external_id = sid
    rec.see_time(meta.get("startTime"))
    rec.see_time(meta.get("lastUpdated"))
    summary = meta.get("summary")
    if isinstance(summary, str) and summary.strip() and summary.strip() not in rec.summaries:
        rec.summaries.append(summary.strip())
    if isinstance(meta.get("messages"), list):  # a checkpoint: the history is exactly these
        messages.clear()
        del order[:]
        for msg in meta["messages"]:
            if isinstance(msg, dict) and isinstance(msg.get("id"), str):
                _gemini_message(msg, messages, order, rec)
    return meta["projectHash"] if isinstance(meta.get("projectHash"), str) else None


def _gemini_message(msg, messages, order, rec):
    rec.see_time(msg.get("timestamp"))
    if msg["id"] not in messages:
        order.append(msg["id"])
    calls = msg.get("toolCalls")
    messages[msg["id"]] = [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


def _gemini_tool_call(call, root, rec):
    name = call.get("name")
    args = call.get("args") if isinstance(call.get("args"), dict) else {}
    ts = call.get("timestamp")
    status = call.get("status")
    rec.count_tool(name)
    rec.see_time(ts)
    if name in GEMINI_COMMAND_TOOLS:
        cwd = _gemini_command_cwd(args.get("dir_path"), root)
        rec.add_command(name, args.get("command"), cwd and os.path.normpath(cwd), ts)
    elif _is_record_evidence(name) or _is_gemini_record_evidence(name):
        rec.evidence_calls.append(
            {
                "call_id": call.get("id"),
                "arguments": args,
                "at": ts,
                "cwd": root,
                "ok": None if status not in ("success", "error") else status == "success",
                "result": call.get("result"),
            }
        )
    elif status == "success":  # a cancelled or failed call read or wrote nothing
        _gemini_touch(name, args, root, rec)
    if status == "error":
        rec.add_error(
            name or "(unknown tool)", _gemini_text(call.get("resultDisplay") or call.get("result")), ts
        )


def _gemini_command_cwd(where, root):
    """Where run_shell_command ran: its dir_path (relative to the project root), else the root."""
    if isinstance(where, str) and where.strip() and not is_redacted_value(where):
        return where if _is_abs(where) else (os.path.join(root, where) if root else None)
    return root


def _gemini_touch(name, args, root, rec):
    """The files a successful call read or wrote."""
    if name in GEMINI_READ_TOOLS:
        rec.touch(args.get(GEMINI_READ_TOOLS[name]), root, edit=False)
    elif name in GEMINI_EDIT_TOOLS:
        rec.touch(args.get(GEMINI_EDIT_TOOLS[name]), root, edit=True)
    elif name == "read_many_files" and isinstance(args.get("include"), list):
        for entry in args["include"]:
            if isinstance(entry, str) and not _GLOB_CHARS.search(entry):
                rec.touch(entry, root, edit=False)


def _is_gemini_record_evidence(name):
    """mcp_<server>_record_evidence, Gemini CLI's name for an MCP tool, where the server is wctx's."""
    if (
        not isinstance(name, str)
        or not name.startswith("mcp_")
        or not name.endswith("_" + RECORD_EVIDENCE_TOOL)
    ):
        return False
    return "wctx" in name[4 : -len(RECORD_EVIDENCE_TOOL) - 1].lower()


def _gemini_subagent_files(path, external_id):
    """Subagent files of a Gemini CLI session: chats/<its session id>/*.jsonl."""
    if not external_id or not _SAFE_ID.match(external_id):
        return []
    folder = os.path.join(os.path.dirname(path), external_id)
    if os.path.basename(os.path.dirname(path)) != "chats" or not os.path.isdir(folder):
        return []
    return sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".jsonl"))


def _parse_gemini_all(path, rec, cwd_hint=None):
    _parse_gemini(path, rec, cwd_hint)
    for sub_path in _gemini_subagent_files(path, rec.external_id):
        sub = TranscriptRecord(AGENT_GEMINI, sub_path)
        try:
            _parse_gemini(sub_path, sub, cwd_hint or rec.cwd)
        except (OSError, UsageError):
            continue
        agent_id = sub.external_id or os.path.splitext(os.path.basename(sub_path))[0]
        rec.subagents.append(
            {
                "id": agent_id,
                "type": None,
                "transcript": sub.path,
                "tool_calls": sum(sub.tool_calls.values()),
                "files_read": sum(1 for c in sub.files.values() if c[0]),
                "files_edited": sum(1 for c in sub.files.values() if c[1]),
                "commands": len(sub.commands),
                "errors": len(sub.errors),
                "started_at": sub.started_at,
                "ended_at": sub.ended_at,
            }
        )
        rec.merge_subagent(sub, agent_id)


def _parse_claude_all(path, rec, cwd_hint=None):
    _parse_claude_code(path, rec)
    _parse_claude_subagents(path, rec)
    stem = os.path.splitext(os.path.basename(path))[0]
    if _UUID.match(stem):
        # Claude Code names each transcript after its session (what hooks and
        # CLAUDE_CODE_SESSION_ID call it); a resumed session's file may start with older ids.
        rec.external_id = stem


# Tools whose calls run a shell command, whatever the agent.
COMMAND_TOOLS = CLAUDE_COMMAND_TOOLS + CODEX_COMMAND_TOOLS + GEMINI_COMMAND_TOOLS


def fingerprint_files(path):
    """The files whose sizes make an import's fingerprint: ``path`` and the Claude Code subagent
    files beside it."""
    return [path] + claude_subagent_files(path)


# The adapters, by agent: each streams one transcript file (and its subagents' files) into rec,
# parse(path, rec, cwd_hint); cwd_hint (an agent hook's cwd) is for a format that may not name it.
TRANSCRIPT_ADAPTERS = {
    AGENT_CLAUDE_CODE: _parse_claude_all,
    AGENT_CODEX: _parse_codex,
    AGENT_GEMINI: _parse_gemini_all,
}


# -- Finding transcripts: a directory, a session id, the session this process runs in ---------------


def iter_transcript_files(path):
    """``path`` itself, or every *.jsonl below a directory except subagent files (those are read
    with their parent session)."""
    if os.path.isfile(path):
        yield path
        return
    for root, dirs, files in os.walk(path):
        # Claude Code's <session>/subagents/ and Gemini CLI's chats/<session id>/ hold subagents.
        dirs[:] = sorted(d for d in dirs if d != "subagents" and os.path.basename(root) != "chats")
        for name in sorted(files):
            if name.endswith(".jsonl"):
                yield os.path.join(root, name)


def claude_config_dir(env=None):
    env = os.environ if env is None else env
    return env.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")


def codex_home(env=None):
    env = os.environ if env is None else env
    return env.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")


def claude_project_dir(cwd, env=None):
    # Claude Code names a project folder after the cwd with every non-alphanumeric character as "-".
    return os.path.join(claude_config_dir(env), "projects", re.sub(r"[^A-Za-z0-9]", "-", cwd))


def transcript_for_session(agent, external_id, env=None):
    """The transcript file of a Claude Code session id or Codex thread id, or None."""
    if not external_id or not _SAFE_ID.match(external_id):
        return None
    if agent in (None, AGENT_CLAUDE_CODE):
        base = os.path.join(claude_config_dir(env), "projects")
        for project in sorted(os.listdir(base)) if os.path.isdir(base) else ():
            candidate = os.path.join(base, project, external_id + ".jsonl")
            if os.path.isfile(candidate):
                return candidate
    if agent in (None, AGENT_CODEX):
        suffix = "-%s.jsonl" % external_id
        for root, _dirs, files in os.walk(os.path.join(codex_home(env), "sessions")):
            for name in files:
                if name.startswith("rollout-") and name.endswith(suffix):
                    return os.path.join(root, name)
    return None


def find_running_session(cwd=None, env=None):
    """The agent session this process runs inside, if it can be found.

    Returns {"agent", "external_id", "transcript" (or None), "how"} or None. Looked for, in order:
    CLAUDE_CODE_SESSION_ID (Claude Code 2.1.132+ sets it for its Bash tool), CODEX_THREAD_ID
    (Codex sets it for shell commands), then, when CLAUDECODE=1 says we run under an older Claude
    Code, the most recently written transcript in the project folder of the cwd or a parent.
    """
    env = os.environ if env is None else env
    for var, agent in (("CLAUDE_CODE_SESSION_ID", AGENT_CLAUDE_CODE), ("CODEX_THREAD_ID", AGENT_CODEX)):
        value = (env.get(var) or "").strip()
        if value and _SAFE_ID.match(value):
            return {
                "agent": agent,
                "external_id": value,
                "transcript": transcript_for_session(agent, value, env),
                "how": var,
            }
    if env.get("CLAUDECODE") == "1" and cwd:
        probe = os.path.abspath(cwd)
        while True:
            folder = claude_project_dir(probe, env)
            try:
                files = [os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".jsonl")]
            except OSError:
                files = []
            if files:
                newest = max(files, key=lambda p: os.stat(p).st_mtime)
                return {
                    "agent": AGENT_CLAUDE_CODE,
                    "external_id": os.path.splitext(os.path.basename(newest))[0],
                    "transcript": newest,
                    "how": "newest Claude Code transcript for %s (CLAUDECODE=1, no session id in the environment)"
                    % probe,
                }
            parent = os.path.dirname(probe)
            if parent == probe:
                break
            probe = parent
    return None
