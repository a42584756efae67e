"""A caller standing outside every registered repository can search one workspace."""

from __future__ import annotations

import wctx


def _record(product):
    sdk = wctx.capture(product.store, [{"kind": "finding", "claim": "uploads retry after a 419", "repo": "upload-sdk"}],
                       cwd=product.sdk.path)  # fmt: skip
    other = wctx.capture(product.store, [{"kind": "finding", "claim": "uploads are disabled here", "repo": "other"}],
                         cwd=product.other.path)  # fmt: skip
    return sdk["evidence"][0]["id"], other["evidence"][0]["id"]


def test_workspace_scope_from_outside_any_repository(product, run_cli, tmp_path):
    sdk_id, other_id = _record(product)
    res = run_cli(["search", "uploads", "--workspace", "uploads", "--json"], cwd=tmp_path)
    assert res.code == 0, res
    data = res.json
    assert [r["id"] for r in data["results"]] == [sdk_id]
    assert "in workspace uploads" in data["results"][0]["reasons"]
    assert sorted(data["searched"]) == ["api-gateway", "docs-ui", "upload-sdk"]
    assert other_id not in res.out


def test_without_a_workspace_outside_a_repository_is_a_clear_error(product, run_cli, tmp_path):
    _record(product)
    res = run_cli(["search", "uploads"], cwd=tmp_path)
    assert res.code == 1
    assert "not inside a registered repository" in res.err and len(res.err.strip().splitlines()) == 1
    unknown = run_cli(["search", "uploads", "--workspace", "nope"], cwd=tmp_path)
    assert unknown.code == 1 and "unknown workspace 'nope'" in unknown.err


def test_inside_a_repository_the_repository_scope_wins(product, run_cli):
    sdk_id, other_id = _record(product)
    # Standing in "other" (workspace elsewhere): --workspace uploads does not widen the scope.
    res = run_cli(["search", "uploads", "--workspace", "uploads", "--json"], cwd=product.other.path)
    assert [r["id"] for r in res.json["results"]] == [other_id]
    assert "same repository" in res.json["results"][0]["reasons"]
