from __future__ import annotations

import json
import os
import re

from .constants import _lazy_pattern
from .errors import NotFoundError, UsageError
from .git import GitError, GitRepo, UnreadableFile, read_repo_file
from .helpers import is_utf8
from .manifests import repo_declarations
from .provenance import _parse_file_spec, _repo_provenance, _stamp_file
from .records import _repos
from .symbols import (
    _RECEIVER_RE,
    _contains_word,
    _mask_source,
    _module_forms,
    _plain,
    code_names,
    imports_of,
    language_of,
    locate_symbol,
    symbol_parts,
)

# ----------------------------------------------------------------------------------------------
# Dependencies: the symbols of related repositories that a cited symbol refers to
# ----------------------------------------------------------------------------------------------
# Read at capture and confirm, never at verify: for each cited symbol, the names its text calls
# or uses (the symbols part's code_names, the reading recall by code reference uses too) are tied
# to definitions through the cited file's imports, in the repositories that a declared relation
# connects to the cited one, and nowhere else:
#
# - Python: `from m import f [as g]`, `import m [as n]` then `n.f`, a package's __init__ followed
#   to where it imports the name from, a class called (its __init__), `C.m` and a receiver named
#   after the class (`session.charge` for Session.charge).
# - JavaScript and TypeScript: named, default and namespace imports and require(), by package name
#   (package.json, or the repository's registered name) or by relative path, re-exports followed
#   (`export { f } from`, `export *`), a class constructed (its constructor).
# - Go: an import path under the related repository's module (go.mod), `pkg.F`.
# - Other languages: a file of the related repository whose module form ("sdk/client") the cited
#   file names, and a name it calls that exactly one such file defines.
#
# Where the reading is unsure it says so and records nothing: a name imported from two places, a
# call through a module-level alias, a name several imported files define. A class named without
# being called (a type annotation, an isinstance test, a base class) is not followed: its text is
# every one of its methods. Nothing is run: no interpreter, no language server.

DEPENDENCY_MAX_FILES = 400  # files of related repositories read in one capture, at most
DEPENDENCY_MAX_BYTES = 1024 * 1024  # a larger file (generated code, a bundle) is not read
DEPENDENCY_MAX_DEPTH = 6  # imports and re-exports followed from a binding to a definition
DEPENDENCY_MAX_PER_SYMBOL = 40  # dependencies recorded for one cited symbol, at most
_JS_EXTENSIONS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
_JS_DEFAULT = _lazy_pattern(
    r"\bexport\s+default\s+(?:async\s+)?(?:function\*?\s*|class\s+)?([A-Za-z_$][\w$]*)"
)
_DEFINITION_KIND = _lazy_pattern(
    r"^[ \t]*(?:@.*\n[ \t]*)*(?:export\s+)?(?:default\s+)?(?:public\s+|private\s+|abstract\s+|final\s+|pub(?:\([^)]*\))?\s+)*"
    r"(?:async\s+)?(class|def|function|func|fn|interface|type|enum|struct|trait)\b",
    re.M,
)


class Dependency:
    """A symbol of a related repository that an item depends on: ``how`` is "calls", "uses" (a
    function named, not called) or "explicit" (--depends-on); ``source`` the cited path#symbol
    whose text refers to it (None for an explicit one)."""

    __slots__ = ("repo", "path", "symbol", "how", "source")

    def __init__(self, repo, path, symbol, how, source):
        self.repo, self.path, self.symbol, self.how, self.source = repo, path, symbol, how, source

    def key(self):
        return (self.repo.id, self.path, self.symbol)


class _Target:
    """What a name stands for in a related repository: a module (a file, or a Go package's
    files), a class or another definition (a function, a method)."""

    __slots__ = ("view", "path", "symbol", "kind", "files")

    def __init__(self, view, path, symbol, kind, files=None):
        self.view, self.path, self.symbol, self.kind, self.files = view, path, symbol, kind, files

    def key(self):
        return (self.view.repo.id, self.path, self.symbol)

    def label(self):
        return "%s %s%s" % (self.view.repo.name, self.path, "#" + self.symbol if self.symbol else "")


