"""A large import-evidence behaves as if its records were imported one at a time: duplicates inside
the file and against the store, status changes, repeated ids, history and tombstones give the same
store; a bad line anywhere is named by file and line and nothing of the import is stored."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys

import pytest

import wctx

HERE = os.path.dirname(os.path.abspath(__file__))

SID = "ses-%010x"
EID = "ev-%010x"
T0 = "2026-02-01T10:00:00Z"
LATER = "2026-02-02T10:00:00Z"


def session(n, repo="svc"):
    return {"type": "session", "format": 1, "id": SID % n, "agent": "peer", "repo": repo,
            "started_at": T0, "ended_at": T0, "summary": "peer session %d" % n}  # fmt: skip


def evidence(n, sid, claim, root, head, path="a.py", symbol="handler", **extra):
    anchors = [{"repo": "svc", "root_commit": root, "path": None, "symbol": None, "commit": head}]
    if path:
        anchors.append({"repo": "svc", "root_commit": root, "path": path, "symbol": symbol, "commit": head})
    rec = {"type": "evidence", "format": 1, "id": EID % n, "session": sid, "repo": "svc",
           "root_commit": root, "kind": "finding", "claim": claim, "detail": "detail of %d" % n,
           "confidence": None, "status": "active", "created_at": T0, "updated_at": T0,
           "anchors": anchors}  # fmt: skip
    rec.update(extra)
    return rec


def write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


def rows(db, sql):
    return sorted((tuple(r) for r in db.execute(sql)), key=repr)


def state(store):
    """Everything an import writes, keyed by global ids (rids are local)."""
    db = store.db
    return {
        "evidence": rows(db, "SELECT id, session_id, repo_name, kind, claim, claim_key, detail, confidence, "
                             "status, superseded_by, updated_at, confirmed_at FROM evidence"),
        "anchors": rows(db, "SELECT e.id, a.repo_name, a.root_commit, a.path, a.symbol, a.commit_sha "
                            "FROM anchors a JOIN evidence e ON e.rid = a.evidence_rid"),
        "events": rows(db, "SELECT v.id, e.id, v.event, v.session_id, v.at FROM evidence_events v "
                           "JOIN evidence e ON e.rid = v.evidence_rid"),
        "fts": rows(db, "SELECT e.id, f.claim, f.symbols, f.paths, f.detail FROM evidence_fts f "
                        "JOIN evidence e ON e.rid = f.rowid"),
        "fts_rows": db.execute("SELECT count(*) FROM evidence_fts").fetchone()[0],
        "sessions": rows(db, "SELECT id, agent, summary FROM sessions"),
        "tombstones": rows(db, "SELECT id, kind FROM tombstones"),
    }  # fmt: skip


def build(tmp_path, root, head):
    """A base export both stores start from, and a 400-item file that repeats, updates and
    duplicates it and itself."""
    base = [session(0)] + [evidence(i, SID % 0, "base finding number %d" % i, root, head) for i in range(20)]
    records = [session(0), {"type": "tombstone", "format": 1, "id": EID % 19, "kind": "evidence", "session": SID % 0,
                "reason": "wrong", "forgotten_at": LATER},
               {"type": "tombstone", "format": 1, "id": EID % 1399, "kind": "evidence", "session": SID % 7,
                "reason": "wrong too", "forgotten_at": LATER}]  # fmt: skip
    expect = {"duplicates": 0, "updated": 0, "unchanged": 0, "forgotten": 0}
    n = 1000
    for s in range(1, 9):
        records.append(session(s))
        for k in range(50):
            sid, i = SID % s, n
            n += 1
            kind = k % 10
            if kind == 0:  # repeats a base item (other case and punctuation, same citation)
                j = (s * 5 + k) % 18
                records.append(
                    evidence(i, sid, "BASE finding number %d." % j, root, head, confidence=0.1 * (k % 9))
                )
                expect["duplicates"] += 1
            elif kind == 1:  # said twice in this file, by two sessions
                records.append(evidence(i, sid, "repeated inside the file %d" % (i // 20), root, head))
            elif kind == 2:  # the base claim about another file: a different item
                records.append(evidence(i, sid, "base finding number %d" % (k % 18), root, head, path="b.py"))
            elif kind == 3:  # a newer retraction of a base item, then the same claim again
                j = s + 1 if k < 25 else s + 9
                records.append(dict(evidence(j, SID % 0, "base finding number %d" % j, root, head),
                                    status="retracted", updated_at=LATER))  # fmt: skip
                records.append(evidence(i, sid, "base finding number %d" % j, root, head))
                expect["updated"] += 1
            elif kind == 4:  # an id already imported earlier in this file
                records.append(evidence(i - 3, sid if k > 3 else SID % 1, "ignored", root, head))
            elif kind == 5:  # with history: a confirmation from elsewhere
                rec = evidence(i, sid, "confirmed finding %d" % i, root, head, confirmed_at=LATER)
                rec["history"] = [{"id": "evt-c%d" % i, "event": "confirmed", "at": LATER, "agent": "peer",
                                   "session": sid, "note": "checked", "commits": {"svc": head}, "previous": []}]  # fmt: skip
                records.append(rec)
            elif kind == 6:  # cites nothing
                records.append(evidence(i, sid, "fileless note %d" % i, root, head, path=None))
            else:
                records.append(evidence(i, sid, "unique finding %d about %s" % (i, "retry" if k % 2 else "cache"),
                                        root, head, symbol="handler" if k % 3 else None))  # fmt: skip
    return write(tmp_path / "base.jsonl", base), records, expect


def indexes(db):
    return sorted(
        tuple(r) for r in db.execute("SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index'")
    )


def two_stores(git_repo, tmp_path):
    """One small repository registered in two fresh stores, "bulk" and "single", and its root."""
    repo = git_repo("svc", {"a.py": "def handler():\n    return 1\n", "b.py": "x = 2\n"})
    stores = [wctx.open_store(str(tmp_path / name)) for name in ("bulk", "single")]
    for s in stores:
        wctx.register_repo(s, repo.path)
    return repo, stores, stores[0].one("SELECT root_commit FROM repos")["root_commit"]


def one_at_a_time(store, records, keys):
    """Import ``records`` into ``store`` as separate files: the tombstones first, then each
    evidence line with its session line. The summed counts, under ``keys``."""
    single = {key: {} if key == "refusals" else 0 for key in keys}
    sessions = {r["id"]: r for r in records if r["type"] == "session"}
    sessions[SID % 0] = session(0)
    parts = [[r for r in records if r["type"] == "tombstone"]]
    parts += [[sessions[r["session"]], r] for r in records if r["type"] == "evidence"]
    for i, part in enumerate(parts):
        data = "".join(json.dumps(r) + "\n" for r in part).encode()
        counts, _ = wctx.import_evidence_data(store, "part-%d.jsonl" % i, data)
        for key, value in counts.items():
            if key == "refusals":  # {reason: how many}
                for why, n in value.items():
                    single[key][why] = single[key].get(why, 0) + n
            else:
                single[key] += value
    return single


@pytest.mark.parametrize(
    "rebuilt, streamed",
    [(False, False), (True, False), (True, True)],
    ids=["indexes-updated", "indexes-rebuilt", "streamed-in-chunks"],
)
def test_a_bulk_import_matches_importing_its_records_one_at_a_time(
    git_repo, tmp_path, monkeypatch, rebuilt, streamed
):
    # rebuilt: the import sets the secondary indexes aside and builds them again at the end, as
    # a large import into a smaller store does (here from the first new item on).
    monkeypatch.setattr(wctx, "_BULK_INDEX_MIN", 1 if rebuilt else 10**9)
    if streamed:
        # as a large import runs: its items read again from the file in a second pass, and
        # imported in chunks (here of 7), each seeing the ones before only through the store
        monkeypatch.setattr(wctx, "_STREAM_AFTER", 5)
        monkeypatch.setattr(wctx, "_IMPORT_CHUNK", 7)
    repo, stores, root = two_stores(git_repo, tmp_path)
    try:
        base, records, expect = build(tmp_path, root, repo.head)
        for s in stores:
            wctx.import_evidence(s, [base])
        before = indexes(stores[0].db)
        dropped = []
        stores[0].db.set_trace_callback(
            lambda sql: dropped.append(sql) if sql.startswith("DROP INDEX") else None
        )
        bulk = wctx.import_evidence(stores[0], [write(tmp_path / "big.jsonl", records)])
        stores[0].db.set_trace_callback(None)
        assert len(dropped) == (len(wctx._BULK_DEFERRED_INDEXES) if rebuilt else 0)
        # Every index is there again, exactly as the schema declares it, and the planner uses them.
        assert indexes(stores[0].db) == before == indexes(stores[1].db)
        plan = stores[0].all(
            "EXPLAIN QUERY PLAN SELECT rid FROM evidence WHERE repo_name = 'svc' AND claim_key = 'x'"
        )
        assert any("evidence_claim_key" in r["detail"] for r in plan), [tuple(r) for r in plan]
        assert stores[0].one("PRAGMA integrity_check")[0] == "ok"

        # The same records, each evidence line imported on its own (with its session line).
        assert bulk == one_at_a_time(stores[1], records, bulk)
        after = [state(s) for s in stores]
        assert after[0] == after[1]

        # And what that is, concretely: duplicates kept as one item seen by the repeating session.
        repeated = stores[0].all("SELECT id FROM evidence WHERE claim LIKE 'repeated inside the file%'")
        assert len(repeated) == len(
            {r["claim"] for r in records if r.get("claim", "").startswith("repeated")}
        )
        assert bulk["duplicates"] >= 20 + expect["duplicates"] // 2 and bulk["updated"] >= 8, bulk
        base_item = wctx.get_evidence(stores[0], EID % 5)
        assert len(base_item["seen_by"]) >= 1
        # A claim repeated after its item was retracted in the same file is a new item.
        assert stores[0].one("SELECT status FROM evidence WHERE id = ?", (EID % 2,))["status"] == "retracted"
        assert (
            stores[0].one(
                "SELECT count(*) AS n FROM evidence e JOIN anchors a ON a.evidence_rid = e.rid "
                "WHERE e.claim_key = ? AND e.status = 'active' AND a.path = 'a.py'",
                (wctx.claim_key("base finding number 2"),),
            )["n"]
            == 1
        )
        # Forgotten items stay gone, in the store and in search.
        assert stores[0].one("SELECT 1 FROM evidence WHERE id IN (?, ?)", (EID % 19, EID % 1399)) is None
        assert after[0]["fts_rows"] == len(after[0]["evidence"])
        res = wctx.search(stores[0], "repeated inside the file", repo="svc", limit=50)
        assert {r["id"] for r in repeated} <= {r["id"] for r in res["results"]}
        # Search, listing and the file index give what the store built row by row gives.
        for query in ("repeated inside the file", "unique finding retry", "base finding handler", "fileless"):
            got = [wctx.search(s, query, repo="svc", limit=30)["results"] for s in stores]
            assert [(r["id"], r["claim"]) for r in got[0]] == [(r["id"], r["claim"]) for r in got[1]], query
        by_file = [
            rows(s.db, "SELECT e.id FROM anchors a JOIN evidence e ON e.rid = a.evidence_rid "
                       "WHERE a.repo_id = 1 AND a.path = 'b.py' AND a.symbol = 'handler'")
            for s in stores
        ]  # fmt: skip
        assert by_file[0] == by_file[1] and by_file[0]
        # Importing the file again adds nothing.
        again = wctx.import_evidence(stores[0], [str(tmp_path / "big.jsonl")])
        assert again["evidence"] == 0 and again["sessions"] == 0
        now = state(stores[0])
        assert [e[0] for e in now["evidence"]] == [e[0] for e in after[0]["evidence"]]
        assert (now["anchors"], now["fts"], now["sessions"]) == (
            after[0]["anchors"],
            after[0]["fts"],
            after[0]["sessions"],
        )
    finally:
        for s in stores:
            s.close()


def test_a_bulk_import_into_an_empty_store_matches_importing_its_records_one_at_a_time(git_repo, tmp_path):
    # A store with no item yet is not asked about ids or claims at all: what the file repeats of
    # itself (ids, claims by other sessions, retractions) must still come out as one at a time.
    repo, stores, root = two_stores(git_repo, tmp_path)
    try:
        _, records, _ = build(tmp_path, root, repo.head)
        bulk = wctx.import_evidence(stores[0], [write(tmp_path / "big.jsonl", records)])
        assert bulk == one_at_a_time(stores[1], records, bulk)
        assert bulk["duplicates"] >= 20 and bulk["unchanged"] >= 20, bulk
        assert state(stores[0]) == state(stores[1])
    finally:
        for s in stores:
            s.close()


def test_a_bad_line_in_the_middle_of_a_large_import_is_named_and_nothing_is_stored(
    git_repo, tmp_path, run_cli, wctx_home
):
    repo = git_repo("svc", {"a.py": "def handler():\n    return 1\n"})
    assert run_cli(["repo", "add", repo.path]).code == 0
    with wctx.open_store(wctx_home) as s:
        root = s.one("SELECT root_commit FROM repos")["root_commit"]
    records = []
    for n in range(20):
        records.append(session(n))
        records.extend(
            evidence(n * 100 + k, SID % n, "finding %d.%d" % (n, k), root, repo.head) for k in range(49)
        )
    good = write(tmp_path / "a-good.jsonl", records)
    bad_cases = {
        # (line to damage, how) -> what the one-line error names
        "path": lambda r: r["anchors"][1].update(path="../../etc/passwd"),
        "kind": lambda r: r.update(kind="rumour"),
        "claim": lambda r: r.update(claim=""),
    }
    for field, damage in bad_cases.items():
        bad = [
            dict(r, anchors=[dict(a) for a in r["anchors"]]) if r["type"] == "evidence" else r
            for r in records
        ]
        damage(bad[610])
        path = write(tmp_path / "b-bad.jsonl", bad)
        res = run_cli(["import-evidence", good, path])
        assert res.code == 2, res
        assert len(res.err.strip().splitlines()) == 1
        assert "b-bad.jsonl:611:" in res.err and field in res.err, res.err
    lines = (tmp_path / "a-good.jsonl").read_text().splitlines()
    lines[700] = lines[700][:40]  # truncated mid-record
    (tmp_path / "b-bad.jsonl").write_text("\n".join(lines) + "\n")
    res = run_cli(["import-evidence", good, str(tmp_path / "b-bad.jsonl")])
    assert res.code == 2 and "b-bad.jsonl:701: not valid JSON" in res.err, res
    con = sqlite3.connect("file:%s?mode=ro" % (wctx_home + "/wctx.db"), uri=True)
    try:
        assert con.execute("SELECT count(*) FROM evidence").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM evidence_fts").fetchone()[0] == 0
    finally:
        con.close()
    # The good file alone imports whole.
    res = run_cli(["import-evidence", good, "--json"])
    assert res.code == 0 and res.json["evidence"] == 20 * 49 and res.json["sessions"] == 20


# A child process that imports a large file and SIGKILLs itself while writing its second chunk:
# the secondary indexes are set aside by then, and the transaction is open.
KILL_IN_IMPORT = r"""
import os, signal, sys
sys.path.insert(0, sys.argv[1])
import wctx
wctx._BULK_INDEX_MIN = 1
wctx._IMPORT_CHUNK = 100
flushes = [0]
real = wctx._ImportBatch.flush
def flush(self):
    if self.evidence:
        flushes[0] += 1
        if flushes[0] == 2:
            os.kill(os.getpid(), signal.SIGKILL)
    return real(self)
