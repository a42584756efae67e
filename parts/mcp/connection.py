from __future__ import annotations

from .arguments import ArgumentError, check_arguments
from .catalogue import (
    RETIRED_TOOLS,
    TOOLS_BY_NAME,
    _version_at_least,
    quick_arguments,
    retired_tool_message,
    tool_listing,
)
from .protocol import (
    BATCH_VERSIONS,
    HANDSHAKE_VERSIONS,
    INSTRUCTIONS,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LIST_TTL_MS,
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    METHOD_NOT_FOUND,
    MODERN_VERSIONS,
    SERVER_NAME,
    SERVER_TITLE,
    STRUCTURED_SINCE,
    SUPPORTED_VERSIONS,
    UNSUPPORTED_PROTOCOL_VERSION,
    ToolResult,
    dumps,
)
from .replies import Reply, shown_text
from .tools import ToolFailure

# ----------------------------------------------------------------------------------------------
# JSON-RPC connection: era selection, dispatch, errors
# ----------------------------------------------------------------------------------------------


class RpcError(Exception):
    def __init__(self, code, message, data=None):
        Exception.__init__(self, message)
        self.code = code
        self.message = message
        self.data = data


def valid_id(value):
    return (isinstance(value, str) or isinstance(value, int)) and not isinstance(value, bool)


