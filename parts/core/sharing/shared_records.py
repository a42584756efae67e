from __future__ import annotations

import json
import os

from .authors import MAX_AUTHOR_CHARS
from .caches import BUILT_ONCE
from .capture import _check_confidence
from .constants import (
    EVIDENCE_KINDS,
    MAX_CLAIM_CHARS,
    MAX_DETAIL_CHARS,
    MAX_FILES_PER_ITEM,
    MAX_SUMMARY_CHARS,
    MAX_SYMPTOM_CHARS,
    RELATION_KINDS,
    REPO_NAME_RE,
    STATUSES,
    _lazy_pattern,
)
from .errors import NotFoundError, UsageError, WctxError
from .git import GitError, git_path, is_object_id
from .helpers import is_utf8
from .redaction import identifier_fault, shown_text
from .results import _stamp_seconds

# ----------------------------------------------------------------------------------------------
# Shared records: the format evidence travels in between stores, and the one validator every
# record from outside passes
# ----------------------------------------------------------------------------------------------
#
# A team shares memory through a git repository it already has: ``wctx export --dir DIR`` writes
# one file per session (``DIR/<session id>.jsonl``), so two people exporting never write the same
# file and a merge never conflicts; ``wctx import-evidence DIR`` reads them back. Ids are global,
# so importing twice changes nothing. A repository is matched by name when its root commit agrees,
# else by root commit (the same project registered under another name or path).

EXPORT_FORMAT = 1
ANCHOR_FIELDS = (
    "repo",
    "root_commit",
    "path",
    "symbol",
    "commit",
    "branch",
    "blob",
    "dirty",
    "symbol_hash",
    "symbol_lang",
)


# -- Records from outside: one validator, field by field ------------------------------------------
# Every record that arrives from another store (an export file, a team's shared directory) passes
# validate_record before anything is stored. RECORD_FIELDS maps a record type to its fields and
# each field to a checker; a new record type adds its entry here and is validated the same way.
# A checker returns the value to keep or raises ValueError with what is wrong; fields a type does
# not declare are dropped, so nothing unchecked reaches the store.

