from __future__ import annotations

import bisect
import os
import re

from .caches import (
    _PY_PIECES,
    COMPILED_PATTERNS,
    DEFINITION_PATTERNS,
    IMPORTS,
    MASKED_SOURCE,
    MODULE_FORMS,
    PY_PIECES_BYTES,
    PYTHON_DEFINITIONS,
    RUBY_ENDS,
    SOURCE_INDEX,
    SOURCE_LINES,
)
from .constants import _lazy_pattern
from .helpers import nearest_names
from .lexicon import heredoc_end, lexicon_of, mask, past_literal
from .symbol_kinds import (
    _COMMA_MEMBERS,
    ANNOTATION,
    C_DEFINITIONS,
    CS_EXPLICIT_MEMBERS,
    GENERATOR_METHOD,
    _python_assigned_names,
    _python_parse,
    attribute_start,
    c_return_type_line,
    compile_rows,
    declaration_start,
    kind_accepts,
    kind_patterns,
    local_to_body,
    macro_end,
    member_start,
    name_position,
    object_property,
    only_annotations,
    property_initializer,
    tail_extent,
    template_start,
    without_interface,
    without_namespace_braces,
)

# ----------------------------------------------------------------------------------------------
# Symbols: find the text of ``path#symbol`` in a file's source
# ----------------------------------------------------------------------------------------------
#
# Python goes through ``ast`` (exact extents, decorators included). Other languages use a small,
# documented heuristic, measured against tree-sitter by bench/freshness.py:
#
# 1. Mask the source: comments and string/char literals become spaces (same length, newlines
#    kept), so that a brace in a string or a name in a doc comment is never seen as code.
# 2. Find definition candidates for the name with per-construct patterns (``function f``,
#    ``fn f``, ``func (r *T) f``, ``class C``, ``const f = () =>``, ``Type name(...)`` methods and
#    C functions, Ruby ``def``/``class``/``module``), rejecting calls (``x.f(``, ``return f(``).
# 3. Take the extent: from the definition line (with its ``@annotation``/``[Attribute]`` lines and
#    a C return type on the line above) to the brace that closes the body; to ``;`` or the end
#    of the line for bodiless values and types (``type T int``, ``fun f() = x``, ``a => a + 1``);
#    to the matching ``end`` by indentation for Ruby. A declaration without a body (prototype,
#    forward declaration) is not a definition.
# 4. Keep the candidates at the shallowest brace depth; several (overloads) are joined, so a
#    change to any of them counts as a change of the cited symbol.
#
# Qualified names ``A.b`` (or ``A::b``): Go receivers ``func (a *A) b``, C++ ``A::b(...)``
# out-of-line definitions, Rust ``impl ... A { fn b }`` blocks, Kotlin ``fun A.b()``, JS
# ``A.prototype.b = function``, and otherwise ``b`` inside ``A``'s body.

LANGUAGE_BY_EXTENSION = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".go": "go", ".rs": "rust", ".java": "java", ".kt": "kotlin", ".kts": "kotlin", ".cs": "csharp",
    ".rb": "ruby", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp",
    ".hh": "cpp", ".hxx": "cpp", ".swift": "swift", ".php": "php", ".scala": "scala",
}  # fmt: skip


def language_of(path):
    return LANGUAGE_BY_EXTENSION.get(os.path.splitext(path)[1].lower())


@MASKED_SOURCE
def _mask_source(source, language):
    """``source`` with comments and string literals blanked to spaces (newlines kept)."""
    return mask(source, language)


_CALL_LIKE = _lazy_pattern(
    r"(?:^|[^\w$])(?:return|else|if|while|for|switch|case|new|throw|await|yield|echo|print|"
    r"delete|sizeof|typeof|goto|assert|raise|do|in|of|not|and|or)\s*$"
)
_MODIFIERS = (  # an annotation may stand on the definition's own line: @Override public void f()
    r"(?:(?:"
    + ANNOTATION
    + r"|public|private|protected|internal|static|final|abstract|async|virtual|override|inline|"
    r"extern|const|constexpr|consteval|unsafe|export|default|synchronized|native|sealed|open|suspend|"
    r"operator|explicit|friend|partial|readonly|pub(?:\([^)\n]*\))?|declare|new|fileprivate|mutating|"
    r"static_cast|tailrec|infix|external|actual|expect|data|inner|lateinit|get|set|strictfp|"
    r"transient|volatile|__inline|__forceinline|STATIC|INLINE)\s+)*"
)
_TYPE_KEYWORDS = (
    r"(?:class|interface|enum|struct|trait|type|module|record|object|protocol|union|namespace|mod|"
    r"typealias|actor|extension)"
)


_OTHER_KINDS = frozenset({"value", "field", "macro", "declarator"})

# Function and type definitions, rows as in symbol_kinds.KIND_ROWS: (kind, pattern, flags), with
# {NAME} for the name and {END} for what may not follow it. A language without a row of its own
# takes the common rows; every language adds its KIND_ROWS.
_COMMON_DEFINITIONS = (
    ("func", r"\b(?:function\s*\*?|fn|func|def|sub|proc)\s+{NAME}{END}", 0),
    ("func", r"\bfun\s+(?:<[^>\n]*>\s*)?(?:[\w.<>?,* ]+\.)?{NAME}\s*[(<]", 0),  # fun Class<*>.f(
    ("func", r"\bfunc\s*\([^)\n]*\)\s*{NAME}\s*[\[(]", 0),
    ("type", r"\b" + _TYPE_KEYWORDS + r"\s+{NAME}{END}", 0),
    (
        "value",
        r"\b(?:const|let|var)\s+{NAME}\s*(?::[^=;\n]+)?=\s*(?:async\b\s*)?(?:function\b|\(|<|[A-Za-z_$][\w$]*\s*=>|class\b)",
        0,
    ),
    (
        "value",
        r"^[ \t]*(?:(?:static|public|private|protected|readonly|async|override)\s+)*{NAME}\s*[:=]\s*(?:async\b\s*)?"
        r"(?:function\b|\([^)\n]*\)\s*(?::[^=\n]+)?=>|[A-Za-z_$][\w$]*\s*=>)",
        re.M,
    ),
    ("value", r"^[ \t]*(?:[\w$]+\.)+{NAME}\s*=\s*(?:async\s+)?(?:function\b|\([^)\n]*\)\s*=>)", re.M),
    # Methods and C-style functions: modifiers, an optional return type, then name( .
    (
        "func",
        r"^[ \t]*" + _MODIFIERS + r"(?:[\w$<>\[\],.*&:~?]+(?:[ \t]+|[ \t]*[*&]+[ \t]*))*?"
        r"(?:[\w$]+(?:<[^>\n]*>)?::)*{NAME}[ \t]*(?:<[^>\n]*>)?[ \t]*\(",
        re.M,
    ),
)
_CS_TUPLE_RETURN = (  # (bool, object?) TryGet(, Task<(bool, T?)> TryGetAsync(
    "func",
    r"^[ \t]*(?:\w+[ \t]+)*(?:[\w.]+<)?\([^()\n]*\)[>?\[\]]*[ \t]+{NAME}[ \t]*(?:<[^>\n]*>)?[ \t]*\(",
    re.M,
)


def _initialiser(names):
    """The row of an initialiser, where ``names`` are the words that name one: init?(...) {"""
    return (
        "func",
        r"^[ \t]*" + _MODIFIERS + r"(?:(?:convenience|required|nonisolated)\s+)*(?=(?:" + names + r")\b)"
        r"{NAME}[?!]?[ \t]*(?:<[^>\n]*>)?[ \t]*\(",
        re.M,
    )


