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
# - "tail": a C or C++ name after its body (``typedef struct { ... } span;``), see tail_extent.
# - "declarator": a JavaScript or TypeScript name declared after a comma of a ``var``, ``let`` or
#   ``const`` statement (``var a = 1, b = 2``, or comma-first ``var a = x\n  , b = y``). Its
#   extent is the whole statement, from its keyword's line, as a parser gives it.

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
    "c": r"(?:using)",  # C has none, but a C++ header is often a .h
}
ANNOTATION = r"@[\w.]+(?:\([^)\n]*\))?"  # on the field's own line: @Expose private int a;
_FIELD_MODIFIERS = (
    r"(?:(?:" + ANNOTATION + r"|public|private|protected|internal|static|readonly|declare|override|"
    r"abstract|accessor|final|"
    r"const|volatile|transient|extern|inline|constexpr|mutable|unsafe|new|required|pub(?:\([^)\n]*\))?)\s+)*"
)
_CONTAINER_HEADER = _lazy_pattern(r"\b(?:class|interface|enum|struct|union|trait|object|record)\b")
_OBJECT_KEYWORD = frozenset({"kotlin", "scala"})  # elsewhere ``object`` is a type: Dictionary<string, object>
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
_JS_DECLARATOR = ("declarator", r"(?:^|,)[ \t]*{NAME}{END}[ \t]*(?:[=:](?![=>])|[,;]|$)", re.M)
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
_RUBY_ATTRIBUTE = (  # attr_reader :kind, attr_accessor :name, :size (attr_writer defines name= only)
    "value",
    r"^[ \t]*attr_(?:accessor|reader)\b[^\n#]*:{NAME}{END}",
    re.M,
)
_CS_PROPERTY = (  # public int Size { get; set; }, its accessors' brace on the same line or the next
    "value",
    r"^[ \t]*" + _FIELD_MODIFIERS + r"(?:[\w<>\[\],.?]+[ \t]+)+{NAME}[ \t]*(?:\{|$)",
    re.M,
)
_CS_INITIALIZER = _lazy_pattern(r"\s*=(?![=>])")


# C and C++: a field or global among several declarators of one line (item *first, *last;), the
# earlier ones possibly initialised by a plain value (static int tests = 0, fails = 0;).
_C_DECLARATORS = (
    "value",
    r"^[ \t]*(?!(?:return|case|goto|delete|else)\b)" + _FIELD_MODIFIERS + r"(?:[\w$:]+[ \t]+)+[*&]*[ \t]*"
    r"(?:[\w$]+[ \t]*(?:\[[^\]\n]*\])?[ \t]*(?:=[^,;\n(){}]*)?,[ \t]*[*&]*[ \t]*)*{NAME}{END}[ \t]*(?:\[[^\]\n]*\][ \t]*)?[;,=]",
    re.M,
)
# C and C++: a field of a struct written on one line, struct pair { int low; int high; };
_C_INLINE_FIELD = (
    "value",
    r"(?<=[{;])[ \t]*(?:[\w$]+[ \t]+)+[*&]*[ \t]*{NAME}{END}[ \t]*(?:\[[^\]\n]*\][ \t]*)?;",
    0,
)
# C and C++: a name after its body, typedef struct { ... } span; or a member union { ... } value;
# (the "tail" kind: its extent runs from the body's header to the ';', see tail_extent).
_C_TAIL = (
    "tail",
    r"\}[ \t]*(?:\**[ \t]*[\w$]+[ \t]*,[ \t]*)*\**[ \t]*{NAME}{END}[ \t]*(?:\[[^\]\n]*\][ \t]*)*[;,]",
    0,
)
# C and C++ functions and types the common rows (symbols._COMMON_DEFINITIONS) miss: a return type
# written through a macro, QUEUE_PUBLIC(const char *) name(...), after extern "C" or an attribute,
# and a type whose header holds an attribute or an export macro, struct __attribute__((packed))
# name {, class LOG_API name {.
C_DEFINITIONS = (
    (
        "func",
        r"^[ \t]*(?:(?:static|extern|inline|const)\s+)*(?:[A-Z_][A-Z0-9_]*[ \t]*\([^()\n]*\)|extern[ \t]*\"[^\"\n]*\"|"
        r"__attribute__[ \t]*\(\((?:[^()\n]|\([^()\n]*\))*\)\))[ \t]*"
        r"(?:[\w$*&:<>,]+[ \t]+|[*&]+[ \t]*)*?{NAME}[ \t]*\(",
        re.M,
    ),
    (
        "type",
        r"\b(?:class|struct|union|enum)\s+(?:(?:__attribute__[ \t]*\(\([^\n]*?\)\)|__declspec\([^)\n]*\)|"
        r"alignas\([^)\n]*\)|[A-Z_][A-Z0-9_]*)\s+)+{NAME}{END}",
        0,
    ),
)


