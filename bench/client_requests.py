#!/usr/bin/env python3
"""What every model request pays because wctx is installed, in the real requests of Claude Code,
Codex and Gemini CLI.

    python3 bench/client_requests.py --npm /work/npm                  # this checkout
    python3 bench/client_requests.py --npm /work/npm --against DIR    # also the checkout in DIR
    python3 bench/client_requests.py --npm /work/npm --clients codex --keep

Each client (installed with npm under NPM/claude, NPM/codex, NPM/gemini: @anthropic-ai/claude-code,
@openai/codex, @google/gemini-cli) runs one headless prompt in a throw-away home, against a
loopback stand-in for its model API (nothing leaves the machine): Claude Code through
ANTHROPIC_BASE_URL (Messages API), Codex through a model provider's base_url in its config.toml
(Responses API), Gemini CLI through GOOGLE_GEMINI_BASE_URL (generateContent). The stand-in logs
every request body and answers as a scripted model: it calls each wctx tool in turn, with the
arguments the tool definitions describe, then says "done". wctx is installed as a user would: its
MCP server in the client's configuration and its hooks (`wctx hooks install`, which briefs at
session start) in the client's settings, over a store with two related repositories and enough
evidence to fill the briefing's budget.

Reported per client and version, from the first request that offers wctx's tools:
- tools: bytes of wctx's tool definitions as the client sent them (each definition re-encoded as
  compact JSON: name, description, schema, whatever the client keeps);
- instructions: bytes of the server's instructions, when the client puts them in the request;
- briefing: bytes of the SessionStart briefing, when it reaches the request;
- fixed: their sum, what every request of the session pays;
- delta: the whole request's bytes minus those of the same client's first request in a run
  without wctx (the client's own wrapping included; a few bytes of ids and dates differ);
- calls: for each wctx tool, whether the stand-in's call came back without an error (the tool's
  result, as the client put it in the next request, holds the text the call must return).
Benchmarks only: no test runs this.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import codex_hooks  # noqa: E402  (Codex's own way of recording hook trust)

MARK = "ZQXbrief"
# The tools of the checkout being measured (its server's tools/list), set before each of its runs:
# a checkout from before the catalogue was cut to five still lists eight.
WCTX_TOOLS = []


# -- the loopback model --------------------------------------------------------------------------


class Script:
    """The scripted model of one run: which wctx tool to call next, and what each call must return."""

    def __init__(self, calls):
        self.calls = list(calls)  # (label, tool, arguments, text its result must hold)
        self.next = 0
        self.bodies = []  # (path, body text)
        self.issued = []  # (call index, client's name for the tool, request index at which it was issued)
        self.lock = threading.Lock()

    def decide(self, body):
        """("call", client tool name, arguments) or ("say", text) for a request body."""
        names = client_tool_names(body)
        with self.lock:
            if not names or not all(t in names for t in WCTX_TOOLS) or self.next >= len(self.calls):
                return ("say", "done")
            _, tool, arguments, _ = self.calls[self.next]
            self.issued.append((self.next, names[tool][0], len(self.bodies)))
            self.next += 1
            return ("call", names[tool], arguments)


def _walk(value, namespace=None):
    """(node, the name of the namespace tool it sits in) for every object under ``value``."""
    if isinstance(value, dict):
        yield value, namespace
        inner = value.get("name") if value.get("type") == "namespace" else namespace
        for v in value.values():
            yield from _walk(v, inner)
    elif isinstance(value, list):
        for v in value:
            yield from _walk(v, namespace)


def tool_definitions(body, namespaces=None):
    """{wctx tool: its definition as the client sent it} found anywhere in a request body (and
    in ``namespaces``, {wctx tool: the namespace tool holding it} when the client groups them)."""
    try:
        data = json.loads(body)
    except ValueError:
        return {}
    found = {}
    for node, namespace in _walk(data.get("tools", [])):
        name = node.get("name")
        if not isinstance(name, str) or not any(
            k in node for k in ("description", "input_schema", "parameters", "parametersJsonSchema")
        ):
            continue
        for tool in WCTX_TOOLS:
            if name == tool or name.endswith("_" + tool):
                found[tool] = node
                if namespaces is not None and namespace:
                    namespaces[tool] = namespace
    return found


def client_tool_names(body):
    """{wctx tool: (the client's name for it, its namespace or None)}."""
    namespaces = {}
    found = tool_definitions(body, namespaces)
    return {tool: (node["name"], namespaces.get(tool)) for tool, node in found.items()}


class Model(http.server.BaseHTTPRequestHandler):
    script = None

    def log_message(self, *args):
        pass

    def _send(self, status, ctype, data):
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._send(200, "application/json", b'{"data":[],"models":[]}')

    def do_HEAD(self):
        self._send(200, "application/json", b"")

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length") or 0)).decode("utf-8", "replace")
        path = self.path
        decision = self.script.decide(body)
        self.script.bodies.append((path, body))
        if "/responses" in path:
            return self._codex(decision)
        if ":countTokens" in path:
            return self._send(200, "application/json", b'{"totalTokens":1}')
        if "generatecontent" in path.lower():
            return self._gemini(path, decision)
        if "count_tokens" in path:
            return self._send(200, "application/json", b'{"input_tokens":1}')
        if "/messages" in path:
            return self._anthropic(body, decision)
        self._send(404, "application/json", b"{}")

    def _sse(self, events):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for name, data in events:
            head = "event: %s\n" % name if name else ""
            self.wfile.write((head + "data: %s\n\n" % json.dumps(data)).encode())
        self.wfile.flush()

    def _anthropic(self, body, decision):
        try:
            stream = json.loads(body).get("stream")
        except ValueError:
            stream = False
        usage = {"input_tokens": 1, "output_tokens": 1}
        if decision[0] == "call":
            block = {
                "type": "tool_use",
                "id": "toolu_%d" % len(self.script.bodies),
                "name": decision[1][0],
                "input": {},
            }
            full = dict(block, input=decision[2])
            delta = {"type": "input_json_delta", "partial_json": json.dumps(decision[2])}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            full = {"type": "text", "text": decision[1]}
            delta = {"type": "text_delta", "text": decision[1]}
            stop = "end_turn"
        message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "stand-in", "content": [],
                   "stop_reason": None, "stop_sequence": None, "usage": usage}  # fmt: skip
        if not stream:
            data = dict(message, content=[full], stop_reason=stop)
            return self._send(200, "application/json", json.dumps(data).encode())
        self._sse([
            ("message_start", {"type": "message_start", "message": message}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 1}}),
            ("message_stop", {"type": "message_stop"}),
        ])  # fmt: skip

    def _codex(self, decision):
        n = len(self.script.bodies)
        if decision[0] == "call":
            item = {"type": "function_call", "id": "fc_%d" % n, "call_id": "call_%d" % n, "name": decision[1][0],
                    "arguments": json.dumps(decision[2])}  # fmt: skip
            if decision[1][1]:
                item["namespace"] = decision[1][1]
        else:
            item = {"type": "message", "role": "assistant", "id": "m%d" % n,
                    "content": [{"type": "output_text", "text": decision[1]}]}  # fmt: skip
        usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
        events = [
            ("response.created", {"response": {"id": "r%d" % n}}),
            ("response.output_item.done", {"item": item}),
            ("response.completed", {"response": {"id": "r%d" % n, "usage": usage}}),
        ]
        for name, data in events:
            data["type"] = name
        self._sse(events)

    def _gemini(self, path, decision):
        if decision[0] == "call":
            part = {"functionCall": {"name": decision[1][0], "args": decision[2]}}
        else:
            part = {"text": decision[1]}
        data = {
            "candidates": [
                {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
            "modelVersion": "stand-in",
        }
        if "alt=sse" in path or "streamGenerateContent" in path:
            return self._sse([(None, data)])
        self._send(200, "application/json", json.dumps(data).encode())


# -- the material ----------------------------------------------------------------------------------


def run(argv, env, cwd=None, stdin=None, timeout=300):
    return subprocess.run(
        argv, env=env, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=timeout
    )


def make_world(tmp, checkout, python):
    """Two related repositories, a store whose briefing for ``app`` fills its budget, and the
    scripted calls (with the ids they need)."""
    store = os.path.join(tmp, "store")
    env = dict(os.environ, WCTX_HOME=store)
    wctx = [python, os.path.join(checkout, "wctx.py")]
    lib, app = os.path.join(tmp, "lib"), os.path.join(tmp, "app")
    codex_hooks.git_repo(
        lib, {"pool.py": "def acquire():\n    return 1\n\n\ndef release(c):\n    return c\n"}
    )
    codex_hooks.git_repo(app, {"main.py": "from pool import acquire\nprint(acquire())\n"})
    steps = [
        ["repo", "add", lib, "--workspace", "bench"],
        ["repo", "add", app, "--workspace", "bench"],
        ["relate", "app", "uses", "lib"],
    ]
    kinds = ("--known-issue", "--finding", "--decision", "--question", "--dead-end", "--constraint")
    for i in range(18):
        claim = "%s%d pool acquire leaks a connection when the caller times out after retry %d :: seen in run %d" % (
            MARK, i, i, i)  # fmt: skip
        steps.append(["capture", kinds[i % len(kinds)], claim, "--repo", "lib", "--file", "pool.py#acquire"])
    for command in steps:
        done = run(wctx + command, env, cwd=app)
        if done.returncode:
            sys.exit("wctx %s failed: %s" % (" ".join(command), done.stderr))
    found = json.loads(
        run(wctx + ["search", MARK + "3 acquire", "--repo", "app", "--json"], env, cwd=app).stdout
    )
    first = found["results"][0]
    brief = run(wctx + ["brief", "--repo", "app"], env, cwd=app).stdout
    finding = {"kind": "finding", "claim": "release never closes the socket", "repo": "lib",
               "files": ["pool.py#release"], "symptom": "connections pile up after a timeout"}  # fmt: skip
    # Every job the tools do, each in the form of the catalogue that lists the tool (the retired
    # tools of an older checkout, and the calls that do their jobs now).
    every = [
        ("overview", "workspace_overview", {}, "lib"),
        ("search", "search_evidence", {"query": "acquire leaks a connection", "limit": 3}, MARK),
        ("item", "get_evidence", {"id": first["id"]}, MARK),
        ("session", "get_session_evidence", {"session_id": first["session"], "limit": 2}, MARK),
        ("session", "get_evidence", {"id": first["session"], "limit": 2}, MARK),
        ("relations", "get_related_repositories", {"repo": "lib"}, "app"),
        ("relations", "workspace_overview", {"repo": "lib", "detail": True}, "incoming"),
        ("verify", "verify_freshness", {"ids": [first["id"]]}, "current"),
        ("verify", "workspace_overview", {"ids": [first["id"]]}, "current"),
        ("record", "record_evidence", {"items": [finding]}, "ses-"),
        ("confirm", "confirm_evidence", {"ids": [first["id"]], "note": "re-read acquire"}, first["id"]),
        ("confirm", "record_evidence", {"confirm": [first["id"]], "note": "re-read acquire"}, "confirmed"),
    ]
    calls, done = [], set()
    for label, tool, arguments, expect in every:
        if tool in WCTX_TOOLS and label not in done:
            done.add(label)
            calls.append((label + ": " + tool, tool, arguments, expect))
    return store, lib, app, brief, calls


# -- the clients -------------------------------------------------------------------------------------


def base_env(tmp, npm_bin, port):
    return {
        "PATH": npm_bin + ":" + os.path.dirname(shutil.which("node") or "/usr/bin/node") + ":/usr/bin:/bin",
        "HOME": tmp,
        "LC_ALL": "C.UTF-8",
        "NO_BROWSER": "1",
        "LOOPBACK": "http://127.0.0.1:%d" % port,
    }


def mcp_server(checkout, python, store):
    return {
        "command": python,
        "args": [os.path.join(checkout, "wctx.py"), "mcp"],
        "env": {"WCTX_HOME": store},
    }


def client_claude(tmp, npm, port, checkout, python, store, with_wctx, app):
    binary = os.path.join(npm, "claude", "node_modules", ".bin", "claude")
    env = base_env(tmp, os.path.dirname(binary), port)
    env.update({
        "CLAUDE_CONFIG_DIR": os.path.join(tmp, "claude-home"),
        "ANTHROPIC_BASE_URL": env["LOOPBACK"],
        "ANTHROPIC_API_KEY": "loopback",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "MCP_TIMEOUT": "120000",  # a loaded machine: wait for the server rather than start without it
        "MCP_CONNECTION_NONBLOCKING": "0",  # and connect it before the first request (2.1.197 does not)
    })  # fmt: skip
    os.makedirs(env["CLAUDE_CONFIG_DIR"], exist_ok=True)
    if with_wctx:
        # User scope, as `claude mcp add --scope user` writes it (what the README says to run).
        server = mcp_server(checkout, python, store)
        add = [binary, "mcp", "add", "wctx", "--scope", "user", "-e", "WCTX_HOME=" + store, "--",
               server["command"], *server["args"]]  # fmt: skip
        added = run(add, env, cwd=app, timeout=120)
        if added.returncode:
            sys.exit("claude mcp add failed: %s" % (added.stderr or added.stdout))
    argv = [binary, "-p", "say ok", "--model", "claude-sonnet-4-5", "--allowedTools", "mcp__wctx"]
    return binary, env, argv, "claude-code"


def client_codex(tmp, npm, port, checkout, python, store, with_wctx, app):
    binary = os.path.join(npm, "codex", "node_modules", ".bin", "codex")
    env = base_env(tmp, os.path.dirname(binary), port)
    home = os.path.join(tmp, "codex-home")
    os.makedirs(home, exist_ok=True)
    env.update({"CODEX_HOME": home, "LOOPBACK_KEY": "unused"})
    config = (
        'model = "stand-in"\nmodel_provider = "loopback"\napproval_policy = "never"\n'
        '[model_providers.loopback]\nname = "loopback"\nbase_url = "%s/v1"\nwire_api = "responses"\n'
        'env_key = "LOOPBACK_KEY"\n' % env["LOOPBACK"]
    )
    if with_wctx:
        server = mcp_server(checkout, python, store)
        config += (
            "[mcp_servers.wctx]\nrequired = true\ncommand = %s\nargs = %s\n[mcp_servers.wctx.env]\nWCTX_HOME = %s\n"
            % (
                json.dumps(server["command"]),
                json.dumps(server["args"]),
                json.dumps(store),
            )
        )
        for tool in ("record_evidence", "confirm_evidence"):  # the write tools (an older checkout's two)
            if tool in WCTX_TOOLS:
                config += '[mcp_servers.wctx.tools.%s]\napproval_mode = "approve"\n' % tool
    with open(os.path.join(home, "config.toml"), "w", encoding="utf-8") as fh:
        fh.write(config)
    argv = [binary, "exec", "--skip-git-repo-check", "say ok"]
    return binary, env, argv, "codex"


def client_gemini(tmp, npm, port, checkout, python, store, with_wctx, app):
    binary = os.path.join(npm, "gemini", "node_modules", ".bin", "gemini")
    env = base_env(tmp, os.path.dirname(binary), port)
    home = os.path.join(tmp, "gemini-home")
    os.makedirs(os.path.join(home, ".gemini"), exist_ok=True)
    env.update({"GEMINI_CLI_HOME": home, "GEMINI_API_KEY": "loopback", "GOOGLE_GEMINI_BASE_URL": env["LOOPBACK"],
                "GEMINI_CLI_TRUST_WORKSPACE": "true"})  # fmt: skip
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"disableAutoUpdate": True},
    }
    if with_wctx:
        settings["mcpServers"] = {"wctx": dict(mcp_server(checkout, python, store), trust=True)}
    with open(os.path.join(home, ".gemini", "settings.json"), "w", encoding="utf-8") as fh:
        json.dump(settings, fh)
    argv = [binary, "-p", "say ok", "-m", "gemini-2.5-pro", "--yolo"]
    return binary, env, argv, "gemini-cli"


