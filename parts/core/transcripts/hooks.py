from __future__ import annotations

import json
import os
import re
import sys
import time

from .adapters import (
    AGENT_CLAUDE_CODE,
    AGENT_CODEX,
    AGENT_GEMINI,
    claude_config_dir,
    codex_home,
    gemini_home,
    transcript_for_session,
)
from .brief import brief
from .errors import NotFoundError, UsageError, WctxError
from .head import __version__
from .helpers import hook_invocation, shell_command, utc_now
from .redaction import shown_text
from .sessions import import_transcript
from .store import default_home, open_store
from .sync import _sync_get, sync_memory

# ----------------------------------------------------------------------------------------------
# Service: agent hooks (import at session end, briefing at session start)
# ----------------------------------------------------------------------------------------------
# Each agent gets two hooks in its own settings file: at session end `wctx import --hook` reads the
# hook's JSON on stdin and imports the transcript it names; at session start `wctx brief --hook
# AGENT` prints the briefing in the agent's documented form for added context. Neither ever fails
# the agent: every outcome goes to $WCTX_HOME/hooks.log and they exit 0.
# - Claude Code: $CLAUDE_CONFIG_DIR/settings.json or ~/.claude/settings.json; SessionEnd.
# - Codex: $CODEX_HOME/hooks.json or ~/.codex/hooks.json; SessionEnd from Codex CLI 0.145, Stop
#   (after every turn, which import extends idempotently) on the versions before it.
# - Gemini CLI: $GEMINI_CLI_HOME/.gemini/settings.json or ~/.gemini/settings.json; SessionEnd
#   (timeouts there are in milliseconds).
# The command is the one that runs this wctx from a clean shell (hook_invocation); install runs it
# once with a probe payload, and doctor does again, so a hook that cannot start is reported.

HOOK_EVENTS = {AGENT_CLAUDE_CODE: "SessionEnd", AGENT_CODEX: "Stop", AGENT_GEMINI: "SessionEnd"}
HOOK_START_EVENT = "SessionStart"
HOOK_ALL_EVENTS = ("SessionEnd", "Stop", HOOK_START_EVENT)  # every event a wctx hook may sit in
# First Codex CLI release with the SessionEnd hook event: rust-v0.145.0 (openai/codex#33895,
# "Add SessionEnd hooks for thread teardown"; 0.144.x has no such event).
CODEX_SESSION_END_SINCE = (0, 145, 0)
HOOK_AGENTS = tuple(HOOK_EVENTS)  # agents wctx can install a hook for (not every importable agent)
HOOK_TIMEOUT_SECONDS = 60
HOOK_START_TIMEOUT_SECONDS = 10
CODEX_SESSION_END_TIMEOUT_SECONDS = 3  # Codex caps SessionEnd hooks at 3 s (it runs at teardown)
HOOK_LOG = "hooks.log"
HOOK_LOG_MAX_BYTES = 1 << 20
HOOK_STDIN_SECONDS = 5.0  # Claude Code has been seen to leave a hook's stdin open; never wait forever
HOOK_PROBE_EVENT = "wctx-probe"  # a payload with this hook_event_name is answered, never acted on
HOOK_PROBE_SECONDS = 30
HOOK_PROBE_PATH = "/usr/bin:/bin"  # the clean shell the probe runs the command from
# wctx's read-only MCP tools as Claude Code names them in permissions.allow and --allowedTools
# (the server added as "wctx"). `claude -p` has no one to ask and refuses every tool nobody
# allowed; `hooks install claude-code --allow-read-tools` adds these, the write tools stay the
# user's call. The same list as the catalogue's readOnly tools (a test keeps them equal).
CLAUDE_READ_ONLY_TOOLS = tuple(
    "mcp__wctx__" + name
    for name in (
        "workspace_overview",
        "search_evidence",
        "get_evidence",
    )
)


def hook_home(home=None):
    """The store a hook is installed for, or checked against: --home, else $WCTX_HOME, else
    ~/.wctx, as an absolute path."""
    return os.path.abspath(os.path.expanduser(home)) if home else default_home()


def hook_command(python=None, home=None, action=("import", "--hook")):
    """The shell command an agent's hook runs: this wctx (see hook_invocation), --home STORE, then
    ``action``. The store is always named: an agent started from an IDE or a clean shell has no
    $WCTX_HOME, and a hook that followed it would read and write another store."""
    argv = hook_invocation(python) + ["--home", hook_home(home)]
    return shell_command(argv + list(action))


def hook_settings_path(agent, env=None):
    if agent == AGENT_CLAUDE_CODE:
        return os.path.join(claude_config_dir(env), "settings.json")
    if agent == AGENT_CODEX:
        return os.path.join(codex_home(env), "hooks.json")
    if agent == AGENT_GEMINI:
        return os.path.join(gemini_home(env), "settings.json")
    raise UsageError("no hook for agent %r (hooks exist for: %s)" % (agent, ", ".join(HOOK_AGENTS)))


