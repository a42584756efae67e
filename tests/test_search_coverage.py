"""How much of a question an item answers: a word that only the cited code's own words hold (its
comments, its commit subjects) counts a share of a word, whether or not the item happens to hold
every word of the question somewhere."""

from __future__ import annotations

import wctx

TIMER_PY = '''def tick():
    """Compensates drift and skew of the wall clock."""
    return 0
'''


def _capture(store, repo, claim, files=None):
    item = {"kind": "finding", "claim": claim, "repo": repo.name}
    if files:
        item["files"] = files
    return wctx.capture(store, [item], cwd=repo.path)["evidence"][0]["id"]


def test_an_item_saying_more_of_the_question_outranks_one_whose_cited_code_holds_the_rest(git_repo, store):
    repo = git_repo("clockwork", {"src/timer.py": TIMER_PY})
    wctx.register_repo(store, repo.path)
    # Holds every word of the question, two of them only in the comment of the code it cites.
    cited = _capture(store, repo, "scheduler lease expires early", files=["src/timer.py#tick"])
    # Says three of the four words itself.
    said = _capture(store, repo, "scheduler lease drift")
    for n in range(3):
        _capture(store, repo, "batch %d scheduler runs nightly" % n)

    res = wctx.search(store, "scheduler lease drift skew", cwd=repo.path, limit=5)

    ids = [r["id"] for r in res["results"]]
    assert ids[:2] == [said, cited], res["results"]
    reasons = res["results"][1]["reasons"]
    assert "matches words of the cited code (drift, skew)" in reasons, reasons
    # Plain BM25 is what it was: the cited code's words still score there.
    fts = wctx.search(store, "scheduler lease drift skew", cwd=repo.path, limit=5, rank="fts")
    assert {cited, said} <= {r["id"] for r in fts["results"]}
