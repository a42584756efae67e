from __future__ import annotations

import os
import re
import time

from .caches import (
    GIT_VIEWS,
    GIT_VIEWS_KEPT,
    HEAD_TOKENS,
    HEAD_TOKENS_KEPT,
    STOPPED_SCANS,
    STOPPED_SCANS_KEPT,
)
from .constants import _lazy_pattern
from .errors import UsageError, WctxError
from .helpers import is_utf8, printable_path

# ----------------------------------------------------------------------------------------------
# Git: the one place that runs a subprocess
# ----------------------------------------------------------------------------------------------

# Options that keep a hostile repository from running anything: no fsmonitor daemon, no hooks,
# no external diff or textconv, no signature verification (gpg), no pager.
GIT_SAFE_OPTIONS = (
    "--no-pager",
    "-c", "core.fsmonitor=false",
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.quotePath=false",
    "-c", "log.showSignature=false",
    "-c", "diff.external=",
    "-c", "core.untrackedCache=false",
    "-c", "core.sshCommand=false",
    # Files a repository's config (or its working tree) names, which git would otherwise open
    # and read whole: a FIFO there blocks git, /dev/zero makes it read without end.
    "-c", "log.mailmap=false",
    "-c", "mailmap.file=/dev/null",
    "-c", "mailmap.blob=",
    "-c", "core.attributesFile=/dev/null",
    "-c", "core.excludesFile=/dev/null",
)  # fmt: skip
# Variables that would point git somewhere other than the repository we name.
_GIT_ENV_DROP = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
)


def _git_env():
    # Built for every call from the current os.environ (a cached copy would freeze the first
    # call's environment for the life of the process): tens of microseconds beside a git process.
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV_DROP}
    env.update(
        {
            "GIT_OPTIONAL_LOCKS": "0",  # reads never rewrite the index
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_PAGER": "cat",
            "LC_ALL": "C",
            "LANGUAGE": "C",
        }
    )
    return env


class GitError(WctxError):
    def __init__(self, message, stderr=b""):
        super().__init__(message)
        self.stderr = stderr  # git's whole diagnostic, for callers that explain a refusal


# What may reach git as a revision: a full object id (sha1 or sha256 hex) or HEAD, optionally as
# ``A..B``. Recorded commits and blobs come from stores, exports and transcripts that other people
# wrote; a value like ``--output=F`` (which a tag of that name in a cloned repository would make
# resolve) must never reach git at all, let alone where it reads options.
_OBJECT_ID = _lazy_pattern(r"\A(?:[0-9a-f]{40}|[0-9a-f]{64})\Z")


def is_object_id(value):
    """True for a full lower-case hex object id (sha1 or sha256)."""
    return isinstance(value, str) and _OBJECT_ID.match(value) is not None


# The private refs ``wctx sync`` keeps in its own repository (and nowhere else), which it reads
# as revisions too.
WCTX_REFS = ("refs/wctx/fetched", "refs/wctx/ours")


def git_revision(value):
    """``value`` when git may read it as a revision (HEAD or full object ids, ``A..B``, ``A...B``,
    ``^A``; sync's own refs, optionally as ``REF^{commit}``), else GitError."""
    if isinstance(value, str):
        ends = value.split("...") if "..." in value else value.split("..") if ".." in value else [value]
        if len(ends) <= 2 and all(e == "HEAD" or is_object_id(e) for e in ends):
            return value
        if value.startswith("^") and is_object_id(value[1:]):  # "not reachable from"
            return value
        if value in WCTX_REFS or (value.endswith("^{commit}") and value[: -len("^{commit}")] in WCTX_REFS):
            return value
    raise GitError("refusing to pass %r to git as a revision: not a full object id" % (str(value)[:80],))


def git_path(value):
    """``value`` when it is a repo-relative path git may see (no NUL or newline, not absolute, no
    ``.``/``..`` segment, no leading ``:`` pathspec magic), else GitError."""
    if (
        isinstance(value, str)
        and value
        and is_utf8(value)
        and "\x00" not in value
        and "\n" not in value
        and not value.startswith(("/", ":"))
        and not any(part in ("", ".", "..") for part in value.split("/"))
    ):
        return value
    raise GitError("refusing to pass %r to git as a path" % (str(value)[:80],))


# Every git call is bounded in time and in output: a FIFO where git opens a file (a .gitignore,
# .git/info/exclude, .git/config, packed-refs, a file an include.path names) blocks it for ever,
# and a device there (/dev/zero) makes it read or write without end. On a breach git's whole
# process group is killed and the call becomes one GitError naming the repository.
GIT_SECONDS = 120.0  # far beyond any one git call wctx makes on a local repository
GIT_NETWORK_SECONDS = 900.0  # a sync's fetch or push: a remote, a slow network, an ssh prompt
GIT_OUTPUT_MAX = 1 << 30  # bytes of standard output; git's errors are kept to GIT_ERRORS_KEPT
GIT_ERRORS_KEPT = 64 * 1024
GIT_SECONDS_VARIABLE = "WCTX_GIT_TIMEOUT"  # seconds: lowers every bound (never raises one)


class GitStopped(GitError):
    """A git call that wctx stopped: it ran past its time bound or wrote past its output bound, or
    was never started because a file git opens on every call is a FIFO or a device."""


def git_seconds(limit=GIT_SECONDS):
    """``limit``, or WCTX_GIT_TIMEOUT's seconds when that is set and lower."""
    raw = os.environ.get(GIT_SECONDS_VARIABLE, "")
    try:
        lowered = float(raw)
    except ValueError:
        return limit
    return min(limit, lowered) if lowered > 0 else limit


def _stop(proc, own_group):
    import signal

    if proc.poll() is None:
        try:
            if own_group:
                os.killpg(proc.pid, signal.SIGKILL)  # git and whatever it started
            else:
                proc.kill()
        except OSError:
            pass
    proc.wait()


