"""`wctx doctor [--json]`: every check with its fix, exit 0 healthy / 1 otherwise; and a SQLite
without FTS5 said plainly in one line by doctor and by any search, never as a traceback."""

import os
import sqlite3
import sys

import pytest

import wctx


def checks_by_name(result):
    return {check["name"]: check for check in result.json["checks"]}


@pytest.fixture
def product(git_repo, run_cli):
    """An initialised store with upload-sdk registered in workspace "uploads"."""
    sdk = git_repo("upload-sdk", {"src/upload.py": "def upload_document(doc):\n    return 419\n"})
    assert run_cli(["repo", "add", str(sdk), "--workspace", "uploads"]).code == 0
    return sdk


def test_healthy_installation(product, run_cli, wctx_home, monkeypatch):
    monkeypatch.setenv("WCTX_AUTHOR", "Ada Lovelace <ada@example.com>")
    result = run_cli(["doctor", "--json"], cwd=product)
    assert result.code == 0, result
    report = result.json
    assert report["healthy"] is True
    assert report["version"] == wctx.__version__
    checks = checks_by_name(result)
    assert [c["name"] for c in report["checks"]] == [
        "python",
        "sqlite",
        "git",
        "store",
        "identity",
        "write access",
        "repositories",
        "current repository",
        "hooks",  # every installed agent hook's command, probed
        "mcp",
    ]
    assert all(c["status"] == "ok" and c["fix"] is None for c in report["checks"]), report
    assert checks["python"]["detail"].startswith("%d.%d.%d" % sys.version_info[:3])
    assert checks["sqlite"]["detail"] == "SQLite %s with FTS5" % sqlite3.sqlite_version
    assert checks["git"]["detail"].startswith("git version ")
    assert "schema version %d (current)" % len(wctx.MIGRATIONS) in checks["store"]["detail"]
    assert checks["identity"]["detail"] == "records as Ada Lovelace <ada@example.com>"
    assert "1 registered, all present" in checks["repositories"]["detail"]
    assert "upload-sdk" in checks["current repository"]["detail"]
    assert "uploads" in checks["current repository"]["detail"]


def test_mcp_command_is_this_interpreter_and_this_file(product, run_cli, wctx_home):
    report = run_cli(["doctor", "--json"], cwd=product).json
    assert report["mcp_command"] == [
        sys.executable,
        os.path.abspath(wctx.__file__),
        "--home",
        os.path.abspath(wctx_home),
        "mcp",
    ]
    text = run_cli(["doctor"], cwd=product).out
    assert "%s %s --home %s mcp" % (sys.executable, os.path.abspath(wctx.__file__), wctx_home) in text


def test_default_home_needs_no_home_flag(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert wctx.mcp_command(str(tmp_path / ".wctx"))[-2:] == [os.path.abspath(wctx.__file__), "mcp"]


def test_text_report_lists_checks_and_verdict(product, run_cli):
    result = run_cli(["doctor"], cwd=product)
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0] == "wctx %s doctor" % wctx.__version__
    assert lines[-1] == "healthy"
    assert any(line.startswith("ok    sqlite") for line in lines)


def test_doctor_never_creates_the_store(run_cli, wctx_home, tmp_path):
    result = run_cli(["doctor", "--json"], cwd=tmp_path)
    assert result.code == 0, result  # a store not created yet is a warning, not a failure
    store = checks_by_name(result)["store"]
    assert store["status"] == "warn" and "does not exist yet" in store["detail"]
    assert store["fix"] == "wctx init creates it"
    assert not os.path.exists(os.path.join(wctx_home, "wctx.db"))
    assert "repositories" not in checks_by_name(result)


def test_repository_missing_on_disk_fails_with_its_fix(product, git_repo, run_cli, tmp_path):
    gone = git_repo("old-ui", {"a.txt": "a\n"})
    assert run_cli(["repo", "add", str(gone), "--workspace", "uploads"]).code == 0
    os.rename(str(gone), str(tmp_path / "moved-away"))
    result = run_cli(["doctor", "--json"], cwd=product)
    assert result.code == 1
    assert result.json["healthy"] is False
    check = checks_by_name(result)["repositories"]
    assert check["status"] == "fail"
    assert "1 of 2 registered repositories missing on disk: old-ui" in check["detail"]
    assert "wctx repo remove old-ui" in check["fix"]
    text = run_cli(["doctor"], cwd=product)
    assert text.code == 1
    assert "fix: restore the checkouts, or forget them: wctx repo remove old-ui" in text.out
    assert text.out.splitlines()[-1] == "1 problem: repositories"


