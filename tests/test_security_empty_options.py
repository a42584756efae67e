"""An option given with nothing in it (``--session ""``, ``--repo " "``) is a one-line usage error
that changes nothing, on every option of ``capture`` and on the MCP write tool: never a traceback,
never a value quietly taken as "not given", never a session picked by an empty prefix."""

from __future__ import annotations

import argparse

import pytest
from conftest import db_snapshot
from mcp_helpers.wire import WireServer

import wctx

EMPTY_VALUES = ["", " \t\n"]


def _capture_options():
    """Every option of ``wctx capture`` that takes a value, read from the real parser."""
    parser = wctx.build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(
        a.option_strings[-1]
        for a in commands.choices["capture"]._actions
        if a.option_strings and a.nargs is None and a.dest != "home"
    )


OPTIONS = _capture_options()


@pytest.fixture
def garden(git_repo, run_cli):
    repo = git_repo("garden", {"beds/soil.py": "def ph(sample):\n    return sample.acidity\n"})
    assert run_cli(["repo", "add", repo.path]).code == 0
    first = run_cli(["capture", "--finding", "soil ph drifts after rain", "--json"], cwd=repo.path)
    assert first.code == 0, first.err
    return repo, first.json["session"]


def test_the_parser_still_has_the_options_this_test_covers():
    assert {"--session", "--repo", "--file", "--confidence", "--summary", "--finding", "--agent"} <= set(
        OPTIONS
    )


@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("value", EMPTY_VALUES)
@pytest.mark.parametrize("place", ["before", "after"])
def test_an_empty_value_on_any_capture_option_is_one_line_and_changes_nothing(
    garden, run_cli, wctx_home, option, value, place
):
    repo, _ = garden
    before = db_snapshot(wctx_home)
    given = [option, value]
    item = ["--note", "compost needs turning weekly"]
    argv = ["capture", *(given + item if place == "before" else item + given)]
    res = run_cli(argv, cwd=repo.path)
    assert res.code == 2, (argv, res)
    line = res.err.strip()
    assert line.startswith("wctx: ") and "\n" not in line and "Traceback" not in res.err, line
    item_flag = option[2:].replace("-", "_") in wctx.ITEM_FLAGS  # its claim is what was empty
    assert option in line or (item_flag and "claim is empty" in line), line
    assert db_snapshot(wctx_home) == before


def test_the_mcp_write_tool_refuses_a_blank_session_and_blank_fields(garden, wctx_home):
    repo, session = garden
    before = db_snapshot(wctx_home)
    server = WireServer(wctx_home, repo.path)
    try:
        server.initialize()
        item = {"kind": "finding", "claim": "mulch keeps the beds moist"}
        for arguments in (
            {"items": [item], "session_id": "   "},
            {"items": [item], "session_id": "\t\t\t\n"},
            {"items": [dict(item, repo=" ")]},
            {"items": [dict(item, files=["  "])]},
            {"items": [dict(item, claim="   ")]},
        ):
            reply = server.call("record_evidence", arguments)
            assert reply["isError"] is True, (arguments, reply)
            text = reply["content"][0]["text"]
            assert "\n" not in text.strip() and "Traceback" not in text, text
        ok = server.call_ok("record_evidence", {"items": [item], "session_id": session})
        assert ok["session"] == session
    finally:
        server.kill()
    after = db_snapshot(wctx_home)
    assert after != before  # the last call, and only it, was recorded
