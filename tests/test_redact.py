"""Secret redaction: every kind the issue names is replaced, ordinary text is left alone."""

from __future__ import annotations

import pytest

import wctx

PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAplantedbody0123456789\nQWERTYplantedsecondline\n"
    "-----END RSA PRIVATE KEY-----"
)

# (text, the secret that must vanish, a piece of context that must stay)
SECRETS = [
    (PEM + "\nafter", "MIIEowIBAAKCAQEAplantedbody", "after"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEplanted", "b3BlbnNzaC1rZXktdjEplanted", ""),
    (
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end",
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "end",
    ),
    ('curl -H "Authorization: Bearer abcdef1234567890abcdef" https://x', "abcdef1234567890abcdef", "Bearer"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA==", "Authorization"),
    ("proxy-authorization=token9f8e7d6c5b4a", "token9f8e7d6c5b4a", "proxy-authorization"),
    ("bearer abcdefghijklmnop1234", "abcdefghijklmnop1234", "bearer"),
    ("AWS AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE", "here"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG", "aws_secret_access_key"),
    ("GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "GITHUB_TOKEN"),
    ("pat github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "github_pat_11ABCDEFG0123456789", "pat"),
    ("slack xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx", "xoxb-123456789012", "slack"),
    ("hook https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXX", "XXXXXXXXXXXXXXXXXXXX", "hook"),
    ("key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrstuvwxyz0123456789", "key"),
    ("key sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345-_xyz", "abcdefghijklmnopqrstuvwxyz012345", "key"),
    ("google AIzaSyA-abcdefghijklmnopqrstuvwxyz0123456 x", "AIzaSyA-abcdefghijklmnopqrstuvwxyz0123456", "google"),
    ("oauth ya29.a0AfH6SMBabcdefghijklmnopqrstu", "ya29.a0AfH6SMBabcdefghijklmnopqrstu", "oauth"),
    ("git clone https://alice:s3cr3tpass@github.com/org/repo.git", "s3cr3tpass", "github.com/org/repo.git"),
    ("postgres://admin:hunter2@db.internal:5432/app", "hunter2", "db.internal:5432/app"),
    ("https://ghs_abcdefghijklmnopqrstuvwxyz012345@github.com/o/r", "abcdefghijklmnopqrstuvwxyz012345", "github.com/o/r"),
    ("password=hunter2 and more", "hunter2", "and more"),
    ("DB_PASSWORD: 'correct horse battery'", "correct horse battery", "DB_PASSWORD"),
    ('{"api_key": "xyz123abc", "n": 1}', "xyz123abc", '"n": 1'),
    ("run --token=abc123def now", "abc123def", "now"),
    ("client_secret=Zm9vYmFy&grant=x", "Zm9vYmFy", "grant=x"),
    ("SECRET=topsecretvalue", "topsecretvalue", "SECRET"),
]


@pytest.mark.parametrize("text,secret,context", SECRETS)
def test_secret_is_redacted_and_context_kept(text, secret, context):
    out = wctx.redact_secrets(text)
    assert secret not in out
    assert "REDACTED" in out
    assert context in out


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens=100 token_count: 5 tokenize(text)",
        "see src/auth/token.py and the password reset flow",
        "git log --oneline main..HEAD",
        "https://github.com/org/repo/pull/12",
        "def upload_document(file):",
        "",
    ],
)
def test_ordinary_text_is_unchanged(text):
    assert wctx.redact_secrets(text) == text


def test_none_and_non_text_pass_through():
    assert wctx.redact_secrets(None) is None


def test_redaction_is_idempotent():
    once = wctx.redact_secrets(" ; ".join(t for t, _, _ in SECRETS))
    assert wctx.redact_secrets(once) == once


def test_capture_redacts_claim_detail_and_summary(git_repo, store):
    repo = git_repo("svc", {"a.py": "x = 1\n"})
    wctx.register_repo(store, repo.path)
    res = wctx.capture(
        store,
        [{"kind": "note", "claim": "CI used ghp_abcdefghijklmnopqrstuvwxyz0123456789", "detail": "password=hunter2"}],
        summary="rotated AKIAIOSFODNN7EXAMPLE",
        cwd=repo.path,
    )
    item = wctx.get_evidence(store, res["evidence"][0]["id"])
    session = wctx.get_session(store, res["session"])["session"]
    text = " ".join([item["claim"], item["detail"], session["summary"]])
    for secret in ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "hunter2", "AKIAIOSFODNN7EXAMPLE"):
        assert secret not in text
