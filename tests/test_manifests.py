"""Relations suggested from manifests: what one repository requires matched against what another
publishes, each suggestion with the manifest line that says so, nothing declared without a yes.
And the TOML reader for Pythons without tomllib, against real manifests on every Python."""

import datetime
import glob
import json
import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT

import wctx

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "manifests")
TOML_FIXTURES = sorted(glob.glob(os.path.join(FIXTURES, "*.toml")))


def _plain(value):
    """The parsed document without its date-times (tomllib gives datetime objects; the subset
    reader keeps their text, which manifests never use for names or dependencies)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if not _is_datetime(v)}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _is_datetime(value):
    if isinstance(value, (datetime.date, datetime.time)):
        return True
    return (
        isinstance(value, str)
        and re.match(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}:\d{2}.*)?$", value) is not None
    )


def _read(path):
    with open(path, encoding="utf-8") as fh:
        return fh.read()


@pytest.mark.parametrize("path", TOML_FIXTURES, ids=os.path.basename)
def test_toml_subset_reader_reads_real_manifests_as_tomllib_does(path):
    tomllib = pytest.importorskip("tomllib") if sys.version_info >= (3, 11) else None
    text = _read(path)
    mine = wctx.toml_loads(text, subset=True)
    if tomllib is None:
        assert mine  # compared with tomllib under the newer Pythons below
        return
    assert _plain(mine) == _plain(tomllib.loads(text))


def _pyenv_pythons():
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    found = {}
    for path in glob.glob(os.path.join(root, "versions", "3.*", "bin", "python")):
        version = os.path.basename(os.path.dirname(os.path.dirname(path)))
        minor = ".".join(version.split(".")[:2])
        if minor in ("3.8", "3.9", "3.10", "3.11", "3.12", "3.13"):
            found[minor] = path
    return found


@pytest.mark.parametrize("minor", ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13"])
def test_manifests_read_the_same_on_every_python(minor):
    """pyproject.toml and Cargo.toml read alike under every supported Python: through tomllib
    where it exists, through the subset reader on 3.8-3.10."""
    python = _pyenv_pythons().get(minor)
    if python is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Python %s is not installed (pyenv install %s)" % (minor, minor))
        pytest.skip("Python %s is not installed on this machine" % minor)
    script = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import wctx\n"
        "out = {}\n"
        "for p in sys.argv[2:]:\n"
        "    t = open(p, encoding='utf-8').read()\n"
        "    out[p] = [wctx.toml_loads(t), wctx.toml_loads(t, subset=True)]\n"
        "print(json.dumps(out, default=str))\n"
    )
    done = subprocess.run(
        [python, "-c", script, ROOT, *TOML_FIXTURES], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    for path in TOML_FIXTURES:
        expected = _plain(wctx.toml_loads(_read(path), subset=True))
        default, subset = (_plain(x) for x in got[path])
        assert subset == expected, path  # the subset reader, on that Python
        assert default == expected, path  # what manifests are read with there (tomllib from 3.11)


@pytest.mark.parametrize(
    "text",
    [
        "a = ",
        "a = 'unterminated",
        "[t\nb = 1",
        "a = 1\na = 2",
        "a = [1, 2",
        'a = "\\q"',
        "a = 1 b = 2",
    ],
)
def test_toml_subset_reader_refuses_what_it_cannot_read(text):
    with pytest.raises(ValueError):
        wctx.toml_loads(text, subset=True)


# ----------------------------------------------------------------------------------------------
# Suggestions
# ----------------------------------------------------------------------------------------------


PACKAGE = lambda **kw: json.dumps(kw, indent=2)  # noqa: E731


@pytest.fixture
def manifest_repos(git_repo, store):
    """Repositories in every manifest format, each requiring what another publishes."""
    made = {
        "upload-sdk": {"package.json": PACKAGE(name="@acme/upload-sdk", version="1.0.0")},
        "docs-ui": {
            "package.json": PACKAGE(
                name="docs-ui",
                dependencies={"@acme/upload-sdk": "^1.0.0", "react": "^18"},
                devDependencies={"@acme/test-kit": "workspace:*"},
            )
        },
        "kit": {
            "package.json": PACKAGE(name="kit-root", private=True, workspaces=["packages/*"]),
            "packages/test-kit/package.json": PACKAGE(name="@acme/test-kit"),
            "packages/lint/package.json": PACKAGE(
                name="@acme/lint", peerDependencies={"@acme/upload-sdk": "*"}
            ),
        },
        "py-core": {"pyproject.toml": '[project]\nname = "Acme_Core"\nversion = "1.0"\n'},
        "py-service": {"pyproject.toml": _read(os.path.join(FIXTURES, "pep621.pyproject.toml"))},
        "py-app": {"pyproject.toml": _read(os.path.join(FIXTURES, "poetry-app.pyproject.toml"))},
        "py-tools": {
            "requirements-dev.txt": "# tools\n-r requirements.txt\nacme.core==1.0  # pinned\nhttps://x.invalid/y.whl\n",
            "setup.cfg": "[metadata]\nname = acme-tools\n\n[options]\ninstall_requires =\n    acme-service>=1\n",
        },
        "gosdk": {"go.mod": "module example.com/acme/gosdk\n\ngo 1.22\n"},
        "goapi": {
            "go.mod": "module example.com/acme/goapi\n\ngo 1.22\n\nrequire (\n\texample.com/acme/gosdk v0.0.0\n"
            "\tgolang.org/x/text v0.14.0 // indirect\n)\n\nreplace example.com/acme/gosdk => ../gosdk\n"
        },
        "acme-proto": {"Cargo.toml": '[package]\nname = "acme-proto"\nversion = "0.2.0"\n'},
        "acme-api": {"Cargo.toml": _read(os.path.join(FIXTURES, "crate.Cargo.toml"))},
        "billing": {
            "pom.xml": "<project>\n  <modelVersion>4.0.0</modelVersion>\n  <groupId>com.acme</groupId>\n"
            "  <artifactId>billing</artifactId>\n  <version>1.0</version>\n</project>\n"
        },
        "checkout-svc": {
            "pom.xml": "<project>\n  <groupId>com.acme</groupId>\n  <artifactId>checkout</artifactId>\n"
            "  <dependencies>\n    <dependency>\n      <groupId>com.acme</groupId>\n"
            "      <artifactId>billing</artifactId>\n    </dependency>\n  </dependencies>\n</project>\n"
        },
        "mobile": {
            "build.gradle": "plugins { id 'java' }\ndependencies {\n    implementation 'com.acme:billing:1.0'\n}\n"
        },
    }
    repos = {}
    for name, files in made.items():
        repos[name] = git_repo(name, files)
        wctx.register_repo(store, repos[name].path, workspace="acme")
    return repos


EXPECTED = {
    ("docs-ui", "upload-sdk"): [
        "docs-ui/package.json depends on @acme/upload-sdk, published by upload-sdk (package.json name)"
    ],
    ("docs-ui", "kit"): [
        "docs-ui/package.json depends on @acme/test-kit (devDependencies), published by kit "
        "(packages/test-kit/package.json name)"
    ],
    ("kit", "upload-sdk"): [
        "kit/packages/lint/package.json depends on @acme/upload-sdk (peerDependencies), published by upload-sdk "
        "(package.json name)"
    ],
    ("py-service", "py-core"): [
        "py-service/pyproject.toml depends on acme_core, published by py-core (pyproject.toml [project] name)"
    ],
    ("py-app", "py-core"): [
        "py-app/pyproject.toml depends on acme-core ([tool.poetry.dependencies]), published by py-core "
        "(pyproject.toml [project] name)",
        "py-app/pyproject.toml points acme-core at ../py-core, a checkout of py-core",
    ],
    ("py-tools", "py-core"): [
        "py-tools/requirements-dev.txt depends on acme.core, published by py-core (pyproject.toml [project] name)"
    ],
    ("py-tools", "py-service"): [
        "py-tools/setup.cfg depends on acme-service (install_requires), published by py-service "
        "(pyproject.toml [project] name)"
    ],
    ("goapi", "gosdk"): [
        "goapi/go.mod depends on example.com/acme/gosdk, published by gosdk (go.mod module)",
        "goapi/go.mod depends on example.com/acme/gosdk (replace example.com/acme/gosdk => ../gosdk), "
        "published by gosdk (go.mod module)",
        "goapi/go.mod points example.com/acme/gosdk at ../gosdk, a checkout of gosdk",
    ],
    ("acme-api", "acme-proto"): [
        "acme-api/Cargo.toml depends on acme-proto ([dependencies]), published by acme-proto (Cargo.toml [package] name)",
        "acme-api/Cargo.toml points acme-proto at ../acme-proto, a checkout of acme-proto",
    ],
    ("checkout-svc", "billing"): [
        "checkout-svc/pom.xml depends on com.acme:billing (<dependency>), published by billing (pom.xml artifactId)"
    ],
    ("mobile", "billing"): [
        "mobile/build.gradle depends on com.acme:billing (dependency), published by billing (pom.xml artifactId)"
    ],
}


def test_suggestions_from_every_manifest_format_with_their_evidence(manifest_repos, run_cli, store):
    res = run_cli(["relate", "--suggest", "--json"])
    assert res.code == 0, res
    got = {(s["from"], s["to"]): s["evidence"] for s in res.json["suggestions"]}
    assert got == EXPECTED
    assert all(s["kind"] == "depends_on" for s in res.json["suggestions"])
    # Nothing was declared: listing is not agreeing.
    assert wctx.list_relations(store) == [] and res.json["declared"] == []
    text = run_cli(["relate", "--suggest"])
    assert "suggested: docs-ui depends_on upload-sdk" in text.out
    assert "  because docs-ui/package.json depends on @acme/upload-sdk, published by upload-sdk" in text.out
    assert "nothing declared: run wctx relate --suggest --yes" in text.out
    assert wctx.list_relations(store) == []


def test_declining_is_remembered_and_yes_declares_with_the_evidence(
    manifest_repos, run_cli, store, monkeypatch
):
    # At a terminal: yes to the first, no to the second, then stop.
    answers = iter(["y", "n", "q"])
    monkeypatch.setattr(wctx, "is_tty", lambda stream: True)
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    first = run_cli(["relate", "--suggest"])
    assert first.code == 0, first
    ordered = sorted(EXPECTED)
    declared, declined = ordered[0], ordered[1]
    rels = wctx.list_relations(store)
    assert [(r["from"], r["kind"], r["to"]) for r in rels] == [(declared[0], "depends_on", declared[1])]
    assert rels[0]["note"] == "; ".join(EXPECTED[declared])
    monkeypatch.setattr(wctx, "is_tty", lambda stream: False)
    left = {(s["from"], s["to"]) for s in run_cli(["relate", "--suggest", "--json"]).json["suggestions"]}
    assert left == set(EXPECTED) - {declared, declined}
    yes = run_cli(["relate", "--suggest", "--yes", "--json"])
    assert {(s["from"], s["to"]) for s in yes.json["declared"]} == left
    assert {(r["from"], r["to"]) for r in wctx.list_relations(store)} == left | {declared}
    assert run_cli(["relate", "--suggest", "--json"]).json["suggestions"] == []
    # The declared relations are search topology now.
    assert {r["repo"] for r in wctx.related_repositories(store, "docs-ui")["relations"]} == {
        "kit",
        "upload-sdk",
    }


def test_repo_add_says_what_the_manifests_suggest(git_repo, run_cli):
    sdk = git_repo("sdk", {"go.mod": "module example.com/sdk\n"})
    api = git_repo("api", {"go.mod": "module example.com/api\nrequire example.com/sdk v1.0.0\n"})
    assert run_cli(["repo", "add", sdk.path]).code == 0
    added = run_cli(["repo", "add", api.path])
    assert added.code == 0, added
    assert (
        "1 relation suggested by the manifests (api depends_on sdk); review them: wctx relate --suggest"
        in added.out
    )
    assert run_cli(["relations", "--json"]).json["relations"] == []


def test_hostile_manifests_are_read_safely(git_repo, run_cli, tmp_path):
    secret = tmp_path / "outside.json"
    secret.write_text(json.dumps({"name": "@acme/upload-sdk"}))
    sdk = git_repo("sdk", {"README": "x\n"})
    os.symlink(str(secret), os.path.join(sdk.path, "package.json"))  # never followed out of the repo
    big = git_repo(
        "big", {"package.json": json.dumps({"name": "@acme/big", "x": "y" * (wctx.MANIFEST_MAX_BYTES + 1)})}
    )
    ui = git_repo(
        "ui",
        {
            "package.json": json.dumps(
                {
                    "dependencies": {
                        "@acme/upload-sdk": "1",
                        "@acme/big": "1",
                        "\x1b[2Jevil": "1",
                        "$(rm -rf /)": "1",
                    }
                }
            ),
            "go.mod": "module \x1b]0;title\x07\n",
        },
    )
    for repo in (sdk, big, ui):
        assert run_cli(["repo", "add", repo.path]).code == 0
    res = run_cli(["relate", "--suggest", "--json"])
    assert res.code == 0 and res.json["suggestions"] == [], res
    assert "\x1b" not in run_cli(["relate", "--suggest"]).out
