#!/usr/bin/env python3
"""Freshness benchmark: how often does a wctx stale warning point at something that really changed?

At revision T0 (checked out in a temporary ``git worktree`` of the repository) the benchmark picks
functions, classes and methods across the repository, and records one finding per symbol citing
``path#symbol`` through wctx's real capture path (``wctx.capture`` into a temporary ``WCTX_HOME``,
the worktree registered as a repository). It then moves the worktree to T1 and runs
``wctx.verify``. Each verdict is compared with an independent oracle of whether the cited symbol's
text really changed between T0 and T1:

- Python: the ``ast`` module's node extents (decorators included);
- other languages: tree-sitter grammars from PyPI (a benchmark-only dependency,
  ``pip install -e .[bench]``), never wctx's own heuristic.

The same comparison is made for a file-level baseline that flags a finding whenever its file
changed (following renames as wctx does), which is what peers without symbol anchors do.

``--kinds declarations`` cites, instead of functions, classes and methods, the other definitions a
user cites (constants, variables, fields, type aliases, enum members, macros, ``impl`` items), as
``bench/symbol_coverage.py``'s parser lists them.

Usage::

    python3 bench/freshness.py --repo PATH --t0 REV --t1 REV [--json] [--max-symbols N] [--kinds declarations]

Metrics, overall and per language: flagged share, precision, recall, alerts per real catch
(flagged / true catches), count of ``unknown``, and run time. ``stale`` and ``possibly_stale``
both count as an alert: both tell the reader to distrust the finding.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import OrderedDict, defaultdict
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# ---------------------------------------------------------------------------------------------
# Languages
# ---------------------------------------------------------------------------------------------

#: file extension -> language label used in the report
EXTENSIONS = {
    ".py": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".cs": "csharp",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".rb": "ruby",
    ".php": "php",
    ".swift": "swift",
}

#: language -> (module, function returning the grammar) for tree-sitter
GRAMMARS = {
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "kotlin": ("tree_sitter_kotlin", "language"),
    "csharp": ("tree_sitter_c_sharp", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "php": ("tree_sitter_php", "language_php"),
    "swift": ("tree_sitter_swift", "language"),
}

#: files larger than this are skipped (generated parsers, minified bundles, vendored blobs)
MAX_FILE_BYTES = 400_000

# Tree-sitter node types that define a symbol worth citing, per language, and the node types
# that are containers (their members get a qualified name ``Outer.inner``). Symbols nested
# inside function bodies are not cited: nobody anchors a finding to a closure.
DEFINITIONS = {
    "javascript": {
        "function_declaration",
        "generator_function_declaration",
        "class_declaration",
        "method_definition",
        "variable_declarator",
    },
    "typescript": {
        "function_declaration",
        "generator_function_declaration",
        "class_declaration",
        "abstract_class_declaration",
        "method_definition",
        "variable_declarator",
        "interface_declaration",
        "enum_declaration",
        "type_alias_declaration",
    },
    "go": {"function_declaration", "method_declaration", "type_spec"},
    "rust": {"function_item", "struct_item", "enum_item", "trait_item", "union_item"},
    "java": {
        "class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "method_declaration",
        "annotation_type_declaration",
    },
    "kotlin": {"class_declaration", "object_declaration", "function_declaration"},
    "csharp": {
        "class_declaration",
        "struct_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "method_declaration",
    },
    "c": {"function_definition", "struct_specifier", "union_specifier", "enum_specifier"},
    "cpp": {
        "function_definition",
        "class_specifier",
        "struct_specifier",
        "union_specifier",
        "enum_specifier",
    },
    "ruby": {"method", "singleton_method", "class", "module"},
    "php": {
        "function_definition",
        "class_declaration",
        "method_declaration",
        "interface_declaration",
        "trait_declaration",
        "enum_declaration",
    },
    # Swift: extensions are class_declaration nodes too (named by their type, so a type with an
    # extension counts as defined twice and is left out, as wctx joins both)
    "swift": {
        "class_declaration",
        "function_declaration",
        "protocol_declaration",
        "protocol_function_declaration",
    },
}
DEFINITIONS["tsx"] = DEFINITIONS["typescript"]

CONTAINERS = {
    "javascript": {"class_declaration", "class"},
    "typescript": {"class_declaration", "abstract_class_declaration", "class", "internal_module"},
    "go": set(),
    "rust": {"impl_item", "trait_item", "mod_item"},
    "java": {"class_declaration", "interface_declaration", "enum_declaration", "record_declaration"},
    "kotlin": {"class_declaration", "object_declaration", "companion_object"},
    "csharp": {"class_declaration", "struct_declaration", "interface_declaration", "record_declaration"},
    "c": set(),
    "cpp": {"class_specifier", "struct_specifier"},
    "ruby": {"class", "module"},
    "php": {"class_declaration", "interface_declaration", "trait_declaration", "enum_declaration"},
    "swift": {"class_declaration", "protocol_declaration"},
}
CONTAINERS["tsx"] = CONTAINERS["typescript"]

# Nodes we descend through without starting a new name scope (wrappers, bodies, namespaces).
TRANSPARENT = {
    "program",
    "source_file",
    "translation_unit",
    "compilation_unit",
    "module",
    "export_statement",
    "class_body",
    "declaration_list",
    "field_declaration_list",
    "body_statement",
    "statement_block",
    "lexical_declaration",
    "variable_declaration",
    "type_declaration",
    "template_declaration",
    "namespace_definition",
    "namespace_declaration",
    "file_scoped_namespace_declaration",
    "linkage_specification",
    "enum_class_body",
    "interface_body",
    "enum_body",
    "expression_statement",
    "internal_module",
    "ambient_declaration",
    "decorated_definition",
    "preproc_ifdef",
    "preproc_if",
    "preproc_else",
    "preproc_elif",
    "preproc_def",
    "annotated_declaration",
    "compound_statement",  # a PHP namespace's braces (function bodies are never walked)
}


def normalise(text: bytes) -> bytes:
    """What a reader cannot see does not count as a change: CRLF versus LF line endings and
    trailing blanks. Everything else (indentation, comments inside the body) does."""
    return b"\n".join(line.rstrip() for line in text.replace(b"\r\n", b"\n").split(b"\n"))


class OracleUnavailable(Exception):
    """The parser for a language is not installed."""


class Oracle:
    """Independent ground truth: the exact source text of each named definition in a file."""

    def __init__(self, kinds: str = "functions") -> None:
        self._parsers: Dict[str, object] = {}
        self.missing: Dict[str, str] = {}
        self.kinds = kinds

    def available(self, language: str) -> bool:
        if language == "python":
            return True
        try:
            self._parser(language)
            return True
        except OracleUnavailable:
            return False

    def _parser(self, language: str):
        if language in self._parsers:
            return self._parsers[language]
        if language in self.missing:
            raise OracleUnavailable(self.missing[language])
        module_name, function = GRAMMARS[language]
        try:
            tree_sitter = importlib.import_module("tree_sitter")
            grammar = getattr(importlib.import_module(module_name), function)()
            parser = tree_sitter.Parser(tree_sitter.Language(grammar))
        except Exception as exc:  # ImportError, or an ABI mismatch between binding and grammar
            self.missing[language] = "%s: %s" % (module_name, exc)
            raise OracleUnavailable(self.missing[language]) from exc
        self._parsers[language] = parser
        return parser

    def symbols(self, language: str, source: bytes) -> Tuple[Dict[str, bytes], set]:
        """Return ({qualified name: definition text}, {names defined more than once})."""
        if self.kinds == "declarations":
            return declaration_symbols(self, language, source)
        if language == "python":
            return python_symbols(source)
        tree = self._parser(language).parse(source)
        found: Dict[str, List[bytes]] = defaultdict(list)
        broken: set = set()
        _walk(language, tree.root_node, [], found, broken, source)
        duplicates = {name for name, texts in found.items() if len(texts) > 1} | broken
        return {name: texts[0] for name, texts in found.items()}, duplicates


def declaration_symbols(oracle: Oracle, language: str, source: bytes) -> Tuple[Dict[str, bytes], set]:
    """The definitions beside functions and classes (constants, variables, fields, type aliases,
    enum members, macros, impl and trait items, nested classes), as bench/symbol_coverage.py's
    parser lists them, each cited as a user would (``Type::item`` in Rust)."""
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    import symbol_coverage

    if language == "python":
        definitions = symbol_coverage.python_definitions(source) or []
    else:
        oracle._parser(language)  # OracleUnavailable when the grammar is not installed
        definitions = symbol_coverage.TreeSitter().definitions(language, "", source)
    lines = source.split(b"\n")
    found: Dict[str, List[bytes]] = defaultdict(list)
    extents = defaultdict(set)
    for parts, kind, first, last in definitions:
        name = symbol_coverage.citation(language, parts)
        extents[name].add((first, last))
        if kind not in symbol_coverage.CALLABLE_KINDS:
            found[name].append(b"\n".join(lines[first - 1 : last]))
    duplicates = {name for name in found if len(extents[name]) > 1}
    return {name: texts[0] for name, texts in found.items()}, duplicates


def python_symbols(source: bytes) -> Tuple[Dict[str, bytes], set]:
    """Module-level and class-level functions and classes, decorators included, via ``ast``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}, set()
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    found: Dict[str, List[bytes]] = defaultdict(list)

    def visit(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                start = offsets[first - 1]
                end = offsets[node.end_lineno - 1] + node.end_col_offset
                name = prefix + node.name
                found[name].append(source[start:end])
                if isinstance(node, ast.ClassDef):
                    visit(node.body, name + ".")
            elif isinstance(node, (ast.If, ast.Try)):
                # definitions under `if TYPE_CHECKING:` / `try: import` fallbacks stay module-level
                visit(node.body, prefix)
                visit(node.orelse, prefix)
                for handler in getattr(node, "handlers", []):
                    visit(handler.body, prefix)

    visit(tree.body, "")
    duplicates = {name for name, texts in found.items() if len(texts) > 1}
    return {name: texts[0] for name, texts in found.items()}, duplicates


def _text(node, source: bytes) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _declarator_name(node, source: bytes) -> Optional[str]:
    """Name of a C/C++ function definition: ``f`` or ``Class.method`` for ``Class::method``."""
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type not in ("function_declarator",):
        declarator = declarator.child_by_field_name("declarator")
    if declarator is None:
        return None
    inner = declarator.child_by_field_name("declarator")
    if inner is None:
        return None
    if inner.type in ("identifier", "field_identifier"):
        return _text(inner, source)
    if inner.type == "qualified_identifier":
        text = _text(inner, source).replace(" ", "")
        if "<" in text or "operator" in text or "~" in text:
            return None
        return text.replace("::", ".").lstrip(".")
    return None


def _name(language: str, node, source: bytes) -> Optional[str]:
    kind = node.type
    if language in ("c", "cpp") and kind == "function_definition":
        return _declarator_name(node, source)
    if language in ("c", "cpp") and kind in (
        "struct_specifier",
        "class_specifier",
        "union_specifier",
        "enum_specifier",
    ):
        if node.child_by_field_name("body") is None:
            return None  # a use of the type, not its definition
    if language in ("javascript", "typescript", "tsx") and kind == "variable_declarator":
        value = node.child_by_field_name("value")
        if value is None or value.type not in (
            "arrow_function",
            "function_expression",
            "function",
            "class",
            "generator_function",
        ):
            return None
    if language == "go" and kind == "method_declaration":
        receiver = node.child_by_field_name("receiver")
        name = node.child_by_field_name("name")
        if receiver is None or name is None:
            return None
        rtype = _text(receiver, source).strip("()").split()[-1].lstrip("*").split("[")[0]
        return rtype + "." + _text(name, source)
    if language == "ruby" and kind == "singleton_method":
        name = node.child_by_field_name("name")
        return _text(name, source) if name is not None else None
    name = node.child_by_field_name("name")
    if name is None:
        for child in node.named_children:  # kotlin grammars do not always label the name field
            if child.type in ("identifier", "simple_identifier", "type_identifier", "constant"):
                name = child
                break
    if name is None:
        return None
    text = _text(name, source)
    if language == "ruby" and "::" in text:
        text = text.split("::")[-1]
    if not text or not (text[0].isalpha() or text[0] in "_$"):
        return None
    return text


def _container_name(language: str, node, source: bytes) -> Optional[str]:
    if language == "rust" and node.type == "impl_item":
        type_node = node.child_by_field_name("type")
        if type_node is None:
            return None
        text = _text(type_node, source).split("<")[0].split("::")[-1].strip()
        return text if text.isidentifier() else None
    if node.type == "companion_object":
        return None  # members of a companion are addressed through the class
    return _name(language, node, source)


def _walk(language, node, prefix, found, broken, source):
    for child in node.named_children:
        kind = child.type
        if kind in DEFINITIONS[language]:
            name = _name(language, child, source)
            if name and all(part.isidentifier() for part in name.rstrip("?!=").split(".")):
                qualified = ".".join(prefix + [name])
                if child.has_error:
                    broken.add(qualified)
                found[qualified].append(source[child.start_byte : child.end_byte])
                if kind in CONTAINERS[language]:
                    _walk(language, child, prefix + [name], found, broken, source)
                elif language in ("javascript", "typescript", "tsx") and kind == "variable_declarator":
                    value = child.child_by_field_name("value")
                    if value is not None and value.type == "class":
                        _walk(language, value, prefix + [name], found, broken, source)
            continue
        if kind in CONTAINERS[language]:
            name = _container_name(language, child, source)
            if kind == "companion_object":
                _walk(language, child, prefix, found, broken, source)
            elif name:
                _walk(language, child, prefix + [name], found, broken, source)
            continue
        if kind in TRANSPARENT or kind.endswith("_body") or kind.endswith("_list"):
            _walk(language, child, prefix, found, broken, source)


# ---------------------------------------------------------------------------------------------
# Git
# ---------------------------------------------------------------------------------------------

GIT_SAFE = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "advice.detachedHead=false"]