class _Unsure(Exception):
    """The reading cannot tie a name to one definition; the message says why."""


class _RepoView:
    """A related repository as the reading sees it: its tracked files (one ``git ls-files``),
    what its manifests publish, and its files read so far (within the reader's budget)."""

    def __init__(self, repo, reader):
        self.repo = repo
        self.reader = reader
        self._paths = None
        self._python = None
        self._packages = None
        self.sources = {}

    def paths(self):
        if self._paths is None:
            self._paths = set()
            try:
                _, out = GitRepo(self.repo.path).git("ls-files", "-z")
                # A name with control characters or bytes that are not UTF-8 is never read: what
                # is read ends up in reasons and warnings.
                names = (p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p)
                self._paths = {p for p in names if p.isprintable() and is_utf8(p)}
            except GitError:
                pass
        return self._paths

    def source(self, path):
        """The file's text, or None (not tracked, unreadable, or past the reader's budget)."""
        if path not in self.sources:
            text = None
            if path in self.paths() and self.reader.files_read >= DEPENDENCY_MAX_FILES:
                self.reader.exhausted = True
            elif path in self.paths():
                self.reader.files_read += 1
                try:
                    data = read_repo_file(self.repo.path, path, limit=DEPENDENCY_MAX_BYTES)
                except UnreadableFile:  # too large, not a regular file, a symlink out: not read
                    data = None
                if data is not None and b"\0" not in data[:8192]:
                    text = data.decode("utf-8", "surrogateescape")
            self.sources[path] = text
        return self.sources[path]

    def python_modules(self, dotted):
        """The files that are module ``dotted`` (a.b -> a/b.py, a/b/__init__.py): those under the
        shallowest directory that holds one, several only when that is ambiguous."""
        if self._python is None:
            self._python = {}
            for path in self.paths():
                if not path.endswith((".py", ".pyi")) or path.endswith(".pyi") and path[:-1] in self.paths():
                    continue
                parts = path.rsplit(".", 1)[0].split("/")
                if parts[-1] == "__init__":
                    parts = parts[:-1]
                for k in range(len(parts)):
                    self._python.setdefault(".".join(parts[k:]), []).append((k, path))
        found = self._python.get(dotted, [])
        if not found:
            return []
        shallowest = min(k for k, _ in found)
        return sorted(p for k, p in found if k == shallowest)

    def npm_packages(self):
        """{package name: its directory ("" for the root)}: what package.json files publish, and
        the repository's registered name for its root."""
        if self._packages is None:
            self._packages = {self.repo.name: ""}
            for d in repo_declarations(self.repo.path):
                if d.role == "publishes" and d.eco in ("npm", "go"):
                    where = d.where.rsplit(" ", 1)[0]
                    self._packages[d.name] = os.path.dirname(where) if d.eco == "npm" else ""
        return self._packages

    def go_package(self, spec):
        """The .go files (tests aside) of import path ``spec`` here (under its go.mod module)."""
        for name, directory in self.npm_packages().items():
            if directory != "" or not (spec == name or spec.startswith(name + "/")):
                continue
            sub = spec[len(name) :].strip("/")
            files = sorted(
                p for p in self.paths()
                if p.endswith(".go") and not p.endswith("_test.go") and os.path.dirname(p) == sub
            )  # fmt: skip
            if files:
                return files
        return []

    def python_path(self, dotted):
        """The file of module ``dotted`` from the repository's root (a relative import's)."""
        for suffix in ("/__init__.py", ".py", "/__init__.pyi", ".pyi"):
            path = dotted.replace(".", "/") + suffix
            if path in self.paths():
                return path
        return None

    def package_json(self, directory):
        text = self.source((directory + "/" if directory else "") + "package.json")
        try:
            data = json.loads(text) if text else None
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}


