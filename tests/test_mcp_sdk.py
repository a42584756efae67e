"""The official MCP Python SDK (test-only dependency) driving the real `python3 wctx.py mcp` process.

The SDK validates every structured result against the tool's outputSchema, so these tests also
prove that the schemas the server advertises describe what it returns.
"""

from __future__ import annotations

import os
import sys

import pytest

mcp = pytest.importorskip("mcp", reason="the MCP Python SDK is not installed (pip install mcp; Python 3.10+)")
anyio = pytest.importorskip("anyio")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp_helpers.repos import product  # noqa: E402
from mcp_helpers.wire import WCTX  # noqa: E402

TOOL_NAMES = [
    "workspace_overview",
    "search_evidence",
    "get_evidence",
    "record_evidence",
]
FINDING = {
    "kind": "finding",
    "claim": "SDK swallows the 419 from the upload endpoint",
    "detail": "returned as terminal, no retry",
    "repo": "upload-sdk",
    "files": ["src/upload.py#uploadDocument"],
    "confidence": 0.8,
}


def server_params(env, cwd, *args):
    # A thin environment, as clients give their servers: no inherited shell variables.
    environment = {
        "WCTX_HOME": str(env["home"]),
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(env["home"]),
    }
    return StdioServerParameters(
        command=sys.executable, args=[WCTX, "mcp", *args], env=environment, cwd=str(cwd)
    )


def field(obj, snake):
    """SDK 2.x names model fields in snake_case, 1.x in camelCase."""
    if hasattr(obj, snake):
        return getattr(obj, snake)
    head, *rest = snake.split("_")
    return getattr(obj, head + "".join(w.title() for w in rest))


def structured(result):
    assert field(result, "is_error") is False, result.content
    return field(result, "structured_content")


async def exercise_every_tool(call):
    """Call each tool once through ``call(name, arguments)``; returns what was recorded."""
    recorded = structured(await call("record_evidence", {"items": [FINDING], "summary": "sdk test"}))
    eid = recorded["recorded"][0]["id"]
    overview = structured(await call("workspace_overview", {}))
    assert overview["repo"] == "docs-ui"
    found = structured(await call("search_evidence", {"query": "419 upload"}))
    assert [r["id"] for r in found["results"]] == [eid]
    evidence = structured(await call("get_evidence", {"id": eid}))["evidence"]
    assert evidence["anchors"] and evidence["freshness"]["verdict"] == "current"
    session = structured(await call("get_evidence", {"id": recorded["session"]}))
    assert session["total"] == 1
    related = structured(await call("workspace_overview", {"detail": True}))
    assert related["relations"][0]["repo"] == "upload-sdk"
    verified = structured(await call("workspace_overview", {"ids": [eid]}))
    assert verified["items"][0]["verdict"] == "current"
    failed = await call("get_evidence", {"id": "ev-doesnotexist"})
    assert field(failed, "is_error") is True
    return recorded


def test_client_session_legacy_handshake_calls_every_tool(tmp_path):
    env = product(tmp_path)

    async def main():
        async with stdio_client(server_params(env, env["ui"])) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                assert field(init, "server_info").name == "wctx"
                assert "search_evidence" in (init.instructions or "")
                listed = await session.list_tools()
                assert [t.name for t in listed.tools] == TOOL_NAMES
                assert all(field(t, "output_schema") and t.annotations for t in listed.tools)
                await exercise_every_tool(session.call_tool)

    anyio.run(main)


def _client_class():
    client = getattr(mcp, "Client", None)
    if client is None or "mode" not in getattr(client, "__dataclass_fields__", {}):
        pytest.skip("this MCP SDK version has no era-selecting Client (mcp.Client(mode=...))")
    return client


def test_sdk_automatic_era_selection(tmp_path):
    client_class = _client_class()
    env = product(tmp_path)

    async def main():
        async with client_class(server_params(env, env["ui"]), mode="auto") as client:
            # The SDK probes with server/discover; a dual-era server must answer it, and the
            # client then speaks the newest era both sides know.
            version = client.protocol_version
            assert version in ("2026-07-28", "2025-11-25")
            listed = await client.list_tools()
            assert [t.name for t in listed.tools] == TOOL_NAMES
            await exercise_every_tool(client.call_tool)
        return version

    version = anyio.run(main)
    from mcp.types.version import MODERN_PROTOCOL_VERSIONS

    if "2026-07-28" in MODERN_PROTOCOL_VERSIONS:
        assert version == "2026-07-28"


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_sdk_client_in_each_era(tmp_path, mode):
    client_class = _client_class()
    env = product(tmp_path)

    async def main():
        async with client_class(server_params(env, env["ui"]), mode=mode) as client:
            expected = "2026-07-28" if mode != "legacy" else None
            if expected:
                assert client.protocol_version == expected
            await exercise_every_tool(client.call_tool)

    anyio.run(main)


def test_record_from_one_repo_then_search_from_another(tmp_path):
    env = product(tmp_path)

    async def record():
        async with stdio_client(server_params(env, env["ui"])) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                first = structured(await session.call_tool("record_evidence", {"items": [FINDING]}))
                second = structured(
                    await session.call_tool(
                        "record_evidence",
                        {"items": [FINDING, {"kind": "dead_end", "claim": "longer timeouts do not help"}]},
                    )
                )
                assert second["session"] == first["session"] and second["duplicates_skipped"] == 1
                return first["recorded"][0]["id"]

    async def search():
        async with stdio_client(server_params(env, "/", "--repo", "upload-sdk")) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return structured(
                    await session.call_tool("search_evidence", {"query": "419 retry timeout", "detail": True})
                )

    eid = anyio.run(record)
    found = anyio.run(search)
    ids = [r["id"] for r in found["results"]]
    assert eid in ids and len(ids) == 2
    assert any(
        "docs-ui" in reason or "same repository" in reason
        for r in found["results"]
        for reason in r["reasons"]
    )


def test_client_session_with_a_text_only_server(tmp_path):
    """`wctx mcp --text-only` declares no outputSchema and sends no structuredContent: the SDK
    client takes every result as text, and the text names what was recorded and found."""
    env = product(tmp_path)

    async def main():
        async with stdio_client(server_params(env, env["ui"], "--text-only")) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                listed = await session.list_tools()
                assert [t.name for t in listed.tools] == TOOL_NAMES
                assert not any(field(t, "output_schema") for t in listed.tools)
                recorded = await session.call_tool("record_evidence", {"items": [FINDING]})
                assert field(recorded, "is_error") is False and field(recorded, "structured_content") is None
                text = recorded.content[0].text
                eid = text.split("id: ", 1)[1].split()[0]
                found = await session.call_tool("search_evidence", {"query": "419 upload"})
                assert field(found, "structured_content") is None
                assert (
                    found.content[0].text.splitlines()[1].startswith(eid + " [finding, upload-sdk, current]")
                )

    anyio.run(main)