def run_program(argv, input_bytes=None, env=None, timeout=30):
    """Run a program that is not git: the agent's own CLI for its version, or a hook command wctx
    wrote (through /bin/sh, as agents run them). Returns (exit code, stdout, stderr) as bytes;
    (None, b"", reason) when it could not start or ran out of time."""
    import subprocess

    try:
        proc = subprocess.run(  # noqa: S603 - list arguments; a hook command is wctx's own text
            argv,
            input=input_bytes if input_bytes is not None else b"",
            capture_output=True,
            env=env,
            timeout=timeout,
            check=False,
        )
    except (OSError, ValueError) as e:
        return None, b"", str(e).encode()
    except subprocess.TimeoutExpired:
        return None, b"", b"timed out after %d s" % timeout
    return proc.returncode, proc.stdout, proc.stderr


def installed_codex_version(env=None):
    """(major, minor, patch, pre-release tag or "") of the `codex` on PATH ("codex-cli 0.145.0",
    "codex-cli 0.145.0-alpha.3"), or None when there is none or it says no version."""
    import shutil

    env = os.environ if env is None else env
    exe = shutil.which("codex", path=env.get("PATH"))
    if not exe:
        return None
    code, out, _ = run_program([exe, "--version"], env=dict(env), timeout=10)
    m = re.search(rb"(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.]+))?", out or b"") if code == 0 else None
    if not m:
        return None
    return (int(m.group(1)), int(m.group(2)), int(m.group(3)), (m.group(4) or b"").decode())


def codex_end_event(env=None):
    """("SessionEnd" or "Stop", why): the installed Codex's session-end event, Stop when unknown.
    A pre-release of the first version with SessionEnd gets Stop: it may have been cut before."""
    version = installed_codex_version(env)
    if version is None:
        return "Stop", "no codex on PATH says its version; Stop runs on every Codex with hooks"
    label = ".".join(str(v) for v in version[:3]) + ("-" + version[3] if version[3] else "")
    first = ".".join(str(v) for v in CODEX_SESSION_END_SINCE)
    if version[:3] > CODEX_SESSION_END_SINCE or (version[:3] == CODEX_SESSION_END_SINCE and not version[3]):
        return "SessionEnd", "codex %s has the SessionEnd event" % label
    return "Stop", "codex %s predates SessionEnd (%s); Stop runs after every turn" % (label, first)


# Codex runs a user's hook only once someone trusted it: Codex records trust per hook in
# $CODEX_HOME/config.toml as [hooks.state."<hooks.json path>:<event>:<group>:<handler>"]
# trusted_hash = "sha256:…", written when a person picks "Trust all and continue" at "Hooks need
# review" or trusts it in /hooks. `codex exec` never asks and skips untrusted hooks without a word;
# a changed command is a new hook to trust again. wctx reads that record and says what it finds;
# it never writes it (the review is Codex's safety gate, for a person to pass).
CODEX_EVENT_LABELS = {"SessionStart": "session_start", "SessionEnd": "session_end", "Stop": "stop"}
CODEX_DEFAULT_TIMEOUT_SECONDS = 600  # what Codex assumes for a hook that states no timeout
CODEX_TRUST_HOW = (
    'run `codex` in a terminal and choose "Trust all and continue" when it says "Hooks need '
    'review" (or type /hooks, pick each wctx hook and press t); `codex exec` never asks and skips '
    "untrusted hooks without a word (automation that vets its hooks may pass "
    "--dangerously-bypass-hook-trust)"
)
_TOML_HEADER = r"^\s*\[\s*((?:[^\[\]\"']|\"(?:[^\"\\]|\\.)*\"|'[^']*')+?)\s*\]\s*(?:#.*)?$"
_TOML_KEY_PART = r"\s*(\"(?:[^\"\\]|\\.)*\"|'[^']*'|[A-Za-z0-9_-]+)\s*(\.|$)"
_TOML_PAIR = r"^\s*([A-Za-z0-9_-]+)\s*=\s*(\"(?:[^\"\\]|\\.)*\"|'[^']*'|true|false)\s*(?:#.*)?$"


def codex_hook_hash(event, entry, matcher=None):
    """The trust identity Codex records for one command hook: sha256 of canonical JSON (keys
    sorted, no spaces) of the event's label and the hook as Codex normalises it (default timeout,
    async false, unset fields left out). Equal to `codex app-server` hooks/list's currentHash on
    codex-cli 0.171; a Codex that hashes otherwise reads as "modified", never as trusted."""
    import hashlib

    timeout = entry.get("timeout")
    hook = {
        "type": "command",
        "command": entry.get("command"),
        "timeout": max(1, timeout if isinstance(timeout, int) else CODEX_DEFAULT_TIMEOUT_SECONDS),
        "async": entry.get("async") is True,
    }
    if isinstance(entry.get("statusMessage"), str):
        hook["statusMessage"] = entry["statusMessage"]
    identity = {"event_name": CODEX_EVENT_LABELS.get(event, event), "hooks": [hook]}
    if isinstance(matcher, str) and event == HOOK_START_EVENT:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _toml_string(token):
    if token.startswith("'"):
        return token[1:-1]
    try:
        return json.loads(token)
    except ValueError:
        return token[1:-1]