# Function rows beside symbols._DEFINITIONS (symbols._AFTER_KINDS): a JavaScript or TypeScript
# generator method (``*entries() {``, ``async *stream() {``); a C# explicit interface member, its
# interface before its name (``bool IDictionary.IsReadOnly =>``, ``Task IStore<T>.PutAsync(``),
# after a return type (a call ``store.PutAsync(`` has none; see without_interface).
GENERATOR_METHOD = (
    "func",
    r"^[ \t]*(?:(?:static|public|private|protected|override|async)\s+)*\*[ \t]*{NAME}[ \t]*(?:<[^>\n]*>)?[ \t]*\(",
    re.M,
)
_CS_INTERFACE = r"^[ \t]*(?:[\w$<>\[\],.?()]+[ \t]+)+(?:[\w$]+(?:<[^\n]*?>)?\.)+{NAME}[ \t]*"
CS_EXPLICIT_MEMBERS = (
    ("func", _CS_INTERFACE + r"(?:<[^>\n]*>)?[ \t]*\(", re.M),
    ("value", _CS_INTERFACE + r"(?:=>|\{)", re.M),
)
_INTERFACE_QUALIFIER = _lazy_pattern(r"(?<=\s)(?:[\w$]+(?:<[^\n]*?>)?\.)+$")


def without_interface(before, language):
    """What stands before a C# explicit interface member's interface (``Task`` of ``Task
    IStore<T>.PutAsync(``), where a return type does; otherwise ``before`` as it is."""
    m = _INTERFACE_QUALIFIER.search(before) if language == "csharp" else None
    return before[: m.start()] if m and before[: m.start()].strip() else before


def attribute_start(masked, line, line_start):
    """Where a C# definition's attributes start when ``line`` (stripped, at ``line_start``) is the
    line above it: that line for an attribute (``[Serializable]``); for an ``#endif`` whose block
    holds attribute lines and nothing else, its ``#if`` line (a parser starts the definition there);
    otherwise -1."""
    if line.startswith("[") and line.endswith("]"):
        return line_start
    return _conditional_attributes(masked, line_start) if line.startswith("#endif") else -1


def _conditional_attributes(masked, endif):
    """Start of the ``#if`` line whose block ends at the ``#endif`` line at ``endif`` and holds
    attribute lines alone, or -1."""
    at, seen = endif, 0
    while at > 0 and seen < 12:
        start = _line_start_of(masked, at - 1)
        line = masked[start : at - 1].strip()
        if line.startswith("#if"):
            return start if seen else -1
        if not (line.startswith("[") and line.endswith("]")):
            return -1
        at, seen = start, seen + 1
    return -1


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
_SWIFT_INLINE_CASE = (  # a case of an enum written on one line: enum E: Error { case a, b(T) }
    "field",
    r"(?<=\{)[ \t]*(?:indirect[ \t]+)?case[ \t]+(?:[^\n{}]*,[ \t]*)?{NAME}{END}",
    0,
)


def _declared(keywords):
    """The row of a declaration by keyword: ``const NAME``, ``static mut NAME``, ``val NAME``."""
    return ("value", r"\b" + keywords + r"(?:\s+|(?<=!)\s*){NAME}{END}", 0)


# C and C++ (one table: a C++ header is often a .h): an alias by using, using Handle = int; (not
# the declaration using Base::Base;), macros, typed fields and globals, members.
_C_ROWS = (
    (("value", r"\busing\s+{NAME}{END}\s*=", 0), _C_MACRO)
    + _TYPED
    + (_C_DECLARATORS, _C_INLINE_FIELD, _C_TAIL)
)


