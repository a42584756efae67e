"""`wctx doctor` re-checks the symbols stored items cite: one that its file no longer defines
(renamed, most often) is named with the item and the nearest names that file defines now; the
MCP ``record_evidence`` result names them too."""

import os
import sys

from conftest import db_snapshot

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_helpers.fixtures import running  # noqa: E402

UPLOAD = "def upload_document(doc):\n    return 419\n\n\ndef retry_after(seconds):\n    return seconds\n"
CLIENT = "package client\n\nconst MaxBatch = 512\n\nfunc Retry(n int) int {\n\treturn n\n}\n"


def checks_by_name(report):
    return {check["name"]: check for check in report["checks"]}


def _captured(git_repo, run_cli):
    sdk = git_repo("upload-sdk", {"src/upload.py": UPLOAD, "client/client.go": CLIENT})
    assert run_cli(["repo", "add", str(sdk), "--workspace", "uploads"]).code == 0
    ids = []
    for claim, cited in (
        ("419 is returned terminal", "src/upload.py#upload_document"),
        ("retries are unbounded", "client/client.go#Retry"),
        ("a batch holds 512 items", "client/client.go#MaxBatch"),
    ):
        res = run_cli(["capture", "--finding", claim, "--file", cited, "--json"], cwd=sdk)
        assert res.code == 0, res
        ids.append(res.json["evidence"][0]["id"])
    return sdk, ids


def test_doctor_says_every_cited_symbol_is_found(git_repo, run_cli):
    sdk, _ = _captured(git_repo, run_cli)
    res = run_cli(["doctor", "--json"], cwd=sdk)
    check = checks_by_name(res.json)["cited symbols"]
    assert check["status"] == "ok", check
    assert "3 cited symbols" in check["detail"] and "all found" in check["detail"]


def test_doctor_names_a_renamed_symbol_with_the_nearest_names_of_its_file(git_repo, run_cli, wctx_home):
    sdk, ids = _captured(git_repo, run_cli)
    sdk.write("src/upload.py", UPLOAD.replace("upload_document", "upload_documents"))
    sdk.write("client/client.go", CLIENT.replace("func Retry(", "func RetryAll("))
    sdk.commit("rename")
    before = db_snapshot(wctx_home)
    res = run_cli(["doctor", "--json"], cwd=sdk)
    check = checks_by_name(res.json)["cited symbols"]
    assert check["status"] == "warn", check
    assert "2 of 3 cited symbols are no longer found" in check["detail"]
    assert "%s src/upload.py#upload_document (did you mean upload_documents?)" % ids[0] in check["detail"]
    assert "%s client/client.go#Retry (did you mean RetryAll?)" % ids[1] in check["detail"]
    assert "MaxBatch" not in check["detail"]
    assert "wctx supersede %s" % ids[0] in check["fix"]
    assert res.code == 0, res  # a warning: the installation works
    text = run_cli(["doctor"], cwd=sdk)
    assert "did you mean upload_documents?" in text.out
    assert db_snapshot(wctx_home) == before  # doctor changes nothing


def test_doctor_leaves_out_retracted_items_and_symbols_never_located(git_repo, run_cli):
    sdk, ids = _captured(git_repo, run_cli)
    res = run_cli(
        ["capture", "--finding", "a handler not written yet", "--file", "src/upload.py#mount_all",
         "--allow-missing-symbol"],
        cwd=sdk,
    )  # fmt: skip
    assert res.code == 0, res
    assert run_cli(["retract", ids[0]], cwd=sdk).code == 0
    sdk.write("src/upload.py", UPLOAD.replace("upload_document", "upload_documents"))
    check = checks_by_name(run_cli(["doctor", "--json"], cwd=sdk).json)["cited symbols"]
    assert check["status"] == "ok", check
    assert "2 cited symbols" in check["detail"]


def test_record_evidence_names_the_nearest_go_names_and_never_a_keyword(git_repo, run_cli, wctx_home):
    sdk = git_repo("upload-sdk", {"client/client.go": CLIENT.replace("func Retry(", "func RetryAll(")})
    assert run_cli(["repo", "add", str(sdk), "--workspace", "uploads"]).code == 0
    before = db_snapshot(wctx_home)
    with running(wctx_home, sdk.path) as server:
        server.initialize()
        item = {"kind": "finding", "claim": "retries are unbounded", "files": ["client/client.go#Retry"]}
        result = server.call("record_evidence", {"items": [item]})
        assert result["isError"] is True, result
        text = result["content"][0]["text"]
        assert "symbol Retry was not found in upload-sdk:client/client.go (did you mean RetryAll?)" in text
        assert db_snapshot(wctx_home) == before