def read_codex_config(env=None):
    """(hook states {key: {"trusted_hash", "enabled"}}, hooks feature on?, config.toml text) from
    $CODEX_HOME/config.toml. A small reader for the table form Codex writes
    ([hooks.state."key"], [features]); no TOML library is needed on Python 3.8."""
    path = os.path.join(codex_home(env), "config.toml")
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError):
        return {}, True, ""
    states, feature_on, table = {}, True, None
    for line in text.splitlines():
        m = re.match(_TOML_HEADER, line)
        if m and not line.lstrip().startswith("[["):
            parts = [p[0] for p in re.findall(_TOML_KEY_PART, m.group(1))]
            table = [_toml_string(p) if p[:1] in "\"'" else p for p in parts]
            continue
        m = re.match(_TOML_PAIR, line)
        if not m or table is None:
            continue
        name, value = m.group(1), m.group(2)
        if len(table) == 3 and table[:2] == ["hooks", "state"]:
            state = states.setdefault(table[2], {})
            if name == "trusted_hash" and value[:1] in "\"'":
                state["trusted_hash"] = _toml_string(value)
            elif name == "enabled" and value in ("true", "false"):
                state["enabled"] = value == "true"
        elif table == ["features"] and name in ("hooks", "codex_hooks") and value == "false":
            feature_on = False
    return states, feature_on, text


def codex_hook_trust(path, data, env=None):
    """Codex's trust of each wctx hook in the hooks.json at ``path`` holding ``data``:
    [{"event", "key", "hash", "trust": trusted | untrusted | modified | disabled | unknown}]."""
    states, _, text = read_codex_config(env)
    hooks = data.get("hooks") if isinstance(data.get("hooks"), dict) else {}
    found = []
    for event in HOOK_ALL_EVENTS:
        groups = hooks.get(event)
        for g, group in enumerate(groups if isinstance(groups, list) else ()):
            entries = group.get("hooks") if isinstance(group, dict) else None
            for h, entry in enumerate(entries if isinstance(entries, list) else ()):
                if not _is_wctx_hook(entry):
                    continue
                key = "%s:%s:%d:%d" % (path, CODEX_EVENT_LABELS.get(event, event), g, h)
                digest = codex_hook_hash(event, entry, group.get("matcher"))
                state = states.get(key, {})
                if state.get("enabled") is False:
                    trust = "disabled"
                elif state.get("trusted_hash") == digest:
                    trust = "trusted"
                elif state.get("trusted_hash"):
                    trust = "modified"
                else:
                    trust = "unknown" if key in text else "untrusted"
                found.append({"event": event, "key": key, "hash": digest, "trust": trust})
    return found


def codex_trust_problem(trust):
    """One line on the wctx hooks Codex will not run for want of trust, or None."""
    bad = [t for t in trust if t["trust"] != "trusted"]
    if not bad:
        return None
    said = {
        "untrusted": "not trusted",
        "modified": "changed since it was trusted",
        "disabled": "disabled in Codex",
        "unknown": "trust recorded in a form wctx cannot read",
    }
    return "Codex will not run %s" % ", ".join(
        "the %s hook (%s)" % (t["event"], said[t["trust"]]) for t in bad
    )


# Gemini CLI run headless (`gemini -p`) has no one to ask, so its policy engine denies every tool
# nobody allowed, and a denied tool is left out of the model's tool list: the server shows as
# Connected and the model gets none of its tools. A server's tools are allowed by "trust": true on
# its mcpServers entry, by mcp.allowed naming it (or "*"), by mcp.autoAllowInHeadless, or by a
# policy rule (~/.gemini/policies/*.toml) with decision "allow" and toolName "mcp_<server>_*"
# (checked in Gemini CLI 0.61; a rule naming only mcpName does not do it there).
_GEMINI_RULE_PAIR = r"^\s*(toolName|decision|interactive)\s*=\s*(.+?)\s*(?:#.*)?$"


def _gemini_policy_allows(policies_dir, server):
    """Whether a policy file allows ``server``'s tools when Gemini CLI runs headless."""
    try:
        names = sorted(n for n in os.listdir(policies_dir) if n.endswith(".toml"))
    except OSError:
        return False
    covering = {"*", "mcp_*", "mcp_%s_*" % server}
    for name in names:
        try:
            with open(os.path.join(policies_dir, name), encoding="utf-8") as fh:
                text = fh.read(1 << 20)
        except (OSError, UnicodeDecodeError):
            continue
        for block in re.split(r"^\s*\[\[rule\]\]\s*$", text, flags=re.M)[1:]:
            pairs = dict(re.findall(_GEMINI_RULE_PAIR, block.split("\n[", 1)[0], flags=re.M))
            tools = set(re.findall(r'"([^"]*)"', pairs.get("toolName", "")))
            if pairs.get("decision") == '"allow"' and pairs.get("interactive") != "true" and tools & covering:
                return True
    return False


