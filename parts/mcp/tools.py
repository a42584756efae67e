from __future__ import annotations

import os
import re

from .catalogue import TOOLS_BY_NAME
from .protocol import (
    LIST_ITEM_LIMIT,
    SEARCH_DEFAULT_LIMIT,
    SESSION_DEFAULT_LIMIT,
    SHORT_NOTICE,
    TEXT_LIMIT_IN_ITEM,
    TEXT_LIMIT_IN_LISTS,
    UNTRUSTED_NOTICE,
    VERIFY_MAX_IDS,
    _log,
    neutralise,
)
from .replies import (
    Reply,
    budget_of,
    cut_reason,
    drop_empty,
    entry_lines,
    evidence_entry,
    fit_entries,
    line_text,
    render_tree,
    served_cut,
)
from .service import CORE
from .untrusted import serve_tree

# ----------------------------------------------------------------------------------------------
# Tool implementations: parse arguments, call one wctx service function, shape the reply
# ----------------------------------------------------------------------------------------------


class ToolFailure(Exception):
    """A tool call that failed in a way the agent can fix: returned as ``isError: true``."""


def _cursor_offset(cursor):
    if cursor is None:
        return 0
    if not re.match(r"^o[0-9]{1,6}$", cursor):
        raise ToolFailure(f"cursor {cursor!r} is not one this server issued; omit it to start from the top")
    return int(cursor[1:])


def _budget_cut(count, what, budget, how):
    """The note of a list cut to its budget: how many were left out and how to get them."""
    return "%s: %d more not shown to stay under this reply's %s-byte budget; %s" % (
        what,
        count,
        format(budget, ","),
        how,
    )


# (characters per text field, entries per list) tried in turn until a whole result fits the budget.
TREE_LEVELS = ((None, None), (1500, 25), (600, 15), (300, 10), (150, 5), (80, 3), (60, 1))


def _within_budget(build, text_limit, list_limit, budget, how, lead=None, text_only=False):
    """A Reply from ``build(text_limit, list_limit, notes)`` with tighter limits until it fits.

    Used by the tools that serve one record or an overview (get_evidence given an item's id,
    workspace_overview): text is clipped and lists are cut further rather than the reply growing
    past its budget. What was cut is said in the result's ``truncated``, with ``how`` to get it.
    """
    for level_text, level_list in TREE_LEVELS:
        t = text_limit if level_text is None else min(text_limit, level_text)
        n = list_limit if level_list is None else min(list_limit, level_list)
        notes = []
        payload = build(t, n, notes)
        if (t, n) != (text_limit, list_limit):
            notes.append(
                "text clipped to %d characters and lists to %d entries to stay under this reply's "
                "%s-byte budget; %s" % (t, n, format(budget, ","), how)
            )
        payload.pop("truncated", None)
        if notes:
            # Every cut says where the rest is.
            notes = [n if "; " in n else "%s; %s" % (n, how) for n in dict.fromkeys(notes)]
            payload["truncated"] = notes
        reply = Reply(payload, lambda shown: render_tree(shown, lead))
        if reply.size(text_only) <= budget:
            break
    return reply


def _session_brief(session, detail):
    """A session as a list or a session reply shows it: who, where, when, what."""
    if detail:
        return session
    out = {k: session.get(k) for k in ("id", "agent", "repo", "branch") if k in session}
    when = session.get("started_at") or session.get("created_at")
    if isinstance(when, str):
        out["started"] = when[:10]
    out.update((k, session[k]) for k in ("summary", "evidence") if k in session)
    if isinstance(out.get("summary"), str):
        out["summary"] = served_cut(out["summary"], 300)[0]
    return out


# (reasons and anchors per item, characters per string) for detailed verify items, loosest first:
# an item asked for is never dropped, its lists are cut harder until one fits the budget alone.
VERIFY_DETAIL_LEVELS = ((20, 600), (5, 200), (1, 80))


