"""eval/families.py on a tiny family of two real git repositories (a Go library and the Python
application that uses it): the changelog entries become the questions, asked from the consumer,
judged for the commits they cite, with the right categories; the writer's file holds no question;
a scored world is cached and scored again without being changed."""

from __future__ import annotations

import hashlib
import json
import os
import sys

import pytest
from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "eval"))

import families  # noqa: E402

LIB_V1 = """package lib

type Parser struct{ depth int }

// Parse reads one value.
func (p *Parser) Parse(s string) int {
\treturn len(s)
}

func Helper() int {
\treturn 1
}
"""


@pytest.fixture
def tiny_family(tmp_path, git_repo, monkeypatch):
    parent = tmp_path / "repos" / "tiny"
    lib = git_repo("golib", {"lib.go": LIB_V1, "CHANGELOG.md": "# Changelog\n"}, parent=parent)
    app = git_repo("pyapp", {"pyapp/__init__.py": "", "CHANGES.rst": "Changes\n"}, parent=parent)
    # lib: a squash-merged fix of a method (a Go receiver), a background change, a second fix.
    lib.write("lib.go", LIB_V1.replace("return len(s)", 'if s == "" {\n\t\treturn 0\n\t}\n\treturn len(s)'))
    fix1 = lib.commit("Guard the empty input in the parser (#12)")
    lib.write("lib.go", lib.read("lib.go").replace("return 1", "return 2"))
    background = lib.commit("Helper returns two from now on")
    lib.write("lib.go", lib.read("lib.go").replace("depth int", "depth int\n\tlimit int"))
    fix2 = lib.commit("Add a limit field to Parser (#15)")
    lib.write(
        "CHANGELOG.md",
        "# Changelog\n\n## 1.1.0 / 2026-01-01\n\n"
        "* [BUGFIX] Fix crash of the parser when the input is empty. #12\n"
        "* [BUGFIX] Deep documents no longer exhaust the stack ([#15](https://github.com/tiny/golib/pull/15))\n"
        "* [FEATURE] Something new without a number\n",
    )
    lib.commit("changelog")
    # app: a fix on a branch, merged as a pull request; its changelog cites it by role.
    app.git("checkout", "-q", "-b", "fix-17")
    app.write("pyapp/core.py", "class Cache:\n    def get(self, key):\n        return None\n")
    fix3 = app.commit("Cache.get returns None for a missing key instead of raising")  # speaks for the PR
    app.git("checkout", "-q", "main")
    app.git("merge", "-q", "--no-ff", "fix-17", "-m", "Merge pull request #17 from someone/fix-17")
    app.write(
        "CHANGES.rst",
        "Version 0.2\n-----------\n\n- Fix the cache raising a KeyError for a missing key. :issue:`17`\n",
    )
    app.commit("changelog")
    spec = {
        "language": "go",
        "licence": "MIT",
        "repos": [
            ("golib", "https://github.com/tiny/golib", [("CHANGELOG.md", "")], families._go),
            ("pyapp", "https://github.com/tiny/pyapp", [("CHANGES.rst", "")], families._py("pyapp")),
        ],
        "relations": (("pyapp", "depends_on", "golib"),),
        "consumer_of": {"golib": "pyapp", "pyapp": "pyapp"},
        "window": False,
        "background": 5,
    }
    monkeypatch.setitem(families.FAMILIES, "tiny", spec)
    return {
        "repos": str(tmp_path / "repos"),
        "fix1": fix1,
        "fix2": fix2,
        "fix3": fix3,
        "background": background,
    }


def _rows(path):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def test_build_asks_changelog_entries_from_the_consumer_judged_for_the_commits_they_cite(
    tiny_family, tmp_path
):
    out = str(tmp_path / "out")
    assert (
        families.main(
            [
                "build",
                tiny_family["repos"],
                "--families",
                "tiny",
                "--out",
                out,
                "--cache",
                str(tmp_path / "cache"),
            ]
        )
        == 0
    )
    evidence = {e["id"]: e for e in _rows(os.path.join(out, "tiny", "evidence.jsonl"))}
    queries = {q["text"]: q for q in _rows(os.path.join(out, "tiny", "queries.jsonl"))}

    fix1 = "golib-" + tiny_family["fix1"][:10]
    fix2 = "golib-" + tiny_family["fix2"][:10]
    fix3 = "pyapp-" + tiny_family["fix3"][:10]
    assert evidence[fix1]["files"] == ["lib.go#Parser.Parse"]  # the Go receiver qualifies it
    assert evidence[fix1]["claim"] == "Guard the empty input in the parser"
    assert evidence[fix3]["files"] == ["pyapp/core.py#Cache", "pyapp/core.py#Cache.get"]  # a new class
    background = "golib-" + tiny_family["background"][:10]
    assert evidence[background]["role"] == "background" and evidence[background]["files"] == ["lib.go#Helper"]

    # Tags, link and markup gone; the feature entry without a number asks nothing.
    assert sorted(queries) == [
        "Deep documents no longer exhaust the stack",
        "Fix crash of the parser when the input is empty",
        "Fix the cache raising a KeyError for a missing key",
    ]
    crash = queries["Fix crash of the parser when the input is empty"]
    assert crash["judgements"] == {fix1: 3}
    assert (crash["from"], crash["needs"], crash["cross_repo"]) == ("pyapp", "golib", True)
    assert crash["category"] == "shared_words"  # parser, empty, input
    deep = queries["Deep documents no longer exhaust the stack"]
    assert deep["judgements"] == {fix2: 3} and deep["category"] == "paraphrase"
    cache = queries["Fix the cache raising a KeyError for a missing key"]
    assert cache["judgements"] == {fix3: 3}
    assert (cache["from"], cache["cross_repo"], cache["category"]) == ("pyapp", False, "shared_words")
    assert all(g != background for q in queries.values() for g in q["judgements"])

    writer = _rows(os.path.join(out, "tiny", "items_for_writer.jsonl"))
    assert {w["id"] for w in writer} == set(evidence)
    assert all(set(w) == {"id", "repo", "kind", "claim", "detail", "files"} for w in writer)


