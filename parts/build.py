#!/usr/bin/env python3
"""Join the parts of wctx into the two files users drop in: wctx.py and wctx_mcp.py.

Standard library only. The parts are listed in dependency order in parts/MANIFEST; each part
opens with the imports it takes from the parts above it (its visible list of dependencies) and
the build joins them into one module, as SQLite's sqlite3.c is joined from its sources:

    python3 parts/build.py                  # rewrite wctx.py and wctx_mcp.py from the parts
    python3 parts/build.py --check          # exit 1 if either file is not what the parts give
    python3 parts/build.py --where wctx.py:1234   # the part and line behind a traceback's line
    python3 parts/build.py --same-code-as OLD.py  # a refactor's moved, added and removed code
    python3 parts/build.py --fix-headers    # rewrite the parts' import headers from what they read

The build refuses (one line each, nothing written):
- a part that imports from a part below it, or from a part of the other file;
- a name imported from a part that does not define it at its top level;
- a standard-library import in a part that the file's head part does not make;
- a top-level name defined twice in one output file;
- a name in ``__all__`` that the file does not define;
- a private name (a leading underscore) that a part takes from another part: what crosses parts
  is public (PRIVATE_IMPORTS_LEFT lists those not renamed yet);
- a name of wctx.py outside its ``__all__`` that the MCP server's parts read from the core module
  (``CORE.name``, ``core.name``, ``self.core.name``): the server takes only the library surface.

In the joined file, a part's import header is left out (the names are module globals there) and a
``# part: parts/...`` line marks where each part starts.
"""

import argparse
import ast
import bisect
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MANIFEST = os.path.join(HERE, "MANIFEST")
PART_MARK = "# part: "


class BuildError(Exception):
    pass


# Private names parts still take from other parts, until each is renamed at its definition and
# uses (no other private import is built). Shrink it; never add to it.
PRIVATE_IMPORTS_LEFT = frozenset(
    """
    _ABBREVIATIONS_OF _COMMA_MEMBERS _EVENT_INSERT _EXPANSIONS_OF _FTS_INSERT _IDENT_RE
    _INDEX_TOKENS _PY_PIECES _RECEIVER_RE _cache_key _cache_rows _check_confidence
    _connect_readonly _contains_word _evidence_rows _event_row _file_kind _forget_rows _fts_code
    _fts_paths _fts_symbols _git_refusal _insert_dependencies _lazy_pattern _load_anchors
    _load_histories _log _mask_source _module_forms _ordered_action _parse_file_spec _plain _plural
    _python_assigned_names _python_parse _relation_label _repo_containing _repo_dict
    _repo_provenance _repos _resolve_ids _resolve_session_id _restamp _result_dict _scrub_store
    _select_in _session_dict _stamp_anchors _stamp_file _stamp_seconds _sync_get _sync_set
    _term_forms _version_at_least _with_dependencies _workspace_id _writable _write_freshness_cache
    """.split()
)
# Names of wctx.py outside __all__ the MCP server's parts still read, until each is made public.
CORE_NAMES_LEFT = frozenset(("_resolve_ids",))


def read_manifest(path=MANIFEST):
    """[(output file name, [part path relative to the manifest's folder, ...])] in file order."""
    outputs = []
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except OSError as exc:
        raise BuildError(f"cannot read {path}: {exc.strerror}") from exc
    for number, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            outputs.append((line[1:-1].strip(), []))
        elif not outputs:
            raise BuildError(f"{path}:{number}: a part before any [output.py] line")
        else:
            outputs[-1][1].append(line)
    if not outputs:
        raise BuildError(f"{path}: names no output file")
    return outputs


def _bound_names(node):
    """The top-level names one statement binds (a try/if counts as one statement)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            return set()
        return {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    names = set()
    targets = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For)):
        for sub in ast.walk(node):
            if sub is not node and isinstance(sub, (ast.stmt,)):
                names |= _bound_names(sub)
        return names
    for target in targets:
        for sub in ast.walk(target):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                names.add(sub.id)
    return names


class Part:
    """One part's file: its import header (parsed) and the lines that follow it."""

    def __init__(self, base, relpath):
        self.relpath = relpath
        self.shown = os.path.join(os.path.basename(base), relpath)
        self.name = os.path.splitext(os.path.basename(relpath))[0]
        path = os.path.join(base, relpath)
        try:
            with open(path, encoding="utf-8") as handle:
                self.text = handle.read()
        except OSError as exc:
            raise BuildError(f"cannot read {self.shown}: {exc.strerror}") from exc
        try:
            self.tree = ast.parse(self.text, self.shown)
        except SyntaxError as exc:
            raise BuildError(f"{self.shown}:{exc.lineno}: does not parse: {exc.msg}") from exc
        self.lines = self.text.splitlines(keepends=True)
        self.header = []
        for node in self.tree.body:
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                break
            self.header.append(node)
        self.body_start = self.header[-1].end_lineno if self.header else 0  # lines [body_start:]
        self.defines = {}
        for node in self.tree.body[len(self.header) :]:
            for name in _bound_names(node):
                self.defines.setdefault(name, node.lineno)


