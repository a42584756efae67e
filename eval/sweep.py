#!/usr/bin/env python3
"""Sensitivity of topology ranking to its constants, on the eval corpus and the history corpus.

    python3 eval/sweep.py [--corpus DIR] [--history REPOS_DIR [--history-corpus DIR]] [--json]

Builds the corpus once (as ``wctx eval retrieval`` does), then reruns every query with the
scoped topology ranking while the ranking constants in wctx are scaled one at a time. With
``--history`` it does the same on the real-history corpus (eval/history.py; REPOS_DIR holds the
clones it names) and prints both side by side, the history corpus also on its paraphrase subset.
It changes nothing on disk and nothing in wctx.py: it shows how much each constant matters, so
that a change to the defaults can be argued from data rather than from a single run. A constant
whose best value on one corpus is not at least as good on the other is tuned to that corpus.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import wctx  # noqa: E402

# Dictionaries are scaled or replaced whole; scalars set. Every ranking constant is here.
DICTS = ("RANK_TOPOLOGY_BONUS", "RANK_FRESHNESS_PENALTY", "RANK_NAMED_BONUS", "RANK_KIND_BONUS")
SCALARS = (
    "BM25_WEIGHT_CLAIM", "BM25_WEIGHT_SYMBOLS", "BM25_WEIGHT_PATHS", "BM25_WEIGHT_DETAIL", "BM25_WEIGHT_CODE",
    "BM25_WEIGHT_SYMPTOM", "RANK_COVERAGE_POWER", "RANK_SUMMARY_SHARE", "RANK_CODE_SHARE", "RANK_WEAK_SHARE", "RANK_CONFIDENCE_WEIGHT",
    "RANK_RECENCY_BONUS",
)  # fmt: skip
BASE = {name: dict(getattr(wctx, name)) for name in DICTS}
BASE.update({name: getattr(wctx, name) for name in SCALARS})


def _scaled(name, factor):
    return {k: v * factor for k, v in BASE[name].items()}


def configurations():
    """(name, {constant: value}) — the shipped values first, then one constant moved at a time."""
    yield "as shipped", {}
    for scale in (0.0, 0.5, 2.0):
        yield "topology bonus x%g" % scale, {"RANK_TOPOLOGY_BONUS": _scaled("RANK_TOPOLOGY_BONUS", scale)}
    for stale in (0.0, 0.45):
        fresh = dict(BASE["RANK_FRESHNESS_PENALTY"], stale=-stale, possibly_stale=-stale / 3)
        yield "stale penalty %.2f" % stale, {"RANK_FRESHNESS_PENALTY": fresh}
    for scale in (0.0, 2.0):
        yield "named bonus x%g" % scale, {"RANK_NAMED_BONUS": _scaled("RANK_NAMED_BONUS", scale)}
        yield "kind bonus x%g" % scale, {"RANK_KIND_BONUS": _scaled("RANK_KIND_BONUS", scale)}
    for name in SCALARS:
        base = BASE[name]
        for factor in (
            (0.5, 2.0) if name == "BM25_WEIGHT_CLAIM" else (0.0, 0.5, 2.0)
        ):  # the claim scales the rest
            yield (
                "%s x%g" % (name.lower().replace("rank_", "").replace("bm25_weight_", "bm25 "), factor),
                {name: base * factor},
            )


def _set(values):
    for name in DICTS:
        table = getattr(wctx, name)
        table.clear()
        table.update(values.get(name, BASE[name]))
    for name in SCALARS:
        setattr(wctx, name, values.get(name, BASE[name]))


def _topology(report, queries, test=lambda q: True):
    rows = [q["runs"]["topology"] for q in report["queries"] if test(queries[q["id"]])]
    return wctx.summarize_scores(rows)


def sweep(store, corpus, ids, subsets):
    """[{config, subset: metrics}] for every configuration on one built corpus."""
    queries = {q["id"]: q for q in corpus["queries"]}
    rows = []
    try:
        for name, values in configurations():
            _set(values)
            report = wctx._run_eval_queries(store, corpus, ids, wctx.EVAL_LIMIT, lambda text: None)
            rows.append(dict({"config": name}, **{s: _topology(report, queries, t) for s, t in subsets}))
    finally:
        _set({})
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", help="corpus directory (default: eval/corpus)")
    parser.add_argument("--history", metavar="REPOS_DIR", help="also sweep the history corpus (clones here)")
    parser.add_argument("--history-corpus", help="history corpus directory (default: eval/history)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = {}
    corpus = wctx.load_eval_corpus(args.corpus)
    root = tempfile.mkdtemp(prefix="wctx-sweep-")
    try:
        store, ids = wctx.build_eval_world(corpus, root)
        wctx.verify(store, ids=sorted(ids))
        try:
            results["eval"] = sweep(store, corpus, ids, [("all", lambda q: True)])
        finally:
            store.close()
        if args.history:
            import history

            hcorpus = history.load(args.history_corpus or history.OUT)
            store, ids = history.build_world(wctx, hcorpus, args.history, os.path.join(root, "history"))
            checked, wctx.freshness_of = wctx.freshness_of, history.unchecked
            try:
                results["history"] = sweep(
                    store, hcorpus, ids, [("all", lambda q: True), ("paraphrase", lambda q: q["shared"] <= 1)]
                )
            finally:
                wctx.freshness_of = checked
                store.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if args.json:
        print(json.dumps(results, indent=1))
        return 0
    header = "%-30s %7s %7s" % ("topology MRR (hit@5)", "eval", "")
    columns = [("eval", "all")]
    if "history" in results:
        header += " %15s %15s" % ("history", "paraphrase")
        columns += [("history", "all"), ("history", "paraphrase")]
    print(header)
    for i, row in enumerate(results["eval"]):
        cells = []
        for corpus_name, subset in columns:
            o = results[corpus_name][i][subset]
            cells.append("%.3f (%.2f)" % (o["mrr"], o["hit@5"]))
        print("%-30s %s" % (row["config"], "   ".join(cells)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
