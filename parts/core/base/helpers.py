from __future__ import annotations

import json
import os
import sys
import time

from .constants import _lazy_pattern
from .errors import UsageError

# ----------------------------------------------------------------------------------------------
# Small helpers
# ----------------------------------------------------------------------------------------------


def utc_now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def new_id(prefix):
    return "%s-%s" % (prefix, os.urandom(5).hex())


def short_sha(sha):
    return sha[:7] if sha else "?"


def loads_json(raw):
    """json.loads of untrusted input (a transcript line, a hook's payload): a document nested
    deeper than the parser's stack raises ValueError like any other JSON it cannot read, so that
    one ``except ValueError`` makes it one bad line, never a RecursionError traceback."""
    try:
        return json.loads(raw)
    except RecursionError:
        raise ValueError("JSON nested too deeply to read") from None


def clean_text(value, what, limit, required=False):
    """Validate user text: valid UTF-8, no NUL, within a size limit. Returns the stripped text."""
    if value is None:
        if required:
            raise UsageError("%s is required" % what)
        return None
    if not isinstance(value, str):
        raise UsageError("%s must be text" % what)
    if not value.isascii():  # ASCII is UTF-8 (a flag, no encoding)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise UsageError("%s is not valid UTF-8" % what) from None
    if "\x00" in value:
        raise UsageError("%s contains a NUL character" % what)
    value = value.strip()
    if required and not value:
        raise UsageError("%s is empty" % what)
    if len(value) > limit:
        raise UsageError("%s is %d characters; the limit is %d" % (what, len(value), limit))
    return value or None


def is_utf8(text):
    """False when ``text`` holds lone surrogates: bytes that were not UTF-8 (from argv, a file name
    or a path), which SQLite cannot store and must never reach a query parameter."""
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def printable_path(path):
    """``path`` with any bytes that are not UTF-8 shown as U+FFFD, for messages and stored text."""
    return path if is_utf8(path) else os.fsencode(path).decode("utf-8", "replace")


def split_claim(text):
    """Split ``claim :: detail`` into (claim, detail); detail is None when absent."""
    if text is None:
        return None, None
    claim, sep, detail = text.partition("::")
    if not sep:
        return text.strip(), None
    return claim.strip(), (detail.strip() or None)


# Every byte that is not an ASCII letter or digit, as a space: an ASCII text's words (its runs of
# letters and digits, what _CLAIM_WORD and _TERM_RE find in it) are the split of its translation,
# several times faster than either pattern.
_ASCII_WORD_BYTES = bytes(b if chr(b).isalnum() and b < 128 else 32 for b in range(256))


def ascii_words(text):
    """The runs of letters and digits of an ASCII ``text``, in order."""
    return text.encode("ascii").translate(_ASCII_WORD_BYTES).decode("ascii").split()


def claim_key(claim, words=None):
    """What makes two claims the same claim (the duplicate rule's key): a digest of the claim's
    words, case and Unicode forms folded, so that "Foo", "foo." and "  FOO " are one. A claim of
    punctuation alone is its own. ``words``: ascii_words(claim), when the caller has them already.
    32 hex digits (BLAKE2b, 128 bits): the rule only ever compares keys, and the folded words
    themselves, kept in a column and its index, made the store keep each claim twice more."""
    claim = claim or ""
    if claim.isascii():  # ASCII is its own NFKC form, and casefold is lower there
        folded = " ".join(ascii_words(claim) if words is None else words).lower() or " ".join(claim.split())
    else:
        import unicodedata

        folded = unicodedata.normalize("NFKC", claim).casefold()
        folded = " ".join(_CLAIM_WORD.findall(folded)) or " ".join(claim.split())
    return _blake2b_hex(folded.encode("utf-8", "surrogatepass"))


def _blake2b_hex(data):
    """A 128-bit BLAKE2b of ``data`` in hex, through CPython's built-in _blake2 module when it is
    there (hashlib would load OpenSSL, a few milliseconds of start-up)."""
    try:
        from _blake2 import blake2b
    except ImportError:  # an interpreter built without it
        from hashlib import blake2b
    return blake2b(data, digest_size=16).hexdigest()


_CLAIM_WORD = _lazy_pattern(r"[^\W_]+")


