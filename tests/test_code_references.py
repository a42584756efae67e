"""Recall by code reference for methods: evidence that cites `Class.method` is recalled only when
the changed file names that class (or calls the method on a receiver named after it), never
because some other `__init__` or `.close()` shares the method's name."""

from __future__ import annotations

import pytest

import wctx

POOL = (
    "class ConnectionPool:\n"
    "    def __init__(self, size):\n        self.size = size\n\n"
    "    def release(self, conn):\n        return conn\n\n\n"
    "def drain_all(pools):\n    return [p for p in pools]\n"
)
EMITTER_JS = "export class EventEmitter {\n  constructor() {\n    this.handlers = {}\n  }\n  unsubscribe(name) {\n    return name\n  }\n}\n"


@pytest.fixture
def world(git_repo, store):
    lib = git_repo("dbpool", {"dbpool/pool.py": POOL, "web/emitter.js": EMITTER_JS})
    app = git_repo(
        "webapp", {"app/server.py": "def serve():\n    return 1\n", "ui/page.js": "export const x = 1\n"}
    )
    wctx.register_repo(store, lib.path, workspace="shop")
    wctx.register_repo(store, app.path, workspace="shop")
    wctx.relate(store, "webapp", "uses", "dbpool")
    items = wctx.capture(
        store,
        [
            {"kind": "known_issue", "claim": "the pool constructor ignores size 0", "repo": "dbpool",
             "files": ["dbpool/pool.py#ConnectionPool.__init__"]},
            {"kind": "finding", "claim": "release does not reset the transaction", "repo": "dbpool",
             "files": ["dbpool/pool.py#ConnectionPool.release"]},
            {"kind": "decision", "claim": "drain_all stays synchronous", "repo": "dbpool",
             "files": ["dbpool/pool.py#drain_all"]},
            {"kind": "finding", "claim": "unsubscribe leaves the handler list", "repo": "dbpool",
             "files": ["web/emitter.js#EventEmitter.unsubscribe"]},
        ],
        cwd=lib.path,
    )["evidence"]  # fmt: skip
    return lib, app, dict(zip(("pool", "does", "stays", "leaves"), (i["id"] for i in items)))


def recalled(store, app):
    res = wctx.brief(store, cwd=app.path, record=False)
    section = next(s for s in res["sections"] if s["key"] == "code_references")["items"]
    return {i["id"]: i["reasons"][0] for i in section}


def test_a_method_of_another_class_recalls_nothing(world, store):
    lib, app, ids = world
    app.write(
        "app/server.py",
        "import threading\n\n\nclass Server:\n    def __init__(self):\n        self.lock = threading.Lock()\n\n"
        "    def stop(self):\n        self.lock.release()\n",
    )
    app.write("ui/page.js", "export function off(bus) {\n  return bus.unsubscribe('x')\n}\n")
    assert recalled(store, app) == {}


def test_naming_the_class_recalls_its_methods_and_constructing_it_recalls_the_constructor(world, store):
    lib, app, ids = world
    app.write(
        "app/server.py",
        "from dbpool.pool import ConnectionPool\n\n\ndef serve(conn):\n    pool = ConnectionPool(4)\n"
        "    pool.release(conn)\n",
    )
    found = recalled(store, app)
    assert set(found) == {ids["pool"], ids["does"]}
    assert found[ids["pool"]].startswith("app/server.py (modified) calls ConnectionPool; dbpool known issue")
    assert found[ids["does"]].startswith("app/server.py (modified) calls release; dbpool finding")


def test_a_receiver_named_after_the_class_is_enough(world, store):
    lib, app, ids = world
    app.write("app/server.py", "def serve(self, conn):\n    self.connection_pool.release(conn)\n")
    app.write("ui/page.js", "export function off(eventEmitter) {\n  eventEmitter.unsubscribe('x')\n}\n")
    found = recalled(store, app)
    assert set(found) == {ids["does"], ids["leaves"]}


def test_a_plain_function_still_matches_by_name(world, store):
    lib, app, ids = world
    app.write(
        "app/server.py", "from dbpool.pool import drain_all\n\n\ndef stop(pools):\n    drain_all(pools)\n"
    )
    found = recalled(store, app)
    assert ids["stays"] in found and found[ids["stays"]].startswith(
        "app/server.py (modified) calls drain_all;"
    )
