from __future__ import annotations

from .constants import _lazy_pattern
from .git import blob_id
from .symbols import language_of, locate_symbol_lines, symbol_hash, symbol_parts

# ----------------------------------------------------------------------------------------------
# History: which commits changed a cited symbol
# ----------------------------------------------------------------------------------------------
#
# Asked only about a symbol whose text at the checkout differs from the text stamped at capture:
# the verdict is decided from those two end states before any history is read.
#
# Every commit is judged against its own parent(s), never against the commit git happens to list
# before it (on a history with merges those differ). A commit that is not a merge changed the
# symbol when its diff changed the symbol's text; a merge changed it only when its result differs
# from what every parent had (a conflict resolved by hand), not when it brought in a change made
# on a branch (that branch's commit is named instead).
#
# Cost: the file's history comes from one ``git log -p -U0`` per repository and range, and the
# symbol is located (a parse) only where a diff's hunks could have moved its edges or touched its
# name outside it. Elsewhere its extent is carried through the hunks: a hunk above or below it
# shifts it, a hunk strictly inside it (indented deeper than its first line) changes its text
# exactly when the hunk's lines differ beyond trailing blanks. So the cost grows with the changes
# to the cited symbols, not with the number of commits in between.

HISTORY_MAX_PARSES = 300  # versions of one file located afresh in one range; past it naming stops
_UNKNOWN = "?"  # a symbol's hash in a version reached through hunks inside it (text changed)


class SymbolHistory:
    """For one symbol: ``named`` (the log records of the commits that changed it, oldest first),
    ``intact`` (commits that changed its file and left it alone) and ``unexamined`` (commits of
    the file not judged: the walk stopped at its bound or could not read a version)."""

    __slots__ = ("named", "intact", "unexamined")

    def __init__(self, named, intact, unexamined):
        self.named, self.intact, self.unexamined = named, intact, unexamined

    def as_json(self):
        return [
            [[c["sha"], c["short"], c["date"], c["subject"]] for c in self.named],
            self.intact,
            self.unexamined,
        ]

    @classmethod
    def from_json(cls, value):
        named, intact, unexamined = value[:3]
        return cls(
            [{"sha": a, "short": b, "date": c, "subject": d} for a, b, c, d in named], intact, unexamined
        )


class _Version:
    """One blob of a cited file: its lines while a later step needs them, whether the text ends
    with a newline, and per symbol (hash | _UNKNOWN | None when absent, line extents | None)."""

    __slots__ = ("lines", "final_newline", "symbols")

    def __init__(self, lines, final_newline, symbols=None):
        self.lines, self.final_newline, self.symbols = lines, final_newline, symbols

    @classmethod
    def of_bytes(cls, data):
        text = data.decode("utf-8", "surrogateescape")
        if text.endswith("\n"):
            return cls(text[:-1].split("\n"), True)
        return cls(text.split("\n") if text else [], False)

    def text(self):
        return "\n".join(self.lines) + ("\n" if self.final_newline and self.lines else "")


def _apply(version, hunks):
    """The lines after ``hunks`` (git's -U0 hunks of ``version``'s blob)."""
    out, cursor, final = [], 0, version.final_newline
    lines = version.lines
    for old_start, old_count, _, _, added, open_end in hunks:
        at = old_start if old_count == 0 else old_start - 1
        out.extend(lines[cursor:at])
        out.extend(added)
        cursor = at + old_count
        if open_end[0]:
            final = True
        if open_end[1]:
            final = False
    out.extend(lines[cursor:])
    return _Version(out, final)


def _leading_blanks(line):
    return line[: len(line) - len(line.lstrip())]


def _blank_edges(lines, first, last):
    """(first line of the blank run above ``first``, last line of the blank run below ``last``)."""
    lo, hi = first, last
    while lo > 1 and not lines[lo - 2].strip():
        lo -= 1
    while hi < len(lines) and not lines[hi].strip():
        hi += 1
    return lo, hi


