"""Real temporary git repositories, registered in a per-test store, for the MCP tests."""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import wctx  # noqa: E402

GIT_ENV = {
    "GIT_AUTHOR_NAME": "wctx test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "wctx test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo, *args):
    env = dict(os.environ, **GIT_ENV)
    env["HOME"] = str(repo)  # no user config leaks in
    subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, stdout=subprocess.PIPE)


def make_repo(path, files):
    """A git repository at ``path`` holding ``files`` ({relative path: text}) in one commit."""
    os.makedirs(path, exist_ok=True)
    git(path, "init", "-q")
    for rel, text in files.items():
        full = os.path.join(str(path), rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


SDK_FILES = {
    "src/upload.py": "def uploadDocument(doc):\n    return send(doc)\n\n\ndef send(doc):\n    return 419\n",
    "README.md": "# upload sdk\n",
}
UI_FILES = {
    "app/page.py": "from sdk import uploadDocument\n\n\ndef on_click(doc):\n    return uploadDocument(doc)\n",
}
OTHER_FILES = {"main.py": "print('unrelated')\n"}


def product(tmp_path):
    """Two related repos in one workspace (ui uses sdk) and one unrelated repo; returns paths."""
    home = tmp_path / "home"
    sdk = make_repo(tmp_path / "upload-sdk", SDK_FILES)
    ui = make_repo(tmp_path / "docs-ui", UI_FILES)
    other = make_repo(tmp_path / "other", OTHER_FILES)
    store = wctx.open_store(str(home))
    try:
        wctx.register_repo(store, str(sdk), name="upload-sdk", workspace="docs")
        wctx.register_repo(store, str(ui), name="docs-ui", workspace="docs")
        wctx.register_repo(store, str(other), name="other", workspace="elsewhere")
        wctx.relate(store, "docs-ui", "uses", "upload-sdk")
    finally:
        store.close()
    return {"home": home, "sdk": sdk, "ui": ui, "other": other}
