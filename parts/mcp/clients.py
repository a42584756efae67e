from __future__ import annotations

import json
import os
import re
import sys

from .catalogue import TOOLS
from .protocol import (
    AGENT_GUIDANCE,
    AGENT_GUIDANCE_BEGIN,
    AGENT_GUIDANCE_END,
    AGENT_GUIDANCE_FILES,
    SERVER_NAME,
    SUPPORTED_VERSIONS,
)
from .service import CORE

# ----------------------------------------------------------------------------------------------
# Client configuration snippets and agent guidance
# ----------------------------------------------------------------------------------------------


def running_file(core=None):
    """The absolute path users should put in a client config (the .pyz when run from one)."""
    if core is None:
        import wctx as core
    return core.wctx_command_path()


def mcp_info(core=None, path=None, python="python3", repo=None, workspace=None, home=None):
    """The tool surface and ready-to-paste client configurations for this installation."""
    path = path or running_file(core)
    home = home or os.environ.get("WCTX_HOME")  # a client will not inherit the user's shell
    if home:
        home = os.path.abspath(os.path.expanduser(home))
    if path.endswith((".py", ".pyz")):
        args = [path, "mcp"]
    else:  # an installed `wctx` command runs on its own interpreter
        python, args = path, ["mcp"]
    if repo:
        args += ["--repo", repo]
    if workspace:
        args += ["--workspace", workspace]
    env = {"WCTX_HOME": home} if home else {}
    server = {"command": python, "args": args}
    if env:
        server["env"] = env
    stdio_server = dict({"type": "stdio"}, **server)

    def j(value):
        return json.dumps(value, indent=2)

    def toml_string(value):
        return json.dumps(value)  # a JSON string is a valid TOML basic string

    env_flags = "".join(f" -e {k}={v}" for k, v in env.items())
    codex = "[mcp_servers.wctx]\ncommand = {}\nargs = [{}]\n".format(
        toml_string(python), ", ".join(toml_string(a) for a in args)
    )
    if env:
        codex += "env = {{ {} }}\n".format(", ".join(f"{k} = {toml_string(v)}" for k, v in env.items()))
    command_line = " ".join(_shell_quote(a) for a in [python] + args)
    read_only = ["mcp__wctx__" + t["name"] for t in TOOLS if t["readOnly"]]
    snippets = [
        {
            "client": "Claude Code",
            "where": "command line (user scope: every project; --scope project writes .mcp.json instead)",
            "text": f"claude mcp add --scope user wctx{env_flags} -- {command_line}",
        },
        {
            "client": "Claude Code (project)",
            "where": ".mcp.json at the repository root",
            "text": j({"mcpServers": {"wctx": stdio_server}}),
        },
        {"client": "Codex", "where": "~/.codex/config.toml", "text": codex},
        {
            "client": "Cursor",
            "where": ".cursor/mcp.json (or ~/.cursor/mcp.json)",
            "text": j({"mcpServers": {"wctx": server}}),
        },
        {"client": "VS Code", "where": ".vscode/mcp.json", "text": j({"servers": {"wctx": stdio_server}})},
        {
            "client": "Claude Desktop",
            "where": "claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/, Windows: "
            "%APPDATA%\\Claude\\); it starts servers in /, so add --repo NAME to args",
            "text": j({"mcpServers": {"wctx": server}}),
        },
        {
            "client": "Gemini CLI",
            "where": '~/.gemini/settings.json (or .gemini/settings.json); without "trust": true (or a '
            "policy rule allowing mcp_wctx_*) gemini -p hands the model none of wctx's tools",
            "text": j({"mcpServers": {"wctx": dict(server, trust=True)}}),
        },
    ]
    return {
        "server": {
            "name": SERVER_NAME,
            "command": [python] + args,
            "env": env,
            "protocol_versions": list(SUPPORTED_VERSIONS),
        },
        "tools": [
            {
                "name": t["name"],
                "title": t["title"],
                "read_only": t["readOnly"],
                "description": t["description"],
            }
            for t in TOOLS
        ],
        "snippets": snippets,
        "notes": [
            f"If a client cannot find {python} (GUI apps often start with a thin PATH), use {sys.executable} "
            "instead."
            if python == "python3"
            else f"{python} is an installed wctx; its own interpreter runs it.",
            "Clients start the server in the project directory; a client that starts it elsewhere "
            "needs --repo NAME (or tools called with repo).",
            "Gemini CLI connects no MCP server in a folder it does not trust: trust the repository when "
            "it asks, or change it with /permissions (rules in ~/.gemini/trustedFolders.json).",
            'claude -p refuses every tool nobody allowed ("you haven\'t granted it yet"): pass --allowedTools '
            + ",".join(read_only)
            + ", or list them in settings.json permissions.allow ("
            + "wctx hooks install claude-code --allow-read-tools adds them); allow "
            + ", ".join("mcp__wctx__" + t["name"] for t in TOOLS if not t["readOnly"])
            + " the same way for it to record.",
        ],
    }


