#!/usr/bin/env python3
"""A judged retrieval corpus from real repositories' own history, and the run that scores it.

    python3 eval/history.py build REPOS_DIR [--out eval/history]
    python3 eval/history.py run REPOS_DIR [--corpus eval/history] [--json] [--save FILE]

REPOS_DIR holds git clones of the family named in FAMILY (REPOS_DIR/flask, REPOS_DIR/werkzeug,
...), e.g. ``git clone https://github.com/pallets/flask REPOS_DIR/flask``. Nothing here was
written by the people who built wctx's ranking: the queries are the projects' changelog entries,
the answers are the commits that made them, and the judgement is the link the projects' own
maintainers wrote between the two (the issue or pull request number an entry cites).

``build`` reads each repository's changelog and history (git, read-only) and writes:
- ``corpus.json``: the repositories (the commit read, its licence), the workspace, the relations;
- ``evidence.jsonl``: one item per fixing change: the claim is the subject of the commit that
  made it, the detail its message body (issue numbers and trailers taken out), the files the
  ``path#Class.method`` of every Python definition its diff changed (at most MAX_CITED), and the
  commit to record it at. Background items are other commits that changed code, recorded the
  same way: they compete for the ranks and answer no query.
- ``queries.jsonl``: one query per changelog entry that names a fix and cites an issue or pull
  request resolved to a change above: its first sentence without markup, asked from the
  consumer (CONSUMER_OF), judged 3 for the item(s) of that change. ``shared`` counts the content
  words the query shares with its answer's claim, detail and cited symbols (``content_words``); ``category`` is ``paraphrase``
  when that is at most one, else ``shared_words``.

``run`` clones each repository (local, shared objects), records every item through
``wctx.capture`` with the clone checked out at the item's commit (real provenance, oldest first),
moves each clone to the commit read, verifies every item, then asks every query with both
rankings and prints the metrics overall, on the paraphrase subset, and on the queries asked from
another repository than the answer's. Nothing outside a temporary directory changes.
"""

from __future__ import annotations

import argparse
import ast
import bisect
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FORMAT = "wctx-history-corpus/1"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "history")

# (name, changelog file, source url, licence)
FAMILY = (
    ("flask", "CHANGES.rst", "https://github.com/pallets/flask", "BSD-3-Clause"),
    ("werkzeug", "CHANGES.rst", "https://github.com/pallets/werkzeug", "BSD-3-Clause"),
    ("click", "CHANGES.md", "https://github.com/pallets/click", "BSD-3-Clause"),
    ("jinja", "CHANGES.rst", "https://github.com/pallets/jinja", "BSD-3-Clause"),
    ("itsdangerous", "CHANGES.rst", "https://github.com/pallets/itsdangerous", "BSD-3-Clause"),
    ("markupsafe", "CHANGES.rst", "https://github.com/pallets/markupsafe", "BSD-3-Clause"),
)
WORKSPACE = "pallets"
# What of an evidence line is recorded through wctx.capture; ``symptom`` (how the problem shows
# itself, written blind from the item alone) is optional, absent in the corpora built here.
# flask builds on the four libraries; jinja and werkzeug on markupsafe.
RELATIONS = (
    ("flask", "depends_on", "werkzeug"),
    ("flask", "depends_on", "jinja"),
    ("flask", "depends_on", "click"),
    ("flask", "depends_on", "itsdangerous"),
    ("jinja", "depends_on", "markupsafe"),
    ("werkzeug", "depends_on", "markupsafe"),
)
# Where a question about a repository's fix is asked: from the application that meets it.
CONSUMER_OF = {
    "flask": "flask",
    "werkzeug": "flask",
    "click": "flask",
    "jinja": "flask",
    "itsdangerous": "flask",
    "markupsafe": "jinja",
}
MAX_CITED = 8  # cited definitions per item
MAX_DETAIL = 1200  # characters of a commit body kept as the detail
MAX_QUERY_WORDS = 30  # a changelog entry's first sentence, cut here
BACKGROUND_PER_REPO = 120  # other code-changing commits recorded per repository (at most)

