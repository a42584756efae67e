#!/usr/bin/env python3
"""Judged retrieval corpora from the real changelogs and fix commits of several repository
families, and the run that scores the default ranking against plain BM25 on each.

    python3 eval/families.py build REPOS_DIR [--families a,b] [--out eval/families]
    python3 eval/families.py run REPOS_DIR [--families a,b] [--cache DIR] [--reuse] [--wctx DIR]
                                           [--symptoms FILE] [--json] [--markdown] [--save FILE]

REPOS_DIR holds one directory per family with a clone of each of its repositories
(REPOS_DIR/encode/httpx, REPOS_DIR/tokio/mio, ...; the pallets family may also sit at
REPOS_DIR/pallets/flask). A family is data (FAMILIES): its repositories with their changelogs,
the relations between them, where each repository's questions are asked from, the licence, and
which files are source. ``build`` is eval/history.py's build for any family: the queries are the
projects' changelog entries (first sentence, markup removed), the answers the commits the entries
cite (squash-merge "(#N)" subjects, "Merge pull request #N" merges, commits naming the issue),
judged 3; other code-changing commits compete as background. Cited symbols are the definitions
the diff touched: Python through ``ast``, every other language through wctx's own symbol locator.

``build`` writes eval/families/NAME/{corpus.json, evidence.jsonl, queries.jsonl,
items_for_writer.jsonl}. ``items_for_writer.jsonl`` holds only what a writer who never sees a
question may read: id, repo, kind, claim, detail, cited files.

``run`` builds each family's world once (a clone per repository, every item captured at its commit
into a store) under ``--cache`` (default /work/eval-cache), then asks every query with the default
ranking (``topology``) and plain BM25 (``fts``) in the same run, and prints MRR, hit@1, hit@5,
hit@10 and nDCG@10 per family, for the TUNE half and the REPORT half of the families separately,
with the paraphrase and cross-repository subsets. With ``--reuse`` a cached world is scored as it
is: ``--wctx DIR`` imports the wctx.py of another checkout, which opens a copy of the cached store
(its own migrations run on the copy; the cache is never changed), so scoring a branch costs only
the queries. ``--symptoms FILE`` (jsonl: id, symptom) captures each line as the item's
``symptom`` field when the wctx in use has one, else appends it to the item's detail; such a world
is cached apart, under a name holding the digest of that family's own lines.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import history  # noqa: E402  (eval/history.py: changelog, commits, cited symbols, capture)

FORMAT = history.FORMAT
OUT = os.path.join(HERE, "families")
CACHE = "/work/eval-cache"
LIMIT = 10
RANKINGS = ("topology", "fts")  # the default ranking and plain BM25 over the same fields


def _py(package):
    """Source rule of a Python package: .py files under src/ or the package directory, no tests."""

    def rule(path):
        return history._is_source(path, package)

    return rule


def _go(path):
    return (
        path.endswith(".go")
        and not path.endswith("_test.go")
        and not re.search(r"(^|/)(vendor|testdata|test|tests|examples?|internal/testutil)/", path)
    )


def _rust(path):
    return path.endswith(".rs") and not re.search(
        r"(^|/)(tests?|benches|examples|tests-[\w-]+|fuzz|target)/", path
    )


def _ts(path):
    return (
        re.search(r"\.(ts|tsx|js|mjs|cjs)$", path) is not None
        and path.startswith("packages/")
        and "/src/" in path
        and not re.search(r"(__tests__|__mocks__|__typetests__|__fixtures__|__benchmarks__)/|\.d\.ts$", path)
    )


# A family: repos (name, url, licence, [(changelog path, tag prefix)], source rule), relations,
# where each repository's questions are asked from, and ``window``: whether a cited number must
# fall between the entry's release tag and the one before (False where releases are tagged on
# branches that the default branch does not contain).
FAMILIES = {
    "pallets": {
        "language": "python",
        "holder": "the Pallets team",
        "licence": "BSD-3-Clause",
        "repos": [
            ("flask", "https://github.com/pallets/flask", [("CHANGES.rst", "")], _py("flask")),
            ("werkzeug", "https://github.com/pallets/werkzeug", [("CHANGES.rst", "")], _py("werkzeug")),
            ("click", "https://github.com/pallets/click", [("CHANGES.md", "")], _py("click")),
            ("jinja", "https://github.com/pallets/jinja", [("CHANGES.rst", "")], _py("jinja2")),
            (
                "itsdangerous",
                "https://github.com/pallets/itsdangerous",
                [("CHANGES.rst", "")],
                _py("itsdangerous"),
            ),
            ("markupsafe", "https://github.com/pallets/markupsafe", [("CHANGES.rst", "")], _py("markupsafe")),
        ],
        "relations": history.RELATIONS,
        "consumer_of": history.CONSUMER_OF,
        "window": True,
        "kinds": True,
        "background": 120,
    },
    "encode": {
        "language": "python",
        "holder": "Encode OSS Ltd.",
        "licence": "BSD-3-Clause",
        "repos": [
            ("httpx", "https://github.com/encode/httpx", [("CHANGELOG.md", "")], _py("httpx")),
            ("httpcore", "https://github.com/encode/httpcore", [("CHANGELOG.md", "")], _py("httpcore")),
            (
                "starlette",
                "https://github.com/encode/starlette",
                [("docs/release-notes.md", "")],
                _py("starlette"),
            ),
            ("uvicorn", "https://github.com/encode/uvicorn", [("docs/release-notes.md", "")], _py("uvicorn")),
        ],
        # httpx is built on httpcore; starlette's test client is httpx; starlette apps run on uvicorn.
        "relations": (
            ("httpx", "depends_on", "httpcore"),
            ("starlette", "depends_on", "httpx"),
            ("starlette", "uses", "uvicorn"),
        ),
        "consumer_of": {
            "httpx": "httpx",
            "httpcore": "httpx",
            "starlette": "starlette",
            "uvicorn": "starlette",
        },
        "window": True,
        "background": 100,
    },
    "aio-libs": {
        "language": "python",
        "holder": "the aio-libs contributors",
        "licence": "Apache-2.0",
        "repos": [
            ("aiohttp", "https://github.com/aio-libs/aiohttp", [("CHANGES.rst", "")], _py("aiohttp")),
            ("yarl", "https://github.com/aio-libs/yarl", [("CHANGES.rst", "")], _py("yarl")),
            ("multidict", "https://github.com/aio-libs/multidict", [("CHANGES.rst", "")], _py("multidict")),
        ],
        "relations": (
            ("aiohttp", "depends_on", "yarl"),
            ("aiohttp", "depends_on", "multidict"),
            ("yarl", "depends_on", "multidict"),
        ),
        "consumer_of": {"aiohttp": "aiohttp", "yarl": "aiohttp", "multidict": "yarl"},
        "window": False,
        "entries": 150,  # the newest fix entries per repository (changelogs in order)
        "background": 100,
    },
    "prometheus": {
        "language": "go",
        "holder": "The Prometheus Authors",
        "licence": "Apache-2.0",
        "repos": [
            ("client_golang", "https://github.com/prometheus/client_golang", [("CHANGELOG.md", "")], _go),
            ("common", "https://github.com/prometheus/common", [("CHANGELOG.md", "")], _go),
            ("alertmanager", "https://github.com/prometheus/alertmanager", [("CHANGELOG.md", "")], _go),
        ],
        "relations": (
            ("client_golang", "depends_on", "common"),
            ("alertmanager", "depends_on", "common"),
            ("alertmanager", "depends_on", "client_golang"),
        ),
        "consumer_of": {
            "client_golang": "alertmanager",
            "common": "client_golang",
            "alertmanager": "alertmanager",
        },
        "window": False,
        "background": 100,
    },
    "tokio": {
        "language": "rust",
        "holder": "Tokio Contributors (tokio, tracing) and Carl Lerche and other MIO contributors (mio)",
        "licence": "MIT",
        "repos": [
            (
                "tokio",
                "https://github.com/tokio-rs/tokio",
                [
                    ("tokio/CHANGELOG.md", "tokio-"),
                    ("tokio-util/CHANGELOG.md", "tokio-util-"),
                    ("tokio-stream/CHANGELOG.md", "tokio-stream-"),
                ],
                _rust,
            ),
            ("mio", "https://github.com/tokio-rs/mio", [("CHANGELOG.md", "")], _rust),
            (
                "tracing",
                "https://github.com/tokio-rs/tracing",
                [
                    ("tracing/CHANGELOG.md", "tracing-"),
                    ("tracing-core/CHANGELOG.md", "tracing-core-"),
                    ("tracing-subscriber/CHANGELOG.md", "tracing-subscriber-"),
                ],
                _rust,
            ),
        ],
        # tokio's I/O driver is mio; tokio instruments itself with tracing (its "tracing" feature).
        "relations": (("tokio", "depends_on", "mio"), ("tokio", "uses", "tracing")),
        "consumer_of": {"tokio": "tokio", "mio": "tokio", "tracing": "tracing"},
        "window": False,
        "entries": 150,  # the newest fix entries per repository (changelogs in order)
        "background": 100,
    },
    "jest": {
        "language": "typescript",
        "holder": "Meta Platforms, Inc. and affiliates and the Contributors to the Jest project",
        "licence": "MIT",
        "repos": [
            (
                "jest",
                "https://github.com/jestjs/jest",
                [("CHANGELOG.md", ""), ("CHANGELOG_PRE_v30.md", "")],
                _ts,
            ),
        ],
        "relations": (),
        "consumer_of": {"jest": "jest"},
        "window": False,
        "entries": 300,  # the newest fix entries per repository (changelogs in order)
        "background": 150,
    },
}
# Tuned on: pallets (earlier ranking rounds already looked at it), one Go and one TypeScript
# family. Reported on: the other three, which nothing was ever tuned on. Rule: each half holds at
# least one family that is not Python, and pallets is always in TUNE.
TUNE = ("pallets", "prometheus", "jest")
REPORT = ("encode", "aio-libs", "tokio")


# -- changelog --------------------------------------------------------------------------------

_VERSION_LINE = re.compile(r"^(?:#+\s*)?\[?(?:version\s+|v(?=\d))?(\d+\.\d+[\w.\-]*|unreleased|main)\b", re.I)
_UNDERLINE = re.compile(r"^(=+|-+|~+|\^+)\s*$")
_URL_REF = re.compile(r"https?://github\.com/([\w.-]+/[\w.-]+)/(pull|issues)/(\d+)")
_TAGS = re.compile(r"^\s*(?:`?\[[^\]]*\]`?\s*)+")  # "[BUGFIX]", "`[jest-config]`", "[**BREAKING**]"


def changelog_entries(text, url):
    """[(version, entry text, [(kind or None, number)])] for every bullet of a changelog in
    Markdown or reStructuredText: a version is a heading (``#`` or underlined) starting with a
    version number; a bullet runs until the next bullet, heading or unindented line (blank lines
    inside it are kept: towncrier puts its references after one). References are ``#N``, the
    roles ``:issue:`N``` and ``:pr:`N```, and links to this repository's pulls and issues."""
    lines = text.splitlines()
    entries, version, current = [], None, None
    own = url.rstrip("/").split("github.com/")[-1].lower()

    def close():
        if current is not None:
            entries.append((version, " ".join(current).strip()))

    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        heading = line.startswith("#") or (
            line.strip() and _UNDERLINE.match(nxt) and not line.startswith((" ", "-", "*"))
        )
        m = _VERSION_LINE.match(line.strip()) if heading else None
        if m:
            close()
            current, version = None, m.group(1)
            continue
        if heading or _UNDERLINE.match(line):
            close()
            current = None
            continue
        bullet = re.match(r"^[-*]\s+(.*)", line)
        if bullet:
            close()
            current = [bullet.group(1)]
        elif current is not None and re.match(r"^\s+[-*]\s", line):  # a sub-list ends the entry's text
            close()
            current = None
        elif current is not None and line.startswith(" ") and line.strip():
            current.append(line.strip())
        elif current is not None and line.strip():
            close()
            current = None
    close()
    out = []
    for version, entry in entries:
        refs = [(k, int(n)) for k, n in history._ROLE_REF.findall(entry)]
        for repo, kind, n in _URL_REF.findall(entry):
            if repo.lower() == own:
                refs.append(("pr" if kind == "pull" else "issue", int(n)))
        for kind, n1, n2 in history._HASH_REF.findall(_URL_REF.sub("", entry)):
            kind = kind.lower()
            kind = "pr" if kind in ("pull request", "pr") else "issue" if kind == "issue" else None
            refs.append((kind, int(n1 or n2)))
        out.append((version, entry, list(dict.fromkeys(refs))))
    return out


def clean_entry(entry):
    """The question an entry asks: eval/history.py's cleaning, after its leading tags and the
    towncrier reference block and bylines are taken out."""
    entry = _TAGS.sub("", entry)
    entry = re.sub(r"\*Related issues and pull requests on GitHub:\*.*", "", entry)
    entry = re.sub(r"\s+--\s+by\s+:user:`[^`]*`(\s*(,|and)\s*:user:`[^`]*`)*\.?", ".", entry)
    entry = re.sub(r"\[#\d+\](?:\([^)]*\))?", "", entry)  # "[#15](url)", "[#15]"
    entry = re.sub(r"\[([^\]]+)\](?!\()", r"\1", entry).replace("**", "")  # "[a regression]", bold
    entry = _URL_REF.sub("", entry)
    entry = re.sub(r"\(\s*(?:pull|pr|issue)s?\s*#?\d+(?:\s*(?:,|and)\s*#?\d+)*\s*\)", "", entry, flags=re.I)
    # "(, , )" and " ()" left by references; not the "()" of "f()"
    entry = re.sub(r"\s\(\s*(?:[,;]\s*|and\s+)*\)|\(\s*(?:[,;]\s*|and\s+)+\)", "", entry)
    return history.clean_entry(entry)


# -- build ------------------------------------------------------------------------------------

SOURCE = """# Source of this corpus

Generated by `python3 eval/families.py build REPOS_DIR --families %(family)s` from clones of
these repositories at these commits (also in `corpus.json`):

| repository | commit | changelog | licence |
| --- | --- | --- | --- |
%(rows)s

The query texts are the projects' changelog entries (first sentence, markup and references
removed); the claims and details are their commit messages (issue numbers, links and trailers
removed); the cited files and symbols are paths and definition names of their source. All of it
is Copyright %(holder)s, %(licence)s, whose terms permit redistribution with the copyright notice
(kept in each repository's licence file at the commit above). No source code is included;
`eval/families.py run` reads the code from the clones the user provides.
"""


def family_dir(repos_dir, family, name):
    """Where a repository's clone is: REPOS_DIR/FAMILY/NAME, else REPOS_DIR/NAME."""
    path = os.path.join(repos_dir, family, name)
    return path if os.path.isdir(path) else os.path.join(repos_dir, name)


class CitedMemo:
    """history.cited_symbols remembered on disk per repository and change (under the cache), so
    that building a corpus again after a change to the changelog rules reads no diff twice."""

    def __init__(self, cache, family):
        self.path = os.path.join(cache, "cited", family + ".json") if cache else None
        self.known = {}
        if self.path and os.path.exists(self.path):
            with open(self.path, encoding="utf-8") as fh:
                self.known = json.load(fh)
        self.cited = history.cited_symbols

    def __call__(self, repo, base, head, package):
        key = "%s %s %s" % (os.path.basename(repo), base, head)
        if key not in self.known:
            self.known[key] = self.cited(repo, base, head, package)
            if len(self.known) % 50 == 0:
                self.save()
        return list(self.known[key])

    def save(self):
        if self.path:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with open(self.path + ".tmp", "w", encoding="utf-8") as fh:
                json.dump(self.known, fh)
            os.replace(self.path + ".tmp", self.path)


def build_family(repos_dir, family, out_dir, cache=CACHE):
    memo = CitedMemo(cache, family)
    history.cited_symbols = memo
    try:
        _build_family(repos_dir, family, out_dir)
    finally:
        history.cited_symbols = memo.cited
        memo.save()


def _build_family(repos_dir, family, out_dir):
    spec = FAMILIES[family]
    repos, evidence, queries, used = [], [], [], set()
    for name, url, changelogs, rule in spec["repos"]:
        path = family_dir(repos_dir, family, name)
        head = history.git(path, "rev-parse", "HEAD").strip()
        repos.append({
            "name": name, "url": url, "commit": head, "licence": spec["licence"],
            "changelog": ", ".join(c for c, _ in changelogs),
        })  # fmt: skip
        hist = history.History(path, rule)
        items = {}
        n_entries = 0
        cited = set()  # every number any entry of this repository cites
        for changelog, prefix in changelogs:
            entries = changelog_entries(history.git(path, "show", "HEAD:" + changelog), url)
            versions = list(dict.fromkeys(v for v, _, _ in entries))
            for version, entry, refs in entries:
                cited.update(n for _, n in refs)
                if not refs or not history.FIX_WORDS.search(_TAGS.sub("", entry) + " " + entry[:12]):
                    continue
                n_entries += 1
                if n_entries > spec.get("entries", n_entries):
                    break
                at = versions.index(version)
                previous = versions[at + 1] if at + 1 < len(versions) else None
                answers = []
                for kind, number in refs:
                    # GitHub numbers issues and pull requests in one sequence: towncrier's
                    # :issue:`N` often names the pull request. Only pallets keeps the kinds apart.
                    kind = kind if spec.get("kinds") else None
                    if spec["window"]:
                        change = hist.resolve(
                            kind, number, prefix + (version or ""), previous and prefix + previous
                        )
                    else:
                        change = hist.resolve(kind, number, window=False)
                    if change:
                        eid = history._item_for(hist, name, change, items, evidence, used)
                        if eid and eid not in answers:
                            answers.append(eid)
                query = clean_entry(entry)
                if not answers or len(query.split()) < 3:
                    continue
                answer_words = set()
                for ev in evidence:
                    if ev["id"] in answers:
                        symbols = [f.split("#", 1)[1] for f in ev["files"] if "#" in f]
                        answer_words |= history.content_words(
                            " ".join([ev["claim"], ev["detail"] or ""] + symbols)
                        )
                shared = sorted(history.content_words(query) & answer_words)
                asked = spec["consumer_of"][name]
                queries.append({
                    "id": "%s-%d" % (name, len([q for q in queries if q["needs"] == name]) + 1),
                    "from": asked, "needs": name, "text": query,
                    "category": "paraphrase" if len(shared) <= 1 else "shared_words",
                    "cross_repo": asked != name, "shared": len(shared), "version": version,
                    "changelog": changelog, "judgements": {eid: 3 for eid in answers},
                })  # fmt: skip
        taken = _background(hist, name, path, rule, evidence, used, spec["background"], cited)
        print(
            "%s/%s: %d fix entries, %d queries, %d items (%d background)"
            % (family, name, n_entries, len([q for q in queries if q["needs"] == name]),
               len([e for e in evidence if e["repo"] == name]), taken),
            file=sys.stderr,
        )  # fmt: skip
    seen, kept = set(), []
    for q in queries:
        key = (q["text"].lower(), tuple(sorted(q["judgements"])))
        if key not in seen:
            seen.add(key)
            kept.append(q)
    corpus = {
        "format": FORMAT,
        "name": family + "-history",
        "family": family,
        "language": spec["language"],
        "description": "changelog entries of the %s projects as queries, the commits that made them "
        "as evidence; built by eval/families.py" % family,
        "workspace": family,
        "repos": repos,
        "relations": [{"from": a, "kind": k, "to": b} for a, k, b in spec["relations"]],
    }
    out = os.path.join(out_dir, family)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "corpus.json"), "w", encoding="utf-8", newline="\n") as fh:
        json.dump(corpus, fh, indent=1, sort_keys=True)
        fh.write("\n")
    writer = [{k: e[k] for k in ("id", "repo", "kind", "claim", "detail", "files")} for e in evidence]
    for fname, rows in (
        ("evidence.jsonl", evidence),
        ("queries.jsonl", kept),
        ("items_for_writer.jsonl", writer),
    ):
        with open(os.path.join(out, fname), "w", encoding="utf-8", newline="\n") as fh:
            for row in rows:
                fh.write(json.dumps(row, sort_keys=True) + "\n")
    with open(os.path.join(out, "SOURCE.md"), "w", encoding="utf-8", newline="\n") as fh:
        fh.write(SOURCE % {
            "family": family, "licence": spec["licence"], "holder": spec.get("holder", "the projects' authors"),
            "rows": "\n".join(
                "| %s | %s | %s | %s |" % (r["url"], r["commit"], r["changelog"], r["licence"]) for r in repos
            ),
        })  # fmt: skip
    para = sum(1 for q in kept if q["category"] == "paraphrase")
    cross = sum(1 for q in kept if q["cross_repo"])
    print(
        "%s: %d items, %d queries (%d paraphrase, %d cross_repo)"
        % (family, len(evidence), len(kept), para, cross),
        file=sys.stderr,
    )


