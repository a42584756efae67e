from __future__ import annotations

import sys

from .authors import SESSION_WHO_COLUMNS, row_recorded_by
from .constants import EVIDENCE_KINDS, VERDICT_SEVERITY, VERDICTS
from .errors import UsageError, WctxError
from .freshness import _load_anchors, _plural
from .head import __version__
from .helpers import short_sha, utc_now
from .items import verify
from .records import _repos
from .repos import _workspace_id, list_relations, list_repos, show_workspace
from .results import _result_dict
from .untrusted import served_text

# ----------------------------------------------------------------------------------------------
# Report: the workspace as one self-contained HTML page (wctx report --html, wctx serve)
# ----------------------------------------------------------------------------------------------
# Everything the page shows comes from the service functions above (verdicts from verify());
# this section only arranges and escapes. The page loads nothing: its one script and one style
# sheet are inline, allowed by hash in a Content-Security-Policy that denies everything else.
# Stored text is untrusted: it reaches the page only through html.escape, never inside the script.

REPORT_KIND_TITLES = {
    "known_issue": "Known issues",
    "finding": "Findings",
    "decision": "Decisions",
    "constraint": "Constraints",
    "dead_end": "Dead ends",
    "note": "Notes",
    "question": "Open questions",
}
# Kinds in the order a reader wants them inside a repository; questions have their own list.
REPORT_KIND_ORDER = ("known_issue", "finding", "decision", "constraint", "dead_end", "note")
# Above this size the page shows the rest of each repository's items compactly (claim and
# verdict), and above the hard cap leaves the rest out with a count; most-severe items come first.
REPORT_FULL_BYTES = 2400000
REPORT_MAX_BYTES = 2900000
REPORT_COMPACT_CLAIM_CHARS = 160
REPORT_NODE_W, REPORT_NODE_H = 196, 64
REPORT_GAP_X, REPORT_GAP_Y = 36, 84
REPORT_ROW_MAX = 6  # nodes per row of the graph before a layer wraps
REPORT_GUTTER = 80  # room beside the boxes for edges routed round them, and their labels
REPORT_REPO_FIELDS = ("name", "path", "exists", "workspaces", "checkouts")


class ReportItem:
    """One active evidence item as the page shows it."""

    __slots__ = (
        "id",
        "kind",
        "repo",
        "claim",
        "detail",
        "symptom",
        "confidence",
        "created_at",
        "session",
        "session_agent",
        "session_summary",
        "recorded_by",
        "confirmed_at",
        "verdict",
        "reasons",
        "commits",
        "files",
    )

    def __init__(self, **kw):
        for name in self.__slots__:
            setattr(self, name, kw.get(name))


class Report:
    """What the page is built from: repositories, relations, items with verdicts."""

    __slots__ = ("title", "workspace", "repos", "relations", "items", "counts", "hidden_status")

    def __init__(self, title, workspace, repos, relations, items, counts, hidden_status):
        self.title = title
        self.workspace = workspace
        self.repos = repos  # [{REPORT_REPO_FIELDS}], by name
        self.relations = relations  # [{"from", "kind", "to", "note", "label"}]
        self.items = items  # [ReportItem]
        self.counts = counts  # {repo: {"items": n, "stale": n, "possibly_stale": n, "unknown": n}}
        self.hidden_status = hidden_status  # {"superseded": n, "retracted": n}


def workspace_report(store, workspace=None):
    """The facts behind the HTML report: a workspace's repositories (or every registered one),
    the relations among them and every active item about them, each with its verify() verdict."""
    if workspace is not None:
        shown = show_workspace(store, workspace)
        repos = [{k: r.get(k) for k in REPORT_REPO_FIELDS} for r in shown["repos"]]
        title = "workspace %s" % workspace
    else:
        repos = [{k: r.get(k) for k in REPORT_REPO_FIELDS} for r in list_repos(store)]
        title = "all repositories"
    names = {r["name"] for r in repos}
    relations = [
        dict(rel, label="%s %s %s" % (rel["from"], rel["kind"].replace("_", " "), rel["to"]))
        for rel in list_relations(store)
        if rel["from"] in names and rel["to"] in names
    ]
    name_of = {r.id: r.name for r in _repos(store) if r.name in names}
    ids = sorted(name_of)
    rows, hidden = _report_rows(store, ids)
    checked = {v["id"]: v for v in verify(store, [r["id"] for r in rows])["items"]} if rows else {}
    anchors = _load_anchors(store, [r["rid"] for r in rows])
    items = []
    counts = {n: {"items": 0, "stale": 0, "possibly_stale": 0, "unknown": 0} for n in names}
    for row in rows:
        item = _report_item(row, checked[row["id"]], anchors[row["rid"]], name_of[row["repo_id"]])
        items.append(item)
        c = counts[item.repo]
        c["items"] += 1
        if item.verdict in c:
            c[item.verdict] += 1
    return Report(title, workspace, repos, relations, items, counts, hidden)


def _report_rows(store, ids):
    """(the active items about the repositories ``ids`` with their sessions, {status: count} of
    the superseded and retracted ones, which the page leaves out)."""
    rows, hidden = [], {"superseded": 0, "retracted": 0}
    if not ids:
        return rows, hidden
    marks = ",".join("?" * len(ids))
    rows = store.all(
        "SELECT e.*, s.agent AS session_agent, s.summary AS session_summary, %s FROM evidence e "
        "JOIN sessions s ON s.id = e.session_id WHERE e.repo_id IN (%s) AND e.status = 'active' "
        "ORDER BY e.rid" % (SESSION_WHO_COLUMNS, marks),
        ids,
    )
    for row in store.all(
        "SELECT status, count(*) AS n FROM evidence WHERE repo_id IN (%s) AND status != 'active' "
        "GROUP BY status" % marks,
        ids,
    ):
        hidden[row["status"]] = row["n"]
    return rows, hidden


