from __future__ import annotations

import json
import operator
import os
import re

from .catalogue import SUMMARY_FIELDS, TOOLS_BY_NAME
from .protocol import (
    LIST_ITEM_LIMIT,
    RESULT_BUDGET_CHARS,
    SEARCH_DEFAULT_LIMIT,
    SESSION_DEFAULT_LIMIT,
    TEXT_LIMIT_IN_ITEM,
    TEXT_LIMIT_IN_LISTS,
    UNTRUSTED_NOTICE,
    VERIFY_MAX_IDS,
    _log,
    dumps,
    may_need_neutralising,
    neutralise,
)
from .service import CORE
from .untrusted import clip, serve_tree, served_text

# ----------------------------------------------------------------------------------------------
# Tool implementations: parse arguments, call one wctx service function, format
# ----------------------------------------------------------------------------------------------


class ToolFailure(Exception):
    """A tool call that failed in a way the agent can fix: returned as ``isError: true``."""


def _cursor_offset(cursor):
    if cursor is None:
        return 0
    if not re.match(r"^o[0-9]{1,6}$", cursor):
        raise ToolFailure(f"cursor {cursor!r} is not one this server issued; omit it to start from the top")
    return int(cursor[1:])


def _size(payload):
    return len(json.dumps(payload, ensure_ascii=False))


def _size_at_most(text):
    """An upper bound on ``_size`` of a payload whose compact JSON is ``text``: the default
    separators add one space after each structural comma and colon, and a text holds no more of
    those than commas and colons in all; twice its length bounds it too, without counting."""
    if 2 * len(text) <= RESULT_BUDGET_CHARS:
        return 2 * len(text)
    return len(text) + text.count(",") + text.count(":")


class Serialised(dict):
    """A tool payload that carries its own compact JSON (``text``), so that the reply does not
    encode the same payload again for the text content and once more inside structuredContent."""

    __slots__ = ("text",)

    def __init__(self, payload, text):
        dict.__init__(self, payload)
        self.text = text


def _fit_budget(payload, list_key, notes):
    """Drop entries from the end of ``payload[list_key]`` until the serialised payload fits.

    The first entry always stays: every entry is already cut small enough to fit on its own
    (``_evidence_summaries``), and a page with nothing on it would leave a pager where it was.
    """
    items = payload.get(list_key) or []
    dropped = 0
    while len(items) > 1 and _size(payload) > RESULT_BUDGET_CHARS:
        items.pop()
        dropped += 1
    if dropped:
        notes.append(
            f"{list_key}: {dropped} more not shown to keep this result small; "
            "ask for fewer or page with the cursor"
        )
    return dropped


# Caps inside one list entry (search result, session item, verify item): with these, any single
# entry serialises well under RESULT_BUDGET_CHARS however many files or reasons it carries.
ENTRY_LIST_LIMIT = 20  # files per entry
ENTRY_REASON_LIMIT = 12  # reasons per entry
ENTRY_STRING_LIMIT = 200  # characters per file path / reason / label in an entry


def _cap_list(values, limit, text_limit, label, cut):
    """The first ``limit`` strings, each clipped; what was cut is counted in ``cut``."""
    values = list(values)
    if len(values) > limit:
        cut.append(f"{label}: {len(values) - limit} more not shown")
        values = values[:limit]
    try:
        if max(map(len, values), default=0) <= text_limit:
            return values  # the usual entry: nothing (more) to cut
    except TypeError:  # an entry without a length: looked at one by one below
        pass
    out = []
    for v in values:
        if isinstance(v, str) and len(v) > text_limit:
            cut.append(f"{label}: long entries clipped")
            v = clip(v, text_limit)
        out.append(v)
    return out


def _short_strings(values, limit):
    """True when ``values`` (a list) has at most ``limit`` entries, all strings of at most
    ENTRY_STRING_LIMIT characters: what _cap_list would return unchanged, and all free text."""
    if len(values) > limit:
        return False
    for v in values:
        if type(v) is not str or len(v) > ENTRY_STRING_LIMIT:
            return False
    return True


