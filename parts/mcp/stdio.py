from __future__ import annotations

import collections
import json
import os
import queue
import select
import sys
import threading

from .connection import error_response, valid_id
from .protocol import (
    COMPACT,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    MAX_MESSAGE_BYTES,
    PARSE_ERROR,
    ToolResult,
    dumps,
)

# ----------------------------------------------------------------------------------------------
# stdio transport: bytes in, bytes out, one message per line
# ----------------------------------------------------------------------------------------------

_json_string = json.encoder.encode_basestring  # what the encoder writes for a str (ensure_ascii off)


def _json_bytes(value):
    return COMPACT.encode(value).encode("utf-8")


_SCALAR_JSON = {None: b"null", True: b"true", False: b"false"}


def _scalar_bytes(value):
    """``_json_bytes(value)`` for the envelope's keys and scalars without an encoder call each."""
    kind = type(value)
    if kind is str:
        return _json_string(value).encode("utf-8")
    if kind is int:
        return int.__repr__(value).encode("ascii")
    if value is None or kind is bool:
        return _SCALAR_JSON[value]
    return _json_bytes(value)


def _tool_reply_bytes(message, result):
    """The reply line of a tools/call, byte for byte what encoding ``message`` would write, with
    structuredContent written from the JSON its Reply already holds (not encoded again)."""
    parts = []
    for k, v in message.items():
        parts.append(b"," if parts else b"{")
        parts.append(_scalar_bytes(k) + b":")
        if k != "result":
            parts.append(_scalar_bytes(v))
            continue
        for i, (key, value) in enumerate(result.items()):
            parts.append(b"{" if i == 0 else b",")
            parts.append(_scalar_bytes(key) + b":")
            if key == "structuredContent":
                parts.append(result.payload_json.encode("utf-8"))
            else:
                parts.append(_scalar_bytes(value))
        parts.append(b"}" if result else b"{}")
    parts.append(b"}\n" if parts else b"{}\n")
    return b"".join(parts)


def _encode(message):
    """One reply line, as bytes."""
    try:
        if type(message) is dict:
            result = message.get("result")
            if type(result) is ToolResult and result.payload_json is not None:
                return _tool_reply_bytes(message, result)
        return dumps(message).encode("utf-8") + b"\n"
    except UnicodeEncodeError:  # a lone surrogate cannot be UTF-8: send ASCII escapes instead
        return json.dumps(message, separators=(",", ":"), default=str).encode("ascii") + b"\n"


class _Oversized:
    """Marker for a line longer than MAX_MESSAGE_BYTES (already discarded)."""


class _Unparseable:
    def __init__(self, reason):
        self.reason = reason


_EOF = object()


def _request_keys(message):
    """Ids of the requests in a decoded message (one request or a batch). A valid id is a string
    or an integer, never a boolean or a float, so the ids themselves are the keys: 1 and "1"
    stay apart."""
    if type(message) is dict:
        request_id = message.get("id")
        return [request_id] if "method" in message and "id" in message and valid_id(request_id) else []
    items = message if isinstance(message, list) else [message]
    return [
        m["id"] for m in items if isinstance(m, dict) and "method" in m and "id" in m and valid_id(m["id"])
    ]