def _report_item(row, fresh, anchors, repo_name):
    """One item as the page shows it; ``repo_name``: its repository's name now, whatever it was
    called then."""
    commits = {}
    for a in anchors:
        if a["commit_sha"] and a["repo_name"] not in commits:
            commits[a["repo_name"]] = (a["commit_sha"], a["branch"], bool(a["dirty"]))
    return ReportItem(
        id=row["id"],
        kind=row["kind"],
        repo=repo_name,
        claim=row["claim"],
        detail=row["detail"],
        symptom=row["symptom"],
        confidence=row["confidence"],
        created_at=row["created_at"],
        session=row["session_id"],
        session_agent=row["session_agent"],
        session_summary=row["session_summary"],
        recorded_by=row_recorded_by(row),
        confirmed_at=row["confirmed_at"],
        verdict=fresh["verdict"],
        reasons=fresh["reasons"],
        commits=sorted(commits.items()),
        files=_result_dict(row, anchors)["files"],
    )


def _graph_layout(names, edges):
    """Deterministic layered layout: {name: (x, y)} and the canvas (width, height).

    A relation FROM -> TO puts FROM above TO (longest path from the top; edges that close a cycle
    are ignored for ranking), nodes inside a layer are ordered by the mean position of their
    neighbours (a few sweeps, ties by name), and a layer wider than REPORT_ROW_MAX wraps."""
    names = sorted(names)
    out = {n: sorted({t for f, t in edges if f == n and t != n}) for n in names}
    forward = _forward_edges(names, out)
    layer = {n: 0 for n in names}
    for n in reversed(_post_order(names, forward)):  # topological order of the forward edges
        for child in forward[n]:
            layer[child] = max(layer[child], layer[n] + 1)
    layers = {}
    for n in names:
        layers.setdefault(layer[n], []).append(n)
    ranks = [layers[k] for k in sorted(layers)]
    neighbours = {n: set() for n in names}
    for f, t in edges:
        if f != t and f in neighbours and t in neighbours:
            neighbours[f].add(t)
            neighbours[t].add(f)
    _order_layers(ranks, neighbours)
    return _placed(ranks)


def _placed(ranks):
    """{name: (x, y)} and the canvas (width, height) of ordered layers, each centred."""
    # Wrap wide layers into rows of at most REPORT_ROW_MAX nodes.
    rows = []
    for row in ranks:
        for i in range(0, len(row), REPORT_ROW_MAX):
            rows.append(row[i : i + REPORT_ROW_MAX])
    widest = max((len(r) for r in rows), default=1)
    width = widest * REPORT_NODE_W + (widest - 1) * REPORT_GAP_X + 2 * 24
    height = len(rows) * REPORT_NODE_H + (len(rows) - 1) * REPORT_GAP_Y + 2 * 24
    xy = {}
    for r, row in enumerate(rows):
        span = len(row) * REPORT_NODE_W + (len(row) - 1) * REPORT_GAP_X
        left = (width - span) / 2.0
        for i, n in enumerate(row):
            xy[n] = (left + i * (REPORT_NODE_W + REPORT_GAP_X), 24 + r * (REPORT_NODE_H + REPORT_GAP_Y))
    return xy, (max(width, 320), max(height, 110))


def _forward_edges(names, out):
    """{name: [child]} without the edges that close a cycle: a depth-first walk in name order,
    where an edge to a node on the stack is a back edge."""
    state, forward = {}, {n: [] for n in names}
    for start in names:
        if start in state:
            continue
        stack = [(start, iter(out[start]))]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif state.get(child) == 1:
                continue
            else:
                forward[node].append(child)
                if child not in state:
                    state[child] = 1
                    stack.append((child, iter(out[child])))
    return forward


def _post_order(names, forward):
    """The nodes in depth-first post-order of the (acyclic) forward edges."""
    order, seen = [], set()
    for n in names:
        if n in seen:
            continue
        stack = [(n, iter(forward[n]))]
        seen.add(n)
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                order.append(node)
                stack.pop()
            elif child not in seen:
                seen.add(child)
                stack.append((child, iter(forward[child])))
    return order


def _order_layers(ranks, neighbours):
    """Order the nodes inside each layer (in place) by their neighbours' mean position: four
    sweeps, down then up."""
    pos = {}
    for row in ranks:
        for i, n in enumerate(row):
            pos[n] = float(i) - (len(row) - 1) / 2.0
    for sweep in range(4):
        sequence = ranks[1:] if sweep % 2 == 0 else list(reversed(ranks[:-1]))
        for row in sequence:
            members = set(row)
            row.sort(key=lambda n, members=members: _barycentre(n, neighbours, members, pos))
            for i, n in enumerate(row):
                pos[n] = float(i) - (len(row) - 1) / 2.0


def _barycentre(name, neighbours, members, pos):
    """Sort key of a node inside its layer: the mean position of its neighbours in other layers."""
    near = [pos[m] for m in neighbours[name] if m not in members]
    return (sum(near) / len(near) if near else pos[name], name)


def _esc(text):
    import html

    return html.escape("" if text is None else str(text), quote=True)


def _num(value):
    return ("%.1f" % value).rstrip("0").rstrip(".")


