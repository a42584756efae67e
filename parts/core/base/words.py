from __future__ import annotations

import re

from .caches import (
    _ABBREVIATIONS_OF,
    _EXPANSIONS_OF,
    _INDEX_TOKENS,
    INDEX_TOKENS_KEPT,
    TERM_FORMS,
)
from .constants import MAX_TERM_CHARS, STOP_WORDS, _lazy_pattern
from .helpers import ascii_words, split_identifier

# ----------------------------------------------------------------------------------------------
# Words: how claims, cited code and queries become FTS5 index words, by one rule for both sides
# ----------------------------------------------------------------------------------------------

_TERM_RE = _lazy_pattern(r"[^\W_]+", re.UNICODE)
QUERY_SCAN_CHARS = 20000  # characters of a query read for terms (a pasted log or traceback)
MAX_QUERY_CANDIDATE_TERMS = 400  # distinct terms considered before the rarest MAX_QUERY_TERMS are kept


def query_terms(text, limit=MAX_QUERY_CANDIDATE_TERMS):
    """Lower-cased search terms of ``text`` without stop words, in order; camelCase parts added.

    Returns every distinct term up to ``limit``; ``search`` keeps the MAX_QUERY_TERMS rarest of
    them in the store (select_terms), so a long query keeps its most informative words."""
    if not isinstance(text, str):
        return []
    return list(_query_terms(text, limit))


_CHUNK_RE = _lazy_pattern(r"\d+(?:\.\d+)+|\w+", re.UNICODE)  # a version (2.2.1) or a word
SHORT_NUMBER_DIGITS = 3  # a bare number of fewer digits ("1", "42") selects no candidate (selecting_terms)


def _query_terms(text, limit):
    """query_terms as a tuple.

    An identifier joined by underscores (NO_PROXY, raise_app_exceptions) is a term of its own,
    its parts with "_" between them (matched as the phrase of its parts: _term_forms), stop-word
    parts kept, before its parts as terms; so is a version (3.10, 2.2.2), as written."""
    text = text.encode("utf-8", "ignore").decode("utf-8", "ignore")  # drop lone surrogates
    terms = {}
    for chunk in _CHUNK_RE.findall(text[:QUERY_SCAN_CHARS]):
        pieces = _TERM_RE.findall(chunk)
        if len(pieces) > 1:
            whole = chunk if "." in chunk else "_".join(pieces).lower()
            if len(whole) <= MAX_TERM_CHARS and whole.isascii():
                terms.setdefault(whole, None)
        for raw in pieces:
            for word in [raw] + _word_parts(raw):
                word = word.lower()[:MAX_TERM_CHARS]
                if word in STOP_WORDS or (len(word) < 2 and not word.isdigit()):
                    continue
                terms.setdefault(word, None)
        if len(terms) >= limit:
            break
    return tuple(terms)[:limit]


def selecting_terms(terms):
    """The query terms that select candidates and name symbols: all but a bare number shorter
    than SHORT_NUMBER_DIGITS, unless the query holds nothing else. "1" of "2019/1" is not what
    anyone asks about; "30" of "times out after 30 seconds" still counts for an item that other
    words found (the rerank's coverage reads every term)."""
    words = [t for t in terms if not (t.isdigit() and len(t) < SHORT_NUMBER_DIGITS)]
    return words or list(terms)


_VOWELS = frozenset("aeiou")


def _light_stem(word):
    """A prefix of ``word`` that its inflections and close derivations share: plural, past and
    -ing forms, -ly adverbs, -tion nouns and a silent final e come off ("expires", "expired",
    "expiring" -> "expir"; "creation", "created" -> "creat"; "freshly" -> "fresh"). At least four
    letters always stay, so short words are their own stem."""

    def cut(stem, suffix, keep="", shortest=4):
        base = stem[: -len(suffix)] + keep
        return base if stem.endswith(suffix) and len(base) >= shortest else None

    stem = word
    if not stem.endswith("ss"):
        stem = cut(stem, "ies", "i") or cut(stem, "es") or cut(stem, "s", shortest=3) or stem
    stem = (
        cut(stem, "ied", "i")
        or cut(stem, "ing")
        or cut(stem, "ed")
        or cut(stem, "ily", "i")
        or cut(stem, "ly")
        or stem
    )
    if stem != word and len(stem) >= 5 and stem[-1] == stem[-2] and stem[-1] not in _VOWELS | {"l", "s"}:
        stem = stem[:-1]  # "stopped" -> "stop", "mapping" -> "map"; not "called", "passed"
    stem = cut(stem, "ation", shortest=5) or cut(stem, "tion", "t") or cut(stem, "e") or stem
    if stem.endswith("y") and len(stem) >= 4 and stem[-2] not in _VOWELS:
        stem = stem[:-1] + "i"  # "retry", "retries", "retried" -> "retri"
    return stem


