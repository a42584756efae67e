from __future__ import annotations

import os

from .capture import capture
from .cli_format import format_search, format_verify
from .errors import UsageError
from .git import run_git
from .items import verify
from .repos import register_repo, relate
from .search import search
from .store import open_store

# ----------------------------------------------------------------------------------------------
# Demo: a throwaway workspace that shows the whole loop
# ----------------------------------------------------------------------------------------------

_DEMO_SDK = """export interface UploadOptions {
  expiresIn?: number;
}

export async function uploadDocument(file: Blob, opts: UploadOptions = {}) {
  const res = await fetch("/api/upload", { method: "POST", body: file });
  if (res.status === 419) {
    // Session expired: surfaced as a terminal failure, no retry.
    throw new Error("upload failed");
  }
  return res.json();
}

export function formatSize(bytes: number): string {
  return (bytes / 1024).toFixed(1) + " kB";
}
"""

_DEMO_UI = """import { uploadDocument } from "upload-sdk";

export function UploadButton() {
  return <button onClick={() => uploadDocument(pickFile())}>Upload</button>;
}
"""


def _demo_commit(path, message):
    ident = ("-c", "user.name=wctx demo", "-c", "user.email=demo@wctx.invalid", "-c", "commit.gpgsign=false")
    run_git(path, ["add", "-A"])
    run_git(path, ["commit", "-q", "-m", message], extra_options=ident)


def run_demo(out, keep_dir=None):
    """Build two small repos, capture a cross-repo finding, search, change the code, verify.
    Each step is printed as the command that does it, with the store it uses."""
    import shlex
    import shutil
    import tempfile

    if keep_dir and os.path.isdir(keep_dir) and os.listdir(keep_dir):
        # A second demo into the same directory would find its repositories already committed.
        raise UsageError("demo --keep %s: the directory is not empty; give a new or empty one" % keep_dir)
    base = keep_dir or tempfile.mkdtemp(prefix="wctx-demo-")
    os.makedirs(base, exist_ok=True)
    home = os.path.join(base, "store")
    sdk = os.path.join(base, "upload-sdk")
    ui = os.path.join(base, "docs-ui")

    def say(text=""):
        out.write(text + "\n")

    def write(path, text):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)

    for repo, files in ((sdk, {"src/upload/upload.ts": _DEMO_SDK}), (ui, {"src/UploadButton.tsx": _DEMO_UI})):
        os.makedirs(repo, exist_ok=True)
        run_git(repo, ["init", "-q"])
        for rel, text in files.items():
            write(os.path.join(repo, rel), text)
        _demo_commit(repo, "initial import")
    store = open_store(home)
    try:
        say("wctx demo in %s (a throwaway store; your own store is untouched)" % base)
        say("")
        say("$ export WCTX_HOME=%s" % shlex.quote(home))
        for repo in (sdk, ui):
            say("$ wctx repo add %s --workspace uploads" % shlex.quote(repo))
            say("  " + register_repo(store, repo, workspace="uploads")["message"])
        say("$ wctx relate docs-ui uses upload-sdk")
        say("  " + relate(store, "docs-ui", "uses", "upload-sdk")["message"])
        say("")
        say("A session in docs-ui finds that the bug lives in the SDK and records it there:")
        say("$ cd %s" % shlex.quote(ui))
        say('$ wctx capture --summary "traced the upload failure into the SDK" \\')
        say('    --finding "SDK swallows the 419 :: returns it terminal, no retry" \\')
        say('    --repo upload-sdk --file "src/upload/upload.ts#uploadDocument" --confidence 0.9')
        cap = capture(
            store,
            [
                {
                    "kind": "finding",
                    "claim": "SDK swallows the 419 :: returns it terminal, no retry",
                    "repo": "upload-sdk",
                    "files": ["src/upload/upload.ts#uploadDocument"],
                    "confidence": 0.9,
                }
            ],
            summary="traced the upload failure into the SDK",
            cwd=ui,
            agent="demo",
        )
        eid = cap["evidence"][0]["id"]
        say(
            "  session %s, evidence %s (stamped with upload-sdk's commit, not docs-ui's)"
            % (cap["session"], eid)
        )
        say("")
        say("A later session in upload-sdk searches before investigating:")
        say("$ cd %s" % shlex.quote(sdk))
        say('$ wctx search "upload expired session"')
        say(_indent(format_search(search(store, "upload expired session", cwd=sdk)), "  "))
        say("")
        say("Someone changes another function in the same file and commits:")
        text = _DEMO_SDK.replace('toFixed(1) + " kB"', 'toFixed(2) + " KiB"')
        write(os.path.join(sdk, "src/upload/upload.ts"), text)
        _demo_commit(sdk, "show sizes in KiB")
        say("$ wctx verify %s" % eid)
        say(_indent(format_verify(verify(store, [eid]), detail=True), "  "))
        say("")
        say("Then someone edits uploadDocument itself:")
        text = text.replace('throw new Error("upload failed");', "return retryUpload(file, opts);")
        write(os.path.join(sdk, "src/upload/upload.ts"), text)
        _demo_commit(sdk, "retry uploads after a 419")
        say("$ wctx verify %s" % eid)
        say(_indent(format_verify(verify(store, [eid]), detail=True), "  "))
        say("")
        say("Stale items sink in search but stay visible, labelled:")
        say("$ cd %s" % shlex.quote(ui))
        say('$ wctx search "419"')
        say(_indent(format_search(search(store, "419", cwd=ui)), "  "))
        say("")
        say("Freshness says whether what the finding cites changed, never whether the claim is still true.")
    finally:
        store.close()
        if keep_dir is None:
            shutil.rmtree(base, ignore_errors=True)
    return 0


def _indent(text, prefix):
    return "\n".join(prefix + line if line else line for line in text.splitlines())
