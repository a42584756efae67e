from __future__ import annotations

import functools

# ----------------------------------------------------------------------------------------------
# Caches: every memo a wctx process keeps beyond one call, declared here with its key, what
# makes an entry wrong and its bound; clear_caches() empties them all
# ----------------------------------------------------------------------------------------------
# Two shapes. A function memo (functools.lru_cache) is declared here and applied to its one
# function with @NAME. A dict or set is declared here and filled by the function named in its
# entry, which also enforces its bound. A long-lived process (the MCP server) keeps them across
# calls; the tests, and a store reopened on another file (Store.ensure_current), clear them.
#
# Not here, on purpose: _lazy_pattern objects (each a constant, compiled once); values derived
# from one store's content, which live in Store.memo and are dropped when the store's generation
# changes (Store.begin_read); the freshness cache, a table in the store. Nothing below holds store content, so no store change can make an entry stale:
# entries are pure functions of their key, or state of a git checkout re-checked on every use.


class Cache:
    """One process-wide cache: what it maps, what makes an entry wrong, how large it may grow."""

    __slots__ = ("name", "key", "invalidation", "bound", "_clears")

    def __init__(self, name, key, invalidation, bound):
        self.name, self.key, self.invalidation, self.bound = name, key, invalidation, bound
        self._clears = []
        CACHES.append(self)

    def clear(self):
        for clear in self._clears:
            clear()

    def size(self):
        return sum(size() for size in self._sizes())

    def _sizes(self):
        return ()


class FunctionMemo(Cache):
    """An lru_cache declared here; ``@MEMO`` applies it to the function it remembers."""

    __slots__ = ("maxsize", "functions")

    def __init__(self, name, key, invalidation, maxsize):
        bound = (
            "unbounded: a fixed set of keys" if maxsize is None else "%d entries, least recent out" % maxsize
        )
        Cache.__init__(self, name, key, invalidation, bound)
        self.maxsize = maxsize
        self.functions = []

    def __call__(self, function):
        cached = functools.lru_cache(maxsize=self.maxsize)(function)
        self.functions.append(cached)
        self._clears.append(cached.cache_clear)
        return cached

    def _sizes(self):
        return [lambda f=f: f.cache_info().currsize for f in self.functions]


class TextMemo(Cache):
    """A memo of a function of texts bounded by the characters of the texts it holds, least
    recently used out: an entry for a 7.5 kB claim and detail weighs hundreds of times one for a
    word, so a bound in entries alone lets a long-lived process grow with every distinct text.
    ``@MEMO`` applies it to the function it remembers (its ``__wrapped__`` is the function)."""

    __slots__ = ("max_chars", "tables")

    def __init__(self, name, key, invalidation, max_chars):
        bound = "%s characters of text, least recent out" % format(max_chars, ",")
        Cache.__init__(self, name, key, invalidation, bound)
        self.max_chars = max_chars
        self.tables = []

    def __call__(self, function):
        table = {}  # key -> (value, characters); insertion order is recency
        held = [0]
        limit = self.max_chars
        missing = object()

        def remembered(*args):
            hit = table.pop(args, missing)  # popped and put back: the most recent goes last
            if hit is missing:
                weight = sum(len(a) for a in args if a.__class__ is str)
                hit = (function(*args), weight)
                held[0] += weight
                while held[0] > limit and table:
                    held[0] -= table.pop(next(iter(table)))[1]
            table[args] = hit
            return hit[0]

        def clear():
            table.clear()
            held[0] = 0

        functools.update_wrapper(remembered, function)
        self.tables.append(table)
        self._clears.append(clear)
        return remembered

    def _sizes(self):
        return [lambda t=t: len(t) for t in self.tables]


class CacheTable(Cache):
    """A dict or set declared here; ``.value`` is the container its owner fills."""

    __slots__ = ("value",)

    def __init__(self, name, key, invalidation, bound, value):
        Cache.__init__(self, name, key, invalidation, bound)
        self.value = value
        self._clears.append(value.clear)

    def _sizes(self):
        return [lambda: len(self.value)]


