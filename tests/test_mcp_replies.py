"""What a reply costs an agent: compact by default, a byte budget per tool that every reply keeps,
paging that reaches the end, cut replies that say how to get the rest, and freshness reasons cut
without breaking the commits they name. The real server process, real git repositories."""

from __future__ import annotations

import json
import os
import re
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mcp_helpers.fixtures import Servers  # noqa: E402
from mcp_helpers.repos import git  # noqa: E402

import wctx  # noqa: E402
import wctx_mcp  # noqa: E402

# A commit as a freshness reason names it: short sha, date, "subject".
COMMIT = re.compile(r'([0-9a-f]{7,12}) (\d{4}-\d\d-\d\d) "([^"]*)"')


@pytest.fixture
def servers(tmp_path):
    s = Servers(tmp_path)
    yield s
    s.close()


def compact_bytes(value):
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def sizes(result):
    """Bytes of each form a client may show the model."""
    text = len(result["content"][0]["text"].encode())
    return text, compact_bytes(result["structuredContent"]) if "structuredContent" in result else 0


# Claims of two sentences (230 to 300 characters), as agents write them about a root cause.
CLAIMS = [
    "parseManifest in the ledger service reads the whole manifest into memory before validating "
    "it, so a %d MB upload exhausts the worker and the job is retried until the queue backs up. "
    "Streaming the validation keeps memory flat%s." % (n, " and the retries stop" * (1 + n % 3))
    for n in range(10, 20)
]


def test_a_ten_result_reply_is_no_larger_than_a_bare_fts5_servers_reply_for_the_same_results(servers):
    """Everything on the wire counted: the compact reply, in both forms, against the reply of a
    server that sends each result's id and claim as structuredContent and the same JSON as text.
    (With claims this long: a compact entry's id, kind, repository, verdict and reason cost about
    what cutting a claim at COMPACT_CLAIM_CHARS saves on a claim of 220 characters.)"""
    assert all(230 <= len(c) <= 300 for c in CLAIMS)
    ui = servers.start()
    ui.initialize("2025-06-18")
    items = [
        {"kind": "finding", "claim": c, "repo": "upload-sdk", "files": ["src/upload.py#send"]} for c in CLAIMS
    ]
    ui.call_ok("record_evidence", {"items": items})
    line = ui.request_line(
        "tools/call", {"name": "search_evidence", "arguments": {"query": "parseManifest worker"}}
    )
    result = json.loads(line)["result"]
    found = result["structuredContent"]["results"]
    assert len(found) == 10
    floor_payload = {"results": [{"id": n, "claim": c} for n, c in enumerate(CLAIMS, 1)]}
    floor = {"jsonrpc": "2.0", "id": 2, "result": {
        "content": [{"type": "text", "text": json.dumps(floor_payload)}], "structuredContent": floor_payload}}  # fmt: skip
    assert len(line) <= len(json.dumps(floor).encode()) + 1
    for entry in found:  # what each result must still say
        assert entry["id"].startswith("ev-") and entry["repo"] == "upload-sdk" and entry["kind"] == "finding"
        assert entry["verdict"] == "current" and len(entry["reasons"]) == 1
        assert entry["claim"].endswith("…") and len(entry["claim"]) <= wctx_mcp.COMPACT_CLAIM_CHARS
    # Nothing said twice: the text block is not the structured result's JSON again.
    text = result["content"][0]["text"]
    assert (
        not text.startswith("{") and json.dumps(result["structuredContent"], ensure_ascii=False) not in text
    )


