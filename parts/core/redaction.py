from __future__ import annotations

import json
import re

from .caches import (
    _CLEAN_TEXTS,
    _FRAGMENT_FREE_RUNS,
    _FRAGMENT_SCAN,
    _RUN_FRAGMENTS,
    BUILT_ONCE,
    RULES_OF,
    RUN_MEMO_MAX,
    STORED_TEXT,
)
from .constants import _lazy_pattern
from .helpers import ascii_words, claim_key

# ----------------------------------------------------------------------------------------------
# Secret redaction (best effort, applied to everything stored or served)
# ----------------------------------------------------------------------------------------------
# Applied before anything is stored or served: captures, imported commands, tool errors, summaries,
# paths. Each rule keeps enough context to read the text ("Authorization: Bearer [REDACTED]") and
# drops the secret. A list of small rules, not one big regex, so a reader can see what is covered.
# Best effort: an unusual secret in free text can still get through; docs/security.md says so.

REDACTED = "[REDACTED]"


def _quoted_redaction(match):
    value = match.group(2)
    if value.startswith('\\"'):  # \"secret\" inside a shell-quoted JSON body
        return match.group(1) + '\\"' + REDACTED + '\\"'
    if value[0] in "\"'":
        return match.group(1) + value[0] + REDACTED + value[0]
    return match.group(1) + REDACTED


# A secret value after a key or flag: \"backslash-escaped JSON in a shell command\", "double
# quoted" (an escaped quote inside does not end it), 'single quoted', or a bare word. Each
# alternative is unambiguous, so a long input cannot make it backtrack.
_SECRET_VALUE = (
    r"(\\\"(?:[^\"\\\n]|\\(?!\")[^\n])*\\\"|\"(?:[^\"\\\n]|\\.)+\"|'[^'\n]+'|(?![\"'\[])[^\s,;&\"'}]+)"
)
_COOKIE_ATTRIBUTES = frozenset(
    {"path", "domain", "expires", "max-age", "samesite", "secure", "httponly", "priority"}
)


def _cookie_redaction(match):
    """Cookie / Set-Cookie header: every name=value loses its value; attributes (Path=/) stay."""

    def pair(m):
        if m.group(2).lower() in _COOKIE_ATTRIBUTES or m.group(3).startswith("[REDACTED"):
            return m.group(0)
        return m.group(1) + m.group(2) + "=" + REDACTED

    return match.group(1) + re.sub(r"(^|;\s*)([^=;\s]+)=([^;]*)", pair, match.group(2))


