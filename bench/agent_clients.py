"""Do the real agent programs get what wctx gives them? Codex CLI, Gemini CLI and Claude Code, each
driven for a turn against a loopback stand-in for its model API.

    python3 bench/agent_clients.py [--codex PATH] [--gemini PATH] [--claude PATH]

Nothing leaves the machine: each stand-in answers the model requests itself, with the tool calls
a check needs (a wctx MCP tool, a shell command), then "ok", and records every request body. Each
check builds its own throw-away HOME, agent settings, wctx store and git repository, and
removes them when it is done.

- codex: an MCP record_evidence call, one the server refuses, a search, a shell command; then
  `wctx import` of the rollout links the item recorded live and lists the refusal. A turn with no
  tool is an empty import. `wctx capture` from the workspace-write sandbox with the store outside
  it fails and names writable_roots; with the store in writable_roots it records.
- gemini: `gemini -p` with the entry `wctx mcp-info` prints and with that entry minus "trust":
  how many wctx tools reach the model, and what `wctx hooks status` says of each.
- claude: `claude -p` calling mcp__wctx__search_evidence as installed, then after `wctx hooks
  install claude-code --allow-read-tools`; and the hooks.log lines `claude mcp list` leaves.

The agents are not dependencies of wctx or its tests: install them where you like (npm packages
@openai/codex, @google/gemini-cli, @anthropic-ai/claude-code).
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class StandIn(http.server.BaseHTTPRequestHandler):
    """A model API: answers the n-th request of a turn with the n-th scripted tool call, then "ok".
    The turn's position is the number of tool results the request carries."""

    calls = []
    bodies = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.reply("application/json", b'{"data":[],"models":[]}')

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length") or 0)).decode("utf-8", "replace")
        type(self).bodies.append(body)
        request = json.loads(body) if body.startswith("{") else {}
        self.answer(request, len(type(self).bodies))

    def reply(self, kind, data):
        self.send_response(200)
        self.send_header("content-type", kind)
        self.end_headers()
        self.wfile.write(data)


class Responses(StandIn):
    """OpenAI Responses API, as Codex calls it."""

    waits = []

    def answer(self, request, n):
        done = sum(1 for i in request.get("input", []) if i.get("type") == "function_call_output")
        step = done - len(self.waits)
        ready = any(t.get("name") == "mcp__wctx" for t in request.get("tools", []))
        if step < len(self.calls) and "namespace" in self.calls[step] and not ready and len(self.waits) < 20:
            # Codex connects MCP servers in the background: give it a moment before an MCP call.
            self.waits.append(n)
            item = {
                "type": "function_call",
                "name": "exec_command",
                "arguments": '{"cmd":"sleep 1"}',
                "call_id": "wait_%d" % n,
                "id": "fw_%d" % n,
            }
        elif step < len(self.calls):
            item = dict(self.calls[step], type="function_call", call_id="call_%d" % n, id="fc_%d" % n)
        else:
            item = {
                "type": "message",
                "role": "assistant",
                "id": "m",
                "content": [{"type": "output_text", "text": "ok"}],
            }
        usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
        events = [
            ("response.created", {"response": {"id": "r%d" % n}}),
            ("response.output_item.done", {"item": item}),
            ("response.completed", {"response": {"id": "r%d" % n, "usage": usage}}),
        ]
        self.reply("text/event-stream", b"".join(sse(name, dict(data, type=name)) for name, data in events))


class Gemini(StandIn):
    """Gemini API streamGenerateContent, as Gemini CLI calls it with GOOGLE_GEMINI_BASE_URL."""

    def answer(self, request, n):
        if "countTokens" in self.path:
            return self.reply("application/json", b'{"totalTokens":1}')
        chunk = {
            "candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
        }
        self.reply("text/event-stream", ("data: %s\r\n\r\n" % json.dumps(chunk)).encode())


