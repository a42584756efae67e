"""The MCP server on the raw wire: bytes in, one JSON-RPC message per line out.

Every test drives the real `python3 wctx.py mcp` process over its stdin/stdout. A reply that is
not JSON fails the test, so each of these also checks that stdout carries nothing but protocol.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mcp_helpers.fixtures import Servers  # noqa: E402
from mcp_helpers.wire import MODERN, ROOT, envelope  # noqa: E402

import wctx  # noqa: E402
import wctx_mcp  # noqa: E402

HANDSHAKE = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
# What every model request may pay because wctx is installed (bench/RESULTS.md, "Token cost").
FIXED_COST_GOAL_BYTES = 5000


@pytest.fixture
def servers(tmp_path):
    s = Servers(tmp_path)
    yield s
    s.close()


@pytest.fixture
def server(servers):
    return servers.start()


def error_code(reply):
    assert "error" in reply and "result" not in reply, reply
    return reply["error"]["code"]


# -- handshake era ------------------------------------------------------------------------------


@pytest.mark.parametrize("version", HANDSHAKE)
def test_initialize_echoes_each_supported_version(server, version):
    result = server.initialize(version)
    assert result["protocolVersion"] == version
    assert "tools" in result["capabilities"]
    assert result["serverInfo"]["name"] == "wctx"
    assert result["serverInfo"]["version"]
    assert len(result["instructions"].encode("utf-8")) < 2048
    assert "search_evidence" in result["instructions"] and "record_evidence" in result["instructions"]


def test_initialize_with_an_unknown_version_answers_the_newest_handshake_version(server):
    assert server.initialize("2031-01-01")["protocolVersion"] == "2025-11-25"
    # 2026-07-28 has no handshake: asked for through initialize, it is not what comes back.
    assert server.request("ping")["result"] == {}


def test_initialize_without_protocol_version_is_invalid_params(server):
    assert error_code(server.request("initialize", {"capabilities": {}})) == -32602


def test_requests_are_served_right_after_initialize_without_waiting_for_initialized(server):
    server.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
    tools = server.request("tools/list")["result"]["tools"]
    assert [t["name"] for t in tools][:2] == ["workspace_overview", "search_evidence"]


def test_tool_list_is_fixed_order_with_schemas_and_annotations(server):
    server.initialize("2025-06-18")
    tools = server.request("tools/list")["result"]["tools"]
    assert [t["name"] for t in tools] == [
        "workspace_overview",
        "search_evidence",
        "get_evidence",
        "record_evidence",
    ]
    for tool in tools:
        assert len(tool["name"]) <= 64 and tool["name"].replace("_", "").isalpha()
        assert tool["title"] and len(tool["description"]) > 40
        assert tool["inputSchema"]["type"] == "object"
        # The server's own schema refuses unknown arguments; clients are not shown that rule.
        assert wctx_mcp.TOOLS_BY_NAME[tool["name"]]["inputSchema"]["additionalProperties"] is False
        assert tool["outputSchema"]["type"] == "object"
        notes = tool["annotations"]
        assert notes["destructiveHint"] is False and notes["openWorldHint"] is False
        assert notes["readOnlyHint"] is (tool["name"] != "record_evidence")


def test_what_every_model_request_pays_for_wctx_stays_within_its_budget(server):
    """A client puts every tool's name, description and input schema, and the server's
    instructions, before the model on every request, and the SessionStart hook adds the briefing
    (at most its default budget). Counted as Claude Code sends them (names prefixed mcp__wctx__,
    compact JSON); bench/client_requests.py measures the real clients' requests."""
    instructions = server.initialize("2025-11-25")["instructions"]
    tools = server.request("tools/list")["result"]["tools"]
    definitions = sum(
        len(json.dumps({"name": "mcp__wctx__" + t["name"], "description": t["description"],
                        "input_schema": t["inputSchema"]}, ensure_ascii=False, separators=(",", ":")).encode())
        for t in tools
    )  # fmt: skip
    fixed = definitions + len(instructions.encode()) + wctx.BRIEF_DEFAULT_BYTES
    assert fixed <= FIXED_COST_GOAL_BYTES, (definitions, len(instructions.encode()))