class DependencyReader:
    """Reads the dependencies of the symbols one capture (or confirm) cites. Returns, per cited
    symbol, [Dependency]; what it could not tell goes to ``notes``, one sentence each."""

    def __init__(self, store):
        self.store = store
        self.repos = {r.id: r for r in _repos(store)}
        self.views = {}
        self.files_read = 0
        self.exhausted = False  # DEPENDENCY_MAX_FILES reached: said once, in read_dependencies
        self._related = {}

    def related(self, repo):
        """The repositories a declared relation connects to ``repo`` (either way), on this machine."""
        if repo.id not in self._related:
            ids = set()
            for row in self.store.all(
                "SELECT from_repo, to_repo FROM relations WHERE from_repo = ? OR to_repo = ?",
                (repo.id, repo.id),
            ):
                ids.update((row["from_repo"], row["to_repo"]))
            ids.discard(repo.id)
            views = []
            for rid in sorted(ids, key=lambda i: self.repos[i].name if i in self.repos else ""):
                other = self.repos.get(rid)
                if other is not None and os.path.isdir(other.path):
                    views.append(self.views.setdefault(rid, _RepoView(other, self)))
            self._related[repo.id] = views
        return self._related[repo.id]

    def read(self, repo, rel, data, symbol, notes):
        """[Dependency] of ``rel#symbol`` in ``repo`` (its file's bytes ``data``)."""
        related = self.related(repo)
        if not related or not symbol:
            return []
        source = data.decode("utf-8", "surrogateescape")
        text = locate_symbol(source, rel, symbol)
        if text is None:
            return []
        language = language_of(rel)
        code = _mask_source(text, language) if language else text
        reading = _Reading(self, repo, rel, symbol, source, code, related, notes)
        imports = imports_of(source, rel)
        if imports is None:
            reading.by_module_forms()
        else:
            reading.by_imports(imports)
            reading.inherited(imports, symbol)
        return list(reading.found.values())[:DEPENDENCY_MAX_PER_SYMBOL]


def explicit_dependencies(specs, repos, cwd, number):
    """An item's depends_on (repo:path#symbol, in any form --file takes) -> [(repo, rel, real,
    symbol)]; a bad one is a UsageError naming it."""
    out = []
    for spec in specs or ():
        if not isinstance(spec, str):
            raise UsageError("item %d: depends_on must be strings like repo:path#symbol" % number)
        try:
            out.append(_parse_file_spec(spec, repos, None, cwd))
        except UsageError as e:
            raise UsageError("item %d depends on %s: %s" % (number, spec[:200], e)) from None
        except NotFoundError as e:  # an unknown repository: the message starts with the spec
            raise UsageError("item %d depends on %s" % (number, e)) from None
    return out


def _one_module(spec, hits):
    """The module ``spec`` names, from where it was found ([(view, path or a Go package's
    files)]): None when nowhere, unsure when in several places."""
    if not hits:
        return None
    if len(hits) > 1:
        raise _Unsure(
            "whose module %s is in several places (%s)"
            % (
                spec,
                ", ".join("%s %s" % (v.repo.name, p if isinstance(p, str) else p[0]) for v, p in hits),
            )
        )
    view, path = hits[0]
    if isinstance(path, list):  # a Go package: a directory's files
        return _Target(view, os.path.dirname(path[0]), None, "module", files=path)
    return _Target(view, path, None, "module")


def _js_default_name(source, path):
    """The name a JavaScript or TypeScript module's ``export default NAME`` gives, if any."""
    language = language_of(path)
    if language not in ("javascript", "typescript"):
        return None
    m = _JS_DEFAULT.search(_mask_source(source, language))
    return m.group(1) if m and m.group(1) != "default" else None