# Each rule: (fragments, characters, pattern, flags, replacement). A rule only runs on text whose
# case-folded form (_secret_fold) holds one of its lower-case ``fragments`` and, for each string in
# ``characters``, one of that string's characters: conditions every match of the pattern meets,
# so skipping a rule that cannot match changes nothing (tests/test_redact.py checks the result
# against every rule applied). They keep redaction off the profile of a large import: most text
# has no fragment at all, and text with "token" in it runs the few rules that mention one.
_SECRET_ASSIGNMENT = (
    r"(?i)((?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]{0,80}?"
    r"(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|"
    r"private[_-]?key|secret[_-]?key|client[_-]?secret|credentials?)"
    r"(?:\\?[\"'])?\s*[:=]\s*)" + _SECRET_VALUE
)
# The words every keyword of _SECRET_ASSIGNMENT ends in (case-folded), for _assignment_guard.
_ASSIGNMENT_ENDINGS = ("wd", "word", "phrase", "secret", "token", "key", "credential", "credentials")
_AWS_KEY_PREFIXES = ("akia", "asia", "abia", "acca", "agpa", "aida", "aipa", "anpa", "anva", "apka", "aroa")
_SECRET_RULES = (
    # PEM private keys (RSA, EC, OPENSSH, PGP, encrypted): the whole block, or everything after a
    # BEGIN line whose END was cut off.
    (
        ("private key",),
        (),
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?"
        r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        re.S,
        "[REDACTED private key]",
    ),
    # JSON web tokens: three base64url parts, the first two JSON objects ("eyJ").
    (("eyj",), (), r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", 0, "[REDACTED jwt]"),
    # Authorization / Proxy-Authorization headers, any scheme, quoted or not; bare bearer tokens.
    (
        ("authorization",),
        (":=",),
        r"(?i)(\b(?:proxy-)?authorization\b[\"']?\s*[:=]\s*[\"']?"
        r"(?:(?:bearer|basic|token|digest|negotiate|bot)\s+)?)(?!\[REDACTED)"
        r"(?!(?:bearer|basic|token|digest|negotiate|bot)\s+\[REDACTED)[^\s\"',;]+",
        0,
        r"\1" + REDACTED,
    ),
    (("bearer",), (), r"(?i)\b(bearer\s+)(?!\[REDACTED)[A-Za-z0-9._~+/-]{12,}=*", 0, r"\1" + REDACTED),
    # Vendor tokens with recognisable shapes.
    (("sk-ant-",), (), r"\bsk-ant-[A-Za-z0-9_-]{16,}", 0, "[REDACTED anthropic key]"),
    (
        ("sk-",),
        (),
        r"\bsk-(?:proj-|svcacct-|admin-|live-|test-)?[A-Za-z0-9_-]{20,}",
        0,
        "[REDACTED openai key]",
    ),
    (
        _AWS_KEY_PREFIXES,
        (),
        r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA)[A-Z0-9]{16}\b",
        0,
        "[REDACTED aws key id]",
    ),
    (
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        (),
        r"\bgh[pousr]_[A-Za-z0-9]{30,255}\b",
        0,
        "[REDACTED github token]",
    ),
    (("github_pat_",), (), r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b", 0, "[REDACTED github token]"),
    (("glpat-",), (), r"\bglpat-[A-Za-z0-9_-]{20,}", 0, "[REDACTED gitlab token]"),
    (("xox",), (), r"\bxox[abposre]-[A-Za-z0-9-]{10,}", 0, "[REDACTED slack token]"),
    (
        ("hooks.slack.com/",),
        (),
        r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]+",
        0,
        "[REDACTED slack webhook]",
    ),
    (("aiza",), (), r"\bAIza[0-9A-Za-z_-]{30,}", 0, "[REDACTED google api key]"),
    (("ya29.",), (), r"\bya29\.[0-9A-Za-z_-]{20,}", 0, "[REDACTED google oauth token]"),
    (("gocspx-",), (), r"\bGOCSPX-[A-Za-z0-9_-]{20,}", 0, "[REDACTED google client secret]"),
    (("_live_", "_test_"), (), r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", 0, "[REDACTED stripe key]"),
    (("sg.",), (), r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", 0, "[REDACTED sendgrid key]"),
    (("npm_",), (), r"\bnpm_[A-Za-z0-9]{36}\b", 0, "[REDACTED npm token]"),
    (("whsec_",), (), r"\bwhsec_[A-Za-z0-9+/=]{16,}", 0, "[REDACTED stripe webhook secret]"),
    (
        (":aa",),
        (),
        r"(?<![A-Za-z0-9])(?:bot)?\d{6,12}:AA[A-Za-z0-9_-]{30,40}(?![A-Za-z0-9_-])",
        0,
        "[REDACTED telegram bot token]",
    ),
    (
        ("shpat_", "shpca_", "shppa_", "shpss_"),
        (),
        r"\bshp(?:at|ca|pa|ss)_[A-Fa-f0-9]{32}\b",
        0,
        "[REDACTED shopify token]",
    ),
    (("sq0atp-", "sq0csp-"), (), r"\bsq0(?:atp|csp)-[0-9A-Za-z_-]{22,}", 0, "[REDACTED square token]"),
    (("pypi-age",), (), r"\bpypi-AgE[A-Za-z0-9_-]{50,}", 0, "[REDACTED pypi token]"),
    (("_v1_",), (), r"\bdo[opr]_v1_[a-f0-9]{64}\b", 0, "[REDACTED digitalocean token]"),
    (("dapi",), (), r"\bdapi[a-f0-9]{32}(?:-\d)?\b", 0, "[REDACTED databricks token]"),
    (("age-secret-key-1",), (), r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b", 0, "[REDACTED age key]"),
    (("hvs.", "hvb."), (), r"\bhv[sb]\.[A-Za-z0-9_-]{24,}", 0, "[REDACTED vault token]"),
    (("lin_api_",), (), r"\blin_api_[A-Za-z0-9]{40}\b", 0, "[REDACTED linear key]"),
    (("glsa_", "glc_"), (), r"\bgl(?:sa|c)_[A-Za-z0-9_+/=-]{32,}", 0, "[REDACTED grafana token]"),
    (
        ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct."),
        (),
        r"\bdp\.(?:pt|st|sa|ct)\.[A-Za-z0-9]{40,}",
        0,
        "[REDACTED doppler token]",
    ),
    (("gsk_",), (), r"\bgsk_[A-Za-z0-9]{48,}", 0, "[REDACTED groq key]"),
    (("r8_",), (), r"\br8_[A-Za-z0-9]{37}\b", 0, "[REDACTED replicate token]"),
    (("xai-",), (), r"\bxai-[A-Za-z0-9]{60,}", 0, "[REDACTED xai key]"),
    (("key-",), (), r"\bkey-[0-9a-f]{32}\b", 0, "[REDACTED mailgun key]"),
    # A bare AWS secret access key (40 base64 characters) right after an access key id, as in
    # `aws configure` output, a CSV of credentials or "AKIA... / secret". Conditions are checked
    # on the text as the rules before have left it, so the key id's marker is there to find.
    (
        ("[redacted aws key id]",),
        (),
        r"(\[REDACTED aws key id\][^A-Za-z0-9/+=\n]{1,40})[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
        0,
        r"\1[REDACTED aws secret key]",
    ),
    # Names that carry a secret without a '=' (aws configure set aws_secret_access_key X) or whose
    # name does not end in a sensitive word (GCP private_key_id, Azure AccountKey=...;).
    (
        (
            "aws_secret_access_key",
            "aws_session_token",
            "secretaccesskey",
            "private_key_id",
            "accountkey",
            "sharedaccesskey",
            "sharedaccesssignature",
            "_auth",
        ),
        (),
        r"(?i)((?<![A-Za-z0-9_])(?:aws_secret_access_key|aws_session_token|secretaccesskey|"
        r"private_key_id|accountkey|sharedaccesskey|sharedaccesssignature|_auth)"
        r"(?:\\?[\"'])?(?:\s*[:=]\s*|[ \t]+))" + _SECRET_VALUE,
        0,
        _quoted_redaction,
    ),
    # curl -u user:password (and --user, httpie -a/--auth): the user stays, the password goes.
    (
        ("curl", "http", "wget"),
        ("-", ":"),
        r"(?i)(\b(?:curl|http|https|wget)\b[^\n|;&]{0,500}?\s(?:-u|--user|-a|--auth)(?:[ \t]+|=)[\"']?"
        r"[^\s:\"']{1,200}:)(?!\[REDACTED)[^\s\"']+",
        0,
        r"\1" + REDACTED,
    ),
    (("hf_",), (), r"\bhf_[A-Za-z0-9]{30,}\b", 0, "[REDACTED huggingface token]"),
    # Credentials inside URLs: scheme://user:password@host keeps the user; scheme://TOKEN@host
    # (a long user part, as in https://<token>@github.com) loses the token.
    (
        ("://",),
        ("@",),
        r"(?i)\b([a-z][a-z0-9+.-]{1,20}://[^/\s:@\"'<>]*):[^/\s@\"'<>]+@",
        0,
        r"\1:" + REDACTED + "@",
    ),
    (("://",), ("@",), r"(?i)\b([a-z][a-z0-9+.-]{1,20}://)[A-Za-z0-9_-]{20,}@", 0, r"\1" + REDACTED + "@"),
    # Secret assignments: password=..., DB_PASSWORD: ..., "api_key": "...", --token=... The key
    # must end in the sensitive word, so `max_tokens=100` and `token_count: 5` are left alone.
    (
        ("pass", "pwd", "secret", "token", "key", "credential"),
        (":=",),
        _SECRET_ASSIGNMENT,
        0,
        _quoted_redaction,
    ),
    # Environment-style names ending in _KEY: ENCRYPTION_KEY=..., SENDGRID_KEY: ...
    (
        ("_key",),
        (":=",),
        r"((?<![A-Za-z0-9_])[A-Z][A-Z0-9_]{0,80}_KEY(?:\\?[\"'])?\s*[:=]\s*)" + _SECRET_VALUE,
        0,
        _quoted_redaction,
    ),
    # Flags with the value as the next word: --password hunter2, --token X; mysql -phunter2.
    (
        ("pass", "secret", "token", "key"),
        ("-",),
        r"(?i)((?<![A-Za-z0-9-])--?[a-z0-9-]{0,40}?"
        r"(?:password|passwd|passphrase|secret|token|api-?key|access-?key|private-?key)[ \t]+)"
        r"(?!-)" + _SECRET_VALUE,
        0,
        _quoted_redaction,
    ),
    (
        ("mysql", "mariadb"),
        ("-",),
        r"(?i)(\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]{0,500}?\s-p)(?![\s\[])" + _SECRET_VALUE,
        0,
        _quoted_redaction,
    ),
    # Signed URLs: query parameters that are the signature or the credential.
    (
        ("sig=", "signature=", "credential="),
        ("?&",),
        r"(?i)([?&](?:x-amz-signature|x-amz-credential|x-goog-signature|x-goog-credential|sig|signature)=)"
        r"(?!\[REDACTED)[^&\s\"'#<>]+",
        0,
        r"\1" + REDACTED,
    ),
    # Cookie and Set-Cookie headers, plain or as a JSON / header-dict entry.
    (("cookie",), (":",), r"(?i)(\b(?:set-)?cookie\b[\"']?\s*:\s*[\"']?)([^\r\n\"']+)", 0, _cookie_redaction),
)


def _assignment_guard(text):
    """Whether ``text`` holds a ':' or '=' right after one of _SECRET_ASSIGNMENT's keywords (then
    an optional quote, optionally backslashed, then spaces, as the pattern allows): what every
    match of that rule holds. The pattern tries up to 80 characters before a keyword at every
    position, a thousand times the cost of this test, on prose that says "secret" and has a colon
    somewhere. The keyword is compared case-folded as the rule's fragments are (_secret_fold)."""
    for sep in ":=":
        i = text.find(sep)
        while i >= 0:
            j = i
            while j and text[j - 1].isspace():  # \s* (each space walked back over once)
                j -= 1
            if j and text[j - 1] in "\"'":
                j -= 1
                if j and text[j - 1] == "\\":
                    j -= 1
            if _secret_fold(text[max(0, j - 11) : j]).endswith(_ASSIGNMENT_ENDINGS):
                return True
            i = text.find(sep, i + 1)
    return False


# A rule's guard: a test cheaper than its pattern that every text the pattern matches passes.
_RULE_GUARDS = {_SECRET_ASSIGNMENT: _assignment_guard}


@BUILT_ONCE
def _secret_patterns():
    """[(compiled pattern, replacement, fragments, characters, guard or None)] in order. Compiled
    on first use, not at import: milliseconds of start-up that most commands never need."""
    return [
        (re.compile(p, flags), repl, frags, chars, _RULE_GUARDS.get(p))
        for frags, chars, p, flags, repl in _SECRET_RULES
    ]


# Characters that case-insensitive matching treats as an ASCII letter although lower() does not
# give one (dotted and dotless i, long s, Kelvin sign): folded so that "paſſword=" is caught too.
_FOLD_AS_ASCII = {0x130: "i", 0x131: "i", 0x17F: "s", 0x212A: "k"}


def _secret_fold(text):
    return text.lower() if text.isascii() else text.translate(_FOLD_AS_ASCII).lower()


def _trie_pattern(words):
    """A regex matching any of ``words``, the longest where several start at one place, written
    as a trie (sre tries a flat alternation's branches one by one at every position)."""
    tree = {}
    for word in words:
        node = tree
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node):
        branches = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:%s)" % "|".join(branches)
        return "(?:%s)?" % body if "" in node else body

    return emit(tree)


# Runs of text (see _secret_fragments) known to hold no rule fragment, and those that hold some
# with their fragments: the words of prose, paths and identifiers repeat from text to text.
_RUN_SCAN_MIN = 48  # shorter texts (ids, names, most paths) are scanned whole, one regex call


def _fragment_tables():
    """(the trie's search, {fragment: fragments inside it}, the bytes table that turns every
    character no space-free fragment holds into a space, the fragments holding a space)."""
    scan = _FRAGMENT_SCAN.get("scan")
    if scan is None:
        frags = {f for rule in _SECRET_RULES for f in rule[0]}
        inside = {f: frozenset(g for g in frags if g in f) for f in frags}
        kept = {ord(c) for f in frags if " " not in f for c in f}
        table = bytes(b if b in kept or chr(b).isalnum() else 32 for b in range(128)) + b" " * 128
        spaced = tuple(f for f in frags if " " in f)
        scan = _FRAGMENT_SCAN["scan"] = (re.compile(_trie_pattern(frags)).search, inside, table, spaced)
    return scan


def _scan_fragments(search, inside, folded):
    m = search(folded)
    if m is None:
        return frozenset()
    found = set()
    while m is not None:
        found |= inside[m.group()]
        m = search(folded, m.start() + 1)
    return found


def _secret_fragments(folded):
    """The rule fragments ``folded`` holds (empty for most text): one regex scan, continued from
    the position after each hit so that overlapping fragments are all found, each hit standing
    for itself and every fragment inside it.

    A longer ASCII text is cut into runs of the characters fragments are made of (letters,
    digits, ``_-./:=``), each run scanned once and remembered: a fragment without a space lies
    inside one run, so the text holds exactly the fragments of its runs, and those with a space
    (two) are looked for in the whole text. The same set as one scan of the text, for a fraction
    of the regex work: its words repeat."""
    search, inside, table, spaced = _fragment_tables()
    if len(folded) < _RUN_SCAN_MIN or not folded.isascii():
        return _scan_fragments(search, inside, folded)
    runs = set(folded.encode("ascii").translate(table).decode("ascii").split()) - _FRAGMENT_FREE_RUNS
    found = set()
    for run in runs:
        hit = _RUN_FRAGMENTS.get(run)
        if hit is None:
            hit = _scan_fragments(search, inside, run)
            memo = _RUN_FRAGMENTS if hit else _FRAGMENT_FREE_RUNS
            if len(memo) >= RUN_MEMO_MAX:
                memo.clear()
            if hit:
                _RUN_FRAGMENTS[run] = hit
            else:
                _FRAGMENT_FREE_RUNS.add(run)
                continue
        found |= hit
    for fragment in spaced:
        if fragment in folded:
            found |= inside[fragment]
    return found if found else frozenset()


def _holds_one_of_each(text, groups):
    """Whether ``text`` holds at least one character of each group (characters a rule needs)."""
    for group in groups:
        for c in group:
            if c in text:
                break
        else:
            return False
    return True


def redact_secrets(text):
    """Replace secrets (private keys, JWTs, authorization headers, vendor tokens, credentialed
    URLs, secret assignments) with [REDACTED …] markers. Best effort; see docs/security.md."""
    if not text or not isinstance(text, str):
        return text
    return _redact_found(text, _secret_fragments(_secret_fold(text)))


def _redact_found(text, found):
    """redact_secrets(text), given the rule fragments ``text`` holds."""
    if not found:
        return text
    patterns = _secret_patterns()
    todo, k = _rules_of(frozenset(found)), 0
    while k < len(todo):
        i = todo[k]
        k += 1
        pattern, replacement, _, chars, guard = patterns[i]
        if not _holds_one_of_each(text, chars) or (guard is not None and not guard(text)):
            continue
        redacted = pattern.sub(replacement, text)
        if redacted != text:
            text = redacted
            # the rules after this one, by the fragments of the text as it is now
            todo, k = [j for j in _rules_of(frozenset(_secret_fragments(_secret_fold(text)))) if j > i], 0
    return text


@RULES_OF
def _rules_of(found):
    """The positions in _SECRET_RULES, in order, of the rules one of whose fragments is in
    ``found``: the only ones that can match (a text holds few fragments; most rules have none of
    them)."""
    return tuple(i for i, rule in enumerate(_SECRET_RULES) if not found.isdisjoint(rule[0]))


# Terminal control: C0 (but newline and tab), DEL, C1, bidirectional overrides, and whole ESC
# sequences (CSI "ESC [ ... final", OSC "ESC ] ... BEL|ST", two-character escapes). Each
# alternative consumes a disjoint class of characters, so no input makes the pattern backtrack.
_CONTROL_RE = _lazy_pattern(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]?|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_]?)"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"
)


