"""The MCP Inspector CLI (npm @modelcontextprotocol/inspector) against the real server.

CI installs it into .ci/node (see .ci/run) so the test runs offline after installation; without
that folder it falls back to npx. Skipped only when node/npx is not installed at all.
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


def inspector_command():
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the MCP Inspector CLI cannot run here")
    if os.path.exists(LOCAL_INSPECTOR):
        return [LOCAL_INSPECTOR]
    if shutil.which("npx") is None:
        pytest.skip("npx is not installed and .ci/node has no MCP Inspector (run .ci/run)")
    return ["npx", "-y", "@modelcontextprotocol/inspector"]


@pytest.fixture
def inspect(tmp_path):
    env = product(tmp_path)
    command = inspector_command()

    def run(*method_args, cwd=None):
        argv = command + ["--cli", "-e", f"WCTX_HOME={env['home']}", sys.executable, WCTX, "mcp"]
        argv += list(method_args)
        done = subprocess.run(
            argv,
            cwd=str(cwd or env["ui"]),
            env=dict(os.environ, WCTX_HOME=str(env["home"])),
            capture_output=True,
            timeout=180,
        )
        assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
        return json.loads(done.stdout.decode("utf-8"))

    return run


def test_inspector_lists_the_tools(inspect):
    listed = inspect("--method", "tools/list")
    names = [t["name"] for t in listed["tools"]]
    assert (
        names[0] == "workspace_overview"
        and "record_evidence" in names
        and "confirm_evidence" in names
        and len(names) == 8
    )
    for tool in listed["tools"]:
        assert tool["inputSchema"]["additionalProperties"] is False
        assert "readOnlyHint" in tool["annotations"]


def test_inspector_records_and_searches(inspect):
    items = json.dumps([{"kind": "finding", "claim": "SDK swallows the 419", "repo": "upload-sdk"}])
    recorded = inspect(
        "--method", "tools/call", "--tool-name", "record_evidence", "--tool-arg", "items=" + items
    )
    assert recorded["isError"] is False
    eid = recorded["structuredContent"]["recorded"][0]["id"]
    found = inspect("--method", "tools/call", "--tool-name", "search_evidence", "--tool-arg", "query=419")
    assert [r["id"] for r in found["structuredContent"]["results"]] == [eid]
    assert json.loads(found["content"][0]["text"]) == found["structuredContent"]
    missing = inspect("--method", "tools/call", "--tool-name", "get_evidence", "--tool-arg", "id=ev-nope")
    assert missing["isError"] is True and "structuredContent" not in missing
