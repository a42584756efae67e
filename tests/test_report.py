"""The human view: `wctx report --html` (one self-contained page) and `wctx serve` (the same page
live on 127.0.0.1), checked as a reader would see them, in a real headless Chromium."""

from __future__ import annotations

import base64
import hashlib
import html
import html.parser
import http.client
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse

import pytest
from browser import Browser, find_chromium
from conftest import WCTX_SCRIPT, db_snapshot

import wctx

# Stored text a hostile transcript or a careless agent could leave: each must show as text.
HOSTILE = [
    '<script>window.__pwned = "script"</script>',
    '</style><script>window.__pwned = "style"</script> still text',
    'javascript:window.__pwned="href"',
    "<img src=x onerror=\"window.__pwned='img'\"> and <iframe src=//example.com>",
    "</script><svg onload=\"window.__pwned='svg'\"><!-- ]]> &amp; &lt;",
    'quote " onmouseover="window.__pwned=1" x="\u2028line\u2029para',
]


class Fixture:
    def __init__(self, product, ids, gateway_path):
        self.product = product
        self.ids = ids
        self.gateway_path = gateway_path


@pytest.fixture
def workspace(product, tmp_path):
    """The product fixture with one item of every verdict, an open question, hostile claims, and
    the gateway's checkout moved off this machine (its items: unknown)."""
    store = product.store

    def cap(repo, kind, claim, files=(), cwd=None, confidence=None, summary=None):
        item = {"kind": kind, "claim": claim, "repo": repo, "files": list(files)}
        if confidence is not None:
            item["confidence"] = confidence
        res = wctx.capture(store, [item], cwd=cwd or product.ui.path, summary=summary)
        return res["evidence"][0]["id"]

    ids = {
        "stale": cap(
            "upload-sdk",
            "finding",
            "retry_policy caps retries at 3 :: the UI retries forever on top of it",
            ["src/client.py#retry_policy"],
            confidence=0.8,
            summary="traced the retry storm into the SDK",
        ),
        "current": cap("upload-sdk", "decision", "connect() stays synchronous", ["src/client.py#connect"]),
        "possibly_stale": cap("docs-ui", "constraint", "the upload button must stay a plain button"),
        "unknown": cap("api-gateway", "known_issue", "the gateway answers 419 on expiry", ["routes.go"]),
        "question": cap("upload-sdk", "question", "does anyone retry after a 419?"),
    }
    ids["hostile"] = [cap("docs-ui", "note", text, summary="<b>bold</b> summary") for text in HOSTILE]
    cap("other", "finding", "unrelated finding in another product", cwd=product.other.path)
    wctx.relate(
        store, "api-gateway", "provides_api", "docs-ui", note='<script>window.__pwned="note"</script>'
    )
    product.sdk.write(
        "src/client.py", product.sdk.read("src/client.py").replace("min(attempts, 3)", "min(attempts, 5)")
    )
    product.sdk.commit("allow five retries")
    product.ui.write("README.md", "docs\n")
    product.ui.commit("docs")
    moved = str(tmp_path / "gateway-elsewhere")
    shutil.move(product.gateway.path, moved)
    return Fixture(product, ids, moved)