def _evidence_summaries(items, text_limit):
    """Search/session result entries: neutralised, clipped, with the fields an agent acts on.

    Long file lists, paths and reasons are cut (and said so in an entry's ``truncated``) so that
    one entry always fits in a result on its own. See ``_summaries_with_json``.
    """
    return _summaries_with_json(items, text_limit, want_json=False)[0]


def _summaries_with_json(items, text_limit, want_json=True):
    """``_evidence_summaries`` and the compact JSON of the list they make, as ``dumps`` writes it.

    An entry is what ``_summary_fields`` makes of an item, then ``_neutralised`` when the joined
    free text of the entry may need neutralising, else only ``_clipped``. When a text needs nothing
    (``may_need_neutralising``), neutralising leaves it as it is, and no joined text needs less
    than any text in it; so where an entry's short fields (repo, session, kind, status, dates, age)
    are all left as they are by neutralising, either way the entry is each field served on its own.
    Such an entry is put together here from what an item keeps from search to search (id to
    confirmed_at: served and encoded once, ``_stable_entry``) and its age, reasons and freshness
    reasons, short strings served once each (``_plain_short``). Anything else, including every
    entry with a text that neutralising changes, takes the general path (``_summary_entry``).
    """
    entries, texts = [], []
    if len(_PLAIN_SHORT) >= _PLAIN_SHORT_MAX:  # here, not while an entry is put together
        _PLAIN_SHORT.clear()
    known = _PLAIN_SHORT.__contains__
    json_of = _PLAIN_SHORT.__getitem__
    for item in items:
        try:
            files, confidence, age, reasons, fresh = _call_values(item)
            if type(files) is not list or type(reasons) is not list or type(fresh) is not dict:
                raise TypeError
            # 1, 1.0 and True (and 0.0, -0.0) are equal keys but different JSON: the key tells them apart.
            key = (text_limit, type(confidence), repr(confidence), tuple(files), _stable_values(item))
            stable = _STABLE_CACHE.get(key)
            if stable is None:
                stable = _stable_entry(key[4], files, text_limit)
                if len(_STABLE_CACHE) >= _STABLE_CACHE_MAX:
                    _STABLE_CACHE.clear()
                _STABLE_CACHE[key] = stable
            fresh_reasons = fresh.get("reasons") or []
            if not (
                stable.plain
                and type(fresh_reasons) is list
                and (known(age) or _plain_short([age], 1))
                and (
                    (len(reasons) <= ENTRY_REASON_LIMIT and all(map(known, reasons)))
                    or _plain_short(reasons, ENTRY_REASON_LIMIT)
                )
                and (
                    (len(fresh_reasons) <= 8 and all(map(known, fresh_reasons)))
                    or _plain_short(fresh_reasons, 8)
                )
            ):
                stable = None
        except (KeyError, TypeError):  # a field missing, or one of another type
            stable = None
        if stable is None:
            entry, text = _summary_entry(item, text_limit, want_json)
            entries.append(entry)
            texts.append(text)
            continue
        verdict = fresh.get("verdict")
        out = dict(stable.fields)
        out["files"] = list(out["files"])  # the entry's own: the cached one stays as it was
        out["age"] = age
        out["reasons"] = reasons
        out["freshness"] = {"verdict": verdict, "reasons": fresh_reasons}
        if stable.changed:
            out["neutralised"] = True
        entries.append(out)
        if want_json:
            texts.append(
                "".join(
                    (
                        stable.prefix,
                        ',"age":',
                        json_of(age),
                        ',"reasons":[',
                        ",".join(map(json_of, reasons)),
                        '],"freshness":{"verdict":',
                        _json_string(verdict) if type(verdict) is str else dumps(verdict),
                        ',"reasons":[',
                        ",".join(map(json_of, fresh_reasons)),
                        ']},"neutralised":true}' if stable.changed else "]}}",
                    )
                )
            )
    return entries, "[" + ",".join(texts) + "]" if want_json else None


