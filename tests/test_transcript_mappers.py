"""Transcript import is one mapper per agent into one record, and a store step that knows no
agent: a fourth agent's format is a new mapper in adapters.py, never a change to how sessions are
stored. Checked on the parts themselves, so that a vendor's name cannot creep back into the store
step unnoticed."""

from __future__ import annotations

import ast
import os

from conftest import ROOT

import wctx

PARTS = os.path.join(ROOT, "parts", "core", "transcripts")
VENDOR_WORDS = ("claude", "codex", "gemini")


def _part(name):
    with open(os.path.join(PARTS, name), encoding="utf-8") as fh:
        return ast.parse(fh.read())


def test_the_store_step_takes_no_vendor_name_from_the_adapters():
    tree = _part("sessions.py")
    taken = [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "adapters"
        for alias in node.names
    ]
    assert taken, "sessions.py no longer imports from adapters: update this test"
    vendor_names = [n for n in taken if n.startswith("AGENT_") or any(w in n.lower() for w in VENDOR_WORDS)]
    assert vendor_names == []


def test_the_store_step_compares_with_no_agent_name():
    agents = set(wctx.TRANSCRIPT_AGENTS) | set(wctx.AGENT_ALIASES)
    literals = [
        node.value
        for node in ast.walk(_part("sessions.py"))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in agents
    ]
    assert literals == []


def test_every_agent_has_its_mapper_and_each_reads_its_own_fixture(tmp_path):
    # The registry the store step goes through names every agent wctx imports, and nothing else.
    assert sorted(wctx.TRANSCRIPT_ADAPTERS) == sorted(wctx.TRANSCRIPT_AGENTS)
    fixtures = os.path.join(ROOT, "tests", "fixtures", "transcripts")
    for name, agent in (
        ("claude_multi_repo.jsonl", "claude-code"),
        ("codex_multi_repo.jsonl", "codex"),
        ("gemini_multi_repo.jsonl", "gemini-cli"),
    ):
        rec = wctx.parse_transcript(os.path.join(fixtures, name))
        assert rec.agent == agent and sum(rec.tool_calls.values()) > 0, name