class _Reading:
    """The reading of one cited symbol."""

    def __init__(self, reader, repo, rel, symbol, source, code, related, notes):
        self.reader, self.repo, self.rel, self.source = reader, repo, rel, source
        self.language = language_of(rel)
        self.label = "%s#%s" % (rel, symbol)
        self.code = code
        self.names = code_names(code)
        self.related = related
        self.notes = notes
        self.found = {}

    # -- what was found --------------------------------------------------------------------------

    def add(self, target, called):
        if target.symbol is None or target.kind == "module":
            return
        key = target.key()
        how = "calls" if called else "uses"
        known = self.found.get(key)
        if known is None or (how == "calls" and known.how == "uses"):
            self.found[key] = Dependency(target.view.repo, target.path, target.symbol, how, self.label)

    def unsure(self, name, why):
        self.notes.append(
            "%s %s `%s`, %s: not followed (if the item depends on it, name it with --depends-on)"
            % (self.label, "calls" if name in self.names.called else "uses", name, why)
        )

    # -- through the cited file's imports ------------------------------------------------------------

    def by_imports(self, imports):
        locals_ = {b.local for b in imports.bindings if not b.export}
        for local in sorted(self.names.named & locals_):
            self._by_binding(imports, local)
        for local, dotted in sorted(imports.aliases.items()):
            if local in locals_ or local not in self.names.named:
                continue
            root, _, rest = dotted.partition(".")
            try:
                bound = [self.binding(b, self.repo, self.rel, 0, top=True) for b in imports.bound(root)]
                target = bound[0] if len(bound) == 1 else None
                for attr in rest.split(".") if rest and target is not None else ():
                    target = self.member(target, attr, 0) if target is not None else None
            except _Unsure:
                target = None
            if target is not None and target.kind != "module":
                self.unsure(local, "an alias of %s assigned at module level" % target.label())

    def _by_binding(self, imports, local):
        """What the cited text reaches through the import-bound name ``local``: followed when it is
        bound to one definition, said to be unsure when to several."""
        targets = []
        try:
            for b in imports.bound(local):
                targets.append(self.binding(b, self.repo, self.rel, 0, top=True))
        except _Unsure as e:
            self.unsure(local, str(e))
            return
        resolved = [t for t in targets if t is not None]
        if not resolved:
            return
        if len({t.key() for t in resolved}) > 1 or len(resolved) < len(targets):
            places = sorted({t.label() for t in resolved})
            self.unsure(local, "which is imported from %s places (%s)" % (
                _count_word(len(targets)), ", ".join(places + ["elsewhere"] * (len(resolved) < len(targets)))))  # fmt: skip
            return
        self.use(resolved[0], local)

    def use(self, target, local):
        """Record what the cited text reaches through ``local`` (bound to ``target``)."""
        names = self.names
        if target.kind == "module":
            for chain, called in _chains(self.code, local):
                t = target
                try:
                    for attr in chain:
                        if t.kind == "module":
                            t = self.member(t, attr, 0)
                        elif t.kind == "class":
                            t = self.method(t, attr)
                        else:
                            t = None  # an attribute of a function: not followed
                        if t is None:
                            break
                except _Unsure as e:
                    self.unsure(".".join([local] + chain), str(e))
                    continue
                if t is not None:
                    self.reached(t, called)
            return
        if target.kind == "class":
            if local in names.called:
                self.add(self.constructor(target), True)
            plain = _plain(local)
            for method, receivers in sorted(names.receivers.items()):
                if local in receivers or plain in receivers or _plain(target.symbol) in receivers:
                    found = self.method(target, method)
                    if found is not None:
                        self.add(found, method in names.called)
            return
        self.add(target, local in names.called)

    def reached(self, target, called):
        if target.kind == "class":
            if called:
                self.add(self.constructor(target), True)
            return
        self.add(target, called)

    # -- a method's calls to what its class inherits (Python) ---------------------------------------

    def inherited(self, imports, symbol):
        """``super().m(…)`` in a method, and ``self.m(…)`` (``cls.m``) where its class does not
        define ``m``: the definition the class inherits from a related repository's class, by
        its bases in order (a base defined in the cited file is followed to its own bases)."""
        self.inherited_constructors(imports)
        parts = symbol_parts(symbol)
        owner = ".".join(parts[:-1])
        if len(parts) < 2 or owner not in imports.bases:
            return
        wanted = {m.group(1) for m in _SUPER_CALL.finditer(self.code)}
        for m in _SELF_CALL.finditer(self.code):
            if locate_symbol(self.source, self.rel, "%s.%s" % (owner, m.group(1))) is None:
                wanted.add(m.group(1))
        for name in sorted(wanted):
            found = self.local_bases(imports, owner, name, 0)
            if found is not None:
                self.add(found, True)

    def inherited_constructors(self, imports):
        """A class of the cited file called in the text, that takes its constructor from a related
        repository's class (an exception class deriving from the library's)."""
        for name in sorted(self.names.called & set(imports.bases)):
            if locate_symbol(self.source, self.rel, name + ".__init__") is None:
                found = self.local_bases(imports, name, "__init__", 0)
                if found is not None:
                    self.add(found, True)

    def local_bases(self, imports, owner, name, depth):
        for base in imports.bases.get(owner, ()) if depth <= DEPENDENCY_MAX_DEPTH else ():
            if base in imports.bases:  # a class of the cited file: its own definition wins
                if locate_symbol(self.source, self.rel, "%s.%s" % (base, name)) is not None:
                    return None
                found = self.local_bases(imports, base, name, depth + 1)
            else:
                found = self.in_class(self.dotted(imports, base, self.repo, self.rel, True), name, depth)
            if found is not None:
                return found
        return None

    def dotted(self, imports, dotted, repo, rel, top):
        """The _Target a dotted name (a base class) stands for through a file's imports, or None."""
        root, _, rest = dotted.partition(".")
        bound = imports.bound(root)
        if len(bound) != 1:
            return None
        try:
            target = self.binding(bound[0], repo, rel, 0, top=top)
            for attr in rest.split(".") if rest else ():
                target = (
                    self.member(target, attr, 0) if target is not None and target.kind == "module" else None
                )
        except _Unsure:
            return None
        return target

    def in_class(self, cls, name, depth):
        """``name`` as a related repository's class ``cls`` has it: its own, else its bases'."""
        if cls is None or cls.kind != "class" or depth > DEPENDENCY_MAX_DEPTH:
            return None
        found = self.method(cls, name)
        if found is not None:
            return found
        source = cls.view.source(cls.path)
        imports = imports_of(source, cls.path) if source is not None else None
        for base in imports.bases.get(cls.symbol, ()) if imports is not None else ():
            if base in imports.bases:
                inner = _Target(cls.view, cls.path, base, "class")
            else:
                inner = self.dotted(imports, base, cls.view, cls.path, False)
            found = self.in_class(inner, name, depth + 1)
            if found is not None:
                return found
        return None

    # -- names to definitions -------------------------------------------------------------------------

    def binding(self, b, repo, rel, depth, top=False):
        """The _Target an import binding stands for, or None when it is not a related repository's."""
        if depth > DEPENDENCY_MAX_DEPTH:
            return None
        module = self.module(b.module, repo, rel, top)
        if module is None:
            return None
        if b.name is None:
            return module
        if b.name == "*":
            return None
        return self.member(module, b.name, depth + 1)

    def module(self, spec, repo, rel, top):
        """The module ``spec`` (as the file at ``rel`` in ``repo`` wrote it) names, as a _Target of a
        related repository; from inside a related repository (``top`` False), of that one."""
        views = self.related if top else [repo]
        language = language_of(rel)
        hits = []
        if language == "python":
            if spec.startswith("."):
                if top:
                    return None  # the cited repository's own module
                dots = len(spec) - len(spec.lstrip("."))
                base = rel.split("/")[:-1]
                base = base[: len(base) - (dots - 1)] if dots > 1 else base
                spec = ".".join(base + [p for p in spec.lstrip(".").split(".") if p])
                found = repo.python_path(spec)
                return _Target(repo, found, None, "module") if found else None
            for view in views:
                for path in view.python_modules(spec):
                    hits.append((view, path))
        elif language in ("javascript", "typescript"):
            for view, path in self.js_module(spec, repo, rel, views, top):
                hits.append((view, path))
        elif language == "go":
            for view in views:
                files = view.go_package(spec)
                if files:
                    hits.append((view, files))
        return _one_module(spec, hits)

    def js_module(self, spec, repo, rel, views, top):
        if spec.startswith("."):
            joined = os.path.normpath(os.path.join(os.path.dirname(rel), spec)).replace(os.sep, "/")
            if top:  # a relative path from the cited repository into a related one's checkout
                full = os.path.realpath(os.path.join(repo.path, *joined.split("/")))
                for view in views:
                    root = os.path.realpath(view.repo.path)
                    if full.startswith(root + os.sep):
                        found = _js_file(view, os.path.relpath(full, root).replace(os.sep, "/"))
                        return [(view, found)] if found else []
                return []
            found = _js_file(repo, joined)
            return [(repo, found)] if found else []
        parts = spec.split("/")
        name, sub = ("/".join(parts[:2]), parts[2:]) if spec.startswith("@") else (parts[0], parts[1:])
        out = []
        for view in views:
            directory = view.npm_packages().get(name)
            if directory is None:
                continue
            prefix = directory + "/" if directory else ""
            found = _js_file(view, prefix + "/".join(sub)) if sub else _js_entry(view, directory)
            if found:
                out.append((view, found))
        return out

    def member(self, module, name, depth):
        """What ``name`` is in ``module``: a definition there, what the module imports or re-exports
        under that name, or a submodule; None when the reading cannot find it."""
        if module is None or depth > DEPENDENCY_MAX_DEPTH:
            return None
        view = module.view
        if module.files is not None:  # a Go package
            return self._package_member(module, name)
        if _located(view, module.path, name):
            return self.defined(view, module.path, name)
        source = view.source(module.path)
        if source is None:
            return None
        imports = imports_of(source, module.path)
        if imports is not None:
            found = self._bound_member(module, name, depth, imports)
            if found is not None:
                return found
            default = _js_default_name(source, module.path) if name == "default" else None
            if default is not None:
                return self.member(module, default, depth + 1)
        if module.path.endswith(("__init__.py", "__init__.pyi")):
            found = view.python_path(os.path.dirname(module.path).replace("/", ".") + "." + name)
            if found:
                return _Target(view, found, None, "module")
        return self._star_member(module, name, depth, imports)

    def _package_member(self, module, name):
        """``name`` in a Go package: the one file of it that defines it."""
        view = module.view
        hits = [p for p in module.files if _located(view, p, name)]
        if len(hits) > 1:
            raise _Unsure("which %s defines in %s files" % (view.repo.name, len(hits)))
        return self.defined(view, hits[0], name) if hits else None

    def _bound_member(self, module, name, depth, imports):
        """``name`` as the module binds it by an import (Python) or exports it (other languages
        first, then their plain imports)."""
        language = language_of(module.path)
        own = [b for b in imports.bindings if b.local == name and (b.export or language == "python")]
        if language not in ("python",):
            own += [b for b in imports.bindings if b.local == name and not b.export]
        for b in own:
            found = self.binding(b, module.view, module.path, depth + 1)
            if found is not None:
                return found
        return None

    def _star_member(self, module, name, depth, imports):
        """``name`` through the module's ``from m import *`` or ``export * from``."""
        for b in imports.bindings if imports is not None else ():
            if b.name == "*" and (b.export or language_of(module.path) == "python"):
                inner = self.module(b.module, module.view, module.path, False)
                found = self.member(inner, name, depth + 1) if inner is not None else None
                if found is not None:
                    return found
        return None

    def defined(self, view, path, name):
        text = locate_symbol(view.source(path) or "", path, name)
        kind = _kind_of(text, name)
        return _Target(view, path, name, kind)

    def method(self, cls, name):
        """``Class.name`` where the class defines it (an inherited method is not followed)."""
        if cls is None or cls.kind != "class":
            return None
        qualified = "%s.%s" % (cls.symbol, name)
        if not _located(cls.view, cls.path, qualified):
            return None
        return _Target(cls.view, cls.path, qualified, "method")

    def constructor(self, cls):
        """What calling a class runs: its own constructor, else its body (an exception class with
        a code and a message, a data class)."""
        for name in (
            "__init__",
            "constructor",
            cls.symbol.rsplit(".", 1)[-1],
        ):  # Java, C#, C++: named as the class
            found = self.method(cls, name)
            if found is not None:
                return found
        return _Target(cls.view, cls.path, cls.symbol, "function")

    # -- without import bindings: module forms -------------------------------------------------------

    def by_module_forms(self):
        """Files of related repositories whose module form the cited file names, and the names
        the cited text calls that exactly one of them defines."""
        imported = []
        for view in self.related:
            for path in sorted(view.paths()):
                if language_of(path) != self.language:
                    continue
                if any(_contains_word(self.source, form) for form in _module_forms(path)):
                    imported.append((view, path))
        if not imported:
            return
        qualified = {}
        for owner, method in _RECEIVER_RE.findall(self.code):
            qualified.setdefault(owner, set()).add(method)
        reached = set()  # methods reached as Owner.method: not looked up again by their name alone
        for owner in sorted(set(qualified) & self.names.named):
            for view, path in imported:
                if _located(view, path, owner):
                    cls = self.defined(view, path, owner)
                    for method in sorted(qualified[owner]):
                        found = self.method(cls, method)
                        if found is not None:
                            reached.add(method)
                            self.add(found, method in self.names.called)
        for name in sorted(self.names.called - reached):
            if locate_symbol(self.source, self.rel, name) is not None:
                continue  # the cited file's own definition
            hits = [(v, p) for v, p in imported if _located(v, p, name)]
            if len(hits) > 1:
                self.unsure(
                    name, "which %s define" % " and ".join("%s %s" % (v.repo.name, p) for v, p in hits)
                )
            elif hits:
                self.reached(self.defined(hits[0][0], hits[0][1], name), True)