def _summary_entry(item, text_limit, want_json):
    """(one entry, its compact JSON when ``want_json``): the general path."""
    out, texts = _summary_fields(item)
    out = (
        _neutralised(out, text_limit) if may_need_neutralising(" ".join(texts)) else _clipped(out, text_limit)
    )
    return out, dumps(out) if want_json else None


class _StableEntry:
    """What an entry takes from fields an item keeps between searches (SUMMARY_FIELDS up to
    confirmed_at), served: ``fields`` in entry order, their JSON up to where ``age`` follows
    (``prefix``), whether neutralising changed claim or detail (``changed``), and whether it
    left every short field as it was (``plain``: when not, the entry takes the general path)."""

    __slots__ = ("fields", "prefix", "changed", "plain")


_STABLE_FIELDS = SUMMARY_FIELDS[: SUMMARY_FIELDS.index("age")]
assert SUMMARY_FIELDS[len(_STABLE_FIELDS) :] == ("age", "reasons", "freshness"), SUMMARY_FIELDS
_stable_values = operator.itemgetter(*(name for name in _STABLE_FIELDS if name != "files"))
_call_values = operator.itemgetter("files", "confidence", "age", "reasons", "freshness")
_SHORT_FIELDS = ("repo", "session", "kind", "status", "created_at", "confirmed_at")  # served at 300
# Declared with every other process-wide cache in wctx's caches part, so that clear_caches() empties them.
_STABLE_CACHE = CORE.MCP_STABLE_ENTRIES  # key from _summaries_with_json -> _StableEntry
_STABLE_CACHE_MAX = CORE.MCP_STABLE_ENTRIES_KEPT
_PLAIN_SHORT = CORE.MCP_PLAIN_SHORT  # short string that serves as itself (reasons, ages) -> its JSON
_PLAIN_SHORT_MAX = CORE.MCP_PLAIN_SHORT_KEPT
_json_string = json.encoder.encode_basestring  # what the encoder writes for a str (ensure_ascii off)


def _plain_short(values, limit):
    """True when ``values`` (a list) has at most ``limit`` entries, each a str of at most
    ENTRY_STRING_LIMIT characters that served_text(it, 300) leaves as it is."""
    if len(values) > limit:
        return False
    if all(map(_PLAIN_SHORT.__contains__, values)):
        return True
    if not _short_strings(values, limit):
        return False
    for v in values:
        if v not in _PLAIN_SHORT:
            if served_text(v, 300)[0] != v:
                return False
            _PLAIN_SHORT[v] = _json_string(v)
    return True


def _stable_entry(src, files, text_limit):
    """The served fields of an item that search after search returns the same (_StableEntry):
    ``plain`` False where one is not of its result type, the files list is one to cut, or a
    short field serves differently."""
    stable = _StableEntry()
    stable.plain = False
    fields = dict(zip(_STABLE_FIELDS, src[:9] + (files,) + src[9:]))
    if type(fields["id"]) is not str or type(fields["kind"]) is not str or type(fields["claim"]) is not str:
        return stable
    for key in ("detail", "repo", "session", "created_at", "status", "confirmed_at"):
        if fields[key] is not None and type(fields[key]) is not str:
            return stable
    if not _short_strings(files, ENTRY_LIST_LIMIT):
        return stable
    for key in _SHORT_FIELDS:
        if fields[key] is not None and served_text(fields[key], 300)[0] != fields[key]:
            return stable
    changed = False
    for key in ("claim", "detail"):
        if fields[key] is not None:
            fields[key], hit = served_text(fields[key], text_limit)
            changed = changed or hit
    fields["files"] = [served_text(v, 300)[0] for v in files]
    stable.fields = fields
    stable.prefix = dumps(fields)[:-1]
    stable.changed = changed
    stable.plain = True
    return stable