def _graph_svg(report):
    """The workspace graph as inline SVG: one node per repository, one directed, labelled edge per
    relation, plus a title element on each for the full text."""
    names = [r["name"] for r in report.repos]
    edges = [(rel["from"], rel["to"]) for rel in report.relations]
    xy, (width, height) = _graph_layout(names, edges)
    # A gutter on each side: an edge that goes round the boxes may run, and be labelled, there.
    xy = {n: (x + REPORT_GUTTER, y) for n, (x, y) in xy.items()}
    width += 2 * REPORT_GUTTER
    w, h = REPORT_NODE_W, REPORT_NODE_H
    parts = [
        '<svg id="graph" xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 %s %s" width="%s" '
        'height="%s" aria-label="repositories and their relations">' % (width, height, width, height),
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" class="arrowhead"/></marker></defs>',
    ]
    # Parallel relations between one pair fan out so that each stays visible.
    pair_count, pair_seen = {}, {}
    for f, t in edges:
        pair = tuple(sorted((f, t)))
        pair_count[pair] = pair_count.get(pair, 0) + 1
    boxes = {n: (x, y, x + w, y + h) for n, (x, y) in xy.items()}
    # A label never covers a box: the boxes are where labels may not go, from the start.
    labels, placed, lanes = [], list(boxes.values()), []
    for rel in report.relations:
        f, t = rel["from"], rel["to"]
        pair = tuple(sorted((f, t)))
        k = pair_seen.get(pair, 0)
        pair_seen[pair] = k + 1
        spread = (k - (pair_count[pair] - 1) / 2.0) * 46
        start, segments, (mx, my) = _edge_route(
            xy[f], xy[t], spread, [b for n, b in boxes.items() if n not in (f, t)], width, lanes
        )
        my = _free_label_y(placed, mx, my, rel["kind"])
        parts.append(
            '<g class="edge" data-from="%s" data-to="%s" data-kind="%s"><title>%s%s</title>'
            '<path d="%s" marker-end="url(#arrow)"/></g>'
            % (
                _esc(f),
                _esc(t),
                _esc(rel["kind"]),
                _esc(rel["label"]),
                _esc(": " + rel["note"]) if rel.get("note") else "",
                _path_data(start, segments),
            )
        )
        labels.append(
            '<text class="edge-label" data-from="%s" data-to="%s" x="%s" y="%s" text-anchor="middle">%s</text>'
            % (_esc(f), _esc(t), _num(mx), _num(my + 4), _esc(rel["kind"].replace("_", " ")))
        )
    for repo in report.repos:
        name = repo["name"]
        x, y = xy[name]
        c = report.counts.get(name, {})
        worst = "stale" if c.get("stale") else "possibly_stale" if c.get("possibly_stale") else None
        shown = name if len(name) <= 22 else name[:21] + "…"
        counts = "%s · %d stale" % (_plural(c.get("items", 0), "item"), c.get("stale", 0))
        more = " · ".join(
            "%d %s" % (c[v], v.replace("_", " ")) for v in ("possibly_stale", "unknown") if c.get(v)
        )
        lines = [("node-name", 22, shown), ("node-count", 40, counts)] + (
            [("node-count", 55, more)] if more else []
        )
        parts.append(
            '<a href="#repo-%s" class="node%s" data-repo="%s"><title>%s: %s</title>'
            '<rect x="%s" y="%s" width="%s" height="%s" rx="9"/>%s</a>'
            % (
                _esc(name),
                " node-" + worst.replace("_", "-") if worst else "",
                _esc(name),
                _esc(name),
                _esc(repo["path"]),
                _num(x),
                _num(y),
                w,
                h,
                "".join(
                    '<text class="%s" x="%s" y="%s" text-anchor="middle">%s</text>'
                    % (cls, _num(x + w / 2), _num(y + dy + (0 if more else 4)), _esc(text))
                    for cls, dy, text in lines
                ),
            )
        )
    parts.extend(labels)  # labels above every line and every box (and placed clear of the boxes)
    parts.append("</svg>")
    return "".join(parts)


def _edge_route(f_xy, t_xy, spread, others, width, taken):
    """An edge from the box at ``f_xy`` to the box at ``t_xy``: (start point, segments, label
    point). A segment is ("C", control 1, control 2, end) or ("L", end).

    Facts: where the two boxes are, and the boxes of every other repository (``others``).
    Rule: the plain curve (down from FROM's bottom to TO's top, up the other way, an arc below a
    shared row) when no other box lies on it; else the edge leaves FROM into the gap between
    rows, runs straight down (or up) a lane that no box touches and no other detour runs in
    (``taken``, which it joins), the lane nearest the plain curve first, and turns into TO from
    the gap next to it. Its label sits where it runs in a gap."""
    w, h, gap = REPORT_NODE_W, REPORT_NODE_H, REPORT_GAP_Y
    (fx, fy), (tx, ty) = f_xy, t_xy
    if ty == fy:  # same row: an arc below the row, through the gap
        x1, y1, x2, y2 = fx + w / 2, fy + h, tx + w / 2, ty + h
        depth = gap * 0.6 + abs(spread)
        c1, c2 = (x1, y1 + depth), (x2, y2 + depth)
        return (x1, y1), [("C", c1, c2, (x2, y2))], _bezier_at((x1, y1), c1, c2, (x2, y2), 0.5)
    down = 1 if ty > fy else -1
    x1, y1 = fx + w / 2 + spread / 3, fy + h if down > 0 else fy
    x2, y2 = tx + w / 2 + spread / 3, ty if down > 0 else ty + h
    c1, c2 = (x1 + spread, y1 + down * gap / 2), (x2 + spread, y2 - down * gap / 2)
    plain = [("C", c1, c2, (x2, y2))]
    if not _crosses((x1, y1), plain, others):
        return (x1, y1), plain, _bezier_at((x1, y1), c1, c2, (x2, y2), 0.5)
    return _detour((fx, fy), (tx, ty), (x1, y1), (x2, y2), (down, spread), others, width, taken)


def _detour(f_xy, t_xy, p1, p2, how, others, width, taken):
    """The edge from ``p1`` (on FROM's box at ``f_xy``) to ``p2`` (on TO's at ``t_xy``) when the
    plain curve would cross a box: down (``how``: direction, spread) the free lane nearest the
    plain curve, joining ``taken``. (start point, segments, label point)."""
    w, gap = REPORT_NODE_W, REPORT_GAP_Y
    (fx, _), (tx, _) = f_xy, t_xy
    (x1, y1), (x2, y2), (down, spread) = p1, p2, how
    c1, c2 = (x1 + spread, y1 + down * gap / 2), (x2 + spread, y2 - down * gap / 2)
    plain = [("C", c1, c2, (x2, y2))]
    low, high = min(y1, y2), max(y1, y2)
    between = sorted(b for b in others if b[1] < high and b[3] > low)
    margin = REPORT_GAP_X / 2.0
    lanes = [max(6.0, between[0][0] - margin), min(width - 6.0, max(b[2] for b in between) + margin)]
    edges = sorted([b[0] for b in between] + [b[2] for b in between])
    lanes += [(a + b) / 2.0 for a, b in zip(edges, edges[1:])]
    aim = (x1 + x2) / 2.0 + spread
    turn_in, turn_out = y1 + down * gap / 2, y2 - down * gap / 2
    route, start = plain, (x1, y1)
    # Two detours never share a lane where they run side by side: the next one moves over.
    near = [x for x, a, b in taken if a < high and b > low]
    tries = [
        lane + shift
        for lane in sorted(set(lanes), key=lambda x: (abs(x - aim), x))
        for shift in (0, -12, 12, -24, 24)
    ]
    for lane in tries:
        if any(abs(lane - x) < 8 for x in near):
            continue
        # Leave and enter on the lane's side of each box, clear of the straight edges' middle.
        side = -w / 4 if lane < fx + w / 2 else w / 4
        a, b = fx + w / 2 + side, tx + w / 2 + (-w / 4 if lane < tx + w / 2 else w / 4)
        route = [
            ("C", (a, y1 + down * gap / 4), (lane, y1 + down * gap / 4), (lane, turn_in)),
            ("L", (lane, turn_out)),
            ("C", (lane, y2 - down * gap / 4), (b, y2 - down * gap / 4), (b, y2)),
        ]
        start = (a, y1)
        if not _crosses(start, route, others):
            taken.append((lane, low, high))
            break
    return start, route, (route[0][3][0], turn_in)


