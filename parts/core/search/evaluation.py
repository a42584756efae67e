from __future__ import annotations

import json
import os
import time

from .capture import capture
from .errors import UsageError
from .git import run_git
from .items import retract, supersede, verify
from .repos import add_to_workspace, register_repo, relate
from .search import search
from .store import open_store

# ----------------------------------------------------------------------------------------------
# Evaluation: retrieval quality of --rank fts and --rank topology on a judged corpus
# ----------------------------------------------------------------------------------------------
# The corpus format is documented in eval/README.md. The metric functions are pure and small so
# that tests can check them against values computed by hand.

EVAL_CORPUS_FORMAT = "wctx-eval-corpus/1"
EVAL_LIMIT = 10  # results asked for per query; nDCG and recall are cut here too
# (variant name, rank, all_scope): the same queries, the same scope, two rankings; the --all pair
# widens the scope on purpose so that pollution is measurable for both rankings.
EVAL_VARIANTS = (
    ("fts", "fts", False),
    ("topology", "topology", False),
    ("fts --all", "fts", True),
    ("topology --all", "topology", True),
)
EVAL_METRICS = ("hit@1", "hit@5", "hit@10", "mrr", "ndcg@10", "recall@10", "attribution", "pollution")
_EVAL_GIT_IDENTITY = (
    "-c",
    "user.name=wctx eval",
    "-c",
    "user.email=eval@wctx.invalid",
    "-c",
    "commit.gpgsign=false",
)


def hit_at(grades, k):
    """1.0 when one of the first ``k`` results is relevant (grade > 0), else 0.0."""
    return 1.0 if any(g > 0 for g in grades[:k]) else 0.0


def reciprocal_rank(grades):
    """1 / rank of the first relevant result, 0.0 when none is."""
    for rank, grade in enumerate(grades, 1):
        if grade > 0:
            return 1.0 / rank
    return 0.0


def dcg(grades):
    """Discounted cumulative gain with exponential gain: sum (2^g - 1) / log2(rank + 1)."""
    import math

    return sum((2**g - 1) / math.log2(rank + 1) for rank, g in enumerate(grades, 1))


def ndcg_at(grades, judged, k):
    """DCG of the first ``k`` results over the DCG of the best possible order of ``judged``."""
    ideal = dcg(sorted(judged, reverse=True)[:k])
    return dcg(grades[:k]) / ideal if ideal else 0.0


def recall_at(grades, judged, k):
    """Share of the relevant judged items that appear in the first ``k`` results."""
    relevant = sum(1 for g in judged if g > 0)
    return sum(1 for g in grades[:k] if g > 0) / relevant if relevant else 0.0


def attribution(result_repos, needed_repo):
    """1.0 when the top result is about the repository the query needs."""
    return 1.0 if result_repos and result_repos[0] == needed_repo else 0.0


def pollution(result_repos, connected):
    """How many results come from repositories with no path to the caller's repository."""
    return float(sum(1 for r in result_repos if r not in connected))


def median(values):
    """The 50th percentile (mean of the middle two for an even count); 0.0 for no values."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2.0


def score_query(query, result_ids, result_repos, connected, limit=EVAL_LIMIT):
    """Every metric for one query's ranked results (corpus ids and their repos)."""
    grades = [query["judgements"].get(i, 0) for i in result_ids]
    judged = list(query["judgements"].values())
    return {
        "hit@1": hit_at(grades, 1),
        "hit@5": hit_at(grades, 5),
        "hit@10": hit_at(grades, 10),
        "mrr": reciprocal_rank(grades[:limit]),
        "ndcg@10": ndcg_at(grades, judged, limit),
        "recall@10": recall_at(grades, judged, limit),
        "attribution": attribution(result_repos, query["needs"]),
        "pollution": pollution(result_repos[:limit], connected),
    }


def summarize_scores(rows):
    """Mean of every metric over per-query rows, plus the median latency when rows carry ``ms``."""
    out = {"queries": len(rows)}
    for metric in EVAL_METRICS:
        out[metric] = sum(r[metric] for r in rows) / len(rows) if rows else 0.0
    out["latency_p50_ms"] = median([r["ms"] for r in rows if "ms" in r])
    return out