_SUPER_CALL = _lazy_pattern(r"(?<![\w$.])super\s*\([^()]*\)\s*\.\s*([A-Za-z_]\w*)\s*\(")
_SELF_CALL = _lazy_pattern(r"(?<![\w$.])(?:self|cls)\s*\.\s*([A-Za-z_]\w*)\s*\(")


def _count_word(n):
    return {2: "two", 3: "three"}.get(n, str(n))


def _chains(code, local):
    """[(attribute names after ``local.``, whether the chain is called)] in ``code``."""
    pattern = re.compile(r"(?<![\w$.])%s((?:\s*\.\s*[A-Za-z_$][\w$]*)+)(\s*\()?" % re.escape(local))
    out = []
    for m in pattern.finditer(code):
        chain = [p.strip() for p in m.group(1).split(".") if p.strip()]
        out.append((chain, bool(m.group(2))))
    return out


def _located(view, path, name):
    source = view.source(path)
    return source is not None and locate_symbol(source, path, name) is not None


def _kind_of(text, name):
    """ "class" when ``text`` (a located definition) defines a class, else "function"."""
    if text is None:
        return "function"
    m = _DEFINITION_KIND.search(text)
    return "class" if m is not None and m.group(1) == "class" else "function"


def _js_file(view, path):
    """The tracked file a JavaScript/TypeScript import of ``path`` loads (extension swapped for
    the TypeScript source, or the directory's index), or None."""
    paths = view.paths()
    path = path.strip("/")
    base = path
    for ext in (".js", ".jsx", ".mjs", ".cjs"):
        if path.endswith(ext):
            base = path[: -len(ext)]
            break
    candidates = (
        [path] + [base + ext for ext in _JS_EXTENSIONS] + [base + "/index" + ext for ext in _JS_EXTENSIONS]
    )
    for candidate in candidates:
        if candidate in paths and not candidate.endswith(".d.ts"):
            return candidate
    return None