def strip_controls(text):
    """``text`` without terminal control characters and escape sequences (newline and tab kept;
    a CR is dropped, so CRLF becomes LF)."""
    if not text or not isinstance(text, str) or _CONTROL_RE.search(text) is None:
        return text
    return _CONTROL_RE.sub("", text)


def _stored_json(value):
    if isinstance(value, str):
        return redact_secrets(strip_controls(value))
    if isinstance(value, list):
        return [_stored_json(v) for v in value]
    if isinstance(value, dict):
        return {_stored_json(k): _stored_json(v) for k, v in value.items()}
    return value


def stored_text(text):
    """What a text value is stored as: terminal controls stripped, then secrets redacted. The
    store's connection applies this to every text parameter of every write (see _StoreConnection),
    so no field, present or future, can bypass it. A JSON document (lists of summaries, tool
    errors) is cleaned value by value, which keeps it valid JSON and catches controls that
    json.dumps had escaped."""
    if not isinstance(text, str) or not text:
        return text
    if len(text) > _STORED_MEMO_CHARS:
        return _stored_text(text)
    return _stored_text_memo(text)


# A bulk write passes the same values through the boundary again and again (a session id, a
# repository, a commit on every row; a claim in its row and again in its search row); results of
# this pure function are remembered for the values seen last.
_STORED_MEMO_CHARS = 4096


