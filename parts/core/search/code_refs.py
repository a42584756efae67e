from __future__ import annotations

import collections
import os
import re

from .caches import SYMBOL_NAMES
from .errors import WctxError
from .git import GitRepo, UnreadableFile, read_repo_file, repo_relative_path, scan_stopped
from .helpers import is_utf8
from .symbols import (
    _IDENT_RE,
    CONSTRUCTORS,
    _contains_word,
    _mask_source,
    _module_forms,
    _plain,
    code_names,
    language_of,
    locate_symbol,
)

# ----------------------------------------------------------------------------------------------
# Code references: what evidence of related repositories cites of the code this session changes
# ----------------------------------------------------------------------------------------------
# The identifiers in the files the caller's working tree changed (and files named explicitly) are
# facts: matched against the symbols and paths that evidence in related repositories cites, they
# find what another repository learned about the code this session is about to touch. Identifiers
# come from the source with its comments and strings masked, read as the symbols part reads what
# code refers to (code_names), so prose in a comment never matches; module paths are matched in
# the raw text (imports are strings in many languages).

CODE_REF_MAX_FILES = 40  # changed files read per call, in path order
CODE_REF_MAX_BYTES = 512 * 1024  # larger files are skipped (generated code, bundles)
CODE_REF_MIN_NAME = 4  # a cited symbol shorter than this ("get", "run") matches too much
CODE_REF_MAX_ANCHORS = 200000  # cited symbols and paths read per call (a bound, not a sample)
CODE_REF_COMMON_NAME = 5  # a method name this short (close, read, send) is every class's

# ``item_repo`` is the repository the item is about, ``cited_repo`` the one whose code it cites.
CodeReference = collections.namedtuple(
    "CodeReference", "rid local_path local_status how name cited_repo cited_spec evidence_id kind item_repo"
)


def _names_the_cited_symbol(names, name, owner, text, rel):
    """Whether a working file that names ``name`` means the cited ``owner.name`` (or ``name``).

    Facts: the name's form (a dunder such as __call__ is a protocol every class implements), its
    length, the class it belongs to and how the file reaches it, whether the file defines the
    name itself. Rule: a dunder never matches; a name the file defines is the file's own; a
    method whose name is CODE_REF_COMMON_NAME characters or shorter (close, send) matches only
    when called on its class or on a receiver named after it (pool.close for Pool.close), as the
    class being named elsewhere in the file says nothing about which close is called; any other
    method matches when its class is named or is the receiver (CodeNames.reaches)."""
    if name.startswith("__") and name.endswith("__"):
        return False
    if owner is not None and len(name) <= CODE_REF_COMMON_NAME:
        if _plain(owner) not in names.receivers.get(name, ()):
            return False
    elif not names.reaches(name, owner):
        return False
    return locate_symbol(text, rel, name) is None


@SYMBOL_NAMES
def _symbol_name(symbol):
    """(the name code calls a cited symbol by, its class or None): Context.invoke -> ("invoke",
    "Context"); a constructor is called by its class (Pool.__init__ -> ("Pool", "Pool")). The
    name is None when too short to match on ("get", "run") or not an identifier."""
    parts = [p for p in re.split(r"[.#:]+", symbol) if p]
    if not parts:
        return None, None
    owner = parts[-2] if len(parts) > 1 else None
    name = owner if owner and parts[-1] in CONSTRUCTORS else parts[-1]
    if len(name) < CODE_REF_MIN_NAME or not _IDENT_RE.fullmatch(name):
        return None, owner
    return name, owner


def working_files(origin, files=(), cwd=None):
    """[(repo-relative path, status)]: the files ``origin``'s working tree changed, then ``files``
    (paths relative to ``cwd`` or the repository, status "given"); each once, in that order."""
    out, seen = [], set()
    for path in files or ():
        rel, _ = repo_relative_path(origin.path, path, cwd=cwd)
        if rel not in seen:
            seen.add(rel)
            out.append((rel, "given"))
    changed = []
    if os.path.isdir(origin.path):
        try:
            changed = GitRepo(origin.path).changed_paths()
        except WctxError:
            changed = []
    for rel, status in sorted(changed):
        if status != "deleted" and rel not in seen and is_utf8(rel):
            seen.add(rel)
            out.append((rel, status))
    return out


def code_references(store, origin, scope_ids, files=(), cwd=None, where=(), params=()):
    """Evidence in ``scope_ids`` (other than ``origin``'s own code) whose cited symbols the working
    files call or use, or whose cited files they import. Returns [CodeReference], one per
    evidence item (its first match), in working-file order, newest evidence first within a file."""
    if origin is None:
        return []
    work = working_files(origin, files, cwd)[:CODE_REF_MAX_FILES]
    stopped = scan_stopped(origin.path)
    if stopped:
        store.notice("untracked files of %s left out of this answer: %s" % (origin.name, stopped))
    others = [rid for rid in scope_ids if rid != origin.id]
    if not work or not others:
        return []
    texts = _working_texts(origin, work)
    if not texts:
        return []
    idents = sorted(
        {w for _, _, _, code in texts for w in _IDENT_RE.findall(code) if len(w) >= CODE_REF_MIN_NAME}
    )
    by_name, by_form = _cited_anchors(store, others, idents)
    if not by_name and not by_form:
        return []
    hits = _reference_hits(texts, by_name, by_form)
    return _first_references(texts, hits, _hit_evidence(store, hits, scope_ids, where, params))