def gemini_mcp_access(env=None):
    """Whether `gemini -p` hands the model the tools of each wctx server in the user's Gemini CLI
    settings (see above). None when no wctx server is configured there; else {"settings",
    "servers": [{"name", "headless", "why"}], "problem", "fix"}, problem and fix None when every
    server's tools reach a headless model."""
    path = hook_settings_path(AGENT_GEMINI, env)
    try:
        _, data = _load_settings(path)
    except WctxError:
        return None  # hooks status reports an unreadable settings file already
    servers = data.get("mcpServers") if isinstance(data.get("mcpServers"), dict) else {}
    mcp = data.get("mcp") if isinstance(data.get("mcp"), dict) else {}
    policies = os.path.join(os.path.dirname(path), "policies")
    rows = []
    for name, entry in sorted(servers.items()):
        entry = entry if isinstance(entry, dict) else {}
        words = [name, entry.get("command")] + list(entry.get("args") or [])
        if not any(isinstance(w, str) and "wctx" in w for w in words):
            continue
        why = _gemini_headless_why(name, entry, mcp, policies)
        rows.append({"name": name, "headless": why.startswith(("trusted", "allowed")), "why": why})
    if not rows:
        return None
    bad = [r for r in rows if not r["headless"]]
    return {
        "settings": path,
        "servers": rows,
        "problem": "gemini -p gets no wctx tools: %s"
        % "; ".join("server %s is %s in %s" % (r["name"], r["why"], path) for r in bad)
        if bad
        else None,
        "fix": "; ".join(
            (
                'remove "%s" from mcp.excluded in %s'
                if r["why"].startswith("excluded")
                else 'add "trust": true to mcpServers.%s in %s'
            )
            % (r["name"], path)
            for r in bad
        )
        if bad
        else None,
    }


def _gemini_headless_why(name, entry, mcp, policies):
    """Why Gemini CLI does or does not hand server ``name``'s tools to a headless model, in the
    order it decides: excluded, trusted, allowed, allowed in headless mode, a policy rule."""
    allowed = mcp.get("allowed") if isinstance(mcp.get("allowed"), list) else []
    excluded = mcp.get("excluded") if isinstance(mcp.get("excluded"), list) else []
    if name in excluded or "*" in excluded:
        return "excluded by mcp.excluded"
    if entry.get("trust") is True:
        return "trusted"
    if name in allowed or "*" in allowed:
        return "allowed by mcp.allowed"
    if mcp.get("autoAllowInHeadless") is True:
        return "allowed by mcp.autoAllowInHeadless"
    if _gemini_policy_allows(policies, name):
        return "allowed by a policy rule"
    return "neither trusted nor allowed"


def hook_fixes(rows, wctx_here):
    """What to do about the problems hook_status found, one line each, for `hooks status` and
    `doctor` alike (``wctx_here``: how to spell this wctx and store in a command).
    - a probe failed: the command cannot run, or runs another store -> install again from here;
    - Codex's hooks feature is off -> turn it on;
    - Codex does not trust a wctx hook -> trust it in Codex (a reinstall trusts nothing);
    - Gemini CLI would not hand wctx's tools to a headless model -> trust the server."""
    fixes = []
    failed_probe = sorted({h["agent"] for h in rows for p in h.get("probes") or () if not p["ok"]})
    if failed_probe:
        fixes.append(
            "reinstall from the wctx and store you use: "
            + "; ".join("%s hooks install %s" % (wctx_here, a) for a in failed_probe)
        )
    for h in rows:
        if (h.get("gemini_mcp") or {}).get("fix"):
            fixes.append(h["gemini_mcp"]["fix"])
        if h.get("feature_off"):
            fixes.append("turn Codex's hooks on: hooks = true under [features] in its config.toml")
        if any(t["trust"] != "trusted" for t in h.get("trust") or ()):
            fixes.append("trust wctx's hooks in Codex: " + CODEX_TRUST_HOW)
    return fixes


def _is_wctx_hook(entry):
    cmd = entry.get("command") if isinstance(entry, dict) else None
    return isinstance(cmd, str) and "wctx" in cmd and ("import --hook" in cmd or "brief --hook" in cmd)


def _load_settings(path):
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        return None, {}
    except OSError as e:
        raise WctxError("cannot read %s: %s" % (path, e.strerror)) from None
    if not text.strip():
        return text, {}
    try:
        data = json.loads(text)
    except ValueError as e:
        raise UsageError(
            "%s is not valid JSON (%s); fix it first, wctx changed nothing" % (path, e)
        ) from None
    if not isinstance(data, dict):
        raise UsageError("%s does not hold a JSON object; wctx changed nothing" % path)
    return text, data


def _settings_text(data):
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _settings_diff(path, old_text, data):
    import difflib

    return "".join(
        difflib.unified_diff(
            (old_text or "").splitlines(True),
            _settings_text(data).splitlines(True),
            fromfile=path if old_text is not None else "/dev/null",
            tofile=path,
        )
    )


def _write_settings(path, old_text, data):
    """Write settings atomically; keep the previous file as <name>.wctx-backup. Returns (diff, backup)."""
    new_text = _settings_text(data)
    diff = _settings_diff(path, old_text, data)
    backup = None
    # A symlinked settings file (dotfiles) is written through to its target, not replaced by a
    # regular file; the new file and the backup keep the original's mode (settings can hold API
    # keys: a 0600 file stays 0600), and a new one is 0600.
    real = os.path.realpath(path)
    try:
        mode = os.stat(real).st_mode & 0o7777
    except OSError:
        mode = 0o600
    os.makedirs(os.path.dirname(real) or ".", exist_ok=True)
    if old_text is not None:
        backup = path + ".wctx-backup"
        _write_private(backup, old_text, mode, os.O_TRUNC)
    tmp = "%s.wctx-tmp-%d" % (real, os.getpid())
    try:
        _write_private(tmp, new_text, mode, os.O_EXCL)
        os.replace(tmp, real)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return diff, backup


