"""bench/freshness.py on a small repository with known edits between t0 and t1: the metrics it
reports for wctx and for the file-level baseline must equal the truth computed by hand here."""

import importlib.util
import json
import os

import pytest
from conftest import ROOT

spec = importlib.util.spec_from_file_location("bench_freshness", os.path.join(ROOT, "bench", "freshness.py"))
freshness = importlib.util.module_from_spec(spec)
spec.loader.exec_module(freshness)


PY_CORE_T0 = '''\
"""Core."""


def alpha():
    return 1


def beta():
    return 2


class Store:
    def get(self, key):
        return self.data[key]

    def put(self, key, value):
        self.data[key] = value


def gamma():
    return 3
'''

# beta edited, Store.put edited (so Store too), gamma deleted; alpha and Store.get moved down
# by an inserted import and comment, their text unchanged.
PY_CORE_T1 = '''\
"""Core."""

import os  # a new import shifts every line


def alpha():
    return 1


def beta():
    return 20


class Store:
    def get(self, key):
        return self.data[key]

    def put(self, key, value):
        self.data[key] = [value]
'''

PY_UTIL = """\
def slugify(text):
    return text.lower()


def unchanged_helper():
    return None
"""

PY_SAME = """\
def stable():
    return "same"
"""

# Non-Python files: three functions each; at t1 one is edited and a comment is added at the top,
# so the file changes while two of its three symbols do not.
OTHER_T0 = {
    "web/app.js": "function one() {\n  return 1;\n}\n\nfunction two() {\n  return 2;\n}\n\n"
    "function three() {\n  return 3;\n}\n",
    "svc/main.go": "package main\n\nfunc One() int {\n\treturn 1\n}\n\nfunc Two() int {\n\treturn 2\n}\n\n"
    "func Three() int {\n\treturn 3\n}\n",
    "core/src/lib.rs": "pub fn one() -> i32 {\n    1\n}\n\npub fn two() -> i32 {\n    2\n}\n\n"
    "pub fn three() -> i32 {\n    3\n}\n",
    "lib/tool.rb": "def one\n  1\nend\n\ndef two\n  2\nend\n\ndef three\n  3\nend\n",
    "native/calc.c": "int one(void)\n{\n    return 1;\n}\n\nint two(void)\n{\n    return 2;\n}\n\n"
    "int three(void)\n{\n    return 3;\n}\n",
    "web/api.ts": "export function one(): number {\n  return 1;\n}\n\nexport function two(): number {\n"
    "  return 2;\n}\n\nexport function three(): number {\n  return 3;\n}\n",
    "app/Tool.kt": "fun one(): Int {\n    return 1\n}\n\nfun two(): Int {\n    return 2\n}\n\n"
    "fun three(): Int {\n    return 3\n}\n",
    "native/calc.cpp": "int one() {\n    return 1;\n}\n\nint two() {\n    return 2;\n}\n\n"
    "int three() {\n    return 3;\n}\n",
    # a class and two methods: editing two() changes Calc.two and the class that holds it
    "src/Calc.java": "public class Calc {\n    int one() {\n        return 1;\n    }\n\n"
    "    int two() {\n        return 2;\n    }\n}\n",
    "src/Calc.cs": "public class Calc\n{\n    public int One()\n    {\n        return 1;\n    }\n\n"
    "    public int Two()\n    {\n        return 2;\n    }\n}\n",
}
COMMENT = {
    ".js": "// top\n",
    ".go": "// top\n",
    ".rs": "// top\n",
    ".rb": "# top\n",
    ".c": "/* top */\n",
    ".ts": "// top\n",
    ".kt": "// top\n",
    ".cpp": "// top\n",
    ".java": "// top\n",
    ".cs": "// top\n",
}


def edit_two(path, text):
    edited = text.replace("2", "22", 1)
    return COMMENT[os.path.splitext(path)[1]] + edited


@pytest.fixture
def history(git_repo):
    repo = git_repo(
        "bench-subject",
        {
            "app/core.py": PY_CORE_T0,
            "app/util.py": PY_UTIL,
            "app/same.py": PY_SAME,
            "README": "x\n",
            **OTHER_T0,
        },
    )
    t0 = repo.head
    repo.write("app/core.py", PY_CORE_T1)
    # util.py is renamed to helpers.py and one of its functions edited: followed like wctx does
    repo.git("mv", "app/util.py", "app/helpers.py")
    repo.write("app/helpers.py", PY_UTIL.replace("text.lower()", "text.lower().strip()"))
    for path, text in OTHER_T0.items():
        repo.write(path, edit_two(path, text))
    t1 = repo.commit("edits")
    return repo, t0, t1


