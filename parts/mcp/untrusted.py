from __future__ import annotations

from .service import CORE

# ----------------------------------------------------------------------------------------------
# Untrusted text: every string through wctx's read boundary (served_text), every list capped
# ----------------------------------------------------------------------------------------------


def serve_tree(value, text_limit, list_limit, path, notes):
    """Walk a service result: neutralise and clip every string, cap every list.

    Capped lists are reported in ``notes`` ("recent_sessions: 12 more not shown") rather than
    with a marker inside the list, so every list keeps one item type.
    """
    if isinstance(value, str):
        return CORE.served_text(value, text_limit, CORE.clip_marked)[0]
    if isinstance(value, dict):
        return {k: serve_tree(v, text_limit, list_limit, path + (str(k),), notes) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = list(value)
        if len(items) > list_limit:
            notes.append(f"{'.'.join(path) or 'list'}: {len(items) - list_limit} more not shown")
            items = items[:list_limit]
        return [serve_tree(v, text_limit, list_limit, path, notes) for v in items]
    return value