CLIENTS = {"claude": client_claude, "codex": client_codex, "gemini": client_gemini}


def version_of(binary, env):
    done = run([binary, "--version"], env, timeout=120)
    return (done.stdout.strip() or done.stderr.strip()).splitlines()[-1] if done.returncode == 0 else "?"


def one_run(name, npm, checkout, python, with_wctx, keep):
    """Run one client once; returns (the script with its logged bodies, client version, material)."""
    tmp = tempfile.mkdtemp(prefix="wctx-client-%s-" % name)
    store, lib, app, brief, calls = make_world(tmp, checkout, python)
    script = Script(calls if with_wctx else [])
    handler = type("Handler", (Model,), {"script": script})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        binary, env, argv, agent = CLIENTS[name](tmp, npm, server.server_address[1], checkout, python, store,
                                                 with_wctx, app)  # fmt: skip
        if with_wctx:
            installed = run([python, os.path.join(checkout, "wctx.py"), "--home", store, "hooks", "install", agent],
                            env, cwd=app)  # fmt: skip
            if installed.returncode:
                sys.exit("hooks install %s failed: %s" % (agent, installed.stderr or installed.stdout))
            if name == "codex":
                codex_hooks.trust_like_codex(binary, env, app)
        elif name == "codex":
            # The run without wctx starts Codex's app-server too (it lays out Codex's own skills,
            # which then reach the request), so that the two runs differ by wctx alone.
            try:
                codex_hooks.trust_like_codex(binary, env, app)
            except (IndexError, KeyError, ValueError):
                pass  # no hooks to trust
        version = version_of(binary, env)
        done = run(argv, env, cwd=app, stdin="", timeout=600)
        time.sleep(1)
        if keep:
            with open(os.path.join(tmp, "requests.jsonl"), "w", encoding="utf-8") as fh:
                for path, body in script.bodies:
                    fh.write(json.dumps({"path": path, "body": body}) + "\n")
        return script, version, {"tmp": tmp, "brief": brief, "calls": calls, "exit": done.returncode,
                                 "stderr": done.stderr[-1500:], "stdout": done.stdout[-500:]}  # fmt: skip
    finally:
        server.shutdown()
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