def _id_kind(value):
    """How an invalid request id is described in the error: what was sent, not a guess."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float):
        return f"a fractional number ({value!r})"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def error_response(request_id, code, message, data=None):
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


class Connection:
    """One client on one stdio pipe. Handles decoded messages; returns what to send back (or None)."""

    def __init__(self, tools, version, log=None, text_only=False):
        self.tools = tools
        # Text only: no outputSchema, no structuredContent; every client then shows the model the
        # text block, and each reply crosses the wire once (see replies.py).
        self.text_only = text_only
        self.server_version = version
        self.era = None  # None until the client opens: "handshake" or "modern"
        self.protocol_version = None  # the negotiated handshake-era version
        self.client_info = None
        self.log = log or (lambda message: None)
        self.server_info = {"name": SERVER_NAME, "title": SERVER_TITLE, "version": version}

    # -- entry point ----------------------------------------------------------------------------

    def handle(self, message):
        if isinstance(message, list):
            return self._handle_batch(message)
        return self._handle_one(message, in_batch=False)

    def _handle_batch(self, batch):
        if not batch:
            return error_response(None, INVALID_REQUEST, "Invalid Request: empty batch")
        if self.era != "handshake" or self.protocol_version not in BATCH_VERSIONS:
            negotiated = self.protocol_version or ("2026-07-28" if self.era == "modern" else "none yet")
            return error_response(
                None,
                INVALID_REQUEST,
                "Invalid Request: JSON-RPC batches are accepted only on connections that negotiated "
                f"2025-03-26 (this one: {negotiated}); send one message per line",
            )
        replies = [self._handle_one(m, in_batch=True) for m in batch]
        replies = [r for r in replies if r is not None]
        return replies or None

    def _handle_one(self, message, in_batch):
        if not isinstance(message, dict):
            return error_response(None, INVALID_REQUEST, "Invalid Request: a message must be a JSON object")
        has_id = "id" in message
        request_id = message.get("id") if has_id and valid_id(message.get("id")) else None
        if message.get("jsonrpc") != "2.0":
            return error_response(request_id, INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"')
        method = message.get("method")
        if method is None:
            if has_id and ("result" in message or "error" in message):
                return None  # a response to a request we never send; nothing to answer
            return error_response(request_id, INVALID_REQUEST, 'Invalid Request: "method" is missing')
        if not isinstance(method, str):
            return error_response(request_id, INVALID_REQUEST, 'Invalid Request: "method" must be a string')
        if has_id and not valid_id(message["id"]):
            return error_response(
                None,
                INVALID_REQUEST,
                f'Invalid Request: "id" must be a string or an integer, not {_id_kind(message["id"])}',
            )
        params = message.get("params")
        if not has_id:
            self._notification(method, params)
            return None
        if params is not None and not isinstance(params, dict):
            return error_response(request_id, INVALID_PARAMS, 'Invalid params: "params" must be an object')
        params = params or {}
        if in_batch and method == "initialize":
            return error_response(
                request_id, INVALID_REQUEST, "Invalid Request: initialize cannot be batched"
            )
        try:
            result = self._request(method, params)
        except RpcError as e:
            return error_response(request_id, e.code, e.message, e.data)
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def _notification(self, method, params):
        # Never answered. notifications/initialized needs no action: requests are served right after
        # the initialize response. Cancellations are applied by the reader (see serve()).
        if method not in ("notifications/initialized", "notifications/cancelled"):
            self.log(f"ignored notification {method}")

    # -- requests -------------------------------------------------------------------------------

    def _request(self, method, params):
        meta = params.get("_meta")
        modern = isinstance(meta, dict) and META_PROTOCOL_VERSION in meta
        if method == "ping":
            return self._finish({}, modern)
        if method == "initialize":
            return self._initialize(params)
        if method not in ("server/discover", "tools/list", "tools/call"):
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method[:100]}", {"method": method[:100]})
        if self.era == "handshake":
            if modern:
                raise RpcError(
                    INVALID_REQUEST,
                    f"Invalid Request: this connection negotiated {self.protocol_version} with initialize; requests carrying the "
                    "2026-07-28 _meta envelope are not accepted on it",
                )
            if method == "server/discover":
                raise RpcError(
                    METHOD_NOT_FOUND,
                    "Method not found: server/discover is a 2026-07-28 method; "
                    f"this connection negotiated {self.protocol_version}",
                )
            return self._dispatch(method, params, self.protocol_version, stateless=False)
        if self.era is None and not modern and method != "server/discover":
            raise RpcError(
                INVALID_REQUEST,
                "Invalid Request: not initialized. Send initialize first (protocol versions {}), or put "
                "{} and {} in params._meta on every request (2026-07-28)".format(
                    ", ".join(HANDSHAKE_VERSIONS), META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES
                ),
            )
        version = self._check_envelope(meta)
        self.era = "modern"
        return self._dispatch(method, params, version, stateless=True)

    def _check_envelope(self, meta):
        """The 2026-07-28 per-request checks: required _meta keys, then a version we speak."""
        if not isinstance(meta, dict):
            raise RpcError(
                INVALID_PARAMS,
                f"Invalid params: params._meta must be an object carrying {META_PROTOCOL_VERSION} and {META_CLIENT_CAPABILITIES}",
            )
        missing = [k for k in (META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES) if k not in meta]
        if missing:
            raise RpcError(
                INVALID_PARAMS, "Invalid params: params._meta is missing {}".format(", ".join(missing))
            )
        version = meta[META_PROTOCOL_VERSION]
        if not isinstance(version, str):
            raise RpcError(INVALID_PARAMS, f"Invalid params: {META_PROTOCOL_VERSION} must be a string")
        if not isinstance(meta[META_CLIENT_CAPABILITIES], dict):
            raise RpcError(INVALID_PARAMS, f"Invalid params: {META_CLIENT_CAPABILITIES} must be an object")
        if version not in MODERN_VERSIONS:
            raise RpcError(
                UNSUPPORTED_PROTOCOL_VERSION,
                f"Unsupported protocol version {version[:40]}",
                {"supported": list(SUPPORTED_VERSIONS), "requested": version},
            )
        return version

    def _initialize(self, params):
        requested = params.get("protocolVersion")
        if self.era == "modern":
            data = {"supported": list(MODERN_VERSIONS)}
            if isinstance(requested, str):
                data["requested"] = requested
            raise RpcError(
                UNSUPPORTED_PROTOCOL_VERSION,
                "This connection serves protocol 2026-07-28 (opened with a request carrying _meta); "
                "initialize is not accepted on it",
                data,
            )
        if self.era == "handshake":
            raise RpcError(
                INVALID_REQUEST,
                "Invalid Request: initialize was already completed on this "
                f"connection (protocol {self.protocol_version})",
            )
        if not isinstance(requested, str):
            raise RpcError(INVALID_PARAMS, 'Invalid params: initialize needs "protocolVersion" (a string)')
        if "capabilities" in params and not isinstance(params["capabilities"], dict):
            raise RpcError(INVALID_PARAMS, 'Invalid params: "capabilities" must be an object')
        version = requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
        self.era = "handshake"
        self.protocol_version = version
        self.client_info = params.get("clientInfo")
        info = dict(self.server_info)
        if not _version_at_least(version, STRUCTURED_SINCE):
            info.pop("title")
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": info,
            "instructions": INSTRUCTIONS,
        }

    def _finish(self, result, modern):
        """Stamp the 2026-07-28 result fields; handshake-era results stay as they are."""
        if modern:
            result["resultType"] = "complete"
            result["_meta"] = {META_SERVER_INFO: dict(self.server_info)}
        return result

    def _dispatch(self, method, params, version, stateless):
        modern = version in MODERN_VERSIONS
        if method == "server/discover":
            result = {
                "supportedVersions": list(SUPPORTED_VERSIONS),
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": dict(self.server_info),
                "instructions": INSTRUCTIONS,
                "ttlMs": LIST_TTL_MS,
                "cacheScope": "public",
            }
            return self._finish(result, True)
        if method == "tools/list":
            cursor = params.get("cursor")
            if cursor is not None:
                raise RpcError(INVALID_PARAMS, "Invalid params: unknown cursor (the tool list has one page)")
            result = {"tools": tool_listing(version, structured=not self.text_only)}
            if modern:
                result["ttlMs"] = LIST_TTL_MS
                result["cacheScope"] = "public"
            return self._finish(result, modern)
        return self._finish(self._call_tool(params, version, stateless), modern)

    def _call_tool(self, params, version, stateless):
        name = params.get("name")
        if not isinstance(name, str):
            raise RpcError(INVALID_PARAMS, 'Invalid params: tools/call needs "name" (a string)')
        tool = TOOLS_BY_NAME.get(name)
        if tool is None and name in RETIRED_TOOLS:  # an older client's list: the model reads this
            return {"content": [{"type": "text", "text": retired_tool_message(name)}], "isError": True}
        if tool is None:
            raise RpcError(
                INVALID_PARAMS,
                "Invalid params: unknown tool {!r}; tools: {}".format(name[:80], ", ".join(TOOLS_BY_NAME)),
            )
        args = params.get("arguments")
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise RpcError(INVALID_PARAMS, 'Invalid params: "arguments" must be an object')
        structured = _version_at_least(version, STRUCTURED_SINCE) and not self.text_only
        try:
            if quick_arguments(name, args) is None:
                args = check_arguments(tool["inputSchema"], args)
            payload = self.tools.call(name, args, stateless)
        except (ArgumentError, ToolFailure) as e:
            return {"content": [{"type": "text", "text": shown_text(f"{name}: {e}")}], "isError": True}
        except Exception as e:  # a bug or an environment fault: say so, keep serving
            self.log(f"tool {name} failed: {type(e).__name__}: {shown_text(str(e))}")
            return {
                "content": [
                    {
                        "type": "text",
                        "text": f"{name} failed unexpectedly: {type(e).__name__}: {shown_text(str(e))[:300]} "
                        "(details on the "
                        "server's stderr)",
                    }
                ],
                "isError": True,
            }
        if type(payload) is not Reply:  # every tool answers a Reply; a bare payload is served as JSON
            payload = Reply(payload, dumps)
        # The text block is the reply's own text, not its JSON again (see replies.py).
        result = ToolResult(content=[{"type": "text", "text": payload.text}])
        if structured:
            result["structuredContent"] = payload.payload
            result.payload_json = payload.json
        result["isError"] = False
        return result
