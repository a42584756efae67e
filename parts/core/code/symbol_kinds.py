from __future__ import annotations

import re

from .constants import _lazy_pattern

# ----------------------------------------------------------------------------------------------
# Symbol kinds: the definitions beside functions and types that a user cites
# ----------------------------------------------------------------------------------------------
#
# Constants, variables, type aliases, fields, enum members and macros are symbols too, located by
# their whole statement. Python reads them from ``ast`` (module- and class-level assignments);
# the other languages add patterns to the locator's (symbols._patterns), of three kinds:
#
# - "value": a declaration by keyword (``const``, ``let``, ``var``, ``static``, ``val``), a Go
#   entry of a ``const ( ... )`` or ``var ( ... )`` group, a typed field or global of a C-like
#   language (``static final int MAX = 5;``). Its extent runs to its ``;`` or the end of its
#   statement, across a multi-line value.
# - "field": a member written by its name alone (``size = 5;``, ``name: string``, ``A,``, ``B(u32),``,
#   a Go ``Name string``), which counts only directly inside a class, interface, struct, enum or
#   trait body (never in an object literal or a function). Cited as ``Type.field``.
# - "macro": a C ``#define``, to the end of its line and the lines its backslashes continue.

# Languages whose members are separated by commas (enum members, Rust struct fields).
_COMMA_MEMBERS = frozenset(
    {"javascript", "typescript", "rust", "java", "csharp", "c", "cpp", "kotlin", "scala", "php", "swift"}
)
# Languages whose fields and globals are written "Type name = value;".
_TYPED_FIELDS = frozenset({"java", "csharp", "c", "cpp", "kotlin", "scala", "swift", "php"})
# Declaration keywords per language: a name after one of them is declared there.
_DECLARATION_KEYWORDS = {
    "javascript": r"(?:const|let|var)",
    "typescript": r"(?:const|let|var)",
    "go": r"(?:const|var)",
    "rust": r"(?:const|static(?:\s+mut)?|macro_rules!)",
    "kotlin": r"(?:val|var)",
    "scala": r"(?:val|var)",
    "swift": r"(?:let|var)",
    "php": r"(?:const)",
    "csharp": r"(?:const|event)",
    "cpp": r"(?:using)",  # an alias: using Handle = int;
}
ANNOTATION = r"@[\w.]+(?:\([^)\n]*\))?"  # on the field's own line: @Expose private int a;
_FIELD_MODIFIERS = (
    r"(?:(?:" + ANNOTATION + r"|public|private|protected|internal|static|readonly|declare|override|"
    r"abstract|accessor|final|"
    r"const|volatile|transient|extern|inline|constexpr|mutable|unsafe|new|required|pub(?:\([^)\n]*\))?)\s+)*"
)
_CONTAINER_HEADER = _lazy_pattern(r"\b(?:class|interface|enum|struct|union|trait|object|record)\b")
_MEMBER_HOLDER = _lazy_pattern(r"\b(?:class|interface|enum|struct|object|extension|protocol|actor)\b")
_ANNOTATIONS = _lazy_pattern(ANNOTATION)
_FUNCTION_VALUE = _lazy_pattern(
    r"[\w$]+\s*(?::[^=;\n]+)?=\s*(?:async\b\s*)?(?:function\b|\(|<|[A-Za-z_$][\w$]*\s*=>|class\b)"
)
_ASSIGNED_NAME = _lazy_pattern(r"[\w$]+[ \t]*=(?![=>])")
_GO_GROUP_OPEN = _lazy_pattern(r"^(?:const|var)[ \t]*\(", re.M)
_GO_DECLARATION = _lazy_pattern(r"\s*(?:const|var)\s")
_WORD_BEFORE_CALL = _lazy_pattern(
    r"(?:^|[^\w$])(?:return|else|if|while|for|switch|case|new|throw|await|yield|echo|print|delete|"
    r"goto|assert|do|in|of|not|and|or|using|import|package|typedef|sizeof)\s*$"
)