def compact(value):
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def first_offering(script):
    """The first logged request that offers every wctx tool (index, body), or (None, None)."""
    for i, (_path, body) in enumerate(script.bodies):
        if len(tool_definitions(body)) == len(WCTX_TOOLS):
            return i, body
    return None, None


def instructions_bytes(body, instructions):
    """Bytes of the server's instructions in the request (0 when the client leaves them out): they
    are found by their first and last sentences, and counted as the server sent them."""
    text = json.loads(body)
    blob = json.dumps(text, ensure_ascii=False)
    head, tail = instructions.strip()[:60], instructions.strip()[-60:]
    enc = lambda s: json.dumps(s, ensure_ascii=False)[1:-1]  # noqa: E731
    return len(instructions.encode()) if enc(head) in blob and enc(tail) in blob else 0


def briefing_bytes(body, brief):
    """Bytes of the briefing in the request (0 when it did not reach it)."""
    blob = json.dumps(json.loads(body), ensure_ascii=False)
    lines = [line for line in brief.strip().splitlines() if len(line) > 20]
    enc = lambda s: json.dumps(s, ensure_ascii=False)[1:-1]  # noqa: E731
    if lines and enc(lines[0]) in blob and enc(lines[-1]) in blob:
        return len(brief.strip().encode())
    return 0


