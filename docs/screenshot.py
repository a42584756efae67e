"""Builds the demo workspace, adds a few more items so that every verdict shows, renders
`wctx report --html` and photographs it in headless Chromium: docs/report.png (shown in docs/report.md).

    python3 docs/screenshot.py [OUT.png]
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]

from browser import Browser, find_chromium  # noqa: E402

import wctx  # noqa: E402

GATEWAY = """package gateway

func HandleUpload(w Writer, r *Request) {
\tw.WriteHeader(419)
}
"""


def git(path, *args):
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=wctx demo",
            "-c",
            "user.email=demo@wctx.invalid",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.hooksPath=/dev/null",
            "-C",
            path,
            *args,
        ],
        check=True,
        capture_output=True,
    )


def build(base):
    wctx.run_demo(io.StringIO(), keep_dir=base)
    sdk, ui, gateway = (os.path.join(base, n) for n in ("upload-sdk", "docs-ui", "api-gateway"))
    os.makedirs(gateway)
    with open(os.path.join(gateway, "routes.go"), "w") as fh:
        fh.write(GATEWAY)
    git(gateway, "init", "-q")
    git(gateway, "add", "-A")
    git(gateway, "commit", "-q", "-m", "initial import")
    store = wctx.open_store(os.path.join(base, "store"))
    try:
        wctx.register_repo(store, gateway, workspace="uploads")
        wctx.relate(store, "upload-sdk", "calls", "api-gateway", note="POST /api/upload")
        wctx.capture(
            store,
            [
                {
                    "kind": "known_issue",
                    "claim": "the gateway answers 419 when the upload session expires",
                    "repo": "api-gateway",
                    "files": ["routes.go#HandleUpload"],
                    "confidence": 0.7,
                },
                {
                    "kind": "question",
                    "claim": "should the SDK refresh the session itself or leave it to the UI?",
                    "repo": "upload-sdk",
                },
                {
                    "kind": "decision",
                    "claim": "show sizes in KiB everywhere :: matches the SDK's formatSize",
                    "repo": "upload-sdk",
                    "files": ["src/upload/upload.ts#formatSize"],
                },
                {
                    "kind": "dead_end",
                    "claim": "raising the gateway timeout does not help :: the 419 is a session expiry, not a timeout",
                    "repo": "api-gateway",
                },
                {
                    "kind": "constraint",
                    "claim": "the upload button stays a plain <button> (screen readers)",
                    "repo": "docs-ui",
                },
            ],
            summary="followed the 419 from the UI through the SDK to the gateway",
            cwd=ui,
            agent="claude-code",
        )
    finally:
        store.close()
    with open(os.path.join(ui, "README.md"), "w") as fh:
        fh.write("docs\n")
    git(ui, "add", "-A")
    git(ui, "commit", "-q", "-m", "docs")
    shutil.move(gateway, gateway + "-archived")  # not on this machine any more: unknown


def main(argv):
    out = argv[1] if len(argv) > 1 else os.path.join(HERE, "report.png")
    chromium = find_chromium()
    if not chromium:
        sys.exit("headless Chromium is needed (Debian: apt-get install chromium)")
    base = tempfile.mkdtemp(prefix="wctx-shot-")
    try:
        build(base)
        page = os.path.join(base, "report.html")
        assert (
            wctx.main(
                [
                    "--home",
                    os.path.join(base, "store"),
                    "report",
                    "--html",
                    "--workspace",
                    "uploads",
                    "-o",
                    page,
                ]
            )
            == 0
        )
        with Browser(chromium, width=1100, height=900) as browser:
            browser.open("file://" + page)
            browser.screenshot(out)
        print("wrote %s (%d kB)" % (out, os.path.getsize(out) // 1024))
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv)