# Rows of the table: (kind, pattern, flags). In a pattern, {NAME} stands for the name (escaped)
# and {END} for what may not follow it (another identifier character).
# an enum member, a field, a Java enum constant with a body of its own: DOUBLE { ... },
_MEMBER_LINE = ("field", r"^[ \t]*(?:case[ \t]+)?{NAME}[ \t]*(?:[=,;({]|$)", re.M)
_MEMBER_INLINE = ("field", r"(?<=[{,])[ \t]*{NAME}[ \t]*(?:=[^=]|[,}])", 0)  # enum color { RED, GREEN };
_TYPED_FIELD = (
    "value",
    r"^[ \t]*"
    + _FIELD_MODIFIERS
    + r"(?:[\w$<>\[\],.?:]+(?:[ \t]+[*&]*|[ \t]*[*&]+[ \t]*))+"  # int x, void** p, T& r
    + r"{NAME}[ \t]*(?:=(?!=)|;|\[)",
    re.M,
)
_TYPED = (_TYPED_FIELD, _MEMBER_LINE, _MEMBER_INLINE)  # C-like: "Type name = value;", members
_MEMBERS = (_MEMBER_LINE, _MEMBER_INLINE)  # Kotlin, Swift: every value says val/var/let, so no "Type name"
_JS_FIELD = ("field", r"^[ \t]*" + _FIELD_MODIFIERS + r"#?{NAME}[ \t]*[?!]?[ \t]*(?:[:=;,]|$)", re.M)
_GO_GROUP_ENTRY = (  # an entry of a const ( ... ) or var ( ... ) group
    "value",
    r"^[ \t]+(?:[A-Za-z_]\w*[ \t]*,[ \t]*)*{NAME}{END}(?:[ \t]*,[ \t]*[A-Za-z_]\w*)*"
    r"(?:[ \t]*=|[ \t]+[^\s=:,][^=\n]*=|[ \t]+[^\s=:,][^=\n]*$|[ \t]*$)",
    re.M,
)
_GO_FIELD = (  # Name Type, A, B Type, with or without a tag
    "field",
    r"^[ \t]+(?:[A-Za-z_]\w*[ \t]*,[ \t]*)*{NAME}{END}(?:[ \t]*,[ \t]*[A-Za-z_]\w*)*[ \t]+[^\s=:,(]",
    re.M,
)
_RUST_FIELD = ("field", r"^[ \t]*" + _FIELD_MODIFIERS + r"{NAME}[ \t]*(?::(?!:)|[,({=]|$)", re.M)
_C_MACRO = ("macro", r"^[ \t]*#[ \t]*define[ \t]+{NAME}{END}", re.M)
_PHP_PROPERTY = ("value", r"^[ \t]*" + _FIELD_MODIFIERS + r"(?:\??[\w\\]+[ \t]+)?\${NAME}[ \t]*[=;]", re.M)
_RUBY_ASSIGNMENT = ("value", r"^[ \t]*(?:self\.)?{NAME}[ \t]*(?:=(?![=~>])|\|\|=)", re.M)  # a constant
_CS_PROPERTY = (  # public int Size { get; set; }
    "value",
    r"^[ \t]*" + _FIELD_MODIFIERS + r"(?:[\w<>\[\],.?]+[ \t]+)+{NAME}[ \t]*\{",
    re.M,
)


_KOTLIN_EXTENSION_PROPERTY = (  # val KmClass.isObject: Boolean, val <T> List<T>.second: T
    "value",
    r"\b(?:val|var)\s+(?:<[^>\n]*>\s*)?[\w.<>?,* ]+\.{NAME}{END}",
    0,
)


_KOTLIN_ROWS = (
    _KOTLIN_EXTENSION_PROPERTY,
    # enum entries: K32(32), K48(48), on one line; @Experimental ALL,
    ("field", r"(?<=,)[ \t]*{NAME}[ \t]*\(", 0),
    ("field", r"^[ \t]*(?:" + ANNOTATION + r"[ \t]+)+{NAME}[ \t]*(?:[,;({]|$)", re.M),
)
_SWIFT_CASE_LIST = (  # a later case of a list: case headers, body
    "field",
    r"^[ \t]*(?:indirect[ \t]+)?case[ \t]+[^\n]*,[ \t]*{NAME}{END}",
    re.M,
)