# Gemini CLI 0.61 adds this parameter to every tool it is given (addWaitForPreviousParameter in its
# bundle) and names an MCP tool mcp_<server>_<tool>.
GEMINI_WAIT_FOR_PREVIOUS = {
    "type": "boolean",
    "description": "Set to true to wait for all previously requested tools in this turn to complete before "
    "starting. Set to false (or omit) to run in parallel. Use true when this tool depends on the output of "
    "previous tools.",
}
# The briefing of bench/client_requests.py's world (18 items over two repositories: 1,194-1,206 bytes).
BENCH_BRIEFING_BYTES = 1206


def test_what_gemini_cli_pays_per_request_for_wctx_stays_within_the_goal(server):
    """Gemini CLI pays a parameter of its own on each tool, so the number of tools counts: the
    definitions as it sends them, the instructions and the briefing of the benchmark's world."""
    instructions = server.initialize("2025-11-25")["instructions"]
    tools = server.request("tools/list")["result"]["tools"]
    definitions = 0
    for t in tools:
        schema = dict(t["inputSchema"])
        schema["properties"] = dict(schema["properties"], wait_for_previous=GEMINI_WAIT_FOR_PREVIOUS)
        sent = {
            "name": "mcp_wctx_" + t["name"],
            "description": t["description"],
            "parametersJsonSchema": schema,
        }
        definitions += len(json.dumps(sent, ensure_ascii=False, separators=(",", ":")).encode())
    fixed = definitions + len(instructions.encode()) + BENCH_BRIEFING_BYTES
    assert fixed <= FIXED_COST_GOAL_BYTES, (definitions, len(instructions.encode()))


def test_bounds_clients_are_not_shown_are_still_refused_with_a_clear_error(server):
    server.initialize("2025-11-25")
    listed = {t["name"]: t for t in server.request("tools/list")["result"]["tools"]}
    assert "maxLength" not in listed["search_evidence"]["inputSchema"]["properties"]["query"]
    unknown = server.call("search_evidence", {"query": "upload", "colour": "red"})
    assert unknown["isError"] and "unknown argument: colour" in unknown["content"][0]["text"]
    long = server.call("search_evidence", {"query": "x" * 2001})
    assert long["isError"] and "the limit is 2000" in long["content"][0]["text"]


def test_instructions_say_when_to_search_and_what_to_record(server):
    text = " ".join(server.initialize("2025-11-25")["instructions"].lower().split())
    assert "search_evidence" in text and "before investigating" in text
    assert "record_evidence" in text
    for what in ("root cause", "decision", "dead end", "open question", "surprise"):
        assert what in text, what
    assert "symptom" in text and "path#symbol" in text  # how it first looked; what code it is about
    assert "confirm" in text  # an item re-checked against the code is confirmed through record_evidence


def test_oldest_revision_gets_the_fields_it_knows(server):
    server.initialize("2024-11-05")
    tools = server.request("tools/list")["result"]["tools"]
    assert all(set(t) == {"name", "description", "inputSchema"} for t in tools)
    result = server.call("search_evidence", {"query": "upload"})
    assert result["isError"] is False and "structuredContent" not in result
    assert result["content"][0]["text"].startswith("0 results")


def test_ping_before_and_after_initialize(server):
    assert server.request("ping")["result"] == {}
    server.initialize()
    assert server.request("ping")["result"] == {}


def test_request_before_initialize_is_an_error_with_its_id(server):
    reply = server.request("tools/list", request_id="early")
    assert reply["id"] == "early" and error_code(reply) == -32600
    assert "initialize" in reply["error"]["message"]


def test_second_initialize_is_refused(server):
    server.initialize()
    assert (
        error_code(server.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}))
        == -32600
    )


# -- errors -------------------------------------------------------------------------------------


