"""Every MCP tool result is bounded, the write tool's too: record_evidence citing hundreds of
symbols that are not there answers within the result budget, keeps every recorded id (a later
import looks for them), and says what it left out."""

from __future__ import annotations

import json

import pytest
from mcp_helpers.wire import WireServer

import wctx_mcp

BUDGET = wctx_mcp.REPLY_BUDGET_BYTES["record_evidence"]


@pytest.mark.parametrize("name_length", [12, 180])
def test_record_evidence_citing_many_missing_symbols_stays_within_the_budget(
    git_repo, run_cli, wctx_home, name_length
):
    repo = git_repo("inventory", {"stock.py": "def count(items):\n    return len(items)\n"})
    assert run_cli(["repo", "add", repo.path]).code == 0
    # A cited symbol its file does not define is refused; a named dependency that is not found
    # is stored with a warning: 40 of them per item make the warnings.
    items = [
        {"kind": "finding", "claim": "stock counting case %d" % i, "files": ["stock.py#count"],
         "depends_on": ["inventory:stock.py#%s_%02d_%02d" % ("gone" * (name_length // 4), i, j) for j in range(40)]}
        for i in range(24)
    ]  # fmt: skip
    server = WireServer(wctx_home, repo.path)
    try:
        server.initialize()
        result = server.call("record_evidence", {"summary": "audit of stock counting", "items": items})
        again = server.call("record_evidence", {"summary": "audit of stock counting", "items": items})
    finally:
        server.kill()
    for reply in (result, again):
        assert reply["isError"] is False, reply
        payload = reply["structuredContent"]
        assert len(json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()) <= BUDGET
        assert len(reply["content"][0]["text"].encode()) <= BUDGET
        assert payload.get("truncated"), payload.keys()  # says that warnings were left out
        assert any("warnings" in note for note in payload["truncated"])
    assert len(result["structuredContent"]["recorded"]) == 24  # every id is there
    assert len({e["id"] for e in result["structuredContent"]["recorded"]}) == 24
    assert len(again["structuredContent"]["duplicates"]) == 24
