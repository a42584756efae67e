from __future__ import annotations

from .constants import STOP_WORDS, _lazy_pattern
from .redaction import redact_secrets
from .symbols import _mask_source, language_of, locate_symbol

# ----------------------------------------------------------------------------------------------
# Vocabulary of cited code: the words developers wrote in and about the code an item cites
# ----------------------------------------------------------------------------------------------
# An item says what a session learned in its own words; the code it cites carries the words of the
# people who wrote and changed that code: the subjects of the commits that changed the file and
# the comments, docstrings and strings of the cited definition. A later question asked in those
# words ("the clock jumps forward") finds the item through them. Stamped with the anchors (capture,
# confirm, a repeated capture after the code changed), so the words follow the item's provenance.
# Measured on eval/history.py (see eval/README.md): the identifiers a definition uses and the
# subjects of the commits that changed the definition itself (git log -L) were tried and left out;
# more than CODE_VOCABULARY_MAX_WORDS words per item found less, not more.

CODE_VOCABULARY_MAX_WORDS = 64  # distinct words kept per item, commit subjects first
CODE_VOCABULARY_SUBJECTS = 10  # latest commits read per cited file
CODE_VOCABULARY_MAX_CHARS = 200000  # a cited file longer than this is read up to here
_WORD_RE = _lazy_pattern(r"[A-Za-z][A-Za-z0-9]*")
# Words of a language's syntax, not of what the code is about.
_NOT_WORDS = frozenset(
    """def class return self cls none true false import elif else while try except finally raise
    yield lambda pass break continue global nonlocal assert async await del function var let const
    new null undefined typeof instanceof void func package struct interface type public private
    protected static final str bool dict list tuple bytes float object kwargs args string boolean
    number err nil impl mut pub mod enum super todo fixme xxx noqa http https www com org""".split()
)


def code_vocabulary(data, path, symbol, subjects=()):
    """The distinct words about the code an anchor cites, as written (lower case): those of
    ``subjects`` (commit subjects), then of the comments, docstrings and string literals of the
    definition ``symbol`` in the file bytes ``data`` at ``path`` (of the whole file when no symbol
    is cited, nothing when it cannot be found). Only words of three to thirty letters, no stop
    words, at most CODE_VOCABULARY_MAX_WORDS; secrets redacted before the text is cut into words."""
    words = {}
    for subject in subjects:
        _keep_words(words, redact_secrets(subject))
    text = data[:CODE_VOCABULARY_MAX_CHARS].decode("utf-8", "replace")
    if symbol:
        text = locate_symbol(text, path, symbol) or ""
    if text and len(words) < CODE_VOCABULARY_MAX_WORDS:
        text = redact_secrets(text)
        language = language_of(path)
        masked = _mask_source(text, language) if language else ""
        # The comments and string literals: what the masking blanked (all of an unknown language).
        prose = "".join(c if m == " " else " " for c, m in zip(text, masked)) if language else text
        _keep_words(words, prose)
    return " ".join(list(words)[:CODE_VOCABULARY_MAX_WORDS])


def _keep_words(words, text):
    # Letters only: a run with digits in it is a number, a hash or a key, never an asker's word.
    for raw in _WORD_RE.findall(text):
        low = raw.lower()
        if 3 <= len(low) <= 30 and low.isalpha() and low not in STOP_WORDS and low not in _NOT_WORDS:
            words.setdefault(low, None)


def _fts_code(anchors):
    """The text of the code column of an item's search row: the vocabulary of the code it cites
    (code_vocabulary of each anchor), each word once, at most CODE_VOCABULARY_MAX_WORDS."""
    words = dict.fromkeys(w for a in anchors for w in (a.get("code") or "").split())
    return " ".join(list(words)[:CODE_VOCABULARY_MAX_WORDS])
