from __future__ import annotations

import os
import sys

from .authors import NO_IDENTITY_FIX, missing_identity, recorder_identity
from .brief import agent_command
from .constants import SCHEMA_APP_ID
from .errors import WctxError
from .git import UnreadableFile, git_toplevel, read_repo_file, run_git
from .head import __version__
from .helpers import wctx_command_path
from .hooks import gemini_mcp_access, hook_fixes, hook_status
from .repos import list_repos
from .schema import MIGRATIONS
from .store import Store, _connect_readonly, _writable, default_home, fts5_available, store_open_problem
from .symbols import nearest_symbols, symbol_hash_of

# ----------------------------------------------------------------------------------------------
# Doctor: can this installation work here, and what to do when it cannot
# ----------------------------------------------------------------------------------------------

DOCTOR_OK, DOCTOR_WARN, DOCTOR_FAIL = "ok", "warn", "fail"  # only "fail" makes doctor exit 1
FTS5_FIX = "use a Python whose sqlite3 module has FTS5 (python.org builds and most distributions' python3 do)"


def _doctor_check(name, status, detail, fix=None):
    return {"name": name, "status": status, "detail": detail, "fix": None if status == DOCTOR_OK else fix}


def _doctor_store(home, checks):
    """Store path and schema, read-only (doctor never creates or migrates). Returns the repos or None."""
    import sqlite3

    path = os.path.join(home, "wctx.db")
    if not os.path.exists(path):
        checks.append(
            _doctor_check("store", DOCTOR_WARN, "%s does not exist yet" % path, "wctx init creates it")
        )
        return None
    writable = _writable(path)
    try:
        con = _connect_readonly(path)
    except sqlite3.Error as e:
        checks.append(_doctor_check("store", DOCTOR_FAIL, *store_open_problem(path, e)))
        return None
    if not writable:
        checks.append(
            _doctor_check(
                "store access",
                DOCTOR_WARN,
                "%s is read-only for this user: search, show and verify work (uncached), capture and import do not"
                % path,
                "to record, make the store and its directory writable for this user, or use --home DIR",
            )
        )
    try:
        con.row_factory = sqlite3.Row
        app_id = con.execute("PRAGMA application_id").fetchone()[0]
        version = con.execute("PRAGMA user_version").fetchone()[0]
        tables = con.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        latest = len(MIGRATIONS)
        if app_id != SCHEMA_APP_ID and (version or tables):
            checks.append(
                _doctor_check(
                    "store",
                    DOCTOR_FAIL,
                    "%s is not a wctx store" % path,
                    "point --home or WCTX_HOME at a wctx store directory",
                )
            )
            return None
        if version > latest:
            checks.append(
                _doctor_check(
                    "store",
                    DOCTOR_FAIL,
                    "%s has schema version %d, newer than this wctx %s knows (%d)"
                    % (path, version, __version__, latest),
                    "upgrade wctx (the store was written by a newer version)",
                )
            )
            return None
        if version < latest:
            checks.append(
                _doctor_check(
                    "store",
                    DOCTOR_OK,
                    "%s, schema version %d (migrates to %d on next use%s)"
                    % (path, version, latest, "" if writable else " with write access"),
                )
            )
        else:
            checks.append(
                _doctor_check("store", DOCTOR_OK, "%s, schema version %d (current)" % (path, version))
            )
        checks.append(_doctor_identity(Store(home, con)))
        try:
            return list_repos(Store(home, con))
        except sqlite3.Error:  # an older schema may not have what list_repos reads
            return None
    except sqlite3.Error as e:
        checks.append(_doctor_check("store", DOCTOR_FAIL, *store_open_problem(path, e)))
        return None
    finally:
        con.close()


def _doctor_identity(store):
    """Who this store records as (teammates see it on every item): a warning when nobody is set."""
    problem = missing_identity(store)
    if problem:
        return _doctor_check("identity", DOCTOR_WARN, problem, NO_IDENTITY_FIX)
    return _doctor_check("identity", DOCTOR_OK, "records as %s" % recorder_identity(store))


