"""`wctx eval retrieval`: the metrics are computed exactly (checked by hand on a tiny corpus),
the report has every metric for both rankings on the real corpus, and the corpus on disk is what
its generator writes. No test asserts that a ranking is good: only that it is measured right."""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile

import pytest
from conftest import ROOT

import wctx

TINY = os.path.join(ROOT, "tests", "fixtures", "eval_tiny")
REAL = os.path.join(ROOT, "eval", "corpus")
METRICS = ("hit@1", "hit@5", "mrr", "ndcg@10", "recall@10", "attribution", "pollution", "latency_p50_ms")


@pytest.fixture(autouse=True)
def own_tempdir(tmp_path, monkeypatch):
    """The eval builds its repos under tempfile's directory; keep them inside this test's tmp_path."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


# ---------------------------------------------------------------------------------- pure metrics


def test_hit_at_counts_any_relevant_result_within_k():
    assert wctx.hit_at([0, 0, 2], 1) == 0.0
    assert wctx.hit_at([0, 0, 2], 3) == 1.0
    assert wctx.hit_at([0, 0, 2], 2) == 0.0
    assert wctx.hit_at([], 5) == 0.0


def test_reciprocal_rank_is_one_over_first_relevant_rank():
    assert wctx.reciprocal_rank([3]) == 1.0
    assert wctx.reciprocal_rank([0, 0, 0, 1]) == 0.25
    assert wctx.reciprocal_rank([0, 0]) == 0.0


def test_ndcg_by_hand():
    # results graded [0, 3, 1]; judged grades {3, 2, 1}
    # DCG  = 0/log2(2) + 7/log2(3) + 1/log2(4) = 4.41650 + 0.5
    # IDCG = 7/log2(2) + 3/log2(3) + 1/log2(4) = 7 + 1.89279 + 0.5
    dcg = 7 / math.log2(3) + 1 / 2
    idcg = 7 + 3 / math.log2(3) + 1 / 2
    assert wctx.ndcg_at([0, 3, 1], [3, 2, 1], 10) == pytest.approx(dcg / idcg)
    assert wctx.ndcg_at([0, 3, 1], [3, 2, 1], 10) == pytest.approx(4.91650 / 9.39279, abs=1e-5)
    # cut at k: only the first result counts, and the ideal is cut too
    assert wctx.ndcg_at([0, 3, 1], [3, 2, 1], 1) == 0.0
    assert wctx.ndcg_at([3, 2, 1], [1, 2, 3], 3) == pytest.approx(1.0)
    assert wctx.ndcg_at([1], [], 10) == 0.0


def test_recall_attribution_pollution_median():
    assert wctx.recall_at([3, 0, 1], [3, 2, 1], 10) == pytest.approx(2 / 3)
    assert wctx.recall_at([3, 0, 1], [3, 2, 1], 1) == pytest.approx(1 / 3)
    assert wctx.attribution(["sdk", "ui"], "sdk") == 1.0
    assert wctx.attribution(["ui", "sdk"], "sdk") == 0.0
    assert wctx.attribution([], "sdk") == 0.0
    assert wctx.pollution(["a", "x", "b", "y"], {"a", "b"}) == 2.0
    assert wctx.median([5.0, 1.0, 3.0]) == 3.0
    assert wctx.median([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert wctx.median([]) == 0.0


def test_score_query_and_summary():
    q = {"judgements": {"a": 3, "b": 1}, "needs": "lib"}
    row = wctx.score_query(q, ["x", "a", "b"], ["far", "lib", "lib"], connected={"lib", "app"})
    assert row["hit@1"] == 0.0 and row["hit@5"] == 1.0
    assert row["mrr"] == 0.5
    # DCG = 7/log2(3) + 1/log2(4); IDCG = 7 + 1/log2(3)
    assert row["ndcg@10"] == pytest.approx((7 / math.log2(3) + 0.5) / (7 + 1 / math.log2(3)))
    assert row["recall@10"] == 1.0
    assert row["attribution"] == 0.0
    assert row["pollution"] == 1.0
    other = wctx.score_query(q, ["a"], ["lib"], connected={"lib"})
    summary = wctx.summarize_scores([dict(row, ms=4.0), dict(other, ms=2.0)])
    assert summary["queries"] == 2
    assert summary["mrr"] == 0.75
    assert summary["recall@10"] == 0.75
    assert summary["pollution"] == 0.5
    assert summary["latency_p50_ms"] == 3.0


def test_connected_repos_follow_workspaces_and_relations_both_ways():
    corpus = {
        "repos": [
            {"name": "a", "workspaces": ["w1"]},
            {"name": "b", "workspaces": ["w1", "w2"]},
            {"name": "c", "workspaces": ["w2"]},
            {"name": "d", "workspaces": ["w3"]},
            {"name": "e", "workspaces": ["w4"]},
            {"name": "z", "workspaces": ["w9"]},
        ],
        "relations": [{"from": "e", "kind": "uses", "to": "c"}],
    }
    assert wctx.connected_repos(corpus, "a") == {"a", "b", "c", "e"}
    assert wctx.connected_repos(corpus, "d") == {"d"}


# ---------------------------------------------------------------------------------- tiny corpus, end to end

# What the tiny corpus is built to give (tests/fixtures/eval_tiny/queries.jsonl):
#   q1 "zebra" from app: only t1 matches -> grades [3]; judged {t1: 3, t2: 2}
#        nDCG = 7 / (7 + 3/log2(3)); recall 1/2; everything else 1; no pollution
#   q2 "walrus" from app: scoped, only t3 (grade 3) -> all metrics 1
#        with --all, t4 from the unrelated workspace also matches ("walrus walrus" beats it on
#        text): fts --all ranks [t4, t3] -> hit@1 0, MRR 1/2, nDCG 7/log2(3) / 7, attribution 0;
#        pollution 1 for both --all variants
#   q3 "narwhal totals" from app: t5 is superseded by t6, so only t6 comes back -> all 1
#   q4 "quokka" from lib: only t2 -> all 1
Q1_NDCG = 7 / (7 + 3 / math.log2(3))
Q2_FTS_ALL_NDCG = (7 / math.log2(3)) / 7


def _variant(report, name):
    return next(v for v in report["variants"] if v["name"] == name)


def test_tiny_corpus_metrics_are_exactly_the_hand_computed_ones(run_cli):
    res = run_cli(["eval", "retrieval", "--corpus", TINY, "--json"])
    assert res.code == 0, res
    report = res.json
    assert report["corpus"]["queries"] == 4 and report["corpus"]["evidence"] == 6
    assert [v["name"] for v in report["variants"]] == ["fts", "topology", "fts --all", "topology --all"]

    for name in ("fts", "topology"):
        o = _variant(report, name)["overall"]
        assert o["hit@1"] == 1.0 and o["hit@5"] == 1.0 and o["mrr"] == 1.0
        assert o["ndcg@10"] == pytest.approx((Q1_NDCG + 3) / 4)
        assert o["recall@10"] == pytest.approx((0.5 + 3) / 4)
        assert o["attribution"] == 1.0
        assert o["pollution"] == 0.0
        # per category: "symbolish" holds q1 and q4, "decoy" holds q2 and q3
        by = _variant(report, name)["by_category"]
        assert by["symbolish"]["ndcg@10"] == pytest.approx((Q1_NDCG + 1) / 2)
        assert by["symbolish"]["recall@10"] == pytest.approx(0.75)
        assert by["decoy"]["ndcg@10"] == 1.0

    fts_all = _variant(report, "fts --all")["overall"]
    assert fts_all["hit@1"] == pytest.approx(0.75)
    assert fts_all["hit@5"] == 1.0
    assert fts_all["mrr"] == pytest.approx((1 + 0.5 + 1 + 1) / 4)
    assert fts_all["ndcg@10"] == pytest.approx((Q1_NDCG + Q2_FTS_ALL_NDCG + 2) / 4)
    assert fts_all["attribution"] == pytest.approx(0.75)
    assert fts_all["pollution"] == pytest.approx(0.25)
    assert _variant(report, "topology --all")["overall"]["pollution"] == pytest.approx(0.25)

    q2 = next(q for q in report["queries"] if q["id"] == "q2")
    assert q2["runs"]["fts"]["top"] == ["t3"]
    assert q2["runs"]["fts --all"]["top"] == ["t4", "t3"]
    q3 = next(q for q in report["queries"] if q["id"] == "q3")
    assert q3["runs"]["topology"]["top"] == ["t6"], "the superseded t5 must not come back"

    # t1 cites lib/cache.py#evict, which the corpus history changes after capture
    assert report["freshness"]["expected_vs_verdict"]["stale->stale"] == 1
    assert report["freshness"]["agreement"] == 1.0


def test_human_report_is_a_table(run_cli):
    res = run_cli(["eval", "retrieval", "--corpus", TINY])
    assert res.code == 0, res
    lines = res.out.splitlines()
    header = next(line for line in lines if line.startswith("variant"))
    for column in ("hit@1", "hit@5", "MRR", "nDCG@10", "recall@10", "attrib", "pollution", "p50 ms"):
        assert column in header
    for name in ("fts", "topology", "fts --all", "topology --all"):
        assert any(line.startswith(name + " ") for line in lines)
    assert any(line.startswith("by category") for line in lines)
    assert res.err == "", "progress goes to stderr only on a terminal"


def test_bad_corpus_is_a_usage_error(run_cli, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(TINY, str(bad))
    with open(str(bad / "queries.jsonl"), "a", encoding="utf-8") as fh:
        fh.write(
            json.dumps(
                {
                    "id": "q9",
                    "from": "app",
                    "text": "x",
                    "category": "c",
                    "needs": "app",
                    "judgements": {"t1": 7},
                }
            )
            + "\n"
        )
    res = run_cli(["eval", "retrieval", "--corpus", str(bad)])
    assert res.code == 2
    assert "q9" in res.err and "1..3" in res.err
    res = run_cli(["eval", "retrieval", "--corpus", str(tmp_path / "missing")])
    assert res.code == 2 and "no evaluation corpus" in res.err


# ---------------------------------------------------------------------------------- the real corpus


def test_real_corpus_report_has_every_metric_for_both_rankings(run_cli):
    res = run_cli(["eval", "retrieval", "--json"])
    assert res.code == 0, res
    report = res.json
    c = report["corpus"]
    assert c["repos"] >= 8 and c["workspaces"] >= 3 and c["evidence"] >= 500 and c["queries"] >= 60
    names = [v["name"] for v in report["variants"]]
    assert names == ["fts", "topology", "fts --all", "topology --all"]
    for v in report["variants"]:
        for metric in METRICS:
            value = v["overall"][metric]
            assert isinstance(value, float) and value >= 0.0, (v["name"], metric)
            if metric not in ("pollution", "latency_p50_ms"):
                assert value <= 1.0
        assert set(v["by_category"]) == set(c["categories"])
        for cat, n in c["categories"].items():
            assert v["by_category"][cat]["queries"] == n
            for metric in METRICS[:-1]:
                assert metric in v["by_category"][cat]
    for q in report["queries"]:
        assert set(q["runs"]) == set(names)
    # scoped search never reaches the unrelated workspace, whichever the ranking
    assert _variant(report, "fts")["overall"]["pollution"] == 0.0
    assert _variant(report, "topology")["overall"]["pollution"] == 0.0
    # the built corpus really has stale items, and wctx's verify agrees they are stale
    assert report["freshness"]["expected_vs_verdict"].get("stale->stale", 0) > 0


def test_committed_corpus_is_what_the_generator_writes():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "build_corpus", os.path.join(ROOT, "eval", "build_corpus.py")
    )
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    corpus, evidence, queries = gen.build()
    with open(os.path.join(REAL, "corpus.json"), encoding="utf-8") as fh:
        assert json.load(fh) == json.loads(json.dumps(corpus))
    with open(os.path.join(REAL, "evidence.jsonl"), encoding="utf-8") as fh:
        assert [json.loads(line) for line in fh] == json.loads(json.dumps(evidence))
    with open(os.path.join(REAL, "queries.jsonl"), encoding="utf-8") as fh:
        assert [json.loads(line) for line in fh] == json.loads(json.dumps(queries))


def test_progress_goes_to_stderr_only_on_a_terminal(run_cli, monkeypatch):
    monkeypatch.setattr(wctx, "is_tty", lambda stream: True)
    res = run_cli(["eval", "retrieval", "--corpus", TINY, "--json"])
    assert res.code == 0, res
    assert "query 4/4" in res.err
    assert res.json["corpus"]["queries"] == 4, "stdout stays pure JSON"