_IDENT_CHUNK_RE = _lazy_pattern(r"[^0-9A-Za-z]+")
_IDENT_PART_RE = _lazy_pattern(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def split_identifier(name):
    """Words inside an identifier: uploadDocument -> [upload, Document]; a_b.c -> [a, b, c]."""
    parts = []
    for chunk in _IDENT_CHUNK_RE.split(name):
        parts.extend(_IDENT_PART_RE.findall(chunk))
    return [p for p in parts if p]


def wctx_command_path():
    """The file an agent's configuration should run to reach this wctx: the wctx.pyz it was
    loaded from, the installed ``wctx`` console script it was started as, or this wctx.py.
    Hooks, ``doctor`` and ``mcp-info`` all name it."""
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) in ("wctx", "wctx.exe") and os.path.isfile(argv0):
        return os.path.abspath(argv0)
    here = os.path.abspath(__file__)
    container = os.path.dirname(here)
    if os.path.isfile(container):  # inside a zipapp: /path/wctx.pyz/wctx.py
        return container
    return here


def _installed_module(path):
    """Where ``path`` lies: "site" in one of this interpreter's site-packages folders (pip, pipx,
    a venv), so that ``python -I -m wctx`` finds it from any directory; "user" in the user's own
    site-packages (``pip install --user``), which isolated mode (-I) leaves out; else None."""
    if os.path.basename(os.path.realpath(os.path.dirname(path))) not in ("site-packages", "dist-packages"):
        return None  # no site folder is named otherwise: spares importing site and sysconfig
    import site
    import sysconfig

    folders = set()
    for key in ("purelib", "platlib"):
        try:
            folders.add(sysconfig.get_paths()[key])
        except KeyError:
            pass
    try:
        folders.update(site.getsitepackages())
    except AttributeError:  # old virtualenv's site module
        pass
    here = os.path.realpath(os.path.dirname(path))
    if any(f and os.path.realpath(f) == here for f in folders):
        return "site"
    try:
        user = site.getusersitepackages()
    except AttributeError:
        user = None
    return "user" if user and os.path.realpath(user) == here else None


def wctx_invocation(python=None):
    """The argv that runs this wctx from a clean shell (no PATH beyond the system's, no
    PYTHONPATH, any directory): the installed ``wctx`` console script itself; the venv's
    interpreter with ``-m wctx`` for a module installed without one on hand; this interpreter
    with the .pyz archive or this wctx.py. ``python`` overrides the interpreter where one is
    named. Hooks, ``doctor``, ``mcp-info`` and ``instructions`` all use it."""
    interpreter = python or sys.executable or "python3"
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) in ("wctx", "wctx.exe") and os.path.isfile(argv0) and not python:
        return [os.path.abspath(argv0)]
    here = os.path.abspath(__file__)
    container = os.path.dirname(here)
    if os.path.isfile(container):  # inside a zipapp: /path/wctx.pyz/wctx.py
        return [interpreter, container]
    installed = _installed_module(here)
    if installed == "site":
        # -I: `-m` would otherwise look in the current directory first, where a repository's own
        # wctx.py would run instead of this one.
        return [interpreter, "-I", "-m", "wctx"]
    if installed == "user":
        return [interpreter, "-I", "-c", _load_from_file(here)]
    return [interpreter, here]


def hook_invocation(python=None):
    """wctx_invocation for the commands agents run at every session start and end, where
    start-up time is the budget. The interpreter runs isolated (-I: no PYTHON* variables, no user
    site, not the current directory, so neither a repository's own wctx.py nor the agent's
    PYTHONDONTWRITEBYTECODE changes what runs or how fast); a wctx.py or wctx.pyz, which need
    nothing but the standard library, also skip the site module (-S: no site-packages and none of
    their .pth start-up code); and a wctx.py is imported rather than run as a script: Python
    compiles a script on every start (~15,000 lines, a few hundred ms) but reuses an imported
    module's cached bytecode."""
    argv = wctx_invocation(python)
    if len(argv) == 1 or argv[1] == "-I":
        return argv  # the console script; an installed module, already isolated
    here = os.path.abspath(__file__)
    if argv[1] == here:  # this wctx.py
        return [argv[0], "-I", "-S", "-c", _load_from_file(here)]
    return [argv[0], "-I", "-S", argv[1]]  # the zipapp, whose own loader caches compiled modules


