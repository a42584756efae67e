from __future__ import annotations

import json
import re

from .caches import (
    BUILT_ONCE,
    CLEAN_TEXTS,
    FRAGMENT_FREE_RUNS,
    FRAGMENT_SCAN,
    RUN_MEMO_MAX,
    SHOWN_TEXT,
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


def _random_looking(value):
    """Whether ``value`` reads as a generated secret rather than a word, a path or an id: at least
    32 characters with upper- and lower-case letters and digits, spread as a random draw spreads
    them (Shannon entropy within a bit of the most its length allows; camel-case words, paths and
    repeated parts fall below). Hex alone is judged by its context, never here: commit and blob
    ids are hex."""
    if len(value) < 32 or value.isdigit():
        return False
    if not (
        any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
    ):
        return False
    import math

    n = len(value)
    counts = {}
    for c in value:
        counts[c] = counts.get(c, 0) + 1
    entropy = -sum(k / n * math.log2(k / n) for k in counts.values())
    return entropy >= min(math.log2(n), 6.0) - 1.0


def _is_hex(value):
    return all(c in "0123456789abcdefABCDEF" for c in value)


# A name says it holds a secret when one of its parts (split at _ . - and camel case) is one of
# these, or it contains one of the strong words anywhere; it names something else (a digest, an
# id, a path) when one of its parts is in _NOT_SECRET_PARTS.
_SECRET_NAME_PARTS = frozenset(
    "key keys auth config conf cfg salt signing private pwd pass cred creds secrets tokens".split()
)
_SECRET_NAME_WORDS = ("secret", "token", "passw", "credential", "apikey", "privatekey", "accesskey")
_NOT_SECRET_PARTS = frozenset(
    "sha sha1 sha256 sha512 commit hash digest checksum blob rev revision oid etag id ids uuid integrity "
    "version path file dir url uri host region type mode format name arn count size length".split()
)


def _name_holds_secret(name):
    parts = [p.lower() for p in re.split(r"[_.\-]+|(?<=[a-z0-9])(?=[A-Z])", name) if p]
    if any(p in _NOT_SECRET_PARTS for p in parts):
        return False
    folded = name.lower()
    return any(p in _SECRET_NAME_PARTS for p in parts) or any(w in folded for w in _SECRET_NAME_WORDS)


def _named_value_redaction(match):
    """A long random value (or, under a name that says secret, long hex) assigned to a name
    that says it holds a secret, a key or configuration: SESSION_CONFIG = "Vq3L...",
    signingSecretValue: '...'. Anything else is left as it was."""
    name, value = match.group(2), match.group(5)
    if not _name_holds_secret(name):
        return match.group(0)
    strong = any(w in name.lower() for w in _SECRET_NAME_WORDS)
    if not (_random_looking(value) or (strong and len(value) >= 32 and _is_hex(value))):
        return match.group(0)
    return match.group(1) + match.group(4) + REDACTED + match.group(6)


def _context_value_redaction(match):
    """A bare value right after words that name a credential ("the webhook secret is 9f2c...",
    "api key 5eed..."): long hex, or a random-looking string."""
    value = match.group(2)
    if (len(value) >= 32 and _is_hex(value)) or _random_looking(value):
        return match.group(1) + REDACTED
    return match.group(0)


# A long value (32 characters or more, no space) after a name that says secret or configuration,
# and after words that name a credential: see _named_value_redaction and _context_value_redaction.
_NAMED_VALUE = (
    r"((?<![A-Za-z0-9_.-])([A-Za-z_][A-Za-z0-9_.-]{0,100})(\\?[\"'])?[ \t]*[:=][ \t]*)"
    r"(\\?[\"']?)([A-Za-z0-9+/=_-]{32,})(\\?[\"']?)"
)
_CONTEXT_VALUE = (
    r"(?i)(\b(?:(?:api|access|secret|private|signing|hmac|encryption|master|auth|client|license|deploy|"
    r"session|admin|webhook)[ _-]?(?:key|secret|token)|secret|token|password|passwd|passphrase|"
    r"credentials?)s?\b[\"'`]?(?:[ \t]+(?:is|was|of))?[ \t]*[:=]?[ \t]*[\"'`]?)"
    r"([A-Za-z0-9+/=_-]{32,})(?![A-Za-z0-9+/=_-])"
)
_LONG_VALUE_RE = _lazy_pattern(r"[A-Za-z0-9+/=_-]{32}")


def _long_value_guard(text):
    """Whether ``text`` holds a run of 32 value characters, which every match of _NAMED_VALUE and
    _CONTEXT_VALUE does: most code and prose that says "key" or "config" has none."""
    return _LONG_VALUE_RE.search(text) is not None


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
    (
        ("eyj",),
        (),
        r"(?<![A-Za-z0-9])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        0,
        "[REDACTED jwt]",
    ),
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
    # Vendor tokens with recognisable shapes, also inside an identifier (handler_AKIA..., X_ghp_...):
    # a letter or digit before the prefix makes it another word, an underscore does not.
    (("sk-ant-",), (), r"(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_-]{16,}", 0, "[REDACTED anthropic key]"),
    (
        ("sk-",),
        (),
        r"(?<![A-Za-z0-9])sk-(?:proj-|svcacct-|admin-|live-|test-)?[A-Za-z0-9_-]{20,}",
        0,
        "[REDACTED openai key]",
    ),
    (
        _AWS_KEY_PREFIXES,
        (),
        r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA)[A-Z0-9]{16}(?![A-Za-z0-9])",
        0,
        "[REDACTED aws key id]",
    ),
    (
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        (),
        r"(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{30,255}\b",
        0,
        "[REDACTED github token]",
    ),
    (
        ("github_pat_",),
        (),
        r"(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{22,255}\b",
        0,
        "[REDACTED github token]",
    ),
    (
        ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glft-", "glsoat-", "glimt-", "glagent-"),
        (),
        r"(?<![A-Za-z0-9])gl(?:pat|dt|rt|ptt|cbt|ft|soat|imt|agent)-[A-Za-z0-9_-]{20,}",
        0,
        "[REDACTED gitlab token]",
    ),
    (("xox",), (), r"(?<![A-Za-z0-9])xox[abposre]-[A-Za-z0-9-]{10,}", 0, "[REDACTED slack token]"),
    (
        ("hooks.slack.com/",),
        (),
        r"https:/{1,2}hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]+",
        0,
        "[REDACTED slack webhook]",
    ),
    (("aiza",), (), r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{30,}", 0, "[REDACTED google api key]"),
    (("ya29.",), (), r"(?<![A-Za-z0-9])ya29\.[0-9A-Za-z_-]{20,}", 0, "[REDACTED google oauth token]"),
    (("gocspx-",), (), r"(?<![A-Za-z0-9])GOCSPX-[A-Za-z0-9_-]{20,}", 0, "[REDACTED google client secret]"),
    (
        ("_live_", "_test_"),
        (),
        r"(?<![A-Za-z0-9])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",
        0,
        "[REDACTED stripe key]",
    ),
    (
        ("sg.",),
        (),
        r"(?<![A-Za-z0-9])SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}",
        0,
        "[REDACTED sendgrid key]",
    ),
    (("npm_",), (), r"(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36}\b", 0, "[REDACTED npm token]"),
    (("whsec_",), (), r"(?<![A-Za-z0-9])whsec_[A-Za-z0-9+/=]{16,}", 0, "[REDACTED stripe webhook secret]"),
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
        r"(?<![A-Za-z0-9])shp(?:at|ca|pa|ss)_[A-Fa-f0-9]{32}\b",
        0,
        "[REDACTED shopify token]",
    ),
    (
        ("sq0atp-", "sq0csp-"),
        (),
        r"(?<![A-Za-z0-9])sq0(?:atp|csp)-[0-9A-Za-z_-]{22,}",
        0,
        "[REDACTED square token]",
    ),
    (("pypi-age",), (), r"(?<![A-Za-z0-9])pypi-AgE[A-Za-z0-9_-]{50,}", 0, "[REDACTED pypi token]"),
    (("_v1_",), (), r"(?<![A-Za-z0-9])do[opr]_v1_[a-f0-9]{64}\b", 0, "[REDACTED digitalocean token]"),
    (("dapi",), (), r"(?<![A-Za-z0-9])dapi[a-f0-9]{32}(?:-\d)?\b", 0, "[REDACTED databricks token]"),
    (("age-secret-key-1",), (), r"(?<![A-Za-z0-9])AGE-SECRET-KEY-1[0-9A-Z]{58}\b", 0, "[REDACTED age key]"),
    (("hvs.", "hvb."), (), r"(?<![A-Za-z0-9])hv[sb]\.[A-Za-z0-9_-]{24,}", 0, "[REDACTED vault token]"),
    (("lin_api_",), (), r"(?<![A-Za-z0-9])lin_api_[A-Za-z0-9]{40}\b", 0, "[REDACTED linear key]"),
    (
        ("glsa_", "glc_"),
        (),
        r"(?<![A-Za-z0-9])gl(?:sa|c)_[A-Za-z0-9_+/=-]{32,}",
        0,
        "[REDACTED grafana token]",
    ),
    (
        ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct."),
        (),
        r"(?<![A-Za-z0-9])dp\.(?:pt|st|sa|ct)\.[A-Za-z0-9]{40,}",
        0,
        "[REDACTED doppler token]",
    ),
    (("gsk_",), (), r"(?<![A-Za-z0-9])gsk_[A-Za-z0-9]{48,}", 0, "[REDACTED groq key]"),
    (("r8_",), (), r"(?<![A-Za-z0-9])r8_[A-Za-z0-9]{37}\b", 0, "[REDACTED replicate token]"),
    (("xai-",), (), r"(?<![A-Za-z0-9])xai-[A-Za-z0-9]{60,}", 0, "[REDACTED xai key]"),
    (("key-",), (), r"(?<![A-Za-z0-9])key-[0-9a-f]{32}\b", 0, "[REDACTED mailgun key]"),
    (
        ("dckr_pat_", "dckr_oat_"),
        (),
        r"(?<![A-Za-z0-9])dckr_(?:pat|oat)_[A-Za-z0-9_-]{20,}",
        0,
        "[REDACTED docker token]",
    ),
    (("tskey-",), (), r"(?<![A-Za-z0-9])tskey-[a-z]+-[A-Za-z0-9-]{16,}", 0, "[REDACTED tailscale key]"),
    (
        ("sntrys_", "sntryu_"),
        (),
        r"(?<![A-Za-z0-9])sntry[su]_[A-Za-z0-9+/=_-]{32,}",
        0,
        "[REDACTED sentry token]",
    ),
    (("pplx-",), (), r"(?<![A-Za-z0-9])pplx-[A-Za-z0-9]{40,}", 0, "[REDACTED perplexity key]"),
    (("figd_",), (), r"(?<![A-Za-z0-9])figd_[A-Za-z0-9_-]{32,}", 0, "[REDACTED figma token]"),
    (("pmak-",), (), r"(?<![A-Za-z0-9])PMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", 0, "[REDACTED postman key]"),
    (("sbp_",), (), r"(?<![A-Za-z0-9])sbp_[a-f0-9]{40}\b", 0, "[REDACTED supabase token]"),
    (
        ("pscale_",),
        (),
        r"(?<![A-Za-z0-9])pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,}",
        0,
        "[REDACTED planetscale token]",
    ),
    (("nrak-",), (), r"(?<![A-Za-z0-9])NRAK-[A-Z0-9]{27}\b", 0, "[REDACTED new relic key]"),
    (("rubygems_",), (), r"(?<![A-Za-z0-9])rubygems_[a-f0-9]{48}\b", 0, "[REDACTED rubygems key]"),
    (("atatt3",), (), r"(?<![A-Za-z0-9])ATATT3[A-Za-z0-9_=-]{40,}", 0, "[REDACTED atlassian token]"),
    (("hrku-",), (), r"(?<![A-Za-z0-9])HRKU-[A-Za-z0-9_-]{40,}", 0, "[REDACTED heroku key]"),
    (("ops_eyj",), (), r"(?<![A-Za-z0-9])ops_eyJ[A-Za-z0-9+/=_-]{60,}", 0, "[REDACTED 1password token]"),
    (("fo1_",), (), r"(?<![A-Za-z0-9])fo1_[A-Za-z0-9_-]{40,}", 0, "[REDACTED fly.io token]"),
    (("nfp_",), (), r"(?<![A-Za-z0-9])nfp_[A-Za-z0-9]{36,}", 0, "[REDACTED netlify token]"),
    (("ntn_",), (), r"(?<![A-Za-z0-9])ntn_[A-Za-z0-9]{40,}", 0, "[REDACTED notion token]"),
    (("sgp_",), (), r"(?<![A-Za-z0-9])sgp_[A-Fa-f0-9_]{40,}", 0, "[REDACTED sourcegraph token]"),
    (("bkua_",), (), r"(?<![A-Za-z0-9])bkua_[a-f0-9]{40}\b", 0, "[REDACTED buildkite token]"),
    (
        ("ccipat_",),
        (),
        r"(?<![A-Za-z0-9])CCIPAT_[A-Za-z0-9]{20,}_[a-f0-9]{40}\b",
        0,
        "[REDACTED circleci token]",
    ),
    (
        ("dt0c01.",),
        (),
        r"(?<![A-Za-z0-9])dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}\b",
        0,
        "[REDACTED dynatrace token]",
    ),
    (("cfpat-",), (), r"(?<![A-Za-z0-9])CFPAT-[A-Za-z0-9_-]{40,}", 0, "[REDACTED contentful token]"),
    (("pul-",), (), r"(?<![A-Za-z0-9])pul-[a-f0-9]{40}\b", 0, "[REDACTED pulumi token]"),
    (("akcp",), (), r"(?<![A-Za-z0-9])AKCp[A-Za-z0-9]{60,}", 0, "[REDACTED jfrog key]"),
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
    (("hf_",), (), r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}\b", 0, "[REDACTED huggingface token]"),
    # Credentials inside URLs: scheme://user:password@host keeps the user; scheme://TOKEN@host
    # (a long user part, as in https://<token>@github.com) loses the token.
    # A URL that a path was made from has lost a slash (scheme:/user:password@host/...): one or two.
    (
        (":/",),
        ("@",),
        r"(?i)\b([a-z][a-z0-9+.-]{1,20}:/{1,2}[^/\s:@\"'<>]*):[^/\s@\"'<>]+@",
        0,
        r"\1:" + REDACTED + "@",
    ),
    (
        (":/",),
        ("@",),
        r"(?i)\b([a-z][a-z0-9+.-]{1,20}:/{1,2})[A-Za-z0-9_-]{20,}@",
        0,
        r"\1" + REDACTED + "@",
    ),
    # Secret assignments: password=..., DB_PASSWORD: ..., "api_key": "...", --token=... The key
    # must end in the sensitive word, so `max_tokens=100` and `token_count: 5` are left alone.
    (
        ("pass", "pwd", "secret", "token", "key", "credential"),
        (":=",),
        _SECRET_ASSIGNMENT,
        0,
        _quoted_redaction,
    ),
    # A random-looking value under a name that holds a secret word anywhere, or a configuration
    # or key word as one of its parts (BILLING_CONFIG = "...", signingSecretForHooks: '...'). The
    # name is one token, so the pattern never backtracks; _named_value_redaction judges the rest.
    (
        (
            "secret",
            "token",
            "pass",
            "pwd",
            "cred",
            "key",
            "auth",
            "conf",
            "cfg",
            "salt",
            "signing",
            "private",
        ),
        (":=",),
        _NAMED_VALUE,
        0,
        _named_value_redaction,
    ),
    # A bare value after words that name a credential: "webhook secret is <hex>", "api key <hex>".
    (
        ("key", "secret", "token", "pass", "credential"),
        (),
        _CONTEXT_VALUE,
        0,
        _context_value_redaction,
    ),
    # ~/.netrc: machine HOST login USER password SECRET, on one line or several, in any order of
    # its keywords before the password.
    (
        ("password",),
        (),
        r"(?i)((?:\bmachine[ \t]+\S+|(?:^|\n)[ \t]*default)(?:\s+(?:login|account|port|protocol)[ \t]+\S+){0,4}"
        r"\s+password[ \t]+)(?!\[REDACTED)\S+",
        0,
        r"\1" + REDACTED,
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
_RULE_GUARDS = {
    _SECRET_ASSIGNMENT: _assignment_guard,
    _NAMED_VALUE: _long_value_guard,
    _CONTEXT_VALUE: _long_value_guard,
}


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


# Runs of text (see _secret_fragments) known to hold no rule fragment are remembered: the words of
# prose, paths and identifiers repeat from text to text, and almost none holds a fragment.
_RUN_SCAN_MIN = 48  # shorter texts (ids, names, most paths) are scanned whole, one regex call


def _fragment_tables():
    """(the trie's search, {fragment: fragments inside it}, the bytes table that turns every
    character no space-free fragment holds into a space, the fragments holding a space)."""
    scan = FRAGMENT_SCAN.get("scan")
    if scan is None:
        frags = {f for rule in _SECRET_RULES for f in rule[0]}
        inside = {f: frozenset(g for g in frags if g in f) for f in frags}
        kept = {ord(c) for f in frags if " " not in f for c in f}
        table = bytes(b if b in kept or chr(b).isalnum() else 32 for b in range(128)) + b" " * 128
        spaced = tuple(f for f in frags if " " in f)
        scan = FRAGMENT_SCAN["scan"] = (re.compile(_trie_pattern(frags)).search, inside, table, spaced)
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
    digits, ``_-./:=``), each run scanned once and remembered when it holds none: a fragment without a space lies
    inside one run, so the text holds exactly the fragments of its runs, and those with a space
    (two) are looked for in the whole text. The same set as one scan of the text, for a fraction
    of the regex work: its words repeat."""
    search, inside, table, spaced = _fragment_tables()
    if len(folded) < _RUN_SCAN_MIN or not folded.isascii():
        return _scan_fragments(search, inside, folded)
    runs = set(folded.encode("ascii").translate(table).decode("ascii").split()) - FRAGMENT_FREE_RUNS
    found = set()
    for run in runs:
        hit = _scan_fragments(search, inside, run)
        if hit:
            found |= hit
            continue
        if len(FRAGMENT_FREE_RUNS) >= RUN_MEMO_MAX:
            FRAGMENT_FREE_RUNS.clear()
        FRAGMENT_FREE_RUNS.add(run)
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


# -- Secrets the rules see only once decoded or joined --------------------------------------------
# A token wrapped in base64, cut in two by a line break, or a URL written percent-encoded holds no
# rule's shape as it stands. Each such piece is decoded or joined and passed through the rules;
# when they find a secret in it, the piece is replaced. The work is bounded per text: at most
# WRAPPED_PIECES_MAX pieces of each kind, each at most WRAPPED_PIECE_MAX characters.
WRAPPED_PIECES_MAX = 64
WRAPPED_PIECE_MAX = 16384
_BASE64_MIN = 24  # 18 bytes once decoded: shorter than every vendor token the rules know
_BASE64_TABLE = bytes(b if chr(b).isalnum() or chr(b) in "+/=_-" else 32 for b in range(128)) + b" " * 128
_URL_TABLE = (
    bytes(b if chr(b).isalnum() or chr(b) in "%:/?#[]@!$&'()*+,;=._~-" else 32 for b in range(128))
    + b" " * 128
)
_PERCENT_RE = _lazy_pattern(rb"%([0-9A-Fa-f]{2})")
_PERCENT_MIN = 16  # a percent-encoded URL that holds a credential is longer
# A token cut by a line break (a shell's "\" continuation and the next line's indentation aside),
# as a terminal or a wrapped log cuts one: the run of token characters that ends a line, joined to
# the run that starts the next, when together they are long enough to be a secret.
_TOKEN_RUN_RE = _lazy_pattern(r"[A-Za-z0-9_+/=:.-]{4,}")
_SPLIT_MIN = 20
_SPLIT_FIRST_MIN = 10  # a line cut inside a token ends with a long part of it, not a short word


def _pieces(text, table, shortest):
    """The distinct runs of ``text`` made of the characters ``table`` keeps, of ``shortest`` to
    WRAPPED_PIECE_MAX characters, longest first, at most WRAPPED_PIECES_MAX of them."""
    runs = text.encode("utf-8", "surrogatepass").translate(table).split()
    if not runs or max(map(len, runs)) < shortest:  # most texts: no run long enough
        return []
    runs = {r for r in runs if shortest <= len(r) <= WRAPPED_PIECE_MAX}
    return sorted(runs, key=len, reverse=True)[:WRAPPED_PIECES_MAX]


def _readable(data):
    """``data`` as text when it is UTF-8 without control characters (but line breaks and tabs)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    # _CONTROL_RE stands below, with the boundary that strips what it finds.
    return text if text and _CONTROL_RE.search(text.replace("\r", "")) is None else None


