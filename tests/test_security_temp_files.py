"""wctx writes nothing outside its store's directory: SQLite's temporary files (sorts, temporary
indexes, statement journals, the copy forget's rewrite makes) would otherwise land in TMPDIR or
/var/tmp, holding pieces of the store. Every file a whole wctx process (and each git it runs)
creates is observed with ``strace`` over the commands that write and sort the most."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from conftest import WCTX_SCRIPT
from test_security_hostile import _strace

_CREATING = re.compile(r'(?:open|openat|creat)\((?:AT_FDCWD, )?"([^"]*)", ([^)]*)\) = \d+')


def _created(log):
    """Paths opened for creation (O_CREAT, or creat) that the call succeeded on."""
    out = set()
    with open(log, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            m = _CREATING.search(line)
            if m and ("O_CREAT" in m.group(2) or "creat(" in line):
                out.add(m.group(1))
    return out


def test_nothing_is_created_outside_the_store_directory(git_repo, tmp_path, wctx_home):
    strace = _strace()
    repo = git_repo("ledger", {"book/entries.py": "def post(entry):\n    return entry.amount\n"})
    watched = tmp_path / "tmpdir"
    watched.mkdir()
    env = dict(os.environ, WCTX_HOME=wctx_home, TMPDIR=str(watched), PYTHONDONTWRITEBYTECODE="1")
    log = str(tmp_path / "trace.log")
    created = set()

    def traced(*argv):
        proc = subprocess.run(
            [strace, "-f", "-qq", "-e", "trace=open,openat,creat", "-o", log, sys.executable, WCTX_SCRIPT, *argv],
            cwd=repo.path, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, (argv, proc.stderr)
        created.update(_created(log))
        return proc.stdout

    traced("repo", "add", repo.path)
    for n in range(12):
        traced_out = traced("capture", "--finding", "posting %d rounds the amount :: %s" % (n, "detail " * 50),
                            "--file", "book/entries.py#post")  # fmt: skip
    item = traced_out.split()[-3]
    assert "posting 3 rounds" in traced("export")
    traced("search", "posting rounds amount", "--limit", "50")
    traced("verify")
    traced("forget", item, "--reason", "a test of the rewrite", "--yes")
    outside = {
        p for p in created
        if not os.path.realpath(p).startswith(os.path.realpath(wctx_home) + os.sep)
        and not p.startswith("/dev/")
    }  # fmt: skip
    assert outside == set(), sorted(outside)
    assert os.listdir(str(watched)) == []