def _write_private(path, text, mode, flag):
    """Write ``text`` to ``path`` with exactly ``mode`` (the umask does not widen or narrow it)."""
    if os.path.islink(path):
        os.unlink(path)  # never write a backup through a link someone left in its place
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | flag, mode)
    with open(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    try:
        os.chmod(path, mode)
    except (OSError, NotImplementedError):
        pass


def _hook_entries(agent, end_event, python, home):
    """{event: hook entry} that install_hook writes for ``agent``."""
    milliseconds = agent == AGENT_GEMINI  # Gemini CLI's timeouts are in milliseconds

    def entry(command, seconds):
        return {"type": "command", "command": command, "timeout": seconds * 1000 if milliseconds else seconds}

    end_seconds = HOOK_TIMEOUT_SECONDS
    if agent == AGENT_CODEX and end_event == "SessionEnd":
        end_seconds = CODEX_SESSION_END_TIMEOUT_SECONDS
    out = {
        end_event: entry(hook_command(python, home), end_seconds),
        HOOK_START_EVENT: entry(
            hook_command(python, home, ("brief", "--hook", agent)), HOOK_START_TIMEOUT_SECONDS
        ),
    }
    if agent == AGENT_GEMINI:
        for event, e in out.items():
            e["name"] = "wctx-" + ("briefing" if event == HOOK_START_EVENT else "import")
    return out


def _wctx_entries_in(hooks, event):
    """wctx's own entries in one event of a settings "hooks" object."""
    groups = hooks.get(event)
    found = []
    for group in groups if isinstance(groups, list) else ():
        entries = group.get("hooks") if isinstance(group, dict) else None
        if isinstance(entries, list):
            found.extend(e for e in entries if _is_wctx_hook(e))
    return found


def _is_brief_hook(entry):
    return " brief --hook" in entry.get("command", "")


def _remove_wctx_hooks(hooks, events):
    """Drop wctx's entries from ``events`` of a settings "hooks" object (and containers left empty
    by that, never a user's). Returns how many were removed."""
    removed = 0
    for event in events:
        if not isinstance(hooks.get(event), list):
            continue
        kept_groups = []
        for group in hooks[event]:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                entries = [e for e in group["hooks"] if not _is_wctx_hook(e)]
                removed += len(group["hooks"]) - len(entries)
                if not entries and len(group["hooks"]) > 0:
                    continue  # a group that held only wctx's hook goes with it
                group["hooks"] = entries
            kept_groups.append(group)
        hooks[event] = kept_groups
        if not kept_groups:
            del hooks[event]
    return removed


def install_hook(
    agent, settings=None, env=None, python=None, dry_run=False, home=None, probe=True, allow_read_tools=False
):
    """Add wctx's hooks to the agent's settings (idempotent): import at session end, the briefing
    at session start; then run each command once with a probe payload. With ``allow_read_tools``
    (Claude Code only, the user's explicit choice) also add wctx's read-only MCP tools to
    permissions.allow. Returns {"agent", "settings", "event", "events", "command", "commands",
    "changed", "diff", "backup", "notes", "probes": [{"event", "command", "ok", "error"}]}."""
    if agent not in HOOK_AGENTS:
        raise UsageError("unknown agent %r (one of: %s)" % (agent, ", ".join(HOOK_AGENTS)))
    if allow_read_tools and agent != AGENT_CLAUDE_CODE:
        raise UsageError("--allow-read-tools is for claude-code, whose settings hold permissions.allow")
    path = os.path.abspath(settings) if settings else hook_settings_path(agent, env)
    end_event, notes = _hook_end_event(agent, env)
    wanted = _hook_entries(agent, end_event, python, home)
    old_text, data = _load_settings(path)
    new = _with_wctx_hooks(path, data, wanted)
    if allow_read_tools:
        _allow_tools(path, new, CLAUDE_READ_ONLY_TOOLS)
    result = {
        "agent": agent,
        "settings": path,
        "event": end_event,
        "events": list(wanted),
        "command": wanted[end_event]["command"],
        "commands": {event: e["command"] for event, e in wanted.items()},
        "changed": new != data,
        "diff": "",
        "backup": None,
        "notes": notes,
        "probes": [],
    }
    if agent == AGENT_CODEX:
        result["trust"] = codex_hook_trust(os.path.abspath(path), new, env)
        notes.extend(_codex_hook_notes(result["trust"], env))
    if result["changed"] and not dry_run:
        result["diff"], result["backup"] = _write_settings(path, old_text, new)
    elif result["changed"]:
        result["diff"] = _settings_diff(path, old_text, new)
    if probe and not dry_run:
        result["probes"] = [probe_hook_command(cmd, event, home) for event, cmd in result["commands"].items()]
    return result


def _hook_end_event(agent, env):
    """(the event at which the agent's session ends, notes for the user about its hooks)."""
    if agent == AGENT_CODEX:
        end_event, why = codex_end_event(env)
        return end_event, ["Codex session end: %s (%s)." % (end_event, why)]
    if agent == AGENT_GEMINI:
        return HOOK_EVENTS[agent], [
            "Gemini CLI runs hooks from ~/.gemini/settings.json in every folder; it asks before running "
            "hooks that changed since it last saw them, and /hooks panel lists them."
        ]
    return HOOK_EVENTS[agent], []


def _with_wctx_hooks(path, data, wanted):
    """A copy of the settings ``data`` with wctx's ``wanted`` hooks ({event: entry}) in place of
    the ones it had; settings whose hooks are not objects and lists are refused, unchanged."""
    new = json.loads(json.dumps(data))
    hooks = new.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise UsageError('%s: "hooks" is not an object; wctx changed nothing' % path)
    for event in HOOK_ALL_EVENTS:
        if event in hooks and not isinstance(hooks[event], list):
            raise UsageError("%s: hooks.%s is not a list; wctx changed nothing" % (path, event))
    # A wctx hook in an event it no longer belongs to (Codex's Stop once SessionEnd exists) goes.
    _remove_wctx_hooks(hooks, [e for e in HOOK_ALL_EVENTS if e not in wanted])
    for event, entry in wanted.items():
        groups = hooks.setdefault(event, [])
        mine = [e for e in _wctx_entries_in(hooks, event) if _is_brief_hook(e) == (event == HOOK_START_EVENT)]
        if mine:
            for e in mine:
                e.update(entry)  # follows wctx when it moved or was reinstalled another way
        else:
            groups.append({"hooks": [entry]})
    return new


def _codex_hook_notes(trust, env):
    """What keeps Codex from running the hooks just installed: its hooks feature off, or a hook it
    does not trust."""
    notes = []
    _, feature_on, _ = read_codex_config(env)
    if not feature_on:
        notes.append(
            "Codex's hooks feature is off in its config.toml ([features] hooks = false): no hook runs"
        )
    problem = codex_trust_problem(trust)
    if problem:
        notes.append("%s; to trust them: %s" % (problem, CODEX_TRUST_HOW))
    return notes


def _allow_tools(path, data, tools):
    """Add ``tools`` missing from data's permissions.allow, after the user's own entries."""
    permissions = data.setdefault("permissions", {})
    if not isinstance(permissions, dict) or not isinstance(permissions.setdefault("allow", []), list):
        raise UsageError("%s: permissions.allow is not a list; wctx changed nothing" % path)
    permissions["allow"].extend(t for t in tools if t not in permissions["allow"])


def _disallow_tools(data, tools):
    """Take ``tools`` (what --allow-read-tools added) out of data's permissions.allow, and the
    containers left empty by that; returns those taken out."""
    permissions = data.get("permissions")
    allow = permissions.get("allow") if isinstance(permissions, dict) else None
    if not isinstance(allow, list):
        return []
    taken = [t for t in allow if t in tools]
    permissions["allow"] = [t for t in allow if t not in tools]
    if not permissions["allow"]:
        del permissions["allow"]
    if not permissions:
        del data["permissions"]
    return taken


def probe_hook_command(command, event, home=None):
    """Run one hook command as its agent would, from a clean shell (PATH=/usr/bin:/bin, no
    PYTHONPATH, no WCTX_HOME, not this directory), with a probe payload it answers without acting.
    It passes when it answers and names the store ``home`` (see hook_home) that it would use.
    Returns {"event", "command", "ok", "error", "store"}."""
    import shlex

    expected = hook_home(home)
    env = {"PATH": HOOK_PROBE_PATH, "HOME": os.path.expanduser("~"), "LC_ALL": "C.UTF-8"}
    payload = json.dumps({"hook_event_name": HOOK_PROBE_EVENT, "probe_of": event}).encode()
    shell = "/bin/sh" if os.path.exists("/bin/sh") else "sh"
    code, out, err = run_program(
        [shell, "-c", command], input_bytes=payload, env=env, timeout=HOOK_PROBE_SECONDS
    )
    answer = None
    if code == 0:
        try:
            answer = json.loads(out.decode("utf-8", "replace").strip().splitlines()[-1])
        except (ValueError, IndexError):
            answer = None
    if not isinstance(answer, dict) or answer.get("wctx_probe") != "ok":
        lines = err.decode("utf-8", "replace").strip().splitlines()
        error = "exit %s: %s" % (
            code if code is not None else "-",
            lines[-1] if lines else "no answer to the probe",
        )
        return {"event": event, "command": command, "ok": False, "error": error, "store": None}
    store = answer.get("home")
    try:
        named = "--home" in shlex.split(command)
    except ValueError:
        named = False
    error = None
    if not named:
        error = (
            "names no store: it uses the WCTX_HOME of whatever starts the agent (%s from a clean "
            "shell), not %s" % (store or "~/.wctx", expected)
        )
    elif not store or os.path.realpath(store) != os.path.realpath(expected):
        error = "runs against the store at %s, not this one (%s)" % (store or "an unknown place", expected)
    return {"event": event, "command": command, "ok": error is None, "error": error, "store": store}


def uninstall_hook(agent, settings=None, env=None, dry_run=False):
    """Remove exactly the hook entries install_hook added (and containers left empty by that)."""
    if agent not in HOOK_AGENTS:
        raise UsageError("unknown agent %r (one of: %s)" % (agent, ", ".join(HOOK_AGENTS)))
    path = os.path.abspath(settings) if settings else hook_settings_path(agent, env)
    old_text, data = _load_settings(path)
    new = json.loads(json.dumps(data))
    hooks = new.get("hooks")
    removed = 0
    if isinstance(hooks, dict):
        removed = _remove_wctx_hooks(hooks, HOOK_ALL_EVENTS)
        if not hooks:
            del new["hooks"]
    allowed = _disallow_tools(new, CLAUDE_READ_ONLY_TOOLS) if agent == AGENT_CLAUDE_CODE else []
    result = {
        "agent": agent,
        "settings": path,
        "event": HOOK_EVENTS[agent],
        "removed": removed,
        "permissions_removed": allowed,
        "changed": new != data,
        "diff": "",
        "backup": None,
    }
    if result["changed"] and not dry_run:
        result["diff"], result["backup"] = _write_settings(path, old_text, new)
    elif result["changed"]:
        result["diff"] = _settings_diff(path, old_text, new)
    return result


def hook_status(env=None, probe=False, home=None):
    """Per agent: its settings file, the events wctx's hooks sit in and their commands, and for
    Codex whether Codex trusts them; with ``probe``, each command run once with the probe payload
    and checked to use the store ``home`` (see hook_home). A row's "failed" lists what keeps its
    hooks from working here (a failed probe, Codex's missing trust)."""
    out = []
    for agent in HOOK_AGENTS:
        path = hook_settings_path(agent, env)
        try:
            _, data = _load_settings(path)
        except WctxError as e:
            out.append(
                {"agent": agent, "settings": path, "installed": False, "problem": str(e), "failed": []}
            )
            continue
        hooks = data.get("hooks") if isinstance(data.get("hooks"), dict) else {}
        commands = {}
        for event in HOOK_ALL_EVENTS:
            found = _wctx_entries_in(hooks, event)
            if found:
                commands[event] = found[0]["command"]
        ends = [e for e in commands if e != HOOK_START_EVENT]
        row = {
            "agent": agent,
            "settings": path,
            "event": ends[0] if ends else HOOK_EVENTS[agent],
            "installed": bool(commands),
            "command": commands[ends[0]] if ends else None,
            "commands": commands,
            "session_start": HOOK_START_EVENT in commands,
            "failed": [],
        }
        if agent == AGENT_CODEX and commands:
            row["trust"] = codex_hook_trust(os.path.abspath(path), data, env)
            _, feature_on, _ = read_codex_config(env)
            if not feature_on:
                row["feature_off"] = True
                row["problem"] = "Codex's hooks feature is off in its config.toml ([features] hooks = false)"
                row["failed"].append(row["problem"])
            problem = codex_trust_problem(row["trust"])
            if problem:
                row["failed"].append(problem)
        if agent == AGENT_GEMINI:
            row["gemini_mcp"] = gemini_mcp_access(env)
        if probe and commands:
            row["probes"] = [probe_hook_command(cmd, event, home) for event, cmd in commands.items()]
            row["failed"] += ["%s hook: %s" % (p["event"], p["error"]) for p in row["probes"] if not p["ok"]]
        out.append(row)
    return out


def hook_probe_answer(payload, home):
    """The answer to an install/doctor probe (a JSON line on stdout naming the store the hook
    would use), or None for a real payload."""
    if isinstance(payload, dict) and payload.get("hook_event_name") == HOOK_PROBE_EVENT:
        return json.dumps(
            {"wctx_probe": "ok", "version": __version__, "python": sys.version.split()[0], "home": home}
        )
    return None


def _read_hook_input(stream, seconds=HOOK_STDIN_SECONDS):
    """The hook's JSON from stdin, without waiting forever for an EOF that may never come."""
    import select

    fd = stream.fileno()
    chunks = []
    deadline = time.monotonic() + seconds
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        try:
            ready, _, _ = select.select([fd], [], [], remaining)
        except (OSError, ValueError):  # not selectable (Windows pipes): a plain read
            chunks.append(os.read(fd, 1 << 20))
            break
        if not ready:
            break
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
        try:
            return json.loads(b"".join(chunks))
        except ValueError:
            continue
    data = b"".join(chunks)
    return json.loads(data) if data.strip() else {}


def run_import_hook(store_home=None, stdin=None, env=None, detach=True):
    """Entry point of `wctx import --hook`: import the transcript the agent names; log, never raise.

    The hook's input is read and checked at once; the import itself runs in a detached child
    (POSIX fork + new session) so the agent neither waits for it nor kills it when it exits.
    WCTX_HOOK_FOREGROUND=1, or a platform without fork, imports in the foreground.
    """
    env = os.environ if env is None else env
    home = hook_home(store_home)
    try:
        payload = _read_hook_input(stdin or sys.stdin)
        if not isinstance(payload, dict):
            raise UsageError("hook input is not a JSON object")
        answer = hook_probe_answer(payload, home)
        if answer is not None:
            sys.stdout.write(answer + "\n")
            return 0
        transcript = payload.get("transcript_path")
        if not transcript:
            transcript = transcript_for_session(None, payload.get("session_id"), env)
            if not transcript:
                raise NotFoundError(
                    "hook input names no transcript_path and session %s was not found"
                    % payload.get("session_id")
                )
        if not os.path.isfile(transcript):
            # Nothing to do, not an error: `claude mcp add` and `claude mcp list` end a session
            # whose transcript was never written.
            return 0
    except BaseException as e:  # a hook must never fail the agent
        _hook_log(
            home,
            "error %s: %s" % (type(e).__name__, e)
            if not isinstance(e, KeyboardInterrupt)
            else "error interrupted",
        )
        return 0
    if detach and env.get("WCTX_HOOK_FOREGROUND") != "1" and hasattr(os, "fork"):
        try:
            if os.fork() > 0:
                return 0  # the agent's hook is done; the child carries on
        except OSError:
            pass  # no fork after all: import in the foreground
        else:
            # Child: own session (a signal to the agent's process group does not reach it), and
            # stdio off the agent's pipes, which it may wait on.
            try:
                os.setsid()
                null = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(null, fd)
                _hook_import(home, payload, transcript)
            finally:
                os._exit(0)
    _hook_import(home, payload, transcript)
    return 0


def session_start_output(agent, text):
    """The JSON an agent's SessionStart hook prints to add ``text`` to the session's context: the
    documented hookSpecificOutput.additionalContext form of Claude Code, Codex and Gemini CLI."""
    if agent not in HOOK_AGENTS:
        raise UsageError("unknown agent %r (one of: %s)" % (agent, ", ".join(HOOK_AGENTS)))
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": HOOK_START_EVENT, "additionalContext": text}},
        ensure_ascii=False,
    )