def _base64_secrets(text):
    candidates = [
        p for p in _pieces(text, _BASE64_TABLE, _BASE64_MIN)
        if p.lower() != p and p.upper() != p and b"=" not in p.rstrip(b"=")
    ]  # fmt: skip
    if not candidates:
        return text
    import base64  # imported where used: most texts hold no base64 at all
    import binascii

    for piece in candidates:
        body = piece.rstrip(b"=")
        body += b"=" * (-len(body) % 4)
        try:
            if b"-" in body or b"_" in body:
                data = base64.urlsafe_b64decode(body)
            else:
                data = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            continue
        decoded = _readable(data)
        if decoded is not None and redact_secrets(decoded, unwrap=False) != decoded:
            text = text.replace(piece.decode("ascii"), "[REDACTED base64 secret]")
    return text


def _percent_secrets(text):
    for piece in _pieces(text, _URL_TABLE, _PERCENT_MIN):
        if _PERCENT_RE.search(piece) is None:
            continue
        data = piece
        for _ in range(2):  # once, and once more for a value encoded twice
            data = _PERCENT_RE.sub(lambda m: bytes((int(m.group(1), 16),)), data)
            decoded = _readable(data)
            if decoded is None:
                break
            redacted = redact_secrets(decoded, unwrap=False)
            if redacted != decoded:
                text = text.replace(piece.decode("ascii"), redacted)
                break
            if _PERCENT_RE.search(data) is None:
                break
    return text


