"""How query words meet the words of stored items, on real stores: inflections and derivations of a
word find each other, an identifier's parts find the identifier, abbreviations match whole words,
a fragment of a word is not a word, reasons claim only what the index matched, an old store's
search rows are rebuilt on upgrade, and no query text ever reaches FTS5 syntax."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import capture_item, older_schema

import wctx


def _add(product, claim, repo="upload-sdk", detail=None, files=None, summary=None):
    return capture_item(product, claim, repo, detail, files, summary)[0]


def _found(product, query, repo="upload-sdk"):
    """The results that match the query's words (not the recent items of a query matching nothing)."""
    res = wctx.search(product.store, query, repo=repo, limit=50)
    return {r["id"]: r for r in res["results"] if any(x.startswith("matches ") for x in r["reasons"])}


def _text_reason(result):
    return next((r for r in result["reasons"] if r.startswith("matches the query text (")), "")


def test_inflections_and_derivations_of_a_word_find_each_other(product):
    expiry = _add(product, "the signed URL expired before the upload finished")
    retry = _add(product, "uploadDocument retries a 419 three times")
    failure = _add(product, "a failure of the chunk writer is swallowed")
    convert = _add(product, "formatSize converts bytes with the wrong base")
    validation = _add(product, "validation of the manifest runs twice")
    unrelated = _add(product, "the progress bar flickers on resize")
    for query, item in [
        ("expires", expiry), ("expiring url", expiry), ("retry", retry), ("retried", retry),
        ("failed chunk", failure), ("fails", failure), ("conversion of bytes", convert),
        ("validate manifest", validation), ("validator", validation), ("signing", expiry),
    ]:  # fmt: skip
        found = _found(product, query)
        assert item in found, query
        assert unrelated not in found, query
        assert _text_reason(found[item]), (query, found[item]["reasons"])


def test_every_part_of_an_identifier_finds_it_and_says_so(product):
    item = _add(
        product, "validateThumbnail drops EXIF orientation",
        detail="the HEIC decoder in thumbnailQueue never sees it", files=["src/upload/upload.ts#uploadDocument"],
    )  # fmt: skip
    for query, word in [("validate", "validate"), ("thumbnail", "thumbnail"), ("queue", "queue"),
                        ("thumbnails validated", "thumbnails"), ("document", "document")]:  # fmt: skip
        found = _found(product, query)
        assert item in found, query
        assert word in " ".join(found[item]["reasons"]).lower(), (query, found[item]["reasons"])
    # The identifier itself, as typed, still finds it (all its words at once).
    assert item in _found(product, "validateThumbnail")


def test_an_abbreviation_matches_whole_words_only(product):
    db = _add(product, "the db pool leaks a connection per reload")
    dbx = _add(product, "dbx export drops the header row")
    cfg = _add(product, "cfg parsing ignores the env override")
    conference = _add(product, "the conference demo used a stale build")
    report = _add(product, "the report page lists every route")
    found = _found(product, "database pool")
    assert db in found and dbx not in found
    found = _found(product, "configuration parsing")
    assert cfg in found and conference not in found
    assert report not in _found(product, "repository")
    assert db in _found(product, "databases")  # the abbreviation of a plural, too


def test_a_fragment_of_a_word_is_not_the_word(product):
    # A query word matches whole words and their inflections, as the words of a sentence: a
    # fragment ("thumb", "appl") no longer finds every longer word it starts ("application").
    thumb = _add(product, "thumbnail generation stalls on large PDFs")
    app = _add(product, "the application id is read from the environment")
    assert thumb not in _found(product, "thumb")
    assert thumb in _found(product, "thumbnails")
    assert app not in _found(product, "apple")
    assert app in _found(product, "applications")
    assert app in _found(product, "app")  # an abbreviation, whole: "app" stands for "application"


def test_a_reason_names_only_words_the_index_matched(product):
    items = [
        _add(
            product, "uploadDocument retries a 419 three times", files=["src/upload/upload.ts#uploadDocument"]
        ),
        _add(product, "the token refresh raced the retry timer", repo="docs-ui"),
        _add(product, "gateway expired sessions early", repo="api-gateway", detail="clock skew of 30 s"),
        _add(product, "formatSize rounds the configured chunk size", summary="chunking work on the uploader"),
    ]
    queries = ["retrying uploads after expiry", "configuration of chunks", "document upload retries",
               "token refreshed", "sessions expire", "formatted sizes", "uploader chunking"]  # fmt: skip
    for query in queries:
        terms = wctx.query_terms(query)
        for result in _found(product, query).values():
            if result["id"] not in items:
                continue
            reason = _text_reason(result)
            if not reason:
                continue
            claimed = reason[len("matches the query text (") : -1].split(", ")
            row = product.store.one("SELECT rid FROM evidence WHERE id = ?", (result["id"],))[0]
            for pair in claimed:
                term, _, written = pair.partition(" as ")
                assert term in terms, (query, term)
                # The word it matched is a word of the item as written.
                assert (written or term).lower() in (result["claim"] + " " + (result["detail"] or "")).lower()
                hit = product.store.one(
                    "SELECT count(*) FROM evidence_fts WHERE rowid = ? AND evidence_fts MATCH ?",
                    (row, wctx.fts_query([term])),
                )[0]
                assert hit == 1, (query, term, result["claim"])


def test_session_summaries_match_by_the_same_words(product):
    item = _add(product, "an unrelated claim about widgets", summary="investigated the expiring signed URLs")
    found = _found(product, "expired signatures")
    assert item in found
    assert any("expired" in r for r in found[item]["reasons"]), found[item]["reasons"]