_DEFINITIONS = {
    # Rust functions always say ``fn``: the C-style row would take a call or a match arm at a
    # line's start (``Self::Read(n) =>``) for a definition.
    "rust": _COMMON_DEFINITIONS[:-1],
    "c": _COMMON_DEFINITIONS + C_DEFINITIONS,
    "cpp": _COMMON_DEFINITIONS + C_DEFINITIONS,
    "ruby": (
        (
            "func",
            r"(?:^|;)[ \t]*(?:(?:private|protected|public|module_function)\s+)?def\s+(?:self\.|self::|[@$]*[\w:]+\.)?{NAME}{END}",
            re.M,
        ),
        ("type", r"^[ \t]*(?:class|module)\s+(?:[\w:]*::)?{NAME}{END}", re.M),
    ),
    "csharp": _COMMON_DEFINITIONS + (_CS_TUPLE_RETURN,),
    # Swift and Kotlin functions always say ``func`` or ``fun``: the C-style row would take a
    # call at a line's start (``lock()``) for one; it reads their initialisers alone. An extension
    # of a nested type is cited by the type's last name: extension A.B { func f }.
    "swift": _COMMON_DEFINITIONS[:-1]
    + (_initialiser("init|subscript"), ("type", r"\bextension\s+(?:\w+\.)+{NAME}{END}", 0)),
    "kotlin": _COMMON_DEFINITIONS[:-1] + (_initialiser("constructor"),),
}
_AFTER_KINDS = {  # rows tried after the KIND_ROWS
    "csharp": CS_EXPLICIT_MEMBERS,
    "javascript": (GENERATOR_METHOD,),
    "typescript": (GENERATOR_METHOD,),
    "go": (  # inside a ``type ( ... )`` group
        (
            "type",
            r"^[ \t]+{NAME}(?:\[[^\]\n]*\])?[ \t]+(?:struct|interface|func|map|chan|\*|\[|[\w.]+[ \t]*$)",
            re.M,
        ),
    ),
}
_NAME_ENDS = {
    "ruby": r"(?![\w$?!=])",  # Ruby: x is not x= nor x?
    "swift": r"(?![\w$]|\.\w)",  # Swift: extension A.B extends B, not A
}


@DEFINITION_PATTERNS  # compiling them costs ~1 ms a name; verify meets a name many times
def _patterns(name, language):
    """(kind, regex) definition patterns for ``name``; kind is "func", "type" or "value".
    Cached: callers only iterate over the list."""
    end = _NAME_ENDS.get(language, r"(?![\w$])")
    found = compile_rows(_DEFINITIONS.get(language, _COMMON_DEFINITIONS), name, end)
    return found + kind_patterns(name, language) + compile_rows(_AFTER_KINDS.get(language, ()), name, end)


def _match_brace(masked, i):
    """Index just past the '}' matching the '{' at i (or the end of the text)."""
    depth = 0
    for m in _BRACES.finditer(masked, i):
        if m.group() == "{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return m.end()
    return len(masked)


_BRACES = _lazy_pattern(r"[{}]")


def _next_code_char(masked, i):
    m = re.compile(r"\S").search(masked, i)
    return masked[m.start()] if m else ""


class _Header:
    """Reading a definition's header from the end of its name toward its body: the brackets and
    generic angles open, whether a '=' was seen (a value, or a function with an expression body),
    and whether a C++ constructor's member initialiser list started."""

    __slots__ = ("masked", "language", "lexicon", "pos", "kind", "bodiless", "depth", "angle", "assigned",
                 "init_list", "quotes", "counted")  # fmt: skip

    def __init__(self, masked, language, pos, kind, bodiless):
        self.masked, self.language, self.lexicon = masked, language, lexicon_of(language)
        self.pos, self.kind, self.bodiless = pos, kind, bodiless
        self.depth = self.angle = 0  # angle: inside <...>: Promise<{ a: T }> is a type, not the body
        self.assigned = self.init_list = False
        self.quotes, self.counted = 0, pos  # the '"' read so far (a masked string keeps its two)

    def nests(self, c, i):
        """Whether ``c`` opens or closes a bracket or a generic argument list (then it is counted)."""
        masked = self.masked
        if c in "([":
            self.depth += 1
        elif c in ")]":
            self.depth -= 1
        elif self.depth == 0 and self.angle and c == ">" and masked[i - 1 : i] not in ("=", "-"):
            self.angle -= 1
        elif (
            self.depth == 0
            and c == "<"
            and (self.kind == "type" or not self.assigned)  # type X = Omit<...>: generics after '=' too
            and self.lexicon.angle_generics
            and masked[i + 1 : i + 2] != "<"
        ):
            self.angle += 1
        else:
            return False
        return True

    def ends_at_comma(self):
        """Whether a comma at the top ends the definition: an enum member or a Rust field, or an
        object literal's property (browser: () => `...`,)."""
        if self.kind == "field":
            return self.language in _COMMA_MEMBERS
        return self.kind == "value" and object_property(self.masked, self.pos, self.language)

    def ends_without_body(self):
        return self.assigned or self.bodiless or self.kind != "func"

    def at_top(self, c, i):
        """(True, end or None) where the definition ends at ``c`` (None: a declaration without a
        body); (False, index to read on from) past a nested brace; (False, None) to read on."""
        if c == "{":
            return self.brace(i)
        if c == "," and self.ends_at_comma():
            return True, i + 1
        if c == ";":
            return True, (i + 1 if self.ends_without_body() else None)
        if c == "}":  # the last member without a comma or ';' ends with its code, not the brace's line
            return True, (
                len(self.masked[self.pos : i].rstrip()) + self.pos if self.ends_without_body() else None
            )
        masked = self.masked
        if c == "=" and masked[i + 1 : i + 2] != "=" and masked[i - 1 : i] not in ("=", "!", "<", ">"):
            self.assigned = True
        elif c == ":" and self.language == "cpp" and masked[self.pos : i].rstrip().endswith(")"):
            self.init_list = True
        elif c == "\n" and self.lexicon.newline_ends and not self.in_string(i) and not self.continues(i):
            return True, i
        return False, None

    def in_string(self, i):
        """Whether the newline at ``i`` stands inside a triple-quoted string (Swift, Kotlin): an
        odd number of '"' stands between the name and it, each masked string keeping its two."""
        if not self.lexicon.triple_quotes:
            return False
        self.quotes += self.masked.count('"', self.counted, i)
        self.counted = i
        return self.quotes % 2 == 1

    def brace(self, i):
        masked = self.masked
        if self.assigned and self.lexicon.newline_ends:
            return False, _match_brace(masked, i)  # a lambda or object in an expression body: read on
        before = masked[self.pos : i].rstrip()
        if self.init_list and before and (before[-1].isalnum() or before[-1] in "_>"):
            return False, _match_brace(masked, i)  # C++ member initialiser x{1}
        if self.language == "typescript" and not self.assigned and before.endswith(":"):
            return False, _match_brace(masked, i)  # an object type: f(): { a: number } {
        if self.language == "go" and self.kind == "func" and _GO_BRACED_TYPE.search(before):
            return False, _match_brace(masked, i)  # a result type: func f() map[K]struct{} {
        return True, _match_brace(masked, i)

    def continues(self, i):
        """Whether the statement goes on past the newline at ``i``."""
        if (
            self.language in ("javascript", "typescript")
            and self.kind == "func"
            and not (self.assigned or self.bodiless)
        ):
            return True  # a function header must reach its body or ';'
        if self.kind == "type" and self.lexicon.constructor_lines and _CONSTRUCTOR.match(self.masked, i + 1):
            return True  # class A\nprivate constructor(...)
        return _line_continues(self.masked, i, self.lexicon)