def run_brief_hook(agent, store_home=None, stdin=None, stdout=None):
    """Entry point of `wctx brief --hook AGENT`: print the briefing for the hook's cwd in the
    agent's form. Never fails the agent: a cwd outside every registered repository, a missing
    store or any error prints nothing (errors go to hooks.log) and exits 0."""
    home = hook_home(store_home)
    out = stdout or sys.stdout
    try:
        payload = _read_hook_input(stdin or sys.stdin)
        if not isinstance(payload, dict):
            raise UsageError("hook input is not a JSON object")
        answer = hook_probe_answer(payload, home)
        if answer is not None:
            out.write(answer + "\n")
            return 0
        cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else os.getcwd()
        try:
            store = open_store(home, create=False)
        except NotFoundError:
            return 0  # no store yet: nothing to brief on
        try:
            res = brief(store, cwd=cwd)
        except NotFoundError:
            return 0  # not a registered repository: say nothing
        finally:
            store.close()
        out.write(session_start_output(agent, res["text"]) + "\n")
        out.flush()
    except BaseException as e:  # a hook must never fail the agent
        _hook_log(
            home,
            "error brief %s: %s" % (type(e).__name__, e)
            if not isinstance(e, KeyboardInterrupt)
            else "error interrupted",
        )
    return 0