def _bounded_exchange(proc, input_bytes, deadline, max_output):
    """Feed ``input_bytes`` to ``proc`` and read its output until it closes both pipes, within
    ``deadline`` (time.monotonic) and ``max_output`` bytes: (stdout, stderr, None), or (stdout,
    stderr, "time" | "output") when a bound was reached first (the process still runs)."""
    import selectors

    out, err, sizes = [], [], {"out": 0, "err": 0}
    streams = {proc.stdout.fileno(): "out", proc.stderr.fileno(): "err"}
    selector = selectors.DefaultSelector()
    for fd in streams:
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ)
    pending = memoryview(input_bytes or b"")
    if proc.stdin is not None:
        stdin_fd = proc.stdin.fileno()
        if pending:
            os.set_blocking(stdin_fd, False)
            selector.register(stdin_fd, selectors.EVENT_WRITE)
        else:
            proc.stdin.close()
    try:
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                return b"".join(out), b"".join(err), "time"
            for key, _ in selector.select(left):
                fd = key.fd
                if fd not in streams:  # standard input
                    try:
                        pending = pending[os.write(fd, pending[:65536]) :]
                    except BlockingIOError:
                        continue
                    except (BrokenPipeError, ConnectionResetError):
                        pending = pending[:0]  # git stopped reading: its exit says why
                    if not pending:
                        selector.unregister(fd)
                        proc.stdin.close()
                    continue
                try:
                    chunk = os.read(fd, 65536)  # a pipe holds 64 KiB: a larger buffer is allocated in vain
                except BlockingIOError:
                    continue
                if not chunk:
                    selector.unregister(fd)
                    continue
                name = streams[fd]
                sizes[name] += len(chunk)
                if name == "out":
                    out.append(chunk)
                    if sizes["out"] > max_output:
                        return b"".join(out), b"".join(err), "output"
                elif sizes["err"] - len(chunk) < GIT_ERRORS_KEPT:
                    err.append(chunk)
    finally:
        selector.close()
    return b"".join(out), b"".join(err)[:GIT_ERRORS_KEPT], None


# Files git opens in every call on a repository: one that is a FIFO would block each call until
# its bound, so it is refused at once (three lstat calls). A FIFO elsewhere (a file include.path
# names, a .gitignore) is left to the bound.
_GIT_OWN_FILES = ("config", "packed-refs", "HEAD")


def _refuse_blocking_git_files(repo_path):
    import stat

    gitdir = git_dir_of(repo_path) if os.path.lexists(os.path.join(repo_path, ".git")) else None
    for name in _GIT_OWN_FILES if gitdir else ():
        try:
            mode = os.lstat(os.path.join(gitdir, name)).st_mode
        except OSError:
            continue
        if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            raise GitStopped(
                "%s: its git file %s is %s, not a file; wctx runs no git there (git would wait on it)"
                % (printable_path(repo_path), name, _file_kind(mode))
            )


def run_git(
    repo_path,
    args,
    input_bytes=None,
    ok_codes=(0,),
    extra_options=(),
    revs=(),
    paths=None,
    seconds=GIT_SECONDS,
    max_output=GIT_OUTPUT_MAX,
    network=False,
):
    """Run git in ``repo_path``; return (exit code, stdout bytes).

    ``args`` are wctx's own literal options. Every revision goes in ``revs`` and every path in
    ``paths``: each is validated for its kind and placed after ``--end-of-options`` (revisions) or
    ``--`` (paths), where git cannot read it as an option. Exit codes outside ``ok_codes`` raise
    GitError with git's own first line of stderr. git runs for at most ``seconds`` (lowered by
    WCTX_GIT_TIMEOUT) and writes at most ``max_output`` bytes, else it is killed and GitStopped
    is raised. A ``network`` call (a sync's fetch or push) stays in wctx's process group, so that
    ssh can still ask for a passphrase on the terminal.
    """
    import subprocess

    argv = ["git", *GIT_SAFE_OPTIONS, *extra_options, "-C", repo_path, *args]
    if revs:
        argv += ["--end-of-options", *(git_revision(r) for r in revs)]
    if paths is not None:
        argv += ["--", *(git_path(p) for p in paths)]
    _refuse_blocking_git_files(repo_path)
    seconds = git_seconds(seconds)
    own_group = not network and hasattr(os, "killpg")
    try:
        proc = subprocess.Popen(  # noqa: S603 - list arguments, no shell: the one place git starts
            argv,
            stdin=subprocess.PIPE if input_bytes is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_git_env(),
            start_new_session=own_group,
        )
    except FileNotFoundError:
        raise WctxError("git is not installed or not on PATH (wctx needs the git binary)") from None
    deadline = time.monotonic() + seconds
    try:
        stdout, stderr, breach = _bounded_exchange(proc, input_bytes, deadline, max_output)
        if breach is None:
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                breach = "time"
    finally:
        _stop(proc, own_group)  # nothing left running, whatever happened above
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
    if breach is not None:
        raise GitStopped(
            "git %s in %s %s; wctx stopped it (a FIFO or a device where git reads a file?)"
            % (
                args[0],
                printable_path(repo_path),
                "did not finish within %g s" % seconds
                if breach == "time"
                else "wrote more than %d bytes" % max_output,
            ),
            stderr,
        )
    if proc.returncode != 0 and b"dubious ownership" in stderr:
        # A refusal, never an answer (even where the exit code is expected): every caller says the
        # same, git's ownership check and its safe.directory fix.
        raise GitError(dubious_ownership_message(repo_path, stderr), stderr)
    if proc.returncode not in ok_codes:
        message = stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(
            "git %s failed in %s: %s"
            % (args[0], repo_path, message[0] if message else "exit %d" % proc.returncode),
            stderr,
        )
    return proc.returncode, stdout


class GitWriter:
    """``git ARGS`` in ``repo_path`` fed on its standard input a piece at a time (``write``), for
    input too large to hold (a sync's files, written as blobs by ``fast-import``): wctx's own
    literal options only, run as run_git runs git. Its output goes nowhere, so it can never block
    on a pipe nobody reads; its standard error is kept for the one-line error. Use as a context
    manager: a clean exit waits for git and raises GitError if it failed; an exception kills it."""

    def __init__(self, repo_path, args, extra_options=()):
        import subprocess
        import tempfile

        self.args = list(args)
        self.repo_path = repo_path
        self.errors = tempfile.TemporaryFile()
        try:
            self.proc = subprocess.Popen(  # noqa: S603 - list arguments, no shell
                ["git", *GIT_SAFE_OPTIONS, *extra_options, "-C", repo_path, *self.args],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=self.errors,
                env=_git_env(),
            )
        except FileNotFoundError:
            self.errors.close()
            raise WctxError("git is not installed or not on PATH (wctx needs the git binary)") from None

    def write(self, data):
        try:
            self.proc.stdin.write(data)
        except BrokenPipeError:  # git stopped reading: its own error says why, at the end
            pass

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        import subprocess

        try:
            if kind is not None:
                self.proc.kill()
                self.proc.wait()
                return False
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
            try:
                code = self.proc.wait(git_seconds())
            except subprocess.TimeoutExpired:
                _stop(self.proc, False)
                raise GitStopped(
                    "git %s in %s did not finish within %g s; wctx stopped it"
                    % (self.args[0], printable_path(self.repo_path), git_seconds())
                ) from None
            if code != 0:
                self.errors.seek(0)
                message = self.errors.read().decode("utf-8", "replace").strip().splitlines()
                raise GitError(
                    "git %s failed in %s: %s"
                    % (
                        self.args[0],
                        self.repo_path,
                        message[0] if message else "exit %d" % self.proc.returncode,
                    ),
                    b"",
                )
            return False
        finally:
            self.errors.close()