def _verify_entry(item, detail, level=VERIFY_DETAIL_LEVELS[0]):
    """One item of the freshness audit: its verdict and first reason (commits whole); with ``detail``
    every reason and anchor (``level``: how many of each and how long)."""
    if not isinstance(item, dict):
        return item
    reasons = [r for r in item.get("reasons") or () if isinstance(r, str)]
    out = {"id": item.get("id"), "verdict": item.get("verdict")}
    if not detail:
        if reasons:
            out["reasons"] = [served_cut(reasons[0], 300, cut_reason)[0]]
        return out
    most, chars = level
    if reasons:
        out["reasons"] = [served_cut(r, chars, cut_reason)[0] for r in reasons[:most]]
        if len(reasons) > most:
            out["reasons_not_shown"] = len(reasons) - most
    anchors = [a for a in item.get("anchors") or () if isinstance(a, dict)]
    if anchors:
        served = []
        for a in anchors[:most]:
            a = drop_empty(serve_tree(a, chars, most, ("anchors",), []))
            if isinstance(a.get("reason"), str):
                a["reason"] = cut_reason(a["reason"], chars)
            served.append(a)
        out["anchors"] = served
        if len(anchors) > most:
            out["anchors_not_shown"] = len(anchors) - most
    return out


def _verify_line(entry):
    line = "%s %s" % (entry.get("id"), entry.get("verdict"))
    reasons = entry.get("reasons") or []
    if reasons:
        line += ": " + line_text(reasons[0])
    for r in reasons[1:]:
        line += "\n  " + line_text(r)
    for a in entry.get("anchors") or ():
        where = (a.get("path") or "") + ("#" + a["symbol"] if a.get("symbol") else "")
        line += "\n  anchor %s:%s at %s, %s" % (
            line_text(a.get("repo", "")),
            line_text(where) or "(repository)",
            line_text((a.get("commit") or "")[:12]),
            line_text(a.get("verdict") or a.get("reason") or "-"),
        )
    return line


def _search_text(payload):
    """search_evidence's text block: a head line, then one line per result."""
    results = payload["results"]
    n = payload.get("candidates", len(results))
    head = "%d result%s of %s%d matching" % (
        len(results),
        "" if len(results) == 1 else "s",
        "" if payload.get("candidates_exact", True) else "about ",
        n,
    )
    if payload.get("mode", "text") != "text":
        head += " (%s: no query words matched; shown by other reasons)" % payload["mode"]
    if payload.get("next_cursor"):
        head += '; more with cursor "%s"' % line_text(payload["next_cursor"])
    lines = [head + "."]
    if "query_terms" in payload:
        lines.append(
            "query words used: %s (of %d)"
            % (", ".join(map(line_text, payload["query_terms"])), payload.get("query_terms_total", 0))
        )
    for n, p in enumerate(payload.get("phrasings") or (), 1):
        lines.append(
            "phrasing %d (%s): %s"
            % (
                n,
                ", ".join(map(line_text, p["query_terms"])),
                "fused" if p["fused"] else "matched nothing, left out",
            )
        )
    if payload.get("searched"):
        lines.append("searched: " + ", ".join(map(line_text, payload["searched"])))
    for entry in results:
        lines.extend(entry_lines(entry))
    if payload.get("held_back"):
        lines.append(CORE.held_back_text(payload["held_back"], "all_matches: true") + ".")
    for note in payload.get("truncated") or ():
        lines.append("truncated: " + note)
    if payload.get("hint"):
        lines.append(payload["hint"])
    lines.append(payload["notice"])  # last, as in the structured form: the results come first
    return "\n".join(lines)


