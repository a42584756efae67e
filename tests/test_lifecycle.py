"""Keeping memory true over time: stale reasons that name only the commits that changed a cited
symbol, confirm, forget, one duplicate rule, a verify people keep running, and aging."""

from __future__ import annotations

import wctx

CLIENT = "src/client.py"

# A werkzeug-like module: two functions in one file, edited in separate commits.
HELPERS_PY = """def redirect(location, code=302):
    return {"location": location, "code": code}


def send_file(path, mimetype=None):
    return {"path": path, "mimetype": mimetype or "application/octet-stream"}


def safe_join(directory, *parts):
    return "/".join((directory,) + parts)
"""


def capture_one(product, files, repo="upload-sdk", claim="a finding", cwd=None, **extra):
    item = {"kind": "finding", "claim": claim, "repo": repo, "files": list(files)}
    item.update(extra)
    res = wctx.capture(product.store, [item], cwd=cwd or product.ui.path)
    return res["evidence"][0]


def verify_reason(run_cli, eid):
    res = run_cli(["verify", eid, "--json"])
    assert res.err == "", res
    (item,) = res.json["items"]
    return item["verdict"], item["reasons"][0]


# ----------------------------------------------------------------------------------------------
# Stale reasons name only the commits that changed the cited symbol
# ----------------------------------------------------------------------------------------------


def test_demo_names_only_the_commit_that_changed_the_symbol(run_wctx, tmp_path):
    res = run_wctx(["demo"], cwd=str(tmp_path))
    assert res.code == 0, res
    lines = [line.strip() for line in res.out.splitlines()]
    stale = [line for line in lines if line.startswith("src/upload/upload.ts#uploadDocument changed")]
    assert stale, res.out
    reason = stale[0]
    assert "changed in 1 commit since" in reason
    assert '"retry uploads after a 419"' in reason
    # The KiB commit touched the file but not the function: summarised, never named as a change.
    assert "show sizes in KiB" not in reason
    assert reason.endswith("the file changed in 1 other commit that left it intact")
    search_reason = [line for line in lines if line.startswith("why:") and "stale:" in line]
    assert search_reason and "show sizes in KiB" not in search_reason[0]


def test_two_commits_each_reason_names_its_own_commit(product, run_cli):
    sdk = product.sdk
    sdk.write("src/helpers.py", HELPERS_PY)
    base = sdk.commit("add helpers")
    on_redirect = capture_one(product, ["src/helpers.py#redirect"], claim="redirect")["id"]
    on_send = capture_one(product, ["src/helpers.py#send_file"], claim="send_file")["id"]
    on_join = capture_one(product, ["src/helpers.py#safe_join"], claim="safe_join")["id"]
    sdk.write("src/helpers.py", sdk.read("src/helpers.py").replace("code=302", "code=303"))
    first = sdk.commit("redirect defaults to 303")
    sdk.write("src/helpers.py", sdk.read("src/helpers.py").replace("application/octet-stream", "text/plain"))
    second = sdk.commit("send_file guesses text")

    verdict, reason = verify_reason(run_cli, on_send)
    assert verdict == "stale"
    assert reason == (
        'src/helpers.py#send_file changed in 1 commit since %s: %s %s "send_file guesses text"; '
        "the file changed in 1 other commit that left it intact" % (base[:7], second[:7], reason.split()[8])
    )
    assert first[:7] not in reason

    verdict, reason = verify_reason(run_cli, on_redirect)
    assert verdict == "stale" and first[:7] in reason and second[:7] not in reason
    assert '"redirect defaults to 303"' in reason

    verdict, reason = verify_reason(run_cli, on_join)
    assert verdict == "current"
    assert reason.startswith("symbol safe_join unchanged; other parts of src/helpers.py changed in 2 commits")


def test_uncommitted_edit_is_named_as_uncommitted_not_as_commits(product, run_cli):
    sdk = product.sdk
    sdk.write("src/helpers.py", HELPERS_PY)
    sdk.commit("add helpers")
    eid = capture_one(product, ["src/helpers.py#send_file"])["id"]
    sdk.write("src/helpers.py", sdk.read("src/helpers.py").replace("code=302", "code=307"))
    sdk.commit("redirect 307")
    sdk.write("src/helpers.py", sdk.read("src/helpers.py").replace('return "/"', 'return "\\\\"'))
    sdk.commit("join with backslashes")
    sdk.write("src/helpers.py", sdk.read("src/helpers.py").replace("mimetype or", "mimetype and"))
    verdict, reason = verify_reason(run_cli, eid)
    assert verdict == "stale"
    assert reason == (
        "src/helpers.py#send_file changed: uncommitted changes in the working tree; "
        "the file changed in 2 commits that left it intact"
    )