def _carry(lines, extents, hunks, names, hunk_names):
    """Carry a symbol's extents through a commit's hunks: (changed, new extents), or None when
    only locating it again can tell (a hunk at its edges, or one naming it elsewhere)."""
    changed = False
    new = []
    for first, last in extents:
        lo, hi = _blank_edges(lines, first, last)
        shift, grow = 0, 0
        head = _leading_blanks(lines[first - 1])
        for k, (old_start, old_count, _, removed, added, _) in enumerate(hunks):
            delta = len(added) - old_count
            if old_count:
                top, bottom = old_start, old_start + old_count - 1
                before, after = bottom <= lo - 2, top >= hi + 2
                inside = first < top and bottom < last
            else:  # an insertion after line old_start
                before, after = old_start <= lo - 2, old_start >= hi + 1
                inside = first <= old_start < last
            if before or after:
                if names & hunk_names[k]:
                    return None  # another definition of the name (or its container) changed
                if before:
                    shift += delta
                continue
            if not inside:
                return None
            for line in removed + added:
                if line.strip() and not (line.startswith(head) and len(_leading_blanks(line)) > len(head)):
                    return None  # a line as shallow as the definition's first: its end may move
            if [line.rstrip() for line in removed] != [line.rstrip() for line in added]:
                changed = True
            grow += delta
        new.append((first + shift, last + shift + grow))
    return changed, new