def _working_texts(origin, work):
    """[(rel, status, raw text, code with comments and strings masked)] of the working files
    ``work`` that are readable source."""
    texts = []  # (rel, status, raw text, code with comments and strings masked)
    for rel, status in work:
        try:
            data = read_repo_file(origin.path, rel, limit=CODE_REF_MAX_BYTES)
        except UnreadableFile:  # a FIFO, a device, a symlink out, a bundle: not source to read
            continue
        if data is None or b"\0" in data[:8192]:
            continue
        text = data.decode("utf-8", "replace")
        language = language_of(rel)
        texts.append((rel, status, text, _mask_source(text, language) if language else text))
    return texts


def _cited_anchors(store, others, idents):
    """({symbol name: [anchor row]}, {module form: [anchor row]}) of the repositories ``others``:
    the cited symbols named among ``idents``, and the files cited without a symbol."""
    # The cited symbols the working files name, read in SQL (plain names by equality, qualified
    # ones filtered here), and the files cited without a symbol: plain tuples, no join, no sort
    # (at 10,000 items a join and sort over every anchor cost more than the rest of the briefing).
    by_name, by_form = {}, {}
    cursor = store.db.cursor()
    cursor.row_factory = None
    columns = (
        "SELECT symbol, path, repo_name, evidence_rid FROM anchors WHERE path IS NOT NULL AND repo_id IN (%s)"
    )
    for i in range(0, len(others), 200):
        repos = others[i : i + 200]
        marks = ",".join("?" * len(repos))
        queries = [
            (columns % marks + " AND symbol IN (%s)" % ",".join("?" * len(chunk)), repos + chunk)
            for chunk in (idents[j : j + 500] for j in range(0, len(idents), 500))
        ]
        queries.append(
            (columns % marks + " AND (instr(symbol, '.') OR instr(symbol, ':') OR instr(symbol, '#'))", repos)
        )
        for sql, args in queries:
            for a in cursor.execute(sql, args):
                name, _ = _symbol_name(a[0])  # evidence about one symbol: only code that names it
                if name:
                    by_name.setdefault(name, []).append(a)
        # Evidence about a whole file: code that imports it. One row per cited file.
        for path, repo_name, rids in cursor.execute(
            "SELECT path, repo_name, group_concat(evidence_rid) FROM anchors WHERE path IS NOT NULL "
            "AND symbol IS NULL AND repo_id IN (%s) GROUP BY repo_id, path LIMIT %d"
            % (marks, CODE_REF_MAX_ANCHORS),
            repos,
        ):
            forms = _module_forms(path)
            if forms:
                cited = [(None, path, repo_name, int(rid)) for rid in rids.split(",")]
                for form in forms:
                    by_form.setdefault(form, []).extend(cited)
    return by_name, by_form


def _reference_hits(texts, by_name, by_form):
    """[(rel, status, anchor, how, name)]: where the working files call, use or import what is cited."""
    hits = []  # (rel, status, anchor, how, name)
    for rel, status, text, code in texts:
        names = code_names(code)
        for name in sorted(names.named & set(by_name)):
            how = "calls" if name in names.called else "uses"
            for a in by_name[name]:
                if _names_the_cited_symbol(names, name, _symbol_name(a[0])[1], text, rel):
                    hits.append((rel, status, a, how, name))
        for form, cited in sorted(by_form.items()):
            if _contains_word(text, form):
                hits.extend((rel, status, a, "imports", form) for a in cited)
    return hits


def _hit_evidence(store, hits, scope_ids, where, params):
    """{rid: evidence row} of the items ``hits`` cite, in scope and passing ``where``."""
    rids = sorted({h[2][3] for h in hits})
    evidence = {}
    clause = (" AND " + " AND ".join(where)) if where else ""
    for i in range(0, len(rids), 500):
        chunk = rids[i : i + 500]
        for row in store.all(
            "SELECT e.rid, e.id, e.kind, e.created_at, e.repo_name FROM evidence e WHERE e.rid IN (%s) AND e.repo_id IN (%s)%s"
            % (",".join("?" * len(chunk)), ",".join("?" * len(scope_ids)), clause),
            chunk + list(scope_ids) + list(params),
        ):
            evidence[row["rid"]] = row
    return evidence


def _first_references(texts, hits, evidence):
    """One CodeReference per item (its first match), in working-file order."""
    found, taken = [], set()
    for rel, status, _, _ in texts:
        # Symbol matches before import matches, newest evidence first within each.
        matches = sorted(
            (h for h in hits if h[0] == rel and h[2][3] in evidence),
            key=lambda h: (h[3] != "imports", evidence[h[2][3]]["created_at"] or "", h[2][3]),
            reverse=True,
        )
        for _, _, (symbol, path, cited_repo, rid), how, name in matches:
            if rid in taken:
                continue
            taken.add(rid)
            e = evidence[rid]
            spec = path + ("#" + symbol if symbol else "")
            found.append(
                CodeReference(
                    rid, rel, status, how, name, cited_repo, spec, e["id"], e["kind"], e["repo_name"]
                )
            )
    return found