def _doctor_write_access(home):
    """Can this user create files where the store lives (or where it would be created)?"""
    import tempfile

    probe = home
    while not os.path.lexists(probe) and os.path.dirname(probe) != probe:
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe):
        # A file where the store directory (or one of its parents) must go: init would fail.
        return _doctor_check(
            "write access",
            DOCTOR_FAIL,
            "%s is a file, not a directory, so the store %s cannot be created there" % (probe, home),
            "use another store: --home DIR or WCTX_HOME, or move %s aside" % probe,
        )
    try:
        with tempfile.NamedTemporaryFile(prefix=".wctx-doctor-", dir=probe):
            pass
    except OSError as e:
        return _doctor_check(
            "write access",
            DOCTOR_FAIL,
            "cannot create files in %s: %s" % (probe, e.strerror or e),
            "make %s writable for this user, or use another store: --home DIR or WCTX_HOME" % probe,
        )
    if probe == home:
        return _doctor_check("write access", DOCTOR_OK, "can write to %s" % home)
    return _doctor_check("write access", DOCTOR_OK, "can create %s inside %s" % (home, probe))


_CITED_SYMBOLS = (
    "SELECT e.id, a.path, a.symbol, a.checkout, r.path FROM anchors a"
    " JOIN evidence e ON e.rid = a.evidence_rid JOIN repos r ON r.id = a.repo_id"
    " WHERE e.status = 'active' AND a.symbol IS NOT NULL AND a.symbol_hash IS NOT NULL ORDER BY e.rid, a.id"
)


def _doctor_cited_symbols(home, shown=10):
    """Each symbol an active item cites (located when it was recorded), looked up in its file as
    the working tree holds it now: one no longer found, most often renamed, is named with the
    nearest names its file defines. None when no item cites a symbol (a file gone is verify's)."""
    import sqlite3

    try:
        con = _connect_readonly(os.path.join(home, "wctx.db"))
        try:
            rows = con.execute(_CITED_SYMBOLS).fetchall()
        finally:
            con.close()
    except sqlite3.Error:
        return None
    checked, missing = 0, []
    for item, rel, symbol, checkout, root in rows:
        try:
            data = read_repo_file(checkout if checkout and os.path.isdir(checkout) else root, rel)
        except UnreadableFile:
            data = None
        if data is None:
            continue
        checked += 1
        if symbol_hash_of(data, rel, symbol) is None:
            near = nearest_symbols(data.decode("utf-8", "surrogateescape"), rel, symbol)
            said = " (did you mean %s?)" % " or ".join(near) if near else ""
            missing.append((item, "%s %s#%s%s" % (item, rel, symbol, said)))
    if not checked:
        return None
    if not missing:
        return _doctor_check(
            "cited symbols", DOCTOR_OK, "%d cited symbols, all found in their files" % checked
        )
    listed = "; ".join(said for _, said in missing[:shown])
    if len(missing) > shown:
        listed += "; and %d more" % (len(missing) - shown)
    return _doctor_check(
        "cited symbols",
        DOCTOR_WARN,
        "%d of %d cited symbols are no longer found in their files: %s" % (len(missing), checked, listed),
        "where a claim still holds, record it again citing the name its code has now, then retire the old "
        "item: %s" % "; ".join("wctx supersede %s --by NEW-ID" % item for item, _ in missing[:shown]),
    )


def _doctor_current_repo(cwd, repos):
    try:
        top = git_toplevel(cwd)
    except WctxError:
        top = None
    if top is None:
        return _doctor_check("current repository", DOCTOR_OK, "%s is not inside a git checkout" % cwd)
    best, best_root = None, ""
    for r in repos or []:
        # Any checkout of the repository counts: a linked worktree or a second clone is it.
        for checkout in [c["path"] for c in r.get("checkouts") or ()] or [r["path"]]:
            root = os.path.realpath(checkout)
            if (top == root or top.startswith(root.rstrip(os.sep) + os.sep)) and len(root) > len(best_root):
                best, best_root = r, root
    if best is None:
        return _doctor_check(
            "current repository",
            DOCTOR_WARN,
            "%s is not registered with wctx" % top,
            "wctx repo add %s --workspace PRODUCT" % _shell_word(top),
        )
    if not best["workspaces"]:
        return _doctor_check(
            "current repository",
            DOCTOR_WARN,
            "%s (%s) is in no workspace: search sees only it and its relations" % (best["name"], top),
            "wctx workspace add PRODUCT %s" % best["name"],
        )
    return _doctor_check(
        "current repository",
        DOCTOR_OK,
        "%s (%s), workspaces: %s" % (best["name"], top, ", ".join(best["workspaces"])),
    )


