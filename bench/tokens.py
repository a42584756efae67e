#!/usr/bin/env python3
"""What wctx's replies cost an agent in bytes, against a bare FTS5 MCP server, in one run.

    python3 bench/tokens.py                    # both parts (a few minutes)
    python3 bench/tokens.py --part wire        # 10,000 items, 50 queries, every protocol version
    python3 bench/tokens.py --part useful      # the eval corpus: bytes per useful answer
    python3 bench/tokens.py --against DIR      # also the server of the checkout in DIR (before/after)
    python3 bench/tokens.py --json

Part "wire" (the figures of issue #29): the peer benchmark's corpus (/work/shared/bench/peers,
or --peers DIR; 10,000 seeded findings of 23-47 words over 40 small real git repositories in one
workspace, three in four citing ``path#symbol``), loaded as bench/search_floor.py loads it, and
its 50 keyword queries. For each protocol version a fresh ``wctx mcp`` answers every query with
``search_evidence`` (limit 10, whole workspace), in its default shape, with ``detail: true`` and
from a server started with ``--text-only`` (no structuredContent: the text block alone);
bench/mcp_baseline_server.py --fill answers the same queries (one FTS5 table over the same
texts, ids and claims as structuredContent plus the same JSON as text; --fill so that it answers
10 results as wctx does). Counted: the bytes of each reply line as written to stdout (everything
on the wire: JSON-RPC envelope, content text, structuredContent), and of the text block and of
structuredContent alone (what a client that shows one of them to the model passes on). Then one
repository's freshness audit page by page to its end, ``workspace_overview``,
a session's pages (``get_evidence`` given its id), one ``get_evidence`` and ``wctx brief``.

Part "useful" (bytes per useful answer): the retrieval eval corpus (eval/corpus, 103 judged
queries asked from the repository each names), built with wctx.build_eval_world. For each query
wctx (default and detail) and the filled floor answer once (limit 10). A query is answered when a
result is one of its best-judged items; "bytes per useful answer" is all the bytes sent for all
queries divided by the queries answered (an agent pays for every reply, answered or not);
"bytes to the answer" is, for answered queries, the bytes of the channel a model reads up to the
end of the answer's entry (structuredContent: Claude Code and Codex; the text block: Gemini CLI).
Benchmarks only: no test runs this.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)

import search_floor  # noqa: E402  (the peer corpus loaded into real repositories, the floor table)

import wctx  # noqa: E402

BASELINE_SERVER = os.path.join(HERE, "mcp_baseline_server.py")
VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
MODERN = "2026-07-28"


class RawPeer:
    """A stdio MCP server driven one request at a time; replies kept as the bytes written."""

    def __init__(self, argv, env, cwd, version):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=cwd)
        self.version = version
        self.next_id = 0
        if version != MODERN:
            info = {"name": "bench", "version": "0"}
            self.request("initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": info})
            self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
            self.proc.stdin.flush()

    def request(self, method, params):
        """(reply line as bytes, decoded result)."""
        self.next_id += 1
        if self.version == MODERN:
            params = dict(params, _meta={
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
            })  # fmt: skip
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline()
        message = json.loads(reply)
        if message.get("id") != self.next_id or "result" not in message:
            raise SystemExit("unexpected reply from %s: %r" % (self.proc.args, reply[:300]))
        return reply.rstrip(b"\n"), message["result"]

    def call(self, name, arguments):
        line, result = self.request("tools/call", {"name": name, "arguments": arguments})
        if result.get("isError"):
            raise SystemExit("%s failed: %s" % (name, result["content"][0]["text"][:300]))
        return line, result

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def channels(line, result):
    """Bytes of the whole reply, of its text block(s) and of structuredContent (0 when absent),
    each as UTF-8 of what a client holds after decoding (the text) or re-encodes (structured)."""
    text = sum(len(c.get("text", "").encode()) for c in result.get("content", []))
    structured = result.get("structuredContent")
    sc = len(json.dumps(structured, ensure_ascii=False, separators=(",", ":")).encode()) if structured else 0
    return len(line), text, sc


def mean(values):
    return round(statistics.mean(values), 1) if values else 0


def supports_detail(peer):
    _, listed = peer.request("tools/list", {})
    for tool in listed["tools"]:
        if tool["name"] == "search_evidence":
            return "detail" in tool["inputSchema"]["properties"]
    return False


def wctx_argv(checkout, *args):
    return [sys.executable, os.path.join(checkout, "wctx.py"), *args]


def has_text_only(checkout):
    """Whether the checkout's server takes --text-only (the text block alone, once on the wire)."""
    done = subprocess.run(wctx_argv(checkout, "mcp", "--help"), capture_output=True, text=True)
    return "--text-only" in done.stdout


