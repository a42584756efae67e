from __future__ import annotations

import re

from .caches import BUILT_ONCE
from .constants import _lazy_pattern

# ----------------------------------------------------------------------------------------------
# Lexicon: how each language writes comments and strings, and how its blocks end
# ----------------------------------------------------------------------------------------------
#
# The symbol locator reads code with its comments and string literals blanked to spaces (newlines
# kept, so offsets and line numbers stay), so that a brace in a string or a name in a comment is
# never taken for code. What a language's comments and strings look like is a row of LEXICONS;
# one engine (mask) reads every row. Adding a language is a row here, its extensions in
# symbols.LANGUAGE_BY_EXTENSION, its definition rows in symbols._DEFINITIONS (or the common ones)
# and symbol_kinds.KIND_ROWS, and a fixture in tests/test_lexicon.py and tests/test_symbols.py.


class Lexicon:
    """One language's lexical conventions and block structure (every field is a plain fact):

    - line_comments: what starts a comment to the end of the line; not_comments: what starts
      with one of them and is code (PHP's ``#[Attribute]``);
    - block_comments: (open, close), and whether they nest (Rust, Kotlin, Swift, Scala);
    - strings: ``"`` and ``'`` strings escape with ``\\``; multiline_strings: whether an
      unclosed one runs on past its line; triple_quotes: ``\"\"\"``/``'''`` strings, escaped with ``\\`` or
      not (triple_escapes); template_escapes: whether a backquoted string is a template literal,
      which escapes with ``\\`` and whose ``${…}`` holds code with strings and templates of its
      own (not a Go raw string or a quoted name);
    - char_literals: ``'x'`` is a character literal, not a string: "plain", or "digit_separators"
      where a quote after a digit is one (C++ ``1'000``); a quote that opens none is skipped (a
      Rust lifetime);
    - raw_strings: "rust" (``r#"…"#``), "cpp" (``R"d(…)d"``), "verbatim" (C# ``@"…"…""…"``);
    - regex_literals: "slash" (``/re/`` where an operand is expected: JavaScript), "ruby" (also
      after a space in a call: ``split /,/``);
    - ruby: Ruby's other literals: ``"…#{…}…"`` interpolation, ``%w[…]`` percent literals,
      ``<<~EOS`` heredocs, ``=begin``/``=end``, ``__END__``, special globals (``$'``);
    - php_heredocs: PHP's ``<<<EOT`` heredocs and ``<<<'EOT'`` nowdocs;
    - blocks: how a body ends, "braces", "indent" (Python) or "end" (Ruby); newline_ends:
      whether a statement may end at a newline; angle_generics: whether ``<…>`` in a header is a
      generic argument list; optional_types: whether a ``?`` that ends a line closes an optional
      type (``var x: Int?``) rather than leaving a ``? :`` expression open; accessor_lines:
      whether a property's ``get()`` and ``set(v)`` may stand on the lines after it (Kotlin);
      string_templates: whether a ``"`` string's ``${...}`` holds code that may run over lines
      and hold strings of its own (Kotlin);
      constructor_lines: whether a class header's primary constructor may start the next line
      (Kotlin ``class A\nprivate constructor(...)``).
    """

    __slots__ = (
        "line_comments", "not_comments", "block_comments", "nested_comments", "multiline_strings",
        "triple_quotes", "triple_escapes", "template_escapes", "char_literals", "raw_strings",
        "regex_literals", "ruby", "blocks", "newline_ends", "angle_generics", "optional_types",
        "accessor_lines", "php_heredocs", "constructor_lines", "string_templates",
    )  # fmt: skip

    def __init__(self, line_comments=("//",), block_comments=("/*", "*/"), **facts):
        self.line_comments, self.block_comments = line_comments, block_comments
        self.not_comments = facts.pop("not_comments", ())
        self.nested_comments = facts.pop("nested_comments", False)
        self.multiline_strings = facts.pop("multiline_strings", False)
        self.triple_quotes = facts.pop("triple_quotes", False)
        self.triple_escapes = facts.pop("triple_escapes", True)
        self.template_escapes = facts.pop("template_escapes", False)
        self.char_literals = facts.pop("char_literals", None)
        self.raw_strings = facts.pop("raw_strings", None)
        self.regex_literals = facts.pop("regex_literals", None)
        self.ruby = facts.pop("ruby", False)
        self.blocks = facts.pop("blocks", "braces")
        self.newline_ends = facts.pop("newline_ends", False)
        self.angle_generics = facts.pop("angle_generics", False)
        self.optional_types = facts.pop("optional_types", False)
        self.accessor_lines = facts.pop("accessor_lines", False)
        self.php_heredocs = facts.pop("php_heredocs", False)
        self.constructor_lines = facts.pop("constructor_lines", False)
        self.string_templates = facts.pop("string_templates", False)
        if facts:
            raise TypeError("unknown lexicon facts: %s" % ", ".join(sorted(facts)))