def _js_entry(view, directory):
    """The source file a package's bare import loads: package.json's source, types, module or
    main (a built file mapped back to src/), else src/index or index."""
    manifest = view.package_json(directory)
    fields = [manifest.get(k) for k in ("source", "types", "typings", "module", "main")]
    exports = manifest.get("exports")
    if isinstance(exports, dict):
        dot = exports.get(".", exports)
        if isinstance(dot, str):
            fields.append(dot)
        elif isinstance(dot, dict):
            fields += [v for v in dot.values() if isinstance(v, str)]
    elif isinstance(exports, str):
        fields.append(exports)
    prefix = directory + "/" if directory else ""
    for value in fields:
        if not isinstance(value, str) or ".." in value.split("/"):
            continue
        value = value[2:] if value.startswith("./") else value
        value = re.sub(r"\.d\.ts$", ".ts", value)
        for candidate in (value, re.sub(r"^(?:dist|lib|build|out)/", "src/", value)):
            found = _js_file(view, prefix + candidate)
            if found:
                return found
    return _js_file(view, prefix + "src/index") or _js_file(view, prefix + "index")


# ----------------------------------------------------------------------------------------------
# Stamping: a dependency is stamped as a cited file is (provenance._stamp_file)
# ----------------------------------------------------------------------------------------------