def connected_repos(corpus, origin):
    """Repositories with a path to ``origin`` through shared workspaces or relations (either way)."""
    neighbours = {}
    by_workspace = {}
    for repo in corpus["repos"]:
        for ws in repo.get("workspaces", ()):
            by_workspace.setdefault(ws, []).append(repo["name"])
    for members in by_workspace.values():
        for name in members:
            neighbours.setdefault(name, set()).update(members)
    for rel in corpus.get("relations", ()):
        neighbours.setdefault(rel["from"], set()).add(rel["to"])
        neighbours.setdefault(rel["to"], set()).add(rel["from"])
    seen = {origin}
    todo = [origin]
    while todo:
        for other in neighbours.get(todo.pop(), ()):
            if other not in seen:
                seen.add(other)
                todo.append(other)
    return seen


def _read_jsonl(path):
    out = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except ValueError as exc:
                    raise UsageError("%s line %d is not JSON: %s" % (path, lineno, exc)) from None
    return out


def default_eval_corpus():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "eval", "corpus")


def load_eval_corpus(directory=None):
    """Read and check corpus.json, evidence.jsonl and queries.jsonl from ``directory``."""
    directory = directory or default_eval_corpus()
    manifest = os.path.join(directory, "corpus.json")
    if not os.path.isfile(manifest):
        raise UsageError(
            "no evaluation corpus at %s (expected corpus.json there; pass --corpus DIR)" % directory
        )
    with open(manifest, encoding="utf-8") as fh:
        try:
            corpus = json.load(fh)
        except ValueError as exc:
            raise UsageError("%s is not JSON: %s" % (manifest, exc)) from None
    if corpus.get("format") != EVAL_CORPUS_FORMAT:
        raise UsageError("%s: format must be %r" % (manifest, EVAL_CORPUS_FORMAT))
    corpus["evidence"] = _read_jsonl(os.path.join(directory, "evidence.jsonl"))
    corpus["queries"] = _read_jsonl(os.path.join(directory, "queries.jsonl"))
    corpus["path"] = os.path.abspath(directory)
    repos = {r["name"] for r in corpus.get("repos", ())}
    sessions = {s["id"]: s for s in corpus.get("sessions", ())}
    ids = set()
    for ev in corpus["evidence"]:
        if ev["id"] in ids:
            raise UsageError("evidence id %s appears twice" % ev["id"])
        ids.add(ev["id"])
        if ev["repo"] not in repos or ev["session"] not in sessions:
            raise UsageError("evidence %s names an unknown repo or session" % ev["id"])
    for ev in corpus["evidence"]:
        if ev.get("superseded_by") and ev["superseded_by"] not in ids:
            raise UsageError("evidence %s is superseded by unknown %s" % (ev["id"], ev["superseded_by"]))
    for q in corpus["queries"]:
        if q["from"] not in repos or q["needs"] not in repos:
            raise UsageError("query %s names an unknown repo" % q["id"])
        for eid, grade in q["judgements"].items():
            if eid not in ids or grade not in (1, 2, 3):
                raise UsageError(
                    "query %s: judgement %s=%r must name an item and grade it 1..3" % (q["id"], eid, grade)
                )
    return corpus


def _eval_commit(path, files, message, delete=()):
    for rel, text in files.items():
        full = os.path.join(path, *rel.split("/"))
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    for rel in delete:
        os.remove(os.path.join(path, *rel.split("/")))
    run_git(path, ["add", "-A", "--", "."])
    run_git(path, ["commit", "-q", "--no-verify", "-m", message], extra_options=_EVAL_GIT_IDENTITY)


def build_eval_world(corpus, root, progress=None):
    """Real git repos and a real store for the corpus under ``root``; returns (store, {wctx id: corpus id}).

    Phase-0 sessions are captured through ``capture``, then each repo's history is committed (so
    cited code really changes), then phase-1 sessions are captured, statuses applied, and the
    dirty edits written to the working trees.
    """
    say = progress or (lambda text: None)
    store, paths = _eval_repos(corpus, root)
    by_session = {}
    for ev in corpus["evidence"]:
        by_session.setdefault(ev["session"], []).append(ev)
    ids = {}
    sessions = corpus.get("sessions", ())
    for phase in (0, 1):
        if phase == 1:
            _eval_history(corpus, paths)
        todo = [s for s in sessions if s.get("phase", 0) == phase]
        for n, session in enumerate(todo, 1):
            say("capturing phase %d: session %d/%d" % (phase, n, len(todo)))
            items = by_session.get(session["id"], [])
            payload = [
                {k: ev.get(k) for k in ("kind", "claim", "detail", "symptom", "repo", "files", "confidence")}
                for ev in items
            ]
            if not payload:
                continue
            out = capture(
                store,
                payload,
                summary=session.get("summary"),
                cwd=paths[session["repo"]],
                agent=session.get("agent", "eval"),
                external_id=session["id"],
                allow_missing_symbol=True,  # the corpus replays history: a symbol may be gone since
            )
            for ev, made in zip(items, out["evidence"]):
                ids[made["id"]] = ev["id"]
    _eval_statuses(store, corpus, ids)
    _eval_dirty(corpus, paths)
    return store, ids