class Transport:
    """Lines in, decoded messages out in order; replies written by the caller's thread.

    A ``notifications/cancelled`` is seen even when it arrives while an earlier request is being
    handled, so a cancelled request is never answered. Where the input is a pipe or file that
    select() can watch (not on Windows), the handling thread reads it itself and, before each
    reply, takes in whatever has arrived meanwhile: no second thread to hand every request over
    to. Elsewhere (a file object without a descriptor, Windows) a reader thread does the reading.
    """

    def __init__(self, infile, outfile):
        self.infile = infile
        self.outfile = outfile
        self.inbox = queue.Queue()
        self.lock = threading.Lock()
        self.pending = set()
        self.cancelled = set()
        self.fd = _watchable_fd(infile)
        self.ready = collections.deque()  # decoded, not yet handled (descriptor mode)
        self.buffer = bytearray()  # bytes after the last complete line
        self.scanned = 0  # buffer[:scanned] holds no newline
        self.discarding = False  # inside a line longer than MAX_MESSAGE_BYTES
        self.at_eof = False

    def start(self):
        if self.fd is None:
            reader = threading.Thread(target=self._read, name="wctx-mcp-reader", daemon=True)
            reader.start()

    def _read(self):
        try:
            while True:
                line = self.infile.readline(MAX_MESSAGE_BYTES + 1)
                if not line:
                    break
                if len(line) > MAX_MESSAGE_BYTES and not line.endswith(b"\n"):
                    while True:  # discard the rest of the oversized line
                        rest = self.infile.readline(1 << 20)
                        if not rest or rest.endswith(b"\n"):
                            break
                    self.inbox.put(_Oversized())
                    continue
                self._take(line, self.inbox.put)
        except (OSError, ValueError):
            pass
        self.inbox.put(_EOF)

    def _take(self, line, put):
        line = line.rstrip(b"\r\n")
        if line.strip():
            put(self._decode(line))

    def _read_fd(self, wait):
        """Read what the descriptor has (waiting for it when ``wait``) into ``ready``; the number
        of bytes read (0 at the end of input)."""
        if self.at_eof:
            return 0
        while True:
            try:
                # Waiting is the read itself (a blocking descriptor): one system call per message.
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:  # a descriptor someone made non-blocking: nothing there yet
                if not wait:
                    return 0
                select.select([self.fd], [], [])
                continue
            except OSError:
                chunk = b""
            break
        if not chunk:
            self.at_eof = True
            if self.discarding:
                self.ready.append(_Oversized())
            elif self.buffer:
                self._take(bytes(self.buffer), self.ready.append)
            self.ready.append(_EOF)
            return 0
        buffer = self.buffer
        buffer += chunk
        start = 0
        while True:
            end = buffer.find(b"\n", max(start, self.scanned))
            if end < 0:
                break
            if self.discarding:
                self.discarding = False
                self.ready.append(_Oversized())
            elif end - start > MAX_MESSAGE_BYTES:
                self.ready.append(_Oversized())
            else:
                self._take(bytes(buffer[start:end]), self.ready.append)
            start = end + 1
        del buffer[:start]
        self.scanned = len(buffer)
        if len(buffer) > MAX_MESSAGE_BYTES:
            self.discarding = True  # the message is refused when its line ends
            del buffer[:]
            self.scanned = 0
        return len(chunk)

    def poll(self):
        """Take in what has already arrived, without waiting (descriptor mode): a cancellation
        sent while a request ran then applies before its reply is written."""
        if self.fd is None:
            return
        while select.select([self.fd], [], [], 0)[0] and self._read_fd(wait=False):
            pass

    def _decode(self, line):
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as e:
            return _Unparseable(f"the line is not valid UTF-8 (byte {e.start})")
        try:
            message = json.loads(text)
        except ValueError as e:
            return _Unparseable(str(e)[:200])
        except RecursionError:
            return _Unparseable("nesting too deep")
        with self.lock:
            self.pending.update(_request_keys(message))
            # A cancellation may come on its own line or inside a 2025-03-26 batch; in a batch it
            # also applies to requests of that same batch.
            for m in message if isinstance(message, list) else [message]:
                if (
                    isinstance(m, dict)
                    and m.get("method") == "notifications/cancelled"
                    and "id" not in m
                    and isinstance(m.get("params"), dict)
                ):
                    target = m["params"].get("requestId")
                    if valid_id(target) and target in self.pending:
                        self.cancelled.add(target)
        return message

    def next_message(self):
        if self.fd is None:
            return self.inbox.get()
        while not self.ready and not self.at_eof:
            self._read_fd(wait=True)
        return self.ready.popleft() if self.ready else _EOF

    def is_cancelled(self, message):
        keys = _request_keys(message)
        with self.lock:
            return bool(keys) and all(k in self.cancelled for k in keys)

    def without_cancelled(self, message):
        """A batch without its cancelled requests (None when nothing is left); other messages as is."""
        if not isinstance(message, list) or not message:
            return message
        with self.lock:
            if not self.cancelled:
                return message
            kept = [m for m in message if not (_request_keys(m) and _request_keys(m)[0] in self.cancelled)]
        return kept or None

    def settle(self, message):
        """Forget the request ids of a handled message."""
        keys = _request_keys(message)
        with self.lock:
            for k in keys:
                self.pending.discard(k)
                self.cancelled.discard(k)

    def drop_cancelled(self, reply):
        """Remove replies to requests cancelled while they ran."""
        with self.lock:
            if not self.cancelled:
                return reply
            if isinstance(reply, list):
                kept = [r for r in reply if r.get("id") not in self.cancelled]
                return kept or None
            if reply is not None and reply.get("id") in self.cancelled:
                return None
            return reply

    def send(self, message):
        self.outfile.write(_encode(message))
        self.outfile.flush()


def _watchable_fd(infile):
    """The descriptor of ``infile`` when select() can wait on it, else None. The server owns its
    input from the start (nothing has been read through the file object's buffer)."""
    if sys.platform == "win32":  # select() takes sockets only there
        return None
    try:
        fd = infile.fileno()
        select.select([fd], [], [], 0)
    except (AttributeError, OSError, ValueError):
        return None
    return fd


def serve(connection, infile, outfile):
    """Answer messages until stdin closes. Returns 0."""
    transport = Transport(infile, outfile)
    transport.start()
    while True:
        message = transport.next_message()
        if message is _EOF:
            return 0
        if isinstance(message, _Oversized):
            transport.send(
                error_response(
                    None, INVALID_REQUEST, f"Invalid Request: message larger than {MAX_MESSAGE_BYTES} bytes"
                )
            )
            continue
        if isinstance(message, _Unparseable):
            transport.send(error_response(None, PARSE_ERROR, f"Parse error: {message.reason}"))
            continue
        if transport.is_cancelled(message):
            transport.settle(message)
            continue
        handled = transport.without_cancelled(message)
        if isinstance(message, list) and handled is None:
            transport.settle(message)
            continue
        try:
            reply = connection.handle(handled)
        except Exception as e:  # never go silent on a request: report, keep serving
            connection.log(f"internal error: {type(e).__name__}: {e}")
            ids = _request_keys(message)
            reply = error_response(
                ids[0] if len(ids) == 1 else None,
                INTERNAL_ERROR,
                f"Internal error: {type(e).__name__}",
            )
        transport.poll()
        reply = transport.drop_cancelled(reply)
        transport.settle(message)
        if reply is not None:
            transport.send(reply)