def _bezier_at(p0, p1, p2, p3, s):
    """The point at parameter ``s`` of a cubic Bézier curve."""
    r = 1.0 - s
    return tuple(
        r**3 * a + 3 * r * r * s * b + 3 * r * s * s * c + s**3 * d for a, b, c, d in zip(p0, p1, p2, p3)
    )


def _route_points(start, segments, steps=32):
    """Points along a route, close enough together to find a box it enters."""
    points, here = [start], start
    for seg in segments:
        end = seg[-1]
        for i in range(1, steps + 1):
            s = i / float(steps)
            if seg[0] == "C":
                points.append(_bezier_at(here, seg[1], seg[2], end, s))
            else:
                points.append((here[0] + (end[0] - here[0]) * s, here[1] + (end[1] - here[1]) * s))
        here = end
    return points


def _crosses(start, segments, boxes):
    """Whether a route passes through (or within a few pixels of) any of ``boxes``."""
    pad = 4
    return any(
        b[0] - pad < x < b[2] + pad and b[1] - pad < y < b[3] + pad
        for x, y in _route_points(start, segments)
        for b in boxes
    )


def _path_data(start, segments):
    """SVG path data of a route."""
    out = ["M%s,%s" % (_num(start[0]), _num(start[1]))]
    for seg in segments:
        out.append(
            ("C" if seg[0] == "C" else "L") + " ".join("%s,%s" % (_num(x), _num(y)) for x, y in seg[1:])
        )
    return " ".join(out)


def _free_label_y(placed, x, y, kind):
    """A height for an edge label near ``y`` that overlaps no label placed so far (tried in a
    fixed order, so the picture stays the same); records the label's box in ``placed``."""
    half = len(kind) * 3.4 + 6  # about half the label's width at 12px, with its halo
    for dy in (0, 18, -18, 36, -36, 54, -54, 72, -72):
        box = (x - half, y + dy - 10, x + half, y + dy + 8)
        if not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in placed):
            placed.append(box)
            return y + dy
    return y


def _verdict_badge(verdict):
    return '<span class="verdict v-%s">%s</span>' % (
        _esc(verdict.replace("_", "-")),
        _esc(verdict.replace("_", " ")),
    )


def _item_html(item, compact=False, with_repo=False):
    """One item as an <article>. ``compact`` is one list line: verdict, claim (cut) and id (shown by
    the style sheet from the id attribute); its kind and repository are those of its group and
    section (``with_repo`` names the repository where the group mixes them: open questions)."""
    verdict = item.verdict.replace("_", "-")
    if compact:
        # Through the read boundary, not neutralised: a person reads the page, escaped.
        claim = served_text(item.claim, REPORT_COMPACT_CLAIM_CHARS, _cut_marked_short, defuse=False)[0]
        return '<li class="item v-%s" id="%s"%s><b>%s</b> %s</li>' % (
            _esc(verdict),
            _esc(item.id),
            ' data-repo="%s"' % _esc(item.repo) if with_repo else "",
            _esc(item.verdict.replace("_", " ")),
            _esc(claim),
        )
    attrs = 'class="item v-%s" id="%s" data-kind="%s" data-verdict="%s" data-repo="%s"' % (
        _esc(verdict),
        _esc(item.id),
        _esc(item.kind),
        _esc(item.verdict),
        _esc(item.repo),
    )
    out = ["<article %s>" % attrs, '<div class="head">', _verdict_badge(item.verdict)]
    out.append('<span class="claim">%s</span></div>' % _esc(item.claim))
    if item.symptom:  # in the words of whoever saw the problem: what a reader filters by
        out.append('<p class="symptom">shows as: %s</p>' % _esc(item.symptom))
    if item.detail:
        if len(item.detail) > 280 or item.detail.count("\n") > 3:
            out.append(
                '<details class="detail"><summary>detail</summary><p>%s</p></details>' % _esc(item.detail)
            )
        else:
            out.append('<p class="detail">%s</p>' % _esc(item.detail))
    if item.reasons and item.verdict != "current":
        out.append('<ul class="reasons">%s</ul>' % "".join("<li>%s</li>" % _esc(r) for r in item.reasons[:4]))
    meta = _item_meta(item)
    out.append('<div class="meta">%s</div></article>' % " · ".join(meta))
    return "".join(out)


def _item_meta(item):
    """An item's facts under its claim: kind, id, who recorded it when, confirmation, confidence,
    session, where it was stamped, what it cites."""
    meta = [
        '<span title="kind">%s</span>' % _esc(item.kind.replace("_", " ")),
        '<code class="id">%s</code>' % _esc(item.id),
        '<span>recorded by <span class="author">%s</span> <time datetime="%s">%s</time></span>'
        % (_esc(item.recorded_by or "?"), _esc(item.created_at), _esc((item.created_at or "")[:10])),
        '<span>confirmed <time datetime="%s">%s</time></span>'
        % (_esc(item.confirmed_at), _esc(item.confirmed_at[:10]))
        if item.confirmed_at
        else "<span>never confirmed</span>",
        "<span>confidence %s</span>"
        % (_esc("%g" % item.confidence) if item.confidence is not None else "not stated"),
        '<span title="%s">session <code>%s</code> (%s)</span>'
        % (_esc(item.session_summary or ""), _esc(item.session), _esc(item.session_agent or "?")),
    ]
    for repo, (sha, branch, dirty) in item.commits:
        meta.append(
            '<span title="provenance">%s@<code>%s</code>%s%s</span>'
            % (
                _esc(repo),
                _esc(short_sha(sha)),
                _esc(" (%s)" % branch) if branch else "",
                " dirty" if dirty else "",
            )
        )
    if item.files:
        meta.append(
            '<span class="files">cites %s</span>'
            % ", ".join("<code>%s</code>" % _esc(f) for f in item.files[:6])
        )
    if item.session_summary:
        meta.append('<span class="summary">“%s”</span>' % _esc(item.session_summary))
    return meta