def _shell_quote(value):
    if value and re.match(r"^[A-Za-z0-9_@%+=:,./-]+$", value):
        return value
    return "'" + value.replace("'", "'\"'\"'") + "'"


def format_mcp_info(info):
    """mcp_info as human text for `wctx mcp-info`."""
    lines = ["wctx MCP server: {}".format(" ".join(_shell_quote(a) for a in info["server"]["command"]))]
    if info["server"]["env"]:
        lines.append(
            "environment: {}".format(", ".join("{}={}".format(*kv) for kv in info["server"]["env"].items()))
        )
    lines.append("protocol versions: {}".format(", ".join(info["server"]["protocol_versions"])))
    lines.append("")
    lines.append("Tools:")
    for tool in info["tools"]:
        lines.append(f"  {tool['name']:<26} {tool['title']}{'' if tool['read_only'] else ' (writes)'}")
    for snippet in info["snippets"]:
        lines.append("")
        lines.append("{}: {}".format(snippet["client"], snippet["where"]))
        lines.extend("    " + line for line in snippet["text"].rstrip("\n").splitlines())
    lines.append("")
    lines.extend("Note: " + note for note in info["notes"])
    return "\n".join(lines) + "\n"


def guidance_text(command="wctx"):
    """The guidance with ``command`` as the way to run wctx (the installed ``wctx`` when it is on
    PATH, else the exact command line that runs it on this machine)."""
    return AGENT_GUIDANCE.replace("`wctx ", f"`{command} ")


def guidance_block(command="wctx"):
    return f"{AGENT_GUIDANCE_BEGIN}\n{guidance_text(command)}{AGENT_GUIDANCE_END}\n"


# Only a block wctx wrote: its exact begin line, and no other begin marker inside, so a marker a
# person typed (a stray "<!-- wctx:begin -->") never makes text outside the block look like ours.
_BLOCK_RE = re.compile(
    re.escape(AGENT_GUIDANCE_BEGIN) + r"(?:(?!<!-- wctx:begin).)*?" + re.escape(AGENT_GUIDANCE_END) + r"\n?",
    re.S,
)


GUIDANCE_FILE_MAX = 4 * 1024 * 1024  # an agent guidance file larger than this is not one to edit


def write_instructions(repo_root, command="wctx"):
    """Install the guidance block in CLAUDE.md, AGENTS.md and GEMINI.md at ``repo_root``.

    The block sits between markers: written once, replaced in place on later runs, nothing else in
    the files touched. Returns {"files": [{"path", "action"}]} with action created / appended /
    updated / unchanged.
    """
    block = guidance_block(command)
    done = []
    for name in AGENT_GUIDANCE_FILES:
        path = os.path.join(repo_root, name)
        if os.path.islink(path) and not os.path.realpath(path).startswith(
            os.path.realpath(repo_root) + os.sep
        ):
            raise ValueError(f"{path} is a symlink out of the repository; not writing through it")
        try:  # the working tree's one bounded reader: a FIFO or a device named CLAUDE.md never hangs this
            data = CORE.read_repo_file(repo_root, name, limit=GUIDANCE_FILE_MAX)
        except CORE.UnreadableFile as e:
            raise ValueError(f"{e}; not writing it") from None
        text = None if data is None else data.decode("utf-8")
        if text is None:
            new, action = block, "created"
        elif _BLOCK_RE.search(text):
            new = _BLOCK_RE.sub(lambda m: block, text, count=1)
            action = "unchanged" if new == text else "updated"
        else:
            separator = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
            if text.endswith("\n") and not text.endswith("\n\n"):
                separator = "\n"
            new, action = text + separator + block, "appended"
        if new != text:
            tmp = path + ".wctx-tmp"
            with open(tmp, "w", encoding="utf-8", newline="") as f:
                f.write(new)
            os.replace(tmp, path)
        done.append({"path": path, "action": action})
    return {"files": done}