def _doctor_hooks(home):
    """Every installed agent hook command, run once from a clean shell with the probe payload: it
    must start and use the store ``home``; Codex's hooks must also be trusted by Codex."""
    try:
        status = hook_status(probe=True, home=home)
    except WctxError as e:
        return _doctor_check("hooks", DOCTOR_WARN, str(e))
    probes, problems, failed = _hook_outcomes(status)
    if not probes and not problems and not failed:
        return _doctor_check(
            "hooks",
            DOCTOR_OK,
            "no agent hooks installed (wctx hooks install claude-code | codex | gemini-cli)",
        )
    if failed:
        return _doctor_check(
            "hooks",
            DOCTOR_FAIL,
            "; ".join("%s %s" % f for f in failed),
            "; ".join(hook_fixes(status, _wctx_for(home))),
        )
    if problems:
        return _doctor_check("hooks", DOCTOR_WARN, "; ".join(h["problem"] for h in problems))
    return _dated_hooks(status) or _doctor_check(
        "hooks",
        DOCTOR_OK,
        "%d hook commands of %s ran from a clean shell"
        % (len(probes), ", ".join(sorted({agent for agent, _ in probes}))),
    )


def _hook_outcomes(status):
    """([(agent, probe)] run, [hook status] with a problem but no failure, [(agent, failure)])."""
    probes = [(h["agent"], p) for h in status for p in h.get("probes") or ()]
    problems = [h for h in status if h.get("problem") and not h.get("failed")]
    failed = [(h["agent"], f) for h in status for f in h.get("failed") or ()]
    return probes, problems, failed


def _wctx_for(home):
    """How a suggested command spells wctx for the store ``home``: with --home when not the default."""
    here = agent_command()
    if os.path.realpath(home) != os.path.realpath(default_home()):
        here += " --home " + _shell_word(home)
    return here


def _dated_hooks(status):
    """A warning naming each installed hook command in a form earlier versions wrote, or None."""
    dated = [
        (h["agent"], event, why)
        for h in status
        for event, command in (h.get("commands") or {}).items()
        for why in [_dated_hook_form(command)]
        if why
    ]
    if not dated:
        return None
    return _doctor_check(
        "hooks",
        DOCTOR_WARN,
        "; ".join("%s %s hook %s" % d for d in dated),
        "; ".join("%s hooks install %s" % (agent_command(), a) for a in sorted({d[0] for d in dated})),
    )