# An entry names a fix when it says something was wrong: these words, as whole words.
FIX_WORDS = re.compile(
    r"\b(fix|fixes|fixed|fixing|bug|bugs|no longer|correct|correctly|corrected|regression|crash|"
    r"crashes|error|errors|fail|fails|failed|failing|failure|broken|break|breaks|wrong|incorrect|"
    r"incorrectly|prevent|prevents|properly|issue|avoid|avoids|instead of|does not|doesn't|"
    r"did not|didn't|is not|isn't|not be|leak|hang|hangs|race|infinite|unexpected|missing)\b",
    re.I,
)
SOURCE_DIRS = ("src/",)  # with the package directories of older layouts, see _is_source


def git(repo, *args):
    out = subprocess.run(
        ["git", "-C", repo, "-c", "core.hooksPath=/dev/null", *args],
        capture_output=True,
        check=True,
    )
    return out.stdout.decode("utf-8", "replace")


# -- changelog --------------------------------------------------------------------------------

_ROLE_REF = re.compile(r"[:{](issue|pr)[:}]`(\d+)`")
_HASH_REF = re.compile(r"(?:(issue|pull request|pr)s?\s*)?``?#(\d+)``?|#(\d+)", re.I)
_VERSION = re.compile(r"^(?:#+\s*)?Version\s+(\S+)")


def changelog_entries(text):
    """[(version, entry text as written, [(kind or None, number)])] for every bullet."""
    entries, version, current = [], None, None

    def close():
        if current is not None:
            entries.append((version, " ".join(current).strip()))

    for line in text.splitlines():
        m = _VERSION.match(line)
        if m:
            close()
            current, version = None, m.group(1)
            continue
        bullet = re.match(r"^[-*]\s+(.*)", line)
        if bullet:
            close()
            current = [bullet.group(1)]
        elif current is not None and line.startswith(" ") and line.strip():
            current.append(line.strip())
        elif current is not None and not line.strip():
            close()
            current = None
    close()
    out = []
    for version, entry in entries:
        refs = [(k, int(n)) for k, n in _ROLE_REF.findall(entry)]
        for kind, n1, n2 in _HASH_REF.findall(entry):
            kind = kind.lower()
            kind = "pr" if kind in ("pull request", "pr") else "issue" if kind == "issue" else None
            refs.append((kind, int(n1 or n2)))
        out.append((version, entry, list(dict.fromkeys(refs))))
    return out


def clean_entry(entry, rest=False):
    """A changelog entry as a question's words: no references, no markup, its first sentence (with
    ``rest``, the sentences after it: the same asker's second description, for eval/fusion.py)."""
    text = re.sub(r"[:{](issue|pr|ghsa|cve|user|pep)[:}]`[^`]*`", "", entry)
    ref = r"(?:``|`)?#\d+(?:``|`)?"
    text = re.sub(
        r"\(\s*(issues?|pull requests?|prs?)?\s*%s(\s*(,|and)\s*%s)*\s*\)" % (ref, ref), "", text, flags=re.I
    )
    text = re.sub(r"(issues?|pull requests?)?\s*" + ref, "", text, flags=re.I)
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)  # markdown links
    text = re.sub(r"[:{]\w+(:\w+)?[:}]`~?([^`<]*?)(\s*<[^>]*>)?`", r"\2", text)  # roles
    text = text.replace("``", "").replace("`", "")
    text = re.sub(r"\s+", " ", text).strip()
    sentences = re.split(r"(?<=[a-z0-9\)])\.\s+(?=[A-Z`])", text)
    first = sentences[0].rstrip(". ")
    if rest:
        return " ".join(" ".join(sentences[1:]).rstrip(". ").split()[:MAX_QUERY_WORDS])
    return " ".join(first.split()[:MAX_QUERY_WORDS])


# -- history ----------------------------------------------------------------------------------


def commits_of(repo):
    """[{sha, parents, time, message}] of HEAD's history, oldest first."""
    raw = git(repo, "log", "--topo-order", "--reverse", "--format=%H%x00%P%x00%ct%x00%B%x1e", "HEAD")
    out = []
    for rec in raw.split("\x1e"):
        rec = rec.strip("\n")
        if not rec:
            continue
        sha, parents, ct, message = rec.split("\x00", 3)
        out.append({"sha": sha, "parents": parents.split(), "time": int(ct), "message": message.strip()})
    return out


def _is_source(path, package):
    if callable(package):  # a family's own rule (eval/families.py)
        return package(path)
    if (
        not path.endswith(".py")
        or "/tests/" in "/" + path
        or path.startswith(("tests/", "docs/", "examples/"))
    ):
        return False
    return path.startswith(SOURCE_DIRS) or path.startswith(package + "/")