def _import_key(node):
    return ast.dump(node, annotate_fields=False, include_attributes=False)


def join(base, out_name, relpaths):
    """(the joined source, [(first output line, part, first part line), ...]) for one output."""
    parts = [Part(base, rel) for rel in relpaths]
    head, later = parts[0], parts[1:]
    head_imports = {
        _import_key(node) for node in head.tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
    }
    seen = {p.name: p for p in parts}
    if len(seen) != len(parts):
        raise BuildError(f"{out_name}: two parts share a name in parts/MANIFEST")
    position = {p.name: i for i, p in enumerate(parts)}
    for index, part in enumerate(later, 1):
        for node in part.header:
            where = f"{part.shown}:{node.lineno}"
            if isinstance(node, ast.ImportFrom) and node.level:
                if node.level != 1 or not node.module:
                    raise BuildError(
                        f"{where}: a part imports from a sibling part as 'from .name import ...'"
                    )
                source = seen.get(node.module)
                if source is None:
                    raise BuildError(f"{where}: no part named {node.module!r} in {out_name}'s list")
                if position[node.module] >= index:
                    raise BuildError(
                        f"{where}: imports from {source.shown}, which comes after it in parts/MANIFEST "
                        "(a part takes names only from the parts above it)"
                    )
                for alias in node.names:
                    if alias.name == "*":
                        raise BuildError(f"{where}: name what the part takes; no '*' imports")
                    if alias.asname and alias.asname != alias.name:
                        raise BuildError(f"{where}: {alias.name} is imported under another name")
                    if alias.name not in source.defines:
                        raise BuildError(f"{where}: {source.shown} does not define {alias.name}")
                    if _private(alias.name) and alias.name not in PRIVATE_IMPORTS_LEFT:
                        raise BuildError(
                            f"{where}: {alias.name} is private to {source.shown}; a name another part "
                            "takes is public: rename it there (no leading underscore)"
                        )
            elif _import_key(node) not in head_imports:
                raise BuildError(
                    f"{where}: {ast.unparse(node) if hasattr(ast, 'unparse') else 'an import'} is not "
                    f"made by the head part {head.shown}; add it there, where {out_name}'s imports live"
                )
    out = []
    segments = []

    def emit(part, start_line, text_lines):
        segments.append((len(out) + 1, part.shown, start_line))
        out.extend(text_lines)

    head_lines = list(head.lines)
    generated = "# Generated by parts/build.py from parts/MANIFEST: edit the parts, then run python3 parts/build.py.\n"
    if head_lines and head_lines[0].startswith("#!"):
        out.append(head_lines[0])
        out.append(generated)
        emit(head, 2, head_lines[1:])
    else:
        out.append(generated)
        emit(head, 1, head_lines)
    previous = head
    for part in later:
        body = part.lines[part.body_start :]
        skipped = part.body_start
        while body and not body[0].strip():
            body = body[1:]
            skipped += 1
        while out and not out[-1].strip():
            out.pop()
        # Two blank lines between parts, as between top-level definitions; one after a block of
        # imports, as isort writes it (a head part that ends with its imports).
        gap = ["\n"] if isinstance(previous.tree.body[-1], (ast.Import, ast.ImportFrom)) else ["\n", "\n"]
        out.extend(gap + [PART_MARK + part.shown + "\n"])
        emit(part, skipped + 1, body)
        previous = part
    source = "".join(out)
    if not source.endswith("\n"):
        source += "\n"
    check_names(out_name, parts)
    return source, segments


def where(segments, line):
    """(part path, line in it) of a line of the joined file; None for a line the build wrote."""
    found = None
    for first, shown, part_line in segments:
        if first <= line:
            found = (shown, part_line + line - first)
        else:
            break
    return found


def check_names(out_name, parts):
    """Refuse a top-level name bound by two statements of the joined file, and an ``__all__``
    entry no part defines. Read off the parts' own trees: the joined file is their statements in
    order (each part parses, and only whole import statements are left out), so it is not parsed
    again."""
    first = {}
    for part in parts:
        body = part.tree.body if part is parts[0] else part.tree.body[len(part.header) :]
        for node in body:
            for name in _bound_names(node):
                if name in first:
                    raise BuildError(
                        f"{part.shown}:{node.lineno}: {name} is defined twice at the top level of "
                        f"{out_name} (first at {first[name]})"
                    )
                first[name] = f"{part.shown}:{node.lineno}"
    for node in parts[0].tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            for element in getattr(node.value, "elts", ()):
                value = getattr(element, "value", None)
                if isinstance(value, str) and value not in first:
                    raise BuildError(
                        f"{parts[0].shown}:{element.lineno}: __all__ names {value}, which no part defines"
                    )


