"""Do wctx's Codex hooks run in a real `codex exec`, and does `wctx hooks status` say so?

    python3 bench/codex_hooks.py /path/to/codex [--python python3]

Builds a throw-away CODEX_HOME, wctx store and two related git repositories under a temporary
folder, points Codex at a loopback stand-in for the model API (nothing leaves the machine; the
stand-in records each request body), installs wctx's hooks, and runs `codex exec` three times:

1. as installed (no trust recorded): does the briefing reach the model request?
2. after recording trust the way Codex itself does (its app-server's hooks/list currentHash
   written with config/batchWrite, what "Trust all and continue" does in the terminal);
3. with trust, checking that the SessionEnd (or Stop) hook imported the session.

Before each run it prints what `wctx hooks status --probe` reports, so the two can be compared.
Codex is not a dependency of wctx or its tests: install it where you like (the npm package
@openai/codex ships the binary).
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARK = "ZQX-briefing-marker"


class FakeModel(http.server.BaseHTTPRequestHandler):
    """A Responses API stand-in: records each request body and answers with one short message."""

    bodies = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"data":[],"models":[]}')

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        FakeModel.bodies.append(body.decode("utf-8", "replace"))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
        events = [
            ("response.created", {"response": {"id": "r1"}}),
            (
                "response.output_item.done",
                {
                    "item": {
                        "type": "message",
                        "role": "assistant",
                        "id": "m1",
                        "content": [{"type": "output_text", "text": "ok"}],
                    }
                },
            ),
            ("response.completed", {"response": {"id": "r1", "usage": usage}}),
        ]
        for name, data in events:
            data["type"] = name
            self.wfile.write(("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode())


def run(argv, env, cwd=None, stdin=None):
    return subprocess.run(argv, env=env, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=300)


def git_repo(path, files):
    os.makedirs(path)
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "-C", path]
    subprocess.run(git + ["init", "-q"], check=True)
    for rel, text in files.items():
        with open(os.path.join(path, rel), "w", encoding="utf-8") as fh:
            fh.write(text)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "initial"], check=True)


def trust_like_codex(codex, env, cwd):
    """Ask Codex's app-server for its hooks and their current hashes, then record them trusted
    with config/batchWrite, as its terminal UI does."""
    proc = subprocess.Popen(
        [codex, "app-server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )

    def call(i, method, params):
        proc.stdin.write(
            (json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode()
        )
        proc.stdin.flush()
        while True:
            message = json.loads(proc.stdout.readline())
            if message.get("id") == i:
                return message["result"]

    try:
        call(
            1,
            "initialize",
            {"clientInfo": {"name": "bench", "version": "1"}, "capabilities": {"experimentalApi": True}},
        )
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"initialized"}\n')
        hooks = call(2, "hooks/list", {"cwds": [cwd]})["data"][0]["hooks"]
        value = {h["key"]: {"trusted_hash": h["currentHash"]} for h in hooks}
        call(
            3,
            "config/batchWrite",
            {"edits": [{"keyPath": "hooks.state", "value": value, "mergeStrategy": "upsert"}]},
        )
        return [(h["key"], h["trustStatus"], h["currentHash"]) for h in hooks]
    finally:
        proc.terminate()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("codex", help="path of the codex binary to check")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args(argv)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeModel)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    tmp = tempfile.mkdtemp(prefix="wctx-codex-hooks-")
    codex_home, store = os.path.join(tmp, "codex-home"), os.path.join(tmp, "store")
    os.makedirs(codex_home)
    with open(os.path.join(codex_home, "config.toml"), "w", encoding="utf-8") as fh:
        fh.write(
            'model = "stand-in"\nmodel_provider = "loopback"\n[model_providers.loopback]\nname = "loopback"\n'
            'base_url = "http://127.0.0.1:%d/v1"\nwire_api = "responses"\nenv_key = "LOOPBACK_KEY"\n'
            % server.server_address[1]
        )
    env = {
        "PATH": os.path.dirname(os.path.abspath(args.codex)) + ":/usr/bin:/bin",
        "HOME": tmp,
        "CODEX_HOME": codex_home,
        "LOOPBACK_KEY": "unused",
        "LC_ALL": "C.UTF-8",
    }
    wctx = [args.python, os.path.join(ROOT, "wctx.py"), "--home", store]
    lib, app = os.path.join(tmp, "lib"), os.path.join(tmp, "app")
    git_repo(lib, {"pool.py": "def acquire():\n    return 1\n"})
    git_repo(app, {"main.py": "print(1)\n"})
    for command in (
        ["repo", "add", lib, "--workspace", "bench"],
        ["repo", "add", app, "--workspace", "bench"],
        ["relate", "app", "uses", "lib"],
        ["capture", "--known-issue", MARK + " acquire leaks a connection", "--repo", "lib"],
        ["hooks", "install", "codex"],
    ):
        done = run(wctx + command, env, cwd=lib)
        if done.returncode:
            sys.exit("wctx %s failed: %s" % (" ".join(command), done.stderr))
    print(run([args.codex, "--version"], env).stdout.strip())
    with open(os.path.join(codex_home, "hooks.json"), encoding="utf-8") as fh:
        print("wctx installed Codex hooks for:", ", ".join(json.load(fh)["hooks"]))

    def attempt(label):
        status = run(wctx + ["hooks", "status", "--probe", "--json"], env)
        row = next(h for h in json.loads(status.stdout)["hooks"] if h["agent"] == "codex")
        before = len(FakeModel.bodies)
        done = run([args.codex, "exec", "--skip-git-repo-check", "say ok"], env, cwd=app)
        time.sleep(2)  # the session-end import runs detached
        sessions = json.loads(run(wctx + ["sessions", "--json"], env).stdout)["sessions"]
        sessions = [s for s in sessions if s["agent"] == "codex"]
        reached = any(MARK in body for body in FakeModel.bodies[before:])
        print(
            "%-28s wctx status: exit %d, trust %s | codex exec exit %d: briefing in the model request: %s; "
            "codex sessions imported so far: %d"
            % (
                label,
                status.returncode,
                {t["event"]: t["trust"] for t in row.get("trust", ())},
                done.returncode,
                "yes" if reached else "no",
                len(sessions),
            )
        )

    attempt("1. as installed")
    listed = trust_like_codex(args.codex, env, app)
    print("   codex hooks/list before trusting:", [(k.rsplit("/", 1)[-1], s) for k, s, _ in listed])
    attempt("2. trusted as Codex does")
    print("material kept in", tmp)


if __name__ == "__main__":
    main()
