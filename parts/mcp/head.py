#!/usr/bin/env python3
"""wctx_mcp: the Model Context Protocol server for wctx, over stdio.

A hand-rolled JSON-RPC 2.0 server: one compact JSON message per line on stdin and stdout, read and
written as bytes. It speaks both protocol eras and picks one per connection, from how the client
opens it:

- the handshake era (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25): ``initialize`` first, then
  requests; batches only where 2025-03-26 was negotiated;
- the 2026-07-28 era: no handshake, every request carries its protocol version and client
  capabilities in ``params._meta``; ``server/discover`` advertises what the server speaks.

This layer only parses, calls the service functions of ``wctx`` (the same ones the CLI calls) and
formats. Evidence it serves is recorded history written by earlier sessions: it is labelled as
untrusted data, and instruction-like lines in it are neutralised before an agent reads them.

Standard library only (Python 3.8+). License: MIT.
"""

from __future__ import annotations

import collections
import json
import os
import queue
import re
import select
import sys
import threading