def _line_continues(masked, i, lexicon):
    """Whether the line ending at the newline ``i`` continues on the next (an operator, an open
    arrow or a comma ends it, or the next line starts with one (``, b = 2`` written comma-first),
    ``else`` or ``extends``, or with a property's accessor); a ``?`` that ends an optional type
    ends nothing, nor does the '/' that closes a regular expression."""
    line = masked[masked.rfind("\n", 0, i) + 1 : i].rstrip()
    following = _next_code_char(masked, i)
    return (
        not line.strip()
        or line.endswith(("=>", "->"))
        or line.split()[-1] == "where"  # a where clause on lines of its own (Swift)
        or (line[-1] in ",(=+-*/|&.:<" and not (lexicon.regex_literals and _REGEX_END.search(line)))
        or (line[-1] == "?" and not lexicon.optional_types)
        or following in ("{", ".", "?", ":", "=", "|", "&", ">", ",")
        or _CONTINUING_WORD.match(masked[i + 1 : i + 40]) is not None
        or (lexicon.accessor_lines and _ACCESSOR.match(masked[i + 1 : i + 60]) is not None)
    )


_REGEX_END = _lazy_pattern(r"/[ \t]*/$")  # a masked regex literal's close, not a division: X = /   /
_GO_BRACED_TYPE = _lazy_pattern(r"\b(?:struct|interface)$")
_CONTINUING_WORD = _lazy_pattern(r"\s*(?:(?:else|catch|finally|extends|implements|where)\b|->)")
_ACCESSOR = _lazy_pattern(
    r"\s*(?:(?:@[\w.:]+\s+)*(?:private|protected|internal|public|inline)\s+)*[gs]et\b(?!\s*[=:.])"
)


_CONSTRUCTOR = _lazy_pattern(
    r"\s*(?:@[\w.]+\s+)*(?:(?:private|protected|internal|public)\s+)?constructor\s*\("
)
_HEADER_CHARS = _lazy_pattern(r"[()\[\]<>{};,=:\n`\"]")  # what _Header reads


def _body_end(masked, language, pos, kind, limit, bodiless=False):
    """End (exclusive) of the definition whose name ends at ``pos``, or None for a declaration
    without a body (unless ``bodiless``: then the declaration itself, up to its ';')."""
    header = _Header(masked, language, pos, kind, bodiless)
    find = _HEADER_CHARS.search
    i = pos
    while i < limit:
        m = find(masked, i, limit)  # every other character leaves the header as it is
        if m is None:
            return None
        i = m.start()
        c = masked[i]
        if c in '`"':
            i = past_literal(masked, i, limit)
            continue
        if header.nests(c, i):
            if header.depth < 0:
                return None
        elif header.depth == 0 and not header.angle:
            done, at = header.at_top(c, i)
            if done:
                return at
            if at is not None:
                i = at
                continue
        i += 1
    return None


def _line_start(text, pos):
    return text.rfind("\n", 0, pos) + 1


def _line_end(text, pos):
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


def _matching_open_paren(masked, close):
    """Index of the '(' that the ')' at ``close`` closes, or -1."""
    depth = 0
    for i in range(close, -1, -1):
        if masked[i] == ")":
            depth += 1
        elif masked[i] == "(":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _extend_start(masked, language, start):
    """Move the start up over annotation/attribute lines and a C return type line."""
    if language in ("c", "cpp"):  # a C++ header is often a .h
        above = template_start(masked, start)
        if above != start:
            return above
    while start > 0:
        prev_start = _line_start(masked, start - 1)
        prev = masked[prev_start : start - 1].strip()
        if not prev:
            break
        if prev.startswith("@") and language not in ("c", "cpp", "python", "ruby"):
            if not only_annotations(prev):
                break  # a whole member that starts with one: @Expose private int a;
            start = prev_start
        elif language == "csharp" and attribute_start(masked, prev, prev_start) >= 0:
            start = attribute_start(masked, prev, prev_start)  # [Serializable], or inside #if ... #endif
        elif language == "php" and prev.startswith("#[") and prev.endswith("]"):  # #[Route('/')]
            start = prev_start
        elif prev.endswith((")", ")]")) and language not in ("c", "cpp", "python", "ruby"):
            first = _annotation_opening(masked, prev_start, start)
            if first < 0:
                break
            start = first
        elif language in ("c", "cpp") and c_return_type_line(masked, prev, start):
            start = prev_start
            break
        else:
            break
    return start


def _annotation_opening(masked, prev_start, start):
    """Where the multi-line annotation whose last line (``@Deprecated(\n  "...",\n)``) ends at
    ``start`` begins, or -1 where the parentheses closing there open no annotation."""
    opening = _matching_open_paren(masked, masked.rfind(")", prev_start, start))
    first = _line_start(masked, opening) if opening >= 0 else -1
    if first < 0 or not masked[first:opening].strip().startswith(("@", "[")):
        return -1
    return first


_RUBY_OPENER = _lazy_pattern(
    r"^\s*(?:(?:private|protected|public|module_function)\s+)?(?:def|class|module|if|unless|while|until|case|begin|for)"
    r"(?![\w?!:])"
)
_RUBY_INLINE_OPENER = _lazy_pattern(
    r"(?:=|\(|\|\||&&|\breturn)\s*(?:if|unless|case|begin|while|until)(?![\w?!:])"
)
_RUBY_DO = _lazy_pattern(r"(?<![.:\w@$])do(?![\w?!:])")
_RUBY_END = _lazy_pattern(r"(?<![.:\w@$])end(?![\w?!:])")
_RUBY_ENDLESS_DEF = _lazy_pattern(
    r"^\s*(?:(?:private|protected|public|module_function)\s+)?def\s+[\w.?!]+(?:\([^)]*\))?\s+=\s"
)


def _ruby_keyword_end(masked, start):
    """End of the Ruby block opening at ``start`` by counting openers against ``end``s, or None
    when they never balance (then indentation decides)."""
    depth = 0
    pos = start
    while pos < len(masked):
        end = _line_end(masked, pos)
        for statement in masked[pos:end].split(";"):
            if _RUBY_ENDLESS_DEF.match(statement):
                continue
            if _RUBY_OPENER.match(statement):
                depth += 1
            depth += len(_RUBY_INLINE_OPENER.findall(statement))
            if not re.match(r"\s*(?:while|until|for)\b", statement):
                depth += len(_RUBY_DO.findall(statement))
            depth -= len(_RUBY_END.findall(statement))
        if depth <= 0:
            return end if depth == 0 else None
        pos = end + 1
    return None


_RUBY_MODIFIER_LINE = _lazy_pattern(r"\s*(?:private|protected|public|module_function)\s*$")
_RUBY_END_LINE = _lazy_pattern(r"\s*end\b")
_RUBY_DEFINITION_LINE = _lazy_pattern(r"\s*(?:def|class|module)\b")


@RUBY_ENDS  # a module's extent is needed for every symbol cited inside it
def _ruby_end(masked, start, name_end):
    """End of a Ruby def/class/module: the ``end`` at its indentation (or one line). Where the
    indentation stops on something else (code dedented below it, a sibling definition with no
    ``end`` first), openers are counted against ``end``s instead, if they balance."""
    first_end = _line_end(masked, name_end)
    line = masked[start:first_end]
    if re.search(r"\bend\s*$", line) or _RUBY_ENDLESS_DEF.match(line):
        return first_end
    indent = len(line) - len(line.lstrip(" \t"))
    pos = first_end + 1
    while pos < len(masked):
        end = _line_end(masked, pos)
        text = masked[pos:end]
        if text.strip():
            level = len(text) - len(text.lstrip(" \t"))
            modifier = _RUBY_MODIFIER_LINE.match(text)
            if level == indent and not modifier and _RUBY_END_LINE.match(text):
                return end
            if (level < indent and not modifier) or (level == indent and _RUBY_DEFINITION_LINE.match(text)):
                counted = _ruby_keyword_end(masked, start)
                return counted if counted is not None else pos - 1
        pos = end + 1
    counted = _ruby_keyword_end(masked, start)
    return counted if counted is not None else len(masked)