def _as_stored(text, found):
    """Whether ``text``, holding the rule fragments ``found``, is stored as it is: nothing to
    redact, no control character to strip, no escaped one inside JSON."""
    # A printable string holds no control character (each one _CONTROL_RE strips is in Unicode
    # category Cc or Cf); text with a newline or a tab takes the regex.
    return not found and "\\u" not in text and (text.isprintable() or _CONTROL_RE.search(text) is None)


def _stored_text(text, found=None):
    """stored_text(text); ``found``: the rule fragments of ``text``, when the caller has them."""
    if found is None:
        found = _secret_fragments(_secret_fold(text))
    hint = bool(found)
    if _as_stored(text, found):
        return text  # the common case (ids, names, most prose): nothing to strip or redact
    if text[0] in "[{" and text[-1] in "]}" and ("\\u" in text or hint):
        try:
            doc = json.loads(text)
        except ValueError:
            doc = None
        if isinstance(doc, (list, dict)):
            # Redacted as text first ("key": "value" pairs are context the rules need), then
            # value by value, which also catches controls json.dumps had escaped.
            try:
                redacted = json.loads(redact_secrets(text))
            except ValueError:
                redacted = doc  # a rule cut across the JSON syntax: values one by one
            cleaned = _stored_json(redacted)
            return text if cleaned == doc else json.dumps(cleaned)
    stripped = strip_controls(text)
    return _redact_found(text, found) if stripped is text else redact_secrets(stripped)


_stored_text_memo = STORED_TEXT(_stored_text)


def _stored_noting(text):
    """stored_text(text), noted in _CLEAN_TEXTS when that is ``text`` itself."""
    out = stored_text(text)
    if out.__class__ is str and out == text:
        _CLEAN_TEXTS.add(out)
    return out


def _stored_claim(text):
    """(stored_text(text), its claim_key, the claim's ascii_words or None), the claim noted in
    _CLEAN_TEXTS when it is its own stored form, with one scan of the claim for rule fragments.
    The key (hex digits) is its own stored form: no rule matches hex digits alone."""
    if text.__class__ is not str or not text.isascii() or len(text) > _STORED_MEMO_CHARS:
        claim = _stored_noting(text)
        return claim, claim_key(claim), None
    found = _secret_fragments(text.lower())  # _secret_fold of ASCII text
    if not _as_stored(text, found) and _stored_text(text, found) != text:
        claim = _stored_noting(text)
        return claim, claim_key(claim), None
    _CLEAN_TEXTS.add(text)
    words = ascii_words(text)
    key = claim_key(text, words)
    _CLEAN_TEXTS.add(key)
    return text, key, words
