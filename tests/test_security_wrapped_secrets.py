"""Secrets the rules see only once decoded or joined: a token wrapped in base64 (a Kubernetes
secret, an encoded header), a token cut in two by a line break (a wrapped terminal, a shell's
backslash continuation), a database URL written percent-encoded (a connection string passed
through a query or an environment file). Each is planted through capture and checked in the
store's bytes (database and WAL), in search output and in the export; ordinary base64, encoded
URLs and wrapped prose are left as they are."""

from __future__ import annotations

import base64
import json

import pytest
from conftest import store_file_bytes

import wctx

# Secrets of my own making, each a shape the rules know when it is whole and plain.
GITLAB = "glpat-Wq7LmZx2Rt9KpVb4NcYe"
SLACK = "xoxb-5512093487-QmTr8vKpLz2WnYcX"
DB_PASSWORD = "Pl4nted-Orchard-Pw"
DB_URL = "mysql://reporter:%s@db.orchard.example:3306/stats" % DB_PASSWORD


def _percent(text, times=1):
    for _ in range(times):
        text = "".join(c if c.isalnum() or c in "-._~" else "%%%02X" % ord(c) for c in text)
    return text


WRAPPED = {
    "base64 of a token": (base64.b64encode(("token: " + GITLAB).encode()).decode(), [GITLAB]),
    "base64url of a netrc line": (
        base64.urlsafe_b64encode(
            ("machine db.orchard.example login reporter password %s" % DB_PASSWORD).encode()
        )
        .decode()
        .rstrip("="),
        [DB_PASSWORD],
    ),
    "token cut by a line break": ("slack bot: %s\n%s and more" % (SLACK[:14], SLACK[14:]), [SLACK[14:]]),
    "token cut by a shell continuation": (
        "export GL=%s\\\n    %s" % (GITLAB[:12], GITLAB[12:]),
        [GITLAB[12:]],
    ),
    "percent-encoded database url": ("DATABASE_URL=" + _percent(DB_URL), [DB_PASSWORD]),
    "database url encoded twice": ("dsn=" + _percent(DB_URL, times=2), [DB_PASSWORD]),
}
ORDINARY = [
    "payload " + base64.b64encode(b"the orchard report for the third quarter is ready").decode(),
    "see https%3A%2F%2Fdocs.orchard.example%2Fguide%3Fpage%3Dinstall for the steps",
    "the reconciliation job compares ledgers\nbetween the warehouse and the storefront",
    "blob 5ed0092c1f4a9e2b7d3c8e6f0a1b2c3d4e5f6a7b and tree 1111111111111111111111111111111111111111",
]


@pytest.fixture
def orchard(git_repo, run_cli):
    repo = git_repo("orchard", {"stats/report.py": "def quarter(rows):\n    return rows\n"})
    assert run_cli(["repo", "add", repo.path]).code == 0
    return repo


@pytest.mark.parametrize("case", sorted(WRAPPED))
def test_a_wrapped_secret_never_reaches_the_store_search_or_export(case, orchard, run_cli, wctx_home):
    text, leaks = WRAPPED[case]
    res = run_cli(["capture", "--finding", "orchard stats connect :: %s" % text], cwd=orchard.path)
    assert res.code == 0, res
    raw = store_file_bytes(wctx_home)
    found = run_cli(["search", "orchard stats connect", "--json"], cwd=orchard.path)
    exported = run_cli(["export"], cwd=orchard.path)
    for leak in leaks + ([text] if case.startswith("base64") else []):  # nor the wrapped form
        assert leak.encode() not in raw, (case, leak)
        assert leak not in found.out and leak not in exported.out, (case, leak)
    records = [json.loads(line) for line in exported.out.splitlines()]
    detail = next(r["detail"] for r in records if r["type"] == "evidence")
    assert "REDACTED" in detail, detail


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_encoded_and_wrapped_text_is_stored_as_written(text):
    assert wctx.stored_text(text) == text
    assert wctx.redact_secrets(text) == text


def test_the_work_per_field_is_bounded():
    # Many encoded pieces in one field: only the first WRAPPED_PIECES_MAX of each kind are decoded,
    # and the field is still redacted where a plain rule sees the secret.
    many = " ".join(
        base64.b64encode(("note number %04d of the orchard" % i).encode()).decode() for i in range(5000)
    )
    field = many + " token: " + GITLAB
    out = wctx.stored_text(field)
    assert GITLAB not in out and out.startswith(many[:200])