def _background(hist, name, path, rule, evidence, used, wanted, cited):
    """Other commits that changed code, evenly through history, recorded as items that answer no
    query (as eval/history.py); a commit naming a number that any changelog entry cites is left
    out (it may answer a question), one naming only other numbers (a squash merge) competes."""
    pool = [
        c for c in hist.commits
        if len(c["parents"]) == 1 and (name, c["sha"]) not in used
        and not cited.intersection(int(n) for n in re.findall(r"#(\d+)", c["message"]))
        and len(c["message"].split("\n", 1)[0].split()) >= 3
    ]  # fmt: skip
    step = max(1, len(pool) // (wanted * 2))
    taken = 0
    for c in pool[::step]:
        if taken >= wanted:
            break
        files = history.cited_symbols(path, c["parents"][0], c["sha"], rule)
        subject, body = history.clean_message(c["message"])
        if not files or not subject:
            continue
        evidence.append({
            "id": "%s-%s" % (name, c["sha"][:10]), "repo": name, "commit": c["sha"], "kind": "finding",
            "claim": subject, "detail": body or None, "files": files, "role": "background",
        })  # fmt: skip
        taken += 1
    return taken


# -- run --------------------------------------------------------------------------------------


def load(corpus_dir):
    return history.load(corpus_dir)


def read_symptoms(path):
    """{item id: symptom line} from a jsonl file of {"id", "symptom"}."""
    out = {}
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                out[str(row["id"])] = str(row["symptom"])
            except (ValueError, KeyError, TypeError):
                raise SystemExit('%s:%d: not a {"id", "symptom"} line' % (path, n)) from None
    return out


def has_symptom_field(store):
    """True when the store (of the wctx in use) has a ``symptom`` column on its evidence."""
    return any(row[1] == "symptom" for row in store.db.execute("PRAGMA table_info(evidence)"))


def build_world(wctx, corpus, repos_dir, root, symptoms=None, say=lambda text: None):
    """eval/history.py's world (a clone per repository, every item captured at its commit), with
    each item's symptom line as its ``symptom`` field, or appended to its detail. Returns
    (store, ids, how the symptoms were given)."""
    family = corpus.get("family")
    mode = None
    evidence = corpus["evidence"]
    if symptoms:
        probe = wctx.open_store(home=os.path.join(root, "home"))
        mode = "symptom field" if has_symptom_field(probe) else "appended to detail"
        probe.close()
        evidence = []
        for ev in corpus["evidence"]:
            line = symptoms.get(ev["id"])
            if line and mode == "symptom field":
                ev = dict(ev, symptom=line)
            elif line:
                ev = dict(ev, detail=((ev.get("detail") or "") + "\n" + line).strip())
            evidence.append(ev)
    linked = os.path.join(root, "sources")
    os.makedirs(linked, exist_ok=True)
    for repo in corpus["repos"]:  # history.build_world reads REPOS_DIR/NAME
        src = family_dir(repos_dir, family, repo["name"]) if family else os.path.join(repos_dir, repo["name"])
        dst = os.path.join(linked, repo["name"])
        if not os.path.lexists(dst):
            os.symlink(os.path.abspath(src), dst)
    keys = ("kind", "claim", "detail", "repo", "files") + (("symptom",) if mode == "symptom field" else ())
    store, ids = history.build_world(
        wctx, dict(corpus, evidence=evidence), linked, root, say, keys=keys, sparse=True
    )
    return store, ids, mode


def world_dir(cache, family, symptoms_path, corpus):
    """Where a family's world is cached: by the family alone, or with the symptom lines of its
    own items (one file may hold the lines of every family: each family's world depends only on
    its own lines, so adding another family's lines rebuilds nothing)."""
    if not symptoms_path:
        return os.path.join(cache, family)
    own = {ev["id"] for ev in corpus["evidence"]}
    lines = sorted((i, line) for i, line in read_symptoms(symptoms_path).items() if i in own)
    digest = hashlib.sha256(json.dumps(lines).encode("utf-8")).hexdigest()[:12]
    return os.path.join(cache, "%s+symptoms-%s" % (family, digest))


def ranked(query, result_ids, limit=LIMIT):
    """MRR, hit@1/5/10 and nDCG@10 of one query's ranked results (grades from its judgements)."""
    grades = [query["judgements"].get(i, 0) for i in result_ids[:limit]]
    first = next((n for n, g in enumerate(grades, 1) if g > 0), None)
    dcg = sum((2**g - 1) / math.log2(n + 1) for n, g in enumerate(grades, 1))
    ideal = sorted(query["judgements"].values(), reverse=True)[:limit]
    best = sum((2**g - 1) / math.log2(n + 1) for n, g in enumerate(ideal, 1))
    return {
        "mrr": 1.0 / first if first else 0.0,
        "hit@1": float(first is not None and first <= 1),
        "hit@5": float(first is not None and first <= 5),
        "hit@10": float(first is not None and first <= 10),
        "ndcg@10": dcg / best if best else 0.0,
    }


METRICS = ("mrr", "hit@1", "hit@5", "hit@10", "ndcg@10")
SUBSETS = (
    ("all", lambda q: True),
    ("paraphrase", lambda q: q["category"] == "paraphrase"),
    ("cross_repo", lambda q: q["from"] != q["needs"]),
)


def mean(rows):
    out = {"n": len(rows)}
    for m in METRICS:
        out[m] = sum(r[m] for r in rows) / len(rows) if rows else 0.0
    return out


def score_family(wctx, corpus, store, ids, say=lambda text: None):
    """[(query, {ranking: metrics})] for every query of the corpus, both rankings in this run."""
    rows = []
    for n, q in enumerate(corpus["queries"], 1):
        if n % 100 == 0:
            say("%s: query %d/%d" % (corpus.get("family"), n, len(corpus["queries"])))
        runs = {}
        for rank in RANKINGS:
            out = wctx.search(store, q["text"], repo=q["from"], limit=LIMIT, rank=rank)
            runs[rank] = ranked(q, [ids.get(r["id"], r["id"]) for r in out["results"]])
        rows.append((q, runs))
    return rows


def summarize(rows):
    """{subset: {ranking: metrics}} over (query, runs) rows."""
    return {
        subset: {rank: mean([runs[rank] for q, runs in rows if test(q)]) for rank in RANKINGS}
        for subset, test in SUBSETS
    }


def run_family(family, repos_dir, corpus_dir, cache, reuse, symptoms_path, say):
    import wctx

    corpus = load(os.path.join(corpus_dir, family))
    corpus["family"] = family
    world = world_dir(cache, family, symptoms_path, corpus)
    with open(os.path.join(corpus_dir, family, "evidence.jsonl"), "rb") as fh:
        digest = hashlib.sha256(fh.read()).hexdigest()
    ready = os.path.exists(os.path.join(world, "ids.json"))
    if ready:
        with open(os.path.join(world, "ids.json"), encoding="utf-8") as fh:
            ready = json.load(fh).get("evidence", digest) == digest
        if not ready and reuse:
            raise SystemExit(
                "--reuse: the world at %s was built from other evidence; run once without --reuse" % world
            )
    mode = None
    started = time.perf_counter()
    if not ready:
        if reuse:
            raise SystemExit("--reuse: no cached world at %s (run once without --reuse)" % world)
        shutil.rmtree(world, ignore_errors=True)
        os.makedirs(world)
        symptoms = read_symptoms(symptoms_path) if symptoms_path else None
        store, ids, mode = build_world(wctx, corpus, repos_dir, world, symptoms, say)
        store.close()
        with open(os.path.join(world, "ids.json"), "w", encoding="utf-8") as fh:
            json.dump({"ids": ids, "symptoms": mode, "evidence": digest}, fh)
    with open(os.path.join(world, "ids.json"), encoding="utf-8") as fh:
        saved = json.load(fh)
    ids, mode = saved["ids"], saved.get("symptoms")
    built = time.perf_counter() - started
    # Score on a copy of the cached store: the wctx in use migrates its copy, never the cache.
    scratch = tempfile.mkdtemp(prefix="wctx-families-")
    try:
        shutil.copytree(os.path.join(world, "home"), os.path.join(scratch, "home"))
        store = wctx.open_store(home=os.path.join(scratch, "home"))
        checked = wctx.freshness_of
        wctx.freshness_of = history.unchecked
        try:
            t0 = time.perf_counter()
            rows = score_family(wctx, corpus, store, ids, say)
            asked = time.perf_counter() - t0
        finally:
            wctx.freshness_of = checked
            store.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {
        "family": family,
        "language": corpus.get("language"),
        "items": len(corpus["evidence"]),
        "queries": len(corpus["queries"]),
        "world": world,
        "symptoms": mode,
        "build_seconds": round(built, 1),
        "query_seconds": round(asked, 1),
        "rows": rows,
    }


def half_of(family):
    return "TUNE" if family in TUNE else "REPORT"


def format_table(title, summary):
    lines = [title, "%-11s %-9s %5s %6s %6s %6s %6s %8s" % (
        "subset", "ranking", "n", "MRR", "hit@1", "hit@5", "hit@10", "nDCG@10")]  # fmt: skip
    for subset, by in summary.items():
        for rank in RANKINGS:
            o = by[rank]
            lines.append(
                "%-11s %-9s %5d %6.3f %6.3f %6.3f %6.3f %8.3f"
                % (subset, rank, o["n"], o["mrr"], o["hit@1"], o["hit@5"], o["hit@10"], o["ndcg@10"])
            )
    return "\n".join(lines)


def markdown(report):
    """The run as Markdown tables (for bench/RESULTS.md): one row per family and half pooled, each
    cell plain BM25 / default."""
    lines = [
        "| family | half | language | n | MRR | hit@1 | hit@5 | hit@10 | nDCG@10 | paraphrase n, MRR, hit@10 "
        "| cross_repo n, MRR, hit@10 |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]

    def pair(by, metric):
        return "%.3f / %.3f" % (by["fts"][metric], by["topology"][metric])

    def row(name, half, language, summary):
        a, p, c = summary["all"], summary["paraphrase"], summary["cross_repo"]
        sub = [
            "%d, %s, %s" % (x["fts"]["n"], pair(x, "mrr"), pair(x, "hit@10")) if x["fts"]["n"] else "0"
            for x in (p, c)
        ]
        cells = [name, half, language, str(a["fts"]["n"])] + [pair(a, m) for m in METRICS] + sub
        return "| " + " | ".join(cells) + " |"

    for name, res in report["families"].items():
        lines.append(row(name, res["half"], res["language"] or "", res["summary"]))
    for half in ("tune", "report"):
        if half + "_pooled" in report:
            lines.append(row("**pooled**", half.upper(), "", report[half + "_pooled"]))
    return "\n".join(lines)


def _families(arg):
    names = [f.strip() for f in (arg or ",".join(FAMILIES)).split(",") if f.strip()]
    for f in names:
        if f not in FAMILIES:
            raise SystemExit("unknown family %r (known: %s)" % (f, ", ".join(FAMILIES)))
    return names


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="write the corpora from the clones in REPOS_DIR")
    b.add_argument("repos_dir")
    b.add_argument("--families", help="comma-separated (default: all)")
    b.add_argument("--out", default=OUT)
    b.add_argument("--cache", default=CACHE, help="where read diffs are remembered (default: %s)" % CACHE)
    r = sub.add_parser("run", help="score the default ranking and plain BM25 on the corpora")
    r.add_argument("repos_dir")
    r.add_argument("--families", help="comma-separated (default: all)")
    r.add_argument("--corpus", default=OUT, help="directory of the family corpora (default: eval/families)")
    r.add_argument("--cache", default=CACHE, help="where the built worlds are kept (default: %s)" % CACHE)
    r.add_argument("--reuse", action="store_true", help="score the cached worlds only; never build one")
    r.add_argument("--wctx", help="a checkout of wctx whose wctx.py is scored (default: this one)")
    r.add_argument("--symptoms", help="jsonl of {id, symptom} lines captured with the items")
    r.add_argument("--json", action="store_true")
    r.add_argument("--markdown", action="store_true", help="also print the tables as Markdown")
    r.add_argument("--save", help="also write every query's scores here (json)")
    args = parser.parse_args(argv)
    families = _families(args.families)
    if args.command == "build":
        for family in families:
            build_family(args.repos_dir, family, args.out, args.cache)
        return 0
    if args.wctx:
        if not os.path.isfile(os.path.join(args.wctx, "wctx.py")):
            raise SystemExit("--wctx %s: no wctx.py there" % args.wctx)
        sys.path.insert(0, os.path.abspath(args.wctx))
    import wctx

    def say(text):
        print(text, file=sys.stderr)

    results = [
        run_family(f, args.repos_dir, args.corpus, args.cache, args.reuse, args.symptoms, say)
        for f in families
    ]
    report = {
        "wctx": os.path.abspath(wctx.__file__),
        "tune": list(TUNE),
        "report": list(REPORT),
        "families": {},
    }
    out = ["wctx: %s" % report["wctx"]]
    for res in results:
        summary = summarize(res["rows"])
        report["families"][res["family"]] = dict(
            {k: v for k, v in res.items() if k != "rows"}, half=half_of(res["family"]), summary=summary
        )
        out.append("")
        out.append(
            format_table(
                "%s [%s, %s]: %d items, %d queries; world %s (%.0f s), queries %.0f s%s"
                % (res["family"], half_of(res["family"]), res["language"], res["items"], res["queries"],
                   res["world"], res["build_seconds"], res["query_seconds"],
                   "; symptoms: " + res["symptoms"] if res["symptoms"] else ""),
                summary,
            )
        )  # fmt: skip
    for half, members in (("TUNE", TUNE), ("REPORT", REPORT)):
        rows = [row for res in results if res["family"] in members for row in res["rows"]]
        if rows:
            names = [res["family"] for res in results if res["family"] in members]
            report[half.lower() + "_pooled"] = summarize(rows)
            out.append("")
            out.append(format_table("%s half pooled (%s)" % (half, ", ".join(names)), summarize(rows)))
    if args.save:
        with open(args.save, "w", encoding="utf-8") as fh:
            per_query = [
                {"family": res["family"], "id": q["id"], "category": q["category"], "from": q["from"],
                 "needs": q["needs"], "runs": runs}
                for res in results for q, runs in res["rows"]
            ]  # fmt: skip
            json.dump(dict(report, queries=per_query), fh, indent=1)
    print(json.dumps(report, indent=1) if args.json else "\n".join(out))
    if args.markdown:
        print("\n" + markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