def test_run_scores_both_rankings_and_reuse_leaves_the_cached_world_unchanged(tiny_family, tmp_path, capsys):
    out, cache = str(tmp_path / "out"), str(tmp_path / "cache")
    families.main(
        [
            "build",
            tiny_family["repos"],
            "--families",
            "tiny",
            "--out",
            out,
            "--cache",
            str(tmp_path / "cache"),
        ]
    )
    common = ["run", tiny_family["repos"], "--families", "tiny", "--corpus", out, "--cache", cache, "--json"]
    capsys.readouterr()
    with pytest.raises(SystemExit, match="no cached world"):
        families.main(common + ["--reuse"])
    families.main(common)
    first = json.loads(capsys.readouterr().out)
    db = os.path.join(cache, "tiny", "home", "wctx.db")
    with open(db, "rb") as fh:
        before = hashlib.sha256(fh.read()).hexdigest()
    families.main(common + ["--reuse", "--wctx", ROOT])
    again = json.loads(capsys.readouterr().out)
    with open(db, "rb") as fh:
        assert hashlib.sha256(fh.read()).hexdigest() == before
    summary = first["families"]["tiny"]["summary"]
    assert summary == again["families"]["tiny"]["summary"]
    assert summary["all"]["topology"]["n"] == summary["all"]["fts"]["n"] == 3
    assert summary["paraphrase"]["fts"]["n"] == 1 and summary["cross_repo"]["fts"]["n"] == 2
    assert first["families"]["tiny"]["half"] == "REPORT"  # not in TUNE


def test_symptoms_are_captured_with_the_items_in_a_world_of_their_own(tiny_family, tmp_path, capsys):
    out, cache = str(tmp_path / "out"), str(tmp_path / "cache")
    families.main(
        [
            "build",
            tiny_family["repos"],
            "--families",
            "tiny",
            "--out",
            out,
            "--cache",
            str(tmp_path / "cache"),
        ]
    )
    fix2 = "golib-" + tiny_family["fix2"][:10]
    symptoms = tmp_path / "symptoms.jsonl"
    symptoms.write_text(json.dumps({"id": fix2, "symptom": "deep documents exhaust the stack"}) + "\n")
    capsys.readouterr()
    families.main(
        ["run", tiny_family["repos"], "--families", "tiny", "--corpus", out, "--cache", cache, "--json",
         "--symptoms", str(symptoms)]
    )  # fmt: skip
    report = json.loads(capsys.readouterr().out)["families"]["tiny"]
    assert report["symptoms"] in ("symptom field", "appended to detail")
    assert os.path.basename(report["world"]).startswith("tiny+symptoms-")
    # The paraphrased question now finds its answer first with either ranking.
    assert report["summary"]["paraphrase"]["fts"]["hit@1"] == 1.0
    assert report["summary"]["paraphrase"]["topology"]["hit@1"] == 1.0


def test_one_symptoms_file_serves_every_family_without_rebuilding_the_others_worlds(
    tiny_family, tmp_path, capsys
):
    out, cache = str(tmp_path / "out"), str(tmp_path / "cache")
    families.main(["build", tiny_family["repos"], "--families", "tiny", "--out", out, "--cache", cache])
    fix2 = "golib-" + tiny_family["fix2"][:10]
    line = json.dumps({"id": fix2, "symptom": "deep documents exhaust the stack"}) + "\n"
    own = tmp_path / "own.jsonl"
    own.write_text(line)
    capsys.readouterr()
    run = ["run", tiny_family["repos"], "--families", "tiny", "--corpus", out, "--cache", cache, "--json"]
    families.main(run + ["--symptoms", str(own)])
    first = json.loads(capsys.readouterr().out)["families"]["tiny"]
    # The same line among another family's lines: the same world, scored as cached (--reuse).
    every = tmp_path / "every.jsonl"
    every.write_text(json.dumps({"id": "otherlib-0123456789", "symptom": "the page is blank"}) + "\n" + line)
    families.main(run + ["--symptoms", str(every), "--reuse"])
    again = json.loads(capsys.readouterr().out)["families"]["tiny"]
    assert again["world"] == first["world"]
    assert again["summary"] == first["summary"]
    # A different line for one of its own items is another world: --reuse finds none.
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"id": fix2, "symptom": "recursion error on nested input"}) + "\n")
    with pytest.raises(SystemExit, match="no cached world"):
        families.main(run + ["--symptoms", str(other), "--reuse"])