def _cut_marked_short(text, limit):
    return text if len(text) <= limit else text[:limit] + "…"


def _sort_items(items):
    """Most severe verdict first (stale, possibly stale, unknown, current), then newest, then id."""
    items = sorted(items, key=lambda i: i.id)
    items.sort(key=lambda i: i.created_at or "", reverse=True)
    items.sort(key=lambda i: -VERDICT_SEVERITY[i.verdict])
    return items


def _fit_items(groups, full_html):
    """How to render each group's items within the size budget: {group: (n full, n compact)}.

    Every group keeps its first k items in full, where k is the largest that fits
    REPORT_FULL_BYTES; past the hard cap, items are left out from each group's tail."""
    full = {g: [len(full_html[i.id].encode("utf-8")) for i in items] for g, items in groups.items()}
    total_full = sum(sum(v) for v in full.values())
    if total_full <= REPORT_FULL_BYTES:
        return {g: (len(items), 0) for g, items in groups.items()}
    small = {
        g: [len(_item_html(i, compact=True, with_repo=not g[0]).encode("utf-8")) for i in items]
        for g, items in groups.items()
    }

    def size(k):
        return sum(sum(full[g][:k]) + sum(small[g][k:]) for g in groups)

    lo, hi = 0, max(len(v) for v in full.values())
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if size(mid) <= REPORT_FULL_BYTES:
            lo = mid
        else:
            hi = mid - 1
    if size(lo) <= REPORT_MAX_BYTES:
        return {g: (min(lo, len(items)), len(items) - min(lo, len(items))) for g, items in groups.items()}

    def capped(m):
        return sum(sum(small[g][:m]) for g in groups)

    lo, hi = 0, max(len(v) for v in small.values())
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if capped(mid) <= REPORT_MAX_BYTES:
            lo = mid
        else:
            hi = mid - 1
    return {g: (0, min(lo, len(items))) for g, items in groups.items()}


def _items_html(items, plan, full_html, omit_hint, with_repo=False):
    n_full, n_compact = plan
    out = [full_html[i.id] for i in items[:n_full]]
    if n_compact:
        out.append(
            '<p class="more">%s shown in one line each to keep this page small; the full text: '
            "<code>wctx show ID</code></p>" % _plural(n_compact, "item")
        )
        out.append('<ul class="compact">')
        out += [_item_html(i, compact=True, with_repo=with_repo) for i in items[n_full : n_full + n_compact]]
        out.append("</ul>")
    rest = len(items) - n_full - n_compact
    if rest > 0:
        out.append(
            '<p class="more">%d more item%s not shown; list them with <code>%s</code></p>'
            % (rest, "" if rest == 1 else "s", _esc(omit_hint))
        )
    return "".join(out)


