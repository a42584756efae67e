#!/usr/bin/env python3
"""Several phrasings of one question fused by rank, against one phrasing and against one long query.

    python3 eval/fusion.py [--history REPOS_DIR [--world DIR]] [--offset K ...] [--json]

Neither corpus holds an agent's two or three phrasings of one question, so both are proxies:
- the project's eval (eval/corpus): queries asked from the same repository whose answers (the
  items judged 3) are the same are phrasings of one question (a paraphrase, the symbol, the path,
  the error text). Each such query is asked alone (``alone``), fused with the others of its group
  (``fused``: wctx.search_phrasings, at most 3), and joined with them into one query
  (``joined``); each is scored against its own judgements.
- with ``--history``, the real-history corpus (eval/history.py): where a changelog entry has more
  than one sentence, the first is the question and the later ones (``more``) are taken as the
  asker's second description. ``alone`` is the first sentence, ``fused`` both, ``joined`` both
  as one query.
Asked from the query's repository, scoped, topology ranking, top 10. ``--offset`` also fuses with
other values of wctx.FUSION_RANK_OFFSET (its sensitivity). Nothing outside a temporary
directory (or --world) changes.
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

WAYS = ("alone", "fused", "joined")


def eval_groups(corpus):
    """{query id: [its phrasing, the others of its group]} for the eval corpus (see the module)."""
    groups = {}
    for q in corpus["queries"]:
        answers = tuple(sorted(k for k, v in q["judgements"].items() if v == 3))
        if answers:
            groups.setdefault((q["from"], answers), []).append(q)
    out = {}
    for members in groups.values():
        for q in members:
            others = [o["text"] for o in members if o is not q]
            if others:
                out[q["id"]] = [q["text"]] + others[: wctx.MAX_PHRASINGS - 1]
    return out


def ask(store, q, phrasings, way, limit=10):
    if way == "alone":
        return wctx.search(store, phrasings[0], repo=q["from"], limit=limit)
    if way == "fused":
        return wctx.search_phrasings(store, phrasings, repo=q["from"], limit=limit)
    return wctx.search(store, " ".join(phrasings), repo=q["from"], limit=limit)


def measure(store, corpus, ids, asked, paraphrase, offsets):
    """{way: {"all"|"paraphrase": metrics}} over the queries in ``asked`` ({id: phrasings})."""
    connected = {o: wctx.connected_repos(corpus, o) for o in {q["from"] for q in corpus["queries"]}}
    ways = list(WAYS) + ["fused k=%d" % k for k in offsets]
    rows = {way: [] for way in ways}
    shipped = wctx.FUSION_RANK_OFFSET
    try:
        for q in corpus["queries"]:
            if q["id"] not in asked:
                continue
            for way in ways:
                wctx.FUSION_RANK_OFFSET = int(way.split("=")[1]) if "=" in way else shipped
                out = ask(store, q, asked[q["id"]], way.split(" ")[0])
                result_ids = [ids.get(r["id"], r["id"]) for r in out["results"]]
                repos = [r["repo"] for r in out["results"]]
                row = wctx.score_query(q, result_ids, repos, connected[q["from"]])
                rows[way].append(dict(row, paraphrase=paraphrase(q)))
    finally:
        wctx.FUSION_RANK_OFFSET = shipped
    return {
        way: {
            "all": wctx.summarize_scores(rows[way]),
            "paraphrase": wctx.summarize_scores([r for r in rows[way] if r["paraphrase"]]),
        }
        for way in ways
    }


def on_eval(offsets):
    corpus = wctx.load_eval_corpus(None)
    root = tempfile.mkdtemp(prefix="wctx-fusion-")
    try:
        store, ids = wctx.build_eval_world(corpus, root)
        wctx.verify(store, ids=sorted(ids))
        try:
            return measure(
                store, corpus, ids, eval_groups(corpus), lambda q: q["category"] == "paraphrase", offsets
            )
        finally:
            store.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def on_history(repos_dir, world, offsets):
    import history

    corpus = history.load(history.OUT)
    asked = {
        q["id"]: [q["text"], q["more"]] for q in corpus["queries"] if len(q.get("more", "").split()) >= 3
    }
    root = world or tempfile.mkdtemp(prefix="wctx-fusion-")
    checked = wctx.freshness_of
    try:
        if world and os.path.exists(os.path.join(root, "ids.json")):
            store = wctx.open_store(home=os.path.join(root, "home"))
            with open(os.path.join(root, "ids.json"), encoding="utf-8") as fh:
                ids = json.load(fh)
        else:
            store, ids = history.build_world(wctx, corpus, repos_dir, root)
        wctx.freshness_of = history.unchecked
        try:
            return measure(store, corpus, ids, asked, lambda q: q["shared"] <= 1, offsets)
        finally:
            store.close()
    finally:
        wctx.freshness_of = checked
        if not world:
            shutil.rmtree(root, ignore_errors=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--history", metavar="REPOS_DIR", help="also the history corpus (clones here)")
    parser.add_argument("--world", help="build the history store here and keep it; reuse it when there")
    parser.add_argument("--offset", type=int, action="append", default=[], help="another fusion offset")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = {"eval": on_eval(args.offset)}
    if args.history:
        report["history"] = on_history(args.history, args.world, args.offset)
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print("%-8s %-14s %-11s %4s %6s %6s %6s" % ("corpus", "way", "subset", "n", "hit@1", "hit@5", "MRR"))
    for name, ways in report.items():
        for way, subsets in ways.items():
            for subset, o in subsets.items():
                print(
                    "%-8s %-14s %-11s %4d %6.3f %6.3f %6.3f"
                    % (name, way, subset, o["queries"], o["hit@1"], o["hit@5"], o["mrr"])
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
