#!/usr/bin/env python3
"""The field example of cross-repository ranking, on real checkouts of flask, werkzeug and click.

    python3 eval/field_pallets.py FLASK_DIR WERKZEUG_DIR CLICK_DIR [--json]

Registers the three checkouts in one workspace of a fresh temporary store (flask depends on
werkzeug and click), records a small set of notes of the kind sessions in those repositories
leave (each cites a real symbol of the checkout, so capture stamps real blobs), then asks, from
flask, the queries below with ``--rank topology`` and ``--rank fts``, printing the top results
and the rank of the item each query is about. Nothing outside the temporary directory changes.
The notes were written for this check by hand; the checkouts are read, never written.
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

# (key, repo, kind, claim, detail, [path#symbol])
NOTES = [
    (
        "fl-sendfile",
        "flask",
        "finding",
        "send_file guesses the mimetype from the file name",
        "a file object without a name needs mimetype= or download_name=, otherwise send_file raises",
        ["src/flask/helpers.py#send_file"],
    ),
    (
        "fl-static",
        "flask",
        "note",
        "send_from_directory refuses paths outside the directory",
        "it uses werkzeug's safe_join, so a file name with .. gives a 404",
        ["src/flask/helpers.py#send_from_directory"],
    ),
    (
        "fl-root",
        "flask",
        "note",
        "get_root_path falls back to the current working directory",
        "for a module without a file (an interactive session) the root is os.getcwd()",
        ["src/flask/helpers.py#get_root_path"],
    ),
    (
        "fl-dotenv",
        "flask",
        "finding",
        "flask run loads .env only when python-dotenv is installed",
        "get_load_dotenv reads FLASK_SKIP_DOTENV; without the package the file is silently ignored",
        ["src/flask/helpers.py#get_load_dotenv"],
    ),
    (
        "fl-locate",
        "flask",
        "finding",
        "locate_app imports the module before it looks for the app",
        "an ImportError inside the app file is reported as the app not being found",
        ["src/flask/cli.py#locate_app"],
    ),
    (
        "fl-config",
        "flask",
        "note",
        "config.from_file needs a loader for TOML",
        "pass load=tomllib.load and text=False; the default expects a json-like loader",
        ["src/flask/config.py#Config"],
    ),
    (
        "wz-stat",
        "werkzeug",
        "known_issue",
        "StatReloaderLoop misses edits behind a symlinked directory",
        "the stat reloader compares mtimes of the paths it found at start-up; a module reached through a symlink "
        "keeps its old mtime, so the server is not restarted until the watchdog reloader is used",
        ["src/werkzeug/_reloader.py#StatReloaderLoop"],
    ),
    (
        "wz-watchdog",
        "werkzeug",
        "finding",
        "WatchdogReloaderLoop ignores changes in excluded patterns",
        "exclude_patterns is matched against full paths, so a pattern without a leading * never matches",
        ["src/werkzeug/_reloader.py#WatchdogReloaderLoop"],
    ),
    (
        "wz-run",
        "werkzeug",
        "note",
        "run_with_reloader re-executes the whole interpreter",
        "the child process gets WERKZEUG_RUN_MAIN=true; state set up before the call runs twice",
        ["src/werkzeug/_reloader.py#run_with_reloader"],
    ),
    (
        "wz-formparser",
        "werkzeug",
        "finding",
        "MultiPartParser spools large file uploads to disk",
        "max_form_memory_size only bounds non-file fields",
        ["src/werkzeug/formparser.py#MultiPartParser"],
    ),
    (
        "ck-lazyfile",
        "click",
        "finding",
        "click.File opens lazily for writing",
        "the file is created on first write, so a command that fails early leaves no empty file",
        ["src/click/utils.py#open_file"],
    ),
    (
        "ck-echo",
        "click",
        "note",
        "echo strips ANSI colours when the output is not a terminal",
        "pass color=True to keep them in a pipe",
        ["src/click/utils.py#echo"],
    ),
    (
        "ck-appdir",
        "click",
        "note",
        "get_app_dir honours XDG_CONFIG_HOME on Linux",
        "force_posix gives ~/.app-name instead",
        ["src/click/utils.py#get_app_dir"],
    ),
]
RELATIONS = [("flask", "depends_on", "werkzeug"), ("flask", "depends_on", "click")]
# (asked from, query, the note it is about)
QUERIES = [
    ("flask", "reloader not detecting file changes", "wz-stat"),
    ("flask", "dev server does not restart after editing a symlinked module", "wz-stat"),
    ("flask", "lazy file creation for output options", "ck-lazyfile"),
    ("flask", "large uploads written to a temporary file", "wz-formparser"),
    ("flask", "send_file without a file name", "fl-sendfile"),
]


def run(paths):
    root = tempfile.mkdtemp(prefix="wctx-field-")
    try:
        store = wctx.open_store(home=os.path.join(root, "home"))
        for name in ("flask", "werkzeug", "click"):
            wctx.register_repo(store, paths[name], name=name, workspace="pallets")
        for a, kind, b in RELATIONS:
            wctx.relate(store, a, kind, b)
        ids = {}
        for key, repo, kind, claim, detail, files in NOTES:
            item = {"kind": kind, "repo": repo, "claim": claim, "detail": detail, "files": files}
            made = wctx.capture(store, [item], cwd=paths[repo], agent="field")["evidence"][0]
            ids[made["id"]] = key
        out = []
        for frm, text, want in QUERIES:
            row = {"from": frm, "query": text, "about": want}
            for rank in ("topology", "fts"):
                res = wctx.search(store, text, repo=frm, rank=rank, limit=5)
                keys = [ids.get(r["id"], r["id"]) for r in res["results"]]
                row[rank] = {"rank_of_answer": keys.index(want) + 1 if want in keys else None, "top": keys}
            out.append(row)
        store.close()
        return out
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name in ("flask", "werkzeug", "click"):
        parser.add_argument(name, help="a git checkout of %s" % name)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    paths = {n: os.path.abspath(getattr(args, n)) for n in ("flask", "werkzeug", "click")}
    rows = run(paths)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for r in rows:
        print("from %s: %r (about %s)" % (r["from"], r["query"], r["about"]))
        for rank in ("topology", "fts"):
            print(
                "  %-8s answer at %-4s top: %s" % (rank, r[rank]["rank_of_answer"], ", ".join(r[rank]["top"]))
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