def read_dependencies(reader, items, warnings):
    """For each item {"cited": [(repo, rel, real, symbol)], "explicit": [...]} of one capture or
    confirm, set item["found"]: [Dependency], the explicit ones as given, then those read from
    the cited symbols' text. Returns {repo id: (repo, {paths})} of the files they are in."""
    wanted = {}
    for item in items:
        found = {}
        for repo, rel, _, symbol in item.get("explicit") or ():
            found.setdefault((repo.id, rel, symbol), Dependency(repo, rel, symbol, "explicit", None))
        for repo, rel, _, symbol in item["cited"]:
            if not symbol:
                continue
            try:
                data = read_repo_file(repo.path, rel)
            except UnreadableFile:
                data = None
            if data is None:
                continue
            try:
                deps = reader.read(repo, rel, data, symbol, warnings)
            except (RecursionError, MemoryError, ValueError) as e:
                warnings.append(
                    "%s#%s: its dependencies could not be read (%s)" % (rel, symbol, type(e).__name__)
                )
                continue
            for dep in deps:
                found.setdefault(dep.key(), dep)
        item["found"] = list(found.values())
        for dep in item["found"]:
            wanted.setdefault(dep.repo.id, (dep.repo, set()))[1].add(dep.path)
    if reader.exhausted:
        warnings.append(
            "dependencies: reading stopped after %d files of related repositories; some were not read "
            "(capture fewer items at once)" % DEPENDENCY_MAX_FILES
        )
    return wanted