_summary_values = operator.itemgetter(*SUMMARY_FIELDS)


def _summary_fields(item):
    """(entry with its lists capped, the free-text strings in it)."""
    try:
        out = dict(zip(SUMMARY_FIELDS, _summary_values(item)))  # a search result has them all
    except KeyError:
        out = {key: item[key] for key in SUMMARY_FIELDS if key in item}
    files, reasons, fresh = out.get("files"), out.get("reasons"), out.get("freshness")
    if (
        type(files) is list
        and type(reasons) is list
        and type(fresh) is dict
        and _short_strings(files, ENTRY_LIST_LIMIT)
        and _short_strings(reasons, ENTRY_REASON_LIMIT)
    ):
        # The usual search result: short lists of short strings, nothing to cut. The entry shares
        # those lists with the service layer's result; nothing below changes a list in place
        # (_neutralised makes new ones), and freshness is a new dict, as _neutralised rewrites it.
        fresh_reasons = fresh.get("reasons") or []
        if type(fresh_reasons) is list and _short_strings(fresh_reasons, 8):
            out["freshness"] = {"verdict": fresh.get("verdict"), "reasons": fresh_reasons}
            texts = files + reasons + fresh_reasons
            detail = out.get("detail")
            if isinstance(detail, str):
                texts.append(detail)
            claim = out.get("claim")
            if isinstance(claim, str):
                texts.append(claim)
            return out, texts
    cut = []
    if isinstance(files, list):
        out["files"] = _cap_list(files, ENTRY_LIST_LIMIT, ENTRY_STRING_LIMIT, "files", cut)
    if isinstance(reasons, list):
        out["reasons"] = _cap_list(reasons, ENTRY_REASON_LIMIT, ENTRY_STRING_LIMIT, "reasons", cut)
    if isinstance(fresh, dict):
        out["freshness"] = {
            "verdict": fresh.get("verdict"),
            "reasons": _cap_list(fresh.get("reasons") or [], 8, ENTRY_STRING_LIMIT, "freshness.reasons", cut),
        }
    if cut:
        out["truncated"] = sorted(set(cut), key=cut.index)
    texts = [v for v in (out.get("claim"), out.get("detail")) if isinstance(v, str)]
    texts += [v for v in (out.get("files") or []) + (out.get("reasons") or []) if isinstance(v, str)]
    texts += [v for v in (out.get("freshness") or {}).get("reasons") or [] if isinstance(v, str)]
    return out, texts


def _clipped(out, text_limit):
    for key in ("claim", "detail"):
        if isinstance(out.get(key), str):
            out[key] = clip(out[key], text_limit)
    return out


def _neutralised(out, text_limit):
    changed = False
    for key in ("claim", "detail"):
        if isinstance(out.get(key), str):
            out[key], hit = served_text(out[key], text_limit)
            changed = changed or hit
    for key in ("files", "reasons"):
        if isinstance(out.get(key), list):
            out[key] = [served_text(v, 300)[0] for v in out[key]]
    if isinstance(out.get("freshness"), dict):
        out["freshness"]["reasons"] = [served_text(v, 300)[0] for v in out["freshness"]["reasons"]]
    for key in ("repo", "session", "kind", "status", "created_at", "confirmed_at", "age"):
        if isinstance(out.get(key), str):
            out[key] = served_text(out[key], 300)[0]
    if changed:
        out["neutralised"] = True
    return out


# (anchors/reasons per item, characters per string) for verify_freshness, loosest first.
VERIFY_ENTRY_LEVELS = ((ENTRY_LIST_LIMIT, ENTRY_STRING_LIMIT), (5, 120), (1, 80), (0, 60))