def _split_secrets(text):
    lines = text.split("\n", WRAPPED_PIECES_MAX)  # the last piece: the rest of the text, as it is
    out, changed = [lines[0]], False
    for line in lines[1:]:
        before = out[-1].rstrip("\r\\")
        tail = _TOKEN_RUN_RE.match(before[::-1])
        head = _TOKEN_RUN_RE.match(line.lstrip(" \t")) if tail else None
        if head and tail.end() >= _SPLIT_FIRST_MIN and tail.end() + head.end() >= _SPLIT_MIN:
            first, second = tail.group()[::-1], head.group()
            joined = first + second
            if not _secret_fragments(_secret_fold(joined)):
                out.append(line)  # no rule can match it: most joins
                continue
            redacted = redact_secrets(joined, unwrap=False)
            # Only a secret that spans the break: neither part holds one alone, and the rules took
            # something from both ("Authorization:" + "Bearer" is left to the rule that sees the
            # token after them).
            if (
                not redacted.startswith(first)
                and not redacted.endswith(second)
                and redact_secrets(first, unwrap=False) == first
                and redact_secrets(second, unwrap=False) == second
            ):
                out[-1] = before[: len(before) - len(first)] + redacted + line.lstrip(" \t")[len(second) :]
                changed = True
                continue
        out.append(line)
    return "\n".join(out) if changed else text