def _indent_end(masked, start, name_end):
    """End of an indentation block whose header line starts at ``start``."""
    line = masked[start : _line_end(masked, name_end)]
    indent = len(line) - len(line.lstrip(" \t"))
    end = pos = _line_end(masked, name_end)
    while pos < len(masked):
        nxt = _line_end(masked, pos + 1)
        text = masked[pos + 1 : nxt]
        if text.strip():
            if len(text) - len(text.lstrip(" \t")) <= indent:
                break
            end = nxt
        pos = nxt
    return end


class _SourceIndex:
    """A masked source with its line starts and the brace depth at each line start."""

    def __init__(self, source, language):
        self.language = language
        self.source, self.masked = source, _mask_source(source, language)
        masked = self.masked
        # a C++ namespace nests nothing a reader cites: its braces do not count (nor in a .h)
        self.nesting = nesting = without_namespace_braces(masked) if language in ("c", "cpp") else masked
        self.starts = [0]
        self.depth = [0]
        depth = 0
        for line in nesting.split("\n"):
            depth += line.count("{") - line.count("}")
            self.starts.append(self.starts[-1] + len(line) + 1)
            self.depth.append(depth)
        self._impls = None

    def line_of(self, pos):
        return bisect.bisect_right(self.starts, pos) - 1

    def depth_at(self, pos):
        if self.language in ("ruby", "python"):  # no braces: nesting is indentation
            line = self.masked[pos : _line_end(self.masked, pos)]
            return len(line) - len(line.lstrip())
        line = self.line_of(pos)
        return (
            self.depth[line]
            + self.nesting.count("{", self.starts[line], pos)
            - self.nesting.count("}", self.starts[line], pos)
        )

    def lines_with(self, name, lo, hi):
        """(start, end) of each line within [lo, hi) that contains ``name``."""
        found = []
        pos = self.masked.find(name, lo, hi)
        while pos >= 0:
            line = self.line_of(pos)
            start, end = max(self.starts[line], lo), min(self.starts[line + 1] - 1, hi)
            found.append((start, end))
            pos = self.masked.find(name, end, hi)
        return found

    def impl_blocks(self):
        """Rust ``impl`` blocks: [(self type name, body start, body end)]."""
        if self._impls is None:
            self._impls = []
            for m in re.finditer(r"^[ \t]*(?:unsafe\s+)?impl\b([^{;]*)\{", self.masked, re.M):
                header = " ".join(m.group(1).split())
                self_type = (
                    header.split(" for ")[-1] if " for " in header else re.sub(r"^<.*?>\s*", "", header)
                )
                self_type = re.sub(r"<.*|\bwhere\b.*", "", self_type).strip().lstrip("&*").strip()
                self_type = self_type.split("::")[-1].split()[-1] if self_type else ""
                self._impls.append((self_type, m.end(), _match_brace(self.masked, m.end() - 1) - 1))
        return self._impls


@SOURCE_INDEX
def _source_index(source, language):
    return _SourceIndex(source, language)


def _find(index, name, lo, hi, containers_only=False):
    """Definitions of ``name`` within [lo, hi) at the shallowest depth: [(start, end)].

    Declarations without a body (interface and abstract methods, prototypes) count only when
    the name has no definition with a body."""
    return _find_pass(index, name, lo, hi, containers_only, False) or _find_pass(
        index, name, lo, hi, containers_only, True
    )


def _find_pass(index, name, lo, hi, containers_only, bodiless):
    candidates = []
    lines = index.lines_with(name, lo, hi)
    for kind, pattern in _patterns(name, index.language):
        if containers_only and kind not in ("type", "tail") and index.language != "ruby":
            continue
        for line_lo, line_hi in lines:
            for m in pattern.finditer(index.masked, line_lo, line_hi):
                found = _candidate(index, name, kind, pattern, m, hi, bodiless)
                if found is not None:
                    candidates.append(found)
    return _shallowest(index, candidates, containers_only)


def _candidate(index, name, kind, pattern, m, hi, bodiless):
    """(start, end, kind) of the definition a pattern's match ``m`` found, or None where the
    match is no definition (a call, a use of a type, a declaration without a body)."""
    masked, language = index.masked, index.language
    if kind == "tail":  # C: typedef struct { ... } name;
        found = tail_extent(masked, m.start(), m.end() - 1)
        return found and (found[0], _line_end(masked, found[1] - 1), "type")
    start = _line_start(masked, m.start())
    if kind in _OTHER_KINDS:
        name_at = name_position(masked, name, m.start(), m.end())
        if not kind_accepts(masked, language, kind, start, name_at, bodiless):
            return None
        if kind == "declarator":  # the statement from its keyword: var a = 1\n  , b = 2;
            start = _line_start(masked, declaration_start(masked, name_at))
    else:
        name_at = masked.rfind(name, m.start(), m.end())
    c_style = kind == "func" and pattern.pattern.startswith("^") and language != "ruby"
    if c_style and not _c_style_definition(without_interface(masked[start:name_at], language), language):
        return None
    if c_style and language in ("c", "cpp") and _C_MACRO_USE.fullmatch(masked, start, name_at + len(name)):
        return None  # no type before an upper-case name: a macro's use, FMT_ENABLE_IF(...)
    if c_style and language == "csharp" and not member_start(masked, start):
        return None  # a call continuing an expression body: void Reset() =>\n    OnReset(x);
    end = _candidate_end(index, start, name_at + len(name), kind, hi, bodiless)
    if end is None:
        return None
    start = _extend_start(masked, language, start)
    return start, _line_end(masked, max(end - 1, start)), kind


# what may stand before a C or C++ function's name beside its type: static enum op f(,
# extern "C" int f(, __attribute__((visibility("default"))) int f(
_C_TYPE_SPECIFIER = _lazy_pattern(
    r"\b(?:struct|enum|union)\s+[\w$]+|\bextern\s*\"[^\"\n]*\"|\b__attribute__\s*\(\((?:[^()\n]|\([^()\n]*\))*\)\)"
)
_C_MACRO_USE = _lazy_pattern(r"[ \t]*[A-Z][A-Z0-9_]*")
_C_STYLE_FOREIGN = _lazy_pattern(r"[^\w\s$<>\[\],.*&:~?()@]")
_C_STYLE_SUPERTYPE = _lazy_pattern(
    r"\b(?:class|interface|struct|enum)\b|\bobject\b(?!\s*$|[\[?>,)])|(?<!:):(?!:)"  # object Get(): a type
)


def _c_style_definition(before, language):
    """Whether what stands before a name on its line (``static int``) makes ``name(`` a
    definition, not a call (``x = f(``, ``return f(``, ``a.f(``) or a supertype (``class A : B()``)."""
    if language in ("c", "cpp"):
        before = _C_TYPE_SPECIFIER.sub("", before)
    if "=" in before or _CALL_LIKE.search(before) or before.rstrip().endswith((".", "->")):
        return False
    if _C_STYLE_FOREIGN.search(before.strip()):
        return False
    outside = re.sub(r"<[^<>]*>", "", before)  # template <class T> is fine
    return not _C_STYLE_SUPERTYPE.search(outside)


def _candidate_end(index, start, name_end, kind, hi, bodiless):
    """End of a definition whose line starts at ``start``, by how its language ends a block."""
    masked, language = index.masked, index.language
    blocks = lexicon_of(language).blocks
    if kind == "macro":
        return macro_end(masked, name_end)
    if blocks == "end" and kind != "value":
        return _ruby_end(masked, start, name_end)
    if blocks == "end":  # X = <<~EOS: to the end of the heredoc's body; X = proc do: to its end
        first_end = _line_end(masked, start)
        heredoc = heredoc_end(index.source, start, first_end)
        counted = _ruby_keyword_end(masked, start) if heredoc is None else None
        if heredoc is not None or (counted or 0) > first_end:
            return heredoc or counted
    if blocks == "indent":  # a Python file ast cannot parse
        return _indent_end(masked, start, name_end)
    if kind == "type" and language in ("c", "cpp"):
        brace = masked.find("{", name_end, hi)
        tail = masked[name_end : brace if brace >= 0 else hi]
        if not _C_TYPE_HEAD.match(tail):
            return None  # a use of the type (struct S *p), not its definition
    end = _body_end(masked, language, name_end, kind, hi, bodiless)
    at = property_initializer(masked, end) if language == "csharp" and kind == "value" and end else None
    return end if at is None else _body_end(masked, language, at, kind, hi) or end