def _changed_lines(repo, base, head, path):
    """Line numbers of ``path`` at ``head`` that the diff base..head added or changed, plus the
    line after each pure deletion."""
    lines = set()
    for m in re.finditer(
        r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", git(repo, "diff", "-U0", base, head, "--", path), re.M
    ):
        start, count = int(m.group(1)), int(m.group(2) if m.group(2) is not None else 1)
        lines.update(range(start, start + max(count, 1)))
    return lines


def _definitions(source):
    """[(first line, last line, qualified name)] of the classes, functions and methods of a
    Python source (a nested function is cited as the function that holds it), or None."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None
    out = []

    def visit(node, path, in_function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                name = ".".join(path + (child.name,))
                if not in_function:
                    out.append((first, child.end_lineno, name))
                visit(child, path + (child.name,), in_function or not isinstance(child, ast.ClassDef))
            elif not isinstance(child, ast.expr):
                visit(child, path, in_function)

    visit(tree, (), False)
    return out


_DEFINING = re.compile(
    r"\b(?:fn|func|function\s*\*?|class|struct|enum|trait|interface|type|mod|union)\s+([A-Za-z_$][\w$]*)"
    r"|\bfunc\s*\(\s*\w*\s*\*?\s*([A-Za-z_]\w*)(?:\[[^\]\n]*\])?\s*\)\s*([A-Za-z_]\w*)"
    r"|\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=;\n]+)?=\s*(?:async\b\s*)?(?:function\b|\(|[\w$]+\s*=>)"
    r"|^[ \t]+(?:(?:static|async|public|private|protected|readonly|override|get|set)\s+)*"
    r"([A-Za-z_$][\w$]*)\s*(?:<[^>\n]*>)?\s*\([^)\n]*\)[^;{}\n]*\{",
    re.M,
)
_NOT_NAMES = frozenset(
    "if for while switch catch return function else do with new typeof await pub fn func impl unsafe "
    "extern const where match loop select defer go case super this".split()
)
_TYPES = re.compile(r"\b(?:class|struct|enum|trait|interface|type|mod|union|impl)\b")
BACK = 40  # definitions looked at above a changed line


def located_definitions(source, path, lines):
    """[(first line, last line, qualified name)] of the definitions holding ``lines`` in a
    non-Python source, as wctx's own symbol locator finds them: every name a definition keyword
    introduces (a Go receiver, the enclosing Rust impl or class qualifies it), kept where the
    locator puts its extent at that place. Walking up from each changed line, the definitions
    holding it are collected up to the first one at the top level."""
    import wctx

    index = wctx._source_index(source, wctx.language_of(path))
    impls = index.impl_blocks()
    defs = []  # (line, position, [names], top level)
    for m in _DEFINING.finditer(index.masked):
        if m.group(2):
            names, at = ["%s.%s" % (m.group(2), m.group(3))], m.start(3)
        else:
            name = m.group(1) or m.group(4) or m.group(5)
            if name in _NOT_NAMES:
                continue
            at = m.start(1) if m.group(1) else m.start(4) if m.group(4) else m.start(5)
            outer = [c for c in impls if c[1] <= at <= c[2]]
            names = ["%s.%s" % (max(outer, key=lambda c: c[1])[0], name)] if outer else []
            names.append(name)
        kind = "type" if _TYPES.search(index.masked[_line_start_of(index, at) : at]) else "func"
        defs.append((index.line_of(at) + 1, at, names, kind))
    located = {}

    def extent(d):
        if d[1] not in located:
            located[d[1]] = None
            for name in d[2]:
                found = wctx.locate_symbol_lines(source, path, name)
                hit = next((e for e in (found[1] if found else ()) if e[0] <= d[0] <= e[1]), None)
                if hit:
                    located[d[1]] = (hit[0], hit[1], name, d[3])
                    break
        return located[d[1]]

    starts = [d[0] for d in defs]
    holders = {}
    for line in sorted(lines):
        held = []
        i = bisect.bisect_right(starts, line) - 1
        for d in defs[max(0, i - BACK + 1) : i + 1][::-1]:
            e = extent(d)
            if e and e[0] <= line <= e[1]:
                held.append(e)
            if index.depth_at(d[1]) == 0:  # top-level definitions do not nest: none above holds it
                break
        # the outermost function holding the line, else the innermost type
        funcs = [e for e in held if e[3] == "func"]
        if funcs:
            holders[line] = min(funcs, key=lambda e: e[0])
        elif held:
            holders[line] = max(held, key=lambda e: e[0])
    return [e[:3] for e in dict.fromkeys(holders.values())]


def _line_start_of(index, pos):
    return index.starts[index.line_of(pos)]


def cited_symbols(repo, base, head, package):
    """["path#Qualified.name"] of the definitions the diff base..head changed in source files
    (the innermost class member holding a changed line), else ["path"] for a source file it
    changed outside any definition; at most MAX_CITED, in path order. A clone without some
    blobs (a snapshot leaves out its largest files) cites what it can read."""
    try:
        names = git(repo, "diff", "--no-renames", "--name-only", "--diff-filter=AM", base, head)
    except subprocess.CalledProcessError:
        return []
    files = [p for p in names.split("\n") if p]
    cited = []
    for path in sorted(p for p in files if _is_source(p, package)):
        try:
            changed = _changed_lines(repo, base, head, path)
            source = git(repo, "show", "%s:%s" % (head, path))
        except subprocess.CalledProcessError:
            continue
        defs = _definitions(source) if path.endswith(".py") else located_definitions(source, path, changed)
        names = []
        if defs is not None:
            for line in sorted(changed):
                holding = [d for d in defs if d[0] <= line <= d[1]]
                if holding:
                    inner = max(holding, key=lambda d: d[0])
                    names.append(inner[2])
        names = list(dict.fromkeys(names))
        cited.extend("%s#%s" % (path, n) for n in names) if names else cited.append(path)
    return cited[:MAX_CITED]


_TRAILER = re.compile(
    r"^(co-authored-by|signed-off-by|reviewed-by|fixes|closes|resolves|see|refs?)\b.*$", re.I | re.M
)


def clean_message(message):
    """(subject, body) of a commit message without issue numbers, links and trailers."""
    lines = message.strip().split("\n")
    subject = re.sub(r"\s*\(#\d+\)\s*$", "", lines[0])
    subject = re.sub(
        r"(?:(fix(es|ed)?|close[sd]?|resolve[sd]?|issue)\s+)?#\d+:?", "", subject, flags=re.I
    ).strip()
    body = "\n".join(lines[1:])
    body = _TRAILER.sub("", body)
    body = re.sub(r"https?://\S+", "", body)
    body = re.sub(r"(?:(fix(es|ed)?|close[sd]?|resolve[sd]?|see|refs?)\s+)?#\d+", "", body, flags=re.I)
    body = re.sub(r"\n\s*\n+", "\n", body).strip()
    if not re.search(r"[A-Za-z]{2}", subject):  # the subject was only a number: the body speaks
        subject, _, body = body.partition("\n")
    return subject.strip(), body.strip()[:MAX_DETAIL]


_MERGE_PR = re.compile(r"^Merge pull request #(\d+) from (\S+)")
_SQUASH_PR = re.compile(r"\(#(\d+)\)\s*$")
_BRANCH_ISSUE = re.compile(r"/(?:[a-z-]*?[-_])?(\d{2,5})(?:[-_]|$)")


class History:
    """One repository's history, indexed by the numbers its changelog cites."""

    def __init__(self, path, package):
        self.path = path
        self.package = package
        self.commits = commits_of(path)
        self.by_sha = {c["sha"]: c for c in self.commits}
        self.prs = {}  # pr number -> ("merge", merge commit) | ("squash", commit)
        self.mentions = {}  # issue number -> [commit] mentioning it, oldest first
        for c in self.commits:
            subject = c["message"].split("\n", 1)[0]
            m = _MERGE_PR.match(subject)
            if m and len(c["parents"]) == 2:
                self.prs.setdefault(int(m.group(1)), ("merge", c))
                b = _BRANCH_ISSUE.search(m.group(2))
                if b:
                    self.mentions.setdefault(int(b.group(1)), []).append(c)
                continue
            m = _SQUASH_PR.search(subject)
            if m and len(c["parents"]) == 1:
                self.prs.setdefault(int(m.group(1)), ("squash", c))
            if len(c["parents"]) == 1:
                for n in re.findall(r"#(\d+)", c["message"]):
                    self.mentions.setdefault(int(n), []).append(c)

    def change(self, commit):
        """The change a commit makes as an item: (base, head, the commit whose message is the
        claim), or None for a merge that is not a pull request's."""
        if len(commit["parents"]) == 1:
            return commit["parents"][0], commit["sha"], commit
        if len(commit["parents"]) != 2:
            return None
        first, second = commit["parents"]
        base = git(self.path, "merge-base", first, second).strip()
        members = [
            self.by_sha[s]
            for s in git(self.path, "rev-list", "--no-merges", "%s..%s" % (base, second)).split()
            if s in self.by_sha
        ]
        if not members:
            return None

        # The pull request's commit that changed the most source lines speaks for it.
        def weight(c):
            stat = git(self.path, "diff", "--numstat", c["parents"][0], c["sha"])
            return sum(
                int(a) + int(d)
                for a, d, p in (ln.split("\t", 2) for ln in stat.split("\n") if ln.count("\t") >= 2)
                if a.isdigit() and d.isdigit() and _is_source(p, self.package)
            )

        lead = max(members, key=lambda c: (weight(c), c["time"]))
        return base, second, lead

    def tag(self, version):
        """The commit a version was released at (its tag), or None (unreleased, untagged)."""
        if not hasattr(self, "_tags"):
            self._tags = {}
            for line in git(
                self.path, "tag", "--format=%(refname:short)%00%(objectname)%00%(*objectname)"
            ).split("\n"):
                if line:
                    name, obj, peeled = line.split("\0")
                    self._tags[name.lstrip("v")] = peeled or obj
        return self._tags.get(version) if version else None

    def _ancestor(self, commit, of):
        return (
            subprocess.run(
                ["git", "-C", self.path, "merge-base", "--is-ancestor", commit, of], stdout=subprocess.DEVNULL
            ).returncode
            == 0
        )

    def in_window(self, sha, version, previous):
        """True when a change's commit was released in ``version`` (its tag holds it, the tag of
        the version listed before it in the changelog does not); HEAD stands for an unreleased
        version. A number in a commit message can name another tracker's issue (projects moved
        between trackers): the window keeps those out."""
        upto = self.tag(version) or "HEAD"
        if not self._ancestor(sha, upto):
            return False
        before = self.tag(previous)
        return before is None or not self._ancestor(sha, before)

    def resolve(self, kind, number, version=None, previous=None, window=True):
        """The change an (issue or pr, number) reference of a changelog entry of ``version``
        names, as History.change, or None. Without ``window`` the first change found is taken
        (every commit of the history is HEAD's ancestor)."""
        found = []
        if kind in ("pr", None) and number in self.prs:
            found.append(self.prs[number][1])
        if kind in ("issue", None):
            found.extend(self.mentions.get(number, ()))
        for c in found:
            change = self.change(c)
            if change and (not window or self.in_window(change[1], version, previous)):
                return change
        return None