def _unwrapped_secrets(text):
    """``text`` with each secret that shows only once decoded (base64, percent-encoding) or
    joined across a line break replaced as the rules replace it; ``text`` itself when none."""
    if "\n" in text:
        text = _split_secrets(text)
    if "%" in text:
        text = _percent_secrets(text)
    return _base64_secrets(text)


def redact_secrets(text, unwrap=True):
    """Replace secrets (private keys, JWTs, authorization headers, vendor tokens, credentialed
    URLs, secret assignments; also base64-wrapped, percent-encoded or cut by a line break) with
    [REDACTED …] markers. Best effort; see docs/security.md."""
    if not text or not isinstance(text, str):
        return text
    if unwrap:
        text = _unwrapped_secrets(text)
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


def _rules_of(found):
    """The positions in _SECRET_RULES, in order, of the rules one of whose fragments is in
    ``found``: the only ones that can match (a text holds few fragments; most rules have none of
    them)."""
    return tuple(i for i, rule in enumerate(_SECRET_RULES) if not found.isdisjoint(rule[0]))


# Terminal control: C0 (but newline and tab), DEL, C1, bidirectional overrides, and whole ESC
# sequences (CSI "ESC [ ... final", OSC "ESC ] ... BEL|ST", two-character escapes). Each
# alternative consumes a disjoint class of characters, so no input makes the pattern backtrack.
# Lone surrogates go too: half a character (a transcript's "\\ud83d"), which no UTF-8 store can
# hold, is one field's bad text, never a failed import.
_CONTROL_RE = _lazy_pattern(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]?|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_]?)"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
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
    return _stored_text(text)