def test_garbage_gets_parse_error_and_the_next_request_is_still_answered(server):
    server.send_raw(b"this is not json\n")
    reply = server.recv()
    assert reply["id"] is None and error_code(reply) == -32700
    server.send_raw(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"\n')  # truncated JSON
    assert error_code(server.recv()) == -32700
    assert server.request("ping")["result"] == {}


def test_invalid_utf8_is_a_parse_error(server):
    server.send_raw(b'{"jsonrpc": "2.0", "id": 1, "method": "pi\xff\xfeng"}\n')
    assert error_code(server.recv()) == -32700
    assert server.request("ping")["result"] == {}
    # A lone surrogate escaped in the JSON is valid input; the reply still goes out as valid UTF-8.
    server.send_raw(b'{"jsonrpc": "2.0", "id": "\\ud800-x", "method": "ping"}\n')
    assert server.recv() == {"jsonrpc": "2.0", "id": "\ud800-x", "result": {}}


def test_crlf_line_endings_and_blank_lines_are_tolerated(server):
    server.send_raw(b'\n\r\n{"jsonrpc": "2.0", "id": 5, "method": "ping"}\r\n')
    assert server.recv() == {"jsonrpc": "2.0", "id": 5, "result": {}}


@pytest.mark.parametrize(
    "raw",
    [
        b"42",
        b'"ping"',
        b"null",
        b'{"id": 1, "method": "ping"}',
        b'{"jsonrpc": "1.0", "id": 1, "method": "ping"}',
        b'{"jsonrpc": "2.0", "id": 1, "method": 7}',
        b'{"jsonrpc": "2.0", "id": null, "method": "ping"}',
        b'{"jsonrpc": "2.0", "id": true, "method": "ping"}',
        b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}',
        b'{"jsonrpc": "2.0", "id": 1}',
    ],
)
def test_malformed_messages_are_invalid_requests(server, raw):
    server.send_raw(raw + b"\n")
    assert error_code(server.recv()) == -32600
    assert server.request("ping")["result"] == {}


def test_unknown_method_is_method_not_found_with_the_request_id(server):
    server.initialize()
    reply = server.request("resources/list", request_id="r-1")
    assert reply["id"] == "r-1" and error_code(reply) == -32601
    assert error_code(server.request("no/such/method")) == -32601


def test_bad_params_and_unknown_tools_are_invalid_params(server):
    server.initialize()
    server.send({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": [1, 2]})
    reply = server.recv()
    assert reply["id"] == 9 and error_code(reply) == -32602
    assert error_code(server.request("tools/call", {"arguments": {}})) == -32602
    assert error_code(server.request("tools/call", {"name": "no_such_tool"})) == -32602
    assert error_code(server.request("tools/call", {"name": "search_evidence", "arguments": "q"})) == -32602
    assert error_code(server.request("tools/list", {"cursor": "bogus"})) == -32602


def test_invalid_tool_arguments_are_tool_errors_not_protocol_errors(server):
    server.initialize()
    for arguments in (
        {},  # query missing
        {"query": "x", "bogus": 1},  # additionalProperties false
        {"query": 5},
        {"query": "x", "limit": 0},
        {"query": "x", "kinds": ["rumour"]},
    ):
        result = server.call("search_evidence", arguments)
        assert result["isError"] is True, arguments
        assert "structuredContent" not in result
        assert result["content"][0]["type"] == "text" and result["content"][0]["text"]


def test_notifications_are_never_answered(server):
    server.notify("notifications/initialized")  # before initialize too
    server.initialize()
    server.notify("notifications/cancelled", {"requestId": 12345, "reason": "unknown id"})
    server.notify("notifications/progress", {"progressToken": "t", "progress": 1})
    server.notify("notifications/made_up")
    server.notify("tools/call", {"name": "search_evidence", "arguments": {"query": "x"}})  # no id
    server.send_raw(b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "bad"}\n')
    # The next line on stdout answers this ping: nothing was sent for the notifications.
    assert server.request("ping", request_id="after")["id"] == "after"
    rc, rest = server.close()
    assert rc == 0 and rest == []


def test_a_one_megabyte_line_is_read_and_answered(server):
    server.initialize()
    pad = "x" * (1024 * 1024)
    reply = server.request("ping", {"_meta": {"pad": pad}})
    assert reply["result"] == {}
    result = server.call("search_evidence", {"query": "upload " + pad})
    assert result["isError"] is True and "limit" in result["content"][0]["text"]
    assert server.request("ping")["result"] == {}


def test_a_line_over_the_size_limit_is_refused_and_skipped(server):
    server.send_raw(
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "' + b"x" * (17 << 20) + b'"}}\n'
    )
    reply = server.recv()
    assert reply["id"] is None and error_code(reply) == -32600 and "larger" in reply["error"]["message"]
    assert server.request("ping")["result"] == {}