CACHES = []  # every Cache, in declaration order


def clear_caches():
    """Empty every process-wide cache (the tests between cases; a store reopened on a new file)."""
    for cache in CACHES:
        cache.clear()


_PURE = "none: a pure function of its key"

# -- built once: tables and classes made on first use, to keep start-up short ----------------
BUILT_ONCE = FunctionMemo(
    "built once",
    "nothing, a record type or a pattern name (_secret_patterns, _untrusted_re, field_checks, "
    "field_plan, _store_connection_class, _ordered_action, _parser_class)",
    "none: each is a function of wctx's own tables",
    None,
)
_ABBREVIATIONS_OF = CacheTable(
    "abbreviations of a word", "stem of a full word", _PURE, "the size of CODE_ABBREVIATIONS", {}
).value  # filled once by _abbreviation_tables, with _EXPANSIONS_OF
_EXPANSIONS_OF = CacheTable(
    "expansions of an abbreviation", "abbreviation or its plural", _PURE, "the size of CODE_ABBREVIATIONS", {}
).value
_FRAGMENT_SCAN = CacheTable(
    "secret fragment scanner", '"scan"', "none: built from _SECRET_RULES", "one entry", {}
).value  # filled once by _fragment_tables

# -- words: what a text and a query become in the index (parts/core/words.py) ---------------------
QUERY_TERMS = FunctionMemo("query terms", "(query text of at most 2,000 characters, limit)", _PURE, 1024)
TERM_FORMS = FunctionMemo("match forms of a term", "term", _PURE, 4096)
IMPLIED_PARTS = FunctionMemo("identifier parts a query implies", "tuple of query terms", _PURE, 1024)
FORMS = FunctionMemo("match forms and their probes", "term", _PURE, 8192)
# Keyed by a whole claim and detail: bounded by the characters they hold (TextMemo). A text's
# written words weigh about 30 bytes a character, so 500,000 characters hold about 15 MB.
MATCHED_WORD = TextMemo("word of a text a query term matched", "(term, text)", _PURE, 2000000)
WRITTEN_WORDS = TextMemo("words of a text with their index words", "text", _PURE, 500000)
IDENTIFIER_WORDS = FunctionMemo("whole words of an identifier", "identifier", _PURE, 8192)
INDEX_TOKENS_KEPT = 100000
_INDEX_TOKENS = CacheTable(
    "index words of a word", "word as written", _PURE, "%d entries, then emptied" % INDEX_TOKENS_KEPT, {}
).value  # filled by _index_tokens
# {text: index_text(text)} computed by a bulk writer from the words it had already split for the
# claim keys of the texts it is about to write.
_INDEXED_TEXTS = CacheTable(
    "index text of a batch's texts",
    "text a bulk import is about to write",
    "emptied by the import after each batch (_import_records_in)",
    "one batch",
    {},
).value

# -- redaction (parts/core/redaction.py) ----------------------------------------------------------
RULES_OF = FunctionMemo("secret rules that can match", "frozenset of rule fragments found", _PURE, 4096)
STORED_TEXT = FunctionMemo("stored form of a text", "text", _PURE, 8192)
SHOWN_TEXT = FunctionMemo("shown form of a text (secrets redacted)", "text", _PURE, 8192)
RUN_MEMO_MAX = 200000
_FRAGMENT_FREE_RUNS = CacheTable(
    "text runs without a secret fragment",
    "run of text",
    _PURE,
    "%d entries, then emptied" % RUN_MEMO_MAX,
    set(),
).value  # filled by _secret_fragments, with _RUN_FRAGMENTS
_RUN_FRAGMENTS = CacheTable(
    "secret fragments of a text run", "run of text", _PURE, "%d entries, then emptied" % RUN_MEMO_MAX, {}
).value
# Texts a bulk writer has just passed through stored_text and found unchanged, so that the boundary
# keeps them without a second pass however many other values went by meanwhile.
_CLEAN_TEXTS = CacheTable(
    "texts that are their own stored form",
    "text",
    "none (fixed points of stored_text); a bulk import empties it when done",
    "one import",
    set(),
).value  # filled by stored_noting and the bulk writers