def _eval_repos(corpus, root):
    """(the store, {repo name: path}): the corpus's repositories made, committed, registered in
    their workspaces and related."""
    paths = {}
    for repo in corpus["repos"]:
        path = os.path.join(root, "repos", repo["name"])
        os.makedirs(path)
        run_git(path, ["init", "-q"], extra_options=("-c", "init.defaultBranch=main"))
        _eval_commit(path, repo.get("files", {}), "Initial import of %s" % repo["name"])
        paths[repo["name"]] = path
    store = open_store(home=os.path.join(root, "home"))
    for repo in corpus["repos"]:
        workspaces = repo.get("workspaces") or [None]
        register_repo(store, paths[repo["name"]], name=repo["name"], workspace=workspaces[0])
        for ws in workspaces[1:]:
            add_to_workspace(store, ws, repo["name"], create=True)
    for rel in corpus.get("relations", ()):
        relate(store, rel["from"], rel["kind"], rel["to"], note=rel.get("note"))
    return store, paths


def _eval_history(corpus, paths):
    """Each repository's history committed, so that cited code really changes."""
    for repo in corpus["repos"]:
        for commit in repo.get("history", ()):
            kept = {p: t for p, t in commit["files"].items() if t is not None}
            gone = [p for p, t in commit["files"].items() if t is None]
            _eval_commit(paths[repo["name"]], kept, commit["message"], delete=gone)


def _eval_statuses(store, corpus, ids):
    """The corpus's superseded and retracted items made so."""
    real = {cid: wid for wid, cid in ids.items()}
    for ev in corpus["evidence"]:
        if ev.get("superseded_by"):
            supersede(store, real[ev["id"]], real[ev["superseded_by"]])
        elif ev.get("status") == "retracted":
            retract(store, real[ev["id"]])


def _eval_dirty(corpus, paths):
    """The corpus's uncommitted edits written to the working trees."""
    for repo in corpus["repos"]:
        for rel, text in repo.get("dirty", {}).items():
            with open(
                os.path.join(paths[repo["name"]], *rel.split("/")), "w", encoding="utf-8", newline="\n"
            ) as fh:
                fh.write(text)


def run_retrieval_eval(corpus_dir=None, progress=None, limit=EVAL_LIMIT):
    """Build the corpus, run every query under every variant, return the report dict."""
    import shutil
    import tempfile

    say = progress or (lambda text: None)
    corpus = load_eval_corpus(corpus_dir)
    started = time.perf_counter()
    root = tempfile.mkdtemp(prefix="wctx-eval-")
    try:
        say("building %d repositories" % len(corpus["repos"]))
        store, ids = build_eval_world(corpus, root, progress=say)
        try:
            built = time.perf_counter() - started
            say("verifying freshness of %d items" % len(ids))
            freshness = _eval_freshness(store, corpus, ids)  # also warms the search freshness cache
            report = _run_eval_queries(store, corpus, ids, limit, say)
            report["freshness"] = freshness
        finally:
            store.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    categories = {}
    for q in corpus["queries"]:
        categories[q["category"]] = categories.get(q["category"], 0) + 1
    report["corpus"] = {
        "name": corpus.get("name"),
        "path": corpus["path"],
        "repos": len(corpus["repos"]),
        "workspaces": len(corpus.get("workspaces", ())),
        "evidence": len(corpus["evidence"]),
        "queries": len(corpus["queries"]),
        "categories": dict(sorted(categories.items())),
    }
    report["limit"] = limit
    report["build_seconds"] = round(built, 2)
    report["total_seconds"] = round(time.perf_counter() - started, 2)
    return report


