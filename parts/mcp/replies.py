from __future__ import annotations

from .protocol import (
    COMPACT_CLAIM_CHARS,
    COMPACT_REASON_CHARS,
    DETAIL_BUDGET_BYTES,
    REPLY_BUDGET_BYTES,
    dumps,
)
from .service import CORE

clip_words = CORE.clip_words  # a claim or reason cut at a word, marked "…" (one home, in wctx)
shown_text, shown_tree = CORE.shown_text, CORE.shown_tree  # secrets redacted, as the CLI shows text
cut_reason = CORE.cut_reason  # a reason cut without breaking the commits it names
served_text, clip_marked = CORE.served_text, CORE.clip_marked  # the read boundary, in wctx

# ----------------------------------------------------------------------------------------------
# Reply shapes: what one tool call puts before a model, in its two forms, within a budget
# ----------------------------------------------------------------------------------------------
# A tool result has a structured form (structuredContent) and a text block. Which one reaches the
# model depends on the client: Claude Code and Codex pass on structuredContent as compact JSON when
# it is present, Gemini CLI passes on the text block only, and a client of a revision before
# 2025-06-18 gets the text alone. Both forms therefore carry the same facts, and neither copies
# the other: the text block is a line per entry, not the JSON again. Each form is held to the
# tool's byte budget (REPLY_BUDGET_BYTES) on its own.
#
# A compact entry (the default in every list) is what an agent needs to decide whether to open an
# item: its id, kind, repository, claim (cut at COMPACT_CLAIM_CHARS, marked "…"), freshness
# verdict and its strongest reason (the first one explain gives). Nothing empty is sent and
# nothing twice. ``detail: true`` adds the rest (detail, files, session, dates, confidence, every
# reason, freshness reasons); get_evidence has an item's anchors and provenance.


class Reply:
    """One tool call's answer: ``payload`` (structuredContent), ``json`` (its compact JSON, as
    written on the wire) and ``text`` (the text block, ``render`` of the payload as shown)."""

    __slots__ = ("payload", "json", "text")

    def __init__(self, payload, render):
        # Shown as the CLI shows it: a warning quoting a symbol, an error or a reason quoting a
        # name or a query word carries no secret (stored text already passed the same rules).
        # The text block is made from the redacted payload, so it needs no pass of its own.
        self.payload = shown_tree(payload)
        self.json = dumps(self.payload)
        self.text = render(self.payload)

    def size(self, text_only=False):
        """Bytes of what a model reads: the text block when it is all that is sent (``wctx mcp
        --text-only``), else the larger form, whichever form its client passes on."""
        if text_only:
            return utf8_len(self.text)
        return max(utf8_len(self.json), utf8_len(self.text))


def utf8_len(text):
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def budget_of(tool, detail=False):
    return DETAIL_BUDGET_BYTES if detail else REPLY_BUDGET_BYTES[tool]


# -- serving stored text ----------------------------------------------------------------------------

# (text, limit, cut) -> (served text, neutralised): the same claims and reasons come back search
# after search. Declared with every process-wide cache in wctx's caches part (clear_caches).
_SERVED = CORE.MCP_SERVED_TEXTS
_SERVED_MAX = CORE.MCP_SERVED_TEXTS_KEPT


def served_cut(text, limit, cut=clip_words):
    """Stored text as an agent may read it: through the read boundary (CORE.served_text),
    remembered. Returns (text, whether neutralising changed it)."""
    key = (text, limit, cut)
    hit = _SERVED.get(key)
    if hit is None:
        hit = served_text(text, limit, cut)
        if len(_SERVED) >= _SERVED_MAX:
            _SERVED.clear()
        _SERVED[key] = hit
    return hit


# -- list entries ---------------------------------------------------------------------------------

DETAIL_TEXT_CHARS = 600  # claim and detail of a detailed entry
DETAIL_REASON_CHARS = 300
DETAIL_FILES = 20
DETAIL_REASONS = 12
DETAIL_FRESHNESS_REASONS = 8