_C_TYPE_HEAD = _lazy_pattern(r"^\s*(?:final\s*)?(?::[^;{()=]*)?$")


def _shallowest(index, candidates, containers_only):
    """The candidates at the shallowest nesting, each once (overloads are several)."""
    if not candidates:
        return []
    masked, language = index.masked, index.language
    if containers_only and language != "ruby":
        candidates = [c for c in candidates if c[2] == "type"] or candidates
    if language == "go":  # plain F is the package-level func or type; T.F names a method
        plain = [c for c in candidates if not _GO_METHOD.match(masked[c[0] : c[0] + 80])]
        candidates = plain or candidates
    depths = {c[0]: index.depth_at(c[0]) for c in candidates}
    shallowest = min(depths.values())
    chosen = []
    for start, end, _ in sorted(candidates):
        if depths[start] == shallowest and not any(s <= start < e for s, e in chosen):
            chosen.append((start, end))
    return chosen


_GO_METHOD = _lazy_pattern(r"\s*func\s*\(")


def _qualified_special(index, owner, name):
    """Definitions of ``owner.name`` that live outside ``owner``'s own body."""
    masked, language = index.masked, index.language
    o, n = re.escape(owner), re.escape(name)
    if language == "rust":
        found = []
        for self_type, lo, hi in index.impl_blocks():
            if self_type == owner:
                found.extend(_find(index, name, lo, hi))
        return found
    if language == "go":
        pattern = _compiled(
            r"^func\s*\(\s*(?:\w+\s+)?\*?\s*" + o + r"(?:\[[^\]\n]*\])?\s*\)\s*" + n + r"\s*[\[(]"
        )
    elif language in ("c", "cpp"):
        pattern = _compiled(r"^[^\n;{}=]*?\b" + o + r"(?:<[^>\n]*>)?\s*::\s*" + n + r"\s*\(")
    elif language == "kotlin":
        pattern = _compiled(r"\bfun\s+(?:<[^>\n]*>\s*)?" + o + r"(?:<[^>\n]*>)?\." + n + r"\s*\(")
    elif language in ("javascript", "typescript"):
        pattern = _compiled(
            r"^[ \t]*(?:[\w$]+\.)*" + o + r"(?:\.prototype)?\." + n + r"\s*=\s*(?:async\s+)?"
            r"(?:function\b|\([^)\n]*\)\s*=>)"
        )
    else:
        return []
    found = []
    for line_lo, line_hi in index.lines_with(name, 0, len(masked)):
        for m in pattern.finditer(masked, line_lo, line_hi):
            start = _line_start(masked, m.start())
            end = _body_end(masked, language, m.end() - 1, "func", len(masked))
            if end is not None:
                found.append((_extend_start(masked, language, start), _line_end(masked, end - 1)))
    return found


@COMPILED_PATTERNS
def _compiled(pattern):
    return re.compile(pattern, re.M)


def _heuristic_extents(source, language, parts):
    """Sorted (start, end) character extents of the definitions ``parts`` names, or None."""
    index = _source_index(source, language or "")
    extents = _qualified_special(index, parts[-2], parts[-1]) if len(parts) >= 2 else []
    if not extents or index.language == "rust":  # a Rust field may share its name with an impl item
        extents += _nested_extents(index, parts) or []
    return sorted(set(extents)) if extents else None


def _nested_extents(index, parts):
    """(start, end) extents of the last of ``parts`` within the bodies of the ones before, or None."""
    masked = index.masked
    regions = [(0, len(masked))]
    for position, part in enumerate(parts):
        last = position == len(parts) - 1
        found = []
        for lo, hi in regions:
            found.extend(_find(index, part, lo, hi, containers_only=not last))
        if last and position and index.language in ("kotlin", "swift"):
            found = [f for f in found if not local_to_body(masked, f[0])]  # A.b: a local is no member
        if not found:
            return None
        if last:
            return found
        if index.language == "ruby":  # the body: the lines after the header, or the one line
            regions = [
                (_line_end(masked, s) + 1, e) if e > _line_end(masked, s) else (s, e) for s, e in found
            ]
        else:  # the body only: from its opening brace to the end
            regions = [((masked.find("{", s, e) + 1) or s, e) for s, e in found]
    return None


# A Python file is parsed in pieces, each top-level definition (with its decorators) and the
# statements after it up to the next: a piece unchanged since another version of the file was
# parsed (the usual case along a history, and between capture and HEAD) is not parsed again.
# Where a piece does not parse on its own (a decorator split from its definition, a line that
# only looks like a definition inside a string), the whole file is parsed, as before.
_PY_TOP_DEFINITION = _lazy_pattern(r"^(?:@|def\b|class\b|async[ \t]+def\b)", re.M)
_py_pieces_size = [0]  # characters of piece text in _PY_PIECES


_PY_TOP_STATEMENT = _lazy_pattern(r"^[^\s#)\]}]", re.M)  # a line that starts a top-level statement


def _python_pieces(source):
    """[(first line, text)] of the top-level pieces of ``source``, or None when there is one."""
    tops = None
    starts = []
    for m in _PY_TOP_DEFINITION.finditer(source):
        at = m.start()
        if starts:
            # Part of the decorator group above (its lines, or a bracket a decorator opened)?
            if tops is None:
                tops = [t.start() for t in _PY_TOP_STATEMENT.finditer(source)]
            i = bisect.bisect_left(tops, at) - 1
            if i >= 0 and source.startswith("@", tops[i]):
                continue
        starts.append(at)
    if len(starts) < 2:
        return None
    if starts[0] != 0:
        starts.insert(0, 0)
    pieces = []
    line = 1
    for i, at in enumerate(starts):
        text = source[at : starts[i + 1] if i + 1 < len(starts) else len(source)]
        pieces.append((line, text))
        line += text.count("\n")
    return pieces


_PY_CLASS_SPLIT_CHARS = 2048  # a class this long is parsed method by method
_PY_CLASS_LINE = _lazy_pattern(r"^class[ \t]+(\w+)")
_PY_MEMBER = _lazy_pattern(r"^([ \t]+)(?:@|def\b|class\b|async[ \t]+def\b)")


def _python_piece_definitions(text):
    """_python_tree_definitions of one piece, kept by its text (within PY_PIECES_BYTES). A long
    class is parsed in pieces too (_python_class_definitions)."""
    found = _PY_PIECES.get(text, False)
    if found is False:
        found = None
        if len(text) > _PY_CLASS_SPLIT_CHARS:
            found = _python_class_definitions(text)
        if found is None:
            found = _python_tree_definitions(text)
        if not _PY_PIECES or _py_pieces_size[0] + len(text) > PY_PIECES_BYTES:
            _PY_PIECES.clear()  # also after clear_caches emptied it
            _py_pieces_size[0] = 0
        _PY_PIECES[text] = found
        _py_pieces_size[0] += len(text)
    return found