class PageParser(html.parser.HTMLParser):
    """Collects every start tag with its attributes, and the text inside <script> and <style>."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = []
        self.raw = {"script": [], "style": []}
        self._in = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag in self.raw:
            self._in = tag
            self.raw[tag].append("")

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in:
            self.raw[self._in][-1] += data

    def find(self, tag, **attrs):
        return [a for t, a in self.tags if t == tag and all(a.get(k) == v for k, v in attrs.items())]


def parse(page):
    p = PageParser()
    p.feed(page)
    return p


def build_page(run_cli, tmp_path, *extra):
    out = tmp_path / "report.html"
    res = run_cli(["report", "--html", "-o", str(out), *extra])
    assert res.code == 0, res
    assert "wrote" in res.out
    with open(out, encoding="utf-8") as fh:
        return fh.read(), str(out)


# ----------------------------------------------------------------------------------------------
# The static page
# ----------------------------------------------------------------------------------------------


def test_page_draws_every_repository_and_relation_with_verdicts_as_words(workspace, run_cli, tmp_path):
    page, _ = build_page(run_cli, tmp_path, "--workspace", "uploads")
    p = parse(page)
    nodes = sorted(a["data-repo"] for a in p.find("a") if "node" in a.get("class", "").split())
    assert nodes == ["api-gateway", "docs-ui", "upload-sdk"]  # "other" is in another workspace
    edges = sorted((a["data-from"], a["data-kind"], a["data-to"]) for a in p.find("g", **{"class": "edge"}))
    assert edges == [
        ("api-gateway", "provides_api", "docs-ui"),
        ("docs-ui", "uses", "upload-sdk"),
        ("upload-sdk", "depends_on", "api-gateway"),
    ]
    items = {a["id"]: a for a in p.find("article")}
    for verdict in ("stale", "possibly_stale", "unknown", "current"):
        eid = workspace.ids[verdict]
        assert items[eid]["data-verdict"] == verdict
        badge = re.search(r'id="%s".*?<span class="verdict v-[a-z-]+">([a-z ]+)</span>' % eid, page, re.S)
        assert badge and badge.group(1) == verdict.replace("_", " ")  # the word, not just a colour
    assert "unrelated finding" not in page
    # The question is in its own list, not among its repository's kinds.
    questions = page.split('<section id="questions">', 1)[1].split("</section>", 1)[0]
    assert workspace.ids["question"] in questions and "does anyone retry after a 419?" in questions
    sdk = page.split('id="repo-upload-sdk"', 1)[1].split("</section>", 1)[0]
    assert workspace.ids["question"] not in sdk
    # Every fact of an item: claim, detail, session, date, confidence, provenance commit.
    stale = page.split('id="%s"' % workspace.ids["stale"], 1)[1].split("</article>", 1)[0]
    sdk_head = wctx.get_evidence(workspace.product.store, workspace.ids["stale"])["anchors"][0]["commit"]
    for text in (
        "retry_policy caps retries at 3",
        "the UI retries forever on top of it",
        "confidence 0.8",
        "upload-sdk@<code>%s</code>" % sdk_head[:7],
        "traced the retry storm into the SDK",
        "src/client.py#retry_policy",
        "allow five retries",
    ):
        assert text in stale, text


def test_stale_and_unknown_come_first_in_each_group(product, run_cli, tmp_path):
    ids = []
    for n in range(4):
        res = wctx.capture(
            product.store,
            [
                {
                    "kind": "finding",
                    "claim": "finding %d" % n,
                    "repo": "upload-sdk",
                    "files": ["src/client.py#retry_policy" if n % 2 else "src/client.py#connect"],
                }
            ],
            cwd=product.sdk.path,
        )
        ids.append(res["evidence"][0]["id"])
    product.sdk.write(
        "src/client.py", product.sdk.read("src/client.py").replace("min(attempts, 3)", "min(attempts, 4)")
    )
    product.sdk.commit("four")
    page, _ = build_page(run_cli, tmp_path)
    order = [a["data-verdict"] for a in parse(page).find("article") if a["data-repo"] == "upload-sdk"]
    assert order == ["stale", "stale", "current", "current"]


def test_hostile_text_renders_as_text_and_nothing_runs(workspace, run_cli, tmp_path):
    page, _ = build_page(run_cli, tmp_path)
    p = parse(page)
    assert len(p.find("script")) == 1 and len(p.find("style")) == 1
    assert not p.find("img") and not p.find("iframe")
    assert not [t for t, a in p.tags if any(k.startswith("on") for k in a)]
    assert not [a for t, a in p.tags if any("javascript:" in (v or "") for v in a.values())]
    for text in HOSTILE:
        assert html.escape(text, quote=True) in page  # shown, escaped
    assert "window.__pwned" not in p.raw["script"][0]
    # The page's own script holds no stored text at all: it reads the DOM.
    assert "retry_policy" not in p.raw["script"][0]


def test_csp_allows_only_the_pages_own_script_and_style(workspace, run_cli, tmp_path):
    page, _ = build_page(run_cli, tmp_path)
    p = parse(page)
    (meta,) = p.find("meta", **{"http-equiv": "Content-Security-Policy"})
    policy = dict(
        (part.split(None, 1) + [""])[:2] for part in (x.strip() for x in meta["content"].split(";")) if part
    )
    assert policy["default-src"] == "'none'" and policy["connect-src"] == "'none'"
    assert policy["form-action"] == "'none'" and policy["base-uri"] == "'none'"
    assert "unsafe" not in meta["content"] and "*" not in meta["content"] and "http" not in meta["content"]

    def digest(text):
        return "'sha256-%s'" % base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()

    assert policy["script-src"] == digest(p.raw["script"][0])
    assert policy["style-src"] == digest(p.raw["style"][0])
    # No inline style attributes (they would need 'unsafe-inline'), no external reference at all.
    assert not [a for t, a in p.tags if "style" in a]
    assert not [
        a for t, a in p.tags if any(k in a for k in ("src", "srcset")) or (t == "link" and "href" in a)
    ]


def test_same_store_gives_the_same_page_apart_from_the_generated_line(workspace, run_cli, tmp_path):
    first, _ = build_page(run_cli, tmp_path)
    time.sleep(1.1)
    second, _ = build_page(run_cli, tmp_path)
    assert first != second
    strip = re.compile(r'<p class="note" id="generated">generated [^<]+</p>\n')
    assert len(strip.findall(first)) == 1
    assert strip.sub("", first) == strip.sub("", second)


def test_verdicts_are_live_from_git(product, run_cli, tmp_path):
    eid = wctx.capture(
        product.store,
        [
            {
                "kind": "finding",
                "claim": "connect returns a dict",
                "repo": "upload-sdk",
                "files": ["src/client.py#connect"],
            }
        ],
        cwd=product.sdk.path,
    )["evidence"][0]["id"]
    page, _ = build_page(run_cli, tmp_path)
    assert parse(page).find("article", id=eid)[0]["data-verdict"] == "current"
    product.sdk.write(
        "src/client.py", product.sdk.read("src/client.py").replace('{"url": url}', '{"url": url, "t": 1}')
    )
    page, _ = build_page(run_cli, tmp_path)  # uncommitted: the working tree counts
    assert parse(page).find("article", id=eid)[0]["data-verdict"] == "stale"
    assert "uncommitted" in page.split('id="%s"' % eid, 1)[1].split("</article>", 1)[0]


def test_report_to_stdout_and_text_summary(workspace, run_cli):
    res = run_cli(["report", "--html", "--workspace", "uploads"])
    assert res.code == 0 and res.out.startswith("<!DOCTYPE html>") and res.out.rstrip().endswith("</html>")
    res = run_cli(["report", "--workspace", "uploads"])
    assert res.code == 0
    assert "workspace uploads: 3 repositories, 3 relations" in res.out
    assert re.search(r"upload-sdk\s+3 items\s+1 stale", res.out), res.out
    data = json.loads(run_cli(["report", "--json"]).out)
    assert data["counts"]["api-gateway"]["unknown"] == 1


def test_bad_input_gets_one_line_and_writes_nothing(workspace, run_cli, tmp_path):
    before = sorted(os.listdir(tmp_path))
    res = run_cli(["report", "--html", "--workspace", "nope", "-o", str(tmp_path / "r.html")])
    assert (
        res.code == 1
        and res.err.startswith("wctx: unknown workspace 'nope' (")
        and res.err.count("\n") == 1
        and res.out == ""
    )
    res = run_cli(["report", "--html", "-o", str(tmp_path / "missing" / "r.html")])
    assert res.code == 2 and res.err.count("\n") == 1 and "cannot write" in res.err
    res = run_cli(["report", "--html", "-o", str(tmp_path)])
    assert res.code == 2 and "is a directory" in res.err
    assert sorted(os.listdir(tmp_path)) == before


def test_graph_stays_readable_at_forty_repositories(git_repo, store, run_cli, tmp_path):
    names = ["svc-%02d" % i for i in range(40)]
    for name in reversed(names):  # registration order must not matter
        wctx.register_repo(store, git_repo(name, {"a.txt": name}).path, workspace="big")
    kinds = wctx.RELATION_KINDS
    for i in range(1, 40):
        wctx.relate(store, names[i], kinds[i % len(kinds)], names[(i - 1) // 3])  # a tree
    wctx.relate(store, names[0], "calls", names[39])  # a cycle through the whole graph
    page, _ = build_page(run_cli, tmp_path, "--workspace", "big")
    p = parse(page)
    (svg,) = p.find("svg", id="graph")
    _, _, width, height = (float(v) for v in svg["viewbox"].split())
    rects = [tuple(float(a[k]) for k in ("x", "y", "width", "height")) for a in p.find("rect")]
    assert len(rects) == 40 and len(p.find("g", **{"class": "edge"})) == 40
    for i, (x, y, w, h) in enumerate(rects):
        assert 0 <= x and x + w <= width and 0 <= y and y + h <= height
        for x2, y2, w2, h2 in rects[i + 1 :]:
            assert x + w <= x2 or x2 + w2 <= x or y + h <= y2 or y2 + h2 <= y, "nodes overlap"
    assert width <= 1600  # wraps into rows instead of one endless line
    # Same store, same picture: a second render draws every node at the same place.
    again, _ = build_page(run_cli, tmp_path, "--workspace", "big")
    assert re.findall(r"<rect [^>]+>", again) == re.findall(r"<rect [^>]+>", page)


def many_items(product, n=200):
    """``n`` findings about upload-sdk with long details, one in ten stale; returns their ids."""
    items = [
        {
            "kind": "finding",
            "claim": "finding number %d about uploads%s :: %s"
            % (k, ", and more" * 20, ("detail %d " % k) * 40),
            "repo": "upload-sdk",
            "files": ["src/client.py#retry_policy" if k % 10 == 0 else "src/client.py#connect"],
        }
        for k in range(n)
    ]
    ids = []
    for start in range(0, n, 100):
        res = wctx.capture(product.store, items[start : start + 100], cwd=product.sdk.path)
        ids += [e["id"] for e in res["evidence"]]
    product.sdk.write(
        "src/client.py", product.sdk.read("src/client.py").replace("min(attempts, 3)", "min(attempts, 4)")
    )
    product.sdk.commit("four")
    return ids


def test_large_report_collapses_within_its_budget(product, run_cli, tmp_path, monkeypatch):
    ids = many_items(product)
    monkeypatch.setattr(wctx, "REPORT_FULL_BYTES", 120000)
    monkeypatch.setattr(wctx, "REPORT_MAX_BYTES", 160000)
    page, _ = build_page(run_cli, tmp_path)
    assert len(page.encode("utf-8")) <= 160000 + 30000  # the budget plus the page's fixed parts
    p = parse(page)
    full = [a["id"] for a in p.find("article")]
    compact = [a["id"] for a in p.find("li") if "item" in a.get("class", "")]
    assert full and compact and sorted(full + compact) == sorted(ids)  # every item is still there
    stale = [a["id"] for a in p.find("article") if a["data-verdict"] == "stale"]
    assert len(stale) == 20  # the most severe keep their detail
    assert "%d items shown in one line each" % len(compact) in page
    line = re.search(r'<li class="item v-current" id="%s"><b>current</b> ([^<]+)</li>' % compact[0], page)
    assert line and line.group(1).startswith("finding number") and line.group(1).endswith("…")
    # Past the hard cap the tail is left out, and the page says how many and how to list them.
    monkeypatch.setattr(wctx, "REPORT_FULL_BYTES", 10000)
    monkeypatch.setattr(wctx, "REPORT_MAX_BYTES", 15000)
    page, _ = build_page(run_cli, tmp_path)
    shown = len(re.findall(r'<li class="item ', page)) + page.count("<article ")
    (omitted,) = re.findall(
        r"(\d+) more items not shown; list them with <code>wctx search --repo upload-sdk", page
    )
    assert 0 < shown < 200 and shown + int(omitted) == 200


# ----------------------------------------------------------------------------------------------
# wctx serve
# ----------------------------------------------------------------------------------------------


class Served:
    def __init__(self, proc, url):
        self.proc = proc
        self.url = url
        parts = urllib.parse.urlsplit(url)
        self.port = parts.port
        self.path = parts.path

    def request(self, method="GET", path=None, host=None, body=None):
        con = http.client.HTTPConnection("127.0.0.1", self.port, timeout=20)
        try:
            con.putrequest(method, path or self.path, skip_host=True)
            con.putheader("Host", host if host is not None else "127.0.0.1:%d" % self.port)
            if body is not None:
                con.putheader("Content-Length", str(len(body)))
            con.endheaders(body)
            res = con.getresponse()
            return res.status, dict(res.getheaders()), res.read().decode("utf-8", "replace")
        finally:
            con.close()


def start_serve(home, *extra):
    proc = subprocess.Popen(
        [sys.executable, WCTX_SCRIPT, "--home", home, "serve", "--port", "0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    ready, _, _ = select.select([proc.stdout], [], [], 30)
    line = proc.stdout.readline().decode() if ready else ""
    match = re.search(r"(http://127\.0\.0\.1:\d+/[A-Za-z0-9_-]+/)", line)
    if not match:
        proc.kill()
        raise AssertionError("no URL from wctx serve: %r %r" % (line, proc.stderr.read()))
    return Served(proc, match.group(1))


def stop(served):
    if served.proc.poll() is None:
        served.proc.send_signal(signal.SIGINT)
        try:
            return served.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            served.proc.kill()
            served.proc.wait(timeout=15)
            raise
    return served.proc.returncode


def listening_addresses(port):
    """Local addresses listening on ``port``, from /proc/net/tcp and tcp6 (Linux)."""
    found = []
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as fh:
                rows = fh.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            local, state = row.split()[1], row.split()[3]
            addr, hexport = local.rsplit(":", 1)
            if int(hexport, 16) == port and state == "0A":
                found.append(addr)
    return found


def test_serve_is_local_read_only_and_behind_a_token(workspace, wctx_home):
    served = start_serve(wctx_home, "--workspace", "uploads")
    try:
        if os.path.exists("/proc/net/tcp"):
            assert listening_addresses(served.port) == ["0100007F"]  # 127.0.0.1, nothing else
        status, headers, body = served.request()
        assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
        assert "default-src 'none'" in headers["Content-Security-Policy"]
        assert headers["Cache-Control"] == "no-store" and headers["Referrer-Policy"] == "no-referrer"
        assert workspace.ids["stale"] in body and 'data-repo="upload-sdk"' in body
        assert served.request(host="localhost:%d" % served.port)[0] == 200
        status, _, body = served.request("HEAD")
        assert status == 200 and body == ""
        token = served.path.strip("/")
        wrong = token[:-1] + ("A" if token[-1] != "A" else "B")
        for path in (
            "/",
            "/%s/" % wrong,
            "/%s/../" % token,
            "/favicon.ico",
            "/%sx/" % token,
            "/%s/x" % token,
        ):
            assert served.request(path=path)[0] == 404, path
        for host in ("evil.example:%d" % served.port, "127.0.0.1.evil.example", "", "127.0.0.1:1"):
            assert served.request(host=host)[0] == 403, host
        snapshot = db_snapshot(wctx_home)
        for method in ("POST", "PUT", "DELETE", "PATCH"):
            status, headers, _ = served.request(method, body=b"x=1")
            assert status == 405 and headers["Allow"] == "GET, HEAD"
        assert db_snapshot(wctx_home) == snapshot
        # Live: a capture made while the server runs shows on the next load.
        wctx.capture(
            workspace.product.store,
            [{"kind": "note", "claim": "a note made while serving", "repo": "docs-ui"}],
            cwd=workspace.product.ui.path,
        )
        assert "a note made while serving" in served.request()[2]
    finally:
        code = stop(served)
    out = served.proc.stdout.read().decode()
    assert code == 0 and "stopped" in out
    assert served.proc.stderr.read() == b""
    with pytest.raises(OSError):
        served.request()


def test_serve_refuses_a_busy_port_and_an_unknown_workspace(workspace, wctx_home, run_cli):
    served = start_serve(wctx_home)
    try:
        res = run_cli(["serve", "--port", str(served.port)])
        assert res.code == 2 and res.err.startswith("wctx: cannot listen on 127.0.0.1:%d" % served.port)
        assert res.err.count("\n") == 1
    finally:
        stop(served)
    res = run_cli(["serve", "--workspace", "nope"])
    assert (
        res.code == 1 and res.err.startswith("wctx: unknown workspace 'nope' (") and res.err.count("\n") == 1
    )
    res = run_cli(["serve", "--port", "70000"])
    assert res.code == 2 and res.err.count("\n") == 1


# ----------------------------------------------------------------------------------------------
# In a real browser
# ----------------------------------------------------------------------------------------------


@pytest.fixture
def chromium():
    path = find_chromium()
    if path is None:
        message = "headless Chromium is not installed (Debian: apt-get install chromium; .ci/run does it)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    with Browser(path) as browser:
        yield browser


def wait_ms(ms):
    return "new Promise(function (done) { setTimeout(done, %d); })" % ms


def visible_ids(browser):
    return browser.eval(
        "Array.prototype.filter.call(document.querySelectorAll('article.item'), function (a) {"
        " return a.offsetParent !== null; }).map(function (a) { return a.id; }).sort()"
    )


def test_page_in_chromium_draws_filters_and_runs_nothing_injected(workspace, run_cli, tmp_path, chromium):
    _, path = build_page(run_cli, tmp_path, "--workspace", "uploads")
    url = "file://" + path
    chromium.open(url)
    b = chromium
    assert b.eval("typeof window.__pwned") == "undefined"
    assert b.requests() == [url]  # nothing else was asked for, not even a blocked request
    assert b.console_errors() == []  # no CSP violation: our own script and style were allowed
    assert b.eval("document.scripts.length") == 1
    # Drawn: each node and edge has a size on screen, the style sheet applied.
    nodes = b.eval(
        "Array.prototype.map.call(document.querySelectorAll('#graph .node'), function (n) {"
        " var r = n.getBoundingClientRect(); return [n.getAttribute('data-repo'), r.width > 50 && r.height > 20]; })"
    )
    assert sorted(nodes) == [["api-gateway", True], ["docs-ui", True], ["upload-sdk", True]]
    edges = b.eval(
        "Array.prototype.map.call(document.querySelectorAll('#graph .edge'), function (e) {"
        " var r = e.querySelector('path').getBBox(); return [e.getAttribute('data-from'),"
        " e.getAttribute('data-kind'), e.getAttribute('data-to'), r.width + r.height > 20]; })"
    )
    assert sorted(edges) == [
        ["api-gateway", "provides_api", "docs-ui", True],
        ["docs-ui", "uses", "upload-sdk", True],
        ["upload-sdk", "depends_on", "api-gateway", True],
    ]
    assert b.eval("getComputedStyle(document.querySelector('.verdict.v-stale')).color") == "rgb(179, 38, 30)"
    labels = b.eval(
        "Array.prototype.map.call(document.querySelectorAll('article.item'), function (a) {"
        " return [a.id, a.querySelector('.verdict').textContent]; })"
    )
    labels = dict(labels)
    for verdict in ("stale", "possibly_stale", "unknown", "current"):
        assert labels[workspace.ids[verdict]].lower() == verdict.replace("_", " ")
    claims = b.eval(
        "Array.prototype.map.call(document.querySelectorAll('article.item .claim'), function (c) {"
        " return c.textContent; })"
    )
    for text in HOSTILE:
        assert text in claims
    assert (
        b.eval("document.querySelectorAll('img, iframe, svg svg, [onerror], [onload], [onmouseover]').length")
        == 0
    )
    everything = visible_ids(b)
    assert len(everything) == 5 + len(HOSTILE)

    def filter_by(text="", kind="", verdict="", repo=""):
        b.eval(
            "(function () { var q = document.getElementById('q'); q.value = %s;"
            " q.dispatchEvent(new Event('input'));"
            " [['kind', %s], ['verdict', %s], ['repo', %s]].forEach(function (p) {"
            " var s = document.getElementById(p[0]); s.value = p[1]; s.dispatchEvent(new Event('change')); }); })()"
            % (json.dumps(text), json.dumps(kind), json.dumps(verdict), json.dumps(repo))
        )
        b.eval(wait_ms(150))
        return visible_ids(b)

    assert filter_by("retries forever") == [workspace.ids["stale"]]
    assert b.eval("document.getElementById('shown').textContent") == "1 of %d items shown" % len(everything)
    assert filter_by(verdict="unknown") == [workspace.ids["unknown"]]
    assert filter_by(kind="question") == [workspace.ids["question"]]
    assert filter_by(repo="docs-ui") == sorted([workspace.ids["possibly_stale"]] + workspace.ids["hostile"])
    assert filter_by("onerror", repo="docs-ui") == [workspace.ids["hostile"][3]]
    assert filter_by("no such words anywhere") == []
    assert b.eval("document.querySelector('section.repo:not([hidden])')") is None
    assert b.eval("document.querySelectorAll('#graph .node.dim').length") == 3
    assert filter_by() == everything
    assert b.eval("document.querySelectorAll('#graph .node.dim').length") == 0
    # Pointing at a repository brings out its own relations.
    b.eval(
        "document.querySelector('#graph .node[data-repo=\"docs-ui\"]').dispatchEvent(new MouseEvent('mouseenter'))"
    )
    assert sorted(
        b.eval(
            "Array.prototype.map.call(document.querySelectorAll('#graph .edge.hl'), function (e) {"
            " return e.getAttribute('data-kind'); })"
        )
    ) == ["provides_api", "uses"]
    # Clicking a node narrows to its repository.
    b.eval(
        "document.querySelector('#graph .node[data-repo=\"api-gateway\"]').dispatchEvent(new MouseEvent('click', {bubbles: true}))"
    )
    assert visible_ids(b) == [workspace.ids["unknown"]]
    assert b.eval("typeof window.__pwned") == "undefined"
    assert b.requests() == [url]


def test_served_page_in_chromium(workspace, wctx_home, chromium):
    served = start_serve(wctx_home)
    try:
        chromium.open(served.url)
        assert chromium.eval("document.querySelectorAll('#graph .node').length") == 4
        assert chromium.eval("typeof window.__pwned") == "undefined"
        assert chromium.console_errors() == []
        assert chromium.requests() == [served.url]
    finally:
        assert stop(served) == 0


def test_one_line_items_filter_in_chromium(product, run_cli, tmp_path, monkeypatch, chromium):
    ids = many_items(product)
    monkeypatch.setattr(wctx, "REPORT_FULL_BYTES", 120000)
    monkeypatch.setattr(wctx, "REPORT_MAX_BYTES", 160000)
    _, path = build_page(run_cli, tmp_path)
    chromium.open("file://" + path)
    b = chromium
    count = "document.querySelectorAll('.item:not([hidden])').length"
    assert b.eval(count) == len(ids)
    assert (
        b.eval(
            "document.getElementById('verdict').value = 'stale';"
            " document.getElementById('verdict').dispatchEvent(new Event('change')); %s" % count
        )
        == 20
    )
    assert (
        b.eval(
            "document.getElementById('verdict').value = 'current';"
            " document.getElementById('verdict').dispatchEvent(new Event('change')); %s" % count
        )
        == 180
    )
    assert b.eval("document.querySelectorAll('li.item:not([hidden])').length") > 0  # one-line items too
    assert (
        b.eval(
            "document.getElementById('repo').value = 'docs-ui';"
            " document.getElementById('repo').dispatchEvent(new Event('change')); %s" % count
        )
        == 0
    )
    # A one-line item shows its id (from the style sheet) and its verdict as a word.
    first = b.eval(
        "(function () { var li = document.querySelector('li.item');"
        " return [li.querySelector('b').textContent, getComputedStyle(li, '::after').content, li.id]; })()"
    )
    assert first[0] == "current" and first[1] == '"%s"' % first[2]
    assert b.console_errors() == [] and b.requests() == ["file://" + path]


def test_confirmations_and_other_checkouts_show(product, run_cli, tmp_path):
    eid = wctx.capture(
        product.store,
        [
            {
                "kind": "finding",
                "claim": "connect returns a dict",
                "repo": "upload-sdk",
                "files": ["src/client.py#connect"],
            }
        ],
        cwd=product.sdk.path,
    )["evidence"][0]["id"]
    other = wctx.capture(
        product.store,
        [{"kind": "note", "claim": "never looked at again", "repo": "upload-sdk"}],
        cwd=product.sdk.path,
    )["evidence"][0]["id"]
    wctx.confirm(product.store, [eid])
    worktree = str(tmp_path / "sdk-feature")
    product.sdk.git("worktree", "add", "-q", "-b", "feature", worktree)
    page, _ = build_page(run_cli, tmp_path)
    item = page.split('id="%s"' % eid, 1)[1].split("</article>", 1)[0]
    assert re.search(r'confirmed <time datetime="\d{4}-\d\d-\d\dT[^"]+">\d{4}-\d\d-\d\d</time>', item)
    assert "never confirmed" in page.split('id="%s"' % other, 1)[1].split("</article>", 1)[0]
    meta = page.split('id="repo-upload-sdk"', 1)[1].split("</p>", 1)[0]
    assert "worktree " + os.path.realpath(worktree) in meta


def test_the_demo_store_reports(run_wctx, tmp_path):
    kept = tmp_path / "demo"
    assert run_wctx(["demo", "--keep", str(kept)]).code == 0
    res = run_wctx(["--home", str(kept / "store"), "report"])
    assert res.code == 0 and re.search(r"upload-sdk\s+1 item\s+1 stale", res.out), res.out
    res = run_wctx(["--home", str(kept / "store"), "report", "--html", "-o", str(kept / "r.html")])
    assert res.code == 0 and res.out.startswith("wrote ") and "(1 item, " in res.out


def test_a_renamed_repository_keeps_its_items_under_its_new_name(product, run_cli, tmp_path):
    eid = wctx.capture(
        product.store,
        [{"kind": "note", "claim": "recorded before the rename", "repo": "upload-sdk"}],
        cwd=product.sdk.path,
    )["evidence"][0]["id"]
    wctx.rename_repo(product.store, "upload-sdk", "uploader")
    page, _ = build_page(run_cli, tmp_path)
    (item,) = parse(page).find("article", id=eid)
    assert item["data-repo"] == "uploader"
    assert eid in page.split('id="repo-uploader"', 1)[1].split("</section>", 1)[0]
    assert 'data-from="docs-ui" data-to="uploader" data-kind="uses"' in page
