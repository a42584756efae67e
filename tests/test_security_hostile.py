"""Hostile repositories and hostile shared records: nothing a repository configures ever runs
(every git config key that can name a program, attribute drivers of any name), no recorded value
reaches git as an option, and nothing is written or read outside the repositories. Proven with
marker files, and with ``strace -f -e trace=execve`` of a whole wctx process where strace exists
(under CI=true it must exist)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys

import pytest
from conftest import WCTX_SCRIPT, git, git_env

# Driver names git's own `-c name.key=value` parsing cannot express, and ordinary ones. (An ASCII
# space cannot appear in a .gitattributes value, so the spaced name uses a no-break space.)
ODD_DRIVER_NAMES = ("x=y", "a.b", "sp\u00a0ace", "ünï-cödé", "-dash", "plain", "a=b.c=d", "x y")


def _script(path, marker, passthrough=True):
    with open(path, "w") as fh:
        fh.write("#!/bin/sh\necho \"$0 $*\" >> '%s'\n%s\n" % (marker, "cat" if passthrough else "exit 0"))
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _program_keys(prog):
    """Every git config key (outside attribute drivers) whose value git may run as a program."""
    return [
        ("core.fsmonitor", prog),
        ("core.hooksPath", os.path.dirname(prog)),
        ("core.pager", prog),
        ("pager.log", prog),
        ("pager.status", prog),
        ("pager.diff", prog),
        ("core.editor", prog),
        ("sequence.editor", prog),
        ("core.askPass", prog),
        ("credential.helper", "!" + prog),
        ("gpg.program", prog),
        ("gpg.ssh.program", prog),
        ("gpg.x509.program", prog),
        ("log.showSignature", "true"),
        ("core.sshCommand", prog),
        ("core.gitProxy", prog),
        ("diff.external", prog),
        ("uploadpack.packObjectsHook", prog),
        ("core.alternateRefsCommand", prog),
        ("remote.origin.uploadpack", prog),
        ("remote.origin.receivepack", prog),
        ("remote.origin.url", "ext::%s" % prog),
        ("protocol.ext.allow", "always"),
        ("mergetool.evil.cmd", prog),
        ("merge.tool", "evil"),
        ("difftool.evil.cmd", prog),
        ("diff.tool", "evil"),
        ("web.browser", "evil"),
        ("browser.evil.cmd", prog),
        ("sendemail.smtpServer", prog),
        ("gc.auto", "1"),
        ("maintenance.auto", "true"),
        ("core.untrackedCache", "true"),
        ("alias.status", "!" + prog),
        ("alias.log", "!" + prog),
    ]


def _hostile_repo(git_repo, tmp_path, name="hostile"):
    """A repository whose config names programs everywhere git could run one, with attribute
    drivers of every kind under odd names; returns (repo, marks dir, programs dir)."""
    marks = tmp_path / ("marks-" + name)
    marks.mkdir()
    progs = tmp_path / ("progs-" + name)
    progs.mkdir()
    attrs = []
    files = {"src/app.py": "def handler(x):\n    return x\n", "README.md": "hello\n"}
    for i, driver in enumerate(ODD_DRIVER_NAMES):
        rel = "data/f%d.txt" % i
        files[rel] = "line %d\n" % i
        attrs.append("data/f%d.txt filter=%s diff=%s merge=%s" % (i, driver, driver, driver))
    attrs.append("*.py filter=x=y diff=a.b merge=a=b.c=d text eol=crlf")
    files[".gitattributes"] = "\n".join(attrs) + "\n"
    repo = git_repo(name, files)
    info = os.path.join(repo.path, ".git", "info")
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, "attributes"), "w") as fh:
        fh.write("README.md filter=ünï-cödé diff=x=y\n")
    hooks = os.path.join(repo.path, ".git", "hooks")
    for hook in (
        "pre-commit",
        "post-checkout",
        "post-index-change",
        "reference-transaction",
        "fsmonitor-watchman",
    ):
        _script(os.path.join(hooks, hook), str(marks / ("hook-" + hook)), passthrough=False)
    prog = _script(str(progs / "prog"), str(marks / "config-program"), passthrough=False)
    _script(str(progs / "pre-commit"), str(marks / "hooks-path"), passthrough=False)
    config = os.path.join(repo.path, ".git", "config")
    # Written straight into the config file: `git config` cannot even name some of these keys.
    with open(config, "a") as fh:
        for key, value in _program_keys(prog):
            section, _, rest = key.partition(".")
            sub, _, var = rest.rpartition(".")
            fh.write('[%s%s]\n\t%s = "%s"\n' % (section, (' "%s"' % sub) if sub else "", var, value))
        for i, driver in enumerate(ODD_DRIVER_NAMES):
            for kind, keys in (
                ("filter", ("clean", "smudge", "process")),
                ("diff", ("command", "textconv")),
                ("merge", ("driver",)),
            ):
                for key in keys:
                    p = _script(
                        str(progs / ("%s-%s-%d" % (kind, key, i))), str(marks / ("%s-%s" % (kind, key)))
                    )
                    fh.write('[%s "%s"]\n\t%s = "%s"\n' % (kind, driver.replace('"', '\\"'), key, p))
            fh.write('[filter "%s"]\n\trequired = true\n' % driver)
    assert os.listdir(str(marks)) == []
    return repo, marks, progs


def _unarmed_git(repo, *args):
    """The test's own git, with the repository's config moved aside so that no trap fires."""
    config = os.path.join(repo.path, ".git", "config")
    os.rename(config, config + ".armed")
    try:
        return git(repo.path, *args)
    finally:
        os.rename(config + ".armed", config)


def _touch_all(repo):
    """Make git's stat data disagree with every file, so that anything comparing the working tree
    with the index must read (and filter) each one."""
    for dirpath, _dirnames, filenames in os.walk(repo.path):
        if ".git" in dirpath.split(os.sep):
            continue
        for f in filenames:
            full = os.path.join(dirpath, f)
            st = os.stat(full)
            os.utime(full, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def _exercise(repo, run_cli, cwd_repo):
    """Every wctx command that runs git, on a dirty, touched, renamed working tree."""
    assert run_cli(["repo", "add", repo.path]).code == 0
    cap = run_cli(
        ["capture", "--finding", "handler echoes", "--file", "src/app.py#handler", "--file", "data/f0.txt",
         "--file", "data/f1.txt", "--json"],
        cwd=repo.path,
    )  # fmt: skip
    assert cap.code == 0, cap
    eid = cap.json["evidence"][0]["id"]
    repo.write("data/f2.txt", "changed\n")
    repo.write("untracked.txt", "new\n")
    # A staged rename written straight into the index (git mv would itself run the filters).
    blob = git(repo.path, "hash-object", "--no-filters", "--", "data/f1.txt").strip()
    os.rename(repo.file("data/f1.txt"), repo.file("data/moved.txt"))
    _unarmed_git(repo, "update-index", "--force-remove", "--", "data/f1.txt")
    _unarmed_git(repo, "update-index", "--add", "--cacheinfo", "100644,%s,data/moved.txt" % blob)
    os.rename(repo.file("data/f0.txt"), repo.file("data/f0-renamed.txt"))
    _touch_all(repo)
    for argv in (
        ["verify", "--json"],
        ["verify", eid],
        ["search", "handler", "--json"],
        ["search", "anything here?", "--json"],
        ["search"],
        ["show", eid],
        ["repo", "list"],
        ["capture", "--question", "why f3?", "--file", "data/f3.txt", "--json"],
    ):
        res = run_cli(argv, cwd=cwd_repo)
        assert res.code in (0, 1), (argv, res)
    return eid


def test_hostile_config_and_odd_attribute_drivers_run_nothing(git_repo, tmp_path, run_cli):
    repo, marks, _ = _hostile_repo(git_repo, tmp_path)
    _exercise(repo, run_cli, repo.path)
    assert sorted(os.listdir(str(marks))) == [], "wctx ran a program the repository configured"


def test_the_odd_driver_traps_are_armed(git_repo, tmp_path):
    """Control: plain git runs each odd-named driver, so the test above proves something."""
    repo, marks, _ = _hostile_repo(git_repo, tmp_path)
    env = git_env()
    for i, driver in enumerate(ODD_DRIVER_NAMES):
        if " " in driver:
            continue  # configured, but no attribute can name it
        rel = "data/f%d.txt" % i
        subprocess.run(
            ["git", "-C", repo.path, "hash-object", "--", rel], env=env, capture_output=True, check=False
        )
        with open(str(marks / "filter-process")) as fh:
            assert "filter-process-%d" % i in fh.read(), "filter %r did not run under plain git" % driver
        repo.write(rel, "changed %d\n" % i)
        subprocess.run(["git", "-C", repo.path, "-c", "filter.%s.process=" % driver, "-c", "filter.%s.required=false" % driver,
                        "diff", "--", rel], env=env, capture_output=True, check=False)  # fmt: skip
    assert "diff-command" in os.listdir(str(marks))


def _strace():
    path = shutil.which("strace")
    if path is None and os.environ.get("CI") == "true":
        pytest.fail("strace is missing under CI=true (.ci/run installs it)")
    if path is None:
        pytest.skip("strace is not installed")
    probe = subprocess.run([path, "-f", "-e", "trace=execve", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        if os.environ.get("CI") == "true":
            pytest.fail("strace cannot trace here: %s" % probe.stderr.decode("utf-8", "replace"))
        pytest.skip("strace cannot trace here (no ptrace)")
    return path


def test_strace_sees_only_git_executed(git_repo, tmp_path, wctx_home):
    """Every program a whole wctx process (and its children) executes is git itself."""
    strace = _strace()
    repo, marks, progs = _hostile_repo(git_repo, tmp_path)
    env = dict(os.environ, WCTX_HOME=wctx_home)
    log = tmp_path / "execve.log"
    git_exec = subprocess.run(["git", "--exec-path"], capture_output=True, check=True).stdout.decode().strip()

    def traced(argv, cwd):
        proc = subprocess.run(
            [strace, "-f", "-qq", "-e", "trace=execve", "-o", str(log), sys.executable, WCTX_SCRIPT, *argv],
            cwd=cwd, env=env, capture_output=True, check=False,
        )  # fmt: skip
        with open(str(log)) as fh:
            calls = [line for line in fh if "execve(" in line]
        programs = set()
        for line in calls:
            target = line.split("execve(", 1)[1].split(",", 1)[0].strip('"')
            if "= -1" in line:
                continue  # a PATH lookup that found nothing there
            programs.add(target)
        return proc, programs

    traced(["repo", "add", repo.path], repo.path)
    proc, _ = traced(
        ["capture", "--finding", "f0 note", "--file", "data/f0.txt", "--file", "src/app.py#handler"],
        repo.path,
    )
    assert proc.returncode == 0, proc.stderr
    repo.write("data/f2.txt", "changed\n")
    os.rename(repo.file("data/f0.txt"), repo.file("data/f0b.txt"))
    _touch_all(repo)
    seen = set()
    for argv in (["verify"], ["search", "what changed?"], ["search", "handler"]):
        proc, programs = traced(argv, repo.path)
        assert proc.returncode in (0, 1), proc.stderr
        seen |= programs
    allowed = {os.path.realpath(sys.executable)}
    for target in seen:
        real = os.path.realpath(target)
        is_git = os.path.basename(real) in ("git",) or real.startswith(os.path.realpath(git_exec) + os.sep)
        assert real in allowed or is_git or real == os.path.realpath(sys.executable), target
        assert not real.startswith(str(progs)), "ran the repository's program %s" % target
    assert any(os.path.basename(t) == "git" for t in seen), "the trace saw no git at all"
    assert os.listdir(str(marks)) == []


def _option_tag_repo(git_repo, tmp_path):
    """A repository, cloned the ordinary way, whose upstream carries tags and branches named like
    git options; the clone resolves them."""
    target = tmp_path / "victim.txt"
    upstream = git_repo("upstream", {"a.py": "def f():\n    return 1\n"})
    for ref in (
        "refs/tags/--output=%s" % target,
        "refs/tags/--exec=true",
        "refs/heads/-Hfoo",
    ):
        upstream.git("update-ref", ref, "HEAD")
    clone = tmp_path / "repos" / "clone"
    subprocess.run(
        ["git", "clone", "-q", upstream.path, str(clone)], env=git_env(), check=True, capture_output=True
    )
    subprocess.run(
        ["git", "-C", str(clone), "fetch", "-q", "origin", "+refs/heads/*:refs/heads/*"],
        env=git_env(), check=False, capture_output=True,
    )  # fmt: skip
    return str(clone), target


def _export_line(records):
    return "".join(json.dumps(r) + "\n" for r in records)


def _evil_records(repo_name, root, commit_value, **anchor):
    session = {"type": "session", "format": 1, "id": "ses-0123456789", "agent": "peer", "repo": repo_name,
               "commit": root, "started_at": "2026-01-01T00:00:00Z", "ended_at": "2026-01-01T00:00:00Z"}  # fmt: skip
    a = {"repo": repo_name, "root_commit": root, "path": "a.py", "commit": commit_value, "branch": "main",
         "blob": None, "dirty": 0}  # fmt: skip
    a.update(anchor)
    evidence = {"type": "evidence", "format": 1, "id": "ev-0123456789", "session": "ses-0123456789",
                "repo": repo_name, "root_commit": root, "kind": "finding", "claim": "f returns one",
                "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z", "anchors": [a]}  # fmt: skip
    return [session, evidence]


OPTION_VALUES = (
    "--output={target}",
    "--exec=true",
    "-Hfoo",
    "HEAD --output={target}",
    "--output={target}^{{commit}}",
    "HEAD~1",
    "main",
    "0123456",
    "ABCDEF0123456789ABCDEF0123456789ABCDEF01",
)


@pytest.mark.parametrize("field", ["commit", "blob", "root_commit", "path", "branch"])
def test_import_refuses_option_like_values_field_by_field(git_repo, tmp_path, store, run_cli, field):
    clone, target = _option_tag_repo(git_repo, tmp_path)
    assert run_cli(["repo", "add", clone]).code == 0
    root = git(clone, "rev-list", "--max-parents=0", "HEAD").split()[0]
    for value in OPTION_VALUES:
        value = value.format(target=target, tmp=tmp_path)
        if field == "path" and not value.startswith("-"):
            continue  # a relative path like "main" is a fine path
        if field == "branch" and not (value.startswith("-") or " " in value or "~" in value or "{" in value):
            continue  # a valid branch name
        anchor = {field: value}
        records = _evil_records("clone", root, root, **anchor)
        path = tmp_path / "evil.jsonl"
        path.write_text(_export_line(records))
        res = run_cli(["import-evidence", str(path)])
        assert res.code != 0, (field, value, res)
        assert "evil.jsonl:2" in res.err and field in res.err, res.err
        assert "Traceback" not in res.err
        assert store.one("SELECT count(*) FROM evidence")[0] == 0
        assert store.one("SELECT count(*) FROM sessions")[0] == 0
    assert not os.path.exists(str(target))


def test_option_like_commit_already_in_a_store_never_reaches_git(git_repo, tmp_path, store, run_cli):
    """A store written before import validated commits (or edited by hand): search and verify
    treat the value as no commit, and git never sees it."""
    clone, target = _option_tag_repo(git_repo, tmp_path)
    assert run_cli(["repo", "add", clone]).code == 0
    cap = run_cli(["capture", "--finding", "f returns one", "--file", "a.py", "--json"], cwd=clone)
    assert cap.code == 0, cap
    with open(os.path.join(clone, "a.py"), "a") as fh:
        fh.write("# edited\n")
    for value in OPTION_VALUES:
        value = value.format(target=target, tmp=tmp_path)
        store.db.execute("UPDATE anchors SET commit_sha = ?", (value,))
        for argv in (["search", "returns"], ["search", "what is new?"], ["verify", "--json"]):
            res = run_cli(argv, cwd=clone)
            assert res.code in (0, 1), (value, res)
            assert "Traceback" not in res.err
        ver = run_cli(["verify", "--json"], cwd=clone).json
        assert ver["items"][0]["verdict"] in ("stale", "unknown"), ver
    assert not os.path.exists(str(target)), "git wrote the file an option-like commit named"
    assert not [n for n in os.listdir(str(tmp_path)) if n.startswith("victim.txt") or n == "exec-ran"]


def test_core_worktree_elsewhere_is_refused_on_repo_add(git_repo, tmp_path, run_cli, store):
    repo = git_repo("pointing", {"a.py": "x = 1\n"})
    elsewhere = git_repo("elsewhere-tree", {"secret.txt": "do not read\n"})
    repo.git("config", "core.worktree", elsewhere.path)
    res = run_cli(["repo", "add", repo.path])
    assert res.code != 0
    assert "core.worktree" in res.err and elsewhere.path in res.err, res.err
    assert store.one("SELECT count(*) FROM repos")[0] == 0


def test_core_worktree_set_after_registration_makes_items_unknown(git_repo, tmp_path, run_cli, store):
    repo = git_repo("later", {"a.py": "x = 1\n"})
    elsewhere = git_repo("elsewhere-later", {"a.py": "x = 2\n"})
    assert run_cli(["repo", "add", repo.path]).code == 0
    assert run_cli(["capture", "--finding", "x is one", "--file", "a.py"], cwd=repo.path).code == 0
    repo.git("config", "core.worktree", elsewhere.path)
    ver = run_cli(["verify", "--json"], cwd=repo.path)
    assert ver.code in (0, 1)
    item = ver.json["items"][0]
    assert item["verdict"] == "unknown" and "core.worktree" in " ".join(item["reasons"]), item


def test_dot_git_file_pointing_at_another_repository_is_refused(git_repo, tmp_path, run_cli, store):
    victim = git_repo("victim-repo", {"secret.py": "TOKEN = 1\n"})
    fake = tmp_path / "repos" / "innocent"
    fake.mkdir()
    (fake / ".git").write_text("gitdir: %s\n" % os.path.join(victim.path, ".git"))
    (fake / "secret.py").write_text("TOKEN = 1\n")
    res = run_cli(["repo", "add", str(fake)])
    assert res.code != 0
    assert ".git file" in res.err and victim.path in res.err, res.err
    assert store.one("SELECT count(*) FROM repos")[0] == 0


def test_linked_worktree_and_submodule_style_git_files_still_register(git_repo, tmp_path, run_cli):
    main = git_repo("mainrepo", {"a.py": "x = 1\n"})
    wt = tmp_path / "repos" / "mainrepo-wt"
    main.git("worktree", "add", "-q", str(wt))
    res = run_cli(["repo", "add", str(wt), "--name", "wt"])
    assert res.code == 0, res


def test_dubious_ownership_runs_nothing_and_says_so(git_repo, tmp_path, run_cli, store):
    if os.geteuid() != 0:
        pytest.skip("needs root to hand the repository to another owner")
    repo, marks, _ = _hostile_repo(git_repo, tmp_path, name="not-mine")
    for dirpath, dirnames, filenames in os.walk(repo.path):
        for n in dirnames + filenames + ["."]:
            os.lchown(os.path.join(dirpath, n), 65534, 65534)
    res = run_cli(["repo", "add", repo.path])
    assert res.code != 0
    assert "ownership" in res.err or "owned by" in res.err, res.err
    assert os.listdir(str(marks)) == []