# Abbreviations code and its notes use for the same words, both ways: a query for "database"
# finds "db", a query for "cfg" finds "configuration". Only pairs that mean the same thing in
# almost any codebase; an abbreviation is matched as a whole word ("repo" must not find "report").
CODE_ABBREVIATIONS = {
    "application": ("app",), "argument": ("arg",), "asynchronous": ("async",),
    "attribute": ("attr",), "authentication": ("auth", "authn"), "authorization": ("auth", "authz"),
    "certificate": ("cert",), "command": ("cmd",), "configuration": ("config", "cfg", "conf"),
    "connection": ("conn",), "context": ("ctx",), "database": ("db",), "dependency": ("dep",),
    "description": ("desc",), "destination": ("dest", "dst"), "directory": ("dir",),
    "document": ("doc",), "environment": ("env",), "error": ("err",), "expression": ("expr",),
    "function": ("func", "fn"), "identifier": ("id",), "implementation": ("impl",),
    "information": ("info",), "initialization": ("init",), "initialize": ("init",),
    "library": ("lib",), "maximum": ("max",), "message": ("msg",), "millisecond": ("ms",),
    "minimum": ("min",), "package": ("pkg",), "parameter": ("param",), "password": ("passwd", "pwd"),
    "performance": ("perf",), "previous": ("prev",), "reference": ("ref",), "repository": ("repo",),
    "request": ("req",), "response": ("resp",), "specification": ("spec",), "source": ("src",),
    "statistics": ("stats",), "synchronous": ("sync",), "temporary": ("tmp", "temp"),
    "transaction": ("txn",), "utility": ("util",), "variable": ("var",),
}  # fmt: skip


def _abbreviation_tables():
    if not _ABBREVIATIONS_OF:
        for full, short in CODE_ABBREVIATIONS.items():
            key = _index_form(full)
            forms = [_index_form(f) for s in short for f in (s, s + "s")]
            _ABBREVIATIONS_OF[key] = tuple(dict.fromkeys(_ABBREVIATIONS_OF.get(key, ()) + tuple(forms)))
            for form in (f for s in short for f in (s, s + "s")):
                _EXPANSIONS_OF[form] = _EXPANSIONS_OF.get(form, ()) + (key,)
    return _ABBREVIATIONS_OF, _EXPANSIONS_OF


# Where the words of a text and of a query meet: both become index words by one rule, so FTS5
# matches a query term as one exact token (one posting list, walked lazily, one idf) and the
# reasons (_word_hits) match by that same rule. Inflections meet in their light stem; an
# identifier also stands for its parts (validateThumbnail -> validatethumbnail, validat, thumbnail).
_CAMEL_RE = _lazy_pattern(r"[a-z][A-Z]")  # an identifier whose parts count as words ("PDFs" is not one)
# Derivational endings of a light stem that come off too, with the fewest letters the rest keeps,
# so that a word and its derivations share one index word: "failure", "failed" -> "fail";
# "signature", "signing" -> "sign"; "worker" -> "work"; "validator", "validation", "validate" ->
# "valid"; "retryable" -> "retri"; "management" -> "manag"; "configuration" -> "config".
_DERIVATIONS = (
    ("ment", 4), ("ness", 4), ("iti", 4), ("abl", 4), ("ibl", 4), ("enci", 4), ("anci", 4),
    ("enc", 4), ("anc", 4), ("ur", 4), ("or", 5), ("er", 4), ("iz", 4), ("al", 5),
)  # fmt: skip