def _python_class_definitions(text):
    """The definitions of a piece that is one long class (decorators first, module statements
    after it): its header parsed with a ``pass`` for the body, each member (a definition at the
    body's indentation, with the statements up to the next) dedented and parsed on its own. None
    where the piece has another shape or a part does not parse: the piece is parsed whole."""
    lines = text.split("\n")
    shape = _python_class_shape(lines)
    if shape is None:
        return None
    name, members, indent, end = shape
    header = "\n".join(lines[: members[0]] + [indent + "pass", ""])
    found = _python_piece_definitions(header)
    if found is None or (name,) not in found[0]:
        return None
    by_path = {k: list(v) for k, v in found[0].items()}
    by_name = {k: list(v) for k, v in found[1].items()}
    last = _python_members_into(lines, name, members + [end], indent, by_path, by_name)
    if last is None:
        return None
    start = by_path[(name,)][0][0]  # the class as the header's parse placed it, decorators included
    for table, key in ((by_path, (name,)), (by_name, name)):
        table[key] = [(start, last) if a == start else (a, b) for a, b in table[key]]
    if end < len(lines):  # module statements after the class: a piece of their own
        rest = _python_piece_definitions("\n".join(lines[end:]))
        if rest is None:
            return None
        _shift_into(by_path, by_name, rest, end)
        last = (rest[2] + end) if rest[2] else last
    return by_path, by_name, last


def _python_class_shape(lines):
    """(class name, first line of each member, body indentation, first line after the class) of
    a piece that is one class after one-line decorators, or None."""
    head = 0
    while head < len(lines) and lines[head].startswith("@"):
        head += 1  # one-line decorators only; anything else is parsed whole
    match = _PY_CLASS_LINE.match(lines[head]) if head < len(lines) else None
    if match is None or not lines[head].rstrip().endswith(":"):
        return None
    members, indent, end = [], None, len(lines)
    for i in range(head + 1, len(lines)):
        line = lines[i]
        if not line.strip():
            continue
        if not line[:1].isspace():
            if line.lstrip().startswith("#"):
                continue
            end = i  # module statements after the class
            break
        if indent is None:
            indent = line[: len(line) - len(line.lstrip())]
        m = _PY_MEMBER.match(line)
        if m and m.group(1) == indent and not (members and _py_decorated(lines, head, i, indent)):
            members.append(i)
    if not members or indent is None:
        return None
    return match.group(1), members, indent, end


def _py_decorated(lines, head, i, indent):
    """Whether the statement above line ``i`` at the body's indentation (past blank, comment and
    deeper lines, and the closing bracket of a decorator written over several lines) is a
    decorator, which makes the definition at ``i`` part of its member."""
    back = i - 1
    while back > head and _py_member_continues(lines[back], indent):
        back -= 1
    return lines[back].startswith(indent + "@")


def _python_members_into(lines, name, bounds, indent, by_path, by_name):
    """Parse each member (lines bounds[k] to bounds[k + 1]) dedented, into the class's index;
    returns the last line of the last member's statements, or None where one does not parse."""
    last = None
    for k in range(len(bounds) - 1):
        block = lines[bounds[k] : bounds[k + 1]]
        if any(line.strip() and not line.startswith(indent) for line in block):
            return None
        inner = _python_piece_definitions("\n".join(line[len(indent) :] for line in block) + "\n")
        if inner is None:
            return None
        _shift_into(by_path, by_name, inner, bounds[k], (name,))
        if inner[2]:
            last = inner[2] + bounds[k]
    return last


def _shift_into(by_path, by_name, found, shift, prefix=()):
    """Add a piece's index ``found``, its lines moved down by ``shift`` and its paths under
    ``prefix``, to the index of the whole."""
    for key, extents in found[0].items():
        by_path.setdefault(prefix + key, []).extend((a + shift, b + shift) for a, b in extents)
    for key, extents in found[1].items():
        by_name.setdefault(key, []).extend((a + shift, b + shift) for a, b in extents)


def _py_member_continues(line, indent):
    """Whether ``line`` starts no statement at a class body's ``indent``."""
    rest = line[len(indent) :] if line.startswith(indent) else None
    return not rest or rest[0] in " \t#)]}" or not line.strip() or line.lstrip().startswith("#")


@PYTHON_DEFINITIONS
def _python_definitions(source):
    """({("A", "m"): extents}, {"m": extents}) for a Python source, or None when ``ast`` cannot
    parse it. An extent is (first line, last line), decorators included. Cached: verify and
    capture look up many symbols in one file, and parsing is the expensive part."""
    found = _python_all_definitions(source)
    return _definitions_first(source, *found) if found is not None else None


def _definitions_first(source, by_path, by_name):
    """The index with a name's assignments left out where a ``def`` or ``class`` of that name
    stands in the same place (``f = wrap(f)`` after ``def f``): a cited function stays its
    ``def``, as it was before assignments were symbols, so an item recorded then keeps its hash."""
    lines = source.split("\n")

    def is_definition(extent):
        head = lines[extent[0] - 1].lstrip() if 0 < extent[0] <= len(lines) else ""
        return head.startswith(("def ", "async def ", "class ", "@"))

    def keep(index):
        for key, extents in index.items():
            if len(extents) > 1 and any(map(is_definition, extents)):
                index[key] = [e for e in extents if is_definition(e)]
        return index

    return keep(by_path), keep(by_name)


def _python_all_definitions(source):
    """_python_definitions with every assignment of a name kept."""
    pieces = _python_pieces(source) if source.count("\r") == source.count("\r\n") else None
    if pieces is None or any("__future__" in text for _, text in pieces[1:]):
        found = _python_tree_definitions(source)
        return found[:2] if found is not None else None
    by_path, by_name = {}, {}
    for first, text in pieces:
        found = _python_piece_definitions(text)
        if found is None:
            found = _python_tree_definitions(source)
            return found[:2] if found is not None else None
        _shift_into(by_path, by_name, found, first - 1)
    return by_path, by_name


def _python_tree_definitions(source):
    """_python_definitions by one parse of ``source``."""
    import ast

    tree = _python_parse(source)
    if tree is None:
        return None
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    by_path, by_name = {}, {}

    def add(name, path, extent):
        by_path.setdefault(path + (name,), []).append(extent)
        by_name.setdefault(name, []).append(extent)

    def visit(statements, path, in_function):
        # A definition is a statement, so only statement lists are walked (not every node: the
        # expressions are most of a tree, and walking them cost more than the parse).
        for child in statements:
            if isinstance(child, defs):
                extent = (min([child.lineno] + [d.lineno for d in child.decorator_list]), child.end_lineno)
                add(child.name, path, extent)
                visit(child.body, path + (child.name,), isinstance(child, functions))
                continue
            if not in_function:  # a module's or a class's names, never a function's locals
                for name in _python_assigned_names(child):
                    add(name, path, (child.lineno, child.end_lineno))
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(child, field, None)
                if isinstance(inner, list):
                    visit(inner, path, in_function)
            for clause in getattr(child, "handlers", None) or getattr(child, "cases", None) or ():
                visit(clause.body, path, in_function)

    visit(tree.body, (), False)
    return by_path, by_name, tree.body[-1].end_lineno if tree.body else 0


@SOURCE_LINES
def _split_lines(source):
    return source.splitlines()


def _python_locate(source, parts):
    """Extents of ``A.m`` (a path from the module down) or of every definition named ``m``."""
    index = _python_definitions(source)
    if index is None:
        return None
    by_path, by_name = index
    found = by_path.get(tuple(parts)) if len(parts) > 1 else by_name.get(parts[0])
    return sorted(found) if found else None


def symbol_parts(symbol):
    """The names in a cited symbol: ``A.b``, ``A::b`` and ``A#b`` are ["A", "b"]."""
    return [p for p in re.split(r"\.|::|#", symbol) if p]