def test_cancelled_request_is_never_answered(server):
    server.initialize()
    call = {"name": "search_evidence", "arguments": {"query": "upload"}}
    lines = [
        {"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": call},
        {"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": call},
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 11, "reason": "user"},
        },
        {"jsonrpc": "2.0", "id": 12, "method": "ping"},
    ]
    server.send_raw(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
    assert server.recv()["id"] == 10
    assert server.recv()["id"] == 12
    # A cancellation for a request already answered changes nothing.
    server.notify("notifications/cancelled", {"requestId": 10})
    assert server.request("ping", request_id=13)["id"] == 13


def test_cancelling_a_string_id_leaves_the_same_number_alone(server):
    """Request ids 7 and "7" are two requests: cancelling one never silences the other."""
    server.initialize()
    call = {"name": "search_evidence", "arguments": {"query": "upload"}}
    lines = [
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": call},
        {"jsonrpc": "2.0", "id": "7", "method": "tools/call", "params": call},
        {"jsonrpc": "2.0", "id": "8", "method": "ping"},
        {"jsonrpc": "2.0", "id": 8, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "7"}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 8}},
        {"jsonrpc": "2.0", "id": 9, "method": "ping"},
    ]
    server.send_raw(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
    assert [server.recv()["id"] for _ in range(3)] == [7, "8", 9]
    rc, rest = server.close()
    assert rc == 0 and rest == []


def test_server_exits_cleanly_when_stdin_closes(server):
    server.initialize()
    rc, rest = server.close()
    assert rc == 0 and rest == []


def test_requests_written_before_stdin_closes_are_all_answered(server):
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}},
        },
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "search_evidence", "arguments": {"query": "x"}},
        },
    ]
    server.send_raw(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    rc, rest = server.close()
    assert rc == 0 and [m["id"] for m in rest] == [1, 2, 3]


def test_a_request_written_in_pieces_is_answered_once_its_line_is_complete(server):
    line = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}).encode()
    server.send_raw(line[:9])
    server.send_raw(line[9:] + b"\n" + line.replace(b"7", b"8")[:5])
    assert server.recv()["id"] == 7
    server.send_raw(line.replace(b"7", b"8")[5:] + b"\n")
    assert server.recv()["id"] == 8


@pytest.mark.skipif(sys.platform == "win32", reason="a pipe's non-blocking flag is POSIX")
def test_a_non_blocking_input_pipe_is_waited_on_not_spun_or_dropped(servers):
    """A client that hands the server a non-blocking pipe: each request, written in pieces with
    pauses between them, is still answered once its line is complete: "nothing there yet" is
    waited out, never taken for the end of input."""
    import subprocess
    import time

    from mcp_helpers.wire import WCTX, server_env

    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    proc = subprocess.Popen(
        [sys.executable, WCTX, "mcp"],
        stdin=read_end,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=str(servers.env["ui"]),
        env=server_env(servers.home),
    )
    os.close(read_end)
    try:
        for request_id in (1, 2):
            line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"}).encode() + b"\n"
            os.write(write_end, line[:10])
            time.sleep(0.3)
            os.write(write_end, line[10:])
            assert json.loads(proc.stdout.readline()) == {"jsonrpc": "2.0", "id": request_id, "result": {}}
        os.close(write_end)
        write_end = None
        assert proc.wait(timeout=60) == 0
        assert proc.stdout.read() == b""
    finally:
        if write_end is not None:
            os.close(write_end)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_last_line_without_a_newline_is_still_answered(server):
    server.send_raw(json.dumps({"jsonrpc": "2.0", "id": 4, "method": "ping"}).encode())
    rc, rest = server.close()
    assert rc == 0 and [m["id"] for m in rest] == [4]


def test_input_without_a_descriptor_is_served_the_same(tmp_path):
    """A file object select() cannot watch (and every input on Windows) is read by a reader
    thread: oversized lines, blank lines and the unterminated last line behave as on a pipe."""
    import io

    import wctx
    import wctx_mcp

    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
    ]
    data = b"".join(json.dumps(m).encode() + b"\r\n\n" for m in messages)
    data += b'{"pad": "' + b"x" * (wctx_mcp.MAX_MESSAGE_BYTES + 10) + b'"}\n'
    data += json.dumps({"jsonrpc": "2.0", "id": 5, "method": "ping"}).encode()  # no newline
    stdin, stdout = io.BytesIO(data), io.BytesIO()
    tools = wctx_mcp.Tools(wctx, home=str(tmp_path / "home"))
    assert wctx_mcp.serve(wctx_mcp.Connection(tools, "0"), stdin, stdout) == 0
    replies = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert [r["id"] for r in replies] == [1, 2, None, 5]
    assert "larger" in replies[2]["error"]["message"]


