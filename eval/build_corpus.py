#!/usr/bin/env python3
"""Deterministic generator for the wctx retrieval-evaluation corpus (eval/corpus/).

Run ``python3 eval/build_corpus.py`` from the project root; it rewrites eval/corpus/ byte for
byte the same on every run (seeded, no clock, no network). The format is documented in
eval/README.md. Everything here was written by hand for wctx: the product world, the scenario
items and queries, the judgements, and the templates for the background items.

Two layers:
- scenario items and queries (``SCENARIOS``), written one by one, judged by their author;
- background items: plausible routine notes about every symbol, produced from templates with a
  seeded random choice. They share vocabulary with the queries (repo area words, symbol names) so
  that they compete for the top ranks, but were written not to answer any query. Symbol-only and
  path-only queries are judged automatically against *every* item that cites the symbol or path.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

SEED = 5
FORMAT = "wctx-eval-corpus/1"
OUT = Path(__file__).resolve().parent / "corpus"

# ----------------------------------------------------------------------------- the product world

WORKSPACES = [
    {"name": "docflow", "description": "document upload product: SDK, web UI, ingest, thumbnails"},
    {"name": "billing", "description": "invoicing and payments product"},
    {"name": "labkit", "description": "an unrelated research team's tools (decoys)", "unrelated": True},
]

# repo -> (language, workspaces, area word, {path: [symbols]})
REPOS = {
    "upload-sdk": (
        "ts",
        ["docflow"],
        "upload",
        {
            "src/upload/upload.ts": ["uploadDocument", "resumeUpload", "buildUploadUrl"],
            "src/upload/chunker.ts": ["splitIntoChunks", "chunkSizeFor"],
            "src/upload/retry.ts": ["retryPolicy", "backoffDelay", "isRetryable"],
            "src/auth/session.ts": ["attachToken", "refreshIfExpired"],
            "src/http/client.ts": ["request", "parseError"],
        },
    ),
    "docs-ui": (
        "ts",
        ["docflow"],
        "library",
        {
            "src/components/UploadButton.tsx": ["UploadButton", "onFilesSelected"],
            "src/components/ProgressBar.tsx": ["ProgressBar"],
            "src/pages/Library.tsx": ["LibraryPage", "loadDocuments"],
            "src/state/uploads.ts": ["uploadsReducer", "selectPending"],
            "src/i18n/format.ts": ["formatBytes", "formatDate"],
        },
    ),
    "ingest-api": (
        "py",
        ["docflow"],
        "ingest",
        {
            "ingest/handlers.py": ["handle_upload", "handle_chunk", "finalize_upload"],
            "ingest/validation.py": ["validate_manifest", "check_mime_type"],
            "ingest/storage.py": ["put_object", "presign_url"],
            "ingest/queue.py": ["enqueue_thumbnail", "drain_dead_letters"],
            "ingest/settings.py": ["load_settings"],
        },
    ),
    "thumbnailer": (
        "go",
        ["docflow"],
        "render",
        {
            "internal/render/render.go": ["RenderPage", "rasterize"],
            "internal/render/fonts.go": ["LoadFonts", "fallbackFont"],
            "internal/worker/worker.go": ["Run", "handleJob"],
        },
    ),
    "doc-schema": (
        "py",
        ["docflow"],
        "schema",
        {
            "docschema/document.py": ["Document", "DocumentVersion"],
            "docschema/manifest.py": ["Manifest", "parse_manifest"],
            "docschema/compat.py": ["upgrade_v1"],
        },
    ),
    "auth-core": (
        "py",
        ["docflow", "billing"],
        "token",
        {
            "authcore/tokens.py": ["issue_token", "verify_token", "refresh_token"],
            "authcore/keys.py": ["rotate_keys", "load_signing_key"],
            "authcore/clock.py": ["now_utc", "skew_tolerance"],
            "authcore/scopes.py": ["has_scope"],
        },
    ),
    "billing-api": (
        "py",
        ["billing"],
        "invoice",
        {
            "billing/invoices.py": ["create_invoice", "apply_discount", "finalize_invoice"],
            "billing/pricing.py": ["lookup_price", "round_amount"],
            "billing/webhooks.py": ["handle_stripe_event", "verify_signature"],
            "billing/receipts.py": ["upload_receipt", "render_receipt_pdf"],
            "billing/retry.py": ["retry_webhook"],
        },
    ),
    "billing-web": (
        "ts",
        ["billing"],
        "checkout",
        {
            "src/checkout/Checkout.tsx": ["Checkout", "submitPayment"],
            "src/checkout/ReceiptUpload.tsx": ["ReceiptUpload"],
            "src/api/client.ts": ["apiFetch", "withRetry"],
            "src/format/money.ts": ["formatMoney"],
        },
    ),
    "ledger": (
        "go",
        ["billing"],
        "ledger",
        {
            "ledger/posting.go": ["PostEntry", "Reverse"],
            "ledger/balance.go": ["Balance", "Reconcile"],
            "ledger/currency.go": ["Convert", "roundHalfEven"],
        },
    ),
    "lab-uploader": (
        "py",
        ["labkit"],
        "upload",
        {
            "labup/upload.py": ["upload_file", "retry_upload", "chunk_file"],
            "labup/token.py": ["refresh_token", "load_token"],
            "labup/thumbs.py": ["make_thumbnail"],
        },
    ),
    "lab-notebook": (
        "ts",
        ["labkit"],
        "notebook",
        {
            "src/cells/UploadCell.tsx": ["UploadCell"],
            "src/sync/retry.ts": ["retryPolicy", "backoffDelay"],
        },
    ),
}

RELATIONS = [
    ("docs-ui", "uses", "upload-sdk", "the web UI uploads through the SDK"),
    ("upload-sdk", "consumes_api", "ingest-api", "chunked upload protocol"),
    ("ingest-api", "calls", "thumbnailer", "thumbnail jobs over the queue"),
    ("ingest-api", "shares_schema_with", "doc-schema", "document and manifest types"),
    ("upload-sdk", "depends_on", "auth-core", "session tokens"),
    ("billing-web", "consumes_api", "billing-api", "checkout and receipts"),
    ("billing-api", "calls", "ledger", "postings"),
    ("billing-api", "depends_on", "auth-core", "service tokens and signing keys"),
    ("lab-notebook", "uses", "lab-uploader", "notebook attachments"),
]

# Commits made after the phase-0 captures: (repo, message, [(path, symbol, "change"|"delete")]).
HISTORY = [
    (
        "upload-sdk",
        "Retry 419 once after refreshing the session",
        [("src/upload/retry.ts", "isRetryable", "change")],
    ),
    ("upload-sdk", "Cap the backoff at 20 s", [("src/upload/retry.ts", "backoffDelay", "change")]),
    (
        "thumbnailer",
        "Pick Noto Sans CJK for Han, Hiragana and Hangul",
        [("internal/render/fonts.go", "fallbackFont", "change")],
    ),
    (
        "billing-api",
        "Delegate rounding to the ledger rule",
        [("billing/pricing.py", "round_amount", "change")],
    ),
    ("auth-core", "Default clock skew tolerance to 5 s", [("authcore/clock.py", "skew_tolerance", "change")]),
    (
        "ledger",
        "Remove Convert; conversion moved to the FX service",
        [("ledger/currency.go", "Convert", "delete")],
    ),
    (
        "doc-schema",
        "Keep tags when upgrading v1 documents",
        [("docschema/compat.py", "upgrade_v1", "change")],
    ),
    ("ingest-api", "Bound dead-letter redelivery", [("ingest/queue.py", "drain_dead_letters", "change")]),
    ("billing-web", "Retry only idempotent requests", [("src/api/client.ts", "withRetry", "change")]),
]

# Uncommitted edits left in the working tree when the queries run (vague queries lean on them).
DIRTY = [
    ("docs-ui", "src/components/ProgressBar.tsx", "ProgressBar"),
    ("billing-web", "src/checkout/Checkout.tsx", "Checkout"),
]

# ----------------------------------------------------------------------------- source rendering


def _py_symbol(name, revision):
    if name[:1].isupper():
        return f'class {name}:\n    """{name} record."""\n\n    revision = {revision}\n'
    return (
        f"def {name}(payload, options=None):\n"
        f'    """Step {name} of this module."""\n'
        "    options = dict(options or {})\n"
        f'    options.setdefault("revision", {revision})\n'
        f'    return {{"step": "{name}", "payload": payload, "options": options}}\n'
    )


def _ts_symbol(name, revision):
    return (
        f"export function {name}(input: unknown, options: Record<string, unknown> = {{}}): unknown {{\n"
        f"  const revision = {revision};\n"
        f'  return {{ step: "{name}", input, options, revision }};\n'
        "}\n"
    )


def _go_symbol(name, revision):
    return (
        f"func {name}(input []byte) ([]byte, error) {{\n"
        f"\trevision := {revision}\n"
        "\tif revision < 0 {\n"
        f'\t\treturn nil, fmt.Errorf("{name}: bad revision")\n'
        "\t}\n"
        "\treturn input, nil\n"
        "}\n"
    )


def render_file(lang, path, symbols):
    """symbols: [(name, revision)] in file order; a deleted symbol is simply absent."""
    render = {"py": _py_symbol, "ts": _ts_symbol, "go": _go_symbol}[lang]
    parts = []
    if lang == "py":
        parts.append(f'"""{path}"""\n')
    elif lang == "go":
        parts.append('package {}\n\nimport "fmt"\n'.format(path.split("/")[-2]))
    else:
        parts.append(f"// {path}\n")
    for name, revision in symbols:
        parts.append(render(name, revision))
    return "\n\n".join(parts)


def build_repos():
    """Initial files, history commits and dirty edits, all as full file texts."""
    state = {}  # (repo, path) -> [[name, revision]]
    repos = []
    for name, (lang, workspaces, _area, files) in REPOS.items():
        texts = {}
        for path, symbols in files.items():
            state[(name, path)] = [[s, 0] for s in symbols]
            texts[path] = render_file(lang, path, state[(name, path)])
        repos.append(
            {
                "name": name,
                "language": lang,
                "workspaces": workspaces,
                "files": texts,
                "history": [],
                "dirty": {},
            }
        )
    by_name = {r["name"]: r for r in repos}
    for repo, message, changes in HISTORY:
        lang = REPOS[repo][0]
        touched = {}
        for path, symbol, action in changes:
            entries = state[(repo, path)]
            if action == "delete":
                entries[:] = [e for e in entries if e[0] != symbol]
            else:
                for e in entries:
                    if e[0] == symbol:
                        e[1] += 1
            touched[path] = render_file(lang, path, entries)
        by_name[repo]["history"].append({"message": message, "files": touched})
    for repo, path, symbol in DIRTY:
        lang = REPOS[repo][0]
        entries = [[n, r + (7 if n == symbol else 0)] for n, r in state[(repo, path)]]
        by_name[repo]["dirty"][path] = render_file(lang, path, entries)
    return repos


def changed_after_capture():
    """{(repo, path, symbol)} whose text differs at query time from phase 0."""
    changed = set()
    for repo, _msg, changes in HISTORY:
        for path, symbol, _action in changes:
            changed.add((repo, path, symbol))
    for repo, path, symbol in DIRTY:
        changed.add((repo, path, symbol))
    return changed


# ----------------------------------------------------------------------------- scenario items

ITEMS = []
QUERIES = []


def item(
    key, repo, kind, text, files=(), conf=None, ran_in=None, phase=0, superseded_by=None, retracted=False
):
    """One hand-written evidence item; ``text`` is ``claim :: detail`` as on the CLI."""
    claim, _, detail = text.partition(" :: ")
    ITEMS.append(
        {
            "key": key,
            "repo": repo,
            "kind": kind,
            "claim": claim.strip(),
            "detail": detail.strip() or None,
            "files": list(files),
            "confidence": conf,
            "ran_in": ran_in or repo,
            "phase": phase,
            "superseded_by": superseded_by,
            "retracted": retracted,
        }
    )


def query(frm, text, category, needs, judged, note=""):
    QUERIES.append(
        {
            "from": frm,
            "text": text,
            "category": category,
            "needs": needs,
            "judged": dict(judged),
            "note": note,
        }
    )


# F1: the same symptom (413 on big files) in four repos, four different root causes.
item(
    "f1-sdk",
    "upload-sdk",
    "finding",
    "Uploads over 8 MiB fail with 413 :: chunkSizeFor returns the whole file size when the server "
    "omits max_chunk, so a single request carries the entire file and the gateway rejects it",
    ["src/upload/chunker.ts#chunkSizeFor"],
    0.9,
    ran_in="docs-ui",
)
item(
    "f1-ingest",
    "ingest-api",
    "finding",
    "The 413 on large uploads comes from the gateway, not from handle_chunk :: handle_chunk accepts "
    "up to 64 MiB per part; the 8 MiB limit is in the gateway config",
    ["ingest/handlers.py#handle_chunk"],
    0.8,
)
item(
    "f1-billing",
    "billing-api",
    "finding",
    "Receipt uploads fail with 413 :: the billing ingress allows 1 MB request bodies and phone "
    "camera receipts are 3-5 MB",
    ["billing/receipts.py#upload_receipt"],
    0.9,
    ran_in="billing-web",
)
item(
    "f1-thumb",
    "thumbnailer",
    "known_issue",
    "Rendering a large PDF fails with 413 from the storage callback :: RenderPage posts the "
    "full-resolution raster back instead of the thumbnail",
    ["internal/render/render.go#RenderPage"],
    0.7,
)
item(
    "f1-lab",
    "lab-uploader",
    "finding",
    "Big file upload fails with 413 request entity too large :: chunk_file uses 50 MB chunks but "
    "the lab proxy allows 10 MB, so every big file upload fails with 413 until the chunk size is lowered",
    ["labup/upload.py#chunk_file"],
    0.9,
)
query(
    "docs-ui",
    "upload fails with 413 for big files",
    "near_duplicate",
    "upload-sdk",
    {"f1-sdk": 3, "f1-ingest": 2},
)
query(
    "billing-web", "upload fails with 413 for big files", "near_duplicate", "billing-api", {"f1-billing": 3}
)
query("thumbnailer", "413 when rendering a large PDF", "near_duplicate", "thumbnailer", {"f1-thumb": 3})
query(
    "docs-ui",
    "why can't people send really large documents",
    "paraphrase",
    "upload-sdk",
    {"f1-sdk": 3, "f1-ingest": 2},
)
query(
    "ingest-api",
    "where does the 8 MiB request limit come from",
    "cross_repo",
    "ingest-api",
    {"f1-ingest": 3, "f1-sdk": 2},
)

# F2: expired sessions; the first finding goes stale when the SDK is fixed, a later one replaces it.
item(
    "f2-sdk-old",
    "upload-sdk",
    "finding",
    "SDK swallows the 419 :: isRetryable treats 419 as terminal, so an upload whose session expired "
    "fails without refreshing the token",
    ["src/upload/retry.ts#isRetryable"],
    0.9,
    ran_in="docs-ui",
)
item(
    "f2-sdk-new",
    "upload-sdk",
    "finding",
    "After the 419 fix, resumed uploads still fail with 401 :: resumeUpload builds its request "
    "without attachToken, so the refreshed token never reaches the resume call",
    ["src/upload/upload.ts#resumeUpload", "src/auth/session.ts#attachToken"],
    0.8,
    phase=1,
    ran_in="docs-ui",
)
item(
    "f2-auth",
    "auth-core",
    "constraint",
    "refresh_token may be called at most once per 30 s per client :: the key service rate-limits "
    "refreshes and bursts get 429",
    ["authcore/tokens.py#refresh_token"],
    1.0,
)
item(
    "f2-billweb",
    "billing-web",
    "finding",
    "Checkout shows a blank page when the session expires :: apiFetch treats 419 as a network error "
    "and withRetry retries it forever",
    ["src/api/client.ts#withRetry", "src/api/client.ts#apiFetch"],
    0.8,
)
item(
    "f2-lab",
    "lab-uploader",
    "finding",
    "Token expired during upload and the session is never refreshed :: refresh_token is not called "
    "on 401 or 419, so uploads fail after session expiry",
    ["labup/token.py#refresh_token"],
    0.9,
)
query(
    "docs-ui",
    "uploads fail after the session expires",
    "stale",
    "upload-sdk",
    {"f2-sdk-new": 3, "f2-sdk-old": 2, "f2-auth": 1},
    "the old finding is stale (isRetryable changed); the newer one should lead",
)
query("billing-web", "session expired 419", "near_duplicate", "billing-web", {"f2-billweb": 3})
query("upload-sdk", "how often are we allowed to get a new token", "paraphrase", "auth-core", {"f2-auth": 3})
query("upload-sdk", "resume after 401", "stale", "upload-sdk", {"f2-sdk-new": 3, "f2-sdk-old": 1})

# F3: the same wording about different symbols in different repos.
item(
    "f3-auth",
    "auth-core",
    "finding",
    "load_signing_key returns None instead of raising when the key is missing :: callers then sign "
    "with None and verify_token fails later with a confusing error",
    ["authcore/keys.py#load_signing_key"],
    0.9,
)
item(
    "f3-billing",
    "billing-api",
    "finding",
    "lookup_price returns None instead of raising when the key is missing :: create_invoice then "
    "multiplies None by the quantity and the webhook handler retries forever",
    ["billing/pricing.py#lookup_price", "billing/invoices.py#create_invoice"],
    0.9,
)
item(
    "f3-schema",
    "doc-schema",
    "finding",
    "parse_manifest returns None instead of raising when a required key is missing :: "
    "validate_manifest in ingest-api checks for None, other callers do not",
    ["docschema/manifest.py#parse_manifest"],
    0.8,
    ran_in="ingest-api",
)
item(
    "f3-lab",
    "lab-uploader",
    "finding",
    "load_token returns None instead of raising when the key file is missing :: the key is missing "
    "on fresh machines",
    ["labup/token.py#load_token"],
    0.8,
)
query(
    "billing-api",
    "returns None instead of raising when the key is missing",
    "same_wording",
    "billing-api",
    {"f3-billing": 3},
)
query(
    "ingest-api",
    "returns None instead of raising when the key is missing",
    "same_wording",
    "doc-schema",
    {"f3-schema": 3},
)
query(
    "auth-core",
    "returns None instead of raising when the key is missing",
    "same_wording",
    "auth-core",
    {"f3-auth": 3},
)
query(
    "billing-web",
    "invoice total is None for an unknown product",
    "paraphrase",
    "billing-api",
    {"f3-billing": 3},
)

# F4: superseded findings next to their replacements.
item(
    "f4-old",
    "ingest-api",
    "finding",
    "Duplicate thumbnails come from the worker retrying on timeout :: raise the worker timeout to 120 s",
    ["ingest/queue.py#enqueue_thumbnail"],
    0.6,
    superseded_by="f4-new",
)
item(
    "f4-new",
    "ingest-api",
    "finding",
    "Duplicate thumbnails come from enqueue_thumbnail being called twice :: once in handle_upload and "
    "once in finalize_upload; the worker timeout was not the cause",
    ["ingest/queue.py#enqueue_thumbnail", "ingest/handlers.py#finalize_upload"],
    0.9,
    ran_in="thumbnailer",
)
item(
    "f4-dead",
    "thumbnailer",
    "dead_end",
    "Raising the worker timeout does not stop duplicate thumbnails :: tried 120 s and 300 s; "
    "duplicates continued at the same rate",
    ["internal/worker/worker.go#handleJob"],
    0.9,
)
query(
    "thumbnailer",
    "duplicate thumbnails",
    "superseded",
    "ingest-api",
    {"f4-new": 3, "f4-dead": 2},
    "the superseded timeout theory must not lead",
)
query(
    "docs-ui",
    "why does every document get two previews",
    "paraphrase",
    "ingest-api",
    {"f4-new": 3, "f4-dead": 1},
)
item(
    "f4-round-old",
    "billing-api",
    "decision",
    "Round invoice totals with Python round() :: good enough for cents",
    ["billing/pricing.py#round_amount"],
    0.5,
    superseded_by="f4-round-new",
)
item(
    "f4-round-new",
    "billing-api",
    "decision",
    "Round invoice totals half-even through the ledger rule :: round_amount now delegates to the "
    "ledger's roundHalfEven; Python round() on floats drifted by one cent on discounted lines",
    ["billing/pricing.py#round_amount", "ledger:ledger/currency.go#roundHalfEven"],
    0.9,
    phase=1,
)
item(
    "f4-ledger",
    "ledger",
    "constraint",
    "roundHalfEven is the single rounding rule for every posting :: Reverse uses it too, so a "
    "reversal nets to exactly zero",
    ["ledger/currency.go#roundHalfEven", "ledger/posting.go#Reverse"],
    1.0,
)
query(
    "billing-web",
    "how are invoice totals rounded",
    "superseded",
    "billing-api",
    {"f4-round-new": 3, "f4-ledger": 2},
)
query(
    "ledger",
    "one cent drift on discounted invoices",
    "cross_repo",
    "billing-api",
    {"f4-round-new": 3, "f4-ledger": 2},
)

# F5: the same symptom (a 30 s timeout) with different causes across one workspace.
item(
    "f5-sdk",
    "upload-sdk",
    "finding",
    "Uploads time out after 30 s on slow connections :: request uses one fixed 30 s timeout for the "
    "whole body instead of one per chunk",
    ["src/http/client.ts#request"],
    0.8,
    ran_in="docs-ui",
)
item(
    "f5-ingest",
    "ingest-api",
    "finding",
    "finalize_upload times out after 30 s when the bucket is in another region :: put_object copies "
    "the assembled file synchronously",
    ["ingest/handlers.py#finalize_upload", "ingest/storage.py#put_object"],
    0.8,
)
item(
    "f5-thumb",
    "thumbnailer",
    "finding",
    "Render jobs time out after 30 s on scanned PDFs with hundreds of pages :: rasterize renders "
    "every page before picking the first",
    ["internal/render/render.go#rasterize"],
    0.9,
)
item(
    "f5-billing",
    "billing-api",
    "finding",
    "Webhook handling times out after 30 s :: handle_stripe_event posts to the ledger synchronously "
    "and the ledger reconciles first",
    ["billing/webhooks.py#handle_stripe_event"],
    0.7,
)
item(
    "f5-lab",
    "lab-uploader",
    "known_issue",
    "Upload times out after 30 s on a slow network :: the 30 s upload timeout is hard-coded in "
    "upload_file; slow uploads time out",
    ["labup/upload.py#upload_file"],
    0.9,
)
query("docs-ui", "times out after 30 seconds", "near_duplicate", "upload-sdk", {"f5-sdk": 3, "f5-ingest": 1})
query("thumbnailer", "times out after 30 seconds", "near_duplicate", "thumbnailer", {"f5-thumb": 3})
query("billing-web", "times out after 30 seconds", "near_duplicate", "billing-api", {"f5-billing": 3})
query(
    "ingest-api",
    "times out after 30 seconds",
    "near_duplicate",
    "ingest-api",
    {"f5-ingest": 3, "f5-thumb": 1, "f5-sdk": 1},
)

# F6: fonts, with a fix in between (the first finding goes stale, a note replaces it).
item(
    "f6-old",
    "thumbnailer",
    "finding",
    "Thumbnails of CJK documents show empty boxes :: fallbackFont is only consulted for Latin "
    "scripts, so Han and Hangul glyphs fall through to a font without them",
    ["internal/render/fonts.go#fallbackFont"],
    0.9,
)
item(
    "f6-new",
    "thumbnailer",
    "note",
    "CJK boxes in thumbnails fixed :: fallbackFont now picks Noto Sans CJK for Han, Hiragana and "
    "Hangul; Arabic still renders left to right because rasterize ignores the bidi flag",
    ["internal/render/fonts.go#fallbackFont", "internal/render/render.go#rasterize"],
    0.9,
    phase=1,
)
item(
    "f6-ui",
    "docs-ui",
    "finding",
    "File names with CJK characters are cut in the middle of a character in the library list :: "
    "LibraryPage truncates by UTF-16 code units",
    ["src/pages/Library.tsx#LibraryPage"],
    0.8,
)
query("thumbnailer", "CJK thumbnails show empty boxes", "stale", "thumbnailer", {"f6-new": 3, "f6-old": 2})
query("docs-ui", "Chinese file names look broken", "paraphrase", "docs-ui", {"f6-ui": 3, "f6-old": 1})
query("ingest-api", "arabic previews are mirrored", "paraphrase", "thumbnailer", {"f6-new": 3})

# F7: number formatting, same wording about different symbols.
item(
    "f7-money",
    "billing-web",
    "finding",
    "formatMoney shows the wrong thousands separator :: it reads the browser locale instead of the "
    "account's currency locale, so en-US accounts see 1.000,00 in Germany",
    ["src/format/money.ts#formatMoney"],
    0.9,
)
item(
    "f7-bytes",
    "docs-ui",
    "finding",
    "formatBytes shows the wrong thousands separator :: it calls toLocaleString without a locale, "
    "so sizes read 1.000 KB on German browsers",
    ["src/i18n/format.ts#formatBytes"],
    0.8,
)
item(
    "f7-convert",
    "ledger",
    "finding",
    "Convert loses precision for JPY :: it assumes two decimal places for every currency",
    ["ledger/currency.go#Convert"],
    0.8,
)
query("billing-web", "wrong thousands separator", "same_wording", "billing-web", {"f7-money": 3})
query("docs-ui", "wrong thousands separator", "same_wording", "docs-ui", {"f7-bytes": 3})
query(
    "billing-api",
    "yen amounts off after conversion",
    "stale",
    "ledger",
    {"f7-convert": 3},
    "Convert was deleted after the finding: the item is stale but still the only answer",
)

# F8: clock drift seen from three places; the auth default changed later.
item(
    "f8-billing",
    "billing-api",
    "finding",
    "verify_signature rejects webhook events on the billing host :: its tolerance uses the local "
    "clock and the host drifts by up to 40 s",
    ["billing/webhooks.py#verify_signature"],
    0.8,
)
item(
    "f8-auth-old",
    "auth-core",
    "finding",
    "verify_token rejects tokens issued in the last few seconds :: skew_tolerance defaults to 0, so "
    "hosts with clock drift reject fresh tokens",
    ["authcore/clock.py#skew_tolerance", "authcore/tokens.py#verify_token"],
    0.9,
    ran_in="upload-sdk",
)
item(
    "f8-auth-new",
    "auth-core",
    "decision",
    "skew_tolerance now defaults to 5 s :: chosen after the drift incident; larger values would let "
    "revoked tokens live longer",
    ["authcore/clock.py#skew_tolerance"],
    1.0,
    phase=1,
)
item(
    "f8-ledger",
    "ledger",
    "finding",
    "Reconcile marks today's entries as future-dated on hosts with clock drift",
    ["ledger/balance.go#Reconcile"],
    0.7,
)
query(
    "billing-api",
    "clock drift",
    "near_duplicate",
    "billing-api",
    {"f8-billing": 3, "f8-auth-new": 2, "f8-auth-old": 1, "f8-ledger": 2},
)
query(
    "docs-ui",
    "freshly issued tokens are rejected",
    "stale",
    "auth-core",
    {"f8-auth-new": 3, "f8-auth-old": 3},
)
query(
    "upload-sdk",
    "what is the allowed skew between hosts",
    "paraphrase",
    "auth-core",
    {"f8-auth-new": 3, "f8-auth-old": 1},
)

# F9: a laggy progress bar: a decision and a dead end.
item(
    "f9-dead",
    "docs-ui",
    "dead_end",
    "Memoizing ProgressBar did not reduce re-renders :: uploadsReducer returns a new array on every "
    "progress event, so memo never hits",
    ["src/components/ProgressBar.tsx#ProgressBar", "src/state/uploads.ts#uploadsReducer"],
    0.9,
)
item(
    "f9-decision",
    "docs-ui",
    "decision",
    "Throttle progress events to four per second in uploadsReducer :: keeps the list responsive "
    "with 50 parallel uploads",
    ["src/state/uploads.ts#uploadsReducer"],
    0.9,
)
item(
    "f9-sdk",
    "upload-sdk",
    "constraint",
    "uploadDocument emits a progress event per 64 KiB written :: consumers must throttle; the SDK will not",
    ["src/upload/upload.ts#uploadDocument"],
    1.0,
    ran_in="docs-ui",
)
item(
    "f9-lab",
    "lab-notebook",
    "dead_end",
    "Memoizing the upload progress bar did not reduce re-renders in UploadCell :: progress bar "
    "still re-renders on every progress event",
    ["src/cells/UploadCell.tsx#UploadCell"],
    0.8,
)
query(
    "docs-ui",
    "progress bar re-renders too often",
    "decoy",
    "docs-ui",
    {"f9-decision": 3, "f9-dead": 3, "f9-sdk": 2},
)
query(
    "docs-ui",
    "what has already been tried to make the list less sluggish",
    "paraphrase",
    "docs-ui",
    {"f9-dead": 3, "f9-decision": 2},
)
query("docs-ui", "how many progress callbacks does the SDK fire", "cross_repo", "upload-sdk", {"f9-sdk": 3})

# F10: open questions and known issues; vague queries lean on them and on dirty files.
item(
    "f10-ui-q",
    "docs-ui",
    "question",
    "Should the library page paginate on the server? :: loadDocuments fetches every document at once",
    ["src/pages/Library.tsx#loadDocuments"],
)
item(
    "f10-ui-bar",
    "docs-ui",
    "known_issue",
    "ProgressBar jumps back to 0 when a chunk is retried :: it derives progress from the last event "
    "instead of bytes confirmed",
    ["src/components/ProgressBar.tsx#ProgressBar"],
    0.8,
)
item(
    "f10-ingest-q",
    "ingest-api",
    "question",
    "Is drain_dead_letters safe to run while the worker is up?",
    ["ingest/queue.py#drain_dead_letters"],
)
item(
    "f10-ingest-issue",
    "ingest-api",
    "known_issue",
    "drain_dead_letters re-enqueues jobs without a retry limit :: a poison PDF loops forever",
    ["ingest/queue.py#drain_dead_letters"],
    0.9,
)
item(
    "f10-thumb-q",
    "thumbnailer",
    "question",
    "Do we still need LoadFonts at start-up if fallbackFont loads lazily?",
    ["internal/render/fonts.go#LoadFonts"],
)
item(
    "f10-billweb-q",
    "billing-web",
    "question",
    "Should ReceiptUpload shrink images before sending them?",
    ["src/checkout/ReceiptUpload.tsx#ReceiptUpload"],
)
item(
    "f10-checkout",
    "billing-web",
    "known_issue",
    "Checkout submits twice on a double click :: submitPayment is not disabled while the request is "
    "in flight",
    ["src/checkout/Checkout.tsx#submitPayment", "src/checkout/Checkout.tsx#Checkout"],
    0.9,
)
item(
    "f10-ledger-q",
    "ledger",
    "question",
    "Should Reverse post into the original period or the current one?",
    ["ledger/posting.go#Reverse"],
)
query(
    "docs-ui",
    "has anyone looked at this?",
    "vague",
    "docs-ui",
    {"f10-ui-bar": 3, "f9-dead": 2, "f10-ui-q": 2},
    "ProgressBar.tsx is modified in the working tree",
)
query(
    "billing-web",
    "anything I should know before I change this?",
    "vague",
    "billing-web",
    {"f10-checkout": 3, "f10-billweb-q": 2},
    "Checkout.tsx is modified in the working tree",
)
query("ingest-api", "what's going on here", "vague", "ingest-api", {"f10-ingest-q": 2, "f10-ingest-issue": 2})
query("thumbnailer", "any open questions?", "vague", "thumbnailer", {"f10-thumb-q": 3})
query("ledger", "is there anything unresolved", "vague", "ledger", {"f10-ledger-q": 3})

# F11: iPhone photos, same symptom across products.
item(
    "f11-sdk",
    "upload-sdk",
    "finding",
    "uploadDocument sends application/octet-stream when the browser gives no type :: HEIC photos "
    "then fail the server's type check",
    ["src/upload/upload.ts#uploadDocument"],
    0.8,
    ran_in="docs-ui",
)
item(
    "f11-ingest",
    "ingest-api",
    "finding",
    "check_mime_type trusts the client's Content-Type :: it never sniffs the bytes, so HEIC arrives "
    "as octet-stream and is rejected",
    ["ingest/validation.py#check_mime_type"],
    0.9,
)
item(
    "f11-billweb",
    "billing-web",
    "finding",
    "ReceiptUpload rejects HEIC photos :: its accept attribute lists only image/jpeg and image/png",
    ["src/checkout/ReceiptUpload.tsx#ReceiptUpload"],
    0.9,
)
item(
    "f11-lab",
    "lab-uploader",
    "finding",
    "iPhone HEIC photos are rejected as an unsupported file type :: upload_file only whitelists jpeg "
    "and png photos; iPhone photo uploads fail",
    ["labup/upload.py#upload_file"],
    0.9,
)
query("docs-ui", "iPhone photos are rejected", "decoy", "upload-sdk", {"f11-sdk": 3, "f11-ingest": 2})
query("billing-web", "iPhone photos are rejected", "decoy", "billing-web", {"f11-billweb": 3})
query(
    "docs-ui",
    "pictures taken on apple phones won't go through",
    "paraphrase",
    "upload-sdk",
    {"f11-sdk": 3, "f11-ingest": 2},
)
query("upload-sdk", "content type sniffing", "cross_repo", "ingest-api", {"f11-ingest": 3, "f11-sdk": 1})

# F12: a poison job and an encrypted PDF.
item(
    "f12-thumb",
    "thumbnailer",
    "finding",
    "handleJob panics on encrypted PDFs :: the panic kills the worker and the job lands in the "
    "dead-letter queue",
    ["internal/worker/worker.go#handleJob"],
    0.9,
)
item(
    "f12-lab",
    "lab-uploader",
    "known_issue",
    "make_thumbnail crashes the worker on encrypted PDF files :: encrypted PDF thumbnails crash",
    ["labup/thumbs.py#make_thumbnail"],
    0.8,
)
query("thumbnailer", "encrypted PDF crashes the worker", "decoy", "thumbnailer", {"f12-thumb": 3})
query(
    "ingest-api",
    "the same job keeps coming back",
    "paraphrase",
    "ingest-api",
    {"f10-ingest-issue": 3, "f12-thumb": 2},
)

# F13: tags lost by a schema upgrade; the answer is three hops from the UI.
item(
    "f13-schema",
    "doc-schema",
    "finding",
    "upgrade_v1 drops the tags field :: v1 documents lose their tags the first time they are read",
    ["docschema/compat.py#upgrade_v1"],
    0.9,
    ran_in="ingest-api",
)
item(
    "f13-ui",
    "docs-ui",
    "dead_end",
    "The tag filter on LibraryPage is not the reason old documents show no tags :: the API already "
    "returns them empty",
    ["src/pages/Library.tsx#LibraryPage"],
    0.8,
)
item(
    "f13-fix",
    "doc-schema",
    "note",
    "upgrade_v1 keeps tags since the fix :: documents upgraded before it stay without tags; a "
    "backfill is needed",
    ["docschema/compat.py#upgrade_v1"],
    0.9,
    phase=1,
)
query(
    "docs-ui",
    "old documents lost their tags",
    "cross_repo",
    "doc-schema",
    {"f13-schema": 3, "f13-fix": 3, "f13-ui": 2},
)
query(
    "ingest-api",
    "do we need a backfill for labels on legacy docs",
    "paraphrase",
    "doc-schema",
    {"f13-fix": 3, "f13-schema": 1},
)

# F14: key rotation seen from billing.
item(
    "f14-auth",
    "auth-core",
    "decision",
    "Signing keys rotate every 24 h :: the previous key stays valid for verification for 48 h",
    ["authcore/keys.py#rotate_keys"],
    1.0,
)
item(
    "f14-billing",
    "billing-api",
    "finding",
    "Webhook signatures fail after key rotation :: billing-api caches the public key for 7 days, "
    "longer than the 48 h overlap",
    ["billing/webhooks.py#verify_signature"],
    0.8,
)
item(
    "f14-lab",
    "lab-uploader",
    "note",
    "Rotate the lab upload token after key rotation :: signature invalid after rotation otherwise",
    ["labup/token.py#refresh_token"],
    0.6,
)
query(
    "billing-api",
    "signature invalid after key rotation",
    "decoy",
    "billing-api",
    {"f14-billing": 3, "f14-auth": 2},
)
query(
    "billing-web",
    "how long does an old signing key keep working",
    "cross_repo",
    "auth-core",
    {"f14-auth": 3, "f14-billing": 1},
)

# F15: double charges.
item(
    "f15-ledger",
    "ledger",
    "finding",
    "PostEntry is not idempotent :: a retried webhook posts the same charge twice; it needs an "
    "idempotency key",
    ["ledger/posting.go#PostEntry"],
    0.9,
    ran_in="billing-api",
)
item(
    "f15-billing",
    "billing-api",
    "finding",
    "retry_webhook retries on any 5xx, including after the ledger already committed",
    ["billing/retry.py#retry_webhook"],
    0.8,
)
item(
    "f15-web",
    "billing-web",
    "finding",
    "withRetry retried POST requests :: a timed-out submitPayment could be sent again",
    ["src/api/client.ts#withRetry"],
    0.8,
)
query(
    "billing-web",
    "customers charged twice",
    "paraphrase",
    "billing-web",
    {"f15-web": 3, "f10-checkout": 3, "f15-billing": 2, "f15-ledger": 2},
)
query("ledger", "duplicate ledger entries", "near_duplicate", "ledger", {"f15-ledger": 3, "f15-billing": 2})

# F16: retries; the same words in four repos of three products.
item(
    "f16-sdk",
    "upload-sdk",
    "decision",
    "retryPolicy retries five times with full jitter :: backoffDelay caps each wait; the UI must not "
    "add its own retries",
    ["src/upload/retry.ts#retryPolicy", "src/upload/retry.ts#backoffDelay"],
    1.0,
    ran_in="docs-ui",
)
item(
    "f16-lab",
    "lab-notebook",
    "decision",
    "retryPolicy retries uploads five times with exponential backoff :: backoffDelay doubles each "
    "retry wait up to a minute",
    ["src/sync/retry.ts#retryPolicy", "src/sync/retry.ts#backoffDelay"],
    0.9,
)
item(
    "f16-billing",
    "billing-api",
    "constraint",
    "retry_webhook must give up after 3 attempts :: Stripe redelivers on its own schedule",
    ["billing/retry.py#retry_webhook"],
    1.0,
)
query("docs-ui", "how many times does an upload retry", "decoy", "upload-sdk", {"f16-sdk": 3})
query("docs-ui", "should the button retry failed uploads itself", "paraphrase", "upload-sdk", {"f16-sdk": 3})

# F17: presigned URLs and storage.
item(
    "f17-ingest",
    "ingest-api",
    "finding",
    "presign_url signs for 15 minutes :: resumable uploads longer than that fail with 403 on the next part",
    ["ingest/storage.py#presign_url"],
    0.9,
    ran_in="upload-sdk",
)
item(
    "f17-sdk",
    "upload-sdk",
    "finding",
    "buildUploadUrl reuses the first presigned URL for every part :: after 15 minutes parts get 403",
    ["src/upload/upload.ts#buildUploadUrl"],
    0.8,
)
query(
    "upload-sdk",
    "403 on later parts of a long upload",
    "cross_repo",
    "upload-sdk",
    {"f17-sdk": 3, "f17-ingest": 3},
)
query(
    "docs-ui",
    "slow uploads die after a quarter of an hour",
    "paraphrase",
    "upload-sdk",
    {"f17-sdk": 3, "f17-ingest": 2},
)

# F18: scopes and discounts (billing-only stories so billing has depth).
item(
    "f18-scope",
    "auth-core",
    "finding",
    "has_scope matches prefixes :: a token with scope 'billing' passes a check for 'billing:admin'",
    ["authcore/scopes.py#has_scope"],
    0.9,
    ran_in="billing-api",
)
item(
    "f18-discount",
    "billing-api",
    "finding",
    "apply_discount applies percentage coupons after tax :: totals are lower than the quote",
    ["billing/invoices.py#apply_discount"],
    0.8,
)
item(
    "f18-final",
    "billing-api",
    "decision",
    "finalize_invoice freezes line items :: later price changes never touch a finalized invoice",
    ["billing/invoices.py#finalize_invoice"],
    1.0,
)
query(
    "billing-api", "non-admin tokens can reach admin endpoints", "paraphrase", "auth-core", {"f18-scope": 3}
)
query("billing-web", "coupon applied after tax", "cross_repo", "billing-api", {"f18-discount": 3})

# F19: receipts PDF and presign in billing vs docflow thumbnails.
item(
    "f19-receipt",
    "billing-api",
    "finding",
    "render_receipt_pdf embeds the full logo on every page :: receipts are 2 MB each",
    ["billing/receipts.py#render_receipt_pdf"],
    0.7,
)
query("billing-web", "why are receipt PDFs so big", "near_duplicate", "billing-api", {"f19-receipt": 3})

# Harder cross-repository queries, added with the coverage ranking: the answer lives one to three
# hops away while the asking repository holds an item that shares one of the query's words.
# F20: phone photo orientation; the UI has a note about thumbnails, the cause is in the renderer.
item(
    "f20-thumb",
    "thumbnailer",
    "finding",
    "RenderPage ignores the EXIF orientation tag :: photos taken in portrait orientation render "
    "rotated by 90 degrees in their thumbnails",
    ["internal/render/render.go#RenderPage"],
    0.8,
    ran_in="docs-ui",
)
item(
    "f20-ui",
    "docs-ui",
    "note",
    "LibraryPage lazy-loads thumbnails :: a row requests its thumbnail only when it scrolls into view",
    ["src/pages/Library.tsx#LibraryPage"],
)
query("docs-ui", "thumbnails of phone photos appear sideways", "cross_repo", "thumbnailer", {"f20-thumb": 3})
query(
    "docs-ui",
    "thumbnail rotation is wrong for portrait shots",
    "paraphrase",
    "thumbnailer",
    {"f20-thumb": 3},
    "inflection: rotation / rotated, thumbnail / thumbnails",
)

# F21: refunds racing their charge; billing-web has a refund note, the cause is two hops away.
item(
    "f21-ledger",
    "ledger",
    "finding",
    "PostEntry rejects a refund whose charge is not posted yet :: the refund webhook can arrive "
    "before the charge entry; PostEntry answers with a conflict and the refund is dropped unless "
    "the caller retries",
    ["ledger/posting.go#PostEntry"],
    0.8,
    ran_in="billing-api",
)
item(
    "f21-web",
    "billing-web",
    "note",
    "The refund button is hidden for charges older than 90 days :: support issues those refunds by hand",
    ["src/checkout/Checkout.tsx#Checkout"],
)
query(
    "billing-web",
    "refunds lost when the webhook comes before the charge",
    "cross_repo",
    "ledger",
    {"f21-ledger": 3},
)
query(
    "billing-api",
    "ledger conflict when a refund arrives early",
    "cross_repo",
    "ledger",
    {"f21-ledger": 3},
    "names the repository",
)

# F22: a fast client clock and token validation; the SDK attaches tokens, auth-core rejects them.
item(
    "f22-auth",
    "auth-core",
    "finding",
    "verify_token rejects tokens whose iat lies in the future :: clients with a fast clock get 401 "
    "right after login; skew_tolerance is applied to exp but not to iat",
    ["authcore/tokens.py#verify_token"],
    0.9,
    ran_in="upload-sdk",
)
item(
    "f22-sdk",
    "upload-sdk",
    "note",
    "attachToken adds the bearer token to every request :: including the login call, where it is empty",
    ["src/auth/session.ts#attachToken"],
)
query(
    "upload-sdk",
    "401 right after login when the laptop clock runs fast",
    "cross_repo",
    "auth-core",
    {"f22-auth": 3, "f8-auth-new": 1},
)
query(
    "docs-ui",
    "does verify_token apply the skew tolerance",
    "cross_repo",
    "auth-core",
    {"f22-auth": 3, "f8-auth-new": 2},
    "names a symbol two hops away",
)
query(
    "ingest-api",
    "what does the thumbnailer do with encrypted PDFs",
    "cross_repo",
    "thumbnailer",
    {"f12-thumb": 3},
    "names the repository; ingest-api has its own PDF known issue",
)

# Paraphrases that differ from the answer's words the way developers' words do: inflections,
# identifiers split into words, the session's summary rather than the item's text.
query(
    "docs-ui",
    "chunk size when the server sends no max chunk",
    "paraphrase",
    "upload-sdk",
    {"f1-sdk": 3},
    "identifier split: chunkSizeFor, max_chunk",
)
query(
    "docs-ui",
    "resume upload never attaches the refreshed token",
    "paraphrase",
    "upload-sdk",
    {"f2-sdk-new": 3},
    "identifier split: resumeUpload, attachToken; inflection",
)
query(
    "ingest-api",
    "thumbnail enqueued twice per upload",
    "paraphrase",
    "ingest-api",
    {"f4-new": 3, "f4-dead": 1},
    "inflection: enqueued / enqueue_thumbnail",
)
query(
    "billing-web",
    "discounts applied after taxes",
    "paraphrase",
    "billing-api",
    {"f18-discount": 3},
    "inflection: discounts, applied, taxes",
)
query(
    "thumbnailer",
    "who debugged the worker crash",
    "paraphrase",
    "thumbnailer",
    {"f12-thumb": 3},
    "the session summary says it, the item only says worker",
)
query(
    "ingest-api",
    "where is the gateway configuration for the request size limit",
    "paraphrase",
    "ingest-api",
    {"f1-ingest": 3, "f1-sdk": 1},
    "abbreviation: configuration / config",
)
query(
    "ledger",
    "reversals do not net to zero",
    "paraphrase",
    "ledger",
    {"f4-ledger": 3},
    "inflection: reversals / reversal, net / nets",
)

# Harder paraphrase and cross-repository queries, written and judged before they were ever run, by
# an engineer changing the ranking method, and not used to tune it (a check that the method holds
# on queries it was not shaped by). Paraphrases share one or two words (or only their stems) with
# the answer, among same-repository items full of the query's common words; in the cross-repository
# ones the answer lives one to three hops away and the asking repository holds a competitor.
BLIND = "written and judged before the ranking change was run on it"
query(
    "ledger",
    "a refund bounced because its charge had not been booked yet",
    "paraphrase",
    "ledger",
    {"f21-ledger": 3},
    BLIND,
)
query(
    "ingest-api",
    "signed links expire too soon for long resumable uploads",
    "paraphrase",
    "ingest-api",
    {"f17-ingest": 3, "f17-sdk": 2},
    BLIND,
)
query(
    "billing-api",
    "coupons are taken off after the tax is added",
    "paraphrase",
    "billing-api",
    {"f18-discount": 3},
    BLIND,
)
query(
    "thumbnailer",
    "documents with hundreds of scanned pages take too long to render",
    "paraphrase",
    "thumbnailer",
    {"f5-thumb": 3},
    BLIND,
)
query(
    "docs-ui",
    "the bar resets to zero whenever a piece is sent again",
    "paraphrase",
    "docs-ui",
    {"f10-ui-bar": 3},
    BLIND,
)
query(
    "billing-web", "the logo makes every receipt huge", "paraphrase", "billing-api", {"f19-receipt": 3}, BLIND
)
query(
    "upload-sdk",
    "the login request goes out with an empty authorization header",
    "paraphrase",
    "upload-sdk",
    {"f22-sdk": 3, "f22-auth": 1},
    BLIND,
)
query(
    "ingest-api",
    "poison messages get redelivered endlessly",
    "paraphrase",
    "ingest-api",
    {"f10-ingest-issue": 3, "f12-thumb": 1},
    BLIND,
)
query(
    "docs-ui",
    "German users see dots where commas belong in file sizes",
    "paraphrase",
    "docs-ui",
    {"f7-bytes": 3},
    BLIND,
)
query("docs-ui", "does the SDK back off between retries", "cross_repo", "upload-sdk", {"f16-sdk": 3}, BLIND)
query(
    "ingest-api",
    "which fonts does the thumbnailer use for Korean text",
    "cross_repo",
    "thumbnailer",
    {"f6-new": 3, "f6-old": 1},
    BLIND,
)
query(
    "billing-web",
    "can the ledger post the same charge twice",
    "cross_repo",
    "ledger",
    {"f15-ledger": 3, "f15-billing": 2},
    BLIND,
)
query(
    "upload-sdk",
    "what clock skew does auth-core tolerate",
    "cross_repo",
    "auth-core",
    {"f8-auth-new": 3, "f22-auth": 2, "f8-auth-old": 1},
    BLIND,
)
query(
    "docs-ui",
    "does ingest-api sniff file contents or trust the declared type",
    "cross_repo",
    "ingest-api",
    {"f11-ingest": 3, "f11-sdk": 1},
    BLIND,
)
query(
    "billing-api",
    "where does the ledger round half to even",
    "cross_repo",
    "ledger",
    {"f4-ledger": 3, "f4-round-new": 2},
    BLIND,
)
query(
    "docs-ui",
    "are old v1 documents upgraded with their tags now",
    "cross_repo",
    "doc-schema",
    {"f13-fix": 3, "f13-schema": 2, "f13-ui": 1},
    BLIND,
)

# Symbol-only and path-only queries; judged automatically against every citing item
# (scenario items keep their hand grade if higher).
SYMBOL_QUERIES = [
    ("docs-ui", "uploadDocument", "upload-sdk", "src/upload/upload.ts", {"f9-sdk": 3, "f11-sdk": 3}),
    ("ingest-api", "RenderPage", "thumbnailer", "internal/render/render.go", {"f1-thumb": 3}),
    ("billing-api", "refresh_token", "auth-core", "authcore/tokens.py", {"f2-auth": 3}),
    ("docs-ui", "retryPolicy", "upload-sdk", "src/upload/retry.ts", {"f16-sdk": 3}),
    (
        "billing-web",
        "verify_signature",
        "billing-api",
        "billing/webhooks.py",
        {"f8-billing": 3, "f14-billing": 3},
    ),
    ("billing-api", "Reconcile", "ledger", "ledger/balance.go", {"f8-ledger": 3}),
    ("upload-sdk", "handle_chunk", "ingest-api", "ingest/handlers.py", {"f1-ingest": 3}),
    ("billing-web", "lookup_price", "billing-api", "billing/pricing.py", {"f3-billing": 3}),
    ("ingest-api", "parse_manifest", "doc-schema", "docschema/manifest.py", {"f3-schema": 3}),
    ("thumbnailer", "fallbackFont", "thumbnailer", "internal/render/fonts.go", {"f6-new": 3, "f6-old": 2}),
]
PATH_QUERIES = [
    ("docs-ui", "src/upload/chunker.ts", "upload-sdk", {"f1-sdk": 3}),
    ("upload-sdk", "ingest/validation.py", "ingest-api", {"f11-ingest": 3}),
    ("ingest-api", "internal/render/fonts.go", "thumbnailer", {"f6-new": 3}),
    ("billing-web", "billing/webhooks.py", "billing-api", {"f8-billing": 3, "f14-billing": 3}),
    ("upload-sdk", "authcore/clock.py", "auth-core", {"f8-auth-new": 3}),
    ("billing-api", "ledger/posting.go", "ledger", {"f15-ledger": 3}),
]

SESSION_SUMMARIES = {
    "f1": "traced the 413 on large files",
    "f2": "looked into failures after session expiry",
    "f3": "followed a None coming out of a lookup",
    "f4": "chased duplicate work and rounding",
    "f5": "profiled a 30 s timeout",
    "f6": "checked glyph rendering in thumbnails",
    "f7": "reviewed number formatting",
    "f8": "investigated clock drift",
    "f9": "worked on progress reporting",
    "f10": "triage pass",
    "f11": "looked at rejected photo uploads",
    "f12": "debugged a worker crash",
    "f13": "followed missing tags",
    "f14": "checked key rotation",
    "f15": "looked at double charges",
    "f16": "reviewed retry behaviour",
    "f17": "debugged long uploads",
    "f18": "security and pricing review",
    "f19": "receipt size check",
    "f20": "looked at sideways thumbnails",
    "f21": "traced a missing refund",
    "f22": "debugged a 401 after login",
}

# ----------------------------------------------------------------------------- background items

BACKGROUND_TEMPLATES = [
    ("note", "{sym} has no test for empty input :: an empty {area} payload reaches it from the batch path"),
    ("note", "{sym} logs the whole {area} payload at debug level :: keep debug logging off in production"),
    ("constraint", "{sym} is imported by name from other modules :: renaming it needs a coordinated release"),
    (
        "note",
        "{sym} allocates a fresh buffer per call :: fine at today's {area} volume, revisit above {n}k a minute",
    ),
    ("finding", "{sym} holds no shared state :: reviewed for thread safety during the {area} refactor"),
    ("note", "The comment above {sym} is out of date :: it still describes the old {area} flow"),
    ("finding", "{sym} shows up in the CPU profile at about {n}% of {area} request time"),
    ("decision", "Keep {sym} synchronous :: an async version complicated {area} error handling for no gain"),
    ("note", "{sym} sits behind a feature flag for the new {area} behaviour :: the flag is {flag}"),
    ("constraint", "Do not call {sym} with a lock held :: it may block on {area} I/O"),
    ("note", "{sym} was part of the {area} audit :: nothing to report"),
    (
        "decision",
        "{sym} returns plain data rather than class instances :: simpler to serialise for the {area} cache",
    ),
    ("finding", "{sym} is covered only by integration tests :: unit tests mock it away"),
    ("note", "Type hints on {sym} are incomplete :: the options argument is untyped"),
    ("question", "Can {sym} be merged with its neighbour in {file}?"),
    ("dead_end", "Inlining {sym} did not speed up the {area} path :: measured no difference over {n} runs"),
    ("note", "{sym} validates its options eagerly :: bad {area} options fail at start-up, not per request"),
    ("finding", "{sym} is deterministic for a given input :: {area} results can be cached by payload hash"),
]
PER_SYMBOL = 6
AGENTS = ["claude-code", "codex", "cursor", "cli"]


def background_items(rng):
    out = []
    for repo, (_lang, _ws, area, files) in REPOS.items():
        for path, symbols in files.items():
            for sym in symbols:
                for kind, template in rng.sample(BACKGROUND_TEMPLATES, PER_SYMBOL):
                    text = template.format(
                        sym=sym, area=area, file=path, n=rng.randint(3, 40), flag=f"{area}_{sym.lower()}_v2"
                    )
                    claim, _, detail = text.partition(" :: ")
                    conf = None if kind in ("question", "note") else round(rng.uniform(0.5, 1.0), 1)
                    out.append(
                        {
                            "repo": repo,
                            "kind": kind,
                            "claim": claim,
                            "detail": detail or None,
                            "files": [f"{path}#{sym}"],
                            "confidence": conf,
                            "ran_in": repo,
                            "phase": 1 if rng.random() < 0.15 else 0,
                            "superseded_by": None,
                            "retracted": False,
                        }
                    )
    return out


# ----------------------------------------------------------------------------- assembly


def _anchors(ev):
    """[(repo, path, symbol)] cited by an evidence record."""
    out = []
    for ref in ev["files"]:
        repo = ev["repo"]
        if ":" in ref.split("#")[0]:
            repo, ref = ref.split(":", 1)
        path, _, symbol = ref.partition("#")
        out.append((repo, path, symbol or None))
    return out


def expected_freshness(ev, changed, moved):
    anchors = _anchors(ev)
    dirty = {(r, p, s) for r, p, s in DIRTY}
    for a in anchors:
        if a in dirty or (ev["phase"] == 0 and a in changed):
            return "stale"
    if not anchors and ev["phase"] == 0 and ev["repo"] in moved:
        return "possibly_stale"
    return "current"


def build():
    rng = random.Random(SEED)
    repos = build_repos()
    changed = changed_after_capture()
    moved = {repo for repo, _m, _c in HISTORY}

    evidence = []
    for it in ITEMS:
        ev = dict(it)
        ev["id"] = ev.pop("key")
        ev["_family"] = ev["id"].split("-")[0]
        evidence.append(ev)
    for n, ev in enumerate(background_items(rng), 1):
        ev["id"] = f"bg-{n:04d}"
        ev["_family"] = "bg"
        evidence.append(ev)

    sessions = {}
    for ev in evidence:
        sid = "s-{}-{}-{}".format(ev["_family"], ev["ran_in"], ev["phase"])
        if sid not in sessions:
            summary = SESSION_SUMMARIES.get(
                ev["_family"], "routine notes while working in {}".format(ev["ran_in"])
            )
            sessions[sid] = {
                "id": sid,
                "repo": ev["ran_in"],
                "phase": ev["phase"],
                "agent": AGENTS[len(sessions) % len(AGENTS)],
                "summary": summary,
            }
        ev["session"] = sid
    session_list = list(sessions.values())
    rng.shuffle(session_list)
    session_list.sort(key=lambda s: s["phase"])  # stable: shuffled within each phase
    order = {s["id"]: i for i, s in enumerate(session_list)}
    evidence.sort(key=lambda e: (order[e["session"]], e["id"]))

    by_id = {e["id"]: e for e in evidence}
    out_evidence = []
    for ev in evidence:
        status = "active"
        if ev["superseded_by"]:
            status = "superseded"
        elif ev["retracted"]:
            status = "retracted"
        out_evidence.append(
            {
                "id": ev["id"],
                "session": ev["session"],
                "repo": ev["repo"],
                "kind": ev["kind"],
                "claim": ev["claim"],
                "detail": ev["detail"],
                "files": ev["files"],
                "confidence": ev["confidence"],
                "status": status,
                "superseded_by": ev["superseded_by"],
                "expect_freshness": expected_freshness(ev, changed, moved),
            }
        )

    queries = []
    for q in QUERIES:
        queries.append(
            {
                "from": q["from"],
                "text": q["text"],
                "category": q["category"],
                "needs": q["needs"],
                "judgements": dict(q["judged"]),
                "note": q["note"],
            }
        )
    # A vague query asked where a file has uncommitted edits is also answered by what is known
    # about that file (the design's fallback): every active item citing it counts, grade 1.
    for q in queries:
        if q["category"] != "vague":
            continue
        for repo, path, _sym in DIRTY:
            if repo != q["from"]:
                continue
            for ev in out_evidence:
                cites = any(a[0] == repo and a[1] == path for a in _anchors(ev))
                if ev["status"] == "active" and cites and ev["id"] not in q["judgements"]:
                    q["judgements"][ev["id"]] = 1
    for frm, sym, needs, path, hand in SYMBOL_QUERIES:
        judged = {}
        for ev in out_evidence:
            if ev["status"] == "active" and (needs, path, sym) in _anchors(ev):
                judged[ev["id"]] = 1 if ev["id"].startswith("bg-") else 2
        for k, g in hand.items():
            judged[k] = max(g, judged.get(k, 0))
        queries.append(
            {
                "from": frm,
                "text": sym,
                "category": "symbol",
                "needs": needs,
                "judgements": judged,
                "note": f"every active item citing {needs}:{path}#{sym}",
            }
        )
    for frm, path, needs, hand in PATH_QUERIES:
        judged = {}
        for ev in out_evidence:
            if ev["status"] == "active" and any(a[0] == needs and a[1] == path for a in _anchors(ev)):
                judged[ev["id"]] = 1 if ev["id"].startswith("bg-") else 2
        for k, g in hand.items():
            judged[k] = max(g, judged.get(k, 0))
        queries.append(
            {
                "from": frm,
                "text": path,
                "category": "path",
                "needs": needs,
                "judgements": judged,
                "note": f"every active item citing {needs}:{path}",
            }
        )
    for n, q in enumerate(queries, 1):
        q["id"] = f"q{n:02d}"
        for k in q["judgements"]:
            assert k in by_id, (q["id"], k)
            assert by_id[k]["superseded_by"] is None, (q["id"], k)

    corpus = {
        "format": FORMAT,
        "name": "wctx-hard",
        "description": "Two products (docflow, billing) sharing auth-core, plus an unrelated decoy "
        f"workspace (labkit). Generated by eval/build_corpus.py (seed {SEED}); scenario "
        "items, queries and judgements written by hand.",
        "workspaces": WORKSPACES,
        "repos": repos,
        "relations": [{"from": a, "kind": k, "to": b, "note": n} for a, k, b, n in RELATIONS],
        "sessions": session_list,
    }
    return corpus, out_evidence, [dict(q, judgements=dict(sorted(q["judgements"].items()))) for q in queries]


def _key_order(q):
    return {k: q[k] for k in ("id", "from", "text", "category", "needs", "judgements", "note")}


def main():
    corpus, evidence, queries = build()
    OUT.mkdir(exist_ok=True)
    (OUT / "corpus.json").write_text(json.dumps(corpus, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    with open(OUT / "evidence.jsonl", "w", encoding="utf-8") as fh:
        for ev in evidence:
            fh.write(json.dumps(ev, sort_keys=False) + "\n")
    with open(OUT / "queries.jsonl", "w", encoding="utf-8") as fh:
        for q in queries:
            fh.write(json.dumps(_key_order(q), sort_keys=False) + "\n")
    cats = {}
    for q in queries:
        cats[q["category"]] = cats.get(q["category"], 0) + 1
    print(
        f"wrote {OUT}: {len(corpus['repos'])} repos, {len(corpus['sessions'])} sessions, "
        f"{len(evidence)} evidence items, {len(queries)} queries {dict(sorted(cats.items()))}"
    )


if __name__ == "__main__":
    main()