def _dated_hook_form(command):
    """Why a wctx hook command in a form earlier versions wrote is slower or less safe than the
    one `hooks install` writes now (see hook_invocation), or None."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) > 1 and words[1].endswith(".py"):
        return "runs wctx.py as a script, compiled from source at every session start"
    if words[1:3] == ["-m", "wctx"]:
        return "runs -m wctx without -I, so a wctx.py in the session's directory would run instead"
    return None


def _shell_word(text):
    import shlex

    return shlex.quote(text)


def mcp_command(home=None):
    """The exact argv an MCP client should start for this wctx: this interpreter and this file,
    the .pyz archive itself when running from one; --home when the store is not the default."""
    argv = [sys.executable or "python3", wctx_command_path()]
    if home and os.path.abspath(home) != os.path.join(os.path.expanduser("~"), ".wctx"):
        argv += ["--home", os.path.abspath(home)]
    return argv + ["mcp"]


def doctor(home=None, cwd=None):
    """Check what wctx needs here; change nothing. Returns {"healthy", "version", "checks":
    [{"name", "status" (ok|warn|fail), "detail", "fix"}], "mcp_command": argv}."""
    import sqlite3

    home = os.path.abspath(os.path.expanduser(home)) if home else default_home()
    cwd = os.path.abspath(cwd or os.getcwd())
    checks = [
        _doctor_check(
            "python",
            DOCTOR_OK if sys.version_info >= (3, 8) else DOCTOR_FAIL,
            "%d.%d.%d (%s)" % (sys.version_info[:3] + (sys.executable or "unknown executable",)),
            "run wctx with Python 3.8 or newer",
        )
    ]
    has_fts5 = fts5_available(sqlite3)
    checks.append(
        _doctor_check(
            "sqlite",
            DOCTOR_OK if has_fts5 else DOCTOR_FAIL,
            "SQLite %s %s FTS5" % (sqlite3.sqlite_version, "with" if has_fts5 else "WITHOUT"),
            FTS5_FIX,
        )
    )
    try:
        _, out = run_git(cwd if os.path.isdir(cwd) else os.sep, ["--version"])
        checks.append(_doctor_check("git", DOCTOR_OK, out.decode("utf-8", "replace").strip()))
    except WctxError as e:
        checks.append(
            _doctor_check(
                "git",
                DOCTOR_FAIL,
                str(e),
                "install git (apt-get install git, brew install git, ...) and put it on PATH",
            )
        )
    repos = _doctor_store(home, checks)
    checks.append(_doctor_write_access(home))
    if repos is not None:
        checks.append(_doctor_repositories(repos))
        checks.extend(filter(None, [_doctor_cited_symbols(home)]))
    checks.append(_doctor_current_repo(cwd, repos))
    checks.append(_doctor_hooks(home))
    access = gemini_mcp_access()
    if access is not None:
        checks.append(
            _doctor_check(
                "gemini mcp",
                DOCTOR_WARN if access["problem"] else DOCTOR_OK,
                access["problem"]
                or "gemini -p gets wctx's tools (%s)"
                % ", ".join("%(name)s %(why)s" % r for r in access["servers"]),
                access["fix"],
            )
        )
    argv = mcp_command(home)
    checks.append(_doctor_mcp(argv))
    return {
        "healthy": not any(c["status"] == DOCTOR_FAIL for c in checks),
        "version": __version__,
        "checks": checks,
        "mcp_command": argv,
    }


def _doctor_repositories(repos):
    """Every registered repository must be on disk."""
    missing = [r for r in repos if not r["exists"]]
    if not missing:
        return _doctor_check("repositories", DOCTOR_OK, "%d registered, all present on disk" % len(repos))
    return _doctor_check(
        "repositories",
        DOCTOR_FAIL,
        "%d of %d registered repositories missing on disk: %s"
        % (len(missing), len(repos), ", ".join("%s (%s)" % (r["name"], r["path"]) for r in missing)),
        "restore the checkouts, or forget them: "
        + "; ".join("wctx repo remove %s" % r["name"] for r in missing),
    )


def _doctor_mcp(argv):
    """The MCP server's command, which needs wctx_mcp.py beside wctx.py (not in the .pyz)."""
    mcp_file = os.path.join(os.path.dirname(argv[1]), "wctx_mcp.py") if argv[1].endswith(".py") else None
    if mcp_file and not os.path.exists(mcp_file):
        return _doctor_check(
            "mcp",
            DOCTOR_FAIL,
            "wctx_mcp.py is missing next to %s" % argv[1],
            "copy wctx_mcp.py beside wctx.py, or use the single-file wctx.pyz",
        )
    return _doctor_check("mcp", DOCTOR_OK, " ".join(_shell_word(a) for a in argv))


def format_doctor(report):
    width = max(len(c["name"]) for c in report["checks"])
    lines = ["wctx %s doctor" % report["version"]]
    for c in report["checks"]:
        label = {DOCTOR_OK: "ok", DOCTOR_WARN: "warn", DOCTOR_FAIL: "FAIL"}[c["status"]]
        lines.append("%-4s  %-*s  %s" % (label, width, c["name"], c["detail"]))
        if c["fix"]:
            lines.append("      %-*s  fix: %s" % (width, "", c["fix"]))
    failed = [c["name"] for c in report["checks"] if c["status"] == DOCTOR_FAIL]
    lines.append("")
    lines.append(
        "healthy"
        if not failed
        else "%d problem%s: %s" % (len(failed), "" if len(failed) == 1 else "s", ", ".join(failed))
    )
    return "\n".join(lines)