# Texts up to this long are shown through a memo (shown_text), and a claim up to it is checked
# with one scan for rule fragments (stored_claim).
_STORED_MEMO_CHARS = 4096


def _as_stored(text, found):
    """Whether ``text``, holding the rule fragments ``found``, is stored as it is: nothing to
    redact, no control character to strip, no escaped one inside JSON."""
    # A printable string holds no control character (each one _CONTROL_RE strips is in Unicode
    # category Cc or Cf); text with a newline or a tab takes the regex.
    return not found and "\\u" not in text and (text.isprintable() or _CONTROL_RE.search(text) is None)


def _stored_text(text, found=None):
    """stored_text(text); ``found``: the rule fragments of ``text``, when the caller has them."""
    unwrapped = _unwrapped_secrets(text)
    if unwrapped is not text and unwrapped != text:
        text, found = unwrapped, None
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


def stored_list(params):
    """[stored_text(v) for v in params] (text values; others as they are), those a bulk writer
    found clean without a call: the boundary of every single-row write."""
    clean = CLEAN_TEXTS
    return [v if v in clean else stored_text(v) for v in params]


def stored_values(values):
    """{value: stored_text(value)} for the distinct ``values`` (of any type) that the boundary
    changes: the boundary of a bulk write. The short plain values a bulk write brings by the
    hundred thousand (ids, paths, names) are decided here without a call: no rule fragment, no
    control character, no JSON escape (what _as_stored tests, for short printable ASCII)."""
    search, changed = _fragment_tables()[0], {}
    for v in values:
        if v.__class__ is not str:
            if not isinstance(v, str) or v in CLEAN_TEXTS:
                continue
        elif v in CLEAN_TEXTS:
            continue
        elif len(v) < _RUN_SCAN_MIN and v.isascii() and v.isprintable() and "\\u" not in v:
            if search(v.lower()) is None:
                continue
        out = stored_text(v)
        if out != v:
            changed[v] = out
    return changed


