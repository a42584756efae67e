"""`wctx serve` under clients that do not behave: idle connections, clients that go away.

Real sockets against the real `wctx serve` process. Nothing is timed: a client's timeout only
bounds how long the test waits for an answer that should come at once.
"""

from __future__ import annotations

import http.client
import re
import select
import signal
import socket
import struct
import subprocess
import sys

import pytest
from conftest import WCTX_SCRIPT

ANSWER_WAIT = 5  # seconds: less than the server's own request timeout, which an idle client holds


def start_serve(home):
    subprocess.run([sys.executable, WCTX_SCRIPT, "--home", home, "init"], check=True, stdout=subprocess.PIPE)
    proc = subprocess.Popen(
        [sys.executable, WCTX_SCRIPT, "--home", home, "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    ready, _, _ = select.select([proc.stdout], [], [], 30)
    line = proc.stdout.readline().decode() if ready else ""
    match = re.search(r"http://127\.0\.0\.1:(\d+)(/[A-Za-z0-9_-]+/)", line)
    if not match:
        proc.kill()
        raise AssertionError("no URL from wctx serve: %r" % line)
    return proc, int(match.group(1)), match.group(2)


def stop(proc):
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=15)
        raise
    return proc.stderr.read().decode("utf-8", "replace")


def get(port, path):
    con = http.client.HTTPConnection("127.0.0.1", port, timeout=ANSWER_WAIT)
    try:
        con.request("GET", path, headers={"Host": "127.0.0.1:%d" % port})
        res = con.getresponse()
        return res.status, res.read().decode("utf-8", "replace")
    finally:
        con.close()


@pytest.fixture
def served(wctx_home):
    proc, port, path = start_serve(str(wctx_home))
    try:
        yield proc, port, path
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=15)


def test_idle_connections_do_not_make_the_page_unreachable(served):
    proc, port, path = served
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(8)]
    try:
        status, body = get(port, path)  # answered while eight clients hold a connection and say nothing
        assert status == 200 and "<html" in body.lower()
    finally:
        for s in idle:
            s.close()
    assert get(port, path)[0] == 200
    assert "Traceback" not in stop(proc)


def test_a_client_that_goes_away_mid_answer_leaves_one_line_not_a_traceback(served):
    proc, port, path = served
    for _ in range(5):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (path, port)).encode())
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()  # reset at once: the server's answer meets a closed connection
    assert get(port, path)[0] == 200  # and it still serves
    err = stop(proc)
    assert "Traceback" not in err, err
    for line in err.splitlines():
        assert line.startswith("wctx"), err