def _page_through(server, name, args, key):
    """Every page of a paged tool: each reply within budget; the entries, in order."""
    seen, cursor, cuts = [], None, 0
    counted = 0  # the freshness audit: the verdicts its summaries count, page after page
    audit = name == "workspace_overview"  # paged only as the audit (ids or verify)
    budget = (
        wctx_mcp.DETAIL_BUDGET_BYTES
        if args.get("detail")
        else wctx_mcp.REPLY_BUDGET_BYTES["verify" if audit else name]
    )
    for _ in range(500):
        call = dict(args, cursor=cursor) if cursor else dict(args)
        result = server.call(name, call)
        assert result["isError"] is False, result
        assert max(sizes(result)) <= budget, (name, call, sizes(result))
        page = result["structuredContent"]
        counted += sum((page.get("summary") or {}).values())
        wctx_mcp_ids = [e["id"] for e in page[key]]
        assert wctx_mcp_ids, page  # a page never comes back empty while there is more
        seen.extend(wctx_mcp_ids)
        notes = page.get("truncated") or []
        if any("budget" in n for n in notes):  # a reply cut to fit says how to get the rest
            cuts += 1
            assert page.get("next_cursor") and any("cursor" in n for n in notes), page
            assert "cursor" in result["content"][0]["text"]
        cursor = page.get("next_cursor")
        if not cursor:
            if audit:  # each item counted once, on the page that shows it
                assert counted == len(seen), (counted, len(seen))
            return seen, page, cuts
    raise AssertionError("paging did not end")


def test_paging_reaches_the_end_within_each_budget(servers):
    sdk = servers.start(cwd=servers.env["sdk"])
    sdk.initialize()
    long = " because the retry loop re-reads the whole body each time and never frees it" * 6
    recorded = sdk.call_ok(
        "record_evidence",
        {"items": [{"kind": "finding", "claim": "manifest %03d leaks%s" % (n, long), "repo": "upload-sdk",
                    "detail": "seen in the heap dump " * 20, "files": ["src/upload.py#send"]} for n in range(50)]},
    )  # fmt: skip
    ids = [r["id"] for r in recorded["recorded"]]
    session = recorded["session"]

    # A session's 50 items: more than one budget holds, compact and in detail, each item once.
    for detail in (False, True):
        seen, last, cuts = _page_through(
            sdk, "get_evidence", {"id": session, "limit": 100, "detail": detail}, "evidence"
        )
        assert sorted(seen) == sorted(ids) and last["total"] == 50 and cuts >= 1
    # A search for all of them, 50 at a time: the budget cuts the page and the cursor goes on.
    seen, _, cuts = _page_through(
        sdk, "search_evidence", {"query": "manifest leaks", "limit": 50, "detail": True}, "results"
    )
    assert sorted(seen) == sorted(ids) and cuts >= 1
    # The freshness audit: the repository's items, and the same 50 ids again, to the last one.
    for args in (
        {"verify": True, "detail": True},
        {"ids": ids, "detail": True},
        {"ids": ids},
        {"ids": ids, "about": "upload-sdk", "detail": True},
    ):
        seen, last, _ = _page_through(sdk, "workspace_overview", args, "items")
        assert sorted(seen) == sorted(ids) and last["total"] == 50
    past = sdk.call("workspace_overview", {"ids": ids[:2], "cursor": "o9"})
    assert past["isError"] is True and "past the end" in past["content"][0]["text"]


def _commit(repo, path, text, message):
    with open(os.path.join(str(repo), path), "w", encoding="utf-8") as f:
        f.write(text)
    git(repo, "commit", "-q", "-am", message)


def test_verify_reasons_keep_the_commits_they_name_whole(servers, run_cli):
    """A symbol changed in many commits with long subjects: a reply names fewer commits rather
    than cutting one in the middle, and counts the rest."""
    sdk_path = servers.env["sdk"]
    ui = servers.start()
    ui.initialize()
    eid = ui.call_ok(
        "record_evidence",
        {"items": [{"kind": "finding", "claim": "send returns 419", "repo": "upload-sdk", "files": ["src/upload.py#send"]}]},
    )["recorded"][0]["id"]  # fmt: skip
    subjects = []
    for n in range(7):
        subject = "rework the send path so that the retry budget is honoured, step %d" % n
        _commit(sdk_path, "src/upload.py",
                "def uploadDocument(doc):\n    return send(doc)\n\n\ndef send(doc):\n    return %d\n" % (420 + n), subject)  # fmt: skip
        subjects.append(wctx.clip_words(subject, 60))  # up to 60 characters, cut at a word
    for args in ({"ids": [eid]}, {"ids": [eid], "detail": True}):
        (item,) = ui.call_ok("workspace_overview", args)["items"]
        reason = item["reasons"][0]
        named = COMMIT.findall(reason)
        assert named, reason
        assert all(subject in subjects for _, _, subject in named), reason
        total = int(re.search(r"changed in (\d+) commits", reason).group(1))
        more = re.search(r" and (\d+) more$", reason)
        assert total == 7 and len(named) + (int(more.group(1)) if more else 0) == total, reason
        assert "[truncated" not in reason and not reason.endswith("…")
    # The CLI's text keeps them whole too.
    out = run_cli(["--home", str(servers.home), "verify", eid], cwd=servers.env["ui"])
    (line,) = [x for x in out.out.splitlines() if x.startswith(eid)]
    assert COMMIT.findall(line) and all(s in subjects for _, _, s in COMMIT.findall(line))