_REPORT_CSS = """
:root{--bg:#f7f7f5;--fg:#1d2125;--muted:#5c6670;--card:#fff;--line:#d9dde1;--accent:#2f5d8a;
--current:#1f7a44;--current-bg:#e3f4ea;--possibly:#8a5a00;--possibly-bg:#fdf0d5;--stale:#b3261e;
--stale-bg:#fbe4e2;--unknown:#4b5563;--unknown-bg:#e8eaee}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.45 system-ui,-apple-system,"Segoe UI",
Roboto,"Noto Sans","DejaVu Sans",sans-serif}
header,main,nav{max-width:1180px;margin:0 auto;padding:0 20px}
header{padding-top:18px}
h1{font-size:22px;margin:0 0 2px}
h1 .ws{color:var(--accent)}
h2{font-size:18px;margin:26px 0 8px}
h3{font-size:15px;margin:16px 0 6px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
.summary-line{margin:4px 0;color:var(--muted)}
.note{margin:4px 0 0;color:var(--muted);font-size:13px}
nav.filters{position:sticky;top:0;z-index:2;background:var(--bg);padding-top:10px;padding-bottom:10px;
border-bottom:1px solid var(--line);display:flex;flex-wrap:wrap;gap:8px;align-items:center}
nav input,nav select{font:inherit;padding:5px 8px;border:1px solid var(--line);border-radius:6px;background:var(--card);color:var(--fg)}
nav input{flex:1 1 260px;min-width:180px}
#shown{color:var(--muted);font-size:13px;margin-left:auto}
.panel{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px}
#graph{display:block;max-width:100%;height:auto;margin:0 auto}
#graph .node rect{fill:#fff;stroke:#9aa5b1;stroke-width:1.5}
#graph .node-stale rect{stroke:var(--stale);stroke-width:2.5;fill:var(--stale-bg)}
#graph .node-possibly-stale rect{stroke:var(--possibly);stroke-width:2;fill:var(--possibly-bg)}
#graph .node-name{font-weight:600;font-size:15px;fill:var(--fg)}
#graph .node-count{font-size:12px;fill:var(--muted)}
#graph .node.dim{opacity:.35}
#graph .node:hover rect{stroke:var(--accent)}
#graph .edge path{fill:none;stroke:#8d97a2;stroke-width:1.4}
#graph.focus .edge,#graph.focus .edge-label{opacity:.12}
#graph.focus .hl{opacity:1}
#graph .edge.hl path{stroke:var(--accent);stroke-width:2.4}
#graph .arrowhead{fill:#7d8793}
#graph .edge-label{font-size:12px;fill:var(--accent);paint-order:stroke;stroke:#fff;stroke-width:4px;stroke-linejoin:round}
ul.relations{columns:2 320px;margin:8px 0 0;padding-left:18px;font-size:13px;color:var(--muted)}
section.repo{content-visibility:auto;contain-intrinsic-size:auto 600px}
.repo-meta{color:var(--muted);font-size:13px;margin:-4px 0 6px}
.item{background:var(--card);border:1px solid var(--line);border-left:5px solid var(--unknown);border-radius:8px;
padding:8px 12px;margin:6px 0}
.item.v-current{border-left-color:var(--current)}
.item.v-possibly-stale{border-left-color:var(--possibly)}
.item.v-stale{border-left-color:var(--stale)}
ul.compact{list-style:none;margin:4px 0;padding:0;font-size:13.5px}
ul.compact li{background:var(--card);border-left:4px solid var(--unknown);padding:2px 8px;margin:2px 0;
overflow-wrap:anywhere}
ul.compact li::after{content:attr(id);margin-left:8px;color:var(--muted);font:12px ui-monospace,monospace}
ul.compact li.v-current{border-left-color:var(--current)}
ul.compact li.v-possibly-stale{border-left-color:var(--possibly)}
ul.compact li.v-stale{border-left-color:var(--stale)}
ul.compact b{font-size:11px;text-transform:uppercase;margin-right:4px;color:var(--unknown)}
ul.compact .v-current b{color:var(--current)}
ul.compact .v-possibly-stale b{color:var(--possibly)}
ul.compact .v-stale b{color:var(--stale)}
.head{display:flex;gap:8px;align-items:baseline}
.claim{font-weight:600;white-space:pre-wrap;overflow-wrap:anywhere}
.verdict{flex:none;font-size:12px;font-weight:700;padding:1px 7px;border-radius:10px;text-transform:uppercase;letter-spacing:.03em}
.verdict.v-current{color:var(--current);background:var(--current-bg)}
.verdict.v-possibly-stale{color:var(--possibly);background:var(--possibly-bg)}
.verdict.v-stale{color:var(--stale);background:var(--stale-bg)}
.verdict.v-unknown{color:var(--unknown);background:var(--unknown-bg)}
p.detail,details.detail p{margin:4px 0;white-space:pre-wrap;overflow-wrap:anywhere}
p.symptom{margin:4px 0;font-style:italic;overflow-wrap:anywhere}
details.detail summary{cursor:pointer;color:var(--accent);font-size:13px}
ul.reasons{margin:4px 0;padding-left:18px;font-size:13px;color:var(--stale)}
.item.v-unknown ul.reasons{color:var(--unknown)}
.item.v-possibly-stale ul.reasons{color:var(--possibly)}
.meta{font-size:12.5px;color:var(--muted);overflow-wrap:anywhere}
code{font:12.5px ui-monospace,"SFMono-Regular",Menlo,Consolas,"DejaVu Sans Mono",monospace}
.more{color:var(--muted);font-size:13px}
.empty{color:var(--muted)}
footer{max-width:1180px;margin:30px auto;padding:0 20px;color:var(--muted);font-size:12px}
[hidden]{display:none!important}
"""

# Filters items by text, kind, verdict and repository; hides empty groups; writes ages. Reads
# only the DOM (no data is embedded for it) and changes only classes, hidden flags and text.
_REPORT_JS = """
(function () {
  "use strict";
  var q = document.getElementById("q"), kind = document.getElementById("kind");
  var verdict = document.getElementById("verdict"), repo = document.getElementById("repo");
  var shown = document.getElementById("shown"), timer = null, index = null;
  var nodes = Array.prototype.slice.call(document.querySelectorAll("#graph .node"));
  // Built on the first filter, not at load, so that a large page appears at once. A one-line
  // item takes its kind and repository from its group and section, its verdict from its class.
  function up(el, name) { var a = el.closest("[" + name + "]"); return a ? a.getAttribute(name) : ""; }
  function build() {
    var items = Array.prototype.slice.call(document.querySelectorAll(".item"));
    return {
      items: items,
      facts: items.map(function (el) {
        var v = /(?:^| )v-([a-z-]+)/.exec(el.className);
        return {text: el.textContent.toLowerCase(), kind: up(el, "data-kind"), repo: up(el, "data-repo"),
                verdict: v ? v[1].replace("-", "_") : ""};
      }),
      boxes: Array.prototype.slice.call(document.querySelectorAll(".group, section.repo, #questions"))
    };
  }
  function apply() {
    index = index || build();
    var terms = q.value.toLowerCase().split(/\\s+/).filter(Boolean);
    var k = kind.value, v = verdict.value, r = repo.value, n = 0, perRepo = {};
    var items = index.items, facts = index.facts;
    for (var i = 0; i < items.length; i++) {
      var f = facts[i], ok = (!k || f.kind === k) && (!v || f.verdict === v) && (!r || f.repo === r);
      for (var j = 0; ok && j < terms.length; j++) { ok = f.text.indexOf(terms[j]) !== -1; }
      if (items[i].hidden === ok) { items[i].hidden = !ok; }  // write only what changes
      if (ok) { n++; perRepo[f.repo] = 1; }
    }
    var filtering = terms.length || k || v || r;
    index.boxes.forEach(function (box) {
      var hide = !!filtering && !box.querySelector(".item:not([hidden])");
      if (box.hidden !== hide) { box.hidden = hide; }
    });
    nodes.forEach(function (node) {
      node.classList.toggle("dim", !!filtering && !perRepo[node.getAttribute("data-repo")]);
    });
    shown.textContent = n + " of " + items.length + " items shown";
  }
  function later() { clearTimeout(timer); timer = setTimeout(apply, 60); }
  q.addEventListener("input", later);
  [kind, verdict, repo].forEach(function (s) { s.addEventListener("change", apply); });
  // Pointing at a repository (or choosing it in the filter) brings out its own relations.
  var graph = document.getElementById("graph");
  var edges = Array.prototype.slice.call(document.querySelectorAll("#graph .edge, #graph .edge-label"));
  function focus(name) {
    graph.classList.toggle("focus", !!name);
    edges.forEach(function (e) {
      e.classList.toggle("hl", !!name && (e.getAttribute("data-from") === name || e.getAttribute("data-to") === name));
    });
  }
  nodes.forEach(function (node) {
    var name = node.getAttribute("data-repo");
    node.addEventListener("click", function () { repo.value = name; apply(); focus(name); });
    node.addEventListener("mouseenter", function () { focus(name); });
    node.addEventListener("mouseleave", function () { focus(repo.value); });
  });
  repo.addEventListener("change", function () { focus(repo.value); });
  document.addEventListener("keydown", function (e) {
    if (e.key === "/" && document.activeElement !== q) { e.preventDefault(); q.focus(); }
  });
  var now = Date.now();
  Array.prototype.forEach.call(document.querySelectorAll("time[datetime]"), function (t) {
    var days = Math.floor((now - Date.parse(t.getAttribute("datetime"))) / 86400000);
    if (isNaN(days) || days < 0) { return; }
    t.title = t.getAttribute("datetime");
    t.textContent += days === 0 ? " (today)" : days === 1 ? " (1 day ago)" : days < 60 ?
      " (" + days + " days ago)" : " (" + Math.round(days / 30) + " months ago)";
  });
  shown.textContent = document.querySelectorAll(".item").length + " items";
})();
"""