def test_python_metrics_equal_the_known_truth(history):
    repo, t0, t1 = history
    report = freshness.run_benchmark(repo.path, t0, t1, languages=["python"])
    py = report["per_language"]["python"]
    # core.py: alpha, beta, Store, Store.get, Store.put, gamma; util.py: slugify, unchanged_helper;
    # same.py: stable -> 9 symbols. Really changed: beta, Store, Store.put, gamma, slugify.
    assert report["symbols_cited"] == 9
    wctx_m, base = py["wctx"], py["file_baseline"]
    assert wctx_m["symbols"] == 9 and wctx_m["really_changed"] == 5
    assert wctx_m["flagged"] == 5 and wctx_m["true_alerts"] == 5 and wctx_m["false_alerts"] == 0
    assert wctx_m["precision"] == 1.0 and wctx_m["recall"] == 1.0 and wctx_m["alerts_per_real_catch"] == 1.0
    assert wctx_m["unknown"] == 0 and wctx_m["not_located_at_capture"] == 0
    assert wctx_m["verdicts"] == {"current": 4, "stale": 5}
    # file-level: every symbol of core.py (6) and of the renamed, edited helpers.py (2) is flagged;
    # same.py is not.
    assert base["flagged"] == 8 and base["true_alerts"] == 5 and base["false_alerts"] == 3
    assert base["precision"] == round(5 / 8, 4) and base["recall"] == 1.0
    assert base["alerts_per_real_catch"] == round(8 / 5, 3)
    assert base["flagged_share"] == round(8 / 9, 4)
    assert report["misses"] == [] and report["false_alerts"] == []


def test_the_oracle_follows_renames_and_reports_why(history):
    repo, t0, t1 = history
    report = freshness.run_benchmark(repo.path, t0, t1, languages=["python"])
    assert report["overall"]["wctx"]["recall"] == 1.0
    # gamma vanished: wctx says so (stale), and the oracle counts it as a real change
    assert "app/core.py#gamma" not in [m["citation"] for m in report["misses"]]


GRAMMARS = [
    "tree_sitter",
    "tree_sitter_javascript",
    "tree_sitter_go",
    "tree_sitter_rust",
    "tree_sitter_ruby",
    "tree_sitter_c",
    "tree_sitter_typescript",
    "tree_sitter_kotlin",
    "tree_sitter_cpp",
    "tree_sitter_java",
    "tree_sitter_c_sharp",
]


def test_other_languages_against_tree_sitter(history):
    for module in GRAMMARS:
        pytest.importorskip(module, reason="benchmark extra not installed: pip install -e .[bench]")
    repo, t0, t1 = history
    report = freshness.run_benchmark(repo.path, t0, t1)
    assert report["languages_without_oracle"] == {}
    for language in ("javascript", "go", "rust", "ruby", "c", "typescript", "kotlin", "cpp"):
        m = report["per_language"][language]
        assert m["wctx"]["symbols"] == 3, language
        assert m["wctx"]["really_changed"] == 1, language
        assert m["wctx"]["flagged"] == 1 and m["wctx"]["true_alerts"] == 1, language
        assert m["wctx"]["alerts_per_real_catch"] == 1.0, language
        assert m["file_baseline"]["flagged"] == 3 and m["file_baseline"]["alerts_per_real_catch"] == 3.0, (
            language
        )
    for language in ("java", "csharp"):
        m = report["per_language"][language]
        assert m["wctx"]["symbols"] == 3 and m["wctx"]["really_changed"] == 2, language
        assert m["wctx"]["flagged"] == 2 and m["wctx"]["alerts_per_real_catch"] == 1.0, language
        assert m["file_baseline"]["flagged"] == 3 and m["file_baseline"]["alerts_per_real_catch"] == 1.5, (
            language
        )
    overall = report["overall"]
    assert overall["wctx"]["symbols"] == 9 + 8 * 3 + 2 * 3
    assert overall["wctx"]["really_changed"] == 5 + 8 + 2 * 2
    assert overall["wctx"]["recall"] == 1.0 and overall["wctx"]["precision"] == 1.0
    assert overall["file_baseline"]["flagged"] == 8 + 8 * 3 + 2 * 3
    assert overall["wctx"]["unknown"] == 0 and overall["wctx"]["not_located_at_capture"] == 0


def test_max_symbols_samples_across_languages(history):
    repo, t0, t1 = history
    report = freshness.run_benchmark(repo.path, t0, t1, max_symbols=4, languages=["python"])
    assert report["symbols_cited"] == 4
    assert report["symbols_available"] == {"python": 9}