def _private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _exported(head):
    """The names a head part's ``__all__`` lists."""
    for node in head.tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return {getattr(e, "value", None) for e in getattr(node.value, "elts", ())}
    return set()


def _core_reads(part):
    """(name, line) of each ``CORE.name``, ``core.name`` or ``self.core.name`` a part reads."""
    for node in ast.walk(part.tree):
        if not isinstance(node, ast.Attribute):
            continue
        value = node.value
        if (isinstance(value, ast.Name) and value.id in ("CORE", "core")) or (
            isinstance(value, ast.Attribute) and value.attr == "core"
        ):
            yield node.attr, node.lineno


def check_core_surface(base, outputs):
    """Refuse a name of wctx.py outside its __all__ that the MCP server's parts read from the
    core module (the server takes only the library surface)."""
    lists = dict(outputs)
    core, server = lists.get("wctx.py"), lists.get("wctx_mcp.py")
    if not core or not server:
        return
    core_parts = [Part(base, rel) for rel in core]
    defined = set().union(*(p.defines for p in core_parts))
    exported = _exported(core_parts[0])
    for rel in server:
        part = Part(base, rel)
        for name, line in _core_reads(part):
            if (
                name in defined
                and name not in exported
                and name not in CORE_NAMES_LEFT
                and name != "__version__"
            ):
                raise BuildError(
                    f"{part.shown}:{line}: reads {name} from wctx.py, which its __all__ does not list "
                    "(the MCP server takes only the library surface)"
                )


def build_all(manifest=MANIFEST, root=ROOT):
    """{output path: (joined source, segments)} for every output the manifest names."""
    base = os.path.dirname(os.path.abspath(manifest))
    outputs = read_manifest(manifest)
    built = {os.path.join(root, out_name): join(base, out_name, relpaths) for out_name, relpaths in outputs}
    check_core_surface(base, outputs)
    return built


