#!/usr/bin/env python3
"""wctx: workspace memory for coding agents whose product spans several git repositories.

A session scoped to one repository often learns something about another one. wctx keeps that
learning as structured evidence attached to the repository it is *about*, stamped with that
repository's commit and file contents, and serves it to later sessions in any related repository,
with reasons for every result and a freshness verdict that says ``unknown`` rather than guess.

Standard library only (Python 3.8+). One module: store, git, freshness, search, session adapters
and CLI; ``wctx_mcp.py`` is the MCP server shell over the same service functions.

License: MIT.
"""

from __future__ import annotations

import bisect
import collections
import functools
import json
import math
import os
import re
import sys
import time

__version__ = "0.1.0"
__license__ = "MIT"

__all__ = [
    "__version__",
    "WctxError",
    "UsageError",
    "NotFoundError",
    "Store",
    "open_store",
    "register_repo",
    "list_repos",
    "remove_repo",
    "relate",
    "unrelate",
    "list_relations",
    "list_workspaces",
    "show_workspace",
    "resolve_repo",
    "split_claim",
    "capture",
    "search",
    "verify",
    "get_evidence",
    "get_session",
    "list_sessions",
    "related_repositories",
    "workspace_overview",
    "retract",
    "supersede",
    "confirm",
    "find_duplicate",
    "redact_secrets",
    "neutralise",
    "terminal_text",
    "served_text",
    "clip_marked",
    "parse_transcript",
    "import_transcript",
    "import_transcripts",
    "session_activity",
    "find_running_session",
    "install_hook",
    "uninstall_hook",
    "locate_symbol",
    "run_retrieval_eval",
    "main",
    # What the MCP server (wctx_mcp.py) takes besides: the limits and enumerations its tool schemas
    # state, the text shaping its replies share with the terminal, the client installers' helpers.
    "EVIDENCE_KINDS",
    "RELATION_KINDS",
    "STATUSES",
    "VERDICTS",
    "SEARCH_RESULT_FIELDS",
    "MAX_CLAIM_CHARS",
    "MAX_DETAIL_CHARS",
    "MAX_SUMMARY_CHARS",
    "MAX_SYMPTOM_CHARS",
    "MAX_QUERY_TERMS",
    "MAX_PHRASINGS",
    "UNTRUSTED_NOTICE",
    "shown_text",
    "shown_tree",
    "may_need_neutralising",
    "clip_words",
    "cut_reason",
    "short_recorded_by",
    "fileless_summary",
    "held_back_text",
    "search_phrasings",
    "WARM_GIT_VIEWS",
    "MCP_SERVED_TEXTS",
    "MCP_SERVED_TEXTS_KEPT",
    "UnreadableFile",
    "read_repo_file",
    "wctx_command_path",
]