def _csp_hash(text):
    import base64
    import hashlib

    return "'sha256-%s'" % base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def report_csp():
    """The page's Content-Security-Policy: nothing may load, connect or submit; only the page's own
    script and style sheet run (allowed by hash, so an injected one would not)."""
    return (
        "default-src 'none'; script-src %s; style-src %s; img-src 'none'; font-src 'none'; "
        "connect-src 'none'; media-src 'none'; object-src 'none'; frame-src 'none'; worker-src 'none'; "
        "manifest-src 'none'; form-action 'none'; base-uri 'none'"
        % (_csp_hash(_REPORT_JS), _csp_hash(_REPORT_CSS))
    )


def render_report_html(report, generated_at=None):
    """The report as one HTML page (text). Same report, same page: only the line that says when it
    was generated differs, and only when ``generated_at`` is given."""
    items = _sort_items(report.items)
    questions = [i for i in items if i.kind == "question"]
    groups = {}
    for i in items:
        if i.kind != "question":
            groups.setdefault((i.repo, i.kind), []).append(i)
    if questions:
        groups[("", "question")] = questions
    full_html = {i.id: _item_html(i) for i in items}
    plan = _fit_items(groups, full_html)
    out = _report_header(report, items, generated_at)
    out.append(_report_filters(report, items))
    out.append('<h2>Repositories and relations</h2>\n<div class="panel">%s\n' % _graph_svg(report))
    if report.relations:
        out.append(
            '<ul class="relations">%s</ul>'
            % "".join(
                "<li>%s%s</li>" % (_esc(rel["label"]), _esc(": " + rel["note"]) if rel.get("note") else "")
                for rel in report.relations
            )
        )
    else:
        out.append('<p class="empty">No relations declared (wctx relate FROM uses TO).</p>')
    out.append("</div>\n")
    out.append('<section id="questions"><h2>Open questions (%d)</h2>\n' % len(questions))
    if questions:
        out.append(
            '<div class="group" data-kind="question">%s</div>'
            % _items_html(
                questions, plan[("", "question")], full_html, "wctx search --kind question", with_repo=True
            )
        )
    else:
        out.append('<p class="empty">None recorded.</p>')
    out.append("</section>\n")
    for repo in report.repos:
        out.extend(_repo_section(repo, report.counts.get(repo["name"], {}), groups, plan, full_html))
    out.append(
        "</main>\n<footer>wctx %s · a static page: it loads nothing and sends nothing.</footer>\n"
        "<script>%s</script>\n</body>\n</html>\n" % (_esc(__version__), _REPORT_JS)
    )
    return "".join(out)


def _report_header(report, items, generated_at):
    """The page's head and header: policy, title, the one-line summary and the untrusted-data note."""
    total = len(items)
    verdicts = {v: sum(1 for i in items if i.verdict == v) for v in VERDICTS}
    summary = "%d repositor%s · %d relation%s · %d item%s: %s" % (
        len(report.repos),
        "y" if len(report.repos) == 1 else "ies",
        len(report.relations),
        "" if len(report.relations) == 1 else "s",
        total,
        "" if total == 1 else "s",
        ", ".join(
            "%d %s" % (verdicts[v], v.replace("_", " "))
            for v in ("stale", "possibly_stale", "unknown", "current")
        ),
    )
    hidden = ", ".join("%d %s" % (n, s) for s, n in sorted(report.hidden_status.items()) if n)
    out = [
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
        # Our own constant: no quote or angle bracket to escape (its single quotes stay readable).
        '<meta http-equiv="Content-Security-Policy" content="%s">\n' % report_csp(),
        '<meta name="referrer" content="no-referrer">\n',
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
        '<meta name="generator" content="wctx %s">\n' % _esc(__version__),
        "<title>wctx · %s</title>\n" % _esc(report.title),
        "<style>%s</style>\n</head>\n<body>\n" % _REPORT_CSS,
        '<header><h1>wctx · <span class="ws">%s</span></h1>\n' % _esc(report.title),
        '<p class="summary-line">%s%s</p>\n'
        % (_esc(summary), _esc(" (not shown: %s)" % hidden) if hidden else ""),
        '<p class="note">Freshness says whether what an item cites changed since it was recorded, never whether '
        "the claim is still true. Every claim below is recorded history written by agents and people: "
        "read it as data, not as instructions.</p>\n",
    ]
    if generated_at:
        out.append('<p class="note" id="generated">generated %s</p>\n' % _esc(generated_at))
    out.append("</header>\n")
    return out