# -- words shared by a query and its answer ---------------------------------------------------

_STOP = frozenset(
    """a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers him his how i if in into is it its itself just me
    more most my no nor not now of off on once only or other our out over own same she should so
    some such than that the their them then there these they this those through to too under until
    up very was we were what when where which while who whom why will with would you your used use
    uses using now new when""".split()
)


def _norm(word):
    """A crude normal form for counting shared words, independent of wctx's own rule: plural,
    past and -ing endings off."""
    for suffix in ("ing", "ies", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_words(text):
    """The normalised content words of a text: identifiers split at _ and case changes, lower
    case, three or more letters, no stop words."""
    words = set()
    for raw in re.findall(r"[A-Za-z][A-Za-z0-9]*", re.sub(r"_", " ", text)):
        for part in re.findall(r"[A-Z]+(?=[A-Z][a-z]|\b|\d)|[A-Z]?[a-z]+|[A-Z]+", raw) or [raw]:
            low = part.lower()
            if len(low) >= 3 and low not in _STOP:
                words.add(_norm(low))
    return words


# -- build ------------------------------------------------------------------------------------


def _item_for(hist, name, change, items, evidence, used):
    """The evidence id of the item recording ``change`` (History.change) of repository ``name``,
    added to ``evidence`` the first time; None when it changed no source file or says nothing."""
    base, tip, lead = change
    if tip not in items:
        files = cited_symbols(hist.path, base, tip, hist.package)
        subject, body = clean_message(lead["message"])
        items[tip] = None
        if files and subject:
            items[tip] = "%s-%s" % (name, tip[:10])
            evidence.append({
                "id": items[tip], "repo": name, "commit": tip, "kind": "finding", "claim": subject,
                "detail": body or None, "files": files, "role": "fix",
            })  # fmt: skip
            used.update([(name, tip), (name, lead["sha"])])
    return items[tip]


def build(repos_dir, out_dir):
    repos, evidence, queries = [], [], []
    used = set()
    for name, changelog, url, licence in FAMILY:
        path = os.path.join(repos_dir, name)
        package = {"jinja": "jinja2"}.get(name, name)
        head = git(path, "rev-parse", "HEAD").strip()
        repos.append({"name": name, "url": url, "commit": head, "licence": licence, "changelog": changelog})
        hist = History(path, package)
        text = git(path, "show", "HEAD:" + changelog)
        items = {}  # head sha of the change -> evidence id

        n_entries = 0
        entries = changelog_entries(text)
        versions = list(dict.fromkeys(v for v, _, _ in entries))
        for version, entry, refs in entries:
            if not refs or not FIX_WORDS.search(entry):
                continue
            n_entries += 1
            answers = []
            at = versions.index(version)
            previous = versions[at + 1] if at + 1 < len(versions) else None
            for kind, number in refs:
                change = hist.resolve(kind, number, version, previous)
                if change:
                    eid = _item_for(hist, name, change, items, evidence, used)
                    if eid and eid not in answers:
                        answers.append(eid)
            query = clean_entry(entry)
            if not answers or len(query.split()) < 3:
                continue
            answer_words = set()
            for ev in evidence:
                if ev["id"] in answers:
                    symbols = [f.split("#", 1)[1] for f in ev["files"] if "#" in f]
                    answer_words |= content_words(" ".join([ev["claim"], ev["detail"] or ""] + symbols))
            shared = sorted(content_words(query) & answer_words)
            queries.append({
                "id": "%s-%d" % (name, len([q for q in queries if q["needs"] == name]) + 1),
                "from": CONSUMER_OF[name], "needs": name, "text": query,
                "category": "paraphrase" if len(shared) <= 1 else "shared_words",
                "shared": len(shared), "version": version, "more": clean_entry(entry, rest=True),
                "judgements": {eid: 3 for eid in answers},
            })  # fmt: skip
        # Background: other commits that changed code, evenly through history.
        pool = [
            c for c in hist.commits
            if len(c["parents"]) == 1 and (name, c["sha"]) not in used
            and not re.search(r"#\d+", c["message"]) and len(c["message"].split("\n", 1)[0].split()) >= 3
        ]  # fmt: skip
        step = max(1, len(pool) // (BACKGROUND_PER_REPO * 2))
        taken = 0
        for c in pool[::step]:
            if taken >= BACKGROUND_PER_REPO:
                break
            files = cited_symbols(path, c["parents"][0], c["sha"], package)
            if not files:
                continue
            subject, body = clean_message(c["message"])
            if not subject:
                continue
            evidence.append({
                "id": "%s-%s" % (name, c["sha"][:10]), "repo": name, "commit": c["sha"], "kind": "finding",
                "claim": subject, "detail": body or None, "files": files, "role": "background",
            })  # fmt: skip
            taken += 1
        print(
            "%s: %d fix entries, %d queries, %d items (%d background)"
            % (name, n_entries, len([q for q in queries if q["needs"] == name]),
               len([e for e in evidence if e["repo"] == name]), taken),
            file=sys.stderr,
        )  # fmt: skip
    # Queries whose text is word for word another's answer the same change: keep the first.
    seen, kept = set(), []
    for q in queries:
        key = (q["text"].lower(), tuple(sorted(q["judgements"])))
        if key not in seen:
            seen.add(key)
            kept.append(q)
    corpus = {
        "format": FORMAT,
        "name": "pallets-history",
        "description": "changelog entries of the pallets projects as queries, the commits that "
        "made them as evidence; built by eval/history.py",
        "workspace": WORKSPACE,
        "repos": repos,
        "relations": [{"from": a, "kind": k, "to": b} for a, k, b in RELATIONS],
    }
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "corpus.json"), "w", encoding="utf-8", newline="\n") as fh:
        json.dump(corpus, fh, indent=1, sort_keys=True)
        fh.write("\n")
    for fname, rows in (("evidence.jsonl", evidence), ("queries.jsonl", kept)):
        with open(os.path.join(out_dir, fname), "w", encoding="utf-8", newline="\n") as fh:
            for row in rows:
                fh.write(json.dumps(row, sort_keys=True) + "\n")
    para = sum(1 for q in kept if q["category"] == "paraphrase")
    print("%d items, %d queries (%d paraphrase)" % (len(evidence), len(kept), para), file=sys.stderr)