_TIMESTAMP_RE = _lazy_pattern(r"\A\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?\Z")
_RECORD_ID_RE = _lazy_pattern(r"\A(?:(?:ev|ses)-[0-9a-f]{10}|[A-Za-z0-9_][\w.:-]{0,79})\Z")
_HEX_RE = _lazy_pattern(r"\A[0-9a-f]{8,64}\Z")
_EVENT_ID_RE = _lazy_pattern(r"\Aevt-[\w.:-]{1,80}\Z")
_REF_FORBIDDEN_RE = _lazy_pattern(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//")


def _v_text(limit, required=False, single_line=False):
    def check(value):
        if value is None or value == "":
            if required:
                raise ValueError("is required")
            return None
        if not isinstance(value, str):
            raise ValueError("must be text, not %s" % type(value).__name__)
        if not value.isascii() and not is_utf8(value):  # ASCII is UTF-8 (a flag, no encoding)
            raise ValueError("is not valid UTF-8")
        if "\x00" in value:
            raise ValueError("contains a NUL character")
        if single_line and ("\n" in value or "\r" in value):
            raise ValueError("must be one line")
        if len(value) > limit:
            raise ValueError("is %d characters; the limit is %d" % (len(value), limit))
        if required and not value.strip():
            raise ValueError("is empty")
        return value

    return check


def _v_object_id(value):
    """A recorded commit or blob: a full object id, the only form that ever reaches git."""
    if value is None:
        return None
    if not is_object_id(value):
        raise ValueError(
            "must be a full object id (40 or 64 lower-case hex digits), not %r"
            % (shown_text(str(value))[:80],)
        )
    return value


def _v_hex(value):
    if value is None:
        return None
    if not isinstance(value, str) or not _HEX_RE.match(value):
        raise ValueError("must be lower-case hex, not %r" % (shown_text(str(value))[:80],))
    return value


_OWN_ID_RE = _lazy_pattern(r"\A(?:ev|ses)-[0-9a-f]{10}\Z")  # the ids wctx makes: never a secret


def _v_key(value):
    """``value`` (an identifier that matched its pattern), refused when the redaction boundary
    would change it: stored as a [REDACTED …] marker, a key names no record, and every other key
    holding a secret of that kind becomes the same marker."""
    fault = None if _OWN_ID_RE.match(value) else identifier_fault(value)
    if fault:
        raise ValueError("%s (an identifier is stored as it is, never redacted)" % fault)
    return value


def _v_matching(pattern, what, key=False):
    """A checker for optional text that must match ``pattern`` (``what`` names it in errors);
    ``key``: an identifier the store keeps as a key, which must hold no secret (_v_key)."""

    def check(value):
        if value is None:
            return None
        if not isinstance(value, str) or not pattern.match(value):
            fault = identifier_fault(value) if key and isinstance(value, str) else None
            if fault:  # said without the value, which holds what looks like a secret
                raise ValueError("%s (an identifier is stored as it is, never redacted)" % fault)
            raise ValueError("is not %s: %r" % (what, shown_text(str(value))[:80]))
        return _v_key(value) if key else value

    return check


def _v_required(check):
    """``check``, with a missing value refused."""

    def required(value):
        if value is None:
            raise ValueError("is required")
        return check(value)

    return required


_v_record_id = _v_matching(_RECORD_ID_RE, "a valid id")  # a topology record's (never stored)
_v_required_id = _v_required(_v_record_id)
# An item's or a session's id is one wctx made (new_id): "ev-" or "ses-" and ten lower-case ASCII
# hex digits. Nothing else names one, so a twin in other case or other digits never arrives.
_v_key_id = _v_matching(
    _OWN_ID_RE, "an item or session id (ev- or ses- and 10 lower-case hex digits)", key=True
)
_v_required_key_id = _v_required(_v_key_id)
_v_repo_name = _v_matching(REPO_NAME_RE, "a repository name", key=True)
_v_required_repo = _v_required(_v_repo_name)
_v_machine = _v_matching(_lazy_pattern(r"\A[0-9a-f]{16}\Z"), "a machine id (16 lower-case hex digits)")


def _v_branch(value):
    """A branch name as git check-ref-format would accept it (and never an option)."""
    if value is None:
        return None
    if (
        not isinstance(value, str)
        or not value
        or len(value) > 255
        or not is_utf8(value)
        or value.startswith(("-", "/", "."))
        or value.endswith(("/", ".", ".lock"))
        or "/." in value
        or _REF_FORBIDDEN_RE.search(value)
    ):
        raise ValueError("is not a valid branch name: %r" % (shown_text(str(value))[:80],))
    return value


def _v_path(value):
    """A repo-relative path: never absolute, never leaving the repository, never an option."""
    if value is None:
        return None
    try:
        git_path(value)
    except GitError:
        raise ValueError("cites a path outside its repository: %r" % (shown_text(str(value))[:80],)) from None
    if value.startswith("-") or len(value) > 4096 or ("git" in value.lower() and _names_git_dir(value)):
        raise ValueError("cites a path outside its repository: %r" % (shown_text(str(value))[:80],))
    return value


def _names_git_dir(path):
    """Whether a part of ``path`` is the .git directory to some file system: in any case (macOS,
    Windows), with trailing dots or spaces (which NTFS drops), or as NTFS's short name GIT~1."""
    return any(p.rstrip(". ") == ".git" or p == "git~1" for p in path.lower().split("/"))


_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _is_calendar_time(value):
    """Whether the date, time and offset of a stamp _TIMESTAMP_RE matched exist: no month 13, no
    30 February, no hour 24 (a leap second's :60 is a time)."""
    y, mo, d = int(value[:4]), int(value[5:7]), int(value[8:10])
    if not 1 <= mo <= 12 or not 1 <= d <= _MONTH_DAYS[mo - 1]:
        return False
    if mo == 2 and d == 29 and (y % 4 or (y % 100 == 0 and y % 400)):
        return False
    if int(value[11:13]) > 23 or int(value[14:16]) > 59 or int(value[17:19]) > 60:
        return False
    offset = value[19:].lstrip(".0123456789")
    return offset in ("", "Z") or (int(offset[1:3]) <= 23 and int(offset[-2:]) <= 59)


def _v_timestamp(value):
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not _TIMESTAMP_RE.match(value) or not _is_calendar_time(value):
        raise ValueError("is not an ISO-8601 time: %r" % (shown_text(str(value))[:80],))
    return value


def _v_required_timestamp(value):
    if _stamp_seconds(value) is None or not _TIMESTAMP_RE.match(value) or not _is_calendar_time(value):
        raise ValueError("needs a time like 2026-03-01T12:00:00Z, not %r" % (shown_text(str(value))[:80],))
    return value


def _v_event_id(value):
    if not isinstance(value, str) or not _EVENT_ID_RE.match(value):
        raise ValueError("needs an id like evt-…, not %r" % (shown_text(str(value))[:80],))
    return _v_key(value)


def _v_commit_map(value):
    """{repository name: commit or None}."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError("must map repository names to commits")
    for name, commit in value.items():
        try:
            _v_repo_name(name)
            _v_object_id(commit)
        except ValueError as e:
            raise ValueError("%r: %s" % (name, e)) from None
    return value


def _v_enum(choices, default=None, what="value"):
    def check(value):
        if value is None:
            return default
        if not isinstance(value, str) or value not in choices:
            raise ValueError("unknown %s %r (one of %s)" % (what, value, ", ".join(choices)))
        return value

    return check


def _v_format(value):
    if value is None:
        return EXPORT_FORMAT
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError("must be a whole number")
    if value > EXPORT_FORMAT:
        raise ValueError("%s is newer than this wctx understands" % value)
    return value


def _v_confidence(value):
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise ValueError("must be a JSON number from 0 to 1, not %s" % type(value).__name__)
    try:
        return _check_confidence(value)
    except UsageError as e:
        raise ValueError(str(e).replace("confidence ", "", 1)) from None


def _v_dirty(value):
    if value not in (None, 0, 1, True, False):
        raise ValueError("must be 0 or 1")
    return None if value is None else int(value)


def _v_list_of(record_type, limit=MAX_FILES_PER_ITEM * 4):
    def check(value):
        if value is None:
            return []
        if not isinstance(value, list):
            raise ValueError("must be a list")
        if len(value) > limit:
            raise ValueError("has %d entries; the limit is %d" % (len(value), limit))
        try:
            return [_validate_fields(record_type, item) for item in value]
        except _FieldError:  # again, each entry named by its position, for the message
            return [_validate_fields(record_type, item, "[%d]." % i) for i, item in enumerate(value)]

    return check


RECORD_FIELDS = {
    "session": {
        "type": _v_enum(("session",)),
        "format": _v_format,
        "id": _v_required_key_id,
        "agent": _v_text(200, single_line=True),
        "external_id": _v_text(1000, single_line=True),
        "cwd": _v_text(4096, single_line=True),  # relative to the repository in exports
        "repo": _v_repo_name,
        "branch": _v_branch,
        "commit": _v_object_id,
        "started_at": _v_timestamp,
        "ended_at": _v_timestamp,
        "summary": _v_text(MAX_SUMMARY_CHARS),
        "author": _v_text(MAX_AUTHOR_CHARS, single_line=True),
        "machine": _v_machine,
    },
    "evidence": {
        "type": _v_enum(("evidence",)),
        "format": _v_format,
        "id": _v_required_key_id,
        "kind": _v_required(_v_enum(EVIDENCE_KINDS, what="kind")),
        "session": _v_required_key_id,
        "repo": _v_required_repo,
        "root_commit": _v_object_id,
        "claim": _v_text(MAX_CLAIM_CHARS, required=True),
        "detail": _v_text(MAX_DETAIL_CHARS),
        "symptom": _v_text(MAX_SYMPTOM_CHARS),
        "confidence": _v_confidence,
        "status": _v_enum(STATUSES, default="active", what="status"),
        "superseded_by": _v_key_id,
        "created_at": _v_timestamp,
        "updated_at": _v_timestamp,
        "anchors": _v_list_of("anchor"),
        "confirmed_at": _v_timestamp,
        "history": _v_list_of("history_event", limit=10000),
    },
    # Not a record of its own: what an evidence record's anchors list holds.
    "anchor": {
        "repo": _v_required_repo,
        "root_commit": _v_object_id,
        "path": _v_path,
        "symbol": _v_text(500, single_line=True),
        "commit": _v_object_id,
        "branch": _v_branch,
        "blob": _v_object_id,
        "dirty": _v_dirty,
        "symbol_hash": _v_hex,
        "symbol_lang": _v_text(40, single_line=True),
    },
    # An evidence record's history: confirmations and repeats, each with a global id.
    "history_event": {
        "id": _v_event_id,
        "event": _v_enum(("confirmed", "seen"), what="history event"),
        "at": _v_required_timestamp,
        "agent": _v_text(MAX_SUMMARY_CHARS),
        "session": _v_key_id,
        "note": _v_text(MAX_SUMMARY_CHARS),
        "commits": _v_commit_map,
        "previous": _v_list_of("previous_anchor"),
    },
    # What an item was stamped with before a history event.
    "previous_anchor": {
        "repo": _v_repo_name,
        "path": _v_path,
        "symbol": _v_text(500, single_line=True),
        "commit": _v_object_id,
        "branch": _v_branch,
        "blob": _v_object_id,
        "symbol_hash": _v_hex,
    },
}
# Topology: repositories by identity (root commit + name, never a path), the relations between them
# and the workspaces they form, so that a teammate's import recreates the product's shape.
RECORD_FIELDS["repository"] = {
    "type": _v_enum(("repository",)),
    "format": _v_format,
    "id": _v_required_id,
    "name": _v_required_repo,
    "root_commit": _v_object_id,
}
RECORD_FIELDS["relation"] = {
    "type": _v_enum(("relation",)),
    "format": _v_format,
    "id": _v_required_id,
    "from": _v_required_repo,
    "from_root": _v_object_id,
    "kind": _v_required(_v_enum(RELATION_KINDS, what="relation kind")),
    "to": _v_required_repo,
    "to_root": _v_object_id,
    "note": _v_text(MAX_CLAIM_CHARS),
    "created_at": _v_timestamp,
}
RECORD_FIELDS["workspace"] = {
    "type": _v_enum(("workspace",)),
    "format": _v_format,
    "id": _v_required_id,
    "name": _v_required_repo,  # workspace names follow the repository name rule
    "repos": _v_list_of("workspace_member", limit=10000),
}
RECORD_FIELDS["workspace_member"] = {"repo": _v_required_repo, "root_commit": _v_object_id}
# What was forgotten: the id and the reason, never the content. Importing one deletes the item.
RECORD_FIELDS["tombstone"] = {
    "type": _v_enum(("tombstone",)),
    "format": _v_format,
    "id": _v_required_key_id,
    "kind": _v_required(_v_enum(("evidence", "session"), what="tombstone kind")),
    "session": _v_required_key_id,
    "reason": _v_text(MAX_CLAIM_CHARS, required=True),
    "forgotten_at": _v_timestamp,
}
# The record types a file may hold (anchors live inside evidence, members inside workspaces).
RECORD_TYPES = ("session", "evidence", "repository", "relation", "workspace", "tombstone")
TOPOLOGY_TYPES = ("repository", "relation", "workspace")


class _FieldError(ValueError):
    pass


_ABSENT = object()


@BUILT_ONCE
def field_checks(record_type):
    """(field, check, what check gives an absent field, or _ABSENT when it refuses one, the texts
    check has passed unchanged): most fields of most records are absent or null, and need no
    call; many others repeat a value already checked (a commit, a repository, a path)."""
    out = []
    for field, check in RECORD_FIELDS[record_type].items():
        try:
            absent = check(None)
        except ValueError:
            absent = _ABSENT
        out.append((field, check, absent, set()))
    return tuple(out)


# Each check is a pure function of the value, so a text it returned unchanged once passes again
# without the call. Short texts only, a bounded number per field; dropped after each import.
_PASSED_CHARS, _PASSED_MAX = 200, 8192


@BUILT_ONCE
def field_plan(record_type):
    """(what an absent field of each kind gives, in declared order; {field: (check, passed)} of the
    fields a value needs checking for; the fields that refuse to be absent; those whose absent
    value is a fresh container), for the quick pass of _validate_fields."""
    entries = field_checks(record_type)
    defaults = {f: None if absent is _ABSENT else absent for f, _, absent, _ in entries}  # declared order
    required = tuple(f for f, _, absent, _ in entries if absent is _ABSENT)
    containers = tuple(
        (f, absent.__class__) for f, _, absent, _ in entries if absent.__class__ in (list, dict)
    )
    return defaults, {f: (check, passed) for f, check, _, passed in entries}, required, containers


def _validate_fields(record_type, record, prefix=""):
    if not isinstance(record, dict):
        raise _FieldError("%s must be an object" % prefix.rstrip("."))
    clean = _quick_fields(record_type, record)
    return clean if clean is not None else _checked_fields(record_type, record, prefix)


def _note_passed(passed, value, out):
    """Remember a short text its check returned unchanged, so that it passes again without one."""
    if out is value and value.__class__ is str and len(value) <= _PASSED_CHARS:
        if len(passed) >= _PASSED_MAX:
            passed.clear()
        passed.add(value)


def _quick_fields(record_type, record):
    """The quick pass: the record's own fields over the absent values, in declared order; None
    when any field fails or a required one is missing, for the full pass to name the first one in
    declared order."""
    defaults, checks, required, containers = field_plan(record_type)
    clean = defaults.copy()
    try:
        for field, value in record.items():
            entry = None if value is None else checks.get(field)
            if entry is None:
                continue  # absent, or not a declared field: ignored
            if value.__class__ is str and value in entry[1]:
                clean[field] = value
                continue
            out = clean[field] = entry[0](value)
            _note_passed(entry[1], value, out)
    except ValueError:
        return None
    if None in map(record.get, required):
        return None
    for field, kind in containers:
        if record.get(field) is None:
            clean[field] = kind()  # each record its own list
    return clean


def _checked_fields(record_type, record, prefix):
    """The full pass: every declared field in order, the first that fails named with its error."""
    clean = {}
    for field, check, absent, passed in field_checks(record_type):
        value = record.get(field)
        if value is None and absent is not _ABSENT:
            clean[field] = absent if absent.__class__ not in (list, dict) else absent.__class__()
            continue
        if value.__class__ is str and value in passed:
            clean[field] = value
            continue
        try:
            out = clean[field] = check(value)
        except _FieldError as e:
            raise _FieldError("%s%s%s" % (prefix, field, e)) from None
        except ValueError as e:
            raise _FieldError("%s%s: %s" % (prefix, field, e)) from None
        _note_passed(passed, value, out)
    return clean


def validate_record(record, where):
    """The record with every declared field checked (and only those), or UsageError naming
    ``where`` (file:line), the field and what is wrong with it."""
    if not isinstance(record, dict) or record.get("type") not in RECORD_TYPES:
        raise UsageError("%s: not a wctx export record" % where)
    try:
        return _validate_fields(record["type"], record)
    except _FieldError as e:
        raise UsageError("%s: %s field %s" % (where, record["type"], e)) from None


def _export_files(paths):
    """[(file, whether named on the command line)] of an import of ``paths``, in order."""
    files = []
    for path in paths:
        if os.path.isdir(path):
            files.extend(
                (os.path.join(path, n), False) for n in sorted(os.listdir(path)) if n.endswith(".jsonl")
            )
        elif os.path.lexists(path):
            files.append((path, True))
        else:
            raise NotFoundError("no such file or directory: %s" % path)
    return files


class RecordError(UsageError):
    """A valid record the import cannot take beside the others (an item of a session the import
    does not hold): ``record`` says which, for the file and line its message is given."""

    def __init__(self, message, record):
        super().__init__(message)
        self.record = record


def export_sources(paths):
    """(file, its open file) for each file of an import of ``paths``, in order, each closed after."""
    for path, named in _export_files(paths):
        with _open_export(path, named) as fh:
            yield path, fh


def record_line(sources, record):
    """ "file:line" of the first line of ``sources`` ([(label, raw lines)], an import's files read
    again for an error's message) that holds ``record`` as validated, or None."""
    needle = record["id"].encode()
    for label, lines in sources:
        for n, raw in enumerate(lines, 1):
            if needle in raw:
                try:
                    text = raw.decode("utf-8-sig" if n == 1 else "utf-8")
                    if validate_record(json.loads(text), label) == record:
                        return "%s:%d" % (label, n)
                except (ValueError, RecursionError, WctxError):
                    continue
    return None


def _open_export(path, named):
    """``path`` opened for reading when it is a regular file, else UsageError. A directory's entries
    (a teammate's checkout of the team's memory) are never followed as symbolic links (to
    /dev/zero, to a file outside it); a FIFO or a device is refused before it is read (it would
    block, or never end). ``named``: given on the command line, where a link is the user's own."""
    import stat

    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | (0 if named else getattr(os, "O_NOFOLLOW", 0))
    try:
        if not named and os.path.islink(path):
            raise UsageError("%s: a symbolic link, not a file; nothing was imported" % path)
        fd = os.open(path, flags)
    except OSError as e:
        raise UsageError("cannot read %s: %s; nothing was imported" % (path, e.strerror)) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UsageError("%s: not a regular file; nothing was imported" % path)
    return os.fdopen(fd, "rb")


def export_lines(data):
    """An export file's raw lines as reading the file gives them: ended by LF (CRLF keeps its CR,
    which JSON takes as space), never by a lone CR, which JSONL does not end a line with."""
    return data.split(b"\n")


def parse_export(label, lines):
    """Validated records of one export file (``lines``: its raw lines); errors name label:line."""
    return list(_export_records(label, lines))


def _export_json(label, lines):
    """(line number, parsed value) of each non-blank line of an export file (``lines``: its raw
    lines, read one at a time); a line that is not JSON is refused as label:line."""
    for n, raw in enumerate(lines, 1):
        if raw.strip():
            yield n, _json_line(label, n, raw)


def _json_line(label, n, raw):
    try:
        # an editor's byte order mark, at the start of the file, is no part of the first record
        return json.loads(raw.decode("utf-8-sig" if n == 1 else "utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise UsageError("%s:%d: not valid JSON" % (label, n)) from None
    except RecursionError:  # brackets nested deeper than the parser's stack
        raise UsageError("%s:%d: not valid JSON (nested too deeply)" % (label, n)) from None


def _export_records(label, lines):
    """Validated records of one export file, as they are read; errors name label:line."""
    for n, record in _export_json(label, lines):
        yield validate_record(record, "%s:%d" % (label, n))


# -- Reading an import: two passes over its files, neither holding every record ----------------
# An import may bring a million items (a team's whole memory), which held at once would take
# gigabytes. So the files are read twice, a line at a time: the first pass checks every record
# other than the items and keeps them (sessions, tombstones, topology: what the items are
# imported against, one record per tens of items); the second reads the items, checks them and
# imports them in chunks, in the import's one transaction, which a refused line rolls back. The
# first invalid line in file order is the one named: a refusal in the first pass checks the items
# before it. An import of few items keeps them from the first pass and reads its files once.
_STREAM_AFTER = 10000  # items an import holds from its first pass; beyond, it reads them again
_STREAM_AFTER_BYTES = 8 << 20  # nor more than this size of files (a few long items hold as much)
_NOT_AN_ITEM = ("session", "tombstone") + TOPOLOGY_TYPES  # what the first pass checks and keeps


def _plainly_an_item(raw):
    """Whether a line, if it is a record at all, is an item, seen without parsing it: its one
    "type" (a quote in a text is escaped, so none is inside one) is "evidence", and no \\u escape
    could spell another key. The first pass leaves such a line to the second, which checks it."""
    return b'"type": "evidence"' in raw and raw.count(b'"type"') == 1 and b"\\u" not in raw


def scan_export(paths):
    """The first pass over an import's files: (its records other than items, in file order; how
    many items; the items when at most _STREAM_AFTER in at most _STREAM_AFTER_BYTES of files, else
    None; each file's stat signature)."""
    try:
        return _scan_export_files(paths)
    except UsageError:
        # The first pass leaves the items unchecked: one before the line refused may be the
        # first invalid line. Checking every record in order names the first (rarely needed).
        for path, fh in export_sources(paths):
            for _ in _export_records(path, fh):
                pass
        raise


def _scan_export_files(paths):
    others, kept, count, size, seen = [], [], 0, 0, {}
    for path, fh in export_sources(paths):
        seen[path] = _file_signature(fh)
        size += seen[path][1]
        if size > _STREAM_AFTER_BYTES:
            kept = None
        for n, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            if kept is None and _plainly_an_item(raw):
                count += 1
                continue  # parsed and checked when the second pass reads it
            record = _json_line(path, n, raw)
            if kept is None and record.__class__ is dict and record.get("type") == "evidence":
                count += 1
                continue  # checked when the second pass reads it
            record = validate_record(record, "%s:%d" % (path, n))
            if record["type"] != "evidence":
                others.append(record)
                continue
            count += 1
            kept.append(record)
            if count > _STREAM_AFTER:
                kept = None  # too many to hold: the second pass reads them again
    return others, count, kept, seen


def reread_items(paths, seen):
    """The second pass: the items of an import's files, read and checked in file order (every
    record the first pass did not check and keep). A file that changed since the first pass is
    refused (the import is then rolled back)."""
    for path, fh in export_sources(paths):
        if seen.get(path) != _file_signature(fh):
            raise UsageError("%s: changed while it was being imported; nothing was imported" % path)
        for n, record in _export_json(path, fh):
            if record.__class__ is not dict or record.get("type") not in _NOT_AN_ITEM:
                yield validate_record(record, "%s:%d" % (path, n))


def _file_signature(fh):
    st = os.fstat(fh.fileno())
    return st.st_ino, st.st_size, st.st_mtime_ns
