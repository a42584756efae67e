#!/usr/bin/env python3
"""Build dist/wctx.pyz, the single-file wctx, from wctx.py and wctx_mcp.py. Standard library only.

    python3 zipapp/build.py                 # writes dist/wctx.pyz, prints its size and sha256
    python3 zipapp/build.py -o /tmp/w.pyz   # somewhere else

The archive is reproducible: members in sorted order, fixed timestamps and permissions, fixed
compression level, so two builds from the same sources are byte-identical (given the same zlib).
Its __main__.py (zipapp/pyz_main.py) refuses Pythons older than 3.8 in one line, then runs
wctx.main().

This folder has no __init__.py on purpose: it must never shadow the standard library's zipapp.
"""

import argparse
import hashlib
import io
import os
import re
import sys
import tokenize
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULES = ("wctx", "wctx_mcp")
ENTRY_TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyz_main.py")
SHEBANG = b"#!/usr/bin/env python3\n"
# The earliest date a zip header can hold; any fixed value makes the archive reproducible.
FIXED_DATE_TIME = (1980, 1, 1, 0, 0, 0)
MEMBER_MODE = 0o100644  # regular file, rw-r--r--
COMPRESS_LEVEL = 9
HASHES_PLACEHOLDER = "SOURCE_HASHES = {}"


class BuildError(Exception):
    pass


def read_module_sources(root=ROOT):
    """Return {module name: source bytes}, checking that each one compiles."""
    sources = {}
    for name in MODULES:
        path = os.path.join(root, name + ".py")
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise BuildError(f"cannot read {path}: {exc.strerror}") from exc
        try:
            compile(data, path, "exec", dont_inherit=True)
        except SyntaxError as exc:
            raise BuildError(f"{path} does not compile: {exc.msg} (line {exc.lineno})") from exc
        sources[name] = without_internal_docstrings(without_comments(data))
    return sources


def without_comments(source):
    """``source`` with its comments removed and every line kept where it was: the archive holds the
    same code (identical bytecode, line numbers and columns, docstrings included) in about a tenth
    less space. The first two lines (shebang, coding) stay as they are."""
    lines = source.decode("utf-8").splitlines(keepends=True)
    comments = [
        tok.start
        for tok in tokenize.generate_tokens(io.StringIO(source.decode("utf-8")).readline)
        if tok.type == tokenize.COMMENT and tok.start[0] > 2
    ]
    for row, col in comments:
        line = lines[row - 1]
        ending = line[len(line.rstrip("\r\n")) :]
        lines[row - 1] = line[:col].rstrip() + ending
    return "".join(lines).encode("utf-8")


def _read_at_run_time(name, public, top_level):
    """Is this definition's docstring something wctx reads while it runs, or a reader of the
    library sees? The CLI's help is its commands' docstrings (cmd_*), and help(wctx.X) documents
    the names of __all__ (and their methods)."""
    return name.startswith("cmd_") or (top_level and name in public)


def without_internal_docstrings(source):
    """``source`` with the docstrings nobody reads at run time blanked out, every line kept where it
    was: the module's own, the CLI commands' (their help) and the library surface's (__all__) stay.
    The rest document the code for its readers, who read wctx.py; in the archive they were about a
    fifth of its size. Compiled with -OO, which drops every docstring, the result is the same code
    as ``source`` (tests/test_pyz.py checks it)."""
    import ast

    text = source.decode("utf-8")
    tree = ast.parse(text)
    public = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            public = {e.value for e in getattr(node.value, "elts", ()) if isinstance(e, ast.Constant)}
    blank = set()

    def visit(parent, top_level, kept):
        for node in ast.iter_child_nodes(parent):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            keep = kept or _read_at_run_time(node.name, public, top_level)
            body = node.body
            first = body[0] if body else None
            is_doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            if is_doc and isinstance(first.value.value, str) and len(body) > 1 and not keep:
                blank.update(range(first.lineno, first.end_lineno + 1))
            visit(node, False, keep and isinstance(node, ast.ClassDef))

    visit(tree, True, False)
    lines = text.splitlines(keepends=True)
    return "".join("\n" if n in blank else line for n, line in enumerate(lines, 1)).encode("utf-8")


def entry_point_source(sources):
    """__main__.py for the archive: the template with the sources' hashes filled in, stripped of
    its comments and internal docstrings as the modules are."""
    with open(ENTRY_TEMPLATE, encoding="utf-8") as handle:
        template = handle.read()
    if template.count(HASHES_PLACEHOLDER) != 1:
        raise BuildError(f"{ENTRY_TEMPLATE} must contain exactly one line {HASHES_PLACEHOLDER!r}")
    hashes = {name: hashlib.sha256(data).hexdigest() for name, data in sorted(sources.items())}
    filled = "SOURCE_HASHES = {" + ", ".join(f"{name!r}: {digest!r}" for name, digest in hashes.items()) + "}"
    return without_internal_docstrings(
        without_comments(template.replace(HASHES_PLACEHOLDER, filled).encode("utf-8"))
    )


def module_version(source):
    match = re.search(rb"""^__version__\s*=\s*["']([^"']+)["']""", source, re.MULTILINE)
    if not match:
        raise BuildError("wctx.py has no __version__ = '...' line")
    return match.group(1).decode("ascii")


def archive_bytes(members):
    """The whole .pyz: shebang line, then a zip of members ({name: bytes}) in sorted order."""
    buffer = io.BytesIO()
    buffer.write(SHEBANG)
    # ZipFile on a buffer already holding the shebang records offsets from the file's start, as the
    # standard library's zipapp module does, so every zip reader finds the members.
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in sorted(members):
            info = zipfile.ZipInfo(name, date_time=FIXED_DATE_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, whatever the building machine is
            info.external_attr = MEMBER_MODE << 16
            archive.writestr(info, members[name], compresslevel=COMPRESS_LEVEL)
    return buffer.getvalue()


def build(output, root=ROOT):
    """Write the archive to output atomically; return {path, size, sha256, version}."""
    sources = read_module_sources(root)
    members = {name + ".py": data for name, data in sources.items()}
    members["__main__.py"] = entry_point_source(sources)
    data = archive_bytes(members)
    output = os.path.abspath(output)
    os.makedirs(os.path.dirname(output), exist_ok=True)
    tmp = f"{output}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o755)
        os.replace(tmp, output)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return {
        "path": output,
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "version": module_version(sources["wctx"]),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="zipapp/build.py", description="Build the single-file wctx.pyz (standard library only)."
    )
    parser.add_argument(
        "-o",
        "--output",
        default=os.path.join(ROOT, "dist", "wctx.pyz"),
        help="where to write the archive (default: dist/wctx.pyz)",
    )
    args = parser.parse_args(argv)
    try:
        result = build(args.output)
    except BuildError as exc:
        sys.stderr.write(f"build failed: {exc}\n")
        return 1
    shown = (
        os.path.relpath(result["path"]) if result["path"].startswith(os.getcwd() + os.sep) else result["path"]
    )
    print(f"built {shown} (wctx {result['version']})")
    print(f"size   {result['size']} bytes ({result['size'] / 1000:.1f} kB)")
    print(f"sha256 {result['sha256']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
