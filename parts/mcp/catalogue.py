from __future__ import annotations

from .protocol import (
    ANNOTATIONS_SINCE,
    HANDSHAKE_VERSIONS,
    MODERN_VERSIONS,
    RECORD_MAX_ITEMS,
    SEARCH_MAX_LIMIT,
    SESSION_MAX_LIMIT,
    STRUCTURED_SINCE,
    VERIFY_MAX_IDS,
)
from .service import CORE

# ----------------------------------------------------------------------------------------------
# Tool catalogue (fixed order: orient and check, search, drill down, write)
# ----------------------------------------------------------------------------------------------

# What a client puts before the model on every request because wctx is installed is the tools'
# names, descriptions and input schemas, the instructions, and the SessionStart briefing (at most
# 1,500 bytes): 5,000 bytes at most (bench/client_requests.py measures it in Claude Code, Codex and
# Gemini CLI). Each tool costs its definition on every request, and 292 bytes more in Gemini CLI,
# which adds a parameter of its own to each: so a job another tool's argument covers is not a tool.
#
# Input schemas say what a name does not: a description only where the name leaves a doubt, no
# enum or default repeated in prose. Bounds that only this server needs are checked here and left
# out of what clients are shown (advertised_schema): every client puts the schemas before the
# model on every request, and no agent needs them to call a tool well.
_REPO_ARG = {"type": "string", "minLength": 1, "maxLength": 200}
_ID_ARG = {"type": "string", "minLength": 3, "maxLength": 64}
_CURSOR_ARG = {"type": "string", "maxLength": 100}
_IDS_ARG = {"type": "array", "items": _ID_ARG, "minItems": 1, "maxItems": VERIFY_MAX_IDS}
_KIND_SCHEMA = {"type": "string", "enum": list(CORE.EVIDENCE_KINDS)}


def _field_schema(name, json_type):
    if name == "kind":
        return _KIND_SCHEMA
    if name == "status":
        return {"type": "string", "enum": list(CORE.STATUSES)}
    if json_type == "array":
        return {"type": "array", "items": {"type": "string"}}
    return {"type": json_type}


# The fields of a served search/session/overview entry (replies.evidence_entry): compact ones carry
# id, kind, repo, claim, verdict and one reason; detail: true adds the rest. Nothing empty is sent.
SUMMARY_FIELDS = tuple(name for name, _ in CORE.SEARCH_RESULT_FIELDS if name not in ("freshness",))
_EVIDENCE_SUMMARY_SCHEMA = {
    "type": "object",
    "properties": dict(
        [(name, _field_schema(name, t)) for name, t in CORE.SEARCH_RESULT_FIELDS if name in SUMMARY_FIELDS]
        + [
            ("verdict", {"type": "string", "enum": list(CORE.VERDICTS)}),
            ("freshness", {"type": "array", "items": {"type": "string"}, "description": "Why the verdict."}),
            ("files_not_shown", {"type": "integer"}),
            ("neutralised", {"type": "boolean"}),
        ]
    ),
    "required": ["id", "kind", "claim"],
}
_DETAIL_ARG = {"type": "boolean"}  # the instructions say what detail gives, once for every tool
_TEXTS_ARG = {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 1000}, "maxItems": 50}
_CURSOR = {"type": "string", "description": "Pass it back as cursor for the rest."}
_NOTICE = {"type": "string", "description": "How to treat the returned text."}
_NOTES = {
    "type": "array",
    "items": {"type": "string"},
    "description": "Present when something was cut to keep the result small, saying what.",
}

