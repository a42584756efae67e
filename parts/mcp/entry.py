from __future__ import annotations

import os
import sys

from .connection import Connection
from .protocol import _log
from .service import core_module
from .stdio import serve
from .tools import Tools

# ----------------------------------------------------------------------------------------------
# Entry point: `wctx mcp [--repo NAME] [--workspace WS] [--text-only]`
# ----------------------------------------------------------------------------------------------


def main(argv=None, core=None, home=None, stdin=None, stdout=None):
    """Run the server on this process's stdin/stdout until stdin closes. Returns an exit code.

    ``argv`` holds the options after ``mcp``: ``--repo NAME``, ``--workspace WS``, ``--home DIR``.
    """
    import argparse

    parser = argparse.ArgumentParser(prog="wctx mcp", description="Serve wctx over MCP on stdio.")
    parser.add_argument("--repo", help="default repository for tools (a registered name or a path)")
    parser.add_argument("--workspace", help="default workspace when no repository is known")
    parser.add_argument("--home", default=home, help="data directory (default $WCTX_HOME or ~/.wctx)")
    parser.add_argument(
        "--text-only",
        action="store_true",
        help="answer with the text block alone (no outputSchema, no structuredContent)",
    )
    options = parser.parse_args(argv)
    core = core or core_module()

    if stdout is None:
        # The protocol owns the real stdout. Keep a private handle on it, then point file
        # descriptor 1 and sys.stdout at stderr so no stray print can corrupt the stream.
        sys.stdout.flush()
        stdout = os.fdopen(os.dup(1), "wb")
        os.dup2(2, 1)
        sys.stdout = sys.stderr
    if stdin is None:
        stdin = sys.stdin.buffer

    tools = Tools(
        core, home=options.home, repo=options.repo, workspace=options.workspace, text_only=options.text_only
    )
    connection = Connection(tools, getattr(core, "__version__", "0"), log=_log, text_only=options.text_only)
    core.WARM_GIT_VIEWS = True  # a long-lived process: git's answers about a checkout are reused
    try:
        return serve(connection, stdin, stdout)
    except (BrokenPipeError, KeyboardInterrupt):
        return 0
    finally:
        tools.close()


if __name__ == "__main__":
    sys.exit(main())
