from __future__ import annotations

from .protocol import neutralise
from .service import CORE

# ----------------------------------------------------------------------------------------------
# Untrusted text: wctx.neutralise is the one implementation (the CLI's text output uses it too)
# ----------------------------------------------------------------------------------------------


def clip(text, limit):
    """Cut text to ``limit`` characters with an explicit marker saying how much is missing;
    redacted whole first (a secret cut in two is no longer one the rules know)."""
    if text is None or len(text) <= limit:
        return text
    text = CORE.shown_text(text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]} …[truncated: {len(text) - limit} more characters]"


def served_text(text, limit):
    """Neutralise then clip one free-text field. Returns (text, changed)."""
    if not isinstance(text, str):
        return text, False
    text, changed = neutralise(text)
    return clip(text, limit), changed


def serve_tree(value, text_limit, list_limit, path, notes):
    """Walk a service result: neutralise and clip every string, cap every list.

    Capped lists are reported in ``notes`` ("recent_sessions: 12 more not shown") rather than
    with a marker inside the list, so every list keeps one item type.
    """
    if isinstance(value, str):
        text, _ = served_text(value, text_limit)
        return text
    if isinstance(value, dict):
        return {k: serve_tree(v, text_limit, list_limit, path + (str(k),), notes) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = list(value)
        if len(items) > list_limit:
            notes.append(f"{'.'.join(path) or 'list'}: {len(items) - list_limit} more not shown")
            items = items[:list_limit]
        return [serve_tree(v, text_limit, list_limit, path, notes) for v in items]
    return value