def blob_id(data, object_format="sha1"):
    """The git blob id of ``data`` as ``git hash-object --no-filters`` would compute it."""
    import hashlib  # imported where used: it costs ~3 ms of start-up that most commands skip

    h = hashlib.sha256() if object_format == "sha256" else hashlib.sha1()
    h.update(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


_NULL_OBJECT = frozenset({"0" * 40, "0" * 64})
_HUNK = _lazy_pattern(rb"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class FilePatch:
    """One file's change in a commit: blob ids before and after (None: absent), paths, and the
    hunks, each (old start, old count, new start, removed lines, added lines, whether the last
    removed / added line ends the file without a newline). ``hunks`` is None for a binary file."""

    __slots__ = ("old_blob", "new_blob", "old_path", "new_path", "hunks")

    def __init__(self, old_blob, new_blob, old_path, new_path):
        self.old_blob = None if old_blob in _NULL_OBJECT else old_blob
        self.new_blob = None if new_blob in _NULL_OBJECT else new_blob
        self.old_path, self.new_path = old_path, new_path
        self.hunks = []


def parse_file_patches(out):
    """Parse ``git log --patch-with-raw -z -U0 --full-index --no-abbrev --format=%x1e%H``.

    Read line by line with each hunk's own counts, so that no byte in a file's content (a
    separator, a line that looks like a header) can be taken for structure."""
    commits = []
    pos, n = 0, len(out)
    while pos < n:
        if out[pos : pos + 1] != b"\x1e":
            raise GitError("unexpected output from git log --patch-with-raw")
        end = out.index(b"\0", pos)
        sha = out[pos + 1 : end].decode("ascii", "replace")
        pos = end + 1
        if out[pos : pos + 1] == b"\n":
            pos += 1
        files = []
        while out[pos : pos + 1] == b":":  # raw entries: ":mode mode old new status\0path\0[path\0]"
            end = out.index(b"\0", pos)
            meta = out[pos + 1 : end].decode("ascii", "replace").split()
            pos = end + 1
            paths = []
            for _ in range(2 if meta[4][:1] in ("R", "C") else 1):
                end = out.index(b"\0", pos)
                paths.append(out[pos:end].decode("utf-8", "surrogateescape"))
                pos = end + 1
            regular = all(m[:2] == "10" or m == "000000" for m in meta[:2])
            patch = FilePatch(meta[2], meta[3], paths[0], paths[-1])
            files.append(patch if regular else None)
        if out[pos : pos + 1] == b"\0":
            pos += 1
        for patch in files:  # a "diff --git" section per raw entry, in the same order
            if not out.startswith(b"diff --git ", pos):
                break
            pos = out.index(b"\n", pos) + 1
            while pos < n and not out.startswith((b"@@ -", b"diff --git ", b"\x1e"), pos):
                end = out.find(b"\n", pos)
                line = out[pos : end if end >= 0 else n]
                if line.startswith(b"Binary files ") and patch is not None:
                    patch.hunks = None
                pos = n if end < 0 else end + 1
            while out.startswith(b"@@ -", pos):
                end = out.index(b"\n", pos)
                m = _HUNK.match(out, pos, end)
                if m is None:
                    raise GitError("unexpected hunk header from git log")
                pos = end + 1
                old_count = 1 if m.group(2) is None else int(m.group(2))
                new_count = 1 if m.group(4) is None else int(m.group(4))
                removed, added, open_end = [], [], [False, False]
                for kind, count in ((removed, old_count), (added, new_count)):
                    for _ in range(count):
                        end = out.find(b"\n", pos)
                        end = n if end < 0 else end
                        kind.append(out[pos + 1 : end].decode("utf-8", "surrogateescape"))
                        pos = end + 1
                        if out.startswith(b"\\", pos):  # "\ No newline at end of file"
                            open_end[kind is added] = True
                            pos = out.index(b"\n", pos) + 1
                if patch is not None and patch.hunks is not None:
                    old_start = int(m.group(1))
                    patch.hunks.append(
                        (old_start, old_count, int(m.group(3)), removed, added, tuple(open_end))
                    )
        commits.append((sha, [f for f in files if f is not None]))
    return commits


class GitRepo:
    """A checkout on disk, with per-call caches of what git told us about it."""

    def __init__(self, path):
        self.path = path
        self._info = None
        self._index = None
        self._commit_exists = {}
        self._logs = {}
        self.log_candidates = set()  # recorded commits whose logs log_since reads in one process
        self._counts = {}
        self._renames = {}
        self._head_tree = None
        self._checked = {}  # batch_check's answers
        self.absent = set()  # commits commits_exist found missing: a fetch may bring them, HEAD unmoved
        self.warmed = False  # FreshnessChecker._warm asked about every cited path here

    def git(self, *args, input_bytes=None, ok_codes=(0,), revs=(), paths=None, seconds=GIT_SECONDS):
        # No command here reads file contents from the working tree: wctx hashes those in Python
        # (blob_id), so no attribute driver of any name (filter, diff, merge, textconv) can run.
        return run_git(
            self.path,
            list(args),
            input_bytes=input_bytes,
            ok_codes=ok_codes,
            revs=revs,
            paths=paths,
            seconds=seconds,
        )

    def info(self):
        """(toplevel, object format, HEAD sha or None). One git process, cached."""
        if self._info is None:
            code, out = run_git(
                self.path,
                ["rev-parse", "--show-toplevel", "--show-object-format", "--verify", "-q", "HEAD"],
                ok_codes=(0, 1, 128),
            )
            lines = out.decode("utf-8", "surrogateescape").splitlines()
            if code == 128 or len(lines) < 2:
                raise GitError("%s is not a git repository" % self.path)
            head = lines[2].strip() if code == 0 and len(lines) > 2 else None
            if os.path.realpath(lines[0]) != os.path.realpath(self.path):
                # core.worktree (or a .git file) sends git to another directory: reading it would
                # report on files that are not this repository's.
                raise GitError(
                    "git reads %s's work tree from %s (core.worktree in its config?); wctx will not follow it"
                    % (self.path, printable_path(lines[0]))
                )
            self._info = (lines[0], lines[1].strip() or "sha1", head)
        return self._info

    @property
    def head(self):
        return self.info()[2]

    @property
    def object_format(self):
        return self.info()[1]

    def branch(self):
        """The checked-out branch name read from HEAD, or None when detached."""
        gitdir = git_dir_of(self.path)
        try:
            head = read_git_file(os.path.join(gitdir, "HEAD")).decode("utf-8", "replace").strip()
        except (OSError, TypeError):
            return None
        if head.startswith("ref: refs/heads/"):
            return head[len("ref: refs/heads/") :]
        return None

    def batch_check(self, specs):
        """Map each ``REV:path`` or ``REV^{commit}`` spec to (object id, type), or None when git has
        no such object. REV must pass git_revision and the path git_path, else the answer is None."""
        specs = list(dict.fromkeys(specs))
        todo = [s for s in specs if s not in self._checked and _batch_spec_ok(s)]
        if todo:
            data = "".join(s + "\n" for s in todo).encode("utf-8", "surrogateescape")
            _, out = self.git("cat-file", "--batch-check", input_bytes=data)
            for spec, line in zip(todo, out.decode("utf-8", "surrogateescape").splitlines()):
                parts = line.split()
                self._checked[spec] = (
                    (parts[0], parts[1]) if len(parts) >= 3 and parts[1] != "missing" else None
                )
        return {s: self._checked.get(s) for s in specs}

    def read_blobs(self, specs):
        """Map each ``rev:path`` spec to the blob's bytes, or None when there is no such blob.
        One ``cat-file --batch`` for all of them (no filters or textconv: raw objects only)."""
        specs = [s for s in dict.fromkeys(specs) if "\n" not in s]
        if not specs:
            return {}
        data = "".join(s + "\n" for s in specs).encode("utf-8", "surrogateescape")
        _, out = self.git("cat-file", "--batch", input_bytes=data)
        result = {}
        pos = 0
        for spec in specs:
            end = out.find(b"\n", pos)
            if end < 0:
                break
            header = out[pos:end].split()
            pos = end + 1
            if len(header) == 3 and header[2].isdigit():
                size = int(header[2])
                result[spec] = out[pos : pos + size] if header[1] == b"blob" else None
                pos += size + 1  # the object, then a newline
            else:  # "<spec> missing" or "ambiguous"
                result[spec] = None
        return result

    def commits_exist(self, shas):
        todo = [s for s in shas if s and s not in self._commit_exists]
        if todo:
            found = self.batch_check([s + "^{commit}" for s in todo])
            for s in todo:
                self._commit_exists[s] = found.get(s + "^{commit}") is not None
                if not self._commit_exists[s]:
                    self.absent.add(s)
        return {s: self._commit_exists.get(s, False) for s in shas if s}

    def recent_subjects(self, paths, per_path=10):
        """{path: the subjects of the latest ``per_path`` commits (merges left out) that changed it,
        newest first}, for paths of HEAD's tree, in one git process: what the people who changed
        the code said about it (code_vocabulary). {} when HEAD has no commit."""
        paths = sorted(set(p for p in paths if p))
        if not paths or self.head is None:
            return {}
        _, out = self.git(
            "log",
            "--no-merges",
            "--no-ext-diff",
            "--no-textconv",
            "--no-renames",
            "--format=%x1e%s",
            "--name-only",
            "-z",
            "-n",
            str(per_path * len(paths)),
            revs=["HEAD"],
            paths=paths,
        )
        wanted = set(paths)
        found = {}
        for record in out.split(b"\x1e")[1:]:
            subject, _, names = record.partition(b"\0")
            text = subject.decode("utf-8", "replace").strip()
            for name in names.split(b"\0"):
                path = name.strip(b"\n").decode("utf-8", "surrogateescape")
                if path in wanted and len(found.setdefault(path, [])) < per_path:
                    found[path].append(text)
        return found

    def log_since(self, commit):
        """Commits in commit..HEAD with the paths each touched (renames followed); see log_range.
        The first call reads the logs of every commit in ``log_candidates`` at once (_read_logs)."""
        if commit not in self._logs and commit in self.log_candidates:
            self._read_logs(sorted(self.log_candidates - set(self._logs)))
        return self.log_range(commit, "HEAD")

    def _read_logs(self, commits):
        """commit..HEAD for each of several recorded commits, and how far each is behind and ahead
        of HEAD, from one ``git log`` over all of them back to their common ancestors (one process
        where each commit would take one), split per commit by reachability within it."""
        commits = [c for c in commits if self.commits_exist([c]).get(c)]
        if len(commits) < 2 or not self.head:
            return
        code, out = self.git("merge-base", "--octopus", "--all", revs=[self.head] + commits, ok_codes=(0, 1))
        bases = out.decode("ascii", "replace").split() if code == 0 else []
        if not bases:  # no common ancestor (grafted or unrelated histories): one log each
            return
        log = self._log(revs=[self.head] + commits + ["^" + b for b in bases])
        parents = {c["sha"]: c["parents"] for c in log}

        def reach(start):
            seen, todo = set(), [start]
            while todo:
                sha = todo.pop()
                if sha in parents and sha not in seen:
                    seen.add(sha)
                    todo.extend(parents[sha])
            return seen

        ahead_of_all = reach(self.head)
        for commit in commits:
            own = reach(commit)
            self._logs[commit] = [c for c in log if c["sha"] in ahead_of_all and c["sha"] not in own]
            self._counts[commit] = (len(own - ahead_of_all), len(ahead_of_all - own))

    def log_range(self, base, tip):
        """Commits in base..tip with the paths each touched against its first parent (renames
        followed; a merge lists none), newest first: dicts of sha, short, date, subject, parents
        [sha], changes [(status, old, new)]."""
        key = base if tip == "HEAD" else (base, tip)
        if key not in self._logs:
            self._logs[key] = self._log(revs=["%s..%s" % (base, tip)])
        return self._logs[key]

    def _log(self, revs):
        _, out = self.git(
            "log",
            "--no-ext-diff",
            "--no-textconv",
            "--format=%x1e%H%x1f%h%x1f%ad%x1f%P%x1f%s",
            "--date=short",
            "--name-status",
            "-M",
            "-z",
            revs=revs,
            paths=[],
        )
        commits = []
        for record in out.split(b"\x1e")[1:]:
            header, _, rest = record.partition(b"\0")
            fields = header.decode("utf-8", "replace").split("\x1f", 4)
            if len(fields) < 5:
                continue
            changes = []
            tokens = rest.lstrip(b"\n").split(b"\0")
            i = 0
            while i < len(tokens):
                status = tokens[i].decode("ascii", "replace").strip()
                if not status:
                    i += 1
                    continue
                if status[0] in "RC" and i + 2 < len(tokens):
                    old = tokens[i + 1].decode("utf-8", "surrogateescape")
                    new = tokens[i + 2].decode("utf-8", "surrogateescape")
                    changes.append((status[0], old, new))
                    i += 3
                else:
                    path = tokens[i + 1].decode("utf-8", "surrogateescape") if i + 1 < len(tokens) else ""
                    changes.append((status[0], path, path))
                    i += 2
            commits.append(
                {
                    "sha": fields[0],
                    "short": fields[1],
                    "date": fields[2],
                    "parents": fields[3].split(),
                    "subject": fields[4],
                    "changes": changes,
                }
            )
        return commits

    def behind_ahead(self, commit):
        """(commits in ``commit`` that HEAD lacks, commits in HEAD that ``commit`` lacks)."""
        if commit not in self._counts:
            _, out = self.git("rev-list", "--left-right", "--count", revs=["%s...HEAD" % commit])
            left, _, right = out.decode("ascii", "replace").strip().partition("\t")
            self._counts[commit] = (int(left or 0), int(right or 0))
        return self._counts[commit]

    def file_patches(self, base, tip, paths):
        """The commits in base..tip that changed any of ``paths`` against their parent (every one,
        also where a later merge dropped the change; merges left out), oldest first: [(sha, [FilePatch, ...])], each against the commit's
        parent, with zero lines of context. One git process."""
        if not paths:
            return []
        _, out = self.git(
            "log", "--full-history", "--topo-order", "--reverse", "--patch-with-raw", "-z", "-U0", "--full-index",
            "--no-abbrev", "--no-color", "--no-ext-diff", "--no-textconv", "-M", "--format=%x1e%H",
            "--src-prefix=a/", "--dst-prefix=b/", "--no-relative",
            revs=["%s..%s" % (base, tip)], paths=list(paths),
        )  # fmt: skip
        return parse_file_patches(out)

    def merge_changes(self, base, tip, paths):
        """The merges in base..tip whose result for one of ``paths`` differs from every parent's:
        [(sha, [([parent blob or None], result blob or None, path)])]. One git process."""
        if not paths:
            return []
        _, out = self.git(
            "log", "--full-history", "--merges", "-c", "--raw", "-z", "--no-abbrev", "--format=%x1e%H",
            revs=["%s..%s" % (base, tip)], paths=list(paths),
        )  # fmt: skip
        merges = []
        for record in out.split(b"\x1e")[1:]:
            tokens = record.split(b"\0")
            sha, entries, i = tokens[0].decode("ascii", "replace").strip(), [], 1
            while i < len(tokens):
                meta = tokens[i].strip()
                if not meta.startswith(b"::") or i + 1 >= len(tokens):
                    i += 1
                    continue
                colons = len(meta) - len(meta.lstrip(b":"))
                fields = meta.decode("ascii", "replace").lstrip(":").split()
                blobs = [None if b in _NULL_OBJECT else b for b in fields[colons + 1 : 2 * colons + 2]]
                if len(blobs) == colons + 1:
                    entries.append((blobs[:-1], blobs[-1], tokens[i + 1].decode("utf-8", "surrogateescape")))
                i += 2
            merges.append((sha, entries))
        return merges

    def renames_since(self, commit):
        """{old path: new path} between ``commit`` and the index: renames committed since (git's
        rename detection between two trees) and renames staged but not committed (the same blob
        under a new path). The working tree is never read by git here."""
        if commit not in self._renames:
            renames = {}
            if self.head:
                _, out = self.git(
                    "diff-tree", "-r", "--no-ext-diff", "--no-textconv", "--name-status", "-M", "-z",
                    revs=[commit, "HEAD"], paths=[],
                )  # fmt: skip
                tokens = out.split(b"\0")
                i = 0
                while i < len(tokens):
                    status = tokens[i].decode("ascii", "replace")
                    if not status:
                        i += 1
                        continue
                    if status[0] in "RC" and i + 2 < len(tokens):
                        if status[0] == "R":
                            old = tokens[i + 1].decode("utf-8", "surrogateescape")
                            renames[old] = tokens[i + 2].decode("utf-8", "surrogateescape")
                        i += 3
                    else:
                        i += 2
            head = {p: oid for oid, paths in self.head_tree_blobs().items() for p in paths}
            index = self.index_entries()
            added = {}
            for p, entry in index.items():
                if p not in head:
                    added.setdefault(entry[1], []).append(p)
            for p, oid in head.items():
                if p not in index and len(added.get(oid, ())) == 1:
                    staged = added[oid][0]
                    sources = [old for old, new in renames.items() if new == p] or [p]
                    for old in sources:
                        renames[old] = staged
            self._renames[commit] = renames
        return self._renames[commit]

    def head_tree_blobs(self):
        """{blob id: [paths]} for HEAD's tree: finds a file that moved when history is gone."""
        if self._head_tree is None:
            self._head_tree = {}
            if self.head:
                _, out = self.git("ls-tree", "-r", "-z", revs=["HEAD"])
                for entry in out.split(b"\0"):
                    meta, _, path = entry.partition(b"\t")
                    parts = meta.split()
                    if len(parts) == 3 and parts[1] == b"blob":
                        self._head_tree.setdefault(parts[2].decode(), []).append(
                            path.decode("utf-8", "surrogateescape")
                        )
        return self._head_tree

    def index_entries(self):
        """{path: (mode, object id, size, mtime ns)} of the index (stage 0 and conflicts alike),
        from ``git ls-files --debug``, which dumps the index without looking at any file."""
        if self._index is None:
            _, out = self.git("ls-files", "-s", "-z", "--debug")
            entries = {}
            chunks = out.split(b"\0")
            entry = chunks[0]
            for chunk in chunks[1:] + [b""]:
                # Each entry is followed by 5 debug lines, then (in the same chunk) the next entry.
                lines = chunk.split(b"\n", 5)
                meta, _, path = entry.partition(b"\t")
                parts = meta.split()
                if len(parts) == 3 and len(lines) >= 5:
                    stats = {}
                    for line in lines[:5]:
                        for field in line.decode("ascii", "replace").split("\t"):
                            key, _, value = field.strip().partition(": ")
                            stats[key] = value
                    sec, _, nsec = stats.get("mtime", "0:0").partition(":")
                    try:
                        mtime = int(sec) * 1000000000 + int(nsec or 0)
                        size = int(stats.get("size", "-1"))
                    except ValueError:
                        mtime, size = 0, -1
                    entries[path.decode("utf-8", "surrogateescape")] = (
                        parts[0].decode(), parts[1].decode(), size, mtime,
                    )  # fmt: skip
                entry = lines[5] if len(lines) > 5 else b""
            self._index = entries
        return self._index

    def modified_paths(self):
        """Paths with uncommitted changes (staged, unstaged or untracked), repo-relative."""
        return [path for path, _ in self.changed_paths()]

    def changed_paths(self):
        """[(repo-relative path, "modified" | "added" | "deleted" | "untracked")] for every path
        with uncommitted changes (staged, unstaged or untracked).

        Worked out in Python, not by ``git status``: the index against HEAD by object id, the
        working tree against the index by size and mtime and, where those cannot tell, by hashing
        the file's raw bytes (blob_id). git never reads a file's contents, so no filter runs."""
        import stat

        head = {p: oid for oid, paths in self.head_tree_blobs().items() for p in paths}
        index = self.index_entries()
        gitdir = git_dir_of(self.path)
        try:
            index_mtime = os.stat(os.path.join(gitdir, "index")).st_mtime_ns if gitdir else 0
        except OSError:
            index_mtime = 0
        root = os.path.realpath(self.path)
        changed = [(p, "deleted") for p in head if p not in index]
        for rel, (mode, oid, size, mtime) in index.items():
            if mode == "160000":  # a submodule: its own repository
                continue
            if head.get(rel) != oid:
                changed.append((rel, "added" if rel not in head else "modified"))
                continue
            full = os.path.join(root, *rel.split("/"))
            try:
                st = os.lstat(full)
            except OSError:
                changed.append((rel, "deleted"))  # deleted from the working tree
                continue
            if (st.st_size != size and mode != "120000") or stat.S_ISLNK(st.st_mode) != (mode == "120000"):
                changed.append((rel, "modified"))  # resized, or a file became a symlink (or back)
                continue
            if st.st_size == size and st.st_mtime_ns == mtime and mtime < index_mtime:
                continue  # git's own test: unchanged since the index was written
            try:
                if mode == "120000":
                    data = os.fsencode(os.readlink(full))
                else:  # at most the size git recorded: any more is a change
                    data = read_repo_file(root, rel, limit=size)
            except (OSError, UnreadableFile):
                data = None
            if data is None:
                changed.append((rel, "modified"))
                continue
            if blob_id(data, self.object_format) != oid:
                changed.append((rel, "modified"))
        return changed + [(p, "untracked") for p in self.untracked_paths()]

    def untracked_paths(self):
        """Repo-relative paths of the untracked files git does not ignore, from one bounded
        ``git ls-files --others``: a FIFO named ``.gitignore`` anywhere in the working tree blocks
        git's walk, so the walk has WORKTREE_SCAN_SECONDS, after which it answers [] and is not
        tried again in this checkout for WORKTREE_SCAN_RETRY_SECONDS (scan_stopped() says why).
        The ignore files outside the tree (info/exclude, the user's own excludes file) are given
        to git only when they are regular files; a repository's config cannot name one."""
        stopped = scan_stopped(self.path)
        if stopped:
            return []
        args = ["ls-files", "-z", "--others", "--exclude-per-directory=.gitignore"]
        common = common_git_dir(self.path)
        for path in (common and os.path.join(common, "info", "exclude"), _user_excludes_file()):
            if path and _is_regular_file(path):
                args.append("--exclude-from=" + path)
        try:
            _, out = self.git(*args, seconds=WORKTREE_SCAN_SECONDS)
        except GitStopped as e:
            if len(STOPPED_SCANS) >= STOPPED_SCANS_KEPT:
                STOPPED_SCANS.clear()
            STOPPED_SCANS[self.path] = (time.monotonic(), str(e))
            return []
        return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]


# The untracked-files walk reads every .gitignore in the working tree, which no option switches
# off: its bound is short, and a checkout where it was stopped is not walked again for a while.
WORKTREE_SCAN_SECONDS = 10.0
WORKTREE_SCAN_RETRY_SECONDS = 300.0


def scan_stopped(path):
    """Why the untracked-files walk of the checkout at ``path`` was stopped in the last
    WORKTREE_SCAN_RETRY_SECONDS (its untracked files are left out meanwhile), or None."""
    stopped = STOPPED_SCANS.get(path)
    if stopped is None or time.monotonic() - stopped[0] > WORKTREE_SCAN_RETRY_SECONDS:
        return None
    return stopped[1]


def _is_regular_file(path):
    import stat

    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _user_excludes_file():
    """The excludes file of the user's own git configuration (core.excludesFile in the global
    config, else git's default under XDG_CONFIG_HOME or ~/.config), or None."""
    try:
        code, out = run_git(
            os.path.abspath(os.sep),
            ["config", "--global", "--path", "--get", "core.excludesFile"],
            ok_codes=(0, 1),
            seconds=WORKTREE_SCAN_SECONDS,  # on the walk's path: no longer than the walk
        )
    except GitError:
        return None
    value = out.decode("utf-8", "surrogateescape").strip() if code == 0 else ""
    if value:
        return value
    config_home = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(config_home, "git", "ignore")


def git_view(path):
    """A GitRepo for the checkout at ``path`` that keeps what git told this process about it
    while the checkout's HEAD and index stay as they were (read without git, as the freshness
    cache key reads them): each commit, log, rename and tree answer depends on nothing else git
    could see. So a long-lived process (the MCP server) asks git about each checkout state once,
    not once per call. An index written within HEAD_RACY_SECONDS is not trusted to show its next
    change in its stat: that view is used once. Nor is a view that found a commit missing: a fetch
    (or a push into this repository) brings commits without moving HEAD or the index."""
    gitdir = git_dir_of(path)
    try:
        st = os.stat(os.path.join(gitdir, "index")) if gitdir else None
    except OSError:
        st = None
    state = (recent_head_token(path), "%d:%d" % (st.st_size, st.st_mtime_ns) if st else None)
    seen = GIT_VIEWS.get(path)
    if seen is not None and seen[0] == state and not seen[1].absent:
        return seen[1]
    view = GitRepo(path)
    settled = st is None or max(st.st_mtime_ns, st.st_ctime_ns) < time.time_ns() - int(
        HEAD_RACY_SECONDS * 1e9
    )
    if state[0] is not None and settled:
        if len(GIT_VIEWS) >= GIT_VIEWS_KEPT:
            GIT_VIEWS.clear()
        GIT_VIEWS[path] = (state, view)
    else:
        GIT_VIEWS.pop(path, None)
    return view


def _batch_spec_ok(spec):
    """A ``cat-file --batch-check`` line wctx may send: a validated revision with ^{commit}, or
    with :path (an invalid one is answered as missing, never sent)."""
    if spec.endswith("^{commit}"):
        rev, path = spec[: -len("^{commit}")], None
    else:
        rev, sep, path = spec.partition(":")
        if not sep:
            return False
    try:
        git_revision(rev)
        if ".." in rev:
            return False
        if path is not None:
            git_path(path)
    except GitError:
        return False
    return True


GIT_FILE_MAX = 256 * 1024 * 1024  # packed-refs of the largest repositories, with room to spare


def read_git_file(path, limit=64 * 1024):
    """At most ``limit`` bytes of a file wctx reads in a git directory itself (HEAD, a ref,
    packed-refs, commondir, a .git file): a regular file only, opened without blocking, so a FIFO
    there never hangs the caller and a device is never read. Anything else raises OSError."""
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError("%s is not a regular file" % path)
        return fh.read(limit)


def git_dir_of(repo_path):
    """The repository's git directory, following a ``.git`` file (worktrees, submodules)."""
    dot_git = os.path.join(repo_path, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    try:
        line = read_git_file(dot_git, 4096).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if line.startswith("gitdir:"):
        target = line[len("gitdir:") :].strip()
        return os.path.normpath(os.path.join(repo_path, target))
    return None


def common_git_dir(checkout):
    """The real path of the git directory that holds ``checkout``'s objects and refs: its own
    ``.git`` directory, or for a linked worktree the main repository's (through ``commondir``).
    Read from files, without running git; None when it cannot be read."""
    gitdir = git_dir_of(checkout)
    if not gitdir:
        return None
    try:
        common = read_git_file(os.path.join(gitdir, "commondir"), 4096).decode("utf-8", "replace").strip()
        gitdir = os.path.join(gitdir, common)
    except OSError:
        pass  # no commondir: a main checkout, or a submodule (its own object store)
    return os.path.realpath(gitdir)


def linked_worktrees(common_dir):
    """The real paths of the linked worktrees git records under ``common_dir/worktrees`` that
    still exist on disk (``git worktree list`` without running git)."""
    out = []
    base = os.path.join(common_dir, "worktrees")
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return out
    for name in names:
        try:
            dot_git = (
                read_git_file(os.path.join(base, name, "gitdir"), 4096)
                .decode("utf-8", "surrogateescape")
                .strip()
            )
        except OSError:
            continue
        path = os.path.realpath(os.path.dirname(dot_git))
        if os.path.isdir(path) and common_git_dir(path) == common_dir:
            out.append(path)
    return out


def head_token(repo_path, probed=None):
    """A cheap fingerprint of where HEAD points, read from the git directory without running git:
    the commit, after the branch HEAD names (a reason may name it: "not in the checked-out branch").

    Used only as a cache key: if it cannot be read, it returns None and callers recompute.
    ``probed`` (a list) receives every path whose content or absence the answer depends on.
    """
    probed = [] if probed is None else probed
    gitdir = git_dir_of(repo_path)
    if not gitdir:
        return None
    if gitdir != os.path.join(repo_path, ".git"):
        probed.append(os.path.join(repo_path, ".git"))  # a .git file naming the git directory
    try:
        probed.append(os.path.join(gitdir, "HEAD"))
        head = read_git_file(probed[-1], 512).strip()
        if not head.startswith(b"ref: "):
            return head.decode("ascii", "replace")
        ref = named = head[5:].decode("utf-8", "replace")  # the branch, which a reason may name
        common = gitdir
        commondir = os.path.join(gitdir, "commondir")
        probed.append(commondir)
        if os.path.exists(commondir):
            common = os.path.normpath(os.path.join(gitdir, read_git_file(commondir).decode().strip()))
        for _ in range(5):  # a branch may itself be a symbolic ref to another
            for base in (gitdir, common):
                ref_path = os.path.join(base, *ref.split("/"))
                probed.append(ref_path)
                if os.path.isfile(ref_path):
                    value = read_git_file(ref_path, 512).strip()
                    break
            else:
                # Only in packed-refs: the object id it holds there, not the file's size and mtime,
                # which a repack within one timestamp tick (one id for another) leaves as they were.
                probed.append(os.path.join(common, "packed-refs"))
                packed = read_git_file(probed[-1], GIT_FILE_MAX)
                at = packed.find(b" " + ref.encode("utf-8", "surrogateescape") + b"\n")
                start = packed.rfind(b"\n", 0, at) + 1 if at >= 0 else -1
                if start < 0 or at - start not in (40, 64):
                    return "%s@unborn" % named
                return "%s@%s" % (named, packed[start:at].decode("ascii", "replace"))
            if not value.startswith(b"ref: "):
                return "%s@%s" % (named, value.decode("ascii", "replace"))
            ref = value[5:].decode("utf-8", "replace")
        return None
    except (OSError, ValueError):
        return None


HEAD_RACY_SECONDS = 3.0  # a file changed this recently may change again unseen by its stat


def _stat_signature(path):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)


def recent_head_token(repo_path):
    """head_token, remembered by this process while every path it consulted has the same stat
    (inode, size, times, type), which costs a stat per path instead of opening and reading the
    files. A path modified within HEAD_RACY_SECONDS of the read is not trusted to show its next
    change in its stat (timestamps have a coarse grain; an inode may be reused), so such an
    answer is read again next time, as git treats a racily clean index entry."""
    seen = HEAD_TOKENS.get(repo_path)
    if seen is not None:
        for path, sig in seen[1]:
            if _stat_signature(path) != sig:
                break
        else:
            return seen[0]
    probed = []
    token = head_token(repo_path, probed)
    signatures = tuple((path, _stat_signature(path)) for path in dict.fromkeys(probed))
    settled = time.time_ns() - int(HEAD_RACY_SECONDS * 1e9)
    if token is not None and all(sig is None or max(sig[2], sig[3]) < settled for _, sig in signatures):
        if len(HEAD_TOKENS) > HEAD_TOKENS_KEPT:
            HEAD_TOKENS.clear()
        HEAD_TOKENS[repo_path] = (token, signatures)
    else:
        HEAD_TOKENS.pop(repo_path, None)
    return token


def dubious_ownership_message(path, stderr):
    """git's "dubious ownership" refusal (a checkout owned by another user) as one line, with the
    ``safe.directory`` command git itself suggests."""
    text = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else str(stderr)
    where = re.search(r"repository at '([^'\n]*)'", text)
    where = where.group(1) if where else path
    fix = [
        line.strip()
        for line in text.splitlines()
        if line.strip().startswith("git config") and "safe.directory" in line
    ]
    return (
        "git refuses to work in %s: it is owned by another user (git's 'dubious ownership' check), and wctx "
        "runs nothing in it; if you trust it, run: %s"
        % (printable_path(where), fix[0] if fix else "git config --global --add safe.directory " + where)
    )


def git_toplevel(path):
    """The real path of the git checkout containing ``path``, or None. A checkout git refuses for
    its owner (another user's files) is a UsageError that says so."""
    if not os.path.isdir(path):
        path = os.path.dirname(path) or "."
    try:
        code, out = run_git(path, ["rev-parse", "--show-toplevel"])
    except GitStopped:
        raise  # not an answer: git never said whether this is a checkout
    except GitError as e:
        if "dubious ownership" in str(e):
            raise UsageError(dubious_ownership_message(path, e.stderr)) from None
        return None
    top = out.decode("utf-8", "surrogateescape").strip()
    return os.path.realpath(top) if top else None


def check_checkout(path, top):
    """Refuse a checkout whose git configuration points outside it: ``core.worktree`` naming
    another directory, or a ``.git`` file that borrows another checkout's git directory (a linked
    worktree or a submodule points back at itself; anything else reads someone else's history)."""
    holder = os.path.realpath(path if os.path.isdir(path) else os.path.dirname(path) or ".")
    while not os.path.lexists(os.path.join(holder, ".git")):
        parent = os.path.dirname(holder)
        if parent == holder:
            return
        holder = parent
    top = os.path.realpath(top)
    _, out = run_git(holder, ["config", "--local", "--get", "core.worktree"], ok_codes=(0, 1))
    worktree = out.decode("utf-8", "surrogateescape").strip()
    if holder != top:
        raise UsageError(
            "%s's git config sets core.worktree to %s, another directory; wctx registers only the "
            "directory that holds .git (remove core.worktree to register it)"
            % (printable_path(holder), printable_path(worktree or top))
        )
    dot_git = os.path.join(holder, ".git")
    if os.path.isdir(dot_git):
        return
    gitdir = git_dir_of(holder)
    real = os.path.realpath(gitdir) if gitdir else ""
    if real.startswith(holder + os.sep):
        return
    try:
        back = os.fsdecode(
            read_git_file(os.path.join(real, "gitdir")).strip()
        )  # a linked worktree's back link
        if os.path.realpath(os.path.join(real, back)) == os.path.realpath(dot_git):
            return
    except OSError:
        pass
    if worktree and os.path.realpath(os.path.join(real, worktree)) == holder:  # an absorbed submodule
        return
    raise UsageError(
        "%s's .git file points to %s, the git directory of another checkout (not a worktree or submodule "
        "of this one); wctx will not read it" % (printable_path(holder), printable_path(gitdir or "?"))
    )


def repo_relative_path(repo_root, path, cwd=None, passed_over=None):
    """Normalise ``path`` to a repo-relative POSIX path: relative to ``cwd`` when that lies inside
    the repo and the file exists there (as a shell would read it), else to the repo root. When
    both exist, the root-relative path not taken is appended to ``passed_over`` so the caller can
    say so. Refuses anything that escapes the repo, including through a symlink, the root itself,
    and anything inside .git. Returns (relative path, absolute real path)."""
    root = os.path.realpath(repo_root)
    if os.path.isabs(path):
        candidate = path
    else:
        candidate = os.path.join(root, path)
        real_cwd = os.path.realpath(cwd) if cwd else None
        if real_cwd and (real_cwd == root or real_cwd.startswith(root + os.sep)):
            alt = os.path.join(real_cwd, path)
            if os.path.lexists(alt):
                if (
                    passed_over is not None
                    and os.path.normpath(alt) != os.path.normpath(candidate)
                    and os.path.lexists(candidate)
                ):
                    passed_over.append(
                        os.path.relpath(os.path.normpath(candidate), root).replace(os.sep, "/")
                    )
                candidate = alt
    normal = os.path.normpath(candidate)
    if normal == root or os.path.realpath(normal) == root:
        raise UsageError("path %s is the root directory of repository %s; cite a file" % (path, root))
    if not (normal == root or normal.startswith(root + os.sep)):
        # The lexical path may sit under a symlinked alias of the root; judge by the real path.
        real_parent = os.path.realpath(os.path.dirname(normal))
        normal = os.path.join(real_parent, os.path.basename(normal))
    if not normal.startswith(root + os.sep):
        raise UsageError("path %s is outside repository %s" % (path, root))
    real = os.path.realpath(normal)
    if not (real == root or real.startswith(root + os.sep)):
        raise UsageError("path %s leads outside repository %s (through a symlink)" % (path, root))
    rel = os.path.relpath(normal, root).replace(os.sep, "/")
    if ".git" in rel.split("/"):  # this repository's, or a nested repository's or submodule's
        raise UsageError("path %s is inside the .git directory" % path)
    nested = nested_checkout(root, os.path.dirname(normal))
    if nested is not None:
        raise UsageError(
            "path %s is inside another git checkout, %s (a worktree, submodule or nested repository), whose "
            "commits are not %s's; register it with: wctx repo add %s"
            % (path, nested, os.path.basename(root), nested)
        )
    return rel, real


def nested_checkout(root, directory):
    """The nearest directory from ``directory`` up to (not including) ``root`` that is a git
    checkout of its own (holds a ``.git`` directory or file), or None."""
    root = root.rstrip(os.sep)
    current = directory.rstrip(os.sep)
    while current.startswith(root + os.sep):
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        current = os.path.dirname(current)
    return None


# The most wctx reads of one working-tree file where git recorded no size for it (a cited file,
# an untracked one): a checkout may hold a generated file of any size, and a blob id is computed
# over the whole file in memory.
WORKTREE_READ_MAX = 64 * 1024 * 1024


class UnreadableFile(UsageError):
    """A working-tree path that holds something wctx does not read: no regular file (a FIFO, a
    device, a socket, a directory), a symlink out of the repository, or more bytes than allowed."""


def _file_kind(mode):
    import stat

    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def read_repo_file(repo_root, rel, limit=WORKTREE_READ_MAX):
    """The bytes of the repo-relative file ``rel`` in the working tree at ``repo_root``, or None
    when nothing is there. The one function that reads a working-tree file (the changed-paths
    check, code references, freshness, capture, confirm, manifests): a regular file inside the
    repository only (a symlink is followed while it stays inside), at most ``limit`` bytes (the
    size git recorded, or a stated cap), opened without blocking, so a FIFO never hangs its caller
    and a symlink to /dev/zero is never read. Anything else raises UnreadableFile saying what is
    there."""
    import stat

    root = os.path.realpath(repo_root)
    full = os.path.normpath(os.path.join(root, *rel.split("/")))
    if not full.startswith(root + os.sep):
        return None  # names no path of this repository
    real = os.path.realpath(full)
    if not real.startswith(root + os.sep):
        if not os.path.exists(full):
            return None  # a dangling symlink: no file
        raise UnreadableFile("%s leads outside the repository (through a symlink)" % printable_path(rel))
    try:
        st = os.stat(real)
        if not stat.S_ISREG(st.st_mode):  # refused before it is opened: opening a device may act
            raise UnreadableFile(
                "%s is %s, not a regular file" % (printable_path(rel), _file_kind(st.st_mode))
            )
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(real, flags | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        raise UnreadableFile("%s cannot be read: %s" % (printable_path(rel), e.strerror or e)) from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)  # what was opened, should the path have changed since the check
        if not stat.S_ISREG(st.st_mode):
            raise UnreadableFile(
                "%s is %s, not a regular file" % (printable_path(rel), _file_kind(st.st_mode))
            )
        data = fh.read(limit + 1) if st.st_size <= limit else b""
        if st.st_size > limit or len(data) > limit:
            raise UnreadableFile(
                "%s is larger than %d bytes; wctx does not read it whole" % (printable_path(rel), limit)
            )
    return data