def test_worktree_and_store_are_cleaned_up(history, monkeypatch):
    repo, t0, t1 = history
    monkeypatch.setenv("WCTX_HOME", "/nonexistent/keep-me")
    freshness.run_benchmark(repo.path, t0, t1, languages=["python"])
    assert os.environ["WCTX_HOME"] == "/nonexistent/keep-me"
    worktrees = [
        line
        for line in repo.git("worktree", "list", "--porcelain").splitlines()
        if line.startswith("worktree ")
    ]
    assert worktrees == ["worktree " + os.path.realpath(repo.path)]
    assert repo.git("status", "--porcelain") == ""


def test_cli_json_and_table(history, capsys):
    repo, t0, t1 = history
    assert (
        freshness.main(["--repo", repo.path, "--t0", t0, "--t1", t1, "--json", "--language", "python"]) == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["overall"]["wctx"]["recall"] == 1.0
    assert set(data["timings"]) >= {"total_s", "capture_s", "verify_s"}
    assert freshness.main(["--repo", repo.path, "--t0", t0, "--t1", t1, "--language", "python"]) == 0
    out = capsys.readouterr().out
    assert "file-level" in out and "alerts/catch" in out and "python" in out


def test_mutate_builds_a_labelled_synthetic_history_without_touching_the_repo(history, capsys):
    repo, t0, _ = history
    refs_before = repo.git("for-each-ref")
    count_before = repo.git("count-objects", "-v")
    assert (
        freshness.main(["--repo", repo.path, "--t0", t0, "--mutate", "20", "--json", "--language", "python"])
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["history"].startswith("synthetic: 20 random line edits")
    assert data["repo"] == os.path.realpath(repo.path)
    assert data["symbols_cited"] == 9
    assert data["overall"]["file_baseline"]["flagged"] >= data["overall"]["wctx"]["true_alerts"]
    assert repo.git("for-each-ref") == refs_before and repo.git("count-objects", "-v") == count_before
    assert repo.git("status", "--porcelain") == ""


def test_changed_files_only_keeps_the_hard_cases(history):
    repo, t0, t1 = history
    report = freshness.run_benchmark(repo.path, t0, t1, languages=["python"], changed_files_only=True)
    # same.py did not change: its one symbol is left out; core.py (6) and the renamed util.py (2) stay
    assert report["symbols_cited"] == 8
    assert report["overall"]["file_baseline"]["flagged_share"] == 1.0
    assert report["overall"]["wctx"]["flagged"] == 5


def test_t1_or_mutate_is_required(history):
    repo, t0, t1 = history
    with pytest.raises(SystemExit):
        freshness.main(["--repo", repo.path, "--t0", t0])
    with pytest.raises(SystemExit):
        freshness.main(["--repo", repo.path, "--t0", t0, "--t1", t1, "--mutate", "3"])


DECLARATIONS_T0 = {
    "app/limits.py": 'LIMIT = 5\nNAMES: list[str] = ["a"]\n\n\nclass Pool:\n    size = 8\n    mode = "x"\n\n\n'
    "def helper():\n    return LIMIT\n",
    "svc/pool.go": 'package main\n\nconst Limit = 5\n\nvar names = []string{"a"}\n\ntype Pool struct {\n'
    "\tSize int\n\tMode string\n}\n\nfunc Use() int {\n\treturn Limit\n}\n",
}


def test_declarations_are_cited_instead_of_functions(git_repo):
    repo = git_repo("bench-declarations", DECLARATIONS_T0)
    t0 = repo.head
    repo.write("app/limits.py", DECLARATIONS_T0["app/limits.py"].replace("LIMIT = 5", "LIMIT = 6"))
    repo.write("svc/pool.go", DECLARATIONS_T0["svc/pool.go"].replace("Size int", "Size int64"))
    t1 = repo.commit("edit a constant and a field")
    report = freshness.run_benchmark(repo.path, t0, t1, kinds="declarations")
    # python: LIMIT, NAMES, Pool.size, Pool.mode (not Pool, not helper); go: Limit, names, Pool,
    # Pool.Size, Pool.Mode (not Use). Really changed: LIMIT, Pool (its text holds Size), Pool.Size.
    assert report["symbols_available"] == {"go": 5, "python": 4}
    m = report["overall"]["wctx"]
    assert m["really_changed"] == 3 and m["flagged"] == 3 and m["true_alerts"] == 3
    assert m["recall"] == 1.0 and m["not_located_at_capture"] == 0
    assert report["overall"]["file_baseline"]["flagged"] == 9