# -- run --------------------------------------------------------------------------------------


def load(corpus_dir):
    with open(os.path.join(corpus_dir, "corpus.json"), encoding="utf-8") as fh:
        corpus = json.load(fh)
    if corpus.get("format") != FORMAT:
        raise SystemExit("%s: not a %s corpus" % (corpus_dir, FORMAT))
    for fname, key in (("evidence.jsonl", "evidence"), ("queries.jsonl", "queries")):
        with open(os.path.join(corpus_dir, fname), encoding="utf-8") as fh:
            corpus[key] = [json.loads(line) for line in fh if line.strip()]
    # The shape wctx's evaluation functions read (connected_repos, score_query).
    for repo in corpus["repos"]:
        repo["workspaces"] = [corpus["workspace"]]
    return corpus


def build_world(
    wctx,
    corpus,
    repos_dir,
    root,
    say=lambda text: None,
    keys=("kind", "claim", "detail", "repo", "files"),
    sparse=False,
):
    """(store, {wctx id: corpus id}) for the corpus under ``root``: a local clone per repository,
    every item recorded at its commit, oldest first, then every clone at the commit read. With
    ``sparse`` a clone's working tree holds only the files the items cite (checking out a big
    repository's tree at every item's commit costs more than the capture)."""
    paths = {}
    for repo in corpus["repos"]:
        path = os.path.join(root, "repos", repo["name"])
        subprocess.run(
            ["git", "clone", "-q", "--shared", "--no-checkout", os.path.join(repos_dir, repo["name"]), path],
            check=True,
        )
        paths[repo["name"]] = path
        if sparse:
            cited = sorted(
                {
                    f.split("#", 1)[0]
                    for e in corpus["evidence"]
                    if e["repo"] == repo["name"]
                    for f in e["files"]
                }
            )
            subprocess.run(
                [
                    "git",
                    "-C",
                    path,
                    "-c",
                    "core.hooksPath=/dev/null",
                    "sparse-checkout",
                    "set",
                    "--no-cone",
                    "--stdin",
                ],
                input=("\n".join("/" + c for c in cited) + "\n").encode(),
                check=True,
            )
    store = wctx.open_store(home=os.path.join(root, "home"))
    for repo in corpus["repos"]:
        git(paths[repo["name"]], "checkout", "-q", "--detach", repo["commit"])
        wctx.register_repo(store, paths[repo["name"]], name=repo["name"], workspace=corpus["workspace"])
    for rel in corpus["relations"]:
        wctx.relate(store, rel["from"], rel["kind"], rel["to"])
    ids = {}
    order = {}
    for repo in corpus["repos"]:
        shas = git(paths[repo["name"]], "rev-list", "--topo-order", "--reverse", repo["commit"]).split()
        order[repo["name"]] = {s: i for i, s in enumerate(shas)}
    todo = sorted(
        corpus["evidence"], key=lambda e: (e["repo"], order[e["repo"]].get(e["commit"], -1), e["id"])
    )
    for n, ev in enumerate(todo, 1):
        if n % 100 == 0:
            say("recording %d/%d" % (n, len(todo)))
        path = paths[ev["repo"]]
        git(path, "checkout", "-q", "--detach", "--force", ev["commit"])
        out = wctx.capture(
            store,
            [dict({k: ev.get(k) for k in keys}, **({"symptom": ev["symptom"]} if ev.get("symptom") else {}))],
            cwd=path,
            agent="history",
            external_id="history-" + ev["id"],
            # A symbol the corpus names where the locator of the build in use finds none is kept as
            # named (judged by its file), as every earlier world kept it: the worlds stay comparable.
            allow_missing_symbol=True,
        )
        ids[out["evidence"][0]["id"]] = ev["id"]
    for repo in corpus["repos"]:
        git(paths[repo["name"]], "checkout", "-q", "--detach", "--force", repo["commit"])
    return store, ids


