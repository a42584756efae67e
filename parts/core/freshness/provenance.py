from __future__ import annotations

import os
import re

from .constants import REPO_NAME_RE
from .errors import NotFoundError, UsageError
from .git import GitError, GitRepo, UnreadableFile, _file_kind, blob_id, read_repo_file, repo_relative_path
from .helpers import clean_text, unknown_name
from .records import _repo_containing
from .redaction import identifier_fault, stored_text
from .repos import _git_refusal
from .symbols import language_of, nearest_symbols, symbol_stamp_of
from .vocabulary import CODE_VOCABULARY_SUBJECTS, code_vocabulary

# ----------------------------------------------------------------------------------------------
# Provenance: what capture records about each repository an item touches
# ----------------------------------------------------------------------------------------------


def _parse_file_spec(spec, repos, item_repo, cwd, notes=None):
    """``path#symbol``, ``repo-name:path#symbol`` or ``/abs/path#symbol`` -> (repo, rel, abs, symbol).
    A relative path is read from ``cwd`` first (see repo_relative_path); when another file of
    that name exists where it could also have meant, a sentence saying which was cited goes to
    ``notes``."""
    spec = clean_text(spec, "file", 4096, required=True)
    path, symbol = _split_symbol(spec)
    passed_over = []
    repo, path, base = _spec_repository(spec, path, repos, item_repo, cwd, passed_over)
    if repo is None:
        raise UsageError("cannot tell which repository %s belongs to; pass --repo NAME" % spec)
    twins_in_repo = []
    rel, real = repo_relative_path(repo.path, path, cwd=base, passed_over=twins_in_repo)
    _refuse_uncitable(repo, rel, real)
    passed_over += ["%s:%s" % (repo.name, t) for t in twins_in_repo]
    if notes is not None and passed_over:
        notes.append(
            "--file %s: cited %s:%s; %s exists too: cite it by that name to mean that one"
            % (spec, repo.name, rel, " and ".join(passed_over))
        )
    return repo, rel, real, symbol


def _split_symbol(spec):
    """``path#symbol`` -> (path, symbol or None)."""
    if "#" not in spec:
        return spec, None
    path, _, symbol = spec.rpartition("#")
    symbol = symbol.strip() or None
    if not path:
        raise UsageError("file %r names a symbol but no path" % spec)
    if symbol and "" in re.split(r"\.|::", symbol):
        # Context..invoke or .invoke would be read as some other name; say so instead.
        raise UsageError(
            "symbol %r has an empty part; qualify a name as Class.method or Class::method" % symbol
        )
    return path, symbol


def _spec_repository(spec, path, repos, repo, cwd, passed_over):
    """(repository, path, what the path is relative to first) of a cited path, the item's
    repository ``repo`` unless the path says otherwise: absolute, ``repo-name:path``, or relative
    from the cwd into another registered repository. A file of that name that the path could also
    have meant goes to ``passed_over``."""
    if os.path.isabs(path):
        owner = _repo_containing(repos, path)
        if owner is None:
            raise UsageError("%s is not inside any registered repository" % path)
        return owner, path, cwd
    prefix, colon, rest = path.partition(":")
    named = [r for r in repos if colon and r.name == prefix]
    if named:
        return named[0], rest, None  # repo:path is relative to that repo's root
    if colon and _names_a_repository(prefix, path, repo, cwd):
        raise NotFoundError("%s: %s" % (spec, unknown_name("repository", prefix, [r.name for r in repos])))
    if not cwd:
        return repo, path, cwd
    return _from_cwd(repos, repo, path, cwd, passed_over)


def _from_cwd(repos, repo, path, cwd, passed_over):
    """A relative path from the cwd that lands in another registered repo (../sdk/x.ts) belongs
    to that repo, unless the item's own repository ``repo`` has such a file."""
    here = os.path.normpath(os.path.join(cwd, path))
    owner = _repo_containing(repos, here) if os.path.exists(here) else None
    inside = os.path.normpath(os.path.join(repo.path, path)) if repo is not None else ""
    in_item_repo = inside.startswith(repo.path + os.sep) and os.path.lexists(inside) if repo else False
    if owner is not None and (repo is None or owner.id != repo.id) and not in_item_repo:
        return owner, here, cwd
    if owner is not None and owner.id != repo.id and os.path.isfile(here):
        twin = os.path.relpath(os.path.realpath(here), owner.path).replace(os.sep, "/")
        passed_over.append("%s:%s" % (owner.name, twin))
    return repo, path, cwd


def _refuse_uncitable(repo, rel, real):
    """A usage error unless ``rel`` is a regular file of ``repo`` whose path can be stored as it is."""
    fault = identifier_fault(rel)
    if fault:  # stored cleaned or redacted, it would name no file, and verify would call it deleted
        raise UsageError(
            "cited path %s in %s %s; a cited path is stored as it is, so this file cannot be cited "
            "(rename it)" % (stored_text(rel), repo.name, fault)
        )
    if os.path.isdir(real):
        raise UsageError("%s is a directory in %s; cite a file" % (rel, repo.name))
    if not os.path.lexists(real):
        raise UsageError("%s does not exist in %s" % (rel, repo.name))
    if not os.path.isfile(real):
        kind = _file_kind(os.stat(real).st_mode)
        raise UsageError("%s in %s is %s, not a regular file; cite a file" % (rel, repo.name, kind))