TRUNCATED = " …[truncated]"


def stored_cut(text, limit):
    """``text`` as stored (stored_text), then cut to ``limit`` characters and marked: redaction
    first, so a cut never leaves behind the part of a secret that the rules would have known
    whole. Every text wctx shortens before storing it (a transcript's commands, tool errors,
    summaries) is shortened here."""
    text = stored_text(text)
    if not isinstance(text, str) or len(text) <= limit:
        return text
    return text[:limit] + TRUNCATED


def identifier_fault(value):
    """Why ``value`` cannot be an identifier (a name, a cited path, a key), or None. Identifiers
    are stored as they are, never redacted: stored as a [REDACTED …] marker or without its control
    characters, a name would name nothing, and two of them would become one. The answer names the
    kind of secret, never the secret."""
    if not isinstance(value, str) or not value:
        return None
    if strip_controls(value) != value:
        return "holds a control character"
    redacted = redact_secrets(value)
    if redacted != value:
        kinds = sorted(set(re.findall(r"\[REDACTED(?: ([^\]]+))?\]", redacted)))
        kind = " or ".join(k for k in kinds if k) or "a password or token"
        return "looks like a secret (%s)" % kind
    return None


def stored_key(value):
    """The form an external identifier (an agent's session id) is stored and looked up under:
    the value itself when the boundary keeps it as it is (every id an agent writes in practice);
    else its stored form with a digest of the raw value, so two ids that would clean or redact to
    the same text stay two, and the same id always finds its row again."""
    if not isinstance(value, str) or not value or stored_text(value) == value:
        return value
    import hashlib

    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    derived = "%s~%s" % (stored_text(value)[:200], digest)
    return derived if stored_text(derived) == derived else "id~" + digest


