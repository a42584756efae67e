"""`wctx mcp-info`, `wctx instructions [--write]` and `wctx mcp --help`, as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mcp_helpers.repos import ROOT, make_repo, wctx  # noqa: E402

import wctx_mcp  # noqa: E402


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("WCTX_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def run(capsys, *argv):
    code = wctx.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_mcp_info_prints_working_snippets_for_every_client(capsys):
    code, out, _ = run(capsys, "mcp-info")
    assert code == 0
    path = os.path.join(ROOT, "wctx.py")
    assert "claude mcp add --scope user wctx" in out and f"python3 {path} mcp" in out
    for where in (
        ".mcp.json",
        "~/.codex/config.toml",
        ".cursor/mcp.json",
        ".vscode/mcp.json",
        "claude_desktop_config.json",
        "~/.gemini/settings.json",
    ):
        assert where in out
    for tool in wctx_mcp.TOOLS_BY_NAME:
        assert tool in out


def test_mcp_info_json_snippets_parse(capsys, home, git_repo):
    # The repository must exist: snippets for an unknown one would start a server that fails.
    assert run(capsys, "repo", "add", git_repo("docs-ui", {"a.ts": "x\n"}).path)[0] == 0
    code, out, _ = run(capsys, "mcp-info", "--json", "--repo", "docs-ui")
    assert code == 0
    info = json.loads(out)
    path = os.path.join(ROOT, "wctx.py")
    assert info["server"]["command"] == ["python3", path, "mcp", "--repo", "docs-ui"]
    assert info["server"]["env"] == {"WCTX_HOME": str(home)}
    snippets = {s["client"]: s["text"] for s in info["snippets"]}
    vscode = json.loads(snippets["VS Code"])["servers"]["wctx"]
    assert vscode["type"] == "stdio" and vscode["args"] == [path, "mcp", "--repo", "docs-ui"]
    for client in ("Claude Code (project)", "Cursor", "Claude Desktop", "Gemini CLI"):
        server = json.loads(snippets[client])["mcpServers"]["wctx"]
        assert server["command"] == "python3" and server["args"][0] == path
        assert server["env"] == {"WCTX_HOME": str(home)}
    assert snippets["Claude Code"].startswith("claude mcp add --scope user wctx -e WCTX_HOME=")
    codex = snippets["Codex"]
    assert codex.startswith("[mcp_servers.wctx]\n")
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    parsed = tomllib.loads(codex)["mcp_servers"]["wctx"]
    assert parsed["command"] == "python3" and parsed["args"][0] == path
    assert parsed["env"] == {"WCTX_HOME": str(home)}
    assert [t["name"] for t in info["tools"]][0] == "workspace_overview"


def test_mcp_info_from_the_zipapp_names_the_pyz(tmp_path, home):
    pyz = tmp_path / "dist" / "wctx.pyz"
    subprocess.run(
        [sys.executable, os.path.join(ROOT, "zipapp", "build.py"), "-o", str(pyz)],
        check=True,
        capture_output=True,
    )
    done = subprocess.run(
        [sys.executable, str(pyz), "mcp-info", "--json"], capture_output=True, check=True, cwd=str(tmp_path)
    )
    info = json.loads(done.stdout)
    assert info["server"]["command"][1] == str(pyz)


def test_instructions_print_the_guidance(capsys):
    code, out, _ = run(capsys, "instructions")
    assert code == 0 and "search_evidence" in out and "record" in out.lower()
    assert len(wctx_mcp.INSTRUCTIONS.encode("utf-8")) < 2048


def test_instructions_write_is_idempotent_and_touches_nothing_else(capsys, tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "repo", {"src/a.py": "x = 1\n", "CLAUDE.md": "# House rules\n\nBe kind.\n"})
    sub = repo / "src"
    monkeypatch.chdir(sub)
    code, out, _ = run(capsys, "instructions", "--write")
    assert code == 0
    claude = (repo / "CLAUDE.md").read_text()
    agents = (repo / "AGENTS.md").read_text()
    assert claude.startswith("# House rules\n\nBe kind.\n\n<!-- wctx:begin")
    assert "appended" in out and "created" in out
    assert agents.startswith("<!-- wctx:begin") and agents.rstrip().endswith("<!-- wctx:end -->")

    code, out, _ = run(capsys, "instructions", "--write")
    assert out.count("unchanged") == 3
    assert (repo / "GEMINI.md").read_text() == agents  # Gemini CLI reads GEMINI.md
    assert (repo / "CLAUDE.md").read_text() == claude

    # Edited inside the block: replaced in place; text after the block survives.
    edited = claude.replace("Workspace memory", "Old heading") + "\n## Later section\nkeep me\n"
    (repo / "CLAUDE.md").write_text(edited)
    code, out, _ = run(capsys, "instructions", "--write", "--json")
    result = {os.path.basename(f["path"]): f["action"] for f in json.loads(out)["files"]}
    assert result == {"CLAUDE.md": "updated", "AGENTS.md": "unchanged", "GEMINI.md": "unchanged"}
    again = (repo / "CLAUDE.md").read_text()
    assert "Old heading" not in again and again.count("<!-- wctx:begin") == 1
    assert again.startswith("# House rules\n") and again.endswith("## Later section\nkeep me\n")


def test_instructions_write_outside_a_repository_is_a_usage_error(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "instructions", "--write")
    assert code == 2 and "git" in err
    assert not (tmp_path / "CLAUDE.md").exists()


def test_instructions_name_the_command_that_runs_wctx_here(capsys, tmp_path, monkeypatch):
    # Run as `python3 wctx.py` (no wctx on PATH): the written guidance says exactly that.
    monkeypatch.setenv("PATH", str(tmp_path))
    code, out, _ = run(capsys, "instructions")
    command = wctx_mcp._shell_quote(sys.executable) + " " + os.path.join(ROOT, "wctx.py")
    assert code == 0 and "`%s search " % command in out and "`wctx search" not in out


def test_mcp_info_notes_gemini_folder_trust(capsys):
    code, out, _ = run(capsys, "mcp-info")
    assert code == 0 and "Gemini CLI connects no MCP server in a folder it does not trust" in out


def test_mcp_help_names_its_options():
    done = subprocess.run(
        [sys.executable, os.path.join(ROOT, "wctx.py"), "mcp", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0 and "--repo" in done.stdout and "--workspace" in done.stdout
