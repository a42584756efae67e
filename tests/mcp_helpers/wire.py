"""A raw-wire MCP client: bytes to the server's stdin, one JSON message per stdout line back.

Every stdout line must be a JSON-RPC message; anything else fails the test that reads it, which
is how the suite proves that stdout carries nothing but protocol.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WCTX = os.path.join(ROOT, "wctx.py")
TIMEOUT = 60.0

MODERN = "2026-07-28"


def envelope(version=MODERN, capabilities=None):
    """The 2026-07-28 per-request _meta keys."""
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": capabilities if capabilities is not None else {},
        "io.modelcontextprotocol/clientInfo": {"name": "wire-test", "version": "0"},
    }


def server_env(home, **extra):
    env = dict(os.environ)
    env["WCTX_HOME"] = str(home)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra)
    return env


def _ids(value):
    """Every evidence and session id in a structured result."""
    if isinstance(value, dict):
        return [i for v in value.values() for i in _ids(v)]
    if isinstance(value, list):
        return [i for v in value for i in _ids(v)]
    if isinstance(value, str) and value.startswith(("ev-", "ses-")) and " " not in value:
        return [value]
    return []


def same_facts(text, structured):
    """The text block (what Gemini CLI and pre-2025-06-18 clients show a model) names every item
    the structured result names, and is not the structured result's JSON again."""
    for eid in _ids(structured):
        assert eid in text, (eid, text)
    assert not text.lstrip().startswith("{"), text[:200]


class WireServer:
    """`python3 wctx.py mcp ...` as a subprocess, read line by line."""

    def __init__(self, home, cwd, args=(), argv=None, env=None):
        argv = argv or [sys.executable, WCTX, "mcp", *args]
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=str(cwd),
            env=env or server_env(home),
        )
        self.lines = queue.Queue()
        self.stderr = []
        self._next_id = 0
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.lines.put), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, self.stderr.append), daemon=True).start()

    @staticmethod
    def _pump(stream, sink):
        for line in iter(stream.readline, b""):
            sink(line)
        sink(None)

    # -- sending ------------------------------------------------------------------------------

    def send_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message):
        self.send_raw(json.dumps(message).encode("utf-8") + b"\n")

    def new_id(self):
        self._next_id += 1
        return self._next_id

    def notify(self, method, params=None):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    # -- receiving ----------------------------------------------------------------------------

    def recv(self, timeout=TIMEOUT):
        """The next stdout line, parsed. Fails on a non-JSON line or on EOF."""
        line = self.lines.get(timeout=timeout)
        if line is None:
            self.proc.wait(timeout=timeout)
        assert line is not None, "server closed stdout (exit %s); stderr:\n%s" % (
            self.proc.returncode,
            self.stderr_text(),
        )
        assert line.endswith(b"\n"), line
        message = json.loads(line.decode("utf-8"))
        assert isinstance(message, (dict, list)), line
        return message

    def request(self, method, params=None, request_id=None):
        request_id = self.new_id() if request_id is None else request_id
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        reply = self.recv()
        assert reply.get("id") == request_id, reply
        return reply

    def request_line(self, method, params=None, timeout=TIMEOUT):
        """Send a request; its reply line as the raw bytes the server wrote."""
        request_id = self.new_id()
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}})
        line = self.lines.get(timeout=timeout)
        assert line is not None, self.stderr_text()
        assert json.loads(line.decode("utf-8"))["id"] == request_id, line[:300]
        return line

    def initialize(self, version="2025-06-18"):
        reply = self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "wire-test", "version": "0"},
            },
        )
        self.notify("notifications/initialized")
        return reply["result"]

    def call(self, name, arguments=None, modern=False):
        params = {"name": name, "arguments": arguments or {}}
        if modern:
            params["_meta"] = envelope()
        reply = self.request("tools/call", params)
        assert "result" in reply, reply
        return reply["result"]

    def call_ok(self, name, arguments=None, modern=False):
        result = self.call(name, arguments, modern)
        assert result.get("isError") is False, result
        structured = result["structuredContent"]
        same_facts(result["content"][0]["text"], structured)
        return structured

    # -- ending -------------------------------------------------------------------------------

    def stderr_text(self):
        return b"".join(x for x in self.stderr if x).decode("utf-8", "replace")

    def close(self, timeout=TIMEOUT):
        """Close stdin; the server must exit 0 and have written nothing but protocol since."""
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        rc = self.proc.wait(timeout=timeout)
        rest = []
        while True:
            line = self.lines.get(timeout=timeout)
            if line is None:
                break
            rest.append(json.loads(line.decode("utf-8")))
        return rc, rest

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