def shown_text(text):
    """What any text is shown as, by the CLI or the MCP server: secrets redacted by the rules the
    store applies (a warning that quotes a symbol, an error that quotes a name, a reason that
    quotes a query word). Control characters are left to the printer: the CLI shows them as
    escapes, JSON escapes them."""
    if not text or not isinstance(text, str):
        return text
    if len(text) > _STORED_MEMO_CHARS:
        return redact_secrets(text)
    out = _shown_memo(text)
    return text if out == text else out  # the caller's own object when unchanged (shown_tree)


@SHOWN_TEXT
def _shown_memo(text):
    """redact_secrets(text), remembered: a long-lived server shows the same stored texts (claims,
    paths, reasons) again and again."""
    return redact_secrets(text)


def shown_tree(value):
    """``value`` (a result: dicts, lists, strings) with every string as shown_text makes it; the
    same object when nothing changes."""
    if isinstance(value, str):
        return shown_text(value)
    if isinstance(value, dict):
        out = None
        for k, v in value.items():
            # (a plain string or a number, the most of a large result, without a call per value)
            new = shown_text(v) if v.__class__ is str else shown_tree(v) if isinstance(v, _TREE) else v
            if new is not v:
                if out is None:
                    out = dict(value)
                out[k] = new
        return value if out is None else out
    if isinstance(value, (list, tuple)):
        out = None
        for i, v in enumerate(value):
            new = shown_text(v) if v.__class__ is str else shown_tree(v) if isinstance(v, _TREE) else v
            if new is not v:
                if out is None:
                    out = list(value)
                out[i] = new
        return value if out is None else out
    return value


_TREE = (str, dict, list, tuple)  # what shown_tree looks into


def stored_noting(text):
    """stored_text(text), noted in CLEAN_TEXTS when that is ``text`` itself."""
    out = stored_text(text)
    if out.__class__ is str and out == text:
        CLEAN_TEXTS.add(out)
    return out


def stored_claim(text):
    """(stored_text(text), its claim_key, the claim's ascii_words or None), the claim noted in
    CLEAN_TEXTS when it is its own stored form, with one scan of the claim for rule fragments.
    The key (hex digits) is its own stored form: no rule matches hex digits alone."""
    if text.__class__ is not str or not text.isascii() or len(text) > _STORED_MEMO_CHARS:
        claim = stored_noting(text)
        return claim, claim_key(claim), None
    found = _secret_fragments(text.lower())  # _secret_fold of ASCII text
    if not _as_stored(text, found) and _stored_text(text, found) != text:
        claim = stored_noting(text)
        return claim, claim_key(claim), None
    CLEAN_TEXTS.add(text)
    words = ascii_words(text)
    key = claim_key(text, words)
    CLEAN_TEXTS.add(key)
    return text, key, words