def server_instructions(checkout, python, store):
    """(the instructions the checkout's server gives at initialize, the names of its tools)."""
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "b", "version": "0"}}}  # fmt: skip
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    done = subprocess.run([python, os.path.join(checkout, "wctx.py"), "mcp"],
                          input=json.dumps(request) + "\n" + json.dumps(listing) + "\n",
                          capture_output=True, text=True, env=dict(os.environ, WCTX_HOME=store), timeout=60)  # fmt: skip
    first, second = (json.loads(line) for line in done.stdout.splitlines()[:2])
    tools = [t["name"] for t in second["result"]["tools"]]
    return first["result"].get("instructions", ""), tools


def call_outcomes(script):
    """{job: tool: "ok" | "error: …" | "not called"}: each call's result, as the client carried it
    in the request after the call, must hold the text the scripted call expects and no error."""
    out = {c[0]: "not called" for c in script.calls}
    for index, _name, at in script.issued:
        label, expect = script.calls[index][0], script.calls[index][3]
        results = []
        for _, body in script.bodies[at + 1 :]:
            results = tool_results(body)
            if results:
                break
        if not results:
            out[label] = "no tool result in a later request"
            continue
        text = json.dumps(results[-1], ensure_ascii=False)
        if re.search(r'"is_?[eE]rror"\s*:\s*true', text) or expect not in text:
            out[label] = "failed: " + re.sub(r"\s+", " ", text[:400])
        else:
            out[label] = "ok"
    return out