_NESTED = dict(nested_comments=True)
_TRIPLE = dict(triple_quotes=True)
_GENERIC = dict(angle_generics=True)
_NEWLINE = dict(newline_ends=True)
_CHARS = dict(char_literals="plain")
LEXICONS = {
    "c": Lexicon(**_CHARS),
    "cpp": Lexicon(char_literals="digit_separators", raw_strings="cpp", **_GENERIC),
    "csharp": Lexicon(triple_quotes=True, triple_escapes=False, raw_strings="verbatim", **_CHARS, **_GENERIC),
    "java": Lexicon(**_TRIPLE, **_CHARS, **_GENERIC),
    "go": Lexicon(**_CHARS, **_NEWLINE),
    "rust": Lexicon(multiline_strings=True, raw_strings="rust", **_NESTED, **_CHARS, **_GENERIC),
    "kotlin": Lexicon(
        optional_types=True,
        accessor_lines=True,
        constructor_lines=True,
        string_templates=True,
        **_NESTED,
        **_TRIPLE,
        **_CHARS,
        **_GENERIC,
        **_NEWLINE,
    ),
    "scala": Lexicon(**_NESTED, **_TRIPLE, **_CHARS, **_GENERIC, **_NEWLINE),
    "swift": Lexicon(
        multiline_strings=True, optional_types=True, **_NESTED, **_TRIPLE, **_GENERIC, **_NEWLINE
    ),
    "javascript": Lexicon(template_escapes=True, regex_literals="slash", **_NEWLINE),
    "typescript": Lexicon(template_escapes=True, regex_literals="slash", **_GENERIC, **_NEWLINE),
    "php": Lexicon(
        line_comments=("//", "#"), not_comments=("#[",), multiline_strings=True, php_heredocs=True
    ),
    "python": Lexicon(
        line_comments=("#",),
        block_comments=None,
        multiline_strings=True,
        blocks="indent",
        **_TRIPLE,
        **_NEWLINE,
    ),
    "ruby": Lexicon(
        line_comments=("#",),
        block_comments=None,
        multiline_strings=True,
        regex_literals="ruby",
        ruby=True,
        blocks="end",
        **_NEWLINE,
    ),  # fmt: skip
}
PLAIN_LEXICON = Lexicon()  # a file of no known language: C-like comments, one-line strings


def lexicon_of(language):
    return LEXICONS.get(language, PLAIN_LEXICON)


# Keywords after which '/' starts a regular expression rather than a division.
_REGEX_KEYWORDS = frozenset({"return", "typeof", "case", "do", "else", "in", "of", "new", "delete",
                             "void", "throw", "yield", "await", "instanceof", "if", "unless", "when",
                             "and", "or", "not", "then", "elsif", "while", "until"})  # fmt: skip
_OPERAND_BEFORE = "(,=:[!&|?{};+-*%<>~^"  # after one of these, '/' starts a regex
_PERCENT_BEFORE = "(,=:[!&|?{};"  # after one of these, '%' starts a Ruby percent literal
_NOT_NEWLINE = _lazy_pattern(r"[^\n]")
_OPENS_LINE = _lazy_pattern(r"[ \t]*\r?\n")
_REGEX_BODY = _lazy_pattern(r"(?:\\.|\[(?:\\.|[^\]\\\n])*\]|[^/\\\[\n])+")
_WORD_TAIL = _lazy_pattern(r"[\w$]+$")
_RUST_RAW = _lazy_pattern(r"(?<![\w])b?r#*$")
_CPP_RAW = _lazy_pattern(r'"([^()\\\s]{0,16})\(')
_PERCENT = _lazy_pattern(r"%([qQwWiIrsx]?)([^\w\s])")
_HEREDOC = _lazy_pattern(r"<<([~-]?)(['\"`]?)([A-Za-z_]\w*)\2")
_PHP_HEREDOC = _lazy_pattern(r"<<<[ \t]*(['\"]?)([A-Za-z_]\w*)\1[ \t]*\r?\n")
_END_MARKER = _lazy_pattern(r"__END__[ \t\r]*$")
_RUBY_CHARACTER = _lazy_pattern(r"\?(?:\\.|[^\s\w\\])(?![\w])")  # ?" ?# ?\t: one character
_CLOSERS = {"(": ")", "[": "]", "{": "}", "<": ">"}