def _current(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError:
        return None


def write_outputs(built):
    """Write each output whose text changed (atomically); return the paths written."""
    written = []
    for path, (source, _) in built.items():
        if _current(path) == source:
            continue
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(source)
        if os.path.exists(path):
            os.chmod(tmp, os.stat(path).st_mode & 0o777)
        os.replace(tmp, path)
        written.append(path)
    return written


def _names_read(part):
    """The module-level names a part's body reads: at its top level, and as globals inside its
    functions and classes (symtable's view, so a local or a parameter of the same name is not one)."""
    import symtable

    body = "".join(part.lines[part.body_start :])
    table = symtable.symtable("\n" * part.body_start + body, part.shown, "exec")
    names = set()
    stack = [table]
    while stack:
        tab = stack.pop()
        for sym in tab.get_symbols():
            if not sym.is_referenced():
                continue
            if tab is table or sym.is_global() or sym.is_declared_global():
                names.add(sym.get_name())
            elif tab.get_type() == "class" and not (sym.is_assigned() or sym.is_parameter()):
                names.add(sym.get_name())
        stack.extend(tab.get_children())
    return names


def fix_headers(manifest=MANIFEST, only=()):
    """Rewrite each part's import header from what its body reads (names that earlier parts
    define, the head's standard imports); returns the parts rewritten. A name defined by a LATER
    part is left out, so the build then refuses it with its place. Run ruff's import sorting and
    formatter after it: this writes the header plainly."""
    base = os.path.dirname(os.path.abspath(manifest))
    changed = []
    for _, relpaths in read_manifest(manifest):
        parts = [Part(base, rel) for rel in relpaths]
        head = parts[0]
        standard = {}
        for node in head.tree.body:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    standard[alias.asname or alias.name] = "import %s" % alias.name
        owner = {}
        for part in parts:
            for name in part.defines:
                owner.setdefault(name, part)
        for index, part in enumerate(parts[1:], 1):
            if only and part.relpath not in only and part.shown not in only:
                continue
            reads = _names_read(part) - set(part.defines)
            taken = {}
            imports = set()
            for name in sorted(reads):
                source = owner.get(name)
                if name in standard:
                    imports.add(standard[name])
                elif source is not None and parts.index(source) < index:
                    taken.setdefault(source.name, []).append(name)
            lines = ["from __future__ import annotations\n", "\n"]
            if imports:
                lines += [line + "\n" for line in sorted(imports)] + ["\n"]
            for module in sorted(taken):
                lines.append("from .%s import %s\n" % (module, ", ".join(taken[module])))
            lines.append("\n")
            body = part.lines[part.body_start :]
            while body and not body[0].strip():
                body = body[1:]
            text = "".join(lines + body)
            if text != part.text:
                with open(os.path.join(base, part.relpath), "w", encoding="utf-8", newline="\n") as handle:
                    handle.write(text)
                changed.append(part.shown)
    return changed


def stale_outputs(built):
    return [path for path, (source, _) in built.items() if _current(path) != source]


def _statement_keys(source, name):
    tree = ast.parse(source, name)
    keys = []
    for node in tree.body:
        label = ", ".join(sorted(_bound_names(node))) or type(node).__name__
        keys.append((ast.dump(node, include_attributes=False), label))
    return keys


def compare_code(old_source, new_source):
    """Lines that say how two versions of a module differ as code (comments and layout ignored):
    top-level statements added, removed, or moved relative to the others."""
    old = _statement_keys(old_source, "old")
    new = _statement_keys(new_source, "new")
    old_index = {}
    for i, (key, _) in enumerate(old):
        old_index.setdefault(key, []).append(i)
    report = []
    matched = []
    for key, label in new:
        if old_index.get(key):
            matched.append((old_index[key].pop(0), label))
        else:
            report.append(f"added or changed: {label}")
    for positions in old_index.values():
        for i in positions:
            report.append(f"removed or changed: {old[i][1]}")
    # The longest run of statements kept in their old order; every other one moved.
    seq = [i for i, _ in matched]
    tails, prev, idx_at = [], [-1] * len(seq), []
    for k, value in enumerate(seq):
        pos = bisect.bisect_left(tails, value)
        if pos == len(tails):
            tails.append(value)
            idx_at.append(k)
        else:
            tails[pos] = value
            idx_at[pos] = k
        prev[k] = idx_at[pos - 1] if pos else -1
    keep = set()
    k = idx_at[-1] if idx_at else -1
    while k != -1:
        keep.add(k)
        k = prev[k]
    for k, (_, label) in enumerate(matched):
        if k not in keep:
            report.append(f"moved: {label}")
    return report


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="parts/build.py",
        description="Join parts/ into wctx.py and wctx_mcp.py (standard library only).",
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if an output is not what the parts give")
    parser.add_argument("--where", metavar="FILE:LINE", help="the part and line behind a line of wctx.py")
    parser.add_argument(
        "--same-code-as", metavar="OLD", help="compare the built wctx.py with OLD as code (for refactors)"
    )
    parser.add_argument(
        "--of", default="wctx.py", metavar="NAME", help="the output --same-code-as compares (default wctx.py)"
    )
    parser.add_argument(
        "--fix-headers",
        nargs="*",
        metavar="PART",
        help="rewrite the import headers of the parts (all, or those named) from what they read; "
        "then run: ruff check --select I --fix parts && ruff format parts",
    )
    parser.add_argument("--manifest", default=MANIFEST, help=argparse.SUPPRESS)
    parser.add_argument("--root", default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.fix_headers is not None:
        try:
            changed = fix_headers(args.manifest, args.fix_headers)
        except BuildError as exc:
            sys.stderr.write(f"build failed: {exc}\n")
            return 1
        for shown in changed:
            print(f"rewrote the header of {shown}")
        return 0
    try:
        built = build_all(args.manifest, args.root)
    except BuildError as exc:
        sys.stderr.write(f"build failed: {exc}\n")
        return 1
    if args.where:
        name, _, line = args.where.rpartition(":")
        if not name:
            name = "wctx.py"
        if not line.isdigit():
            sys.stderr.write("parts/build.py: --where takes FILE:LINE, for example wctx.py:1234\n")
            return 2
        match = [v for p, v in built.items() if os.path.basename(p) == os.path.basename(name)]
        if not match:
            sys.stderr.write(f"parts/build.py: {name} is not built from parts/MANIFEST\n")
            return 2
        place = where(match[0][1], int(line))
        if place is None:
            print(f"{name}:{line} is the line the build writes at the top")
        else:
            print(f"{place[0]}:{place[1]}")
        return 0
    if args.same_code_as:
        try:
            with open(args.same_code_as, encoding="utf-8") as handle:
                old = handle.read()
        except OSError as exc:
            sys.stderr.write(f"parts/build.py: cannot read {args.same_code_as}: {exc.strerror}\n")
            return 2
        new = next((v[0] for p, v in built.items() if os.path.basename(p) == args.of), None)
        if new is None:
            sys.stderr.write(f"parts/build.py: {args.of} is not built from parts/MANIFEST\n")
            return 2
        report = compare_code(old, new)
        print("\n".join(report) if report else "the same code, statement for statement")
        return 0
    if args.check:
        stale = stale_outputs(built)
        for path in stale:
            sys.stderr.write(
                f"{os.path.relpath(path, args.root)} is not what its parts give: run python3 parts/build.py\n"
            )
        return 1 if stale else 0
    for path in write_outputs(built):
        print(f"wrote {os.path.relpath(path, args.root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