def locate_symbol_lines(source, path, symbol):
    """(text, [(first line, last line), ...]) of ``symbol`` in ``source`` (the file at ``path``),
    lines counted from 1 at each "\n"; None if not found.

    Several definitions of one name (overloads, same method name in two classes) are joined, so a
    change to any of them counts as a change of the cited symbol.
    """
    language = language_of(path)
    parts = symbol_parts(symbol)
    if not parts:
        return None
    if language == "python":
        extents = _python_locate(source, parts)
        if extents is not None:
            lines = _split_lines(source)
            return "\n".join("\n".join(lines[a - 1 : b]) for a, b in extents), extents
        if _python_definitions(source) is not None:
            return None
    extents = _heuristic_extents(source, language, parts)
    if extents is None:
        return None
    text = "\n".join(source[s:e] for s, e in extents)
    lines = [(source.count("\n", 0, s) + 1, source.count("\n", 0, max(s, e - 1)) + 1) for s, e in extents]
    return text, lines


# Statement keywords: a line that starts with one (``\treturn n``) can look like a declaration
# to a pattern, but it is never what a user meant to cite (``new`` and ``delete`` are, as method
# names, so they are not here).
_STATEMENT_KEYWORDS = frozenset({"return", "if", "else", "for", "while", "do", "switch", "case", "break",
                                 "continue", "goto", "go", "defer", "throw", "raise", "yield", "await"})  # fmt: skip


def nearest_symbols(source, path, symbol, n=3):
    """The symbols defined in ``source`` (the file at ``path``) whose names are nearest to
    ``symbol``, a name the locator did not find there: what the user probably meant, nearest first.

    Python: the qualified names of the file's definitions (``ast``). Other languages: the file's
    identifiers near the last part of ``symbol``, each kept only where the locator finds it
    defined (under the same qualifier when one was given), so every name offered can be cited."""
    parts = symbol_parts(symbol)
    if not parts:
        return []
    language = language_of(path)
    index = _python_definitions(source) if language == "python" else None
    if index is not None:
        near = nearest_names(symbol, {".".join(key) for key in index[0]} | set(index[1]), 2 * n)
        # A method offered as Class.method is not offered again as method.
        return [m for m in near if not any(o.endswith("." + m) for o in near)][:n]
    words = set(re.findall(r"[A-Za-z_$][\w$]*", _source_index(source, language or "").masked))
    words -= _STATEMENT_KEYWORDS
    found = []
    for word in nearest_names(parts[-1], words - {parts[-1]}, 4 * n):
        for qualified in (parts[:-1] + [word], [word]) if len(parts) > 1 else ([word],):
            if _heuristic_extents(source, language, qualified) is not None:
                name = ".".join(qualified)
                if name not in found:
                    found.append(name)
                break
        if len(found) == n:
            break
    return found


def locate_symbol(source, path, symbol):
    """The source text of ``symbol`` in ``source`` (the file at ``path``), or None if not found."""
    found = locate_symbol_lines(source, path, symbol)
    return found[0] if found is not None else None


def symbol_hash(text):
    """A hash of a symbol's text that ignores indentation shifts and trailing blanks."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents) if indents else 0
    normal = "\n".join(line[cut:] for line in lines).strip("\n")
    import hashlib

    return hashlib.sha256(normal.encode("utf-8", "surrogateescape")).hexdigest()[:20]


def symbol_stamp_of(data, path, symbol):
    """(hash, lines) of ``symbol`` in file bytes ``data``, as capture stamps it: lines is where
    its text lies, "FIRST-LAST" per definition joined by commas (symbol_lines reads it back);
    (None, None) when it cannot be located."""
    found = locate_symbol_lines(data.decode("utf-8", "surrogateescape"), path, symbol)
    if found is None:
        return None, None
    return symbol_hash(found[0]), ",".join("%d-%d" % extent for extent in found[1])


def symbol_lines(text):
    """The extents a stamp's lines name ([(first, last)]), or None when there are none."""
    try:
        extents = [tuple(int(n) for n in part.split("-")) for part in (text or "").split(",") if part]
    except ValueError:
        return None
    if not extents or any(len(e) != 2 or not 0 < e[0] <= e[1] for e in extents):
        return None
    return extents


def symbol_hash_of(data, path, symbol):
    """Hash of ``symbol`` inside file bytes ``data``, or None when it cannot be located."""
    return symbol_hashes_of(data, path, [symbol])[symbol]


def symbol_hashes_of(data, path, symbols):
    """{symbol: hash, or None where it cannot be located} for several symbols of one file's bytes
    (the file is parsed once for all of them)."""
    source = data.decode("utf-8", "surrogateescape")
    out = {}
    for symbol in symbols:
        text = locate_symbol(source, path, symbol)
        out[symbol] = symbol_hash(text) if text is not None else None
    return out


# ----------------------------------------------------------------------------------------------
# What code refers to: names, calls, receivers, imports
# ----------------------------------------------------------------------------------------------
# One reading for recall by code reference (search.code_references: a changed file calls a cited
# symbol) and for the dependencies of a cited symbol (dependencies.read_dependencies: a cited
# symbol calls a related repository's). Identifiers come from code with comments and strings
# masked (_mask_source), so prose never matches. Imports are read per language: Python through
# ``ast``, JavaScript/TypeScript and Go by their import statements; a file of another language has
# no bindings, and callers fall back to module forms (a cited file's "dir/stem" in the text).

_IDENT_RE = _lazy_pattern(r"[A-Za-z_$][A-Za-z0-9_$]*")
_CALL_RE = _lazy_pattern(r"(?<![A-Za-z0-9_$])([A-Za-z_$][A-Za-z0-9_$]*)\s*\(")
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")
# receiver.method, receiver::method, receiver->method; a lookahead, so a.b.c gives (a, b) and (b, c).
_RECEIVER_RE = _lazy_pattern(
    r"(?<![A-Za-z0-9_$])(?=([A-Za-z_$][A-Za-z0-9_$]*)\s*(?:\?\.|\.|::|->)\s*([A-Za-z_$][A-Za-z0-9_$]*))"
)
_GENERIC_STEMS = frozenset({"index", "__init__", "mod", "main", "lib", "src", "init"})
CONSTRUCTORS = frozenset({"__init__", "__new__", "constructor", "new", "initialize"})


def _contains_word(text, form):
    """True when ``form`` occurs in ``text`` with no identifier character on either side."""
    start = text.find(form)
    while start >= 0:
        end = start + len(form)
        if (start == 0 or text[start - 1] not in _WORD_CHARS) and (
            end == len(text) or text[end] not in _WORD_CHARS
        ):
            return True
        start = text.find(form, start + 1)
    return False


def _plain(identifier):
    """An identifier with case and separators dropped: connection_pool, connectionPool and
    ConnectionPool all read "connectionpool"."""
    return identifier.replace("_", "").replace("$", "").lower()


@MODULE_FORMS
def _module_forms(path):
    """How code elsewhere names a file: its last two path parts without the extension, slash- or
    dot-separated ("src/upload/upload.ts" -> "upload/upload", "upload.upload"); none for a file
    directly under the root or a generic stem (index, __init__)."""
    parts = [p for p in os.path.splitext(path)[0].split("/") if p]
    if parts and parts[-1] in _GENERIC_STEMS:
        parts = parts[:-1]
    if len(parts) < 2:
        return ()
    tail = parts[-2:]
    if tail[0] in _GENERIC_STEMS and len(parts) >= 3:
        tail = parts[-3:]
    return ("/".join(tail), ".".join(tail))


class CodeNames:
    """What a piece of code (comments and strings masked) names: its identifiers, the ones it
    calls, and for each name after a dot the receivers it is reached through (plain, see _plain)."""

    __slots__ = ("named", "called", "receivers")

    def __init__(self, code):
        self.named = set(_IDENT_RE.findall(code))
        self.called = set(_CALL_RE.findall(code))
        self.receivers = {}
        for receiver, method in _RECEIVER_RE.findall(code):
            self.receivers.setdefault(method, set()).add(_plain(receiver))

    def reaches(self, name, owner):
        """Whether a method ``owner.name`` is what this code means by ``name``: only when the
        class is named here, or is the receiver's name (pool.release for Pool.release); every
        class has an __init__ or a close."""
        return owner is None or owner in self.named or _plain(owner) in self.receivers.get(name, ())