def _run_eval_queries(store, corpus, ids, limit, say):
    connected = {}
    for origin in {q["from"] for q in corpus["queries"]}:
        connected[origin] = connected_repos(corpus, origin)
    per_variant = {name: [] for name, _rank, _all in EVAL_VARIANTS}
    per_query = []
    total = len(corpus["queries"])
    for n, q in enumerate(corpus["queries"], 1):
        say("query %d/%d" % (n, total))
        runs = {}
        for name, rank, all_scope in EVAL_VARIANTS:
            t0 = time.perf_counter()
            out = search(store, q["text"], repo=q["from"], limit=limit, rank=rank, all_scope=all_scope)
            ms = (time.perf_counter() - t0) * 1000.0
            result_ids = [ids.get(r["id"], r["id"]) for r in out["results"]]
            result_repos = [r["repo"] for r in out["results"]]
            row = score_query(q, result_ids, result_repos, connected[q["from"]], limit)
            row["ms"] = ms
            per_variant[name].append(dict(row, category=q["category"]))
            runs[name] = dict(
                row, top=result_ids[:5], top_repo=result_repos[0] if result_repos else None, ms=round(ms, 2)
            )
        per_query.append({k: q[k] for k in ("id", "category", "from", "needs", "text")})
        per_query[-1]["runs"] = runs
    variants = []
    for name, rank, all_scope in EVAL_VARIANTS:
        rows = per_variant[name]
        by_category = {}
        for cat in sorted({r["category"] for r in rows}):
            by_category[cat] = summarize_scores([r for r in rows if r["category"] == cat])
        variants.append(
            {
                "name": name,
                "rank": rank,
                "all_scope": all_scope,
                "overall": summarize_scores(rows),
                "by_category": by_category,
            }
        )
    return {"variants": variants, "queries": per_query}


def _eval_freshness(store, corpus, ids):
    """How the corpus's expected freshness compares with wctx's verify verdicts (sanity check)."""
    expected = {ev["id"]: ev.get("expect_freshness") for ev in corpus["evidence"]}
    counts = {}
    for item in verify(store, ids=sorted(ids))["items"]:
        want = expected.get(ids.get(item["id"]))
        if want:
            key = "%s->%s" % (want, item["verdict"])
            counts[key] = counts.get(key, 0) + 1
    agree = sum(n for k, n in counts.items() if k.split("->")[0] == k.split("->")[1])
    total = sum(counts.values())
    return {"expected_vs_verdict": dict(sorted(counts.items())), "agreement": agree / total if total else 0.0}


def format_eval_report(report):
    """The human table for ``wctx eval retrieval``."""
    c = report["corpus"]
    lines = [
        "retrieval evaluation: corpus %s (%d repos, %d items, %d queries), top %d, built in %.1f s, total %.1f s"
        % (
            c["name"],
            c["repos"],
            c["evidence"],
            c["queries"],
            report["limit"],
            report["build_seconds"],
            report["total_seconds"],
        ),
        "",
        "%-15s %6s %6s %6s %8s %9s %7s %9s %7s"
        % ("variant", "hit@1", "hit@5", "MRR", "nDCG@10", "recall@10", "attrib", "pollution", "p50 ms"),
    ]
    for v in report["variants"]:
        o = v["overall"]
        lines.append(
            "%-15s %6.3f %6.3f %6.3f %8.3f %9.3f %7.3f %9.2f %7.2f"
            % (
                v["name"],
                o["hit@1"],
                o["hit@5"],
                o["mrr"],
                o["ndcg@10"],
                o["recall@10"],
                o["attribution"],
                o["pollution"],
                o["latency_p50_ms"],
            )
        )
    scoped = [v for v in report["variants"] if not v["all_scope"]]
    lines += ["", "by category (%s):" % " / ".join(v["name"] for v in scoped)]
    lines.append(
        "%-15s %3s %13s %13s %13s %13s %13s %13s"
        % ("category", "n", "hit@1", "hit@5", "MRR", "nDCG@10", "recall@10", "attrib")
    )
    for cat, n in c["categories"].items():
        cells = []
        for metric in ("hit@1", "hit@5", "mrr", "ndcg@10", "recall@10", "attribution"):
            cells.append(" / ".join("%.2f" % v["by_category"][cat][metric] for v in scoped))
        lines.append("%-15s %3d %13s %13s %13s %13s %13s %13s" % (cat, n, *cells))
    f = report.get("freshness")
    if f:
        pairs = ", ".join("%s %d" % (k, n) for k, n in f["expected_vs_verdict"].items())
        lines += [
            "",
            "freshness of the built corpus (expected->verdict): %s; agreement %.3f" % (pairs, f["agreement"]),
        ]
    return "\n".join(lines)
