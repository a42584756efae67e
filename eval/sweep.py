#!/usr/bin/env python3
"""Sensitivity of topology ranking to its constants, on the eval corpus.

    python3 eval/sweep.py [--corpus DIR] [--json]

Builds the corpus once (as ``wctx eval retrieval`` does), then reruns every query with the
scoped topology ranking while the rerank constants in wctx are scaled one at a time. It changes
nothing on disk and nothing in wctx.py: it shows how much each constant matters on this corpus,
so that a change to the defaults can be argued from data rather than from a single run. A corpus
written by the same people who pick the constants is a weak judge; read it as a sensitivity
analysis, not as a tuning target.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import wctx  # noqa: E402

BASE_TOPOLOGY = dict(wctx.RANK_TOPOLOGY_BONUS)
BASE_FRESHNESS = dict(wctx.RANK_FRESHNESS_PENALTY)
BASE_SCALARS = {
    "RANK_COVERAGE_POWER": wctx.RANK_COVERAGE_POWER,
    "RANK_SUMMARY_SHARE": wctx.RANK_SUMMARY_SHARE,
}


def configurations():
    """(name, topology bonus, freshness penalty, {scalar constant: value})."""
    yield "as shipped", BASE_TOPOLOGY, BASE_FRESHNESS, {}
    for scale in (0.0, 0.5, 1.5, 2.0):
        topo = {k: v * scale for k, v in BASE_TOPOLOGY.items()}
        yield "topology bonus x%g" % scale, topo, BASE_FRESHNESS, {}
    for stale in (0.0, 0.15, 0.45):
        fresh = dict(BASE_FRESHNESS, stale=-stale, possibly_stale=-stale / 3)
        yield "stale penalty %.2f" % stale, BASE_TOPOLOGY, fresh, {}
    for power in (0.0, 0.5, 2.0):
        yield "coverage power %g" % power, BASE_TOPOLOGY, BASE_FRESHNESS, {"RANK_COVERAGE_POWER": power}
    for share in (0.0, 1.0):
        yield "summary share %g" % share, BASE_TOPOLOGY, BASE_FRESHNESS, {"RANK_SUMMARY_SHARE": share}


def _set(topo, fresh, scalars):
    wctx.RANK_TOPOLOGY_BONUS.clear()
    wctx.RANK_TOPOLOGY_BONUS.update(topo)
    wctx.RANK_FRESHNESS_PENALTY.clear()
    wctx.RANK_FRESHNESS_PENALTY.update(fresh)
    for name, value in dict(BASE_SCALARS, **scalars).items():
        setattr(wctx, name, value)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", help="corpus directory (default: eval/corpus)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    corpus = wctx.load_eval_corpus(args.corpus)
    root = tempfile.mkdtemp(prefix="wctx-sweep-")
    rows = []
    try:
        store, ids = wctx.build_eval_world(corpus, root)
        wctx.verify(store, ids=sorted(ids))
        try:
            for name, topo, fresh, scalars in configurations():
                _set(topo, fresh, scalars)
                report = wctx._run_eval_queries(store, corpus, ids, wctx.EVAL_LIMIT, lambda text: None)
                topology = next(v for v in report["variants"] if v["name"] == "topology")
                rows.append(
                    {
                        "config": name,
                        "overall": topology["overall"],
                        "by_category": {c: s["mrr"] for c, s in topology["by_category"].items()},
                    }
                )
        finally:
            _set(BASE_TOPOLOGY, BASE_FRESHNESS, {})
            store.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(
        "%-22s %6s %6s %6s %8s %9s %7s"
        % ("topology, scoped", "hit@1", "hit@5", "MRR", "nDCG@10", "recall@10", "attrib")
    )
    for r in rows:
        o = r["overall"]
        print(
            "%-22s %6.3f %6.3f %6.3f %8.3f %9.3f %7.3f"
            % (r["config"], o["hit@1"], o["hit@5"], o["mrr"], o["ndcg@10"], o["recall@10"], o["attribution"])
        )
    cats = sorted(rows[0]["by_category"])
    print("\nMRR by category")
    print("%-22s " % "" + " ".join("%-8s" % c[:8] for c in cats))
    for r in rows:
        print("%-22s " % r["config"] + " ".join("%-8.2f" % r["by_category"][c] for c in cats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