def tool_results(body):
    """The tool results in a request's conversation, in order (each client's own form)."""
    try:
        data = json.loads(body)
    except ValueError:
        return []
    data.pop("tools", None)
    return [
        node
        for node, _ in _walk(data)
        if node.get("type") in ("function_call_output", "tool_result") or "functionResponse" in node
    ]


def measure(name, npm, checkout, python, keep):
    store_dir = tempfile.mkdtemp(prefix="wctx-instr-")
    try:
        instructions, WCTX_TOOLS[:] = server_instructions(checkout, python, store_dir)
    finally:
        shutil.rmtree(store_dir, ignore_errors=True)
    # Codex 0.171 does not wait for MCP servers before the first request (Claude Code 2.1.197 does
    # only when told, MCP_CONNECTION_NONBLOCKING=0): on a busy machine that request can go without
    # wctx's tools. Such a run is run again.
    attempt = 0
    while attempt < 3:
        attempt += 1
        script, version, material = one_run(name, npm, checkout, python, True, keep)
        at, body = first_offering(script)
        if body is not None:
            break
    row = {"client": name, "version": version, "exit": material["exit"], "requests": len(script.bodies),
           "attempts": attempt}  # fmt: skip
    if body is None:
        row["error"] = "no request offered wctx's tools: " + material["stderr"][-600:]
        return row
    defs = tool_definitions(body)
    row["tools"] = sum(compact(d) for d in defs.values())
    row["per_tool"] = {t: compact(d) for t, d in defs.items()}
    row["instructions"] = instructions_bytes(body, instructions)
    row["briefing"] = briefing_bytes(body, material["brief"])
    row["briefing_made"] = len(material["brief"].strip().encode())
    row["fixed"] = row["tools"] + row["instructions"] + row["briefing"]
    bare, _, _ = one_run(name, npm, checkout, python, False, False)
    bare_bodies = [b for p, b in bare.bodies if "tools" in b]
    if bare_bodies:
        # the same kind of request: the first one of the bare run that carries tools
        row["delta"] = len(body.encode()) - len(bare_bodies[0].encode())
    row["calls"] = call_outcomes(script)
    if material["exit"] or any(v != "ok" for v in row["calls"].values()):
        row["stderr"] = material["stderr"][-800:]
    if keep:
        row["material"] = material["tmp"]
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--npm", default="/work/npm", help="where the clients are installed (NPM/<client>)")
    parser.add_argument(
        "--clients", nargs="+", choices=sorted(CLIENTS), default=["claude", "codex", "gemini"]
    )
    parser.add_argument("--against", metavar="DIR", help="also the checkout in DIR, labelled 'before'")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--keep", action="store_true", help="keep each run's folder and requests.jsonl")
    args = parser.parse_args(argv)
    checkouts = [("after", ROOT)] + ([("before", os.path.abspath(args.against))] if args.against else [])
    report = []
    for name in args.clients:
        for label, checkout in checkouts:
            row = measure(name, os.path.abspath(args.npm), checkout, args.python, args.keep)
            row["checkout"] = label
            report.append(row)
            print(json.dumps(row), file=sys.stderr)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