class Messages(StandIn):
    """Anthropic Messages API, as Claude Code calls it with ANTHROPIC_BASE_URL. Claude Code connects
    MCP servers in the background: while the request has no mcp__wctx__ tool, the model waits for
    them first (its WaitForMcpServers tool)."""

    waited = []

    def answer(self, request, n):
        if "count_tokens" in self.path:
            return self.reply("application/json", b'{"input_tokens":1}')
        tools = [t.get("name") or "" for t in request.get("tools", [])]
        results = sum(
            1
            for m in request.get("messages", [])
            if isinstance(m.get("content"), list)
            for b in m["content"]
            if b.get("type") == "tool_result"
        )
        call = None
        if "WaitForMcpServers" in tools and not any(t.startswith("mcp__wctx__") for t in tools):
            if not self.waited:
                self.waited.append(n)
                call = {"name": "WaitForMcpServers", "input": {}}
        elif any(t.startswith("mcp__wctx__") for t in tools) and results - len(self.waited) < len(self.calls):
            call = self.calls[results - len(self.waited)]
        usage = {"input_tokens": 1, "output_tokens": 1}
        start = {
            "id": "msg_%d" % n,
            "type": "message",
            "role": "assistant",
            "model": request.get("model"),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage,
        }
        if call:
            block = {"type": "tool_use", "id": "toolu_%d" % n, "name": call["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(call["input"])}
            stop = "tool_use"
        else:
            block, delta, stop = (
                {"type": "text", "text": ""},
                {"type": "text_delta", "text": "ok"},
                "end_turn",
            )
        events = [
            ("message_start", {"message": start}),
            ("content_block_start", {"index": 0, "content_block": block}),
            ("content_block_delta", {"index": 0, "delta": delta}),
            ("content_block_stop", {"index": 0}),
            (
                "message_delta",
                {"delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 1}},
            ),
            ("message_stop", {}),
        ]
        self.reply("text/event-stream", b"".join(sse(name, dict(data, type=name)) for name, data in events))


def sse(name, data):
    return ("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode()


def serve(handler, calls):
    handler.calls, handler.bodies = calls, []
    handler.waited, handler.waits = [], []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, "http://127.0.0.1:%d" % server.server_address[1]


def run(argv, env, cwd=None):
    return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def world(prefix):
    """A throw-away HOME with a wctx store at $HOME/.wctx (outside /tmp, as a user's is, when the
    temporary folder allows) holding one registered git repository, `pool`."""
    tmp = tempfile.mkdtemp(prefix=prefix, dir="/var/tmp" if os.path.isdir("/var/tmp") else None)
    repo, store = os.path.join(tmp, "pool"), os.path.join(tmp, ".wctx")
    os.makedirs(repo)
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "-C", repo]
    subprocess.run(git + ["init", "-q"], check=True)
    with open(os.path.join(repo, "pool.py"), "w", encoding="utf-8") as fh:
        fh.write("def acquire():\n    return 1\n")
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "initial"], check=True)
    wctx = [sys.executable, os.path.join(ROOT, "wctx.py"), "--home", store]
    env = {"HOME": tmp, "PATH": os.path.dirname(sys.executable) + ":/usr/bin:/bin", "LC_ALL": "C.UTF-8"}
    done = run(wctx + ["repo", "add", repo, "--workspace", "bench"], env)
    assert done.returncode == 0, done.stderr
    return tmp, repo, store, wctx, env


def codex_checks(codex):
    tmp, repo, store, wctx, env = world("wctx-codex-")
    home = os.path.join(tmp, ".codex")
    os.makedirs(home)
    record = json.dumps(
        {"items": [{"kind": "finding", "claim": "acquire returns a constant", "files": ["pool.py#acquire"]}]}
    )
    calls = [
        {"name": "record_evidence", "namespace": "mcp__wctx", "arguments": record},
        {"name": "search_evidence", "namespace": "mcp__wctx", "arguments": json.dumps({"query": "acquire"})},
        {
            "name": "record_evidence",
            "namespace": "mcp__wctx",
            "arguments": json.dumps({"items": [{"kind": "bogus", "claim": "x"}]}),
        },
        {"name": "exec_command", "arguments": json.dumps({"cmd": "cat pool.py"})},
    ]
    server, url = serve(Responses, calls)
    with open(os.path.join(home, "config.toml"), "w", encoding="utf-8") as fh:
        fh.write(
            'model = "stand-in"\nmodel_provider = "loopback"\n[model_providers.loopback]\nname = "loopback"\n'
            'base_url = "%s/v1"\nwire_api = "responses"\nenv_key = "LOOPBACK_KEY"\n'
            % url
            + _codex_server(wctx, env)
        )
    env = dict(
        env,
        CODEX_HOME=home,
        LOOPBACK_KEY="unused",
        PATH=os.path.dirname(os.path.abspath(codex)) + ":" + env["PATH"],
    )
    print(run([codex, "--version"], env).stdout.strip())

    def exec_turn(*extra):
        before = set(rollouts(home))
        done = run([codex, "exec", "--skip-git-repo-check", *extra, "go"], env, cwd=repo)
        return done, sorted(set(rollouts(home)) - before)

    done, new = exec_turn()
    res = json.loads(run(wctx + ["import", "--json", *new], env).stdout)["results"][0]
    show = json.loads(run(wctx + ["sessions", "show", res["session"], "--json"], env).stdout)
    activity = show.get("activity") or show
    print(
        "codex MCP turn: exit %d; import %s: %d evidence links (%s), tool errors %s"
        % (
            done.returncode,
            res["status"],
            len(res.get("evidence") or ()),
            ", ".join(
                "%s%s" % (e["id"], " live" if e.get("duplicate") else "") for e in res.get("evidence") or ()
            ),
            [e["tool"] for e in activity.get("errors") or ()],
        )
    )
    Responses.calls[:], Responses.waits[:] = [], []
    done, new = exec_turn()
    res = json.loads(run(wctx + ["import", "--json", *new], env).stdout)["results"][0]
    print("codex turn with no tool: exit %d; import %s" % (done.returncode, res["status"]))
    capture = "%s capture --finding 'acquire is constant' --repo pool" % " ".join(wctx)
    Responses.calls[:] = [{"name": "exec_command", "arguments": json.dumps({"cmd": capture})}]
    for label, extra in (
        ("workspace-write sandbox", ["--sandbox", "workspace-write"]),
        (
            "+ writable_roots = [store]",
            [
                "--sandbox",
                "workspace-write",
                "-c",
                "sandbox_workspace_write.writable_roots=[%s]" % json.dumps(store),
            ],
        ),
    ):
        Responses.bodies[:] = []
        exec_turn(*extra)
        outputs = [
            i.get("output")
            for b in Responses.bodies
            for i in json.loads(b).get("input", [])
            if i.get("type") == "function_call_output"
        ]
        last = str(outputs[-1]) if outputs else ""
        verdict = (
            "recorded"
            if " finding pool" in last
            else ("refused: " + last.rsplit("wctx: ", 1)[-1].strip() if "wctx: " in last else "no output")
        )
        print("codex capture from %s: %s" % (label, verdict))
    server.shutdown()
    shutil.rmtree(tmp, ignore_errors=True)


def _codex_server(wctx, env):
    info = json.loads(run(wctx + ["mcp-info", "--json"], env).stdout)
    return next(s["text"] for s in info["snippets"] if s["client"] == "Codex")


def rollouts(home):
    for folder, _, names in os.walk(os.path.join(home, "sessions")):
        for name in names:
            if name.endswith(".jsonl"):
                yield os.path.join(folder, name)


def gemini_checks(gemini):
    tmp, repo, store, wctx, env = world("wctx-gemini-")
    server, url = serve(Gemini, [])
    info = json.loads(run(wctx + ["mcp-info", "--json"], env).stdout)
    entry = json.loads(next(s["text"] for s in info["snippets"] if s["client"] == "Gemini CLI"))[
        "mcpServers"
    ]["wctx"]
    entry["command"] = sys.executable  # the stand-in's HOME has no python3 on a thin PATH
    env = dict(env, GEMINI_API_KEY="unused", GOOGLE_GEMINI_BASE_URL=url, GEMINI_CLI_HOME=tmp)
    print("gemini", run([gemini, "--version"], env).stdout.strip())
    for label, server_entry in (
        ("as mcp-info prints it", entry),
        ('without "trust"', {k: v for k, v in entry.items() if k != "trust"}),
    ):
        os.makedirs(os.path.join(tmp, ".gemini"), exist_ok=True)
        with open(os.path.join(tmp, ".gemini", "settings.json"), "w", encoding="utf-8") as fh:
            json.dump(
                {
                    "security": {
                        "auth": {"selectedType": "gemini-api-key"},
                        "folderTrust": {"enabled": False},
                    },
                    "mcpServers": {"wctx": server_entry},
                },
                fh,
            )
        Gemini.bodies[:] = []
        done = run([gemini, "-p", "go", "-m", "gemini-2.5-flash"], env, cwd=repo)
        tools = {
            f.get("name")
            for b in Gemini.bodies
            if b.startswith("{")
            for t in json.loads(b).get("tools", [])
            for f in t.get("functionDeclarations", [])
        }
        status = [
            line.strip()
            for line in run(wctx + ["hooks", "status"], env).stdout.splitlines()
            if "gemini -p" in line
        ]
        print(
            "gemini -p, entry %s: exit %d, wctx tools in the model request: %d; wctx hooks status: %s"
            % (label, done.returncode, len([t for t in tools if t and t.startswith("mcp_wctx_")]), status)
        )
    server.shutdown()
    shutil.rmtree(tmp, ignore_errors=True)


def claude_checks(claude):
    tmp, repo, store, wctx, env = world("wctx-claude-")
    config = os.path.join(tmp, ".claude")
    server, url = serve(Messages, [{"name": "mcp__wctx__search_evidence", "input": {"query": "acquire"}}])
    info = json.loads(run(wctx + ["mcp-info", "--json"], env).stdout)
    project = json.loads(next(s["text"] for s in info["snippets"] if s["client"] == "Claude Code (project)"))
    project["mcpServers"]["wctx"]["command"] = sys.executable
    mcp_json = os.path.join(tmp, "mcp.json")
    with open(mcp_json, "w", encoding="utf-8") as fh:
        json.dump(project, fh)
    env = dict(
        env,
        CLAUDE_CONFIG_DIR=config,
        ANTHROPIC_BASE_URL=url,
        ANTHROPIC_API_KEY="sk-ant-unused",
        DISABLE_TELEMETRY="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    print("claude", run([claude, "--version"], env).stdout.strip())
    for label, install in (
        ("as installed", ["hooks", "install", "claude-code"]),
        ("after --allow-read-tools", ["hooks", "install", "claude-code", "--allow-read-tools"]),
    ):
        run(wctx + install, env)
        Messages.bodies[:], Messages.waited[:] = [], []
        done = run([claude, "-p", "go", "--mcp-config", mcp_json], env, cwd=repo)
        results = [
            b
            for body in Messages.bodies
            if body.startswith("{")
            for m in json.loads(body).get("messages", [])
            if isinstance(m.get("content"), list)
            for b in m["content"]
            if b.get("type") == "tool_result"
        ]
        search = [r for r in results if "ready: true" not in json.dumps(r)]  # not WaitForMcpServers
        said = search[-1].get("content") if search else "no search result"
        said = said if isinstance(said, str) else json.dumps(said)
        print(
            "claude -p search_evidence %s: exit %d, %s: %s"
            % (
                label,
                done.returncode,
                "refused" if search and search[-1].get("is_error") else "answered",
                said[:110],
            )
        )
    log = os.path.join(store, "hooks.log")
    size = os.path.getsize(log) if os.path.exists(log) else 0
    run([claude, "mcp", "list"], env, cwd=repo)
    run(wctx + ["sessions"], env)  # time for a detached hook to finish
    with open(log, encoding="utf-8") if os.path.exists(log) else open(os.devnull) as fh:
        fh.seek(size)
        lines = fh.read().splitlines()
    print(
        "claude mcp list: %d new hooks.log lines, %d errors"
        % (len(lines), sum(" error " in line for line in lines))
    )
    server.shutdown()
    shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--codex", help="path of the codex binary")
    parser.add_argument("--gemini", help="path of the gemini binary")
    parser.add_argument("--claude", help="path of the claude binary")
    args = parser.parse_args(argv)
    if not (args.codex or args.gemini or args.claude):
        parser.error("name at least one agent program")
    for check, program in (
        (codex_checks, args.codex),
        (gemini_checks, args.gemini),
        (claude_checks, args.claude),
    ):
        if program:
            check(os.path.abspath(program))


if __name__ == "__main__":
    main()