def stamp_dependencies(items, gits, head_blob, warnings):
    """item["dependencies"] for each item read_dependencies read: each dependency stamped as a
    cited file is (dicts shaped as anchors, with "how" and "source"). A related repository git
    cannot read here (not in ``gits``) loses its inferred dependencies, with a warning; explicit
    ones were refused earlier."""
    for item in items:
        stamped = []
        for dep in item.pop("found"):
            g = gits.get(dep.repo.id)
            if g is None:
                warnings.append("%s: dependency %s:%s#%s not recorded (git cannot read %s here)"
                                % (dep.source, dep.repo.name, dep.path, dep.symbol, dep.repo.name))  # fmt: skip
                continue
            real = os.path.join(dep.repo.path, *dep.path.split("/"))
            row = _stamp_file(dep.repo, dep.path, real, dep.symbol, g, head_blob, warnings, what="dependency")
            row["how"], row["source"] = dep.how, dep.source
            stamped.append(row)
        item["dependencies"] = stamped


def dependency_gits(wanted, gits):
    """Open git in each repository a dependency read from code is in (one process each, as
    capture does for the cited ones); one git cannot read here is left out (stamp_dependencies
    says so)."""
    for rid, (repo, _) in wanted.items():
        if rid not in gits:
            try:
                gits[rid] = _repo_provenance(repo)
            except UsageError:
                pass


def _insert_dependencies(store, rid, dependencies):
    if not dependencies:
        return
    store.db.executemany(
        "INSERT INTO dependencies(evidence_rid, how, source, repo_id, repo_name, root_commit, path, symbol, "
        "commit_sha, branch, blob, dirty, symbol_hash, symbol_lang, checkout, symbol_lines) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (rid, d["how"], d["source"], d["repo"].id, d["repo"].name, d["repo"].root_commit, d["path"],
             d["symbol"], d["commit"], d["branch"], d["blob"], d["dirty"], d["symbol_hash"], d["symbol_lang"],
             d.get("checkout"), d.get("symbol_lines"))
            for d in dependencies
        ],
    )  # fmt: skip