# -- git (parts/core/git.py) ----------------------------------------------------------------------
GIT_VIEWS_KEPT = 64
_GIT_VIEWS = CacheTable(
    "git answers about a checkout",
    "checkout path",
    "its HEAD token or index stat changed, a commit it missed, or a change within HEAD_RACY_SECONDS",
    "%d checkouts, then emptied" % GIT_VIEWS_KEPT,
    {},
).value  # filled by git_view
HEAD_TOKENS_KEPT = 4096
_HEAD_TOKENS = CacheTable(
    "HEAD token of a checkout",
    "checkout path",
    "the stat of a ref file it read changed, or changed within HEAD_RACY_SECONDS",
    "%d checkouts, then emptied" % HEAD_TOKENS_KEPT,
    {},
).value  # filled by recent_head_token
STOPPED_SCANS_KEPT = 256
_STOPPED_SCANS = CacheTable(
    "working-tree scans git did not finish in time",
    "checkout path",
    "WORKTREE_SCAN_RETRY_SECONDS after the scan was stopped",
    "%d checkouts, then emptied" % STOPPED_SCANS_KEPT,
    {},
).value  # filled by GitRepo.untracked_paths

# -- symbols: where a cited symbol is in a source text (parts/core/symbols.py) --------------------
MASKED_SOURCE = FunctionMemo("source with comments and strings blanked", "(source, language)", _PURE, 16)
DEFINITION_PATTERNS = FunctionMemo("definition patterns of a name", "(name, language)", _PURE, 1024)
RUBY_ENDS = FunctionMemo("end of a Ruby definition", "(masked source, start, name end)", _PURE, 4096)
SOURCE_INDEX = FunctionMemo("definitions index of a source", "(source, language)", _PURE, 16)
COMPILED_PATTERNS = FunctionMemo("compiled definition patterns", "pattern text", _PURE, 512)
PYTHON_DEFINITIONS = FunctionMemo("definitions of a Python source", "source text", _PURE, 8)
SOURCE_LINES = FunctionMemo("lines of a Python source", "source text", _PURE, 8)
IMPORTS = FunctionMemo("import bindings of a source", "(source, language)", _PURE, 32)
PY_PIECES_BYTES = 32 * 1024 * 1024
_PY_PIECES = CacheTable(
    "definitions of a piece of Python",
    "text of a top-level definition, or of a long class's member",
    _PURE,
    "%d MiB of piece text, then emptied" % (PY_PIECES_BYTES // (1024 * 1024)),
    {},
).value  # filled by _python_piece_definitions

# -- search (parts/core/search.py) ----------------------------------------------------------------
DAY_SECONDS_KEPT = 100000
_DAY_SECONDS = CacheTable(
    "seconds of a calendar day",
    "(year, month, day)",
    _PURE,
    "%d days, then no more kept" % DAY_SECONDS_KEPT,
    {},
).value  # filled by _utc_day_seconds
STAMP_SECONDS = FunctionMemo("seconds of a timestamp", "timestamp text", _PURE, 16384)
SYMBOL_NAMES = FunctionMemo("the name code calls a symbol by", "cited symbol", _PURE, 4096)
MODULE_FORMS = FunctionMemo("how code names a cited file", "cited path", _PURE, 4096)
SYMBOL_WORDS = FunctionMemo("words of a cited symbol", "cited symbol", _PURE, 8192)
SPACED_FORMS = FunctionMemo("match forms between spaces", "term", _PURE, 8192)

# -- the MCP server's replies (parts/mcp/replies.py) ----------------------------------------------
MCP_SERVED_TEXTS_KEPT = 16384
MCP_SERVED_TEXTS = CacheTable(
    "stored text as a reply serves it (neutralised and cut)",
    "(text, limit, cut)",
    _PURE,
    "%d entries, then emptied" % MCP_SERVED_TEXTS_KEPT,
    {},
).value