def test_cut_reason_drops_whole_commits_and_counts_them():
    commits = ['%07x 2026-0%d-1%d "%s"' % (0xABC0000 + n, 1 + n % 9, n % 10, "subject; with a semicolon %d" % n) for n in range(5)]  # fmt: skip
    reason = "src/a.py#f changed in 9 commits since 1234567: " + "; ".join(commits) + " and 4 more"
    for limit in range(60, len(reason) + 5, 7):
        cut = wctx.cut_reason(reason, limit)
        named = COMMIT.findall(cut)
        assert named and all('%s %s "%s"' % c in commits for c in named), (limit, cut)
        more = re.search(r" and (\d+) more$", cut)
        assert len(named) + (int(more.group(1)) if more else 0) == 9, cut
        assert len(cut) <= max(limit, len(commits[0]) + 60) * 2
    plain = "matches the query text (" + ", ".join("word%d" % n for n in range(40)) + ")"
    cut = wctx.cut_reason(plain, 80)
    assert len(cut) <= 80 and cut.endswith("…") and plain.startswith(cut[:-1])


def test_text_only_server_sends_each_reply_once_and_every_client_reads_the_text(servers):
    """`wctx mcp --text-only`: no outputSchema and no structuredContent, so Claude Code and Codex
    (which pass structuredContent on when present) show the model the text block, as Gemini CLI
    does; each reply crosses the wire once."""
    ui = servers.start(args=["--text-only"])
    ui.initialize("2025-06-18")
    tools = ui.request("tools/list")["result"]["tools"]
    assert tools and all("outputSchema" not in t for t in tools)
    recorded = ui.call(
        "record_evidence", {"items": [{"kind": "finding", "claim": CLAIMS[0], "repo": "upload-sdk"}]}
    )
    assert recorded["isError"] is False and "structuredContent" not in recorded
    eid = re.search(r"ev-[0-9a-f]+", recorded["content"][0]["text"]).group(0)
    found = ui.call("search_evidence", {"query": "parseManifest worker"})
    assert "structuredContent" not in found
    (line,) = [x for x in found["content"][0]["text"].splitlines() if x.startswith("ev-")]
    assert line.startswith(eid + " [finding, upload-sdk, current] parseManifest") and " -- " in line


def test_text_only_replies_are_cut_by_the_bytes_of_the_text_they_send(servers):
    """With --text-only the text block is all that is sent, so the budget is filled by its bytes,
    not by how many entries the (unsent) structured form would have held."""
    budget = wctx_mcp.REPLY_BUDGET_BYTES["search_evidence"]
    plain, text_only = servers.start(), servers.start(args=["--text-only"])
    for server in (plain, text_only):
        server.initialize("2025-06-18")
    items = [
        {"kind": "finding", "claim": "manifest %03d: %s" % (n, CLAIMS[n % len(CLAIMS)]), "repo": "upload-sdk",
         "files": ["src/upload.py#send"]}
        for n in range(50)
    ]  # fmt: skip
    plain.call_ok("record_evidence", {"items": items})
    shown = {}
    for label, server in (("plain", plain), ("text-only", text_only)):
        result = server.call("search_evidence", {"query": "parseManifest worker", "limit": 50})
        text = result["content"][0]["text"]
        lines = [x for x in text.splitlines() if x.startswith("ev-")]
        shown[label] = len(lines)
        assert len(text.encode()) <= budget and "more not shown" in text, (label, len(text.encode()))
        if label == "text-only":
            # Full: one more entry line would not have fitted.
            longest = max(len(x.encode()) for x in lines)
            assert len(text.encode()) > budget - 2 * longest, (len(text.encode()), longest)
    assert shown["text-only"] > shown["plain"], shown