# The -sion nouns of verbs, by the verb's ending: permission -> permit, conversion -> convert,
# extension -> extend, expansion -> expand, exclusion -> exclud(e), compression -> compress.
_SION_VERBS = (
    ("ission", "it"),
    ("ersion", "ert"),
    ("ension", "end"),
    ("ansion", "and"),
    ("usion", "ud"),
    ("ssion", "ss"),
)


def _root(stem):
    """``stem`` (a light stem) without one derivational ending (_DERIVATIONS), then without an
    "-at" of a verb ("validat" -> "valid", as "validation" already is); short stems stay."""
    for suffix, shortest in _DERIVATIONS:
        if stem.endswith(suffix) and len(stem) - len(suffix) >= shortest:
            stem = stem[: -len(suffix)]
            if suffix == "ment" and stem.endswith("e") and len(stem) >= 5:
                stem = stem[:-1]  # "management" -> "manag", as "managed" is
            break
    for suffix, verb in _SION_VERBS:
        if stem.endswith(suffix) and len(stem) - len(suffix) >= 3:
            stem = stem[: -len(suffix)] + verb  # "conversion" -> "convert", "extension" -> "extend"
            break
    if stem.endswith("at") and len(stem) >= 6:
        stem = stem[:-2]
    if stem.endswith("y") and stem[-2] not in _VOWELS:
        stem = stem[:-1] + "i"  # "retryable" -> "retry" -> "retri", as "retries" is
    if len(stem) >= 5 and stem[-1] == stem[-2] and stem[-1] not in _VOWELS | {"l", "s"}:
        stem = stem[:-1]  # "sniff" as "sniffs" ("sniffed" -> "snif"): _light_stem does it for the latter only
    return stem


def _index_form(word):
    """The index word of one lower-cased word: for a plain ASCII word of four or more letters its
    light stem without a derivational ending (_light_stem, _root), else the word itself. Longer
    words are cut to MAX_TERM_CHARS first, as query_terms cuts them."""
    word = word[:MAX_TERM_CHARS]
    return _root(_light_stem(word)) if len(word) >= 4 and word.isalpha() and word.isascii() else word


def _word_parts(raw):
    """The parts of a camelCase word (uploadDocument -> upload, Document), or [] for any other."""
    return split_identifier(raw) if _CAMEL_RE.search(raw) else []


def _index_tokens(raw):
    """The index words of one word of text as written: its index form, then the forms of its
    identifier parts (single letters left out: no query asks for one)."""
    hit = _INDEX_TOKENS.get(raw)
    if hit is None:
        forms = [_index_form(raw.lower())]
        for part in _word_parts(raw):
            if len(part) >= 2 or part.isdigit():
                forms.append(_index_form(part.lower()))
        hit = " ".join(forms)
        if (
            len(_INDEX_TOKENS) >= INDEX_TOKENS_KEPT
        ):  # a bulk import of unusual words must not grow it without end
            _INDEX_TOKENS.clear()
        _INDEX_TOKENS[raw] = hit
    return hit


def index_text(text, words=None):
    """What the search index holds for ``text``: its index words in order (see _index_tokens),
    separated by spaces. The one function that decides them, for every indexed text column and
    for the reasons that explain a match. ``words``: ascii_words(text), when the caller has them."""
    if not text:
        return ""
    if words is None:
        words = ascii_words(text) if text.isascii() else _TERM_RE.findall(text)
    forms = list(map(_INDEX_TOKENS.get, words))
    if None in forms:
        forms = [f if f is not None else _index_tokens(w) for f, w in zip(forms, words)]
    return " ".join(forms)


def match_forms(term):
    """The index words a query term matches, exactly: its own index form (_index_form), so that
    "expires" finds "expired" and "retry" finds "retries", plus the code abbreviations of the word
    or the full words it abbreviates (CODE_ABBREVIATIONS), each a whole index word too: "repo"
    finds "repos" and "repository", never "report"."""
    return list(_term_forms(term))