def _verify_entry(item, list_limit, text_limit, cut):
    """One verify_freshness item with at most ``list_limit`` anchors and reasons."""
    if not isinstance(item, dict):
        return item
    out = {}
    for key, value in item.items():
        if key == "dependencies":
            continue  # said in the reasons; the reply's shape is the MCP layer's to choose (#31)
        if key in ("reasons", "anchors") and isinstance(value, list):
            # One reason always stays: it says why the verdict is what it is.
            limit = max(list_limit, 1) if key == "reasons" else list_limit
            if len(value) > limit:
                cut.append(f"{key}: {len(value) - limit} more not shown in some items")
                out[key + "_not_shown"] = len(value) - limit
                value = value[:limit]
            out[key] = [serve_tree(v, text_limit, ENTRY_LIST_LIMIT, (key,), cut) for v in value]
        else:
            out[key] = serve_tree(value, ENTRY_STRING_LIMIT, ENTRY_LIST_LIMIT, (key,), cut)
    return out


# (characters per text field, entries per list) tried in turn until a whole result fits the budget.
TREE_LEVELS = ((None, None), (1500, 25), (600, 15), (300, 10), (150, 5), (80, 3), (60, 1))


def _within_budget(build, text_limit, list_limit):
    """Call ``build(text_limit, list_limit, notes)`` with tighter limits until its result fits.

    Used by the tools that serve one record or an overview (get_evidence, get_related_repositories,
    workspace_overview): text is clipped and lists are cut further rather than the result growing
    past RESULT_BUDGET_CHARS. What was cut is said in the result's ``truncated``.
    """
    for level_text, level_list in TREE_LEVELS:
        t = text_limit if level_text is None else min(text_limit, level_text)
        n = list_limit if level_list is None else min(list_limit, level_list)
        notes = []
        payload = build(t, n, notes)
        if _size(payload) <= RESULT_BUDGET_CHARS:
            break
    if (t, n) != (text_limit, list_limit):
        notes.append(
            f"text fields clipped to {t} characters and lists to {n} entries to keep this result small"
        )
    payload.pop("truncated", None)
    if notes:
        payload["truncated"] = notes
    return payload


def _bounded_record(payload):
    """record_evidence's answer within RESULT_BUDGET_CHARS. Every recorded and duplicate id stays
    (a later transcript import looks for them; at most RECORD_MAX_ITEMS of each, a few hundred
    characters apiece); what can grow without bound is the warnings (one per cited symbol not
    found) and the messages: each is clipped, then warnings are left out from the end until the
    answer fits, and ``truncated`` says how many."""
    notes = []
    for entry in payload["duplicates"]:
        if isinstance(entry.get("message"), str) and len(entry["message"]) > ENTRY_STRING_LIMIT:
            entry["message"] = clip(entry["message"], ENTRY_STRING_LIMIT)
            if "duplicates: long messages clipped" not in notes:
                notes.append("duplicates: long messages clipped")
    given = payload["warnings"]
    warnings = payload["warnings"] = [clip(w, ENTRY_STRING_LIMIT) for w in given[:LIST_ITEM_LIMIT]]
    while warnings and _size(payload) > RESULT_BUDGET_CHARS - 200:  # room for the note itself
        warnings.pop()
    if len(warnings) < len(given):
        notes.append(
            f"warnings: {len(given) - len(warnings)} of {len(given)} not shown to keep this result small"
        )
    if any(w is not g for w, g in zip(warnings, given)):
        notes.append("warnings: long entries clipped")
    if notes:
        payload["truncated"] = notes
    return payload