TOOLS = [
    {
        "name": "workspace_overview",
        "title": "Workspace overview",
        "description": "Where am I: related repos, sessions, open questions, key findings; with verify: "
        "true or ids, whether cited code changed.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "repo": _REPO_ARG,
                "detail": _DETAIL_ARG,
                "verify": {"type": "boolean"},
                "ids": _IDS_ARG,
                "cursor": _CURSOR_ARG,
                "about": dict(_REPO_ARG, description="Only items about this repo"),
                "all": {"type": "boolean", "description": "Also items citing no file"},
            },
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "repo": {"type": ["string", "null"], "description": "The current repository."},
                "path": {"type": "string"},
                "workspaces": {"type": "array", "items": {"type": "string"}},
                "related": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Each related repository, how it relates and in which direction.",
                },
                "relations": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "repo": {"type": "string"},
                            "kind": {"type": "string", "enum": list(CORE.RELATION_KINDS)},
                            "direction": {"type": "string", "enum": ["outgoing", "incoming"]},
                            "label": {"type": "string"},
                            "note": {"type": "string"},
                        },
                    },
                },
                "reachable": {"type": "array", "items": {"type": "object"}},
                "repos": {"type": "array", "items": {"type": ["object", "string"]}},
                "evidence_counts": {"type": "object"},
                "recent_sessions": {"type": "array", "items": {"type": "object"}},
                "open_questions": {"type": "array", "items": _EVIDENCE_SUMMARY_SCHEMA},
                "key_findings": {"type": "array", "items": _EVIDENCE_SUMMARY_SCHEMA},
                "hint": {"type": "string"},
                # With verify or ids, the freshness audit instead of the overview:
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string"},
                            "verdict": {"type": "string", "enum": list(CORE.VERDICTS)},
                            "reasons": {"type": "array", "items": {"type": "string"}},
                            "anchors": {"type": "array", "items": {"type": "object"}},
                        },
                        "required": ["id", "verdict"],
                    },
                },
                "summary": {"type": "object"},
                "total": {"type": "integer"},
                "next_cursor": _CURSOR,
                "fileless": {"type": "array", "items": {"type": "string"}},
                "notice": _NOTICE,
                "truncated": _NOTES,
            },
            "required": ["notice"],
        },
        "readOnly": True,
    },
    {
        "name": "search_evidence",
        "title": "Search recorded evidence",
        "description": "Search what earlier sessions recorded, here and in related repos.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "maxLength": 2000},
                "phrasings": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1, "maxLength": 2000},
                    "maxItems": CORE.MAX_PHRASINGS - 1,
                    "description": "Other wordings",
                },
                "repo": _REPO_ARG,
                "kinds": {"type": "array", "items": _KIND_SCHEMA, "maxItems": len(CORE.EVIDENCE_KINDS)},
                "files": dict(_TEXTS_ARG, description="Files you work on"),
                "limit": {"type": "integer", "minimum": 1, "maximum": SEARCH_MAX_LIMIT},
                "cursor": _CURSOR_ARG,
                "scope": {"type": "string", "enum": ["workspace", "all"]},
                "include_inactive": {"type": "boolean"},
                "all_matches": {"type": "boolean"},
                "author": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 200,
                    "description": "me, or a name",
                },
                "detail": _DETAIL_ARG,
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "results": {"type": "array", "items": _EVIDENCE_SUMMARY_SCHEMA},
                "candidates": {"type": "integer", "description": "How many items match the query words."},
                "candidates_exact": {"type": "boolean"},
                "held_back": {
                    "type": "integer",
                    "description": "Weak matches left out (all_matches gives them).",
                },
                "query_terms": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "The query words used: the rarest MAX of a longer query.".replace(
                        "MAX", str(CORE.MAX_QUERY_TERMS)
                    ),
                },
                "query_terms_total": {"type": "integer"},
                "searched": {"type": "array", "items": {"type": "string"}},
                "mode": {"type": "string", "description": "fallback when no query word matched."},
                "phrasings": {
                    "type": "array",
                    "items": {"type": "object"},
                    "description": "With phrasings: each one's query words and whether its results were "
                    "fused (false: it matched nothing).",
                },
                "ms": {"type": "number"},
                "next_cursor": _CURSOR,
                "hint": {"type": "string"},
                "notice": _NOTICE,
                "truncated": _NOTES,
            },
            "required": ["results", "notice"],
        },
        "readOnly": True,
    },
    {
        "name": "get_evidence",
        "title": "Get evidence by id",
        "description": "An item (ev-) in full, or what a session (ses-) recorded.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "id": _ID_ARG,
                "limit": {"type": "integer", "minimum": 1, "maximum": SESSION_MAX_LIMIT},
                "cursor": _CURSOR_ARG,
                "detail": _DETAIL_ARG,
            },
            "required": ["id"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "evidence": {
                    "type": ["object", "array"],
                    "items": _EVIDENCE_SUMMARY_SCHEMA,
                    "description": "The item; for a session id, a page of its items.",
                },
                "session": {"type": "object"},
                "total": {"type": "integer"},
                "next_cursor": _CURSOR,
                "notice": _NOTICE,
                "truncated": _NOTES,
            },
            "required": ["evidence", "notice"],
        },
        "readOnly": True,
    },
    {
        "name": "record_evidence",
        "title": "Record what this session learned",
        "description": "Record what you learned and its symptom, in the repo it is about; confirm: ids you "
        "re-checked.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "items": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": RECORD_MAX_ITEMS,
                    "items": {
                        "type": "object",
                        "properties": {
                            "kind": _KIND_SCHEMA,
                            "claim": {"type": "string", "minLength": 1, "maxLength": CORE.MAX_CLAIM_CHARS},
                            "detail": {"type": "string", "maxLength": CORE.MAX_DETAIL_CHARS},
                            "symptom": {"type": "string", "maxLength": CORE.MAX_SYMPTOM_CHARS},
                            "repo": _REPO_ARG,
                            "files": _TEXTS_ARG,
                            "depends_on": dict(_TEXTS_ARG, description="repo:path#symbol relied on"),
                            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                        },
                        "required": ["kind", "claim"],
                        "additionalProperties": False,
                    },
                },
                "summary": {"type": "string", "maxLength": CORE.MAX_SUMMARY_CHARS},
                "session_id": _ID_ARG,
                "confirm": _IDS_ARG,
                "note": {"type": "string", "maxLength": CORE.MAX_SUMMARY_CHARS},
            },
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "session": {"type": "string"},
                "recorded": {"type": "array", "items": {"type": "object"}},
                "duplicates": {
                    "type": "array",
                    "items": {"type": "object"},
                    "description": "Items that repeat one already recorded: the existing id and a message "
                    "saying what happened.",
                },
                "duplicates_skipped": {"type": "integer"},
                "confirmed": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string"},
                            "was": {"type": "string", "description": "The verdict before confirming."},
                            "commits": {
                                "type": "object",
                                "description": "Repository -> commit re-stamped at.",
                            },
                        },
                    },
                },
                "message": {"type": "string"},
                "warnings": {"type": "array", "items": {"type": "string"}},
                "truncated": _NOTES,
            },
            "required": ["recorded"],
        },
        "readOnly": False,
    },
]
TOOLS_BY_NAME = {tool["name"]: tool for tool in TOOLS}