_OTHER_BREAKS = _lazy_pattern("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def _line_safe(text):
    """Whether git's lines and the locator's are the same lines (no lone CR, form feed...)."""
    return text.count("\r") == text.count("\r\n") and not _OTHER_BREAKS.search(text)


_PY_DEFINED = _lazy_pattern(r"\b(?:def|class)\s+(\w+)")
_WORDS = _lazy_pattern(r"[A-Za-z_$\x80-\uffff][\w$]*")


def _hunk_names(language, hunk):
    """The names a hunk's lines may define: in Python (found by ``ast``), those after ``def`` or
    ``class``; elsewhere, every word (any mention may be a definition the heuristic takes)."""
    text = "\n".join(hunk[3] + hunk[4])
    return set((_PY_DEFINED if language == "python" else _WORDS).findall(text))


class _FileWalk:
    """The versions of one cited file in one range, and what each commit did to its symbols."""

    def __init__(self, names, symbols, object_format, read):
        self.names = names
        self.symbols = symbols
        self.object_format = object_format
        self.read = read  # blob id -> bytes or None
        self.language = language_of(names[0])
        # (a Ruby name's ? ! or = is not part of a word: the name without it is looked for)
        self.parts = {s: {p.rstrip("?!=") or p for p in symbol_parts(s)} for s in symbols}
        self.versions = {}
        self.verified = set()  # blobs whose rebuilt lines were checked against their id
        self.uses = {}  # {blob: later steps that need its lines}: lines are dropped after the last
        self.parses = 0
        self.complete = True
        self.changed = []  # [(sha, {symbols the commit changed})], oldest first
        self.steps = 0  # commits that changed the file (merges aside)
        self.stamped = {}  # {symbol: (blob, hash, extents)} as capture stamped it (symbol_histories)
        self.examined = 0  # of which judged

    def _absent(self):
        return _Version([], False, {s: (None, None) for s in self.symbols})

    def version(self, blob):
        """The version of a blob: rebuilt earlier in the walk, or read from git."""
        if blob is None:
            return self._absent()
        if blob not in self.versions:
            data = self.read(blob)
            if data is None:
                return None
            self.versions[blob] = _Version.of_bytes(data)
        return self.versions[blob]

    def locate(self, version, blob, path, symbols=None):
        """Each of ``symbols`` (default: all) as (hash, extents) in ``version``, from its text;
        False when the text cannot be had (lines dropped, bound reached, blob unreadable)."""
        if version.lines is None or self.parses >= HISTORY_MAX_PARSES:
            return False
        self.parses += 1
        text = version.text()
        if blob is not None and blob not in self.verified:
            if blob_id(text.encode("utf-8", "surrogateescape"), self.object_format) != blob:
                data = self.read(blob)  # lines rebuilt from hunks are not the blob's: read it
                if data is None:
                    return False
                fresh = _Version.of_bytes(data)
                version.lines, version.final_newline = fresh.lines, fresh.final_newline
                text = version.text()
            self.verified.add(blob)
        safe = _line_safe(text)
        found = {}
        for s in self.symbols if symbols is None else symbols:
            hit = locate_symbol_lines(text, path, s)
            if hit is None:
                found[s] = (None, None)
            else:  # where git's lines are not the locator's, nothing is carried through hunks
                found[s] = (symbol_hash(hit[0]), hit[1] if safe else "unsafe")
        if version.symbols is None:
            version.symbols = {}
        version.symbols.update(found)
        return True

    def start_from_stamps(self, version, blob):
        """Each symbol's (hash, extents) in ``version`` from what capture stamped for that very
        blob, when it stamped every symbol walked in it (the same locator, the same text)."""
        stamps = [self.stamped.get(s) for s in self.symbols]
        if version.lines is None or any(st is None or st[0] != blob for st in stamps):
            return False
        if any(extent[1] > len(version.lines) for st in stamps for extent in st[2]):
            return False  # not this text after all: locate it
        safe = _line_safe(version.text())
        version.symbols = {s: (st[1], st[2] if safe else "unsafe") for s, st in zip(self.symbols, stamps)}
        return True

    def hashes(self, version, blob, path, symbols=None):
        """{symbol: hash} of a version, locating those whose hash is not known; None if it cannot."""
        wanted = self.symbols if symbols is None else symbols
        known = version.symbols or {}
        missing = [s for s in wanted if s not in known or known[s][0] == _UNKNOWN]
        if missing and not self.locate(version, blob, path, missing):
            return None
        return {s: version.symbols[s][0] for s in wanted}

    def release(self, blob):
        if blob in self.uses:
            self.uses[blob] -= 1
            if self.uses[blob] <= 0 and blob in self.versions:
                self.versions[blob].lines = None  # its symbols stay known

    def _carry_symbols(self, old, hunks):
        """({symbol: (hash, extents)} carried through ``hunks`` from version ``old``, {symbols
        whose text the hunks changed}, [symbols to locate again in the new version])."""
        carried, changed, unsure = {}, set(), []
        hunk_names = [_hunk_names(self.language, hunk) for hunk in hunks]
        for s, (h, extents) in old.symbols.items():
            if extents is None:  # absent before: only a hunk that names it can bring it
                result = None if any(self.parts[s] & names for names in hunk_names) else (False, None)
            elif extents == "unsafe":
                result = None
            else:
                result = _carry(old.lines, extents, hunks, self.parts[s], hunk_names)
            if result is None:
                unsure.append(s)  # located again in the new version, alone
                continue
            carried[s] = (_UNKNOWN if result[0] else h, result[1])
            if result[0]:
                changed.add(s)
        return carried, changed, unsure

    def step(self, sha, patch):
        """Judge one commit's patch of this file against its parent's version."""
        old = self.version(patch.old_blob)
        if old is None or patch.hunks is None or old.lines is None:
            self.complete = False
            return
        if old.symbols is None and not self.start_from_stamps(old, patch.old_blob):
            if not self.locate(old, patch.old_blob, patch.old_path):
                self.complete = False
                return
        path = patch.new_path
        if patch.new_blob is None:
            new = self._absent()
        else:
            new = self.versions.get(patch.new_blob) or _apply(old, patch.hunks)
        carried, changed, unsure = self._carry_symbols(old, patch.hunks)
        if patch.new_blob is None:  # deleted: every symbol it had changed
            changed = {s for s, (h, _) in old.symbols.items() if h is not None}
        else:
            if new.symbols is None:
                new.symbols = carried
            if unsure:
                before = self.hashes(old, patch.old_blob, patch.old_path, unsure)
                after = self.hashes(new, patch.new_blob, path, unsure)
                if before is None or after is None:
                    self.complete = False
                    return
                changed |= {s for s in unsure if before[s] != after[s]}
        if patch.new_blob is not None:
            self.versions[patch.new_blob] = new
            if self.uses.get(patch.new_blob, 0) <= 0:
                new.lines = None
        self.release(patch.old_blob)
        self.changed.append((sha, changed))
        self.examined += 1


def symbol_histories(g, base, tip, targets, known=None):
    """{(path at base, symbol): SymbolHistory} for symbols of files in repository ``g``, over the
    commits in base..tip. ``targets``: {path at base: [symbols]}; ``known``: {(path at base,
    symbol): (blob, hash, extents)} where capture stamped a symbol, so that a file whose version
    at base is that blob needs no parse there. Three git processes per call:
    the files' history with patches, the merges that changed them, one read of the versions that
    no patch in the range rebuilds."""
    log = g.log_range(base, tip)
    blobs = {}
    walks, by_name = _file_walks(log, targets, known, g.object_format, blobs.get)
    steps, merge_steps, wanted = _plan_walks(
        g.file_patches(base, tip, sorted(by_name)), g.merge_changes(base, tip, sorted(by_name)), by_name
    )
    if wanted:
        blobs.update(g.read_blobs(list(dict.fromkeys(wanted))))
    for sha, walk, patch in steps:
        if walk.complete:
            walk.step(sha, patch)
    merged = _judge_merges(merge_steps)
    records = {c["sha"]: c for c in log}
    order = {c["sha"]: i for i, c in enumerate(reversed(log))}  # oldest first
    out = {}
    for path, walk in walks.items():
        for s in walk.symbols:
            own = [sha for sha, changed in walk.changed if s in changed]
            named = own + [sha for sha, changed in merged.get(path, ()) if s in changed]
            named = sorted(set(named), key=lambda sha: order.get(sha, -1))
            history = SymbolHistory([records[sha] for sha in named if sha in records], walk.examined - len(own),
                                    walk.steps - walk.examined)  # fmt: skip
            out[(path, s)] = history
    return out


def _file_walks(log, targets, known, object_format, read):
    """({path at base: _FileWalk}, {each name the file has in the range: its walk}), each file's
    renames followed forward through ``log`` (newest first) from its name at base."""
    walks, by_name = {}, {}
    for path, symbols in targets.items():
        names = [path]
        for commit in reversed(log):
            for status, old, new in commit["changes"]:
                if status == "R" and old == names[-1]:
                    names.append(new)
                    break
        walk = _FileWalk(names, sorted(set(symbols)), object_format, read)
        walk.stamped = {s: known[(path, s)] for s in walk.symbols if known and (path, s) in known}
        walks[path] = walk
        for name in names:
            by_name.setdefault(name, walk)
    return walks, by_name


def _plan_walks(patches, merges, by_name):
    """([(sha, walk, patch)] in order, [(sha, walk, parents, result, path)] of the merges that
    changed a walked file, [blobs no patch in the range rebuilds, to be read from git])."""
    produced, wanted, steps, merge_steps = set(), [], [], []
    for sha, files in patches:
        seen = set()
        for patch in files:
            walk = by_name.get(patch.new_path) or by_name.get(patch.old_path)
            if walk is None or id(walk) in seen:
                continue
            seen.add(id(walk))
            steps.append((sha, walk, patch))
            walk.steps += 1
            if patch.old_blob:
                walk.uses[patch.old_blob] = walk.uses.get(patch.old_blob, 0) + 1
                if patch.old_blob not in produced:
                    wanted.append(patch.old_blob)
            produced.add(patch.new_blob)
    for sha, entries in merges:
        for parents, result, path in entries:
            walk = by_name.get(path)
            if walk is None or result in parents:
                continue
            merge_steps.append((sha, walk, parents, result, path))
            for blob in parents + [result]:
                if blob:
                    walk.uses[blob] = walk.uses.get(blob, 0) + 1  # kept for the merge's judgement
                    if blob not in produced:
                        wanted.append(blob)
    return steps, merge_steps, wanted


def _judge_merges(merge_steps):
    """{path at base: [(merge sha, {symbols the merge itself changed})]}: a merge changed a symbol
    when its result differs from what every parent had."""
    merged = {}
    for sha, walk, parents, result, path in merge_steps:
        now = walk.hashes(walk.version(result), result, path) if result else {s: None for s in walk.symbols}
        before = []
        for parent in parents:
            version = walk.version(parent)
            before.append(walk.hashes(version, parent, path) if version is not None else None)
        if now is None or any(b is None for b in before):
            walk.complete = False
            walk.steps += 1  # counted as a commit of the file that was not examined
            continue
        changed = {s for s in walk.symbols if all(now[s] != b[s] for b in before)}
        merged.setdefault(walk.names[0], []).append((sha, changed))
    return merged
