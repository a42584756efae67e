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

# A cache stays only where a benchmark shows it: bench/caches.py times each workload that uses it
# with it and without it, interleaved, in CPU seconds (bench/RESULTS.md, "#43: caches"). The
# figure after each is its best (time without / time with) there; under 1.05 on every workload
# that uses it, it goes. "Not reached" marks one no workload there exercises: kept until one does.

# -- built once: tables and classes made on first use, to keep start-up short ----------------
BUILT_ONCE = FunctionMemo(  # import x1.06 (field_checks and field_plan are emptied by the import)
    "built once",
    "nothing, a record type or a pattern name (_secret_patterns, _untrusted_re, field_checks, "
    "field_plan, _store_connection_class, _ordered_action, _parser_class)",
    "none: each is a function of wctx's own tables",
    None,
)
_ABBREVIATIONS_OF = CacheTable(  # search x1.72
    "abbreviations of a word", "stem of a full word", _PURE, "the size of CODE_ABBREVIATIONS", {}
).value  # filled once by _abbreviation_tables, with _EXPANSIONS_OF
_EXPANSIONS_OF = CacheTable(  # search x1.74
    "expansions of an abbreviation", "abbreviation or its plural", _PURE, "the size of CODE_ABBREVIATIONS", {}
).value
FRAGMENT_SCAN = CacheTable(  # import x15.0, cli x6.8
    "secret fragment scanner", '"scan"', "none: built from _SECRET_RULES", "one entry", {}
).value  # filled once by _fragment_tables

# -- words: what a text and a query become in the index (parts/core/base/words.py) ---------------------
TERM_FORMS = FunctionMemo("match forms of a term", "term", _PURE, 4096)  # mcp x1.06
INDEX_TOKENS_KEPT = 100000
_INDEX_TOKENS = CacheTable(  # search x1.22
    "index words of a word", "word as written", _PURE, "%d entries, then emptied" % INDEX_TOKENS_KEPT, {}
).value  # filled by _index_tokens

# -- redaction (parts/core/base/redaction.py) ----------------------------------------------------------
SHOWN_TEXT = FunctionMemo("shown form of a text (secrets redacted)", "text", _PURE, 8192)  # mcp x1.05
RUN_MEMO_MAX = 200000
FRAGMENT_FREE_RUNS = CacheTable(  # import x1.11
    "text runs without a secret fragment",
    "run of text",
    _PURE,
    "%d entries, then emptied" % RUN_MEMO_MAX,
    set(),
).value  # filled by _secret_fragments
# Texts a bulk writer has just passed through stored_text and found unchanged, so that the boundary
# keeps them without a second pass however many other values went by meanwhile.
CLEAN_TEXTS = CacheTable(  # verify x1.09, import x1.05
    "texts that are their own stored form",
    "text",
    "none (fixed points of stored_text); a bulk import empties it when done",
    "one import",
    set(),
).value  # filled by stored_noting and the bulk writers

# -- git (parts/core/code/git.py) ----------------------------------------------------------------------
# GIT_VIEWS: mcp x1.01 in CPU (git's included) with the server's WARM_GIT_VIEWS; the workload's
# freshness cache is warm, so few calls reach git there. Not decided: going takes WARM_GIT_VIEWS
# out of the freshness part with it.
GIT_VIEWS_KEPT = 64
GIT_VIEWS = CacheTable(
    "git answers about a checkout",
    "checkout path",
    "its HEAD token or index stat changed, a commit it missed, or a change within HEAD_RACY_SECONDS",
    "%d checkouts, then emptied" % GIT_VIEWS_KEPT,
    {},
).value  # filled by git_view
HEAD_TOKENS_KEPT = 4096
HEAD_TOKENS = CacheTable(  # search x1.13
    "HEAD token of a checkout",
    "checkout path",
    "the stat of a ref file it read changed, or changed within HEAD_RACY_SECONDS",
    "%d checkouts, then emptied" % HEAD_TOKENS_KEPT,
    {},
).value  # filled by recent_head_token
STOPPED_SCANS_KEPT = 256
# Not a speed-up but a bound on waiting: a checkout whose untracked-file scan git did not finish
# is not scanned again for WORKTREE_SCAN_RETRY_SECONDS, and what verify says names why.
STOPPED_SCANS = CacheTable(
    "working-tree scans git did not finish in time",
    "checkout path",
    "WORKTREE_SCAN_RETRY_SECONDS after the scan was stopped",
    "%d checkouts, then emptied" % STOPPED_SCANS_KEPT,
    {},
).value  # filled by GitRepo.untracked_paths

# -- symbols: where a cited symbol is in a source text (parts/core/code/symbols.py) --------------------
# MASKED_SOURCE, DEFINITION_PATTERNS, PYTHON_DEFINITIONS, SOURCE_LINES and _PY_PIECES show
# x0.95-1.00 on capture, the one workload of bench/caches.py that reaches them; verify over real
# histories (bench/freshness_verify.py), which they were made for, was not measured: not decided.
MASKED_SOURCE = FunctionMemo("source with comments and strings blanked", "(source, language)", _PURE, 16)
DEFINITION_PATTERNS = FunctionMemo("definition patterns of a name", "(name, language)", _PURE, 1024)
RUBY_ENDS = FunctionMemo(
    "end of a Ruby definition", "(masked source, start, name end)", _PURE, 4096
)  # not reached
SOURCE_INDEX = FunctionMemo("definitions index of a source", "(source, language)", _PURE, 16)  # capture x1.06
COMPILED_PATTERNS = FunctionMemo("compiled definition patterns", "pattern text", _PURE, 512)  # not reached
PYTHON_DEFINITIONS = FunctionMemo("definitions of a Python source", "source text", _PURE, 8)
SOURCE_LINES = FunctionMemo("lines of a Python source", "source text", _PURE, 8)
IMPORTS = FunctionMemo("import bindings of a source", "(source, language)", _PURE, 32)  # not reached
PY_PIECES_BYTES = 32 * 1024 * 1024
_PY_PIECES = CacheTable(
    "definitions of a piece of Python",
    "text of a top-level definition, or of a long class's member",
    _PURE,
    "%d MiB of piece text, then emptied" % (PY_PIECES_BYTES // (1024 * 1024)),
    {},
).value  # filled by _python_piece_definitions

# -- search (parts/core/search/search.py) ----------------------------------------------------------------
STAMP_SECONDS = FunctionMemo("seconds of a timestamp", "timestamp text", _PURE, 16384)  # search x1.07
SYMBOL_NAMES = FunctionMemo("the name code calls a symbol by", "cited symbol", _PURE, 4096)  # not reached
MODULE_FORMS = FunctionMemo("how code names a cited file", "cited path", _PURE, 4096)  # not reached
SPACED_FORMS = FunctionMemo("match forms between spaces", "term", _PURE, 8192)  # search x1.15

# -- the MCP server's replies (parts/mcp/replies.py) ----------------------------------------------
# mcp x1.05 (1.048): at the line; kept while the server's output path is being made one.
MCP_SERVED_TEXTS_KEPT = 16384
MCP_SERVED_TEXTS = CacheTable(
    "stored text as a reply serves it (neutralised and cut)",
    "(text, limit, cut)",
    _PURE,
    "%d entries, then emptied" % MCP_SERVED_TEXTS_KEPT,
    {},
).value