def git(repo: str, *args: str, input_bytes: Optional[bytes] = None) -> bytes:
    proc = subprocess.run(
        ["git", *GIT_SAFE, "-C", repo, *args],
        input=input_bytes,
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(
            "git %s failed: %s" % (" ".join(args), proc.stderr.decode("utf-8", "replace").strip())
        )
    return proc.stdout


def tree_blobs(repo: str, commit: str) -> Dict[str, str]:
    """path -> blob id of every regular file at ``commit`` (symlinks and submodules skipped)."""
    out = git(repo, "ls-tree", "-r", "-z", "--full-tree", commit)
    blobs = {}
    for entry in out.split(b"\0"):
        if not entry:
            continue
        meta, path = entry.split(b"\t", 1)
        mode, kind, blob = meta.split()
        if kind == b"blob" and mode in (b"100644", b"100755"):
            blobs[path.decode("utf-8", "surrogateescape")] = blob.decode()
    return blobs


def read_blobs(repo: str, blob_ids: List[str]) -> Dict[str, bytes]:
    """Contents of many blobs through one ``git cat-file --batch``."""
    wanted = list(OrderedDict.fromkeys(blob_ids))
    if not wanted:
        return {}
    out = git(repo, "cat-file", "--batch", input_bytes=("\n".join(wanted) + "\n").encode())
    contents, pos = {}, 0
    for blob in wanted:
        eol = out.index(b"\n", pos)
        header = out[pos:eol].split()
        pos = eol + 1
        if len(header) < 3 or header[1] == b"missing":
            continue
        size = int(header[2])
        contents[blob] = out[pos : pos + size]
        pos += size + 1
    return contents


def renames(repo: str, c0: str, c1: str) -> Dict[str, Optional[str]]:
    """old path -> new path (None when deleted), following renames as wctx does (``-M``)."""
    out = git(repo, "diff", "--name-status", "-z", "-M", c0, c1)
    fields = out.split(b"\0")
    moved: Dict[str, Optional[str]] = {}
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i].decode()
        if status[0] in "RC":
            old, new = (
                fields[i + 1].decode("utf-8", "surrogateescape"),
                fields[i + 2].decode("utf-8", "surrogateescape"),
            )
            if status[0] == "R":
                moved[old] = new
            i += 3
        else:
            path = fields[i + 1].decode("utf-8", "surrogateescape")
            if status[0] == "D":
                moved[path] = None
            i += 2
    return moved