class Tools:
    """The tool handlers of one connection: one lazily opened store, one recorded session."""

    def __init__(self, core, home=None, repo=None, workspace=None, cwd=None):
        self.core = core
        self.home = home
        self.default_repo = repo
        self.workspace = workspace
        self.cwd = cwd or os.getcwd()
        self._store = None
        self._default_repo_name = None
        self.session_id = None  # handshake era: record_evidence calls accumulate here

    # -- plumbing -------------------------------------------------------------------------------

    @property
    def store(self):
        if self._store is None:
            self._store = self.core.open_store(self.home)
        return self._store

    def close(self):
        if self._store is not None:
            self._store.close()
            self._store = None

    def _repo(self, args):
        if args.get("repo"):
            return args["repo"]
        if self.default_repo and self._default_repo_name is None:
            # --repo may be a path; tools speak names. Resolved once, on first use.
            self._default_repo_name = self.core.resolve_repo(self.store, self.default_repo, cwd=self.cwd).name
        return self._default_repo_name

    def _no_context_hint(self):
        try:
            names = [r["name"] for r in self.core.list_repos(self.store)]
        except Exception:  # the hint is a courtesy; the original error is what matters
            names = []
        registered = ", ".join(names[:20]) if names else "none yet (wctx repo add PATH)"
        return (
            "Pass `repo` with a registered repository name, or start the server inside a registered "
            f"repository or with `wctx mcp --repo NAME`. Registered repositories: {registered}."
        )

    def call(self, name, args, stateless):
        handler = getattr(self, "tool_" + name)
        try:
            if self._store is not None:  # deleted or replaced since the last call?
                self._store.ensure_current()
            result = handler(args, stateless)
            if self._store is not None and self._store.notices:  # said once, on stderr
                for text in self._store.notices:
                    _log(text)
                del self._store.notices[:]
            return result
        except self.core.WctxError as e:
            message = str(e)
            if (
                isinstance(e, self.core.NotFoundError)
                and not args.get("repo")
                and not self.default_repo
                and "repo" in TOOLS_BY_NAME[name]["inputSchema"]["properties"]
            ):
                message = "{}. {}".format(message.rstrip("."), self._no_context_hint())
            raise ToolFailure(message) from None

    # -- read tools -----------------------------------------------------------------------------

    def _cwd_in_repo(self):
        try:
            self.core.resolve_repo(self.store, None, cwd=self.cwd)
        except self.core.NotFoundError:
            return False
        return True

    def tool_workspace_overview(self, args, stateless):
        repo = self._repo(args)
        if repo is None and self.workspace and not self._cwd_in_repo():
            shown = self.core.show_workspace(self.store, self.workspace)
            overview = {
                "repo": None,
                "workspaces": [shown["name"]],
                "repos": shown["repos"],
                "relations": shown["relations"],
                "hint": "No current repository (the server runs outside a registered one); pass `repo` "
                "to the tools to work from one of these.",
            }
        else:
            overview = self.core.workspace_overview(self.store, repo=repo, cwd=self.cwd)

        def build(text_limit, list_limit, notes):
            payload = {}
            for key, value in overview.items():
                if key in ("open_questions", "key_findings") and isinstance(value, list):
                    if len(value) > list_limit:
                        notes.append(f"{key}: {len(value) - list_limit} more not shown")
                    payload[key] = _evidence_summaries(value[:list_limit], text_limit)
                else:
                    payload[key] = serve_tree(value, text_limit, list_limit, (key,), notes)
            payload["notice"] = UNTRUSTED_NOTICE
            return payload

        return _within_budget(build, TEXT_LIMIT_IN_LISTS, LIST_ITEM_LIMIT)

    def tool_search_evidence(self, args, stateless):
        limit = args.get("limit", SEARCH_DEFAULT_LIMIT)
        repo = self._repo(args)
        all_scope = args.get("scope") == "all"
        found = self.core.search(
            self.store,
            args["query"],
            repo=repo,
            cwd=self.cwd,
            limit=limit,
            kinds=args.get("kinds") or None,
            all_scope=all_scope,
            include_inactive=bool(args.get("include_inactive")),
            workspace=self.workspace if repo is None else None,
            files=args.get("files") or None,
            page=args.get("cursor"),
        )
        results = found.get("results", [])
        notes = []

        def complete(payload):
            payload["returned"] = len(payload["results"])
            if not payload["results"] and not results and not args.get("cursor"):
                payload["hint"] = (
                    "Nothing recorded matches. Try other words (a symbol, a file name, the error text), "
                    "scope 'all', or record what you find with record_evidence."
                )
            if notes:
                payload["truncated"] = notes
            return payload

        entries, entries_text = _summaries_with_json(results, TEXT_LIMIT_IN_LISTS)
        payload = {
            "results": entries,
            "returned": 0,
            "candidates": found.get("candidates", len(results)),
            "candidates_exact": found.get("candidates_exact", True),
            "query_terms": found.get("query_terms", []),
            "query_terms_total": found.get("query_terms_total", 0),
            "searched": _cap_list(
                found.get("searched", []), LIST_ITEM_LIMIT, ENTRY_STRING_LIMIT, "searched", notes
            ),
            "mode": found.get("mode", "text"),
            "ms": found.get("ms", 0.0),
            "next_cursor": found.get("next_page"),
            "notice": UNTRUSTED_NOTICE,
        }
        # The usual page fits the budget by far: serialise the finished payload once, and when
        # even an upper bound of its measured size fits, nothing would be dropped; send that.
        finished = complete(dict(payload))
        rest = dict(finished)
        del rest["results"]  # the first key: its JSON is the entries' own, joined
        text = '{"results":' + entries_text + "," + dumps(rest)[1:]
        if _size_at_most(text) <= RESULT_BUDGET_CHARS:
            return Serialised(finished, text)
        if _fit_budget(payload, "results", notes):
            payload["next_cursor"] = found["after"][len(payload["results"]) - 1]
        return complete(payload)

    def tool_get_evidence(self, args, stateless):
        item = self.core.get_evidence(self.store, args["id"])
        item.pop("dependencies", None)  # said in the reasons; the reply's shape is the MCP layer's (#31)
        neutralised = any(
            neutralise(item.get(k) or "")[1] for k in ("claim", "detail") if isinstance(item.get(k), str)
        )

        def build(text_limit, list_limit, notes):
            evidence = serve_tree(item, text_limit, list_limit, ("evidence",), notes)
            if neutralised:
                evidence["neutralised"] = True
            return {"evidence": evidence, "notice": UNTRUSTED_NOTICE}

        return _within_budget(build, TEXT_LIMIT_IN_ITEM, LIST_ITEM_LIMIT)

    def tool_get_session_evidence(self, args, stateless):
        limit = args.get("limit", SESSION_DEFAULT_LIMIT)
        offset = _cursor_offset(args.get("cursor"))
        found = self.core.get_session(self.store, args["session_id"], offset=offset, limit=limit)
        page = found.get("evidence", [])
        total = found.get("total", len(page))
        notes = []
        session = serve_tree(
            found.get("session", {}), TEXT_LIMIT_IN_LISTS, LIST_ITEM_LIMIT, ("session",), notes
        )
        payload = {
            "session": session,
            "evidence": _evidence_summaries(page, TEXT_LIMIT_IN_LISTS),
            "total": total,
            "next_cursor": f"o{offset + len(page)}" if total > offset + len(page) else None,
            "notice": UNTRUSTED_NOTICE,
        }
        if _fit_budget(payload, "evidence", notes):
            payload["next_cursor"] = f"o{offset + len(payload['evidence'])}"
        if notes:
            payload["truncated"] = notes
        return payload

    def tool_get_related_repositories(self, args, stateless):
        found = self.core.related_repositories(self.store, self._repo(args), cwd=self.cwd)

        def build(text_limit, list_limit, notes):
            payload = serve_tree(found, text_limit, list_limit, (), notes)
            payload.setdefault("relations", [])
            return payload

        return _within_budget(build, TEXT_LIMIT_IN_LISTS, LIST_ITEM_LIMIT * 2)

    def tool_verify_freshness(self, args, stateless):
        ids = args.get("ids")
        offset = _cursor_offset(args.get("cursor"))
        if ids and args.get("cursor") is not None:
            raise ToolFailure("cursor pages the repository's items; it does not go with ids")
        # Without ids: one page of the scope's items, checked alone (a page costs the same at
        # item 20,000 as at item 1), with a cursor until the last one.
        page = {} if ids else {"offset": offset, "limit": VERIFY_MAX_IDS}
        about = args.get("about")
        found = self.core.verify(
            self.store,
            ids=ids,
            repo=self._repo(args) if not about or args.get("repo") else None,
            cwd=self.cwd,
            about=about,
            **page,
        )
        served = len(found.get("items", []))  # the page's size, before fileless items are folded
        items = found.get("items", [])
        fileless = []
        if not args.get("all") and not args.get("ids"):
            # Items citing no file only know that their repository moved: said once per repository.
            kept = [i for i in items if i.get("cites_file", True) or i.get("verdict") == "unknown"]
            if len(kept) < len(items):
                fileless = [self.core.fileless_summary(g) for g in found.get("fileless", [])]
                items = kept
        notes = []
        if len(items) > VERIFY_MAX_IDS:
            notes.append(f"items: {len(items) - VERIFY_MAX_IDS} more not shown")
            items = items[:VERIFY_MAX_IDS]
        payload = {
            "items": [],
            "summary": found.get("summary", {}),
            "notice": "Freshness says whether the cited code changed since capture, not whether a claim "
            "is still true.",
        }
        # Every item asked for is answered: when they do not fit, each item's anchors and reasons
        # are cut harder (and said so), the item itself is never dropped.
        for list_limit, text_limit in VERIFY_ENTRY_LEVELS:
            cut = []
            payload["items"] = [_verify_entry(v, list_limit, text_limit, cut) for v in items]
            if _size(payload) <= RESULT_BUDGET_CHARS:
                break
        if cut:
            notes.append("items: " + "; ".join(sorted(set(cut), key=cut.index)))
        if fileless:
            payload["fileless"] = fileless
        if not ids:
            total = found.get("total", served)
            payload["total"] = total
            payload["next_cursor"] = f"o{offset + served}" if total > offset + served else None
        if notes:
            payload["truncated"] = notes
        return payload

    # -- the write tools -------------------------------------------------------------------------

    def tool_record_evidence(self, args, stateless):
        """Record items through the service layer's one duplicate rule: an item that repeats an
        active one (same claim, repository and cited files, from any session) is answered under
        ``duplicates`` with the existing evidence id, so a later transcript import (which looks
        for ev- ids in this result) does not store it again."""
        session_id = args.get("session_id") or (None if stateless else self.session_id)
        items = []
        for given in args["items"]:
            item = dict(given)
            if not item.get("repo") and self.default_repo:
                item["repo"] = self._repo({})
            items.append(item)
        captured = self.core.capture(
            self.store, items, summary=args.get("summary"), session_id=session_id, cwd=self.cwd, agent="mcp"
        )
        session_id = captured["session"]
        if not stateless and not args.get("session_id"):
            self.session_id = session_id
        entries = captured.get("evidence", [])
        recorded = [e for e in entries if not e.get("duplicate")]
        duplicates = [
            {k: e.get(k) for k in ("id", "kind", "repo", "message")} for e in entries if e.get("duplicate")
        ]
        warnings = list(captured.get("warnings", []))
        return _bounded_record(
            {
                "session": session_id,
                "recorded": recorded,
                "duplicates": duplicates,
                "duplicates_skipped": len(duplicates),
                "warnings": warnings,
            }
        )

    def tool_confirm_evidence(self, args, stateless):
        """Re-stamp items the agent re-checked against today's code (the service's confirm)."""
        session_id = args.get("session_id") or (None if stateless else self.session_id)
        return self.core.confirm(
            self.store, args["ids"], note=args.get("note"), session_id=session_id, agent="mcp"
        )