def _hook_import(home, payload, transcript):
    try:
        store = open_store(home)
        try:
            cwd = payload.get("cwd")
            result = import_transcript(store, transcript, cwd_hint=cwd if isinstance(cwd, str) else None)
        finally:
            store.close()
        line = "ok %s %s %s %s" % (
            payload.get("hook_event_name") or "-",
            result["status"],
            result["session"],
            transcript,
        )
    except BaseException as e:  # a hook must never fail the agent
        line = (
            "error %s: %s" % (type(e).__name__, e)
            if not isinstance(e, KeyboardInterrupt)
            else "error interrupted"
        )
    _hook_log(home, line)
    _hook_sync(home)


def _hook_sync(home):
    """After a hook's import, ``wctx sync`` when the user turned it on (``sync --auto on``); a
    failure (offline, say) is logged and the next session's hook tries again."""
    try:
        store = open_store(home, create=False)
        try:
            if _sync_get(store, "auto") != "on":
                return
            report = sync_memory(store)
        finally:
            store.close()
        line = "sync ok imported %d items, exported %d files%s" % (
            report.imported["evidence"],
            report.exported["files"],
            ", skipped %d files" % len(report.skipped) if report.skipped else "",
        )
    except BaseException as e:  # a hook must never fail the agent
        line = "sync error %s: %s" % (type(e).__name__, e)
    _hook_log(home, line)


def _hook_log(home, line):
    try:
        os.makedirs(home, exist_ok=True)
        path = os.path.join(home, HOOK_LOG)
        if os.path.exists(path) and os.path.getsize(path) > HOOK_LOG_MAX_BYTES:
            os.replace(path, path + ".1")
        with open(path, "a", encoding="utf-8") as fh:
            fh.write("%s %s\n" % (utc_now(), shown_text(line)))
    except OSError:
        pass