class _Scan:
    """The state of one masking pass: the output, where the last token ended and what came last
    before it (a regex or a percent literal is told from division and modulo by what precedes)."""

    __slots__ = ("source", "n", "out", "lexicon", "token_end", "last_code", "last_word", "heredoc_end")

    def __init__(self, source, lexicon):
        self.source, self.n, self.out, self.lexicon = source, len(source), list(source), lexicon
        self.token_end, self.last_code, self.last_word, self.heredoc_end = 0, "", "", None

    def blank(self, a, b):
        b = min(b, self.n)
        if a < b:
            self.out[a:b] = _NOT_NEWLINE.sub(" ", self.source[a:b])

    def before(self, i):
        """(last significant character, last word) of the code before ``i``: "a" for a word."""
        span = self.source[self.token_end : i].rstrip(" \t\r\n")
        if not span:
            return self.last_code, self.last_word
        if span[-1].isalnum() or span[-1] in "_$":
            return "a", _WORD_TAIL.search(span).group()
        return span[-1], ""

    def token(self, end, last_code):
        """A literal ends at ``end``; for what follows, the code before it ends in ``last_code``."""
        self.token_end, self.last_code, self.last_word = end, last_code, ""
        return end

    def quiet(self, start, end):
        """A comment from ``start`` to ``end``: what came last is what came before it."""
        self.last_code, self.last_word = self.before(start)
        self.token_end = end
        return end

    def skip_string(self, i, quote, multiline, escapes=True):
        """Index just past the string that opens at i with ``quote``."""
        source, n = self.source, self.n
        j = i + len(quote)
        while j < n:
            ch = source[j]
            if escapes and ch == "\\":
                j += 2
                continue
            if source.startswith(quote, j):
                return j + len(quote)
            if ch == "\n" and not multiline:
                return j
            j += 1
        return n


def _line_comment(scan, i):
    source = scan.source
    if not any(source.startswith(c, i) for c in scan.lexicon.line_comments):
        return None
    if any(source.startswith(c, i) for c in scan.lexicon.not_comments):
        return None
    j = source.find("\n", i)
    j = scan.n if j < 0 else j
    scan.blank(i, j)
    return scan.quiet(i, j)


def _block_comment(scan, i):
    source, (opener, closer) = scan.source, scan.lexicon.block_comments
    if not source.startswith(opener, i):
        return None
    if scan.lexicon.nested_comments:
        depth, j = 1, i + 2
        while j < scan.n and depth:
            if source.startswith(opener, j):
                depth, j = depth + 1, j + 2
            elif source.startswith(closer, j):
                depth, j = depth - 1, j + 2
            else:
                j += 1
    else:
        j = source.find(closer, i + 2)
        j = scan.n if j < 0 else j + 2
    scan.blank(i, j)
    return scan.quiet(i, j)


def _regex_expected(scan, i):
    last_code, last_word = scan.before(i)
    if last_code in _OPERAND_BEFORE or last_word in _REGEX_KEYWORDS:
        return True
    source = scan.source  # Ruby: `split /,/` is a call with a regex argument, `a / b` a division
    return (
        scan.lexicon.regex_literals == "ruby"
        and source[i - 1 : i] == " "
        and source[i + 1 : i + 2] not in (" ", "=")
    )


def _regex(scan, i):
    if not _regex_expected(scan, i):
        return None
    source, n = scan.source, scan.n
    j, in_class = i + 1, False
    # A Ruby regex assigned at the end of its line spans lines (PATTERN = /\n ... \n/x); not ?/
    multiline = (
        scan.lexicon.regex_literals == "ruby"
        and _OPENS_LINE.match(source, i + 1) is not None
        and scan.before(i)[0] == "="
    )
    while j < n and (multiline or source[j] != "\n"):
        ch = source[j]
        if ch == "\\":
            j += 2
            continue
        if ch == "[":
            in_class = True
        elif ch == "]":
            in_class = False
        elif ch == "/" and not in_class:
            break
        j += 1
    if j >= n or source[j] != "/":
        return None
    scan.blank(i + 1, j)
    return scan.token(j + 1, "/")