def code_names(code):
    return CodeNames(code)


class Binding:
    """A name an import binds: ``local`` as the code uses it, ``module`` as written (a Python
    dotted name with its leading dots, a JavaScript specifier, a Go import path), ``name`` the
    member imported (None: the module itself; "*": all of it). ``export``: a re-export (JavaScript
    ``export … from``), which binds nothing in the file itself."""

    __slots__ = ("local", "module", "name", "export")

    def __init__(self, local, module, name, export=False):
        self.local, self.module, self.name, self.export = local, module, name, export

    def __repr__(self):
        return "Binding(%r, %r, %r%s)" % (
            self.local,
            self.module,
            self.name,
            ", export" if self.export else "",
        )


class Imports:
    """A file's import bindings, and (Python) its module-level aliases: {name: dotted name it is
    assigned}, such as ``send = sdk.upload``, and its classes' bases: {"A" or "A.B": [dotted
    names]}."""

    __slots__ = ("bindings", "aliases", "bases")

    def __init__(self, bindings, aliases=None, bases=None):
        self.bindings, self.aliases, self.bases = bindings, aliases or {}, bases or {}

    def bound(self, local):
        return [b for b in self.bindings if b.local == local and not b.export]


def imports_of(source, path):
    """The Imports of a source file, or None when its language's imports are not read (or a
    Python file does not parse). The same Imports for the same text: callers only read it."""
    return _imports_of(source, language_of(path))


@IMPORTS
def _imports_of(source, language):
    if language == "python":
        return _python_imports(source)
    if language in ("javascript", "typescript"):
        return _js_imports(source, language)
    if language == "go":
        return _go_imports(source)
    return None


def _dotted(node):
    """ "a.b.c" for an ast Name/Attribute chain, else None."""
    import ast

    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id] + names[::-1])


def _python_imports(source):
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    bindings, aliases, bases = [], {}, {}

    def visit(statements, path=()):
        # Imports are statements: only statement lists are walked (inside functions, classes,
        # if/try blocks), never the expressions that are most of a tree.
        for node in statements:
            if isinstance(node, ast.ClassDef):
                here = path + (node.name,)
                bases[".".join(here)] = [d for d in (_dotted(b) for b in node.bases) if d]
                visit(node.body, here)
                continue
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        bindings.append(Binding(a.asname, a.name, None))
                    else:  # import a.b binds a; a.b is reached through it
                        top = a.name.split(".")[0]
                        bindings.append(Binding(top, top, None))
            elif isinstance(node, ast.ImportFrom):
                module = "." * (node.level or 0) + (node.module or "")
                for a in node.names:
                    bindings.append(Binding(a.asname or a.name, module, a.name))
            inside = (
                path + (node.name,) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else path
            )
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    visit(inner, inside)
            for clause in getattr(node, "handlers", None) or getattr(node, "cases", None) or ():
                visit(clause.body, inside)

    visit(tree.body)
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            dotted = _dotted(node.value)
            if dotted:
                aliases[node.targets[0].id] = dotted
    return Imports(bindings, aliases, bases)


_JS_STRING = r"""(['"])([^'"\n]{1,500})\%d"""
_JS_IMPORT = _lazy_pattern(
    r"\bimport\s+(?:type\s+)?(?:([A-Za-z_$][\w$]*)\s*,?\s*)?(?:\{([^}]*)\}|\*\s*as\s+([A-Za-z_$][\w$]*))?\s*from\s*"
    + _JS_STRING % 4
)
_JS_EXPORT_FROM = _lazy_pattern(
    r"\bexport\s+(?:type\s+)?(?:\{([^}]*)\}|\*(?:\s*as\s+([A-Za-z_$][\w$]*))?)\s*from\s*" + _JS_STRING % 3
)
_JS_EXPORT_LIST = _lazy_pattern(r"\bexport\s*\{([^}]*)\}(?!\s*from\b)")
_JS_REQUIRE = _lazy_pattern(
    r"\b(?:const|let|var)\s+(?:([A-Za-z_$][\w$]*)|\{([^}]*)\})\s*=\s*require\s*\(\s*"
    + _JS_STRING % 3
    + r"\s*\)"
)


def _js_names(listed, separator):
    """[(imported name, local name)] of ``a, b as c`` (``separator`` "as") or ``a, b: c`` (":")."""
    out = []
    for part in listed.split(","):
        words = part.replace(separator, " %s " % separator).split()
        if words and words[0] == "type":
            words = words[1:]
        if len(words) == 1:
            out.append((words[0], words[0]))
        elif len(words) == 3 and words[1] == separator:
            out.append((words[0], words[2]))
    return [(a, b) for a, b in out if _IDENT_RE.fullmatch(a) and _IDENT_RE.fullmatch(b)]


def _js_imports(source, language):
    masked = _mask_source(source, language)

    def in_code(pattern):  # the statements that start in code, not in a comment or a string
        return [m for m in pattern.finditer(source) if masked[m.start()] != " "]

    bindings = []
    for m in in_code(_JS_IMPORT):
        default, named, namespace, module = m.group(1), m.group(2), m.group(3), m.group(5)
        if default:
            bindings.append(Binding(default, module, "default"))
        if namespace:
            bindings.append(Binding(namespace, module, None))
        bindings.extend(Binding(local, module, name) for name, local in _js_names(named or "", "as"))
    for m in in_code(_JS_REQUIRE):
        whole, named, module = m.group(1), m.group(2), m.group(4)
        if whole:
            bindings.append(Binding(whole, module, None))
        bindings.extend(Binding(local, module, name) for name, local in _js_names(named or "", ":"))
    bindings.extend(_js_reexports(in_code(_JS_EXPORT_FROM)))
    # export { a as b } of names imported above: a re-export too.
    imported = {b.local: b for b in bindings if not b.export}
    for m in _JS_EXPORT_LIST.finditer(masked):
        for name, exported in _js_names(m.group(1), "as"):
            b = imported.get(name)
            if b is not None:
                bindings.append(Binding(exported, b.module, b.name, export=True))
    return Imports(bindings)


def _js_reexports(matches):
    """The bindings of ``export … from`` statements."""
    bindings = []
    for m in matches:
        named, namespace, module = m.group(1), m.group(2), m.group(4)
        if named is not None:
            for name, exported in _js_names(named, "as"):
                bindings.append(Binding(exported, module, name, export=True))
        elif namespace:
            bindings.append(Binding(namespace, module, None, export=True))
        else:
            bindings.append(Binding("*", module, "*", export=True))
    return bindings


_GO_IMPORT_LINE = _lazy_pattern(r'^\s*import\s+(?:([A-Za-z_]\w*|\.|_)\s+)?"([^"\n]{1,500})"', re.M)
_GO_IMPORT_BLOCK = _lazy_pattern(r"^\s*import\s*\(([^)]*)\)", re.M)
_GO_IMPORT_SPEC = _lazy_pattern(r'^\s*(?:([A-Za-z_]\w*|\.|_)\s+)?"([^"\n]{1,500})"', re.M)
_GO_VERSION = _lazy_pattern(r"^v\d+$")


def _go_imports(source):
    bindings = []
    specs = [m.groups() for m in _GO_IMPORT_LINE.finditer(source)]
    for block in _GO_IMPORT_BLOCK.finditer(source):
        specs += [m.groups() for m in _GO_IMPORT_SPEC.finditer(block.group(1))]
    for alias, path in specs:
        if alias in ("_", "."):
            continue
        if not alias:  # the package's name is (by convention) its last path element
            parts = [p for p in path.split("/") if p]
            if len(parts) > 1 and _GO_VERSION.match(parts[-1]):
                parts = parts[:-1]
            alias = parts[-1].replace("-", "_") if parts else None
        if alias:
            bindings.append(Binding(alias, path, None))
    return Imports(bindings)