def test_a_commit_and_an_uncommitted_edit_are_both_named(product, run_cli):
    sdk = product.sdk
    eid = capture_one(product, [CLIENT + "#connect"])["id"]
    sdk.write(CLIENT, sdk.read(CLIENT).replace('{"url": url}', '{"url": url, "t": 1}'))
    changed = sdk.commit("connect takes a timeout")
    sdk.write(CLIENT, sdk.read(CLIENT).replace("min(attempts, 3)", "min(attempts, 4)"))
    sdk.commit("retry cap 4")
    sdk.write(CLIENT, sdk.read(CLIENT).replace('"t": 1', '"t": 2'))
    verdict, reason = verify_reason(run_cli, eid)
    assert verdict == "stale"
    assert changed[:7] in reason and "retry cap 4" not in reason
    assert "and uncommitted changes in the working tree" in reason
    assert reason.endswith("the file changed in 1 other commit that left it intact")


def test_symbol_changes_are_followed_across_a_rename(product, run_cli):
    sdk = product.sdk
    eid = capture_one(product, [CLIENT + "#connect"])["id"]
    sdk.write(CLIENT, sdk.read(CLIENT).replace('{"url": url}', '{"url": url, "v": 2}'))
    changed = sdk.commit("connect v2")
    sdk.git("mv", CLIENT, "src/transport.py")
    sdk.commit("rename client to transport")
    sdk.write("src/transport.py", sdk.read("src/transport.py").replace("min(attempts, 3)", "attempts"))
    sdk.commit("no retry cap")
    verdict, reason = verify_reason(run_cli, eid)
    assert verdict == "stale"
    assert changed[:7] in reason and '"connect v2"' in reason
    assert "no retry cap" not in reason and "rename client to transport" not in reason
    assert "changed in 1 commit since" in reason
    assert "the file changed in 2 other commits that left it intact" in reason
    assert "followed rename src/client.py -> src/transport.py" in reason


def test_a_symbol_that_vanished_names_the_commit_that_removed_it(product, run_cli):
    sdk = product.sdk
    eid = capture_one(product, [CLIENT + "#retry_policy"])["id"]
    sdk.write(CLIENT, sdk.read(CLIENT).replace('{"url": url}', '{"url": url, "v": 2}'))
    sdk.commit("connect v2")
    text = sdk.read(CLIENT)
    sdk.write(CLIENT, text[: text.index("def retry_policy")].rstrip() + "\n")
    removed = sdk.commit("drop retry_policy")
    verdict, reason = verify_reason(run_cli, eid)
    assert verdict == "stale"
    assert reason.startswith("symbol retry_policy no longer found in src/client.py")
    assert removed[:7] in reason and "connect v2" not in reason
    assert "1 other commit that left it intact" in reason


def test_symbol_history_costs_one_cat_file_batch_per_repository(product, run_cli, monkeypatch):
    sdk = product.sdk
    sdk.write("src/helpers.py", HELPERS_PY)
    sdk.commit("add helpers")
    ids = [capture_one(product, ["src/helpers.py#" + s], claim=s)["id"] for s in ("redirect", "send_file")]
    ids.append(capture_one(product, [CLIENT + "#connect"], claim="connect")["id"])
    for n in range(3):
        sdk.write(
            "src/helpers.py", sdk.read("src/helpers.py").replace("code=30%d" % (2 + n), "code=30%d" % (3 + n))
        )
        sdk.write(CLIENT, sdk.read(CLIENT).replace("3)" if n == 0 else "%d)" % (n + 3), "%d)" % (n + 4)))
        sdk.write(CLIENT, sdk.read(CLIENT).replace('"url": url', '"url": url, "n%d": 1' % n, 1))
        sdk.commit("round %d" % n)
    sdk.write("src/helpers.py", sdk.read("src/helpers.py").replace('or "', 'or  "'))
    sdk.commit("send_file spacing")
    calls = []
    real = wctx.run_git

    def counting(repo_path, args, **kw):
        calls.append(list(args))
        return real(repo_path, args, **kw)

    monkeypatch.setattr(wctx, "run_git", counting)
    res = wctx.verify(product.store, ids)
    batches = [c for c in calls if c[:2] == ["cat-file", "--batch"]]
    assert len(batches) == 1, calls
    verdicts = {i["id"]: i["verdict"] for i in res["items"]}
    assert set(verdicts.values()) == {"stale"}
    send_reason = [i for i in res["items"] if i["id"] == ids[1]][0]["reasons"][0]
    assert "send_file spacing" in send_reason and "round" not in send_reason.split(";")[0]