def test_stdout_carries_only_protocol_even_when_the_core_prints(servers):
    # The real service layer, wrapped so that every search prints to stdout three ways.
    script = (
        "import os, sys\n"
        "sys.path.insert(0, %r)\n"
        "import wctx, wctx_mcp\n"
        "real = wctx.search\n"
        "def noisy(*a, **k):\n"
        "    print('stray print')\n"
        "    sys.__stdout__.write('stray __stdout__\\n'); sys.__stdout__.flush()\n"
        "    os.write(1, b'stray fd 1\\n')\n"
        "    return real(*a, **k)\n"
        "wctx.search = noisy\n"
        "sys.exit(wctx_mcp.main([], core=wctx))\n" % ROOT
    )
    server = servers.start(argv=[sys.executable, "-c", script])
    server.initialize()
    assert server.call("search_evidence", {"query": "upload"})["isError"] is False
    rc, rest = server.close()
    assert rc == 0 and rest == []
    assert "stray print" in server.stderr_text() and "stray fd 1" in server.stderr_text()


# -- batches ------------------------------------------------------------------------------------


def test_batch_on_2025_03_26(server):
    server.initialize("2025-03-26")
    batch = [
        {"jsonrpc": "2.0", "id": "a", "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/made_up"},
        {"jsonrpc": "2.0", "id": "b", "method": "tools/list"},
        {"jsonrpc": "2.0", "id": "c", "method": "no/such"},
        {
            "jsonrpc": "2.0",
            "id": "d",
            "method": "tools/call",
            "params": {"name": "search_evidence", "arguments": {"query": "upload"}},
        },
        7,
    ]
    server.send(batch)
    replies = server.recv()
    assert isinstance(replies, list)
    by_id = {r["id"]: r for r in replies}
    assert set(by_id) == {"a", "b", "c", "d", None}
    assert by_id["a"]["result"] == {}
    assert len(by_id["b"]["result"]["tools"]) == len(wctx_mcp.TOOLS) == 4
    assert by_id["c"]["error"]["code"] == -32601
    assert by_id["d"]["result"]["isError"] is False
    assert by_id[None]["error"]["code"] == -32600
    # A batch of notifications only gets no reply at all.
    server.send([{"jsonrpc": "2.0", "method": "notifications/made_up"}])
    assert server.request("ping", request_id="next")["id"] == "next"
    # An empty batch is an invalid request.
    server.send([])
    assert error_code(server.recv()) == -32600


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25"])
def test_batches_are_refused_outside_2025_03_26(server, version):
    server.initialize(version)
    server.send([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    reply = server.recv()
    assert isinstance(reply, dict) and error_code(reply) == -32600


def test_batches_are_refused_before_initialize_and_in_the_2026_era(servers):
    first = servers.start()
    first.send(
        [
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": "2025-03-26", "capabilities": {}},
            }
        ]
    )
    assert error_code(first.recv()) == -32600
    modern = servers.start()
    modern.request("server/discover", {"_meta": envelope()})
    modern.send([{"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": envelope()}}])
    assert error_code(modern.recv()) == -32600


# -- 2026-07-28 era -----------------------------------------------------------------------------


def test_server_discover(server):
    reply = server.request("server/discover", {"_meta": envelope()})
    result = reply["result"]
    assert result["resultType"] == "complete"
    assert result["supportedVersions"][0] == MODERN
    assert set(HANDSHAKE) <= set(result["supportedVersions"])
    assert "tools" in result["capabilities"]
    assert isinstance(result["ttlMs"], int) and result["cacheScope"] in ("public", "private")
    assert len(result["instructions"].encode("utf-8")) < 2048
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "wctx"