def _char_literal_end(scan, i):
    """End of the character literal that opens at i, or None where the quote opens none."""
    source = scan.source
    close = source.find("'", i + 1, i + 12)
    is_char = close > 0 and (
        source[i + 1] == "\\" or close == i + 2 or (close <= i + 5 and not source[i + 1].isalnum())
    )
    if scan.lexicon.char_literals == "digit_separators" and i and source[i - 1].isalnum():
        return None  # 1'000'000
    return close + 1 if is_char else None


def _rust_raw_end(scan, i):
    source = scan.source
    before = source[max(0, i - 8) : i]
    if not _RUST_RAW.search(before):
        return None
    hashes = len(before) - len(before.rstrip("#"))
    close = source.find('"' + "#" * hashes, i + 1)
    return scan.n if close < 0 else close + 1 + hashes


def _cpp_raw_end(scan, i):
    source = scan.source
    m = _CPP_RAW.match(source[i : i + 20]) if i and source[i - 1] == "R" else None
    if m is None:
        return None
    close = source.find(")" + m.group(1) + '"', i)
    return scan.n if close < 0 else close + len(m.group(1)) + 2


def _verbatim_end(scan, i):
    source, n = scan.source, scan.n
    if not (i and source[i - 1] == "@"):
        return None
    j = i + 1
    while j < n:
        if source[j] == '"':
            if source.startswith('""', j):
                j += 2
                continue
            break
        j += 1
    return min(j + 1, n)


_RAW_STRINGS = {"rust": _rust_raw_end, "cpp": _cpp_raw_end, "verbatim": _verbatim_end}


def _interpolated_end(scan, i, quote='"'):
    """Index just past a string opening at i whose interpolations may hold quotes and strings of
    their own: a Ruby "string" (#{...}), a Kotlin one (${...}), a JavaScript template literal
    (`a ${f(`b ${c}`)} d`, ``quote`` the backquote)."""
    source, n = scan.source, scan.n
    opener = "#{" if scan.lexicon.ruby else "${"
    inside = _substitution_end if quote == "`" else _interpolation_end
    j = i + 1
    while j < n:
        ch = source[j]
        if ch == "\\":
            j += 2
        elif ch == quote:
            return j + 1
        elif source.startswith(opener, j):
            j = inside(scan, j + 2)
        else:
            j += 1
    return n


def _interpolation_end(scan, j):
    """Index just past the '}' that closes a ``#{`` whose inside starts at j."""
    source, n, depth = scan.source, scan.n, 1
    while j < n and depth:
        inner = source[j]
        if inner == "{":
            depth += 1
        elif inner == "}":
            depth -= 1
        elif inner == '"':
            j = _interpolated_end(scan, j) - 1
        elif inner == "'":
            close = source.find("'", j + 1)
            j = n if close < 0 else close
        elif inner == "/" and source[max(0, j - 80) : j].rstrip()[-1:] in tuple("{[(,=~|&!"):
            j = _inline_regex_end(source, j)  # "#{line[/`.*'/]}": the quotes are the regex's
        j += 1
    return j


def _inline_regex_end(source, j):
    """Index of the '/' that closes the regex opening at j on its line (j where none does)."""
    k = j + 1
    while k < len(source) and source[k] != "\n":
        if source[k] == "\\":
            k += 1
        elif source[k] == "/":
            return k
        k += 1
    return j


def _substitution_end(scan, j):
    """Index just past the '}' that closes a template's ``${`` whose inside starts at j."""
    source, n, depth, start = scan.source, scan.n, 1, j
    while j < n and depth:
        inner = source[j]
        if inner == "{":
            depth += 1
        elif inner == "}":
            depth -= 1
        else:
            j = _substitution_token_end(scan, start, j)
        j += 1
    return j