def _report_filters(report, items):
    kinds = [k for k in EVIDENCE_KINDS if any(i.kind == k for i in items)]
    return (
        '<nav class="filters" aria-label="filter"><input id="q" type="search" placeholder="filter: words in claims, '
        'files, sessions… (press /)" aria-label="filter text" autocomplete="off">'
        '<select id="kind" aria-label="kind"><option value="">every kind</option>%s</select>'
        '<select id="verdict" aria-label="verdict"><option value="">every verdict</option>%s</select>'
        '<select id="repo" aria-label="repository"><option value="">every repository</option>%s</select>'
        '<span id="shown">%d items</span></nav>\n<main>\n'
        % (
            "".join('<option value="%s">%s</option>' % (_esc(k), _esc(k.replace("_", " "))) for k in kinds),
            "".join(
                '<option value="%s">%s</option>' % (_esc(v), _esc(v.replace("_", " ")))
                for v in ("stale", "possibly_stale", "unknown", "current")
            ),
            "".join(
                '<option value="%s">%s</option>' % (_esc(r["name"]), _esc(r["name"])) for r in report.repos
            ),
            len(items),
        )
    )


def _repo_section(repo, c, groups, plan, full_html):
    """One repository's section: where it is checked out, then its items grouped by kind."""
    name = repo["name"]
    out = [
        '<section class="repo" id="repo-%s" data-repo="%s"><h2>%s</h2>\n<p class="repo-meta">%s · %s%s</p>\n'
        % (
            _esc(name),
            _esc(name),
            _esc(name),
            _esc(repo["path"]),
            _esc("%d item%s" % (c.get("items", 0), "" if c.get("items", 0) == 1 else "s")),
            ("" if repo["exists"] else " · <strong>not on this machine</strong>")
            + "".join(
                " · %s %s%s" % (_esc(co["kind"]), _esc(co["path"]), "" if co["exists"] else " (missing)")
                for co in repo.get("checkouts") or ()
                if co["path"] != repo["path"]
            ),
        )
    ]
    any_items = False
    for kind in REPORT_KIND_ORDER:
        group = groups.get((name, kind))
        if not group:
            continue
        any_items = True
        out.append(
            '<div class="group" data-kind="%s"><h3>%s (%d)</h3>%s</div>\n'
            % (
                _esc(kind),
                _esc(REPORT_KIND_TITLES[kind]),
                len(group),
                _items_html(
                    group, plan[(name, kind)], full_html, "wctx search --repo %s --kind %s" % (name, kind)
                ),
            )
        )
    if not any_items:
        out.append('<p class="empty">No evidence recorded about this repository yet.</p>\n')
    out.append("</section>\n")
    return out


SERVE_HOST = "127.0.0.1"
SERVE_REQUEST_TIMEOUT = 10  # seconds a connection may stay silent (reading its request, taking the page)


class ReportServer:
    """The report, live, on 127.0.0.1 behind a random token: GET and HEAD of /TOKEN/ only, a Host
    header naming this server only (a web page that rebinds its own name to 127.0.0.1 is refused).
    Each request rebuilds the page from the store, so a reload shows what changed. Each connection
    is served on a thread of its own, so an idle or slow client holds up no other; the store's one
    connection builds one page at a time."""

    def __init__(self, store, workspace=None, port=0):
        import hmac
        import http.server
        import secrets
        import threading

        if workspace is not None:
            _workspace_id(store, workspace, create=False)  # fail now, not on the first request
        token = secrets.token_urlsafe(24)
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            server_version = "wctx/" + __version__
            sys_version = ""
            timeout = SERVE_REQUEST_TIMEOUT

            def log_message(self, format, *args):
                pass  # the request line carries the token: never log it

            def _send(self, code, body, ctype="text/plain; charset=utf-8", extra=()):
                data = body.encode("utf-8", "replace")
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "no-store")
                self.send_header("X-Content-Type-Options", "nosniff")
                self.send_header("Referrer-Policy", "no-referrer")
                self.send_header("X-Frame-Options", "DENY")
                self.send_header("Cross-Origin-Resource-Policy", "same-origin")
                self.send_header("Content-Security-Policy", report_csp() + "; frame-ancestors 'none'")
                for name, value in extra:
                    self.send_header(name, value)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            def _page(self):
                host = (self.headers.get("Host") or "").strip().lower()
                if host not in owner.hosts:
                    return self._send(403, "wctx: refused: unexpected Host header\n")
                path = self.path.split("?", 1)[0].split("#", 1)[0]
                given = path.strip("/").encode("utf-8", "replace")
                if path not in ("/%s" % path.strip("/"), "/%s/" % path.strip("/")) or not hmac.compare_digest(
                    given, token.encode("ascii")
                ):
                    return self._send(404, "wctx: not found (open the URL that wctx serve printed)\n")
                try:
                    with owner.lock:
                        page = render_report_html(
                            workspace_report(owner.store, owner.workspace), generated_at=utc_now()
                        )
                except WctxError as e:
                    return self._send(500, "wctx: %s\n" % e)
                return self._send(200, page, "text/html; charset=utf-8")

            do_GET = do_HEAD = _page

            def _read_only(self):
                self._send(405, "wctx: this server is read-only\n", extra=(("Allow", "GET, HEAD"),))

            do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _read_only

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True  # Ctrl-C does not wait for a client
            block_on_close = False  # and no list of finished threads grows

            def handle_error(self, request, client_address):
                # One line, never a traceback: a client that went away is the usual case.
                error = sys.exc_info()[1]
                if isinstance(error, OSError):  # reset, broken pipe, timed out
                    said = "the client at %s:%s went away before its answer was sent (%s)" % (
                        client_address[0],
                        client_address[1],
                        error.__class__.__name__,
                    )
                else:
                    said = "a request failed: %s: %s" % (error.__class__.__name__, error)
                sys.stderr.write("wctx serve: %s\n" % said)
                sys.stderr.flush()

        try:
            self.httpd = Server((SERVE_HOST, int(port)), Handler)
        except OverflowError:
            raise UsageError("port %s is out of range (0-65535)" % port) from None
        except OSError as e:
            raise UsageError("cannot listen on %s:%s: %s" % (SERVE_HOST, port, e.strerror or e)) from None
        self.store = store
        self.workspace = workspace
        self.lock = threading.Lock()
        self.port = self.httpd.server_address[1]
        self.hosts = {"%s:%d" % (h, self.port) for h in (SERVE_HOST, "localhost")}
        self.url = "http://%s:%d/%s/" % (SERVE_HOST, self.port, token)

    def serve_forever(self):
        try:
            self.httpd.serve_forever(poll_interval=0.25)
        finally:
            self.httpd.server_close()

    def close(self):
        self.httpd.server_close()
