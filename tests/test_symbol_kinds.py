"""Every kind of definition a user cites (constants, assignments, type aliases, fields, grouped
declarations, impl items) is a symbol: located with its whole statement, and judged through the
CLI like a function (an edit inside it is stale and names the commit, an edit beside it leaves it
current)."""

import textwrap

import pytest

import wctx


def src(text):
    return textwrap.dedent(text).lstrip("\n")


# Each case: (path, source, symbol, first line, last line, edit beside, edit inside). The first
# and last lines are the located text's; an edit is (old, new), applied once to the source.
CASES = [
    # ------------------------------------------------------------------------------- Python
    (
        "pkg/config.py",
        src("""
            import enum

            DEFAULT_TIMEOUT = 5
            RETRIES: int = 3
            LIFESPAN: dict[str, str] = {
                "auto": "auto",
                "on": "on",
            }
            MAX_BATCH = 512 * 1024


            def load():
                return DEFAULT_TIMEOUT
            """),
        "LIFESPAN",
        "LIFESPAN: dict[str, str] = {",
        "}",
        ("MAX_BATCH = 512 * 1024", "MAX_BATCH = 256 * 1024"),
        ('"auto": "auto"', '"auto": "off"'),
    ),
    (
        "pkg/limits.py",
        src("""
            LOW, HIGH = (
                1,
                10,
            )
            STEP = 2
            """),
        "HIGH",
        "LOW, HIGH = (",
        ")",
        ("STEP = 2", "STEP = 3"),
        ("    10,", "    20,"),
    ),
    (
        "pkg/model.py",
        src("""
            class Config:
                host = "localhost"
                port: int = 8000
                workers: int

                class Meta:
                    ordering = ["name"]

                def url(self):
                    return "%s:%d" % (self.host, self.port)
            """),
        "Config.port",
        "    port: int = 8000",
        "    port: int = 8000",
        ('host = "localhost"', 'host = "0.0.0.0"'),
        ("port: int = 8000", "port: int = 8080"),
    ),
    (
        "pkg/meta.py",
        src("""
            class Config:
                host = "localhost"

                class Meta:
                    ordering = [
                        "name",
                    ]

                def url(self):
                    return self.host
            """),
        "Config.Meta.ordering",
        "        ordering = [",
        "        ]",
        ("return self.host", "return self.host.lower()"),
        ('"name",', '"-name",'),
    ),
    (
        "pkg/types.py",
        src("""
            from typing import TypeAlias, Union

            Number: TypeAlias = Union[
                int,
                float,
            ]
            Text = str


            def f(x: Number) -> Text:
                return str(x)
            """),
        "Number",
        "Number: TypeAlias = Union[",
        "]",
        ("return str(x)", "return repr(x)"),
        ("    float,", "    complex,"),
    ),
    (
        "pkg/aliases.py",
        src("""
            type Pair[T] = tuple[
                T,
                T,
            ]
            type Name = str


            def first(p):
                return p[0]
            """),
        "Pair",
        "type Pair[T] = tuple[",
        "]",
        ("return p[0]", "return p[1]"),
        ("    T,\n]", "    int,\n]"),
    ),
]


def _id(case):
    return "%s#%s" % (case[0], case[2])


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_the_definition_is_located_with_its_whole_statement(case):
    path, source, symbol, first, last = case[:5]
    found = wctx.locate_symbol(source, path, symbol)
    assert found is not None, "%s not found in %s" % (symbol, path)
    lines = found.split("\n")
    assert (lines[0], lines[-1]) == (first, last)


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_an_edit_beside_is_current_and_an_edit_inside_is_stale(case, git_repo, run_cli):
    path, source, symbol, _, _, beside, inside = case
    assert source.count(beside[0]) == 1 and source.count(inside[0]) == 1
    repo = git_repo("kinds", {path: source})
    assert run_cli(["repo", "add", repo.path]).code == 0
    res = run_cli(
        ["capture", "--finding", "what it holds", "--file", path + "#" + symbol, "--json"], cwd=repo.path
    )
    assert res.code == 0, res
    assert res.json["warnings"] == [], res.json
    eid = res.json["evidence"][0]["id"]

    repo.write(path, repo.read(path).replace(*beside))
    repo.commit("edit beside it")
    res = run_cli(["verify", eid, "--json"])
    item = res.json["items"][0]
    assert (res.code, item["verdict"]) == (0, "current"), item["reasons"]

    repo.write(path, repo.read(path).replace(*inside))
    changed = repo.commit("edit inside it")
    res = run_cli(["verify", eid, "--json"])
    item = res.json["items"][0]
    assert (res.code, item["verdict"]) == (1, "stale"), item["reasons"]
    reason = item["reasons"][0]
    assert reason.startswith("%s#%s changed in 1 commit" % (path, symbol)), reason
    assert changed[:7] in reason and '"edit inside it"' in reason
    assert '"edit beside it"' not in reason