@pytest.mark.parametrize(
    "query",
    [
        'claim: "retries" OR NOT *', "retries NEAR(upload, 2)", "^retries", "retr*", "(retries", 'retries"',
        "detail:419", "{claim detail}: retries", "retries AND AND", "- retries", "retries + upload",
        "\x00retries\u202e", "RETRIES OR", "«retries»",
    ],
)  # fmt: skip
def test_query_text_never_reaches_fts5_syntax(product, query):
    item = _add(product, "uploadDocument retries a 419 three times")
    found = _found(product, query)  # never an FTS5 syntax error
    terms = wctx.query_terms(query)
    if "retries" in terms:
        assert item in found, (query, terms)
    match = wctx.fts_query(terms) if terms else ""
    # What reaches MATCH is quoted strings joined by OR: strip them and nothing else is left.
    rest = match
    for form in {f for t in terms for f in wctx.match_forms(t)}:
        rest = rest.replace('"%s"' % form.replace('"', '""'), "")
    assert set(rest.replace(" OR ", "").replace("(", "").replace(")", "").strip()) <= set(), (query, match)


def _capture_with_old_search_rows(store, cwd, items, summary):
    """Capture as a store of the previous schema did: the search row holds the texts as written."""
    old_symbols = lambda anchors: " ".join(  # noqa: E731
        dict.fromkeys(
            w for a in anchors if a.get("symbol") for w in [a["symbol"]] + wctx.split_identifier(a["symbol"])
        )
    )
    saved = wctx._FTS_INSERT, wctx._FTS_INSERT_CODE, wctx._fts_symbols
    wctx._FTS_INSERT = "INSERT INTO evidence_fts(rowid, claim, symbols, paths, detail) VALUES (?, ?, ?, ?, ?)"
    # Capture's row with the cited code's words, written to a search table that has no such column.
    wctx._FTS_INSERT_CODE = "INSERT INTO evidence_fts(rowid, claim, symbols, paths, detail) SELECT ?, ?, ?, ?, ? FROM (SELECT ?, ?, ?)"
    wctx._fts_symbols = old_symbols
    try:
        return [e["id"] for e in wctx.capture(store, items, cwd=cwd, summary=summary)["evidence"]]
    finally:
        wctx._FTS_INSERT, wctx._FTS_INSERT_CODE, wctx._fts_symbols = saved


def test_an_older_store_is_rebuilt_on_upgrade_and_finds_its_items(git_repo, wctx_home, monkeypatch):
    repo = git_repo("upload-sdk", {"src/upload/upload.ts": "export function uploadDocument() {}\n"})
    # A store as it was before migration 12 made its search rows of index words.
    older_schema(monkeypatch, wctx.MIGRATIONS[:11])
    store = wctx.open_store(wctx_home)
    wctx.register_repo(store, repo.path)
    ids = _capture_with_old_search_rows(
        store, repo.path,
        [{"kind": "finding", "claim": "uploadDocument retries expired tokens", "repo": "upload-sdk",
          "files": ["src/upload/upload.ts#uploadDocument"]},
         {"kind": "note", "claim": "the progress bar flickers", "repo": "upload-sdk", "detail": "on every resize"}],
        summary="looked at signing failures",
    )  # fmt: skip
    before = {row[0]: tuple(row[1:]) for row in store.all("SELECT e.id, e.claim, e.detail FROM evidence e")}
    store.close()
    monkeypatch.undo()
    store = wctx.open_store(wctx_home)
    try:
        assert wctx.schema_version(store) == len(wctx.MIGRATIONS)
        # Nothing the user stored changed; every item still has its one search row.
        assert {
            row[0]: tuple(row[1:]) for row in store.all("SELECT e.id, e.claim, e.detail FROM evidence e")
        } == before
        assert store.one("SELECT count(*) FROM evidence_fts")[0] == 2
        for query, want in [("retry", ids[0]), ("document", ids[0]), ("expiring token", ids[0]),
                            ("resizing", ids[1]), ("uploads", ids[0])]:  # fmt: skip
            assert want in [r["id"] for r in wctx.search(store, query, repo="upload-sdk")["results"]], query
        # The session summary was reindexed, and a summary written after the upgrade is indexed too.
        found = wctx.search(store, "signed failure", repo="upload-sdk")
        assert set(ids) <= {r["id"] for r in found["results"]}
        later = wctx.capture(
            store, [{"kind": "note", "claim": "nothing in common here", "repo": "upload-sdk"}],
            cwd=repo.path, summary="renamed the validators",
        )["evidence"][0]["id"]  # fmt: skip
        assert later in [
            r["id"] for r in wctx.search(store, "validation renames", repo="upload-sdk")["results"]
        ]
    finally:
        store.close()


def test_the_search_rows_are_written_by_one_function(product):
    # What a capture writes into the search row is what index_text decides, and nothing else.
    rid_id = _add(
        product, "resumeUpload drops the Content-Range header", files=["src/upload/upload.ts#uploadDocument"]
    )
    con = sqlite3.connect(product.store.path)
    try:
        rid = con.execute("SELECT rid FROM evidence WHERE id = ?", (rid_id,)).fetchone()[0]
        claim, symbols, paths = con.execute(
            "SELECT claim, symbols, paths FROM evidence_fts WHERE rowid = ?", (rid,)
        ).fetchone()
    finally:
        con.close()
    assert claim == wctx.index_text("resumeUpload drops the Content-Range header")
    assert symbols == wctx.index_text("uploadDocument") and paths == wctx.index_text("src/upload/upload.ts")
    assert claim.split()[:3] == ["resumeupload", "resum", "upload"]