def _load_from_file(path):
    """Python for ``-c`` that imports wctx from exactly ``path`` (its cached bytecode when there
    is one) and runs it: nothing else on sys.path is consulted."""
    return (
        'import importlib.util as u, sys; s = u.spec_from_file_location("wctx", %s); '
        'm = u.module_from_spec(s); sys.modules["wctx"] = m; s.loader.exec_module(m); '
        "sys.exit(m.main())" % json.dumps(path)  # a JSON string is a Python string literal
    )


def shell_command(argv):
    """One shell command line for ``argv`` (each word quoted where needed)."""
    import shlex

    return " ".join(shlex.quote(a) for a in argv)


def is_tty(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


# ----------------------------------------------------------------------------------------------
# Cutting text for a reader (MCP replies, the briefing, the CLI's text): at a word, with a marker
# ----------------------------------------------------------------------------------------------


def clip_words(text, limit):
    """Cut ``text`` to at most ``limit`` characters at a word boundary, marked with "…"."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ", max(0, limit - 24))
    if space > 0:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


# A commit as freshness reasons name it: short sha, date, "subject". Lists are joined with "; " and
# may end in " and N more"; the sha and date make a boundary that a subject's own "; " is not.
# After the list a reason may go on ("; the file changed in 2 other commits that left it intact").
_COMMIT_START = r'[0-9a-f]{7,40} \d{4}-\d\d-\d\d "'
_COMMIT_LIST = _lazy_pattern(
    "(?P<commits>" + _COMMIT_START + '.*?"(?:; ' + _COMMIT_START + '.*?")*)'
    r"(?: and (?P<more>\d+) more)?(?=$|[;,] | and )"
)
_COMMIT_BOUNDARY = _lazy_pattern("; (?=" + _COMMIT_START + ")")


def commit_subject(subject, limit=60):
    """A commit's subject as a reason quotes it: cut at a word boundary, marked with "…"."""
    return clip_words(subject, limit)


def cut_reason(text, limit):
    """A reason at most about ``limit`` characters long. A reason that names commits keeps each
    commit it shows whole: commits are dropped from the end of the list and counted in its
    "and N more" tail (the one place that count is decided once a reason is cut), never cut in
    the middle; only a single commit longer than the limit, or a reason without commits, is cut
    at a word. What follows the list is kept after the tail."""
    if len(text) <= limit:
        return text
    found = _COMMIT_LIST.search(text)
    if found is None:
        return clip_words(text, limit)
    head, rest = text[: found.start()], text[found.end() :]
    more = int(found.group("more") or 0)
    parts = _COMMIT_BOUNDARY.split(found.group("commits"))

    def joined(parts, more, rest):
        return head + "; ".join(parts) + (" and %d more" % more if more else "") + rest

    while len(parts) > 1:
        candidate = joined(parts, more, rest)
        if len(candidate) <= limit:
            return candidate
        parts.pop()
        more += 1
    # One commit left: keep it whole (a sha, a date and a subject of at most 60 characters) when
    # it fits within twice the limit, without what follows the list if need be, else cut at a word.
    for candidate in (joined(parts, more, rest), joined(parts, more, "")):
        if len(candidate) <= 2 * limit:
            return candidate
    return clip_words(joined(parts, more, ""), limit)


def nearest_names(word, names, n=3):
    """The names closest to ``word`` as typed (a typo of one of them), nearest first; [] when none
    is near. Case is ignored in the comparison, not in the answer."""
    import difflib

    by_folded = {}
    for name in names:
        by_folded.setdefault(name.casefold(), name)
    close = difflib.get_close_matches(word.casefold(), list(by_folded), n=n, cutoff=0.6)
    return [by_folded[c] for c in close]


def unknown_name(what, word, names, limit=12):
    """``unknown WHAT 'word' (did you mean A?; known: A, B)``: the one wording of a name that
    matches none of ``names``, with the nearest ones first and the whole list when short."""
    names = sorted(set(names))
    close = nearest_names(word, names)
    known = ", ".join(names[:limit]) + (" …" if len(names) > limit else "")
    said = []
    if close:
        said.append("did you mean %s?" % " or ".join(close))
    said.append("known: %s" % (known or "none"))
    return "unknown %s '%s' (%s)" % (what, word, "; ".join(said))