def _declared(keywords):
    """The row of a declaration by keyword: ``const NAME``, ``static mut NAME``, ``val NAME``."""
    return ("value", r"\b" + keywords + r"(?:\s+|(?<=!)\s*){NAME}{END}", 0)


# The declarations of each language beside functions and types (its functions and types are in
# symbols._DEFINITIONS).
KIND_ROWS = {
    "javascript": (_declared(_DECLARATION_KEYWORDS["javascript"]), _JS_FIELD),
    "typescript": (_declared(_DECLARATION_KEYWORDS["typescript"]), _JS_FIELD),
    "go": (_declared(_DECLARATION_KEYWORDS["go"]), _GO_GROUP_ENTRY, _GO_FIELD),
    "rust": (_declared(_DECLARATION_KEYWORDS["rust"]), _RUST_FIELD),
    "c": (_C_MACRO,) + _TYPED,
    "cpp": (_declared(_DECLARATION_KEYWORDS["cpp"]), _C_MACRO) + _TYPED,
    "java": _TYPED,
    "csharp": (_declared(_DECLARATION_KEYWORDS["csharp"]),) + _TYPED + (_CS_PROPERTY,),
    "kotlin": (_declared(_DECLARATION_KEYWORDS["kotlin"]),) + _MEMBERS + _KOTLIN_ROWS,
    "scala": (_declared(_DECLARATION_KEYWORDS["scala"]),) + _TYPED,
    "swift": (_declared(_DECLARATION_KEYWORDS["swift"]),) + _MEMBERS + (_SWIFT_CASE_LIST,),
    "php": (_declared(_DECLARATION_KEYWORDS["php"]), _PHP_PROPERTY) + _TYPED,
    "ruby": (_RUBY_ASSIGNMENT,),
}


def compile_rows(rows, name, end=r"(?![\w$])"):
    """[(kind, regex)] of table rows for ``name``."""
    n = re.escape(name)
    return [
        (kind, re.compile(pattern.replace("{NAME}", n).replace("{END}", end), flags))
        for kind, pattern, flags in rows
    ]


def kind_patterns(name, language):
    """[(kind, regex)] of the declarations of ``name`` in ``language`` beside functions and
    types: kinds "value", "field" and "macro" (see above)."""
    return compile_rows(KIND_ROWS.get(language, ()), name)


def kind_accepts(masked, language, kind, start, name_at):
    """Whether a match of ``kind_patterns`` at line ``start`` (the name at ``name_at``) is a
    declaration: a field directly in a class-like body, a Go group entry inside its group, a typed
    declaration not a statement (``return x;``)."""
    before = masked[start:name_at]
    if kind == "field":
        opening = _enclosing_brace(masked, name_at)
        if opening < 0:
            return False
        if masked.count("(", opening, name_at) > masked.count(")", opening, name_at):
            return False  # an argument in an initialiser (new Maker(a, UNSAFE, b)), not a member
        # x = ... continuing an expression-bodied member (void Setup() =>) is not an enum member
        assigned = _ASSIGNED_NAME.match(masked, name_at)
        if language in _TYPED_FIELDS and assigned and not before.strip() and not _member_start(masked, start):
            return False
        bound = max(masked.rfind(c, 0, opening) for c in ";{}")
        return _CONTAINER_HEADER.search(masked, bound + 1, opening) is not None
    if kind == "value" and language in ("javascript", "typescript"):
        return not _local_value(masked, name_at)
    if kind == "value" and language == "go" and not _GO_DECLARATION.match(before):
        closed = masked.rfind("\n)", 0, start)  # gofmt closes a group at column 0
        return _GO_GROUP_OPEN.search(masked, closed + 1, start) is not None
    if kind == "value" and language in _TYPED_FIELDS:
        before = _ANNOTATIONS.sub("", before)
        keywords = _DECLARATION_KEYWORDS.get(language)
        if keywords and re.search(r"\b" + keywords + r"\s*$", before):
            return True  # declared by its keyword: using Handle = int; (not the statement using x;)
        return not (_WORD_BEFORE_CALL.search(before) or "=" in before or "(" in before)
    return True