def test_modern_requests_without_a_handshake(server):
    listing = server.request("tools/list", {"_meta": envelope()})["result"]
    assert listing["resultType"] == "complete" and len(listing["tools"]) == 4
    assert isinstance(listing["ttlMs"], int) and listing["cacheScope"]
    result = server.call("search_evidence", {"query": "upload"}, modern=True)
    assert result["resultType"] == "complete" and result["isError"] is False
    assert result["structuredContent"]["results"] == []
    assert server.request("ping", {"_meta": envelope()})["result"]["resultType"] == "complete"


def test_modern_error_codes(servers):
    server = servers.start()
    meta = envelope()
    del meta["io.modelcontextprotocol/clientCapabilities"]
    assert error_code(server.request("tools/list", {"_meta": meta})) == -32602
    assert error_code(server.request("server/discover", {})) == -32602  # a probe with no _meta
    reply = server.request("tools/list", {"_meta": envelope(version="2099-01-01")})
    assert error_code(reply) == -32022
    assert reply["error"]["data"]["requested"] == "2099-01-01"
    assert MODERN in reply["error"]["data"]["supported"]
    assert error_code(server.request("tools/list", {"_meta": envelope(version=20260728)})) == -32602
    # The first good enveloped request settles the era: initialize is refused, naming versions.
    assert "result" in server.request("tools/list", {"_meta": envelope()})
    reply = server.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
    assert error_code(reply) == -32022 and MODERN in reply["error"]["data"]["supported"]
    # Every request must carry the envelope; one without it is invalid params.
    assert error_code(server.request("tools/list")) == -32602
    # Still answering.
    assert "result" in server.request("ping", {"_meta": envelope()})


def test_enveloped_request_on_a_handshake_connection_is_refused(server):
    server.initialize("2025-11-25")
    assert error_code(server.request("tools/list", {"_meta": envelope()})) == -32600
    assert error_code(server.request("server/discover")) == -32601
    assert "result" in server.request("tools/list")


def test_discover_probe_then_handshake_fallback_for_a_client_without_modern_support(server):
    # A dual-era client probing with an unsupported modern version learns what to retry with.
    reply = server.request("server/discover", {"_meta": envelope(version="2030-01-01")})
    assert error_code(reply) == -32022 and "2025-11-25" in reply["error"]["data"]["supported"]
    # It may then fall back to the handshake: the era was not settled by a refused probe.
    assert server.initialize("2025-11-25")["protocolVersion"] == "2025-11-25"


def test_initialize_is_answered_before_the_store_is_opened(servers, tmp_path):
    # WCTX_HOME is a file: opening the store must fail, but only when a tool first needs it.
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")
    env = dict(os.environ, WCTX_HOME=str(blocker))
    server = servers.start(env=env)
    assert server.initialize()["serverInfo"]["name"] == "wctx"
    assert len(server.request("tools/list")["result"]["tools"]) == 4
    result = server.call("search_evidence", {"query": "upload"})
    assert result["isError"] is True and str(blocker) in result["content"][0]["text"]
    assert server.request("ping")["result"] == {}


def test_cancellation_inside_a_2025_03_26_batch_is_applied(server):
    server.initialize("2025-03-26")
    call = {"name": "search_evidence", "arguments": {"query": "upload"}}
    server.send(
        [
            {"jsonrpc": "2.0", "id": "keep", "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "later"}},
            {"jsonrpc": "2.0", "id": "later", "method": "tools/call", "params": call},
            {"jsonrpc": "2.0", "id": "earlier", "method": "tools/call", "params": call},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "earlier"}},
        ]
    )
    replies = server.recv()
    assert [r["id"] for r in replies] == ["keep"]
    # A batch whose only request is cancelled gets no reply at all.
    server.send(
        [
            {"jsonrpc": "2.0", "id": "gone", "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "gone"}},
        ]
    )
    assert server.request("ping", request_id="after")["id"] == "after"


def test_a_fractional_id_is_refused_with_a_message_that_says_so(server):
    server.initialize()
    server.send({"jsonrpc": "2.0", "id": 15.5, "method": "ping"})
    reply = server.recv()
    assert reply["id"] is None and error_code(reply) == -32600
    message = reply["error"]["message"]
    assert "fractional" in message and "15.5" in message and "null" not in message
    server.send({"jsonrpc": "2.0", "id": None, "method": "ping"})
    assert "null" in server.recv()["error"]["message"]
