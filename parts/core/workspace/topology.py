from __future__ import annotations

from .constants import CONSUMER_RELATIONS, PROVIDER_RELATIONS
from .records import _repos
from .repos import _workspace_id

# ----------------------------------------------------------------------------------------------
# Topology: which repositories a caller can see, and how each relates to it
# ----------------------------------------------------------------------------------------------


def _relation_label(kind, a_name, b_name, viewer_is_a):
    """Explain relation ``a kind b`` as seen from one end; the other end holds the evidence."""
    text = "%s %s %s" % (a_name, kind.replace("_", " "), b_name)
    if kind in CONSUMER_RELATIONS:
        side = "upstream dependency" if viewer_is_a else "direct consumer"
    elif kind in PROVIDER_RELATIONS:
        side = "direct consumer" if viewer_is_a else "upstream provider"
    elif kind == "shares_schema_with":
        side = "shares a schema"
    else:
        side = "related"
    return "%s (%s)" % (text, side)


class Reach:
    """How one repository is reached from the caller's, as facts (explain words them, reach_text):
    ``how`` is "same" (the caller's own), "relation" (one declared relation ``kind`` between
    ``a`` and ``b``, the caller being ``a`` when ``caller_is_a``), "hops" (``depth`` relations
    away through the repositories ``via``) or "workspace" (a workspace ``workspace`` shared with
    the caller, ``also`` the Reach by relations when there is one) or "scoped" (no caller: the
    workspace ``workspace`` a search was scoped to)."""

    __slots__ = ("how", "kind", "a", "b", "caller_is_a", "depth", "via", "workspace", "also")

    def __init__(self, how, kind=None, a=None, b=None, caller_is_a=None, depth=None, via=(), workspace=None,
                 also=None):  # fmt: skip
        self.how = how
        self.kind = kind
        self.a = a
        self.b = b
        self.caller_is_a = caller_is_a
        self.depth = depth
        self.via = via
        self.workspace = workspace
        self.also = also


class Topology:
    """For one origin repo: {repo id: (distance, Reach)}; distance 0 same repo, 1 direct relation,
    2 two hops, 3 same workspace only (or further relation hops). With no origin but a workspace
    (a caller standing outside every repository), the workspace's repositories at distance 3."""

    def __init__(self, store, origin, workspace=None):
        self.origin = origin
        self.reach = {}
        self.names = {r.id: r.name for r in _repos(store)}
        self._searched = None  # searched_names, once
        if origin is None:
            if workspace is not None:
                ws = _workspace_id(store, workspace, create=False)
                for row in store.all("SELECT repo_id FROM workspace_repos WHERE workspace_id = ?", (ws,)):
                    self.reach[row["repo_id"]] = (3, Reach("scoped", workspace=workspace))
            return
        self.reach[origin.id] = (0, Reach("same"))
        edges = {}
        for row in store.all("SELECT from_repo, kind, to_repo FROM relations ORDER BY id"):
            edges.setdefault(row["from_repo"], []).append(
                (row["to_repo"], row["kind"], row["from_repo"], row["to_repo"])
            )
            edges.setdefault(row["to_repo"], []).append(
                (row["from_repo"], row["kind"], row["from_repo"], row["to_repo"])
            )
        # Breadth-first over relations in both directions, remembering the path for the reason.
        frontier = [(origin.id, [])]
        seen = {origin.id}
        depth = 0
        while frontier:
            depth += 1
            nxt = []
            for node, path in frontier:
                for other, kind, a, b in edges.get(node, ()):
                    if other in seen:
                        continue
                    seen.add(other)
                    hop_path = path + [other]
                    if depth == 1:
                        fact = Reach(
                            "relation", kind, self.names[a], self.names[b], caller_is_a=(a == origin.id)
                        )
                    else:
                        fact = Reach("hops", depth=depth, via=tuple(self.names[x] for x in hop_path[:-1]))
                    self.reach[other] = (min(depth, 3), fact)
                    nxt.append((other, hop_path))
            frontier = nxt
        for row in store.all(
            "SELECT DISTINCT w.name, wr2.repo_id FROM workspace_repos wr1 "
            "JOIN workspace_repos wr2 ON wr2.workspace_id = wr1.workspace_id "
            "JOIN workspaces w ON w.id = wr1.workspace_id WHERE wr1.repo_id = ? ORDER BY w.name",
            (origin.id,),
        ):
            rid = row["repo_id"]
            if rid not in self.reach or self.reach[rid][0] >= 3:
                hops = self.reach.get(rid)
                if hops is None or hops[1].how != "workspace":  # the first shared workspace, by name
                    self.reach[rid] = (
                        3,
                        Reach("workspace", workspace=row["name"], also=hops[1] if hops else None),
                    )

    def repo_ids(self):
        return list(self.reach)

    def searched_names(self):
        """The names in scope, nearest first (a new list each call; ordered once: a Topology is
        kept per store generation and never changes)."""
        if self._searched is None:
            ordered = sorted(self.reach, key=lambda rid: (self.reach[rid][0], self.names.get(rid, "")))
            self._searched = [self.names[rid] for rid in ordered if rid in self.names]
        return list(self._searched)


def reach_text(fact):
    """The words of a Reach: "same repository", "docs-ui uses upload-sdk (direct consumer)",
    "2 hops via docs-ui", "same workspace uploads; 4 hops via ...". The one place they are made."""
    if fact is None:
        return "outside the workspace"
    if fact.how == "same":
        return "same repository"
    if fact.how == "relation":
        return _relation_label(fact.kind, fact.a, fact.b, viewer_is_a=fact.caller_is_a)
    if fact.how == "hops":
        return "%d hops via %s" % (fact.depth, ", ".join(fact.via))
    if fact.how == "scoped":
        return "in workspace %s" % fact.workspace
    text = "same workspace %s" % fact.workspace
    return text + ("; " + reach_text(fact.also) if fact.also is not None else "")