def _names_a_repository(prefix, path, item_repo, cwd):
    """Whether ``prefix:rest``, whose prefix names no registered repository, was meant as a
    repository name (a typo of one) rather than a path with a colon in it.

    Facts: does a file or folder ``prefix:rest`` exist, from the cwd or in the item's repository;
    does the prefix have a repository name's shape (no slash, the characters names allow).
    Rule: a path that exists is a path; else a prefix shaped like a name is an unknown repository
    name; else it is a path (and the usual "does not exist" follows)."""
    for base in (cwd, item_repo.path if item_repo is not None else None):
        if base and os.path.lexists(os.path.join(base, path)):
            return False
    return bool(REPO_NAME_RE.match(prefix))


def _repo_provenance(repo):
    """HEAD commit, branch and object format of one repository (one git process)."""
    if not os.path.isdir(repo.path):
        raise UsageError("repository %s is not on this machine (%s is missing)" % (repo.name, repo.path))
    g = GitRepo(repo.path)
    try:
        g.info()
    except GitError as e:
        raise UsageError("repository %s: %s" % (repo.name, _git_refusal(repo.path) or e)) from None
    return g


def _stamp_anchors(item_repo, cited, gits, head_blob, warnings):
    """The provenance of one item as it is now: an anchor per repository it touches (HEAD, branch)
    and one per cited file (blob of the file on disk, dirty flag, the cited symbol's hash).

    ``cited`` is [(repo, rel, real path, symbol)], ``gits`` {repo id: GitRepo} from
    _repo_provenance, ``head_blob(g, rel)`` the file's blob in HEAD. Capture and confirm both stamp
    here, so an item re-stamped today looks exactly like one captured today."""
    anchors = []
    repo_level = [item_repo] + [c[0] for c in cited if c[0].id != item_repo.id]
    for repo in dict((r.id, r) for r in repo_level).values():
        g = gits[repo.id]
        anchors.append(
            {
                "repo": repo,
                "path": None,
                "symbol": None,
                "commit": g.head,
                "branch": g.branch(),
                "blob": None,
                "dirty": None,
                "symbol_hash": None,
                "symbol_lang": None,
                "checkout": repo.checkout,
            }
        )
    subjects = {}  # {repo id: {path: subjects}}: one git process per repository
    for repo in dict((c[0].id, c[0]) for c in cited).values():
        paths = [rel for r, rel, _, _ in cited if r.id == repo.id]
        subjects[repo.id] = gits[repo.id].recent_subjects(paths, CODE_VOCABULARY_SUBJECTS)
    for repo, rel, real, symbol in cited:
        anchors.append(
            _stamp_file(
                repo, rel, real, symbol, gits[repo.id], head_blob, warnings,
                subjects=subjects[repo.id].get(rel, ()),
            )
        )  # fmt: skip
    return anchors


def _stamp_file(repo, rel, real, symbol, g, head_blob, warnings, what="symbol", subjects=None):
    """One cited file (or a dependency) as it is now: the repository's HEAD and branch, the blob
    of the file on disk, whether it differs from HEAD's, and the symbol's hash (None, with a
    warning, where the symbol is not found). With ``subjects`` (the latest commit subjects of the
    file), also the vocabulary of the cited code for the item's search row (``code``)."""
    try:
        data = read_repo_file(repo.path, rel)
    except UnreadableFile as e:
        raise UsageError("%s in %s: %s" % (rel, repo.name, e)) from None
    if data is None:
        raise UsageError("%s does not exist in %s" % (rel, repo.name))
    blob = blob_id(data, g.object_format)
    sym_hash = lines = near = None
    if symbol:
        sym_hash, lines = symbol_stamp_of(data, rel, symbol)
        if sym_hash is None:
            near = nearest_symbols(data.decode("utf-8", "surrogateescape"), rel, symbol)
            warnings.append(
                "%s %s was not found in %s:%s%s; its freshness will be judged by the whole file"
                % (what, symbol, repo.name, rel, " (did you mean %s?)" % " or ".join(near) if near else "")
            )
    anchor = {
        "repo": repo,
        "path": rel,
        "symbol": symbol,
        "commit": g.head,
        "branch": g.branch(),
        "blob": blob,
        "dirty": int(head_blob(g, rel) != blob),
        "symbol_hash": sym_hash,
        # Where the symbol lies in that blob: a history walk starts from it unparsed.
        "symbol_lines": lines,
        "symbol_lang": language_of(rel) if symbol else None,
        "checkout": repo.checkout,  # the checkout stamped (None: the registered path)
    }
    if near is not None:
        anchor["nearest_symbols"] = near  # not stored: what capture offers instead of a typo
    if subjects is not None:
        anchor["code"] = code_vocabulary(data, rel, symbol, subjects)  # search row
    return anchor