def _local_value(masked, name_at):
    """Whether the JavaScript or TypeScript declaration at ``name_at`` is a plain value local to a
    function or block body (its header has a ')' or '=>'), not a module's, a namespace's or a
    function value (const f = () => ..., which stays a symbol wherever it stands)."""
    opening = _enclosing_brace(masked, name_at)
    if opening < 0 or _FUNCTION_VALUE.match(masked, name_at):
        return False
    bound = max(masked.rfind(c, 0, opening) for c in ";{}")
    header = masked[bound + 1 : opening]
    return ")" in header or "=>" in header


def local_to_body(masked, pos):
    """Whether ``pos`` stands in a body that holds no members (a function's, an accessor's, a
    closure's), not directly in a type's or at the top level."""
    opening = _enclosing_brace(masked, pos)
    if opening < 0:
        return False
    bound = max(masked.rfind(c, 0, opening) for c in ";{}")
    return _MEMBER_HOLDER.search(masked, bound + 1, opening) is None


def _member_start(masked, start):
    """Whether the line at ``start`` begins a member: after a '{', ';', ',' or '}', or after an
    annotation or attribute line."""
    before = masked[:start].rstrip()
    if not before or before[-1] in "{;,}":
        return True
    return masked[_line_start_of(before, len(before)) : len(before)].lstrip().startswith(("@", "["))


def _line_start_of(text, pos):
    return text.rfind("\n", 0, pos) + 1


def name_position(masked, name, lo, hi):
    """Where ``name`` stands as a whole word in masked[lo:hi] first (lo when it does not)."""
    at = masked.find(name, lo, hi)
    while at >= 0:
        after = at + len(name)
        if (at == 0 or not _is_word(masked[at - 1])) and (
            after >= len(masked) or not _is_word(masked[after])
        ):
            return at
        at = masked.find(name, at + 1, hi)
    return lo


def _is_word(c):
    return c.isalnum() or c in "_$"


def macro_end(masked, name_end):
    """End of a C ``#define`` whose name ends at ``name_end``: its line and those it continues."""
    end = masked.find("\n", name_end)
    while end >= 0 and masked[:end].rstrip(" \t\r").endswith("\\"):
        end = masked.find("\n", end + 1)
    return len(masked) if end < 0 else end


def _enclosing_brace(masked, pos):
    """Index of the '{' whose block holds ``pos``, or -1 at the top level."""
    depth = 0
    for i in range(pos - 1, -1, -1):
        c = masked[i]
        if c == "}":
            depth += 1
        elif c == "{":
            if depth == 0:
                return i
            depth -= 1
    return -1


# ``type X[T] = ...`` (Python 3.12) read by an older ``ast`` as ``X = ...`` on the same lines.
_PY_TYPE_STATEMENT = _lazy_pattern(r"^([ \t]*)type[ \t]+([A-Za-z_]\w*)[ \t]*(?:\[[^\]\n]*\])?[ \t]*=", re.M)


def _python_parse(source):
    """The ``ast`` of ``source``, or None when it does not parse."""
    import ast

    for attempt in (source, None):
        if attempt is None:
            if not _PY_TYPE_STATEMENT.search(source):
                return None
            attempt = _PY_TYPE_STATEMENT.sub(r"\1\2 =", source)
        try:
            return ast.parse(attempt)
        except (SyntaxError, ValueError, MemoryError, RecursionError):  # deep nesting: not SyntaxError
            continue
    return None


def _python_assigned_names(statement):
    """The names a module- or class-level statement defines by assignment: ``X = ...``,
    ``X: T = ...``, ``X: T``, ``A, B = ...`` (each name), ``type X = ...``."""
    import ast

    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, ast.AnnAssign):
        targets = [statement.target]
    elif type(statement).__name__ == "TypeAlias":
        targets = [statement.name]
    else:
        return []
    names = []
    while targets:
        target = targets.pop(0)
        if isinstance(target, ast.Name):
            names.append(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            targets[:0] = target.elts
        elif isinstance(target, ast.Starred):
            targets.insert(0, target.value)
    return names
