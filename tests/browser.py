"""A headless Chromium driven over the DevTools protocol on a local pipe (standard library only).

``--remote-debugging-pipe`` makes Chromium read NUL-terminated JSON commands on fd 3 and write its
answers and events on fd 4: no port is opened, so nothing else on the machine can talk to it.
Used by the browser tests and by bench/report_page.py.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--font-render-hinting=none",
)


def find_chromium():
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


class BrowserError(Exception):
    pass


class Browser:
    """One Chromium process with one page; ``call`` sends a command to that page and waits."""

    def __init__(self, executable, width=1280, height=900, timeout=60):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="wctx-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def pipes_on_3_and_4():
            # Copy both ends above 9 first: dup2 onto the same number would keep close-on-exec, and
            # one end may already sit on the other's target number.
            high_r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
            high_w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        self._stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [
                executable,
                *CHROMIUM_FLAGS,
                "--remote-debugging-pipe",
                "--user-data-dir=" + self.profile,
                "--window-size=%d,%d" % (width, height),
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
            close_fds=False,  # our other descriptors are non-inheritable anyway (PEP 446)
            preexec_fn=pipes_on_3_and_4,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._next_id = 0
        self.events = []
        self.session = None
        try:
            targets = self.call("Target.getTargets", session=False)["targetInfos"]
            pages = [t for t in targets if t["type"] == "page"]
            target = (
                pages[0]["targetId"]
                if pages
                else self.call("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
            )
            self.session = self.call(
                "Target.attachToTarget", {"targetId": target, "flatten": True}, session=False
            )["sessionId"]
            for domain in ("Page", "Runtime", "Network", "Log"):
                self.call(domain + ".enable")
            self.call(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            )
        except Exception:
            self.close()
            raise

    def _send(self, message):
        data = json.dumps(message).encode("utf-8") + b"\0"
        while data:
            data = data[os.write(self._to_child, data) :]

    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("Chromium did not answer in %ss" % self.timeout)
            ready, _, _ = select.select([self._from_child], [], [], left)
            if ready:
                chunk = os.read(self._from_child, 1 << 20)
                if not chunk:
                    raise BrowserError("Chromium exited: %s" % self.stderr_text()[-2000:])
                self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw.decode("utf-8"))

    def call(self, method, params=None, session=True, timeout=None):
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        self._send(msg)
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_event(self, method, timeout=None):
        deadline = time.monotonic() + (timeout or self.timeout)
        seen = 0
        while True:
            for ev in self.events[seen:]:
                if ev["method"] == method:
                    return ev
            seen = len(self.events)
            reply = self._read_message(deadline)
            if "method" in reply:
                self.events.append(reply)

    def open(self, url):
        """Navigate and wait for the load event; returns the milliseconds it took."""
        self.events = []
        start = time.monotonic()
        self.call("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")
        return (time.monotonic() - start) * 1000.0

    def eval(self, expression):
        res = self.call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}
        )
        if "exceptionDetails" in res:
            raise BrowserError("script failed: %s" % json.dumps(res["exceptionDetails"])[:2000])
        return res["result"].get("value")

    def requests(self):
        """Every URL the page asked for since it was opened (blocked ones included)."""
        return [
            ev["params"]["request"]["url"]
            for ev in self.events
            if ev["method"] == "Network.requestWillBeSent"
        ]

    def console_errors(self):
        out = []
        for ev in self.events:
            if ev["method"] == "Log.entryAdded" and ev["params"]["entry"]["level"] == "error":
                out.append(ev["params"]["entry"]["text"])
            if ev["method"] == "Runtime.exceptionThrown":
                out.append(json.dumps(ev["params"])[:500])
        return out

    def screenshot(self, path, full_page=True, max_height=None):
        import base64

        params = {"format": "png", "captureBeyondViewport": bool(full_page)}
        if full_page:
            size = self.eval("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
            height = min(size[1], max_height or size[1])
            params["clip"] = {"x": 0, "y": 0, "width": size[0], "height": height, "scale": 1}
        data = self.call("Page.captureScreenshot", params)["data"]
        with open(path, "wb") as fh:
            fh.write(base64.b64decode(data))

    def stderr_text(self):
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")

    def close(self):
        try:
            if self.proc.poll() is None:
                try:
                    self._send({"id": 0, "method": "Browser.close", "params": {}})
                except OSError:
                    pass
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=10)
        finally:
            for fd in (self._to_child, self._from_child):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._stderr.close()
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