# ---------------------------------------------------------------------------------------------
# Benchmark
# ---------------------------------------------------------------------------------------------


def _import_wctx():
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    import wctx  # noqa: E402  (the module under test, from this checkout)

    return wctx


def pick_symbols(candidates: Dict[str, List[dict]], max_symbols: int, seed: int) -> List[dict]:
    """A deterministic sample, round-robin across languages so that small languages are seen."""
    rng = random.Random(seed)
    pools = []
    for language in sorted(candidates):
        pool = sorted(candidates[language], key=lambda s: (s["path"], s["symbol"]))
        rng.shuffle(pool)
        pools.append(pool)
    chosen: List[dict] = []
    while len(chosen) < max_symbols and any(pools):
        for pool in pools:
            if pool and len(chosen) < max_symbols:
                chosen.append(pool.pop())
    return sorted(chosen, key=lambda s: (s["path"], s["symbol"]))


def _metrics(rows: List[dict], flag_key: str) -> dict:
    n = len(rows)
    changed = sum(1 for r in rows if r["changed"])
    flagged = sum(1 for r in rows if r[flag_key])
    caught = sum(1 for r in rows if r[flag_key] and r["changed"])
    return {
        "symbols": n,
        "really_changed": changed,
        "flagged": flagged,
        "flagged_share": round(flagged / n, 4) if n else None,
        "true_alerts": caught,
        "false_alerts": flagged - caught,
        "missed": changed - caught,
        "precision": round(caught / flagged, 4) if flagged else None,
        "recall": round(caught / changed, 4) if changed else None,
        "alerts_per_real_catch": round(flagged / caught, 3) if caught else None,
    }


