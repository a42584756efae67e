"""Fixture bodies shared by the MCP test modules (each module wraps them in pytest fixtures)."""

from __future__ import annotations

import contextlib

from .repos import product
from .wire import WireServer


@contextlib.contextmanager
def running(home, cwd, args=(), argv=None, env=None):
    server = WireServer(home, cwd, args=args, argv=argv, env=env)
    try:
        yield server
    finally:
        server.kill()


class Servers:
    """Starts `wctx mcp` processes for one test and stops them all at the end."""

    def __init__(self, tmp_path):
        self.env = product(tmp_path)
        self.home = self.env["home"]
        self._stack = contextlib.ExitStack()

    def start(self, cwd=None, args=(), argv=None, env=None):
        return self._stack.enter_context(
            running(self.home, cwd or self.env["ui"], args=args, argv=argv, env=env)
        )

    def close(self):
        self._stack.close()