def search_sizes(peer, queries, extra):
    sizes = [
        channels(*peer.call("search_evidence", dict({"query": q, "limit": 10}, **extra))) for q in queries
    ]
    return {
        "reply": mean([s[0] for s in sizes]),
        "text": mean([s[1] for s in sizes]),
        "structured": mean([s[2] for s in sizes]),
    }


def paged(peer, name, arguments, key):
    """Every page of a paged tool to its end: (pages, bytes of the largest reply, total bytes, entries)."""
    pages, largest, total, entries, cursor = 0, 0, 0, 0, None
    while True:
        args = dict(arguments, cursor=cursor) if cursor else dict(arguments)
        line, result = peer.call(name, args)
        pages += 1
        largest = max(largest, len(line))
        total += len(line)
        sc = result.get("structuredContent") or json.loads(result["content"][0]["text"])
        entries += len(sc.get(key) or [])
        cursor = sc.get("next_cursor")
        if not cursor or pages > 1000:
            return {"pages": pages, "largest_reply": largest, "total": total, "entries": entries}


def part_wire(args, checkouts):
    sys.path.insert(0, os.path.abspath(args.peers))
    import corpus as corpus_mod

    queries = corpus_mod.make_queries(corpus_mod.make_corpus(1000))
    tmp = tempfile.mkdtemp(prefix="wctx-tokens-")
    try:
        corpus = corpus_mod.make_corpus(args.items)
        names = sorted({f["repo"] for f in corpus})
        paths = search_floor.make_repos(os.path.join(tmp, "repos"), names)
        home = os.path.join(tmp, "home")
        store = wctx.open_store(home)
        export = os.path.join(tmp, "export.jsonl")
        search_floor.register_and_export(wctx, store, names, paths, corpus, export, True)
        store.close()
        done = subprocess.run(wctx_argv(ROOT, "--home", home, "import-evidence", export), capture_output=True)
        if done.returncode:
            raise SystemExit(done.stderr.decode()[-2000:])
        store = wctx.open_store(home)
        search_floor.build_floor(store, os.path.join(tmp, "floor.db"))
        store.close()
        origin = names[0]
        env = dict(os.environ, WCTX_HOME=home)
        out = {"items": args.items, "queries": len(queries), "versions": {}}
        for version in VERSIONS:
            row = {}
            floor = RawPeer(
                [sys.executable, BASELINE_SERVER, os.path.join(tmp, "floor.db"), "--fill"], env, tmp, version
            )
            row["floor"] = search_sizes(floor, queries, {})
            floor.close()
            for label, checkout in checkouts:
                peer = RawPeer(wctx_argv(checkout, "mcp", "--repo", origin), env, tmp, version)
                row[label] = search_sizes(peer, queries, {})
                if supports_detail(peer):
                    row[label + " detail"] = search_sizes(peer, queries, {"detail": True})
                peer.close()
                if has_text_only(checkout):
                    argv = wctx_argv(checkout, "mcp", "--repo", origin, "--text-only")
                    peer = RawPeer(argv, env, tmp, version)
                    row[label + " --text-only"] = search_sizes(peer, queries, {})
                    peer.close()
            out["versions"][version] = row
        # The other tools, at the newest handshake version (structuredContent and text).
        tools = {}
        for label, checkout in checkouts:
            peer = RawPeer(wctx_argv(checkout, "mcp", "--repo", origin), env, tmp, "2025-11-25")
            t = {}
            with open(os.path.join(checkout, "wctx_mcp.py"), encoding="utf-8") as fh:
                listed = fh.read()
            # The freshness audit: verify_freshness before it joined workspace_overview.
            audit = ("verify_freshness", {}) if '"name": "verify_freshness"' in listed else (
                "workspace_overview", {"verify": True})  # fmt: skip
            t["verify_freshness"] = paged(peer, audit[0], audit[1], "items")
            line, result = peer.call(audit[0], audit[1])
            t["verify_freshness"]["first_page"] = len(line)
            line, result = peer.call("workspace_overview", {})
            t["workspace_overview"] = len(line)
            # A session's pages: get_evidence given the session id (get_session_evidence before).
            with open(os.path.join(checkout, "wctx_mcp.py"), encoding="utf-8") as fh:
                older = '"name": "get_session_evidence"' in fh.read()
            t["session_pages"] = paged(
                peer,
                "get_session_evidence" if older else "get_evidence",
                {"session_id" if older else "id": "ses-bench000000"},
                "evidence",
            )
            line, result = peer.call("get_evidence", {"id": "ev-b000000000"})
            t["get_evidence"] = len(line)
            peer.close()
            done = subprocess.run(
                wctx_argv(checkout, "brief", "--repo", origin), capture_output=True, env=env
            )
            t["brief"] = len(done.stdout)
            t["brief_items_shown"] = sum(line.startswith(b"- ev-") for line in done.stdout.splitlines())
            # The same briefing with room for every item it picked: what the budget leaves out.
            argv = wctx_argv(checkout, "brief", "--repo", origin, "--max-tokens", "20000", "--json")
            whole = subprocess.run(argv, capture_output=True, env=env)
            if whole.returncode == 0:
                res = json.loads(whole.stdout)
                t["brief_unbounded"] = len(res["text"].encode())
                t["brief_items"] = sum(len(sec["items"]) for sec in res["sections"])
            tools[label] = t
        out["tools"] = tools
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def compact_json(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def prefix_bytes(result, position, floor):
    """Bytes a model reads up to the end of result ``position`` (0-based) in each form: the
    structured result as compact JSON (what Claude Code and Codex pass on) and the text block
    (what Gemini CLI passes on)."""
    structured = result.get("structuredContent") or {}
    entries = structured.get("results") or []
    head = '{"results":['
    structured_prefix = len((head + ",".join(compact_json(e) for e in entries[: position + 1])).encode())
    text = result["content"][0]["text"]
    if floor:  # its text is json.dumps of the same payload (default separators)
        text_prefix = len(
            ('{"results": [' + ", ".join(json.dumps(e) for e in entries[: position + 1])).encode()
        )
    elif text.startswith("{"):  # a text block that is the structured result's JSON again
        text_prefix = structured_prefix
    else:
        wanted = entries[position]["id"]
        lines = text.split("\n")
        upto = next(i for i, line in enumerate(lines) if line.startswith(wanted + " "))
        text_prefix = len("\n".join(lines[: upto + 1]).encode())
    return structured_prefix, text_prefix


def _from_text(text):
    """The results a text-only reply names, in order (ids from its lines, or its JSON)."""
    if text.startswith("{"):
        return json.loads(text)
    return {"results": [{"id": line.split(" ", 1)[0]} for line in text.split("\n") if line.startswith("ev-")]}


def part_useful(args, checkouts):
    corpus = wctx.load_eval_corpus(args.corpus)
    tmp = tempfile.mkdtemp(prefix="wctx-tokens-eval-")
    try:
        store, ids = wctx.build_eval_world(corpus, tmp)
        by_rid = {r["rid"]: ids.get(r["id"]) for r in store.db.execute("SELECT rid, id FROM evidence")}
        search_floor.build_floor(store, os.path.join(tmp, "floor.db"))
        home = store.home
        store.close()
        env = dict(os.environ, WCTX_HOME=home)
        floor_argv = [sys.executable, BASELINE_SERVER, os.path.join(tmp, "floor.db"), "--fill"]
        runs = [("floor", floor_argv, {}, "2025-06-18")]
        for label, checkout in checkouts:
            runs.append((label, wctx_argv(checkout, "mcp"), {}, "2025-06-18"))
            runs.append((label + " detail", wctx_argv(checkout, "mcp"), {"detail": True}, "2025-06-18"))
            if has_text_only(checkout):  # the text block alone: what one form on the wire costs
                argv = wctx_argv(checkout, "mcp", "--text-only")
                runs.append((label + " --text-only", argv, {}, "2025-06-18"))
        out = {"queries": len(corpus["queries"]), "variants": {}}
        for label, argv, extra, version in runs:
            peer = RawPeer(argv, env, tmp, version)
            if extra and not supports_detail(peer):
                peer.close()
                continue
            wire, cost_structured, cost_text, answered, ranks = 0, 0, 0, 0, []
            structured_total, text_total = 0, 0
            for q in corpus["queries"]:
                best = max(q["judgements"].values())
                answers = {cid for cid, grade in q["judgements"].items() if grade == best}
                arguments = dict({"query": q["text"], "limit": 10}, **extra)
                if not label.startswith("floor"):
                    arguments["repo"] = q["from"]
                line, result = peer.call("search_evidence", arguments)
                size, text, structured = channels(line, result)
                text_only = "structuredContent" not in result
                if text_only:  # every client shows the model the text block: it is all there is
                    result = dict(result, structuredContent=_from_text(result["content"][0]["text"]))
                    structured = text
                wire += size
                structured_total += structured
                text_total += text
                found = (result.get("structuredContent") or {}).get("results") or []
                got = [by_rid.get(r["id"]) if label == "floor" else ids.get(r["id"]) for r in found]
                position = next((i for i, cid in enumerate(got) if cid in answers), None)
                if position is None:  # paid for, answered nothing
                    cost_structured += structured
                    cost_text += text
                    continue
                answered += 1
                ranks.append(position + 1)
                s_prefix, t_prefix = prefix_bytes(result, position, label == "floor")
                if text_only:
                    s_prefix = t_prefix
                cost_structured += s_prefix
                cost_text += t_prefix
            peer.close()
            n = len(corpus["queries"])
            out["variants"][label] = {
                "answered": answered,
                "mean_rank": round(statistics.mean(ranks), 2) if ranks else None,
                "reply_bytes": round(wire / n, 1),
                "structured_bytes": round(structured_total / n, 1),
                "text_bytes": round(text_total / n, 1),
                "wire_per_useful_answer": round(wire / max(1, answered), 1),
                "to_answer_structured": round(cost_structured / max(1, answered), 1),
                "to_answer_text": round(cost_text / max(1, answered), 1),
            }
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("wire", "useful", "both"), default="both")
    parser.add_argument("--items", type=int, default=10000)
    parser.add_argument("--peers", default=os.path.join(ROOT, "..", "shared", "bench", "peers"))
    parser.add_argument("--corpus", help="the eval corpus directory (default: eval/corpus)")
    parser.add_argument("--against", metavar="DIR", help="also the checkout in DIR, labelled 'before'")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    checkouts = [("wctx", ROOT)] + ([("before", os.path.abspath(args.against))] if args.against else [])
    report = {}
    if args.part in ("wire", "both"):
        report["wire"] = part_wire(args, checkouts)
    if args.part in ("useful", "both"):
        report["useful"] = part_useful(args, checkouts)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
