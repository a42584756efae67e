"""Every command a user can type is documented: a one-line summary in `wctx --help` and an
example in its own --help."""

from __future__ import annotations

import argparse

import wctx


def _leaf_commands(parser, prefix=()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                nested = any(isinstance(a, argparse._SubParsersAction) for a in sub._actions)
                if nested:
                    yield from _leaf_commands(sub, prefix + (name,))
                else:
                    yield prefix + (name,), helps.get(name), sub.description or ""


def test_every_command_has_a_summary_and_an_example():
    commands = list(_leaf_commands(wctx.build_parser()))
    assert len(commands) >= 25
    for path, summary, description in commands:
        name = " ".join(path)
        assert summary and summary.endswith("."), "wctx %s has no one-sentence summary: %r" % (name, summary)
        assert "\n" not in summary
        assert "wctx " in description, "wctx %s --help shows no example" % name


def test_help_of_each_command_runs(run_cli):
    for path, _, _ in _leaf_commands(wctx.build_parser()):
        res = run_cli(list(path) + ["--help"])
        assert res.code == 0 and "usage: wctx" in res.out, path
