#!/usr/bin/env python3
"""Speed and size of the HTML report (`wctx report --html`) at 10,000 items, in headless Chromium.

    python3 bench/report_page.py                 # 10,000 items, 3 page loads (~2-4 minutes)
    python3 bench/report_page.py --items 2000    # smaller
    python3 bench/report_page.py --json
    python3 bench/report_page.py --keep /tmp/wctx-report-bench   # keep (and reuse) the store

The store is bench/search.py's corpus (10 real git repositories, items captured through
wctx.capture with claims, details, cited symbols and commits in between, so every verdict occurs).
It measures, in one run:
  build     wall time of `wctx report --html` in-process (workspace_report + render_report_html;
            verdicts from verify, i.e. git), and the page's size;
  load      Chromium: navigation to the load event, and to the first frame after it (the page is
            on screen), median of --loads fresh navigations, each next to the same claims as a
            bare HTML list (no style, script or graph) loaded in the same browser;
  filter    one filter change applied to every item (select a verdict; then type a word), in the
            page, median of 5.
Goals (issue 16): rendered in <= 2 s, page <= 3 MB.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [ROOT, HERE, os.path.join(ROOT, "tests")]

import search as corpus_bench  # noqa: E402  (bench/search.py: the shared corpus)
from browser import Browser, find_chromium  # noqa: E402

import wctx  # noqa: E402

GOALS = {"render_s": 2.0, "html_mb": 3.0}

FRAME_AFTER_LOAD = """new Promise(function (done) {
  requestAnimationFrame(function () { requestAnimationFrame(function () {
    var nav = performance.getEntriesByType("navigation")[0];
    done({load: nav.loadEventEnd, frame: performance.now(), items: document.querySelectorAll("article.item").length});
  }); });
})"""

FILTER = """(function () {
  var sel = document.getElementById("verdict"), q = document.getElementById("q"), out = {};
  var t0 = performance.now();
  sel.value = "stale"; sel.dispatchEvent(new Event("change")); document.body.offsetHeight;
  out.select = performance.now() - t0;
  out.shown = document.getElementById("shown").textContent;
  sel.value = ""; sel.dispatchEvent(new Event("change"));
  return out;
})()"""

TYPE = """new Promise(function (done) {
  var q = document.getElementById("q"), t0 = performance.now();
  q.value = %s; q.dispatchEvent(new Event("input"));
  var shown = document.getElementById("shown");
  var seen = new MutationObserver(function () {
    seen.disconnect(); document.body.offsetHeight;
    done({ms: performance.now() - t0, shown: shown.textContent});
  });
  seen.observe(shown, {childList: true, characterData: true, subtree: true});
})"""


def metrics(browser):
    return {m["name"]: m["value"] for m in browser.call("Performance.getMetrics")["metrics"]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10000)
    parser.add_argument("--loads", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", metavar="DIR", help="build in DIR and keep it; reuse it when it exists")
    args = parser.parse_args(argv)
    chromium = find_chromium()
    if not chromium:
        sys.exit("headless Chromium is needed (Debian: apt-get install chromium)")
    tmp = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="wctx-report-bench-")
    reuse = bool(args.keep) and os.path.isdir(os.path.join(tmp, "home"))
    report = {
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "load_average_start": [round(x, 1) for x in os.getloadavg()],
        "items": args.items,
        "command": "python3 bench/report_page.py" + (" " + " ".join(argv or sys.argv[1:])).rstrip(),
    }
    try:
        if not reuse:
            words, weights = corpus_bench.vocabulary()
            corpus = corpus_bench.Corpus(args.seed, words, weights)
            repos = corpus_bench.Repos(os.path.join(tmp, "repos"), corpus, 30)
        store = wctx.open_store(os.path.join(tmp, "home"))
        if not reuse:
            for ws, members in corpus_bench.WORKSPACES.items():
                for name in members:
                    wctx.register_repo(store, repos.path(name), name=name, workspace=ws)
            for a, kind, b in corpus_bench.RELATIONS:
                wctx.relate(store, a, kind, b)
            sys.stderr.write("capturing %d items\n" % args.items)
            corpus_bench.populate(store, repos, corpus, args.items, lambda t: sys.stderr.write(t + "\n"))
        t0 = time.perf_counter()
        rep = wctx.workspace_report(store)
        t1 = time.perf_counter()
        page = wctx.render_report_html(rep, generated_at=wctx.utc_now())
        t2 = time.perf_counter()
        path = os.path.join(tmp, "report.html")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(page)
        size = len(page.encode("utf-8"))
        compact = page.count('<li class="item ')
        report["build"] = {"facts_s": round(t1 - t0, 2), "render_s": round(t2 - t1, 2)}
        report["html"] = {
            "bytes": size,
            "mb": round(size / 1e6, 2),
            "items_in_page": page.count("<article ") + compact,
            "items_compact": compact,
            "verdicts": {v: sum(1 for i in rep.items if i.verdict == v) for v in wctx.VERDICTS},
        }
        store.close()
        # The side-by-side reference: the same claims as a bare list, nothing else (no style, no
        # script, no graph): what any page showing this text costs on this machine right now.
        bare = os.path.join(tmp, "bare.html")
        with open(bare, "w", encoding="utf-8") as fh:
            fh.write("<!DOCTYPE html><meta charset=utf-8><title>bare</title><ul>")
            fh.write("".join("<li>%s</li>" % html.escape(i.claim) for i in rep.items))
            fh.write("</ul>")
        loads, frames, bare_frames, selects, types, tasks = [], [], [], [], [], []
        with Browser(chromium, width=1280, height=900, timeout=120) as browser:
            browser.call("Performance.enable")
            for _ in range(args.loads):
                browser.open("about:blank")
                before = metrics(browser)
                browser.open("file://" + path)
                timing = browser.eval(FRAME_AFTER_LOAD)
                tasks.append(metrics(browser)["TaskDuration"] - before["TaskDuration"])
                loads.append(timing["load"])
                frames.append(timing["frame"])
                shown_items = timing["items"]
                browser.open("about:blank")
                browser.open("file://" + bare)
                bare_frames.append(browser.eval(FRAME_AFTER_LOAD)["frame"])
            browser.open("file://" + path)
            for word in ("retry", "cache", "the", "zzzz", "value", ""):
                types.append(browser.eval(TYPE % json.dumps(word))["ms"] - 60)  # minus the typing debounce
            for _ in range(5):
                f = browser.eval(FILTER)
                selects.append(f["select"])
            requests = browser.requests()
        report["browser"] = {
            "load_ms_median": round(statistics.median(loads)),
            "first_frame_ms_median": round(statistics.median(frames)),
            "loads_ms": [round(x) for x in loads],
            "main_thread_busy_ms_median": round(statistics.median(tasks) * 1000),
            "bare_list_first_frame_ms_median": round(statistics.median(bare_frames)),
            "ratio_to_bare_list": round(statistics.median(frames) / statistics.median(bare_frames), 2),
            "filter_select_ms_median": round(statistics.median(selects)),
            "filter_type_ms_median": round(statistics.median(types)),
            "items_in_dom": shown_items,
            "requests": len(requests),
        }
        report["load_average_end"] = [round(x, 1) for x in os.getloadavg()]
        report["goals_met"] = {
            "render_s": report["browser"]["first_frame_ms_median"] / 1000.0 <= GOALS["render_s"],
            "html_mb": size <= GOALS["html_mb"] * 1e6,
        }
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        b, h = report["browser"], report["html"]
        print(
            "report page, %d items (%s), Python %s, %d CPUs, load %s"
            % (
                args.items,
                ", ".join("%d %s" % (n, v) for v, n in h["verdicts"].items()),
                report["python"],
                report["cpus"],
                report["load_average_start"],
            )
        )
        print(
            "  build:   %.2f s facts (verify, git) + %.2f s render"
            % (report["build"]["facts_s"], report["build"]["render_s"])
        )
        print(
            "  html:    %.2f MB, %d items in the page (%d compact)"
            % (h["mb"], h["items_in_page"], h["items_compact"])
        )
        print(
            "  browser: load event %d ms, first frame %d ms (median of %d: %s)"
            % (b["load_ms_median"], b["first_frame_ms_median"], args.loads, b["loads_ms"])
        )
        print(
            "           main thread busy %d ms; a bare list of the same claims: first frame %d ms (ratio %.2f)"
            % (b["main_thread_busy_ms_median"], b["bare_list_first_frame_ms_median"], b["ratio_to_bare_list"])
        )
        print(
            "           filter by verdict %d ms, by typed word %d ms; %d request(s)"
            % (b["filter_select_ms_median"], b["filter_type_ms_median"], b["requests"])
        )
        print(
            "  goals:   render <= %.0f s %s, html <= %.0f MB %s"
            % (
                GOALS["render_s"],
                "met" if report["goals_met"]["render_s"] else "MISSED",
                GOALS["html_mb"],
                "met" if report["goals_met"]["html_mb"] else "MISSED",
            )
        )


if __name__ == "__main__":
    main()