def evidence_entry(item, detail=False):
    """One search, session or overview result as served: compact unless ``detail``."""
    entry = {"id": item.get("id")}
    for key in ("kind", "repo"):
        if _text(item.get(key)):
            entry[key] = served_cut(item[key], 200)[0]
    who = _text(item.get("recorded_by"))
    if who and who != "you":  # one's own items go unmarked
        # Compact: the name alone (get_evidence and detail give "Name <email> (machine …)").
        entry["recorded_by"] = served_cut(who if detail else CORE.short_recorded_by(who), 200)[0]
    neutralised = False
    if isinstance(item.get("claim"), str):
        limit, cut = (DETAIL_TEXT_CHARS, clip_marked) if detail else (COMPACT_CLAIM_CHARS, clip_words)
        entry["claim"], neutralised = served_cut(item["claim"], limit, cut)
    status = _text(item.get("status"))
    if status and status != "active":
        entry["status"] = served_cut(status, 60)[0]
        if item.get("superseded_by"):
            entry["superseded_by"] = item["superseded_by"]
    fresh = item.get("freshness") if isinstance(item.get("freshness"), dict) else {}
    verdict = _text(fresh.get("verdict"))
    if verdict:
        entry["verdict"] = verdict
    reasons = _texts(item.get("reasons"))
    if detail:
        neutralised = _add_detail(entry, item, verdict, reasons, fresh) or neutralised
    elif reasons:
        entry["reasons"] = [served_cut(reasons[0], COMPACT_REASON_CHARS, cut_reason)[0]]
    if neutralised:
        entry["neutralised"] = True
    return entry


def _text(value):
    """``value`` when it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def _texts(values):
    return [v for v in values or () if isinstance(v, str) and v]


def _add_detail(entry, item, verdict, reasons, fresh):
    """What ``detail: true`` adds to an entry, each fact once; whether neutralising changed a text."""
    neutralised = False
    for key in ("detail", "symptom"):
        if _text(item.get(key)):
            entry[key], changed = served_cut(item[key], DETAIL_TEXT_CHARS, clip_marked)
            neutralised = neutralised or changed
    files = [served_cut(f, 200, clip_marked)[0] for f in _texts(item.get("files"))]
    if files:
        entry["files"] = files[:DETAIL_FILES]
        if len(files) > DETAIL_FILES:
            entry["files_not_shown"] = len(files) - DETAIL_FILES
    for key in ("session", "created_at", "confirmed_at", "age"):
        if _text(item.get(key)):
            entry[key] = served_cut(item[key], 200)[0]
    confidence = item.get("confidence")
    if isinstance(confidence, (int, float)) and not isinstance(confidence, bool):
        entry["confidence"] = confidence
    # explain repeats the first freshness reason and the age among the reasons: said once here.
    said = (item.get("age"), (verdict or "").replace("_", " ") + ":")
    reasons = [r for r in reasons if r != said[0] and not (verdict and r.startswith(said[1]))]
    for key, texts in (
        ("reasons", reasons[:DETAIL_REASONS]),
        ("freshness", _texts(fresh.get("reasons"))[:DETAIL_FRESHNESS_REASONS]),
    ):
        if texts:
            entry[key] = [served_cut(r, DETAIL_REASON_CHARS, cut_reason)[0] for r in texts]
    return neutralised


# -- the text block --------------------------------------------------------------------------------

# Control characters (and the two Unicode line separators) never reach the text block raw: a
# stored newline must not start a line that looks like another entry.
_ESCAPES = {i: "\\u%04x" % i for i in list(range(32)) + [0x7F, 0x2028, 0x2029]}
_ESCAPES.update({9: "\\t", 10: "\\n", 13: "\\r"})


def line_text(value):
    if isinstance(value, str):
        return value.translate(_ESCAPES)
    if value is True or value is False:
        return "true" if value else "false"
    return "null" if value is None else str(value)


def entry_line(entry):
    """A compact entry as one line: ``ev-… [kind, repo, verdict] claim -- reason``."""
    tags = [entry.get(k) for k in ("kind", "repo", "verdict", "status") if entry.get(k)]
    if entry.get("recorded_by"):
        tags.append("by " + entry["recorded_by"])
    if entry.get("neutralised"):
        tags.append("neutralised")
    line = "%s [%s] %s" % (
        entry.get("id"),
        ", ".join(map(line_text, tags)),
        line_text(entry.get("claim", "")),
    )
    reasons = entry.get("reasons")
    if reasons and "session" not in entry and "created_at" not in entry:
        line += " -- " + line_text(reasons[0])
    return line


_ENTRY_EXTRA = ("detail", "symptom", "files", "session", "created_at", "confirmed_at", "age", "confidence",
                "superseded_by", "reasons", "freshness", "files_not_shown")  # fmt: skip


def entry_lines(entry):
    """An entry's line; for a detailed entry, then what detail adds, one field a line."""
    lines = [entry_line(entry)]
    if "session" not in entry and "created_at" not in entry:
        return lines
    for key in _ENTRY_EXTRA:
        if key in entry:
            value = entry[key]
            shown = "; ".join(map(line_text, value)) if isinstance(value, list) else line_text(value)
            lines.append("  %s: %s" % (key, shown))
    return lines