# Tools an older catalogue had, and the call that does their job now (every tool a client lists
# costs bytes on each of its requests, so a job another tool's argument covers is not a tool).
RETIRED_TOOLS = {
    "get_related_repositories": "workspace_overview with detail: true (and repo)",
    "get_session_evidence": "get_evidence with the session id as id",
    "confirm_evidence": "record_evidence with the ids as confirm",
    "verify_freshness": "workspace_overview with ids (or verify: true for the repository's items)",
}


def retired_tool_message(name):
    """The one-line answer to a call of a retired tool, naming the call that replaced it."""
    return "%s is no longer a tool; call %s" % (name, RETIRED_TOOLS[name])


# What the server checks but a model needs not read: length and count bounds, a least limit of 1,
# and additionalProperties (an unknown argument is refused with the list of the allowed ones).
_SERVER_ONLY = frozenset(("minLength", "maxLength", "minItems", "maxItems", "additionalProperties"))


# Arguments a model learns from the replies that need them, not from the catalogue: `cursor` (a
# reply with more says next_cursor), and the audit's narrowing (`about`, `all`: docs/mcp.md).
_UNLISTED_ARGUMENTS = frozenset(("cursor", "about", "all"))


def advertised_schema(schema):
    """An input schema as clients are shown it, without what only this server needs (it checks
    every call against the whole schema and says which rule a value broke)."""
    if isinstance(schema, dict):
        return {
            k: advertised_schema(
                {n: p for n, p in v.items() if n not in _UNLISTED_ARGUMENTS} if k == "properties" else v
            )
            for k, v in schema.items()
            if k not in _SERVER_ONLY and not (k == "minimum" and v == 1 and schema.get("type") == "integer")
        }
    if isinstance(schema, list):
        return [advertised_schema(v) for v in schema]
    return schema