def _substitution_token_end(scan, start, j):
    """Index of the last character of the string, template or regular expression that opens at j
    inside a ``${`` whose inside starts at ``start`` (j where none opens there)."""
    source, inner = scan.source, scan.source[j]
    if inner == "`":
        return _interpolated_end(scan, j, "`") - 1
    if inner in "'\"":
        return scan.skip_string(j, inner, False) - 1
    code = source[start:j].rstrip()
    if inner == "/" and (not code or code[-1] in _OPERAND_BEFORE):  # ${s.replace(/"/g, '')}
        close = _REGEX_BODY.match(source, j + 1)
        return close.end() if close and source.startswith("/", close.end()) else j
    return j


def _string_end(scan, i, quote):
    """End of the string literal opening at i, or None where the quote opens none."""
    lexicon = scan.lexicon
    if quote != "`" and lexicon.triple_quotes and scan.source.startswith(quote * 3, i):
        return scan.skip_string(i, quote * 3, True, escapes=lexicon.triple_escapes)
    if quote == "`" and lexicon.template_escapes:
        end = _interpolated_end(scan, i, "`")  # one never closed: read as before, to the next backquote
        return end if end < scan.n else scan.skip_string(i, "`", True)
    if quote == "`":  # Go raw strings span lines; Kotlin/Scala quote names
        return scan.skip_string(i, "`", True, escapes=False)
    if quote == "'" and lexicon.char_literals:
        return _char_literal_end(scan, i)
    raw = _RAW_STRINGS[lexicon.raw_strings](scan, i) if lexicon.raw_strings and quote == '"' else None
    if raw is not None:
        return raw
    if quote == '"' and (lexicon.ruby or lexicon.string_templates):
        return _interpolated_end(scan, i)
    return scan.skip_string(i, quote, lexicon.multiline_strings)


def past_literal(masked, i, limit):
    """In masked text, the index just past the string literal whose quote is at ``i``, where a
    literal may span lines (a Go raw string or a template literal, a triple-quoted string): the
    locator reads its newlines as part of it, not as the end of a statement. Its inside is masked,
    so the next such quote closes it."""
    quote = '"""' if masked.startswith('"""', i) else masked[i]
    if quote == '"':
        return i + 1  # a one-line string: nothing inside it is read anyway
    close = masked.find(quote, i + len(quote), limit)
    return limit if close < 0 else close + len(quote)


def _string(scan, i):
    quote = scan.source[i]
    end = _string_end(scan, i, quote)
    if end is None:
        return scan.quiet(i, i + 1)  # a Rust lifetime ('a) or a stray quote
    scan.blank(i + 1, end - 1)
    return scan.token(end, quote)


def _at_line_start(scan, i):
    return not scan.source[scan.source.rfind("\n", 0, i) + 1 : i].strip(" \t\r")


def _end_marker(scan, i):
    if not (_at_line_start(scan, i) and _END_MARKER.match(scan.source[i : i + 10])):
        return None
    scan.blank(i, scan.n)  # what follows __END__ is data, not code
    return scan.n


def _doc_block(scan, i):
    if not _at_line_start(scan, i):
        return None
    j = scan.source.find("\n=end", i)
    j = scan.n if j < 0 else j + 5
    scan.blank(i, j)
    return scan.quiet(i, j)


def _special_global(scan, i):
    if i != scan.token_end and (scan.source[i - 1].isalnum() or scan.source[i - 1] in "_$"):
        return None  # inside a name (a$'): the quote after it opens a string
    return scan.token(i + 2, "a")  # $` $' $/ ...: not the start of a string or a regex


def _character(scan, i):
    """A Ruby character literal (``when ?"``), not after a name or a closing bracket (``a ?b : c``)."""
    m = _RUBY_CHARACTER.match(scan.source, i)
    if m is None or (i and (scan.source[i - 1].isalnum() or scan.source[i - 1] in "_)]}?!")):
        return None
    scan.blank(i + 1, m.end())
    return scan.token(m.end(), "a")


def _percent_literal(scan, i):
    source = scan.source
    m = _PERCENT.match(source[i : i + 3])
    if m is None:
        return None
    last_code, last_word = scan.before(i)
    if not (
        m.group(1)
        or last_code in _PERCENT_BEFORE
        or last_word in _REGEX_KEYWORDS
        or (source[i - 1 : i] == " " and m.group(2) in "([{<")
    ):
        return None
    opener = m.group(2)
    closer = _CLOSERS.get(opener, opener)
    depth, j = 1, i + len(m.group(0))
    while j < scan.n:
        ch = source[j]
        if ch == "\\":
            j += 2
            continue
        if ch == closer:
            depth -= 1
            if depth == 0:
                break
        elif ch == opener and closer != opener:
            depth += 1
        j += 1
    scan.blank(i + len(m.group(0)), j)  # %w[...] %Q{...} %r(...)
    return scan.token(j + 1, ")")