# The declarations of each language beside functions and types (its functions and types are in
# symbols._DEFINITIONS).
KIND_ROWS = {
    "javascript": (_declared(_DECLARATION_KEYWORDS["javascript"]), _JS_FIELD, _JS_DECLARATOR),
    "typescript": (_declared(_DECLARATION_KEYWORDS["typescript"]), _JS_FIELD, _JS_DECLARATOR),
    "go": (_declared(_DECLARATION_KEYWORDS["go"]), _GO_GROUP_ENTRY, _GO_FIELD),
    "rust": (_declared(_DECLARATION_KEYWORDS["rust"]), _RUST_FIELD),
    "c": _C_ROWS,
    "cpp": _C_ROWS,
    "java": _TYPED,
    "csharp": (_declared(_DECLARATION_KEYWORDS["csharp"]),) + _TYPED + (_CS_PROPERTY,),
    "kotlin": (_declared(_DECLARATION_KEYWORDS["kotlin"]),) + _MEMBERS + _KOTLIN_ROWS,
    "scala": (_declared(_DECLARATION_KEYWORDS["scala"]),) + _TYPED,
    "swift": (_declared(_DECLARATION_KEYWORDS["swift"]),) + _MEMBERS + (_SWIFT_CASE_LIST, _SWIFT_INLINE_CASE),
    "php": (_declared(_DECLARATION_KEYWORDS["php"]), _PHP_PROPERTY) + _TYPED,
    "ruby": (_RUBY_ASSIGNMENT, _RUBY_ATTRIBUTE),
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


def kind_accepts(masked, language, kind, start, name_at, bodiless=False):
    """Whether a match of ``kind_patterns`` at line ``start`` (the name at ``name_at``) is a
    declaration: a field directly in a class-like body, a Go group entry inside its group, a typed
    declaration not a statement (``return x;``), a C forward declaration (``struct S;``) only in
    the pass for declarations without a body (``bodiless``: the file defines nothing of the name)."""
    before = masked[start:name_at]
    if _REJECTS.get(language, _rejects_nothing)(masked, kind, start, name_at, before, bodiless):
        return False
    if kind == "field":
        return _field_accepted(masked, language, start, name_at, before)
    if kind in ("value", "declarator") and language in ("javascript", "typescript"):
        return _js_declared(masked, kind, name_at)
    if kind == "value" and language == "go" and not _GO_DECLARATION.match(before):
        closed = masked.rfind("\n)", 0, start)  # gofmt closes a group at column 0
        return _GO_GROUP_OPEN.search(masked, closed + 1, start) is not None
    if kind == "value" and language in _TYPED_FIELDS:
        return _typed_declaration(language, _ANNOTATIONS.sub("", before))
    return True


def _field_accepted(masked, language, start, name_at, before):
    """Whether a field match (kind_accepts) stands directly in a class-like body, as a member."""
    opening = _enclosing_brace(masked, name_at)
    if opening < 0:
        return False
    if masked.count("(", opening, name_at) > masked.count(")", opening, name_at):
        return False  # an argument in an initialiser (new Maker(a, UNSAFE, b)), not a member
    # x = ... continuing an expression-bodied member (void Setup() =>) is not an enum member,
    # nor in C# a call there (void Reset() => OnReset(context);)
    assigned = _ASSIGNED_NAME.match(masked, name_at) or language == "csharp"
    if language in _TYPED_FIELDS and assigned and not before.strip() and not member_start(masked, start):
        return False
    if language == "csharp" and before.count("<") > before.count(">"):
        return False  # a type argument (Action<Context, CircuitState, TimeSpan> OnBreak;)
    bound = max(masked.rfind(c, 0, opening) for c in ";{}")
    return any(
        m.group() != "object" or language in _OBJECT_KEYWORD
        for m in _CONTAINER_HEADER.finditer(masked, bound + 1, opening)
    )


def _typed_declaration(language, before):
    """Whether a typed value match (kind_accepts), ``before`` its name with annotations taken out,
    declares the name: by its keyword (``using Handle = int;``, not the statement ``using x;``),
    or as a type and a name, not a call, an assignment or an argument."""
    keywords = _DECLARATION_KEYWORDS.get(language)
    if keywords and re.search(r"\b" + keywords + r"\s*$", before):
        return True
    if language in ("c", "cpp"):  # an earlier declarator's plain initialiser: int a = 0, b;
        before = _C_INITIALISER.sub(",", before)
    return not (_WORD_BEFORE_CALL.search(before) or "=" in before or "(" in before)


_C_INITIALISER = _lazy_pattern(r"=[^,;\n(){}]*,")


def _c_rejects(masked, kind, start, name_at, before, bodiless):
    """Whether a C or C++ match is no declaration: a name in a value going on from the line above
    (``A = B |\n    C,``), a function's or a template's parameter (``f(int a,\n  const char*
    end,``, ``template <typename T, typename Char = char>``), a forward declaration (``struct
    queue;``) outside the pass for declarations without a body (``bodiless``: it is the symbol only
    where the file defines nothing of the name)."""
    if kind == "field":
        return masked[max(0, start - 400) : start].rstrip()[-1:] in _C_OPERATORS
    return kind == "value" and (
        _in_parameters(masked, name_at)
        or (
            not bodiless
            and _C_TAG_ONLY.fullmatch(before) is not None
            and _C_FORWARD.match(masked, name_at) is not None
        )
    )


def _rejects_nothing(*_):
    return False


_REJECTS = {"c": _c_rejects, "cpp": _c_rejects}  # per language: matches that are no declaration


_C_TAG_ONLY = _lazy_pattern(r"\s*(?:typedef\s+)?(?:struct|union|enum|class)\s+")
_C_OPERATORS = frozenset("|&+-*/%^<>=?:(")
_TEMPLATE_OPEN = _lazy_pattern(r"\btemplate\s*<")
_C_FORWARD = _lazy_pattern(r"[\w$]+\s*;")
_C_BODY_HEADER = _lazy_pattern(r"\b(?:struct|union|enum|class)\b")


_NAMESPACE_OPEN = _lazy_pattern(r"\bnamespace(?:[ \t]+[\w:]+)?[ \t]*\{")
_BRACE = _lazy_pattern(r"[{}]")


def without_namespace_braces(masked):
    """``masked`` with the braces of each C++ ``namespace x { ... }`` blanked, so that what a
    namespace holds stands at the depth of what is outside it."""
    chars = None
    for m in _NAMESPACE_OPEN.finditer(masked):
        depth = 0
        for brace in _BRACE.finditer(masked, m.end() - 1):
            depth += 1 if brace.group() == "{" else -1
            if depth == 0:
                chars = chars or list(masked)
                chars[m.end() - 1] = chars[brace.start()] = " "
                break
    return "".join(chars) if chars else masked


def template_start(masked, start):
    """Where a C++ definition whose line starts at ``start`` begins, over the ``template <...>``
    headers above it (over several lines: ``template <typename T,\n  enable_if_t<...> = 0>``)."""
    while True:
        head = masked[:start].rstrip()
        if not head.endswith(">"):
            return start
        depth = 0
        for i in range(len(head) - 1, max(-1, len(head) - 2000), -1):
            c = head[i]
            if c == ">":
                depth += 1
            elif c == "<":
                depth -= 1
                if depth == 0:
                    break
        else:
            return start
        if depth != 0 or not head[:i].rstrip().endswith("template"):
            return start
        keyword = head[:i].rstrip()
        line = _line_start_of(masked, len(keyword))
        if masked[line : len(keyword) - len("template")].strip():
            return start  # template is not first on its line
        start = line


def tail_extent(masked, close, name_end):
    """(start, end) of a C or C++ definition named after its body (``typedef struct { ... }
    span;``, a member ``union { ... } value;``) whose '}' is at ``close`` and whose name ends at
    ``name_end``: from the body's header to the ';'. None when the body is no type's (a function's
    or an initialiser's)."""
    depth = 0
    opening = -1
    for i in range(close, -1, -1):
        c = masked[i]
        if c == "}":
            depth += 1
        elif c == "{":
            depth -= 1
            if depth == 0:
                opening = i
                break
    if opening < 0:
        return None
    bound = max(masked.rfind(c, 0, opening) for c in ";{}")
    if not _C_BODY_HEADER.search(masked, bound + 1, opening):
        return None
    start = _line_start_of(masked, opening)
    while start > bound + 1:  # a header over several lines: typedef struct\n{
        above = _line_start_of(masked, start - 1)
        line = masked[above : start - 1].strip()
        if not line or line.startswith("#") or above <= bound:
            break
        start = above
    end = masked.find(";", name_end)
    return start, (len(masked) if end < 0 else end + 1)


def _in_parameters(masked, pos):
    """Whether ``pos`` stands among a function's or a template's parameters: inside parentheses
    or a ``template <`` opened since the last ';', '{' or '}'."""
    bound = max(masked.rfind(c, 0, pos) for c in ";{}")
    if masked.count("(", bound + 1, pos) > masked.count(")", bound + 1, pos):
        return True
    template = _TEMPLATE_OPEN.search(masked, bound + 1, pos)
    return template is not None and masked.count("<", template.start(), pos) > masked.count(
        ">", template.start(), pos
    )


def property_initializer(masked, end):
    """Where a C# property's accessors ending at ``end`` are followed by an initialiser
    (``{ get; set; } = value;``): the index of its '=', else None."""
    m = _CS_INITIALIZER.match(masked, end)
    return m.end() - 1 if m else None


_JS_DECLARATION = _lazy_pattern(r"(?<![\w$.])(?:var|let|const)\s")
_JS_STATEMENT_END = _lazy_pattern(r"[;{}()\[\]]")
_ANGLE_OPEN = _lazy_pattern(r"(?<![<=])<(?![<=])")
_ANGLE_CLOSE = _lazy_pattern(r"(?<![=>-])>(?![>=])")


def declaration_start(masked, name_at):
    """Where the ``var``, ``let`` or ``const`` statement that declares the name at ``name_at``
    after one of its commas starts, or -1 where that comma is not such a statement's (an argument,
    an object literal's, a comma expression). The nearest keyword before the name whose statement
    has not ended (no ';' and no bracket left open or closed between, once nested brackets are
    skipped) is the one; a few are tried, each nearer one whose statement ended ruling it out. A
    comma inside a type's generic arguments (``const f: Map<A,\n  B> = ...``) is none of its
    commas."""
    before = masked[:name_at].rstrip()
    if not before.endswith(","):
        return -1
    keywords = [m.start() for m in _JS_DECLARATION.finditer(masked, max(0, name_at - 20000), name_at)]
    for at in reversed(keywords[-8:]):
        if _open_statement(masked, at, len(before) - 1):
            head = masked[at : len(before) - 1]
            return at if len(_ANGLE_OPEN.findall(head)) <= len(_ANGLE_CLOSE.findall(head)) else -1
    return -1


def _open_statement(masked, lo, hi):
    """Whether masked[lo:hi] is one statement left open: its brackets balanced, no ';' outside them."""
    depth = 0
    for m in _JS_STATEMENT_END.finditer(masked, lo, hi):
        c = m.group()
        if c in "{([":
            depth += 1
        elif c in "})]":
            depth -= 1
            if depth < 0:
                return False
        elif depth == 0:
            return False
    return depth == 0


def object_property(masked, name_end, language):
    """Whether the JavaScript or TypeScript name ending at ``name_end`` is a property of an object
    literal (``name: () => ...``), not a declaration (``const name: T = ...``), a class field or a
    parameter (``f(done: () => void,``)."""
    if language not in ("javascript", "typescript") or _PROPERTY_COLON.match(masked, name_end) is None:
        return False
    opening = _enclosing_brace(masked, name_end)
    if opening < 0 or masked.count("(", opening, name_end) > masked.count(")", opening, name_end):
        return False
    return _DECLARATION_WORD.search(masked, _line_start_of(masked, name_end), name_end) is None


_PROPERTY_COLON = _lazy_pattern(r"[ \t]*:")
_DECLARATION_WORD = _lazy_pattern(r"\b(?:const|let|var|readonly|public|private|protected|static|declare)\b")


def _js_declared(masked, kind, name_at):
    """Whether a JavaScript or TypeScript value or declarator at ``name_at`` is a symbol: not a
    plain value local to a function, and a declarator after a comma of a declaration."""
    if kind == "declarator" and declaration_start(masked, name_at) < 0:
        return False
    return not _local_value(masked, name_at)


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


def member_start(masked, start):
    """Whether the line at ``start`` begins a member: after a '{', ';', ',', '}' or ']', or after
    an annotation, attribute or preprocessor line."""
    before = masked[:start].rstrip()
    if not before or before[-1] in "{;,}]":
        return True
    return masked[_line_start_of(before, len(before)) : len(before)].lstrip().startswith(("@", "[", "#"))


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


# Annotations and nothing else on a line, the last one possibly opening arguments that go on
# over the next lines (@Deprecated( ), @Option(help: Help( )), @get:JvmName( ) ), read once the
# line's balanced parentheses are taken out.
_ONLY_ANNOTATIONS = _lazy_pattern(r"(?:@[\w.:]+(?:\s*<[^>\n]*>)?\s*)*(?:@[\w.:]+\s*\(.*)?$")
_INNER_PARENS = _lazy_pattern(r"\([^()]*\)")


def only_annotations(line):
    """Whether ``line`` (masked, stripped) holds annotations and nothing else."""
    while "(" in line:
        line, n = _INNER_PARENS.subn("", line)
        if not n:
            break
    return _ONLY_ANNOTATIONS.match(line) is not None


def c_return_type_line(masked, prev, start):
    """Whether the C line ``prev`` above the definition at ``start`` is its return type alone
    (``static int\nname(void)``), not a statement or an access label."""
    return (
        re.match(r"^[\w\s*&:<>,]+$", prev) is not None
        and not re.search(r"\b(?:return|else|case|goto|public|private|protected)\b", prev)
        and not masked[start : start + 1].isspace()
    )
