"""A long-lived MCP server's memory stays flat over distinct searches (hours of an agent session).

The real `wctx mcp` process answers distinct searches over long items; what it keeps from one
search to the next must be bounded in bytes, not only in entries: one cached entry of a 7.5 kB
text can weigh hundreds of kB. Nothing here is timed: the test reads the server's VmRSS.
"""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest
from conftest import ROOT

spec = importlib.util.spec_from_file_location("bench_mcp_soak", os.path.join(ROOT, "bench", "mcp_soak.py"))
soak = importlib.util.module_from_spec(spec)
spec.loader.exec_module(soak)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/PID/status")

ITEMS = 200  # per vocabulary: the second round of searches meets items the first never saw
SEARCHES = 30
GROWTH_KIB = 16 * 1024  # the item views of 200 more items fit; a per-search leak (MBs each) does not


def test_distinct_searches_over_new_items_do_not_grow_the_server(tmp_path):
    base = str(tmp_path)
    home, repo = soak.build_store(base, ITEMS, seed=7)
    soak.build_store(base, ITEMS, seed=8)
    server = soak.Server(home, repo)
    try:
        # First round: distinct searches (and pages) over the first vocabulary's items, enough to
        # fill whatever bounded caches the server keeps.
        first = soak.soak(server, soak.queries(SEARCHES, seed=7))
        assert first[1] > 0
        before = server.memory_kib()[0]
        # Second round: as many distinct searches over the other items.
        found = server.search(soak.queries(1, seed=8)[0])
        assert found["results"], found  # the second vocabulary's items are there to be found
        soak.soak(server, soak.queries(SEARCHES, seed=8)[1:])
        after = server.memory_kib()[0]
    finally:
        server.close()
    assert after - before < GROWTH_KIB, (before, after)