def run_benchmark(
    repo: str,
    t0: str,
    t1: str,
    max_symbols: int = 2000,
    seed: int = 0,
    languages: Optional[List[str]] = None,
    progress=None,
    changed_files_only: bool = False,
    kinds: str = "functions",
) -> dict:
    """Run the benchmark and return a JSON-able report (see the module docstring).

    ``changed_files_only`` cites only symbols in files that changed between T0 and T1 (following
    renames): the hard cases, where the file-level baseline flags everything."""
    started = time.perf_counter()
    say = progress or (lambda message: None)
    wctx = _import_wctx()
    repo = os.path.realpath(repo)
    c0 = git(repo, "rev-parse", "--verify", t0 + "^{commit}").decode().strip()
    c1 = git(repo, "rev-parse", "--verify", t1 + "^{commit}").decode().strip()
    oracle = Oracle(kinds)
    timings = {}

    # -- the oracle at T0: which symbols exist, with which text -----------------------------------
    phase = time.perf_counter()
    blobs0 = tree_blobs(repo, c0)
    if changed_files_only:
        blobs1_all, moved_all = tree_blobs(repo, c1), renames(repo, c0, c1)
        keep = {p for p in blobs0 if blobs1_all.get(moved_all.get(p, p) or "") != blobs0[p]}
    by_language: Dict[str, List[str]] = defaultdict(list)
    for path in blobs0:
        language = EXTENSIONS.get(os.path.splitext(path)[1].lower())
        if language and (not languages or language in languages):
            if not changed_files_only or path in keep:
                by_language[language].append(path)
    skipped_languages = {}
    for language in list(by_language):
        if not oracle.available(language):
            skipped_languages[language] = oracle.missing.get(language, "no parser")
            del by_language[language]
    paths0 = [p for paths in by_language.values() for p in paths]
    contents0 = read_blobs(repo, [blobs0[p] for p in paths0])
    candidates: Dict[str, List[dict]] = defaultdict(list)
    texts0: Dict[Tuple[str, str], bytes] = {}
    ambiguous = defaultdict(int)
    too_big = 0
    for language, paths in by_language.items():
        for path in paths:
            source = contents0.get(blobs0[path], b"")
            if len(source) > MAX_FILE_BYTES:
                too_big += 1
                continue
            symbols, duplicates = oracle.symbols(language, source)
            ambiguous[language] += len(duplicates)
            for name, text in symbols.items():
                if name in duplicates:
                    continue
                candidates[language].append({"language": language, "path": path, "symbol": name})
                texts0[(path, name)] = text
    chosen = pick_symbols(candidates, max_symbols, seed)
    timings["oracle_t0_s"] = round(time.perf_counter() - phase, 3)
    say("%d candidate symbols, %d chosen" % (sum(len(v) for v in candidates.values()), len(chosen)))

    # -- the oracle at T1: did the cited text change? --------------------------------------------
    phase = time.perf_counter()
    blobs1 = tree_blobs(repo, c1)
    moved = renames(repo, c0, c1)
    new_path = {}
    for path in {s["path"] for s in chosen}:
        target = moved[path] if path in moved else path
        new_path[path] = target if target in blobs1 else None
    contents1 = read_blobs(repo, [blobs1[p] for p in new_path.values() if p])
    symbols1: Dict[str, Tuple[Dict[str, bytes], set]] = {}
    for path, target in new_path.items():
        if target is None:
            continue
        language = (
            EXTENSIONS.get(os.path.splitext(target)[1].lower())
            or EXTENSIONS[os.path.splitext(path)[1].lower()]
        )
        if not oracle.available(language):
            language = EXTENSIONS[os.path.splitext(path)[1].lower()]
        symbols1[path] = oracle.symbols(language, contents1.get(blobs1[target], b""))
    for s in chosen:
        target = new_path[s["path"]]
        s["t1_path"] = target
        s["file_changed"] = target is None or blobs1[target] != blobs0[s["path"]]
        if target is None:
            s["changed"], s["why"] = True, "file deleted"
            continue
        texts1, duplicates1 = symbols1[s["path"]]
        if s["symbol"] not in texts1:
            s["changed"], s["why"] = True, "symbol gone"
        elif s["symbol"] in duplicates1:
            s["changed"], s["why"] = True, "symbol now defined more than once"
        else:
            before, after = texts0[(s["path"], s["symbol"])], texts1[s["symbol"]]
            s["changed"] = normalise(after) != normalise(before)
            if s["changed"]:
                s["why"] = "text differs"
            else:
                s["why"] = (
                    "text identical" if after == before else "only line endings or trailing blanks differ"
                )
    timings["oracle_t1_s"] = round(time.perf_counter() - phase, 3)

    # -- wctx: capture at T0 in a worktree, move it to T1, verify -------------------------------
    scratch = tempfile.mkdtemp(prefix="wctx-freshness-")
    worktree = os.path.join(scratch, "worktree")
    git(repo, "worktree", "add", "--detach", "--quiet", worktree, c0)
    old_home = os.environ.get("WCTX_HOME")
    store = None
    try:
        home = os.path.join(scratch, "home")
        os.environ["WCTX_HOME"] = home
        store = wctx.open_store(home)
        wctx.register_repo(store, worktree, name="bench")
        phase = time.perf_counter()
        ids: List[str] = []
        warnings: List[str] = []
        batch = 200
        for start in range(0, len(chosen), batch):
            items = [
                {
                    "kind": "finding",
                    "claim": "benchmark finding about %s in %s" % (s["symbol"], s["path"]),
                    "repo": "bench",
                    "files": ["%s#%s" % (s["path"], s["symbol"])],
                }
                for s in chosen[start : start + batch]
            ]
            # a symbol the locator cannot find is stored (not refused), so that it is counted
            # as not located at capture instead of ending the run
            result = wctx.capture(
                store,
                items,
                summary="freshness benchmark at %s" % c0[:12],
                cwd=worktree,
                agent="bench",
                allow_missing_symbol=True,
            )
            ids.extend(e["id"] for e in result["evidence"])
            warnings.extend(result.get("warnings", []))
            say("captured %d/%d" % (len(ids), len(chosen)))
        timings["capture_s"] = round(time.perf_counter() - phase, 3)
        if len(ids) != len(chosen):
            raise SystemExit("capture returned %d ids for %d items" % (len(ids), len(chosen)))
        located = _located_at_capture(wctx, store, ids)
        for s, evidence_id in zip(chosen, ids):
            s["id"] = evidence_id
            s["located"] = located[evidence_id]

        git(worktree, "checkout", "--detach", "--quiet", c1)
        phase = time.perf_counter()
        verdicts = {item["id"]: item for item in wctx.verify(store, repo="bench")["items"]}
        timings["verify_s"] = round(time.perf_counter() - phase, 3)
    finally:
        if store is not None:
            store.close()
        if old_home is None:
            os.environ.pop("WCTX_HOME", None)
        else:
            os.environ["WCTX_HOME"] = old_home
        subprocess.run(
            ["git", *GIT_SAFE, "-C", repo, "worktree", "remove", "--force", worktree],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        shutil.rmtree(scratch, ignore_errors=True)
        subprocess.run(
            ["git", *GIT_SAFE, "-C", repo, "worktree", "prune"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )

    for s in chosen:
        item = verdicts.get(s["id"], {})
        s["verdict"] = item.get("verdict", "missing")
        s["reasons"] = item.get("reasons", [])
        s["wctx_flag"] = s["verdict"] in ("stale", "possibly_stale")
        s["baseline_flag"] = s["file_changed"]

    report = {
        "repo": repo,
        "t0": c0,
        "t1": c1,
        "scope": ("symbols in changed files only" if changed_files_only else "all symbols")
        + ("" if kinds == "functions" else ", kinds: " + kinds),
        "symbols_available": {lang: len(v) for lang, v in sorted(candidates.items())},
        "symbols_cited": len(chosen),
        "ambiguous_names_skipped": dict(sorted(ambiguous.items())),
        "files_too_big_skipped": too_big,
        "languages_without_oracle": skipped_languages,
        "overall": _summarise(chosen),
        "per_language": {
            lang: _summarise([s for s in chosen if s["language"] == lang])
            for lang in sorted({s["language"] for s in chosen})
        },
        "misses": [_example(s) for s in chosen if s["changed"] and not s["wctx_flag"]][:25],
        "false_alerts": [_example(s) for s in chosen if s["wctx_flag"] and not s["changed"]][:25],
        "capture_warnings": len(warnings),
        "timings": timings,
    }
    report["timings"]["total_s"] = round(time.perf_counter() - started, 3)
    return report


def _located_at_capture(wctx, store, ids: List[str]) -> Dict[str, bool]:
    """Whether wctx stored a symbol hash for each item (its heuristic found the symbol).

    One query over the store's anchors; ``get_evidence`` per item says the same but also computes
    live freshness, which costs git calls per item. Falls back to it if the schema moved."""
    try:
        rows = store.all(
            "SELECT e.id AS id, MAX(a.symbol_hash IS NOT NULL) AS located FROM evidence e "
            "JOIN anchors a ON a.evidence_rid = e.rid GROUP BY e.id"
        )
        found = {row["id"]: bool(row["located"]) for row in rows}
        if all(i in found for i in ids):
            return found
    except Exception:  # noqa: BLE001 - an internal schema change: take the public path
        pass
    return {i: any(a.get("symbol_hash") for a in wctx.get_evidence(store, i).get("anchors", [])) for i in ids}


def _summarise(rows: List[dict]) -> dict:
    verdicts = defaultdict(int)
    for r in rows:
        verdicts[r["verdict"]] += 1
    wctx_metrics = _metrics(rows, "wctx_flag")
    wctx_metrics["verdicts"] = dict(sorted(verdicts.items()))
    wctx_metrics["unknown"] = verdicts.get("unknown", 0)
    wctx_metrics["not_located_at_capture"] = sum(1 for r in rows if not r["located"])
    return {"wctx": wctx_metrics, "file_baseline": _metrics(rows, "baseline_flag")}


def _example(s: dict) -> dict:
    return {
        "citation": "%s#%s" % (s["path"], s["symbol"]),
        "language": s["language"],
        "oracle": s["why"],
        "verdict": s["verdict"],
        "located_at_capture": s["located"],
        "reasons": s["reasons"][:3],
    }


# ---------------------------------------------------------------------------------------------
# Synthetic edits on real code (--mutate)
# ---------------------------------------------------------------------------------------------

LINE_COMMENT = {"python": "#", "ruby": "#"}


def mutate(repo: str, t0: str, edits: int, seed: int, scratch: str, languages=None) -> Tuple[str, str, str]:
    """Clone ``repo`` at ``t0`` into ``scratch`` and commit ``edits`` random line edits on top.

    An edit picks a random line of a random source file (weighted by size) and either inserts a
    comment line after it or changes one digit on it. Neither looks at symbols: where the edit
    lands (inside a function, between two, in a class body) is chance, which is what makes it a
    fair test of extents. Returns (clone path, t0 sha, t1 sha). Labelled synthetic in reports."""
    rng = random.Random(seed)
    clone = os.path.join(scratch, "mutated")
    subprocess.run(
        ["git", *GIT_SAFE, "clone", "--quiet", "--no-checkout", "--shared", repo, clone], check=True
    )
    c0 = git(repo, "rev-parse", "--verify", t0 + "^{commit}").decode().strip()
    git(clone, "checkout", "--quiet", "--detach", c0)
    files = []
    for path in sorted(tree_blobs(clone, c0)):
        language = EXTENSIONS.get(os.path.splitext(path)[1].lower())
        if language and (not languages or language in languages):
            full = os.path.join(clone, path)
            if os.path.getsize(full) <= MAX_FILE_BYTES:
                files.append((path, language))
    texts = {}
    for path, _ in files:
        with open(os.path.join(clone, path), "rb") as fh:
            texts[path] = fh.read().split(b"\n")
    weights = [len(texts[p]) for p, _ in files]
    for number in range(edits):
        if not files:
            break
        path, language = rng.choices(files, weights=weights)[0]
        lines = texts[path]
        at = rng.randrange(len(lines))
        line = lines[at]
        digits = [i for i, ch in enumerate(line) if 48 <= ch <= 57]
        if digits and rng.random() < 0.4:
            i = rng.choice(digits)
            lines[at] = line[:i] + str((line[i] - 48 + 1) % 10).encode() + line[i + 1 :]
        elif not line.rstrip().endswith(b"\\"):
            indent = line[: len(line) - len(line.lstrip())]
            marker = LINE_COMMENT.get(language, "//")
            lines.insert(at + 1, indent + ("%s benchmark edit %d" % (marker, number)).encode())
    for path in texts:
        with open(os.path.join(clone, path), "wb") as fh:
            fh.write(b"\n".join(texts[path]))
    identity = [
        "-c",
        "user.name=freshness bench",
        "-c",
        "user.email=bench@example.invalid",
        "-c",
        "commit.gpgsign=false",
    ]
    git(clone, "add", "-A")
    subprocess.run(
        ["git", *GIT_SAFE, *identity, "-C", clone, "commit", "--quiet", "-m", "synthetic edits"], check=True
    )
    c1 = git(clone, "rev-parse", "HEAD").decode().strip()
    return clone, c0, c1


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------


def _fmt(value, digits=3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return ("%." + str(digits) + "f") % value
    return str(value)


def format_report(report: dict) -> str:
    lines = [
        "Freshness benchmark: %s  %s"
        % (report["repo"], report.get("history") or report["t0"][:12] + ".." + report["t1"][:12]),
        "%d symbols cited (of %d available, %s); an alert is a stale or possibly_stale verdict"
        % (report["symbols_cited"], sum(report["symbols_available"].values()), report["scope"]),
        "",
    ]
    header = (
        "language",
        "n",
        "changed",
        "method",
        "flagged%",
        "precision",
        "recall",
        "alerts/catch",
        "unknown",
        "unlocated",
    )
    rows = [header]
    groups = list(report["per_language"].items()) + [("ALL", report["overall"])]
    for language, group in groups:
        for method in ("wctx", "file_baseline"):
            m = group[method]
            rows.append(
                (
                    language if method == "wctx" else "",
                    str(m["symbols"]) if method == "wctx" else "",
                    str(m["really_changed"]) if method == "wctx" else "",
                    "wctx" if method == "wctx" else "file-level",
                    _fmt(100 * m["flagged_share"], 1) if m["flagged_share"] is not None else "-",
                    _fmt(m["precision"]),
                    _fmt(m["recall"]),
                    _fmt(m["alerts_per_real_catch"], 2),
                    str(m.get("unknown", "")),
                    str(m.get("not_located_at_capture", "")),
                )
            )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        lines.append(
            "  ".join(
                cell.ljust(widths[i]) if i < 4 else cell.rjust(widths[i]) for i, cell in enumerate(r)
            ).rstrip()
        )
    lines.append("")
    t = report["timings"]
    lines.append(
        "time: total %.1fs (oracle %.1fs + %.1fs, capture %.1fs, verify %.1fs)"
        % (t["total_s"], t["oracle_t0_s"], t["oracle_t1_s"], t.get("capture_s", 0), t.get("verify_s", 0))
    )
    if report["languages_without_oracle"]:
        lines.append(
            "skipped (no parser installed; pip install -e .[bench]): "
            + ", ".join(sorted(report["languages_without_oracle"]))
        )
    for title, key in (("missed real changes", "misses"), ("false alerts", "false_alerts")):
        if report[key]:
            lines.append("%s (first %d):" % (title, len(report[key])))
            for ex in report[key]:
                lines.append(
                    "  %s  oracle: %s; wctx: %s%s"
                    % (
                        ex["citation"],
                        ex["oracle"],
                        ex["verdict"],
                        "" if ex["located_at_capture"] else " (symbol not located at capture)",
                    )
                )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", required=True, help="path of a git repository")
    parser.add_argument("--t0", required=True, help="revision at which findings are captured")
    parser.add_argument("--t1", help="revision at which they are verified (or use --mutate)")
    parser.add_argument(
        "--mutate",
        type=int,
        metavar="N",
        help="synthetic history: verify against T0 plus N random line edits (in a temporary clone)",
    )
    parser.add_argument(
        "--changed-files-only",
        action="store_true",
        help="cite only symbols of files that changed between T0 and T1 (the hard cases)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--max-symbols", type=int, default=2000, help="cite at most N symbols (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    parser.add_argument("--language", action="append", help="only this language (repeatable)")
    parser.add_argument(
        "--kinds",
        choices=("functions", "declarations"),
        default="functions",
        help="cite functions, classes and methods (default), or the other declarations",
    )
    args = parser.parse_args(argv)
    if (args.t1 is None) == (args.mutate is None):
        parser.error("give exactly one of --t1 REV and --mutate N")
    progress = (lambda m: print(m, file=sys.stderr)) if sys.stderr.isatty() else None
    scratch = tempfile.mkdtemp(prefix="wctx-freshness-mutate-") if args.mutate is not None else None
    try:
        repo, t0, t1 = args.repo, args.t0, args.t1
        if scratch is not None:
            repo, t0, t1 = mutate(args.repo, args.t0, args.mutate, args.seed, scratch, args.language)
        report = run_benchmark(
            repo,
            t0,
            t1,
            max_symbols=args.max_symbols,
            seed=args.seed,
            languages=args.language,
            progress=progress,
            changed_files_only=args.changed_files_only,
            kinds=args.kinds,
        )
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    if scratch is not None:
        report["repo"] = os.path.realpath(args.repo)
        report["history"] = "synthetic: %d random line edits on top of %s (seed %d)" % (
            args.mutate,
            t0[:12],
            args.seed,
        )
    else:
        report["history"] = "real: %s..%s" % (report["t0"][:12], report["t1"][:12])
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=False))
    else:
        print(format_report(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