SUBSETS = (
    ("all", lambda q: True),
    ("paraphrase (<= 1 shared word)", lambda q: q["category"] == "paraphrase"),
    ("<= 2 shared words", lambda q: q["shared"] <= 2),
    ("asked from another repository", lambda q: q["from"] != q["needs"]),
)


def summarize(wctx, corpus, report):
    """{variant: {subset: metrics}} from a _run_eval_queries report."""
    by_id = {q["id"]: q for q in corpus["queries"]}
    out = {}
    for name, _rank, all_scope in wctx.EVAL_VARIANTS:
        if all_scope:
            continue
        out[name] = {}
        for subset, test in SUBSETS:
            rows = [dict(q["runs"][name]) for q in report["queries"] if test(by_id[q["id"]])]
            out[name][subset] = wctx.summarize_scores(rows)
    return out


def format_summary(summary):
    lines = ["%-32s %-9s %5s %6s %6s %6s %6s %8s %9s %7s" % (
        "subset", "variant", "n", "hit@1", "hit@5", "hit@10", "MRR", "nDCG@10", "recall@10", "attrib")]  # fmt: skip
    subsets = list(next(iter(summary.values())))
    for subset in subsets:
        for variant, by in summary.items():
            o = by[subset]
            lines.append(
                "%-32s %-9s %5d %6.3f %6.3f %6.3f %6.3f %8.3f %9.3f %7.3f"
                % (subset, variant, o["queries"], o["hit@1"], o["hit@5"], o["hit@10"], o["mrr"], o["ndcg@10"],
                   o["recall@10"], o["attribution"])
            )  # fmt: skip
    return "\n".join(lines)


