#!/usr/bin/env python3
"""The default ranking's constants moved one at a time, on the judged families' cached worlds.

    python3 bench/rank_sweep.py [--families pallets,prometheus,jest] [--set NAME=VALUE ...]
        [--only PREFIX] [--scales 0,0.5,2] [--cache /work/eval-cache] [--symptoms FILE] [--json]

Opens each family's cached world (eval/families.py builds it; this never builds one) once, scores
plain BM25 (``fts``) once, then the default ranking for every configuration: the shipped values,
then each RANK_* weight scaled (--scales) with the others as shipped. ``--set`` overrides a
constant for every configuration (a JSON value), to sweep around a changed default; ``--only``
keeps the configurations whose name starts with PREFIX. Prints pooled MRR, hit@1, hit@10 and the
paraphrase and cross-repository MRR of each configuration beside BM25's. Tune on the TUNE half only
(eval/families.py says which families those are); this changes nothing on disk but a scratch copy.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "eval"))

import families  # noqa: E402
import history  # noqa: E402

import wctx  # noqa: E402

# Not swept: a shape, not a weight (scaling it to 0 divides by it); the scale every score shares;
# freshness, which the judged worlds leave unchecked (as eval/families.py scores them); a cache size.
SKIP = ("RANK_RECENCY_HALF_LIFE_DAYS", "RANK_WEIGHT_TEXT", "RANK_FRESHNESS_PENALTY", "RANK_ROWS_KEPT")


def rank_constants():
    """{name: shipped value} of every RANK_* weight wctx has."""
    return {
        name: getattr(wctx, name)
        for name in sorted(dir(wctx))
        if name.startswith("RANK_")
        and name not in SKIP
        and isinstance(getattr(wctx, name), (int, float, dict))
    }


def scaled(value, factor):
    if isinstance(value, dict):
        return {k: v * factor for k, v in value.items()}
    return value * factor


def configurations(base, only, factors):
    """(name, {constant: value}): as shipped, then each constant scaled with the rest as shipped."""
    out = [("as shipped", {})]
    for name, value in base.items():
        for factor in factors:
            out.append(("%s x%g" % (name, factor), {name: scaled(value, factor)}))
    return [(n, c) for n, c in out if not only or n.startswith(only) or n == "as shipped"]


def open_worlds(names, corpus_dir, cache, scratch, symptoms=None):
    """[(corpus, store, ids)] of each family's cached world (the one captured with ``symptoms``,
    a jsonl of symptom lines, when given), on a scratch copy."""
    worlds = []
    for family in names:
        corpus = families.load(os.path.join(corpus_dir, family))
        world = families.world_dir(cache, family, symptoms, corpus)
        if not os.path.exists(os.path.join(world, "ids.json")):
            raise SystemExit("no cached world at %s (eval/families.py run builds it)" % world)
        with open(os.path.join(world, "ids.json"), encoding="utf-8") as fh:
            ids = json.load(fh)["ids"]
        home = os.path.join(scratch, family)
        shutil.copytree(os.path.join(world, "home"), home)
        worlds.append((corpus, wctx.open_store(home=home), ids))
    return worlds


def scores(worlds, rank):
    """[(query, metrics)] of every query of ``worlds`` ranked by ``rank``."""
    rows = []
    for corpus, store, ids in worlds:
        for q in corpus["queries"]:
            out = wctx.search(store, q["text"], repo=q["from"], limit=families.LIMIT, rank=rank)
            rows.append((q, families.ranked(q, [ids.get(r["id"], r["id"]) for r in out["results"]])))
    return rows


def pooled(rows):
    """{metric: mean} over every query, and the paraphrase and cross-repository MRR."""
    out = families.mean([m for _, m in rows])
    for subset, test in families.SUBSETS[1:]:
        out[subset] = families.mean([m for q, m in rows if test(q)])["mrr"]
    return out


def line(name, s):
    return "%-38s %.4f %.4f %.4f  %.4f %.4f" % (
        name,
        s["mrr"],
        s["hit@1"],
        s["hit@10"],
        s["paraphrase"],
        s["cross_repo"],
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", default=",".join(families.TUNE))
    parser.add_argument("--corpus", default=families.OUT)
    parser.add_argument("--cache", default=families.CACHE)
    parser.add_argument("--set", action="append", default=[], help="NAME=JSON value, for every configuration")
    parser.add_argument("--only", help="only the configurations whose name starts with this")
    parser.add_argument("--scales", default="0,0.5,2", help="comma-separated factors (default: 0,0.5,2)")
    parser.add_argument(
        "--symptoms", help="the worlds captured with these symptom lines (eval/families.py --symptoms)"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    for setting in args.set:
        name, _, value = setting.partition("=")
        if not hasattr(wctx, name):
            raise SystemExit("--set %s: wctx has no such constant" % name)
        setattr(wctx, name, json.loads(value))
    base = rank_constants()
    scratch = tempfile.mkdtemp(prefix="wctx-rank-sweep-")
    wctx.freshness_of = history.unchecked  # as eval/families.py scores: no git call per result
    report = {}
    try:
        worlds = open_worlds(args.families.split(","), args.corpus, args.cache, scratch, args.symptoms)
        report["fts"] = pooled(scores(worlds, "fts"))
        print("%-38s %6s %6s %6s  %6s %6s" % ("configuration", "MRR", "hit@1", "hit@10", "para", "cross"))
        print(line("plain BM25 (fts)", report["fts"]), flush=True)
        for name, config in configurations(base, args.only, [float(f) for f in args.scales.split(",")]):
            for key, value in config.items():
                setattr(wctx, key, value)
            report[name] = pooled(scores(worlds, "topology"))
            for key in config:
                setattr(wctx, key, base[key])
            print(line(name, report[name]), flush=True)
        for _, store, _ in worlds:
            store.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