wctx._ImportBatch.flush = flush
store = wctx.open_store(sys.argv[2])
wctx.import_evidence(store, [sys.argv[3]])
"""


def test_a_large_import_killed_midway_leaves_the_store_as_it_was_and_the_next_one_finishes(
    git_repo, tmp_path, wctx_home, run_cli
):
    repo = git_repo("svc", {"a.py": "def handler():\n    return 1\n"})
    assert run_cli(["repo", "add", repo.path]).code == 0
    with wctx.open_store(wctx_home) as s:
        root = s.one("SELECT root_commit FROM repos")["root_commit"]
        base, _, _ = build(tmp_path, root, repo.head)
        wctx.import_evidence(s, [base])
        before, held = indexes(s.db), state(s)
    records = [session(1)] + [evidence(5000 + i, SID % 1, "finding %d of the big file" % i, root, repo.head)
                              for i in range(450)]  # fmt: skip
    big = write(tmp_path / "big.jsonl", records)
    proc = subprocess.run(
        [sys.executable, "-c", KILL_IN_IMPORT, os.path.dirname(HERE), wctx_home, big], capture_output=True
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    with wctx.open_store(wctx_home) as s:
        assert state(s) == held and indexes(s.db) == before
        assert s.one("PRAGMA integrity_check")[0] == "ok"
    res = run_cli(["import-evidence", big, "--json"])
    assert res.code == 0 and res.json["evidence"] == 450, res
    with wctx.open_store(wctx_home) as s:
        assert indexes(s.db) == before and s.one("PRAGMA integrity_check")[0] == "ok"
        for i in (0, 99, 100, 449):  # before, at and after the chunk the kill interrupted
            hits = wctx.search(s, "finding %d of the big file" % i, repo="svc", limit=10)["results"]
            assert EID % (5000 + i) in {r["id"] for r in hits}, i
    again = run_cli(["import-evidence", big, "--json"])
    assert again.code == 0 and again.json["evidence"] == 0 and again.json["unchanged"] == 450


def test_imported_claims_and_keys_are_stored_as_the_redaction_boundary_makes_them(git_repo, tmp_path):
    # Whatever shortcut the import takes past the boundary for text it already cleaned, the
    # stored claim and claim key are what stored_text makes of them: secrets of every kind,
    # control characters, escaped JSON, non-ASCII case folding, prose with no secret at all.
    import test_security_secrets as secrets

    repo = git_repo("svc", {"a.py": "def handler():\n    return 1\n"})
    texts = [t for _, t, _ in secrets.SECRET_KINDS]
    texts += ["plain prose about retries %d and the cache" % i for i in range(50)]
    texts += ["PASSWORD = hunter2 in config", "Stra\u00dfe pa\u00dfword=x", "pa\u017f\u017fword=hunter22",
              "tab\tand\x1b[31mred\x1b[0m text", '{"note": "\\u001b[2J cleared"}', "[1, 2, 3]",
              "ends with a lone \\u escape", "private\nkey rotation", "PRIVATE-KEY rotation", "!!!", "x" * 3000,
              # kept as they are while their claim keys are not: the key's words meet a rule
              "Bearer: abcdefghijklmnop1234", "DAPI0123456789abcdef0123456789abcdef",
              "AccountKey.abcdefghijklmnopqrstu", "the bearer/abcdefghijklmnopq token is stale"]  # fmt: skip
    with wctx.open_store(str(tmp_path / "s")) as s:
        wctx.register_repo(s, repo.path)
        root = s.one("SELECT root_commit FROM repos")["root_commit"]
        records = [session(0)] + [
            evidence(i, SID % 0, text, root, repo.head, detail=text) for i, text in enumerate(texts)
        ]
        counts = wctx.import_evidence(s, [write(tmp_path / "x.jsonl", records)])
        assert counts["evidence"] + counts["duplicates"] == len(texts)
        stored = {r["id"]: r for r in s.all("SELECT id, claim, claim_key, detail FROM evidence")}
        for i, text in enumerate(texts):
            row = stored.get(EID % i)
            if row is None:
                continue  # a duplicate of an earlier claim
            claim = wctx.stored_text(text.strip())
            assert row["claim"] == claim, text
            assert row["claim_key"] == wctx.claim_key(claim), text
            assert row["detail"] == wctx.stored_text(text.strip()), text
        assert not wctx.CLEAN_TEXTS  # nothing stays behind in memory
        # The search row holds the index words of the texts as stored, however the import split them.
        for row in s.all("SELECT e.claim, e.detail, f.claim AS words, f.detail AS detail_words FROM evidence e "
                         "JOIN evidence_fts f ON f.rowid = e.rid"):  # fmt: skip
            assert (row["words"], row["detail_words"]) == (
                wctx.index_text(row["claim"]),
                wctx.index_text(row["detail"]),
            )


def test_a_large_import_enlarges_the_page_cache_only_while_it_writes(git_repo, tmp_path, monkeypatch):
    # The connection (a long-lived MCP server's, say) keeps its own cache size after an import,
    # whether the import finished or was refused; a sync's batches share one enlarged cache.
    monkeypatch.setattr(wctx, "_BULK_CACHE_MIN_RECORDS", 10)
    repo = git_repo("svc", {"a.py": "def handler():\n    return 1\n"})
    with wctx.open_store(str(tmp_path / "s")) as s:
        wctx.register_repo(s, repo.path)
        root = s.one("SELECT root_commit FROM repos")["root_commit"]
        s.db.execute("PRAGMA cache_size = -3000")
        sizes = []
        s.db.set_trace_callback(
            lambda sql: sizes.append(sql) if sql.startswith("PRAGMA cache_size =") else None
        )
        records = [session(0)] + [evidence(i, SID % 0, "finding %d" % i, root, repo.head) for i in range(30)]
        counts = wctx.import_evidence(s, [write(tmp_path / "x.jsonl", records)])
        assert counts["evidence"] == 30
        assert sizes == ["PRAGMA cache_size = -%d" % wctx._bulk_cache_kib(31), "PRAGMA cache_size = -3000"]
        assert s.one("PRAGMA cache_size")[0] == -3000
        orphan = records + [evidence(99, SID % 9, "of a session not in the file", root, repo.head)]
        with pytest.raises(wctx.UsageError, match="not in the import"):  # refused while it writes
            wctx.import_evidence(s, [write(tmp_path / "bad.jsonl", orphan)])
        assert sizes[2:] == sizes[:2] and s.one("PRAGMA cache_size")[0] == -3000
        records = [session(1)] + [
            evidence(100 + i, SID % 1, "more %d" % i, root, repo.head) for i in range(30)
        ]
        with pytest.raises(sqlite3.IntegrityError):
            with s.atomic():
                wctx.import_evidence(s, [write(tmp_path / "y.jsonl", records)])
                s.db.execute("INSERT INTO repos(id, name, path, added_at) VALUES (1, 'dup', '/x', 'now')")
        s.db.set_trace_callback(None)
        assert s.one("PRAGMA cache_size")[0] == -3000
        assert s.one("SELECT count(*) FROM evidence WHERE claim LIKE 'more %'")[0] == 0


# -- A large import holds a chunk of its items at a time (#30) ---------------------------------


def streamed(monkeypatch):
    """Make this process import as a large import does: the items read again from the files in a
    second pass, in chunks of 50, the secondary indexes set aside."""
    monkeypatch.setattr(wctx, "_STREAM_AFTER", 10)
    monkeypatch.setattr(wctx, "_IMPORT_CHUNK", 50)
    monkeypatch.setattr(wctx, "_BULK_INDEX_MIN", 1)


def stored_counts(home):
    con = sqlite3.connect("file:%s?mode=ro" % os.path.join(home, "wctx.db"), uri=True)
    try:
        return tuple(con.execute("SELECT count(*) FROM %s" % t).fetchone()[0]
                     for t in ("evidence", "sessions", "anchors", "evidence_fts"))  # fmt: skip
    finally:
        con.close()


def test_a_streamed_import_refused_at_its_last_line_names_it_and_stores_nothing(
    git_repo, tmp_path, run_cli, wctx_home, monkeypatch
):
    # The last line is read when every chunk before it has been written in the import's
    # transaction: refused there (by the validator in the first pass, or as an item of a session
    # the import does not hold in the second), the import names that line and leaves nothing.
    streamed(monkeypatch)
    repo = git_repo("svc", {"a.py": "def handler():\n    return 1\n"})
    assert run_cli(["repo", "add", repo.path]).code == 0
    with wctx.open_store(wctx_home) as s:
        root = s.one("SELECT root_commit FROM repos")["root_commit"]
        before = indexes(s.db)
    records = [session(n) for n in range(8)]
    records += [evidence(i, SID % (i % 8), "finding %d of many" % i, root, repo.head) for i in range(400)]
    last = len(records) + 1
    for tail, says in (
        (evidence(999, SID % 1, "", root, repo.head), "claim"),
        (
            evidence(999, SID % 42, "an item of a session not in the import", root, repo.head),
            "not in the import",
        ),
        ('{"type": "evidence", "id": "ev-', "not valid JSON"),
    ):
        path = tmp_path / "late.jsonl"
        text = "".join(json.dumps(r) + "\n" for r in records)
        path.write_text(text + (tail if isinstance(tail, str) else json.dumps(tail)) + "\n", encoding="utf-8")
        res = run_cli(["import-evidence", str(path)])
        assert res.code == 2 and len(res.err.strip().splitlines()) == 1, res
        assert "late.jsonl:%d:" % last in res.err and says in res.err, res.err
        assert stored_counts(wctx_home) == (0, 0, 0, 0)
        with wctx.open_store(wctx_home) as s:
            assert indexes(s.db) == before and s.one("PRAGMA integrity_check")[0] == "ok"


def test_a_streamed_import_gives_the_store_one_reading_gives(
    git_repo, tmp_path, run_cli, wctx_home, monkeypatch
):
    # Sessions after their items, an id repeated chunks apart, a claim repeated by another
    # session, a tombstone at the very end for an item near the start: the two passes see the
    # whole import as one reading did.
    repo = git_repo("svc", {"a.py": "def handler():\n    return 1\n"})
    assert run_cli(["repo", "add", repo.path]).code == 0
    with wctx.open_store(wctx_home) as s:
        root = s.one("SELECT root_commit FROM repos")["root_commit"]
    items = [
        evidence(i, SID % (i % 5), "finding %d of the streamed file" % i, root, repo.head) for i in range(300)
    ]
    items.append(evidence(7, SID % 2, "ignored: the id is already imported", root, repo.head))
    items.append(evidence(900, SID % 3, "finding 12 of the streamed file", root, repo.head))
    tombstone = {"type": "tombstone", "id": EID % 3, "kind": "evidence", "session": SID % 3,
                 "reason": "wrong", "forgotten_at": LATER}  # fmt: skip
    path = write(tmp_path / "all.jsonl", items + [session(n) for n in range(5)] + [tombstone])
    expect = {"sessions": 5, "evidence": 299, "unchanged": 1, "duplicates": 1, "forgotten": 1}
    streamed(monkeypatch)
    res = run_cli(["import-evidence", path, "--json"])
    assert res.code == 0 and {k: res.json[k] for k in expect} == expect, res
    with wctx.open_store(wctx_home) as s:
        for i in (0, 49, 50, 299):  # in the first chunk, at a chunk's edge, in the last
            hits = wctx.search(s, "finding %d of the streamed file" % i, repo="svc", limit=5)["results"]
            assert EID % i == hits[0]["id"], i
        assert s.one("SELECT 1 FROM evidence WHERE id = ?", (EID % 3,)) is None
        assert len(wctx.get_evidence(s, EID % 12)["seen_by"]) == 1
        streamed_state = state(s)
    # The same file read once, as a small import reads it: the same store.
    monkeypatch.undo()
    with wctx.open_store(str(tmp_path / "once")) as s:
        wctx.register_repo(s, repo.path)
        counts = wctx.import_evidence(s, [path])
        assert {k: counts[k] for k in expect} == expect
        assert state(s) == streamed_state


def test_a_streamed_import_names_its_first_invalid_line_and_reads_every_record_as_json_does(
    git_repo, tmp_path, run_cli, wctx_home, monkeypatch
):
    # The first pass checks only what is not an item: an invalid item before an invalid session
    # is still the line named. And a line that looks like an item at a glance but is, as JSON
    # reads it, a session (its "type" key given again, spelled with an escape) is a session.
    streamed(monkeypatch)
    repo = git_repo("svc", {"a.py": "def handler():\n    return 1\n"})
    assert run_cli(["repo", "add", repo.path]).code == 0
    with wctx.open_store(wctx_home) as s:
        root = s.one("SELECT root_commit FROM repos")["root_commit"]
    items = [evidence(i, SID % (i % 4), "finding %d" % i, root, repo.head) for i in range(200)]
    lines = [json.dumps(r) for r in items + [session(n) for n in range(4)]]
    bad = list(lines)
    bad[30] = json.dumps(dict(items[30], kind="rumour"))
    bad[201] = json.dumps(dict(session(1), started_at="yesterday"))
    (tmp_path / "bad.jsonl").write_text("\n".join(bad) + "\n", encoding="utf-8")
    res = run_cli(["import-evidence", str(tmp_path / "bad.jsonl")])
    assert res.code == 2 and "bad.jsonl:31:" in res.err and "kind" in res.err, res.err
    assert stored_counts(wctx_home) == (0, 0, 0, 0)
    disguised = lines[-1].replace('"type": "session"', '"type": "evidence", "\\u0074ype": "session"')
    assert json.loads(disguised)["type"] == "session" and '"type": "evidence"' in disguised
    (tmp_path / "ok.jsonl").write_text("\n".join(lines[:-1] + [disguised]) + "\n", encoding="utf-8")
    res = run_cli(["import-evidence", str(tmp_path / "ok.jsonl"), "--json"])
    assert res.code == 0 and (res.json["sessions"], res.json["evidence"]) == (4, 200), res


# The import of a file of 40,000 lines in a process whose address space is limited to 256 MB:
# holding every record of it (5 KB each) would take 400 MB.
LIMITED_IMPORT = r"""
import resource, runpy, sys
resource.setrlimit(resource.RLIMIT_AS, (256 << 20, 256 << 20))
sys.argv = [sys.argv[1], "--home", sys.argv[2], "import-evidence", sys.argv[3], "--json"]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="RLIMIT_AS bounds the address space on Linux"
)
def test_a_large_import_holds_a_chunk_of_its_items_at_a_time(tmp_path):
    claim = " ".join("word%d" % (k % 50) for k in range(800))[:4000]  # long and cheap to check
    line = json.dumps({"type": "evidence", "id": EID % 1, "session": SID % 1, "repo": "svc",
                       "kind": "finding", "claim": claim}) + "\n"  # fmt: skip
    path = tmp_path / "large.jsonl"
    with open(str(path), "w", encoding="utf-8") as fh:
        fh.write(json.dumps(session(1)) + "\n")
        for _ in range(40):
            fh.write(line * 1000)
    proc = subprocess.run(
        [sys.executable, "-c", LIMITED_IMPORT, os.path.join(os.path.dirname(HERE), "wctx.py"),
         str(tmp_path / "home"), str(path)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    counts = json.loads(proc.stdout)
    assert (counts["sessions"], counts["evidence"], counts["unchanged"]) == (1, 1, 39999)
