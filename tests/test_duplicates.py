"""Recording a claim again: the duplicate rule says what happened, a new detail is never dropped
in silence, and nothing is re-stamped unless someone confirms it."""

from __future__ import annotations

import pytest

import wctx

CACHE_PY = "def evict(key):\n    return key\n\n\ndef warm(keys):\n    return list(keys)\n"


@pytest.fixture
def cache_repo(git_repo, store):
    repo = git_repo("kv-cache", {"kv/cache.py": CACHE_PY})
    wctx.register_repo(store, repo.path, workspace="kv")
    return repo


def capture(run_cli, repo, claim, *more):
    res = run_cli(["capture", "--finding", claim, "--repo", "kv-cache", *more, "--json"], cwd=repo.path)
    assert res.code == 0, res
    (item,) = res.json["evidence"]
    return res, item


def test_a_new_detail_on_a_recorded_claim_is_kept_as_its_own_item_and_said(cache_repo, store, run_cli):
    _, first = capture(
        run_cli, cache_repo, "evict races with warm :: seen under load", "--file", "kv/cache.py#evict"
    )
    res, again = capture(
        run_cli,
        cache_repo,
        "Evict races with warm. :: the lock is taken after the lookup",
        "--file",
        "kv/cache.py#evict",
    )
    assert again["duplicate"] is False and again["id"] != first["id"]
    assert "restamped" not in again
    said = " ".join(res.json["warnings"])
    assert (
        first["id"] in said
        and "same claim" in said
        and "wctx supersede %s --by %s" % (first["id"], again["id"]) in said
    )
    assert wctx.get_evidence(store, first["id"])["detail"] == "seen under load"
    assert wctx.get_evidence(store, again["id"])["detail"] == "the lock is taken after the lookup"
    # The text says it too, on stderr, for a person at a terminal.
    text = run_cli(
        ["capture", "--finding", "evict races with warm :: also when the key is new", "--repo", "kv-cache",
         "--file", "kv/cache.py#evict"],
        cwd=cache_repo.path,
    )  # fmt: skip
    assert text.code == 0 and "same claim" in text.err


def test_the_same_detail_again_or_none_is_one_item_and_says_so(cache_repo, store, run_cli):
    _, first = capture(
        run_cli, cache_repo, "warm is quadratic :: sorts inside the loop", "--file", "kv/cache.py#warm"
    )
    for claim in (
        "warm is quadratic :: sorts  inside the loop",
        "warm is quadratic",
        "WARM is quadratic :: sorts",
    ):
        res, again = capture(run_cli, cache_repo, claim, "--file", "kv/cache.py#warm")
        assert again["duplicate"] is True and again["id"] == first["id"], claim
        assert again["message"].startswith(first["id"] + ": ")
    assert wctx.get_evidence(store, first["id"])["detail"] == "sorts inside the loop"


def test_recording_again_after_the_code_changed_does_not_restamp(cache_repo, store, run_cli):
    _, first = capture(run_cli, cache_repo, "evict never frees the slot", "--file", "kv/cache.py#evict")
    cache_repo.write("kv/cache.py", CACHE_PY.replace("return key", "return None"))
    cache_repo.commit("evict returns nothing")
    assert run_cli(["verify", first["id"], "--json"]).json["items"][0]["verdict"] == "stale"
    res, again = capture(run_cli, cache_repo, "evict never frees the slot", "--file", "kv/cache.py#evict")
    assert again["duplicate"] is True and again["id"] == first["id"]
    assert "changed since" in again["message"] and "wctx confirm %s" % first["id"] in again["message"]
    assert run_cli(["verify", first["id"], "--json"]).json["items"][0]["verdict"] == "stale"
    assert "confirmed" not in [h["event"] for h in wctx.get_evidence(store, first["id"])["history"]]
