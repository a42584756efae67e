#!/usr/bin/env python3
"""wctx in the shared peer benchmark, side by side with the bare FTS5 floor and installed peers.

    python3 bench/peers.py --n 10000                          # wctx and the bare FTS5 server
    python3 bench/peers.py --n 10000,100000 --peers context-router,server-memory
    python3 bench/peers.py load DATA_DIR CORPUS_JSONL         # the load step run.py times

Options it does not know go to run.py as they are (--optional-load-budget-s 600, --queries 20).

It runs the peer harness (/work/shared/bench/peers/run.py, or --harness DIR; the peers themselves
are installed by its setup.sh) with two spec peers next to whichever installed peers are named:
  wctx      this checkout's ``wctx.py``: the load step makes one small real git repository per
            corpus repository, registers all 40 in one workspace and loads the findings with
            ``wctx import-evidence`` (the bulk path); MCP search over the whole workspace from
            the first repository, limit 10;
  fts5-ref  the harness's own reference: one stdlib FTS5 table, limit 10.
Stores are rebuilt every run (``--reload``), since wctx's version string does not change with
each commit. The harness prints its markdown table and writes JSON (``--out``); this script adds
the date, the load average before and after and the commit measured.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_HARNESS = os.path.join(ROOT, "..", "shared", "bench", "peers")


def load(data, corpus_path):
    """The timed load step: repositories, registration (in process, as search_floor.py does: 40
    ``wctx repo add`` processes would time interpreter start-up), an export file, ``import-evidence``."""
    sys.path.insert(0, HERE)
    import search_floor

    rows = [json.loads(line) for line in open(corpus_path, encoding="utf-8")]
    names = sorted({r["repo"] for r in rows})
    paths = search_floor.make_repos(os.path.join(data, "repos"), names)
    sys.path.insert(0, ROOT)
    import wctx

    store = wctx.open_store()  # WCTX_HOME, as the harness sets it for this peer
    export = os.path.join(data, "export.jsonl")
    search_floor.register_and_export(wctx, store, names, paths, rows, export, False)
    store.close()
    subprocess.run(
        [sys.executable, os.path.join(ROOT, "wctx.py"), "import-evidence", export],
        check=True,
        capture_output=True,
    )
    os.remove(export)
    print(names[0])


def spec(python):
    wctx_py = os.path.join(ROOT, "wctx.py")
    return {
        "name": "wctx",
        "version_cmd": [python, wctx_py, "--version"],
        "limit": "limit=10, whole workspace in scope (40 repos)",
        "env": {"WCTX_HOME": "{dir}/home"},
        "load_cmd": ["{python}", os.path.abspath(__file__), "load", "{dir}", "{corpus}"],
        "mcp": {
            "argv": ["{python}", wctx_py, "mcp"],
            "tool": "search_evidence",
            "args": {"query": "{query}", "repo": "admin-portal", "limit": 10},
        },
    }


def commit():
    def git(*args):
        return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True).stdout.strip()

    return git("rev-parse", "--short", "HEAD") + (
        " (with uncommitted changes)" if git("status", "--porcelain", "-uno") else ""
    )


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["load"]:
        return load(argv[1], argv[2])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", default="10000")
    parser.add_argument(
        "--peers", default="", help="installed peers to add, e.g. context-router,server-memory"
    )
    parser.add_argument("--mcp-rounds", default="3")
    parser.add_argument("--harness", default=DEFAULT_HARNESS)
    parser.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "peers", "results-wctx.json"))
    args, extra = parser.parse_known_args(argv)  # the rest goes to run.py as is
    harness = os.path.abspath(args.harness)
    with tempfile.NamedTemporaryFile("w", suffix=".spec.json", delete=False) as fh:
        json.dump(spec(sys.executable), fh)
        spec_path = fh.name
    command = [sys.executable, os.path.join(harness, "run.py"), "--n", args.n, "--phases", "load,mcp",
               "--mcp-rounds", args.mcp_rounds, "--peers", args.peers, "--reload", "--out", args.out,
               "--peer-spec", os.path.join(harness, "examples", "fts5_ref.spec.json"), "--peer-spec", spec_path, *extra]  # fmt: skip
    before = os.getloadavg()
    started = datetime.datetime.now(datetime.timezone.utc)
    try:
        rc = subprocess.run(command, cwd=harness).returncode
    finally:
        os.remove(spec_path)
    after = os.getloadavg()
    print(
        "\nmeasured %s UTC, commit %s, Python %s, load average before %s, after %s"
        % (
            started.strftime("%Y-%m-%d %H:%M"),
            commit(),
            sys.version.split()[0],
            "/".join("%.2f" % x for x in before),
            "/".join("%.2f" % x for x in after),
        )  # fmt: skip
    )
    return rc


if __name__ == "__main__":
    sys.exit(main())