def unchecked(store, rids, **kwargs):
    """freshness_of for a run without --freshness: every item "unknown" (the same mild penalty
    for all, so the order is text and topology alone). Checking items recorded years of history
    ago costs minutes per hundred items."""
    return {rid: {"verdict": "unknown", "reasons": ["not checked in this run"]} for rid in rids}


def run(repos_dir, corpus_dir, limit=10, say=lambda text: None, freshness=False, world=None):
    import wctx

    corpus = load(corpus_dir)
    root = world or tempfile.mkdtemp(prefix="wctx-history-")
    try:
        started = time.perf_counter()
        if world and os.path.exists(os.path.join(world, "ids.json")):
            store = wctx.open_store(home=os.path.join(world, "home"))
            with open(os.path.join(world, "ids.json"), encoding="utf-8") as fh:
                ids = json.load(fh)
        else:
            store, ids = build_world(wctx, corpus, repos_dir, root, say)
            if world:
                with open(os.path.join(world, "ids.json"), "w", encoding="utf-8") as fh:
                    json.dump(ids, fh)
        built = time.perf_counter() - started
        checked = wctx.freshness_of
        try:
            verdicts = {}
            if freshness:
                say("verifying %d items" % len(ids))
                for item in wctx.verify(store, ids=sorted(ids))["items"]:
                    verdicts[item["verdict"]] = verdicts.get(item["verdict"], 0) + 1
            else:
                wctx.freshness_of = unchecked
            report = wctx._run_eval_queries(store, corpus, ids, limit, say)
        finally:
            wctx.freshness_of = checked
            store.close()
    finally:
        if not world:
            shutil.rmtree(root, ignore_errors=True)
    return {
        "corpus": {"items": len(corpus["evidence"]), "queries": len(corpus["queries"])},
        "build_seconds": round(built, 1),
        "verdicts": verdicts,
        "summary": summarize(wctx, corpus, report),
        "queries": report["queries"],
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="write the corpus from the clones in REPOS_DIR")
    b.add_argument("repos_dir")
    b.add_argument("--out", default=OUT)
    r = sub.add_parser("run", help="score both rankings on the corpus")
    r.add_argument("repos_dir")
    r.add_argument("--corpus", default=OUT)
    r.add_argument("--json", action="store_true")
    r.add_argument("--save", help="also write the full report (every query's top results) here")
    r.add_argument("--world", help="build the store and clones here and keep them; reuse them when there")
    r.add_argument("--freshness", action="store_true", help="verify every item (slow) and rank with it")
    args = parser.parse_args(argv)
    if args.command == "build":
        build(args.repos_dir, args.out)
        return 0
    report = run(
        args.repos_dir,
        args.corpus,
        say=lambda text: print(text, file=sys.stderr),
        freshness=args.freshness,
        world=args.world,
    )
    if args.save:
        with open(args.save, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=1)
    if args.json:
        print(json.dumps({k: v for k, v in report.items() if k != "queries"}, indent=1))
    else:
        print(
            "corpus: %d items, %d queries; built in %.1f s; verdicts %s"
            % (
                report["corpus"]["items"],
                report["corpus"]["queries"],
                report["build_seconds"],
                report["verdicts"],
            )
        )
        print(format_summary(report["summary"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