@TERM_FORMS
def _term_forms(term):
    """match_forms(term) as a tuple. An identifier joined by underscores or a version (query_terms)
    has one form: the index words of its parts, between spaces, which FTS5 matches as a phrase."""
    if "_" in term or "." in term:
        return (" ".join(_index_form(p) for p in re.split(r"[_.]", term) if p),)
    stem = _index_form(term)
    if not term.isalpha() or not term.isascii():
        return (stem,)
    short, expansions = _abbreviation_tables()
    return tuple(dict.fromkeys([stem] + list(short.get(stem, ())) + list(expansions.get(term, ()))))


def _quoted(text):
    return '"' + text.replace('"', '""') + '"'


def _fts_term(term):
    """One term as FTS5 syntax: each of its forms a quoted string (embedded quotes doubled), exact
    (no prefix), the forms ORed in parentheses."""
    parts = [_quoted(form) for form in _term_forms(term)]
    return parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"


def fts_query(terms, all_terms=False):
    """An FTS5 MATCH expression that only ever contains quoted strings: every term's forms (see
    _fts_term), ORed, or ANDed when ``all_terms`` (an identifier's parts left out there: see
    _implied_parts). The one builder of MATCH text."""
    if all_terms:
        implied = _implied_parts(tuple(terms))
        terms = [t for t in terms if t not in implied]
        return " AND ".join(dict.fromkeys(_fts_term(t) for t in terms))
    return " OR ".join(dict.fromkeys(_fts_term(t) for t in terms))


def _implied_parts(terms):
    """{term: the identifier among ``terms`` it is a camelCase part of} (query_terms puts an
    identifier's parts right after it: retryreceipt, retry, receipt). The index holds an
    identifier's parts wherever it holds the identifier (_index_tokens), so requiring them too
    selects the same rows, while FTS5 scans the parts' posting lists, often the longest of the
    query ("retry"), for bm25's idf."""
    implied = {}
    for i, whole in enumerate(terms):
        whole = whole.replace("_", "")  # raise_app_exceptions: raise, app, exceptions
        joined = ""
        for j in range(i + 1, len(terms)):
            joined += terms[j]
            if not whole.startswith(joined):
                break
            if joined == whole:
                implied.update(dict.fromkeys(terms[i + 1 : j + 1], terms[i]))
                break
    return implied


def _fts_symbols(anchors):
    """The text of the symbols column of an item's search row: its cited symbols."""
    return " ".join(dict.fromkeys(a["symbol"] for a in anchors if a.get("symbol")))


def _fts_paths(anchors):
    """The text of the paths column of an item's search row: its cited paths."""
    return " ".join(dict.fromkeys(a["path"] for a in anchors if a.get("path")))


def matched_word(term, text):
    """The word of ``text`` as written that ``term`` matched (one of its index words is a match
    form of the term: _word_hits' rule): the term itself if the text has it, else the first word
    matched, of an identifier the part matched; None when none matches. What a reason shows beside the query word,
    so that a stem never stands for a word: "expiring" matched "expired", not "expir"."""
    if not text:
        return None
    words = _written_words(text)
    for raw, low, _ in words:
        if low == term:
            return raw  # the word itself, wherever it is
    forms = _term_forms(term)
    for raw, _, tokens in words:
        if any(form in tokens for form in forms):
            # an identifier's part (uploadDocument -> Document), or the identifier when it is the match
            return next((p for p in _word_parts(raw) if _index_tokens(p) in forms), raw)
    return None


def _written_words(text):
    """((word as written, lower-cased, its index words), ...) of a text."""
    return tuple((raw, raw.lower(), frozenset(_index_tokens(raw).split())) for raw in _TERM_RE.findall(text))


def identifier_words(name):
    """The whole words an identifier is made of, lower-cased, and the identifier itself without
    separators (Payload.read_json -> payload, read, json, readjson): what a query word must equal
    to match a cited symbol or path (a stem of a common word does not: "reads" is not "read")."""
    parts = [p.lower() for chunk in _TERM_RE.findall(name) for p in (_word_parts(chunk) or [chunk])]
    last = _TERM_RE.findall(re.split(r"[.#:/]+", name)[-1])
    whole = "".join(last).lower()
    joined = "_".join(last).lower() if len(last) > 1 else ""  # as query_terms keeps an identifier
    return frozenset(parts + [w for w in (whole, joined) if w])