_ADVERTISED_INPUT = {tool["name"]: advertised_schema(tool["inputSchema"]) for tool in TOOLS}
# The kinds are listed once, in record_evidence's `kind`; search_evidence's `kinds` names them.
_ADVERTISED_INPUT["search_evidence"]["properties"]["kinds"]["items"] = {"type": "string"}


def _plain_properties(schema):
    """(required names, {name: (type, least, most)}) of an object schema's properties that
    ``quick_arguments`` checks: strings without an enum (least and most characters), integers
    (least and most value) and booleans."""
    plain = {}
    for name, prop in schema["properties"].items():
        kind = prop.get("type")
        if "enum" in prop or kind not in ("string", "integer", "boolean"):
            continue
        if kind == "string":
            plain[name] = (str, prop.get("minLength", 0), prop.get("maxLength", float("inf")))
        else:
            plain[name] = (int if kind == "integer" else bool, prop.get("minimum"), prop.get("maximum"))
    return tuple(schema.get("required", ())), plain


_PLAIN_ARGUMENTS = {name: _plain_properties(tool["inputSchema"]) for name, tool in TOOLS_BY_NAME.items()}


def quick_arguments(name, args):
    """``args`` when check_arguments would accept them as they are (the usual call: a few plain
    strings, integers and booleans within their bounds), else None: check_arguments decides."""
    required, plain = _PLAIN_ARGUMENTS[name]
    for key in required:
        if key not in args:
            return None
    for key, value in args.items():
        spec = plain.get(key)
        if spec is None or type(value) is not spec[0]:
            return None
        least, most = spec[1], spec[2]
        if spec[0] is str:
            # ASCII text holds no lone surrogate; NUL is refused by check_arguments.
            if not (least <= len(value) <= most and value.isascii()) or "\x00" in value:
                return None
        elif (least is not None and value < least) or (most is not None and value > most):
            return None
    return args


def _version_at_least(version, minimum):
    order = HANDSHAKE_VERSIONS + MODERN_VERSIONS
    return version in order and order.index(version) >= order.index(minimum)


def tool_listing(version, structured=True):
    """The tools as a client negotiating ``version`` may see them (older revisions get fewer fields;
    without ``structured``, no outputSchema: the server then answers with the text block alone)."""
    listing = []
    for tool in TOOLS:
        name = tool["name"]
        entry = {"name": name, "description": tool["description"], "inputSchema": _ADVERTISED_INPUT[name]}
        if _version_at_least(version, STRUCTURED_SINCE):
            entry["title"] = tool["title"]
            if structured:
                entry["outputSchema"] = tool["outputSchema"]
        if _version_at_least(version, ANNOTATIONS_SINCE):
            entry["annotations"] = {
                "title": tool["title"],
                "readOnlyHint": tool["readOnly"],
                "destructiveHint": False,
                "idempotentHint": tool["readOnly"],
                "openWorldHint": False,
            }
        listing.append(entry)
    return listing
