#!/usr/bin/env python3
"""Memory of one long-lived `wctx mcp` server under thousands of distinct searches and pages.

    python3 bench/mcp_soak.py                    # 5,000 long items, 2,000 searches (several minutes)
    python3 bench/mcp_soak.py --quick            # 1,000 long items, 400 searches
    python3 bench/mcp_soak.py --short --json     # short texts instead of long ones

The corpus: one real git repository and N items captured through ``wctx.capture``, each a claim
and a detail drawn from a fixed vocabulary of 3,000 made-up words (long: 1.5 kB claims and 6 kB
details; --short: 150 and 400 characters), so that every two-word query matches many items and
distinct queries bring back distinct items. One server process is started over stdio and asked
``search_evidence`` with distinct two-word queries; every third one also asks for its next page
(``cursor``). VmRSS and VmHWM are read from /proc after the first search and at checkpoints.

What it reports, as ratios against the same run's server after its first search (the machine is
shared and noisy, the ratio is what carries over): the peak RSS (VmHWM) over the whole soak, and
the RSS growth over the second half of the searches, which is what an agent session of hours
would see continue: flat memory means a growth near zero once the bounded caches are full.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import wctx  # noqa: E402

INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "soak", "version": "0"}}
GIT_ENV = {
    "GIT_AUTHOR_NAME": "soak",
    "GIT_AUTHOR_EMAIL": "soak@example.invalid",
    "GIT_COMMITTER_NAME": "soak",
    "GIT_COMMITTER_EMAIL": "soak@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}
LONG = (1500, 6000)  # characters of a claim and of a detail
SHORT = (150, 400)


def vocabulary(seed=7, size=3000):
    """Made-up words; two seeds give two vocabularies that share no word."""
    rnd = random.Random(seed)
    letters = "bcdfgklmnprstvz"
    return [
        "%s%s%04d" % (letters[seed % 15], "".join(rnd.choice(letters) for _ in range(4)), i)
        for i in range(size)
    ]


def build_store(base, items, sizes=LONG, seed=7):
    """A store under ``base``/home with one repository ``base``/repo and ``items`` items; returns
    (home, repo). Called again on the same ``base``, it adds ``items`` more (another ``seed``
    gives them a vocabulary of their own)."""
    home, repo = os.path.join(base, "home"), os.path.join(base, "repo")
    if not os.path.isdir(repo):
        os.makedirs(repo)
        env = dict(os.environ, HOME=repo, **GIT_ENV)
        with open(os.path.join(repo, "main.py"), "w") as f:
            f.write("def main():\n    return 0\n")
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "initial"]):
            subprocess.run(["git", "-C", repo] + args, check=True, env=env, stdout=subprocess.PIPE)
    words = vocabulary(seed)
    rnd = random.Random(seed)

    def text(chars):
        out = []
        while sum(len(w) + 1 for w in out) < chars:
            out.append(rnd.choice(words))
        return " ".join(out)[:chars]

    store = wctx.open_store(home)
    try:
        if not wctx.list_repos(store):
            wctx.register_repo(store, repo, name="soak")
        for start in range(0, items, wctx.MAX_ITEMS_PER_CAPTURE):
            batch = [
                {"kind": "finding", "claim": text(sizes[0]), "detail": text(sizes[1]), "repo": "soak"}
                for _ in range(start, min(items, start + wctx.MAX_ITEMS_PER_CAPTURE))
            ]
            wctx.capture(store, batch, cwd=repo)
    finally:
        store.close()
    return home, repo


def queries(count, seed=7):
    """``count`` distinct two-word queries over the corpus's vocabulary."""
    words = vocabulary(seed)
    rnd = random.Random(seed + 1)
    seen, out = set(), []
    while len(out) < count:
        q = " ".join(rnd.sample(words, 2))
        if q not in seen:
            seen.add(q)
            out.append(q)
    return out


class Server:
    """One `wctx mcp` process over stdio, asked one request at a time."""

    def __init__(self, home, cwd):
        env = dict(os.environ, WCTX_HOME=home, PYTHONDONTWRITEBYTECODE="1")
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(ROOT, "wctx.py"), "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
            env=env,
        )
        self.next_id = 0
        self.request("initialize", INIT)
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def request(self, method, params):
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()
        message = json.loads(self.proc.stdout.readline())
        if "result" not in message or message["result"].get("isError"):
            raise SystemExit("unexpected reply: %r" % (message,))
        return message["result"]

    def search(self, query, cursor=None):
        arguments = {"query": query}
        if cursor:
            arguments["cursor"] = cursor
        found = self.request("tools/call", {"name": "search_evidence", "arguments": arguments})
        return found.get("structuredContent") or {}

    def memory_kib(self):
        """(VmRSS, VmHWM) of the server process, in KiB."""
        with open("/proc/%d/status" % self.proc.pid) as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def soak(server, asked, pages_every=3):
    """Run the searches (and every ``pages_every``-th one's next page); returns the RSS after the
    first search, after half of them and at the end, and the peak, in KiB."""
    marks = {}
    for n, q in enumerate(asked, 1):
        found = server.search(q)
        if n % pages_every == 0 and found.get("next_cursor"):
            server.search(q, found["next_cursor"])
        if n in (1, len(asked) // 2, len(asked)):
            marks[n] = server.memory_kib()[0]
    marks["peak"] = server.memory_kib()[1]
    return marks


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--searches", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="1,000 items, 400 searches")
    parser.add_argument("--short", action="store_true", help="short texts (150 and 400 characters)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    items, searches = (1000, 400) if args.quick else (args.items, args.searches)
    with tempfile.TemporaryDirectory(prefix="wctx-soak-") as base:
        home, repo = build_store(base, items, SHORT if args.short else LONG)
        server = Server(home, repo)
        try:
            marks = soak(server, queries(searches))
        finally:
            server.close()
    first, half, last = marks[1], marks[searches // 2], marks[searches]
    out = {
        "items": items,
        "texts": "short" if args.short else "long",
        "searches": searches,
        "rss_after_first_kib": first,
        "rss_at_half_kib": half,
        "rss_at_end_kib": last,
        "peak_rss_kib": marks["peak"],
        "peak_over_first": round(marks["peak"] / first, 2),
        "second_half_growth_over_first": round((last - half) / first, 3),
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(
        "%(items)d %(texts)s items, %(searches)d distinct searches (and a page of every third) in one server"
        % out
    )
    print(
        "RSS after the first search %.1f MiB; at half %.1f MiB; at the end %.1f MiB; peak %.1f MiB"
        % (first / 1024, half / 1024, last / 1024, marks["peak"] / 1024)
    )
    print(
        "peak / first search: %.2f; growth over the second half / first search: %.3f"
        % (out["peak_over_first"], out["second_half_growth_over_first"])
    )


if __name__ == "__main__":
    main()