def test_unregistered_checkout_gets_a_warning_and_the_command_to_add_it(product, git_repo, run_cli):
    stranger = git_repo("stranger", {"x.py": "x = 1\n"})
    result = run_cli(["doctor", "--json"], cwd=stranger)
    assert result.code == 0
    check = checks_by_name(result)["current repository"]
    assert check["status"] == "warn"
    assert check["fix"].startswith("wctx repo add %s" % os.path.realpath(str(stranger)))


def test_repository_in_no_workspace_gets_a_warning(git_repo, run_cli):
    lonely = git_repo("lonely", {"x.py": "x = 1\n"})
    assert run_cli(["repo", "add", str(lonely)]).code == 0
    check = checks_by_name(run_cli(["doctor", "--json"], cwd=lonely))["current repository"]
    assert check["status"] == "warn"
    assert check["fix"] == "wctx workspace add PRODUCT lonely"


def test_store_newer_than_this_wctx_fails(run_cli, wctx_home, tmp_path):
    assert run_cli(["init"]).code == 0
    con = sqlite3.connect(os.path.join(wctx_home, "wctx.db"))
    con.execute("PRAGMA user_version = %d" % (len(wctx.MIGRATIONS) + 5))
    con.close()
    result = run_cli(["doctor", "--json"], cwd=tmp_path)
    assert result.code == 1
    check = checks_by_name(result)["store"]
    assert check["status"] == "fail"
    assert "newer than this wctx" in check["detail"] and check["fix"].startswith("upgrade wctx")


@pytest.mark.parametrize("user_version", [0, 7])
def test_not_a_wctx_store_fails(run_cli, wctx_home, tmp_path, user_version):
    os.makedirs(wctx_home)
    con = sqlite3.connect(os.path.join(wctx_home, "wctx.db"))
    con.execute("PRAGMA user_version = %d" % user_version)
    con.execute("CREATE TABLE other(x)")
    con.close()
    result = run_cli(["doctor", "--json"], cwd=tmp_path)
    assert result.code == 1
    check = checks_by_name(result)["store"]
    assert check["status"] == "fail" and "is not a wctx store" in check["detail"]


def test_unwritable_store_location_fails(run_cli, monkeypatch, tmp_path):
    # /proc refuses new files even to root, unlike a chmod'ed directory.
    if not os.path.isdir("/proc/self"):
        pytest.skip("needs a /proc filesystem")
    result = run_cli(["--home", "/proc/wctx-doctor-test", "doctor", "--json"], cwd=tmp_path)
    assert result.code == 1
    check = checks_by_name(result)["write access"]
    assert check["status"] == "fail"
    assert "cannot create files in /proc" in check["detail"]
    assert "--home DIR or WCTX_HOME" in check["fix"]


@pytest.mark.parametrize("below", ["", "sub/dir"])
def test_home_that_is_a_file_fails_and_init_agrees(run_cli, tmp_path, below):
    blocker = tmp_path / "f"
    blocker.write_text("x\n")
    home = str(blocker / below) if below else str(blocker)
    result = run_cli(["--home", home, "doctor", "--json"], cwd=tmp_path)
    assert result.code == 1, result
    assert result.json["healthy"] is False
    failed = [c for c in result.json["checks"] if c["status"] == "fail"]
    assert failed and all("can create" not in c["detail"] for c in result.json["checks"])
    assert any("is a file" in c["detail"] and str(blocker) in c["detail"] for c in failed), failed
    assert run_cli(["--home", home, "init"], cwd=tmp_path).code != 0  # doctor was right: init fails
    assert blocker.read_text() == "x\n"