def _verify_text(payload):
    s = payload.get("summary") or {}
    head = "%d checked: %s" % (
        sum(s.values()),  # listed one by one or named in a fileless line: the counts add up to it
        ", ".join(
            "%d %s" % (s[v], v.replace("_", " "))
            for v in ("current", "possibly_stale", "stale", "unknown")
            if s.get(v)
        )
        or "nothing to check",
    )
    if payload.get("next_cursor"):
        head += '; %d in all, more with cursor "%s"' % (payload.get("total", 0), payload["next_cursor"])
    lines = [head + ". " + payload["notice"]]
    lines.extend(_verify_line(e) for e in payload["items"])
    lines.extend(line_text(f) for f in payload.get("fileless") or ())
    for note in payload.get("truncated") or ():
        lines.append("truncated: " + note)
    return "\n".join(lines)


class Tools:
    """The tool handlers of one connection: one lazily opened store, one recorded session."""

    def __init__(self, core, home=None, repo=None, workspace=None, cwd=None, text_only=False):
        self.core = core
        self.text_only = text_only  # only the text block is sent: budgets are kept by its bytes
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
        if args.get("verify") or args.get("ids"):  # the workspace's freshness audit, at a glance
            return self._verify(args)
        if any(k in args for k in ("cursor", "about", "all")):
            raise ToolFailure(
                "cursor, about and all page or narrow the freshness audit: give ids or verify: true"
            )
        detail = bool(args.get("detail"))
        repo = self._repo(args)
        if repo is None and self.workspace and not self._cwd_in_repo():
            shown = self.core.show_workspace(self.store, self.workspace)
            overview = {
                "repo": None,
                "workspaces": [shown["name"]],
                "repos": shown["repos"] if detail else [r.get("name") for r in shown["repos"]],
                "relations": shown["relations"],
                "hint": "No current repository (the server runs outside a registered one); pass `repo` "
                "to the tools to work from one of these.",
            }
        else:
            overview = self.core.workspace_overview(self.store, repo=repo, cwd=self.cwd)
            if not detail:
                # One line per related repository says the relation and its direction; the
                # checkout's path and each session's commit and cwd are detail.
                overview = dict(overview)
                overview.pop("path", None)
                reachable = overview.pop("reachable", None) or []
                overview.pop("relations", None)
                overview = dict(
                    [("repo", overview.pop("repo")), ("workspaces", overview.pop("workspaces", []))]
                    + [("related", [r.get("reason") for r in reachable if isinstance(r, dict)])]
                    + list(overview.items())
                )
                overview["recent_sessions"] = [
                    _session_brief(s, False)
                    for s in overview.get("recent_sessions") or ()
                    if isinstance(s, dict)
                ]
        budget = budget_of("workspace_overview", detail)

        def build(text_limit, list_limit, notes):
            payload = {}
            for key, value in overview.items():
                if key in ("open_questions", "key_findings") and isinstance(value, list):
                    if len(value) > list_limit:
                        notes.append(f"{key}: {len(value) - list_limit} more not shown")
                    payload[key] = [
                        evidence_entry(v, detail) for v in value[:list_limit] if isinstance(v, dict)
                    ]
                else:
                    payload[key] = serve_tree(value, text_limit, list_limit, (key,), notes)
            payload = drop_empty(payload)
            payload.setdefault("repo", None)
            payload["notice"] = UNTRUSTED_NOTICE if detail else SHORT_NOTICE
            return payload

        return _within_budget(
            build,
            TEXT_LIMIT_IN_LISTS,
            LIST_ITEM_LIMIT,
            budget,
            "search_evidence, get_evidence with a session id, and detail: true give each part whole",
            text_only=self.text_only,
        )

    def tool_search_evidence(self, args, stateless):
        detail = bool(args.get("detail"))
        limit = args.get("limit", SEARCH_DEFAULT_LIMIT)
        repo = self._repo(args)
        all_scope = args.get("scope") == "all"
        phrasings = args.get("phrasings") or []
        # More phrasings of one question: the service fuses their lists (one page, no cursor).
        found = (self.core.search_phrasings if phrasings else self.core.search)(
            self.store,
            [args["query"]] + phrasings if phrasings else args["query"],
            repo=repo,
            cwd=self.cwd,
            limit=limit,
            kinds=args.get("kinds") or None,
            all_scope=all_scope,
            include_inactive=bool(args.get("include_inactive")),
            workspace=self.workspace if repo is None else None,
            files=args.get("files") or None,
            page=args.get("cursor"),
            author=args.get("author"),
            all_matches=bool(args.get("all_matches")),
        )
        results = found.get("results", [])
        entries = [evidence_entry(r, detail) for r in results]
        budget = budget_of("search_evidence", detail)
        after = found.get("after") or []
        head = {"candidates": found.get("candidates", len(results))}
        if not found.get("candidates_exact", True):
            head["candidates_exact"] = False
        if found.get("held_back"):
            head["held_back"] = found["held_back"]
        terms = found.get("query_terms") or []
        if detail or found.get("query_terms_total", 0) > len(terms):
            head["query_terms"] = terms
            head["query_terms_total"] = found.get("query_terms_total", len(terms))
        if detail or found.get("mode", "text") != "text":
            head["mode"] = found.get("mode", "text")
        said = found.get("phrasings") or []
        if said and (detail or not all(p["fused"] for p in said)):
            head["phrasings"] = [
                {"query_terms": [served_cut(t, 100)[0] for t in p["query_terms"]], "fused": p["fused"]}
                for p in said
            ]
        if detail:
            head["searched"] = [
                served_cut(s, 200)[0] for s in (found.get("searched") or [])[:LIST_ITEM_LIMIT]
            ]
            head["ms"] = found.get("ms", 0.0)
        if not results and not args.get("cursor"):
            head["hint"] = (
                "Nothing recorded matches. Try other words (a symbol, a file name, the error text), "
                "scope 'all', or record what you find with record_evidence."
            )
        notice = UNTRUSTED_NOTICE if detail else SHORT_NOTICE

        def build(k):
            payload = {"results": entries[:k]}
            payload.update(head)
            cursor = found.get("next_page") if k == len(entries) else (after[k - 1] if after else None)
            if cursor:
                payload["next_cursor"] = cursor
            if k < len(entries):
                payload["truncated"] = [
                    _budget_cut(
                        len(entries) - k,
                        "results",
                        budget,
                        "call again with cursor for them"
                        if cursor
                        else "search each phrasing alone and page with cursor for them",
                    )
                ]
            payload["notice"] = notice
            return Reply(payload, _search_text)

        return fit_entries(build, len(entries), budget, self.text_only)[1]

    def tool_get_evidence(self, args, stateless):
        if args["id"].strip().startswith("ses-"):  # ids say what they name: ev- an item, ses- a session
            return self._session_evidence(args)
        item = self.core.get_evidence(self.store, args["id"])
        item.pop("dependencies", None)  # said in the reasons; the reply's shape is the MCP layer's (#31)
        neutralised = any(
            neutralise(item.get(k) or "")[1]
            for k in ("claim", "detail", "symptom")
            if isinstance(item.get(k), str)
        )

        def build(text_limit, list_limit, notes):
            evidence = drop_empty(serve_tree(item, text_limit, list_limit, ("evidence",), notes))
            fresh = evidence.get("freshness")
            if isinstance(fresh, dict) and isinstance(fresh.get("reasons"), list):
                fresh["reasons"] = [
                    cut_reason(r, text_limit) if isinstance(r, str) else r for r in fresh["reasons"]
                ]
            if neutralised:
                evidence["neutralised"] = True
            return {"evidence": evidence, "notice": UNTRUSTED_NOTICE}

        return _within_budget(
            build,
            TEXT_LIMIT_IN_ITEM,
            LIST_ITEM_LIMIT,
            budget_of("get_evidence"),
            "`wctx show ID` prints the item whole, workspace_overview with this id in ids and detail every anchor",
            text_only=self.text_only,
        )

    def _session_evidence(self, args):
        """get_evidence given a session id: a page of what that session recorded."""
        detail = bool(args.get("detail"))
        limit = args.get("limit", SESSION_DEFAULT_LIMIT)
        offset = _cursor_offset(args.get("cursor"))
        found = self.core.get_session(self.store, args["id"], offset=offset, limit=limit)
        page = found.get("evidence", [])
        total = found.get("total", len(page))
        notes = []
        session = drop_empty(
            serve_tree(
                _session_brief(found.get("session", {}), detail),
                TEXT_LIMIT_IN_LISTS,
                LIST_ITEM_LIMIT,
                ("session",),
                notes,
            )
        )
        entries = [evidence_entry(e, detail) for e in page if isinstance(e, dict)]
        budget = budget_of("get_evidence", detail)

        def build(k):
            payload = {"session": session, "evidence": entries[:k], "total": total}
            if total > offset + k:
                payload["next_cursor"] = f"o{offset + k}"
            cut = list(notes)
            if k < len(entries):
                cut.append(
                    _budget_cut(len(entries) - k, "evidence", budget, "call again with cursor for them")
                )
            if cut:
                payload["truncated"] = cut
            payload["notice"] = UNTRUSTED_NOTICE if detail else SHORT_NOTICE
            return Reply(payload, render_tree)

        return fit_entries(build, len(entries), budget, self.text_only)[1]

    def _verify(self, args):
        """workspace_overview given ids or verify: whether the code items cite changed since
        they were recorded; without ids, a page of the repository's items."""
        detail = bool(args.get("detail"))
        ids = args.get("ids")
        offset = _cursor_offset(args.get("cursor"))
        about = args.get("about")
        if ids:
            # A cursor with ids continues the same list of ids where the last reply stopped.
            if offset >= len(ids):
                raise ToolFailure("cursor o%d is past the end of the %d ids given" % (offset, len(ids)))
            page = {"ids": ids[offset:]}
        else:
            # One page of the scope's items, checked alone (a page costs the same at item 20,000
            # as at item 1), with a cursor until the last one.
            page = {"ids": None, "offset": offset, "limit": VERIFY_MAX_IDS}
        found = self.core.verify(
            self.store,
            repo=self._repo(args) if not about or args.get("repo") else None,
            cwd=self.cwd,
            about=about,
            **page,
        )
        items = found.get("items", [])
        served = len(items)  # the page's size, before fileless items are folded
        kept = list(enumerate(items))
        fileless = []
        if not args.get("all") and not ids:
            # Items citing no file only know that their repository moved: said once per repository.
            listed = [(i, v) for i, v in kept if v.get("cites_file", True) or v.get("verdict") == "unknown"]
            if len(listed) < len(kept):
                fileless = [self.core.fileless_summary(g) for g in found.get("fileless", [])]
                kept = listed
        total = len(ids) if ids else found.get("total", served)
        budget = budget_of("verify", detail)

        def consumed(k):
            """(items of the service's page, ids or scope items from the cursor) that the first k
            listed items account for: what the next page starts after."""
            if k == len(entries):
                return served, (len(ids) - offset if ids else served)
            upto = kept[k - 1][0] + 1
            if ids and about:  # `about` left some ids out: find the last one shown among them
                resolved = [eid for _, eid in self.core._resolve_ids(self.store, page["ids"])]
                return upto, resolved.index(kept[k - 1][1]["id"]) + 1
            return upto, upto

        def build(k):
            upto, moved = consumed(k)
            summary = found.get("summary", {})
            if upto < served:  # the page is cut: count only what this reply accounts for
                summary = {v: 0 for v in summary}
                for v in items[:upto]:
                    summary[v.get("verdict")] = summary.get(v.get("verdict"), 0) + 1
            payload = {"items": entries[:k], "summary": summary}
            if fileless:
                payload["fileless"] = fileless
            payload["total"] = total
            if total > offset + moved:
                payload["next_cursor"] = f"o{offset + moved}"
            if k < len(entries):
                payload["truncated"] = [
                    _budget_cut(
                        len(entries) - k,
                        "items",
                        budget,
                        "call again with cursor (and the same ids, if you gave ids) for them",
                    )
                ]
            payload["notice"] = (
                "Freshness says whether the cited code changed since capture, not whether a claim "
                "is still true."
            )
            return Reply(payload, _verify_text)

        for level in VERIFY_DETAIL_LEVELS if detail else VERIFY_DETAIL_LEVELS[:1]:
            entries = [_verify_entry(v, detail, level) for _, v in kept]
            reply = fit_entries(build, len(entries), budget, self.text_only)[1]
            if reply.size(self.text_only) <= budget:
                break
        return reply

    # -- the write tools -------------------------------------------------------------------------

    def tool_record_evidence(self, args, stateless):
        """Record items through the service layer's one duplicate rule: an item that repeats an
        active one (same claim, repository and cited files, from any session) is answered under
        ``duplicates`` with the existing evidence id, so a later transcript import (which looks
        for ev- ids in this result) does not store it again. ``confirm``: re-stamp items the agent
        re-checked against today's code (the service's confirm), after the items are recorded."""
        if not args.get("items") and not args.get("confirm"):
            raise ToolFailure("give items to record, or confirm: the ids of items you re-checked")
        session_id = args.get("session_id") or (None if stateless else self.session_id)
        payload, warnings = {}, []
        if args.get("items") and args.get("confirm"):
            # One call that records and confirms is all or nothing: a refused confirm stores no item.
            with self.store.atomic():
                session_id = self._write(args, session_id, payload, warnings)
        else:
            session_id = self._write(args, session_id, payload, warnings)
        if args.get("items") and not stateless and not args.get("session_id"):
            self.session_id = session_id  # later calls of this connection go on in it
        return _write_reply(payload, warnings, "record_evidence", self.text_only)

    def _write(self, args, session_id, payload, warnings):
        """Record ``args["items"]``, then confirm ``args["confirm"]``, into ``payload`` and
        ``warnings``; the session the items went to."""
        if args.get("items"):
            session_id = self._record(args, session_id, payload, warnings)
        else:
            payload["recorded"] = []
        if args.get("confirm"):
            done = self.core.confirm(
                self.store, args["confirm"], note=args.get("note"), session_id=session_id, agent="mcp"
            )
            payload["confirmed"] = done.get("confirmed", [])
            payload["message"] = done.get("message", "")
            warnings.extend(done.get("warnings") or ())
        return session_id

    def _record(self, args, session_id, payload, warnings):
        """Capture ``args["items"]`` into ``payload`` and ``warnings``; the session they went to."""
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
        entries = captured.get("evidence", [])
        recorded = [
            {k: v for k, v in e.items() if k != "duplicate"} for e in entries if not e.get("duplicate")
        ]
        duplicates = [
            {k: e.get(k) for k in ("id", "kind", "repo", "message")} for e in entries if e.get("duplicate")
        ]
        for d in duplicates:  # every id stays; a message can quote a long claim
            if isinstance(d.get("message"), str):
                d["message"] = served_cut(d["message"], 300)[0]
        warnings.extend(captured.get("warnings", []))
        payload.update(session=session_id, recorded=recorded)
        if duplicates:
            payload["duplicates"] = duplicates
            payload["duplicates_skipped"] = len(duplicates)
        return session_id


def _write_reply(payload, warnings, tool, text_only=False):
    """A write tool's reply: every id it wrote always, its warnings as far as the budget goes."""
    budget = budget_of(tool)
    served = [served_cut(w, 400)[0] for w in warnings if isinstance(w, str)]

    def build(k):
        out = dict(payload)
        if served[:k]:
            out["warnings"] = served[:k]
        if k < len(served):
            out["truncated"] = [
                _budget_cut(len(served) - k, "warnings", budget, "get_evidence shows each item as it is now")
            ]
        return Reply(out, render_tree)

    return fit_entries(build, len(served), budget, text_only)[1]