def _is_entry(value):
    return isinstance(value, dict) and "id" in value and "claim" in value


def render_tree(payload, lead=None):
    """The text block of any payload: ``key: value`` lines, lists one entry a line (evidence
    entries as entry lines), nested objects indented. ``lead``: a first line."""
    lines = [lead] if lead else []
    _render_into(payload, 0, lines)
    return "\n".join(lines)


def _render_into(mapping, depth, lines):
    pad = "  " * depth
    for key, value in mapping.items():
        if isinstance(value, dict):
            if value:
                lines.append("%s%s:" % (pad, key))
                _render_into(value, depth + 1, lines)
        elif isinstance(value, list):
            if not value:
                continue
            lines.append("%s%s:" % (pad, key))
            for v in value:
                if _is_entry(v):
                    block = entry_lines(v)
                    lines.append("%s- %s" % (pad, block[0]))
                    lines.extend(pad + "  " + b for b in block[1:])
                elif isinstance(v, dict):
                    sub = []
                    _render_into(v, 0, sub)
                    if sub:
                        lines.append("%s- %s" % (pad, sub[0]))
                        lines.extend(pad + "  " + s for s in sub[1:])
                else:
                    lines.append("%s- %s" % (pad, line_text(v)))
        else:
            lines.append("%s%s: %s" % (pad, key, line_text(value)))


def drop_empty(value):
    """``value`` without None, empty strings, lists and objects, at any depth (nothing empty is
    sent); a boolean False and a number 0 stay (they say something)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            v = drop_empty(v)
            if v is None or v == "" or v == [] or v == {}:
                continue
            out[k] = v
        return out
    if isinstance(value, list):
        return [drop_empty(v) for v in value]
    return value


# -- fitting a budget -------------------------------------------------------------------------------


def fit_entries(build, count, budget, text_only=False):
    """The largest k <= ``count`` (at least 1 when count is) for which ``build(k)`` (a Reply)
    fits ``budget`` (measured as Reply.size does), and that Reply. Entries are each small enough
    to fit alone."""
    reply = build(count)
    size = reply.size(text_only)
    k = count
    while size > budget and k > 1:
        k = max(1, min(k - 1, k * budget // size))
        reply = build(k)
        size = reply.size(text_only)
    while k < count:  # the estimate may have cut more than it had to: take back what fits
        bigger = build(k + 1)
        if bigger.size(text_only) > budget:
            break
        k, reply = k + 1, bigger
    return k, reply