def test_git_missing_fails_with_install_hint(product, run_cli, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    result = run_cli(["doctor", "--json"], cwd=product)
    assert result.code == 1
    check = checks_by_name(result)["git"]
    assert check["status"] == "fail"
    assert "install git" in check["fix"]
    assert "Traceback" not in result.err


# -- SQLite without FTS5 (simulated through the core's probe) -----------------------------------


@pytest.fixture
def no_fts5(monkeypatch):
    monkeypatch.setattr(wctx, "fts5_available", lambda sqlite3_module=None: False)


def test_doctor_says_fts5_is_missing(no_fts5, run_cli, tmp_path):
    result = run_cli(["doctor", "--json"], cwd=tmp_path)
    assert result.code == 1
    check = checks_by_name(result)["sqlite"]
    assert check["status"] == "fail"
    assert check["detail"] == "SQLite %s WITHOUT FTS5" % sqlite3.sqlite_version
    assert "FTS5" in check["fix"]
    text = run_cli(["doctor"], cwd=tmp_path)
    assert "FAIL  sqlite" in text.out


@pytest.mark.parametrize("store_exists", [False, True], ids=["new-store", "existing-store"])
def test_search_says_fts5_is_missing_in_one_line(product, run_cli, monkeypatch, store_exists, wctx_home):
    if not store_exists:
        monkeypatch.setenv("WCTX_HOME", os.path.join(wctx_home, "fresh"))
    monkeypatch.setattr(wctx, "fts5_available", lambda sqlite3_module=None: False)
    for argv in (["search", "upload"], ["search", "upload", "--json"], ["capture", "--finding", "x"]):
        result = run_cli(argv, cwd=product)
        assert result.code == 1, result
        if "--json" in argv:  # under --json the error is also JSON on stdout
            assert result.json == {"error": result.err[len("wctx: ") :].strip(), "code": 1}
        else:
            assert result.out == ""
        lines = result.err.splitlines()
        assert len(lines) == 1, result.err
        assert "was built without FTS5" in lines[0] and sqlite3.sqlite_version in lines[0]
        assert "Traceback" not in result.err


def test_service_layer_raises_a_wctx_error_not_sqlite_error(no_fts5, wctx_home):
    with pytest.raises(wctx.WctxError, match="without FTS5"):
        wctx.open_store(wctx_home)


def test_mcp_search_tool_says_fts5_is_missing(no_fts5, wctx_home):
    import io
    import json

    import wctx_mcp

    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "search_evidence", "arguments": {"query": "upload"}},
        },
    ]
    stdin = io.BytesIO("".join(json.dumps(m) + "\n" for m in messages).encode("utf-8"))
    stdout = io.BytesIO()
    wctx_mcp.main([], core=wctx, home=wctx_home, stdin=stdin, stdout=stdout)
    replies = {r.get("id"): r for r in map(json.loads, stdout.getvalue().splitlines())}
    result = replies[2]["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "was built without FTS5" in text and "Traceback" not in text


def test_hooks_written_by_an_earlier_wctx_get_advice_to_reinstall(
    product, run_cli, tmp_path, monkeypatch, wctx_home
):
    """A session hook that runs wctx.py as a script (compiled from source at every session start)
    or `-m wctx` without -I (a repository's own wctx.py would run instead) still runs, so doctor
    stays healthy, but says how to get the form install writes now."""
    claude = tmp_path / "claude"
    claude.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    script = "%s %s --home %s import --hook" % (sys.executable, os.path.abspath(wctx.__file__), wctx_home)
    start = "%s %s --home %s brief --hook claude-code" % (
        sys.executable,
        os.path.abspath(wctx.__file__),
        wctx_home,
    )
    (claude / "settings.json").write_text(
        '{"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "%s"}]}],'
        ' "SessionStart": [{"hooks": [{"type": "command", "command": "%s"}]}]}}' % (script, start)
    )
    result = run_cli(["doctor", "--json"], cwd=product)
    assert result.code == 0, result
    hooks = checks_by_name(result)["hooks"]
    assert hooks["status"] == "warn", hooks
    assert "claude-code SessionStart" in hooks["detail"] and "compiled from source" in hooks["detail"]
    assert hooks["fix"].endswith(" hooks install claude-code")
    assert run_cli(["hooks", "install", "claude-code"]).code == 0  # the fix, as doctor says it
    assert checks_by_name(run_cli(["doctor", "--json"], cwd=product))["hooks"]["status"] == "ok"


def test_no_identity_is_a_warning_naming_how_to_set_one(product, run_cli, monkeypatch, tmp_path):
    monkeypatch.delenv("WCTX_AUTHOR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "nobody"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    result = run_cli(["doctor", "--json"], cwd=product)
    assert result.code == 0  # a warning: everything still works, items just say "an unknown author"
    identity = checks_by_name(result)["identity"]
    assert identity["status"] == "warn" and "unknown author" in identity["detail"]
    assert "git config --global user.name" in identity["fix"] and "wctx whoami --set" in identity["fix"]
    assert run_cli(["whoami", "--set", "Ada Lovelace <ada@example.com>"]).code == 0
    assert checks_by_name(run_cli(["doctor", "--json"], cwd=product))["identity"]["status"] == "ok"