def _heredoc(scan, i):
    source = scan.source
    m = _HEREDOC.match(source[i : i + 80])
    body = source.find("\n", i)
    if m is None or (i and source[i - 1].isalnum()) or body <= 0:
        return None
    term = re.compile(r"^[ \t]*" + re.escape(m.group(3)) + r"[ \t]*$", re.M)
    first = body + 1 if scan.heredoc_end is None else scan.heredoc_end + 1
    found = term.search(source, first)
    end = scan.n if found is None else found.end()
    scan.blank(i, i + len(m.group(0)))  # the opener may stand alone at column 0
    scan.blank(first, end)
    scan.heredoc_end = end
    return scan.quiet(i, i + len(m.group(0)))


def heredoc_end(source, lo, hi):
    """End of the last Ruby heredoc body that the line source[lo:hi] opens (``X = <<~EOS``), or
    None where it opens none."""
    end, first = None, hi + 1
    for m in _HEREDOC.finditer(source, lo, hi):
        if m.start() and source[m.start() - 1].isalnum():
            continue
        term = re.compile(r"^[ \t]*" + re.escape(m.group(3)) + r"[ \t]*$", re.M)
        found = term.search(source, first)
        if found is None:
            return None
        end = first = found.end()
    return end


def _php_heredoc(scan, i):
    """A PHP heredoc or nowdoc: its body up to the closing name, which may be indented."""
    m = _PHP_HEREDOC.match(scan.source, i)
    if m is None:
        return None
    term = re.compile(r"^[ \t]*" + re.escape(m.group(2)) + r"(?![\w])", re.M)
    found = term.search(scan.source, m.end())
    end = scan.n if found is None else found.end()
    scan.blank(i, end)
    return scan.token(end, '"')


def _heredoc_body(scan, i):
    """At the end of a line that opened a heredoc: on past its body."""
    if scan.heredoc_end is None:
        return None
    end, scan.heredoc_end = scan.heredoc_end, None
    return scan.quiet(i, end)


@BUILT_ONCE
def _scanners(lexicon):
    """(pattern of what may open a token, {first character: [scanner, ...]}) for a lexicon."""
    openers, by_char = [], {}

    def add(pattern, chars, scanner):
        openers.append(pattern)
        for c in chars:
            by_char.setdefault(c, []).append(scanner)

    if lexicon.ruby:
        add(r"\n", "\n", _heredoc_body)
        add(r"__END__", "_", _end_marker)
        add(r"=begin", "=", _doc_block)
        add(r"\$[`'\"/\\;,.<>!@&~=*$?:]", "$", _special_global)
    for comment in lexicon.line_comments:
        add(re.escape(comment), comment[0], _line_comment)
    if lexicon.block_comments:
        add(re.escape(lexicon.block_comments[0]), lexicon.block_comments[0][0], _block_comment)
    if lexicon.regex_literals:
        add("/", "/", _regex)
    add("[\"'`]", "\"'`", _string)
    if lexicon.php_heredocs:
        add("<<<", "<", _php_heredoc)
    if lexicon.ruby:
        add("%", "%", _percent_literal)
        add("<<", "<", _heredoc)
        add(r"\?", "?", _character)
    for c, scanners in by_char.items():  # each character's scanners once, in the order above
        by_char[c] = list(dict.fromkeys(scanners))
    return re.compile("|".join(openers)), by_char


def mask(source, language):
    """``source`` with comments and string literals blanked to spaces (newlines kept)."""
    lexicon = lexicon_of(language)
    openers, by_char = _scanners(lexicon)
    scan = _Scan(source, lexicon)
    i = 0
    while i < scan.n:
        m = openers.search(source, i)
        if m is None:
            break
        at = m.start()
        for scanner in by_char[source[at]]:
            end = scanner(scan, at)
            if end is not None:
                i = end
                break
        else:
            i = at + 1
    return "".join(scan.out)
