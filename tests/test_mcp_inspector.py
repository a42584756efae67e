"""The MCP Inspector CLI (npm @modelcontextprotocol/inspector) against the real server, in both
protocol eras (the handshake era and the 2026-07-28 era) where the Inspector can speak both.

CI installs the current Inspector into .ci/node (see .ci/run), with a Node 22 from the npm `node`
package in .ci/node22 when the machine's node is older (the current Inspector needs it), so the
tests run offline after installation; without those folders they fall back to the node and npx on
PATH. Under CI=true a missing or old Inspector fails instead of skipping.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mcp_helpers.repos import product  # noqa: E402
from mcp_helpers.wire import ROOT, WCTX  # noqa: E402

LOCAL_INSPECTOR = os.path.join(ROOT, ".ci", "node", "node_modules", ".bin", "mcp-inspector")
LOCAL_NODE_BIN = os.path.join(ROOT, ".ci", "node22", "node_modules", ".bin")
IN_CI = os.environ.get("CI") == "true"
TOOL_IS_ERROR = 5  # the current Inspector CLI's exit code for a tool result with isError: true


def _missing(reason):
    if IN_CI:
        pytest.fail(reason + " (CI must install it: see .ci/run)")
    pytest.skip(reason)


def node_path():
    """PATH with the Node 22 that .ci/run installed first, when there is one."""
    path = os.environ.get("PATH", "")
    return LOCAL_NODE_BIN + os.pathsep + path if os.path.isdir(LOCAL_NODE_BIN) else path


def inspector():
    """(argv prefix, major version) of the Inspector CLI to run."""
    node = shutil.which("node", path=node_path())
    if node is None:
        _missing("node is not installed: the MCP Inspector CLI cannot run here")
    if os.path.exists(LOCAL_INSPECTOR):
        command = [LOCAL_INSPECTOR]
    elif shutil.which("npx", path=node_path()) is not None and not IN_CI:
        command = ["npx", "-y", "@modelcontextprotocol/inspector"]
    else:
        _missing("npx is not installed and .ci/node has no MCP Inspector (run .ci/run)")
    package = os.path.join(
        ROOT, ".ci", "node", "node_modules", "@modelcontextprotocol", "inspector", "package.json"
    )
    major = 0
    if os.path.exists(package):
        with open(package, encoding="utf-8") as fh:
            major = int(json.load(fh)["version"].split(".")[0])
    return command, major


def first_json(text):
    """The first JSON document of the CLI's stdout (an error line may follow it)."""
    value, _ = json.JSONDecoder().raw_decode(text.lstrip())
    return value


@pytest.fixture(params=["legacy", "modern"])
def inspect(request, tmp_path):
    env = product(tmp_path)
    command, major = inspector()
    era = request.param
    if major < 2:  # before 2.x the CLI speaks only the handshake era, and takes no --protocol-era
        if IN_CI:
            pytest.fail("CI installed an old MCP Inspector (%s); the current one needs Node >= 22" % major)
        if era == "modern":
            pytest.skip("this MCP Inspector speaks only the handshake era")
    mode = ["--cli"] + (["--protocol-era", era] if major >= 2 else [])

    def run(*method_args, cwd=None):
        argv = command + mode + ["-e", f"WCTX_HOME={env['home']}", sys.executable, WCTX, "mcp"]
        argv += list(method_args)
        done = subprocess.run(
            argv,
            cwd=str(cwd or env["ui"]),
            env=dict(os.environ, WCTX_HOME=str(env["home"]), PATH=node_path()),
            capture_output=True,
            timeout=180,
        )
        out = done.stdout.decode("utf-8")
        assert done.returncode in (0, TOOL_IS_ERROR), done.stderr.decode("utf-8", "replace")
        result = first_json(out)
        assert (done.returncode == TOOL_IS_ERROR) == (result.get("isError") is True and major >= 2), out
        return result

    run.era = era
    return run


def test_inspector_lists_the_tools(inspect):
    listed = inspect("--method", "tools/list")
    names = [t["name"] for t in listed["tools"]]
    assert (
        names[0] == "workspace_overview"
        and "record_evidence" in names
        and "search_evidence" in names
        and len(names) == 4
    )
    for tool in listed["tools"]:
        assert tool["inputSchema"]["type"] == "object" and "properties" in tool["inputSchema"]
        assert "readOnlyHint" in tool["annotations"]


def test_inspector_records_and_searches(inspect):
    items = json.dumps([{"kind": "finding", "claim": "SDK swallows the 419", "repo": "upload-sdk"}])
    recorded = inspect(
        "--method", "tools/call", "--tool-name", "record_evidence", "--tool-arg", "items=" + items
    )
    assert recorded["isError"] is False
    eid = recorded["structuredContent"]["recorded"][0]["id"]
    # A JSON string, so that a CLI that reads argument values as JSON does not make 419 a number.
    found = inspect("--method", "tools/call", "--tool-name", "search_evidence", "--tool-arg", 'query="419"')
    assert [r["id"] for r in found["structuredContent"]["results"]] == [eid]
    # The text block (what a client that ignores structuredContent shows) names the same result.
    text = found["content"][0]["text"]
    assert "%s [finding, upload-sdk, current] SDK swallows the 419" % eid in text and not text.startswith("{")
    detailed = inspect(
        "--method",
        "tools/call",
        "--tool-name",
        "search_evidence",
        "--tool-arg",
        'query="419"',
        "--tool-arg",
        "detail=true",
    )
    assert detailed["structuredContent"]["results"][0]["session"] == recorded["structuredContent"]["session"]
    missing = inspect("--method", "tools/call", "--tool-name", "get_evidence", "--tool-arg", 'id="ev-nope"')
    assert missing["isError"] is True and "structuredContent" not in missing
