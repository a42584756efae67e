from __future__ import annotations

import json
import os
import re
import sys

from .constants import MAX_CLAIM_CHARS, _lazy_pattern
from .git import UnreadableFile, read_repo_file
from .helpers import utc_now
from .records import _repos, resolve_repo
from .redaction import TRUNCATED, stored_cut
from .repos import relate

# ----------------------------------------------------------------------------------------------
# Manifests: relations suggested from what repositories declare they publish and require
# ----------------------------------------------------------------------------------------------
# Each registered repository's manifests are read from disk (never through git, never run):
# package.json, pyproject.toml, requirements*.txt, setup.cfg, go.mod, Cargo.toml, pom.xml and
# build.gradle(.kts), each at most MANIFEST_MAX_BYTES, never through a symlink. What one repository
# requires (a package name, module path or crate) is matched against what another publishes; each
# match is a suggested ``depends_on`` relation carrying the manifest line that says so. Nothing is
# declared until someone says yes; a declined suggestion is remembered and not offered again.

MANIFEST_MAX_BYTES = 1 << 20
MANIFEST_MAX_PACKAGES = 200  # monorepo workspace packages read per repository


class _TomlError(ValueError):
    pass


class _TomlReader:
    """The TOML that manifests use, for Pythons without ``tomllib`` (3.8-3.10): tables and arrays
    of tables, dotted and quoted keys, basic and literal strings (also multi-line) with escapes,
    integers, floats, booleans, arrays (nested, multi-line, trailing commas), inline tables.
    Dates and times come back as their text. Anything else is a _TomlError, never a guess."""

    _BARE = _lazy_pattern(r"[A-Za-z0-9_-]+")
    _NUMBER = _lazy_pattern(
        r"[+-]?(?:0x[0-9A-Fa-f_]+|0o[0-7_]+|0b[01_]+|inf|nan|[0-9_]+(?:\.[0-9_]+)?(?:[eE][+-]?[0-9_]+)?)"
    )
    _DATE = _lazy_pattern(
        r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?)?|\d{2}:\d{2}:\d{2}(?:\.\d+)?"
    )
    _ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}

    def __init__(self, text):
        self.s = text
        self.i = 0

    def error(self, what):
        line = self.s.count("\n", 0, self.i) + 1
        raise _TomlError("line %d: %s" % (line, what))

    def skip(self, newlines=False):
        while self.i < len(self.s):
            c = self.s[self.i]
            if c in " \t" or (newlines and c in "\r\n"):
                self.i += 1
            elif c == "#":
                while self.i < len(self.s) and self.s[self.i] != "\n":
                    self.i += 1
            else:
                break

    def parse(self):
        root = {}
        table = root
        while True:
            self.skip(newlines=True)
            if self.i >= len(self.s):
                return root
            if self.s.startswith("[[", self.i):
                self.i += 2
                keys = self.key()
                if not self.s.startswith("]]", self.i):
                    self.error("expected ]]")
                self.i += 2
                parent = self.descend(root, keys[:-1])
                items = parent.setdefault(keys[-1], [])
                if not isinstance(items, list):
                    self.error("%s is not an array of tables" % ".".join(keys))
                table = {}
                items.append(table)
            elif self.s[self.i] == "[":
                self.i += 1
                keys = self.key()
                if not self.s.startswith("]", self.i):
                    self.error("expected ]")
                self.i += 1
                table = self.descend(root, keys)
            else:
                keys = self.key()
                if not self.s.startswith("=", self.i):
                    self.error("expected =")
                self.i += 1
                self.skip()
                value = self.value()
                target = self.descend(table, keys[:-1])
                if keys[-1] in target:
                    self.error("%s is defined twice" % ".".join(keys))
                target[keys[-1]] = value
            self.skip()
            if self.i < len(self.s) and self.s[self.i] not in "\r\n":
                self.error("unexpected text after a value")

    def descend(self, table, keys):
        for k in keys:
            nxt = table.setdefault(k, {})
            if isinstance(nxt, list) and nxt and isinstance(nxt[-1], dict):
                nxt = nxt[-1]
            if not isinstance(nxt, dict):
                self.error("%s is not a table" % k)
            table = nxt
        return table

    def key(self):
        keys = []
        while True:
            self.skip()
            c = self.s[self.i : self.i + 1]
            if c == '"':
                keys.append(self.basic_string())
            elif c == "'":
                keys.append(self.literal_string())
            else:
                m = self._BARE.match(self.s, self.i)
                if not m:
                    self.error("expected a key")
                keys.append(m.group())
                self.i = m.end()
            self.skip()
            if self.s.startswith(".", self.i):
                self.i += 1
                continue
            return keys

    def value(self):
        s, i = self.s, self.i
        if s.startswith('"""', i):
            return self.multiline('"""')
        if s.startswith("'''", i):
            return self.multiline("'''")
        c = s[i : i + 1]
        if c == '"':
            return self.basic_string()
        if c == "'":
            return self.literal_string()
        if c == "[":
            return self.array()
        if c == "{":
            return self.inline_table()
        for word, value in (("true", True), ("false", False)):
            if s.startswith(word, i):
                self.i += len(word)
                return value
        m = self._DATE.match(s, i)
        if m:
            self.i = m.end()
            return m.group()
        m = self._NUMBER.match(s, i)
        if m and m.group():
            self.i = m.end()
            text = m.group().replace("_", "")
            try:
                if text.lstrip("+-")[:2] in ("0x", "0o", "0b"):
                    return int(text, 0)
                if any(ch in text for ch in ".eEn"):
                    return float(text)
                return int(text)
            except ValueError:
                self.error("bad number %s" % m.group())
        self.error("expected a value")

    def basic_string(self):
        self.i += 1
        out = []
        while True:
            if self.i >= len(self.s) or self.s[self.i] == "\n":
                self.error("unterminated string")
            c = self.s[self.i]
            if c == '"':
                self.i += 1
                return "".join(out)
            if c == "\\":
                out.append(self.escape())
            else:
                out.append(c)
                self.i += 1

    def escape(self):
        c = self.s[self.i + 1 : self.i + 2]
        if c in self._ESCAPES:
            self.i += 2
            return self._ESCAPES[c]
        if c in ("u", "U"):
            n = 4 if c == "u" else 8
            digits = self.s[self.i + 2 : self.i + 2 + n]
            try:
                value = chr(int(digits, 16))
            except ValueError:
                self.error("bad unicode escape")
            self.i += 2 + n
            return value
        self.error("bad escape \\%s" % c)

    def literal_string(self):
        end = self.s.find("'", self.i + 1)
        if end < 0 or "\n" in self.s[self.i : end]:
            self.error("unterminated string")
        value = self.s[self.i + 1 : end]
        self.i = end + 1
        return value

    def multiline(self, quote):
        self.i += 3
        if self.s.startswith("\r\n", self.i):
            self.i += 2
        elif self.s.startswith("\n", self.i):
            self.i += 1
        out = []
        while True:
            if self.i >= len(self.s):
                self.error("unterminated string")
            if self.s.startswith(quote, self.i):
                extra = 0
                while self.s.startswith(quote[0], self.i + 3 + extra) and extra < 2:
                    extra += 1
                out.append(quote[0] * extra)
                self.i += 3 + extra
                return "".join(out)
            c = self.s[self.i]
            if c == "\\" and quote == '"""':
                rest = self.s[self.i + 1 :]
                stripped = rest.lstrip(" \t")
                if stripped.startswith("\n") or stripped.startswith("\r\n"):
                    self.i = len(self.s) - len(rest.lstrip(" \t\r\n"))  # a line-ending backslash
                    continue
                out.append(self.escape())
                continue
            out.append(c)
            self.i += 1

    def array(self):
        self.i += 1
        items = []
        while True:
            self.skip(newlines=True)
            if self.s.startswith("]", self.i):
                self.i += 1
                return items
            items.append(self.value())
            self.skip(newlines=True)
            if self.s.startswith(",", self.i):
                self.i += 1
            elif not self.s.startswith("]", self.i):
                self.error("expected , or ] in an array")

    def inline_table(self):
        self.i += 1
        table = {}
        self.skip()
        if self.s.startswith("}", self.i):
            self.i += 1
            return table
        while True:
            keys = self.key()
            if not self.s.startswith("=", self.i):
                self.error("expected = in an inline table")
            self.i += 1
            self.skip()
            self.descend(table, keys[:-1])[keys[-1]] = self.value()
            self.skip()
            if self.s.startswith(",", self.i):
                self.i += 1
                continue
            if self.s.startswith("}", self.i):
                self.i += 1
                return table
            self.error("expected , or } in an inline table")


def toml_loads(text, subset=False):
    """Parse TOML: ``tomllib`` where Python has it (3.11+), else (or with ``subset``) _TomlReader.
    Raises ValueError on text either cannot read."""
    if not subset and sys.version_info >= (3, 11):
        # By name: the module exists from 3.11 only, and this line runs only there.
        return __import__("tomllib").loads(text)
    return _TomlReader(text).parse()


def _manifest_text(root, rel):
    """A manifest's text, or None: missing, a symlink (never followed, so one manifest is never
    read twice under two names), not a regular file, larger than MANIFEST_MAX_BYTES, or not
    UTF-8."""
    import stat

    try:
        if not stat.S_ISREG(os.lstat(os.path.join(root, *rel.split("/"))).st_mode):
            return None
        data = read_repo_file(root, rel, limit=MANIFEST_MAX_BYTES)
    except (OSError, UnreadableFile):
        return None
    try:
        return data.decode("utf-8-sig") if data is not None else None
    except UnicodeDecodeError:
        return None


def _pypi_name(name):
    return re.sub(r"[-_.]+", "-", name).lower()


_REQUIREMENT_NAME = _lazy_pattern(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _requirement_names(lines):
    """Package names of PEP 508 requirement lines (options, URLs, paths and comments skipped)."""
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-") or "://" in line.split(";")[0].split("@")[0]:
            continue
        m = _REQUIREMENT_NAME.match(line)
        if m:
            yield m.group(1)


class Declaration:
    """One thing a manifest says: ``role`` 'publishes' or 'requires', ``eco`` (npm, pypi, go,
    cargo, maven), the normalised ``name``, and ``where`` ("package.json name",
    "package.json devDependencies"); ``local`` is a path a dependency points to, if any."""

    __slots__ = ("role", "eco", "name", "shown", "where", "local")

    # Names and paths from a manifest are a hostile repository's text: only the characters package
    # names and relative paths use get through (no control characters, no spaces).
    SAFE = _lazy_pattern(r"^[\w@/.:+~-]{1,214}$")

    def __init__(self, role, eco, name, shown, where, local=None):
        self.role = role
        self.eco = eco
        self.name = name
        self.shown = shown
        self.where = where
        self.local = local


def _package_json(rel, text, out):
    try:
        data = json.loads(text)
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    if isinstance(data.get("name"), str) and data["name"]:
        out.append(Declaration("publishes", "npm", data["name"], data["name"], "%s name" % rel))
    for field in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies"):
        deps = data.get(field)
        if isinstance(deps, dict):
            for name, spec in deps.items():
                local = spec[len("file:") :] if isinstance(spec, str) and spec.startswith("file:") else None
                out.append(Declaration("requires", "npm", name, name, "%s %s" % (rel, field), local))
    workspaces = data.get("workspaces")
    if isinstance(workspaces, dict):
        workspaces = workspaces.get("packages")
    return [w for w in workspaces if isinstance(w, str)] if isinstance(workspaces, list) else []


def _pyproject(rel, text, out):
    try:
        data = toml_loads(text)
    except ValueError:
        return
    project = data.get("project") if isinstance(data.get("project"), dict) else {}
    if isinstance(project.get("name"), str):
        out.append(
            Declaration(
                "publishes", "pypi", _pypi_name(project["name"]), project["name"], "%s [project] name" % rel
            )
        )
    deps = project.get("dependencies")
    for name in _requirement_names(deps if isinstance(deps, list) else []):
        out.append(Declaration("requires", "pypi", _pypi_name(name), name, "%s [project] dependencies" % rel))
    optional = project.get("optional-dependencies")
    for group, deps in optional.items() if isinstance(optional, dict) else ():
        for name in _requirement_names(deps if isinstance(deps, list) else []):
            out.append(
                Declaration(
                    "requires", "pypi", _pypi_name(name), name, "%s optional-dependencies.%s" % (rel, group)
                )
            )
    poetry = data.get("tool", {}).get("poetry") if isinstance(data.get("tool"), dict) else None
    if isinstance(poetry, dict):
        if isinstance(poetry.get("name"), str):
            out.append(
                Declaration(
                    "publishes",
                    "pypi",
                    _pypi_name(poetry["name"]),
                    poetry["name"],
                    "%s [tool.poetry] name" % rel,
                )
            )
        tables = [
            ("dependencies", poetry.get("dependencies")),
            ("dev-dependencies", poetry.get("dev-dependencies")),
        ]
        groups = poetry.get("group")
        for group, body in groups.items() if isinstance(groups, dict) else ():
            if isinstance(body, dict):
                tables.append(("group.%s.dependencies" % group, body.get("dependencies")))
        for field, deps in tables:
            for name, spec in deps.items() if isinstance(deps, dict) else ():
                if name.lower() == "python":
                    continue
                local = (
                    spec.get("path") if isinstance(spec, dict) and isinstance(spec.get("path"), str) else None
                )
                out.append(
                    Declaration(
                        "requires",
                        "pypi",
                        _pypi_name(name),
                        name,
                        "%s [tool.poetry.%s]" % (rel, field),
                        local,
                    )
                )


def _setup_cfg(rel, text, out):
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return
    if parser.has_option("metadata", "name"):
        name = parser.get("metadata", "name").strip()
        out.append(Declaration("publishes", "pypi", _pypi_name(name), name, "%s [metadata] name" % rel))
    if parser.has_option("options", "install_requires"):
        for name in _requirement_names(parser.get("options", "install_requires").splitlines()):
            out.append(Declaration("requires", "pypi", _pypi_name(name), name, "%s install_requires" % rel))
    if parser.has_section("options.extras_require"):
        for group, value in parser.items("options.extras_require"):
            for name in _requirement_names(value.splitlines()):
                out.append(
                    Declaration(
                        "requires", "pypi", _pypi_name(name), name, "%s extras_require.%s" % (rel, group)
                    )
                )


def _go_mod(rel, text, out):
    block = None
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        if block:
            if line == ")":
                block = None
                continue
            words = [block] + line.split()
        else:
            words = line.split()
            if len(words) == 2 and words[1] == "(":
                block = words[0]
                continue
        if words[0] == "module" and len(words) >= 2:
            out.append(
                Declaration("publishes", "go", words[1].strip('"'), words[1].strip('"'), "%s module" % rel)
            )
        elif words[0] == "require" and len(words) >= 2:
            out.append(
                Declaration("requires", "go", words[1].strip('"'), words[1].strip('"'), "%s require" % rel)
            )
        elif words[0] == "replace" and "=>" in words:
            arrow = words.index("=>")
            target = words[arrow + 1] if len(words) > arrow + 1 else ""
            if target.startswith(("./", "../", "/")) and arrow >= 2:
                name = words[1].strip('"')
                out.append(
                    Declaration(
                        "requires", "go", name, name, "%s replace %s => %s" % (rel, name, target), target
                    )
                )


def _cargo_toml(rel, text, out):
    try:
        data = toml_loads(text)
    except ValueError:
        return
    package = data.get("package")
    if isinstance(package, dict) and isinstance(package.get("name"), str):
        name = package["name"]
        out.append(Declaration("publishes", "cargo", name.replace("-", "_"), name, "%s [package] name" % rel))
    for field in ("dependencies", "dev-dependencies", "build-dependencies"):
        deps = data.get(field)
        for name, spec in deps.items() if isinstance(deps, dict) else ():
            local = spec.get("path") if isinstance(spec, dict) and isinstance(spec.get("path"), str) else None
            crate = (
                spec.get("package")
                if isinstance(spec, dict) and isinstance(spec.get("package"), str)
                else name
            )
            out.append(
                Declaration(
                    "requires", "cargo", crate.replace("-", "_"), crate, "%s [%s]" % (rel, field), local
                )
            )


def _pom_xml(rel, text, out):
    # Only the simple shape: the project's own groupId/artifactId and <dependency> entries.
    body = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    body_wo_parent = re.sub(r"<parent>.*?</parent>", "", body, flags=re.S)
    deps = re.findall(r"<dependency>(.*?)</dependency>", body_wo_parent, flags=re.S)
    top = re.sub(r"<dependencies>.*?</dependencies>|<dependencyManagement>.*?</dependencyManagement>|<build>.*?</build>"
                 r"|<profiles>.*?</profiles>", "", body_wo_parent, flags=re.S)  # fmt: skip

    def field(xml, tag):
        m = re.search(r"<%s>\s*([^<\s]+)\s*</%s>" % (tag, tag), xml)
        return m.group(1) if m else None

    group = field(top, "groupId") or field(body, "groupId")
    artifact = field(top, "artifactId")
    if group and artifact:
        out.append(
            Declaration(
                "publishes",
                "maven",
                "%s:%s" % (group, artifact),
                "%s:%s" % (group, artifact),
                "%s artifactId" % rel,
            )
        )
    for dep in deps:
        g, a = field(dep, "groupId"), field(dep, "artifactId")
        if g and a:
            out.append(
                Declaration("requires", "maven", "%s:%s" % (g, a), "%s:%s" % (g, a), "%s <dependency>" % rel)
            )


_GRADLE_DEP = _lazy_pattern(
    r"""^\s*(?:implementation|api|compileOnly|runtimeOnly|testImplementation)\s*\(?\s*["']([\w.-]+):([\w.-]+)(?::[^"']*)?["']""",
    re.M,
)


def _build_gradle(rel, text, out):
    group = re.search(r"""^\s*group\s*=\s*["']([\w.-]+)["']""", text, re.M)
    artifact = re.search(
        r"""^\s*(?:archivesBaseName|rootProject\.name)\s*=\s*["']([\w.-]+)["']""", text, re.M
    )
    if group and artifact:
        name = "%s:%s" % (group.group(1), artifact.group(1))
        out.append(Declaration("publishes", "maven", name, name, "%s group and name" % rel))
    for m in _GRADLE_DEP.finditer(text):
        name = "%s:%s" % (m.group(1), m.group(2))
        out.append(Declaration("requires", "maven", name, name, "%s %s" % (rel, "dependency")))


def repo_declarations(root):
    """Everything the manifests at the top of the checkout ``root`` (and the packages of an npm
    workspace) declare: [Declaration]. Read from disk with size limits, symlinks never followed,
    nothing run."""
    out = []
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return out
    packages = []
    for rel in names:
        parse = {
            "package.json": _package_json,
            "pyproject.toml": _pyproject,
            "setup.cfg": _setup_cfg,
            "go.mod": _go_mod,
            "Cargo.toml": _cargo_toml,
            "pom.xml": _pom_xml,
            "build.gradle": _build_gradle,
            "build.gradle.kts": _build_gradle,
        }.get(rel)
        is_requirements = rel.startswith("requirements") and rel.endswith(".txt")
        if parse is None and not is_requirements:
            continue
        text = _manifest_text(root, rel)
        if text is None:
            continue
        if is_requirements:
            for name in _requirement_names(text.splitlines()):
                out.append(Declaration("requires", "pypi", _pypi_name(name), name, rel))
        elif parse is _package_json:
            packages = parse(rel, text, out)
        else:
            parse(rel, text, out)
    # npm/yarn/pnpm workspaces: each package's package.json publishes too.
    seen = 0
    for pattern in packages:
        parts = pattern.strip("/").split("/")
        if not parts or any(p in ("..", "") or p.startswith(".") for p in parts):
            continue
        if parts[-1] in ("*", "**"):
            base = "/".join(parts[:-1])
            try:
                dirs = sorted(os.listdir(os.path.join(root, *base.split("/")))) if base else []
            except OSError:
                continue
            candidates = [(base + "/" + d) if base else d for d in dirs]
        elif "*" in pattern:
            continue  # only "dir/*" and plain paths
        else:
            candidates = ["/".join(parts)]
        for pkg in candidates:
            if seen >= MANIFEST_MAX_PACKAGES:
                break
            real = os.path.realpath(os.path.join(root, *pkg.split("/")))
            if not real.startswith(os.path.realpath(root) + os.sep) or os.path.islink(
                os.path.join(root, *pkg.split("/"))
            ):
                continue
            text = _manifest_text(root, pkg + "/package.json")
            if text is not None:
                seen += 1
                _package_json(pkg + "/package.json", text, out)
    ok = Declaration.SAFE.match
    return [d for d in out if ok(d.name) and ok(d.shown) and (d.local is None or ok(d.local))]


class Suggestion:
    """A relation the manifests suggest: ``from`` ``kind`` ``to`` with the lines that say so."""

    __slots__ = ("from_repo", "kind", "to_repo", "evidence")

    def __init__(self, from_repo, kind, to_repo, evidence):
        self.from_repo = from_repo
        self.kind = kind
        self.to_repo = to_repo
        self.evidence = evidence

    def as_dict(self):
        return {
            "from": self.from_repo.name,
            "kind": self.kind,
            "to": self.to_repo.name,
            "evidence": self.evidence,
        }


def suggest_relations(store, repo=None):
    """Relations the registered repositories' manifests suggest and nobody has declared or
    declined yet, optionally only those involving ``repo``: [Suggestion], in name order."""
    repos = [r for r in _repos(store) if os.path.isdir(r.home)]
    only = resolve_repo(store, repo) if repo else None
    declared = {(r["from_repo"], r["to_repo"]) for r in store.all("SELECT from_repo, to_repo FROM relations")}
    declined = {
        (r["from_name"], r["from_root"], r["kind"], r["to_name"], r["to_root"])
        for r in store.all("SELECT * FROM declined_relations")
    }
    decl = {r.id: repo_declarations(r.home) for r in repos}
    published = {}
    for r in repos:
        for d in decl[r.id]:
            if d.role == "publishes":
                published.setdefault((d.eco, d.name), []).append((r, d))
    homes = {os.path.realpath(c): r for r in repos for c in r.all_checkouts()}
    plain = ("", "dependencies", "require", "[project] dependencies")
    found = {}
    for a in repos:
        for d in decl[a.id]:
            if d.role != "requires":
                continue
            file, _, field = d.where.partition(" ")
            said = "%s/%s depends on %s%s" % (
                a.name,
                file,
                d.shown,
                "" if field in plain else " (%s)" % field,
            )
            lines = []
            for b, p in published.get((d.eco, d.name), ()):
                lines.append((b, "%s, published by %s (%s)" % (said, b.name, p.where)))
            if d.local:
                b = homes.get(os.path.realpath(os.path.join(a.home, d.local)))
                if b is not None:
                    lines.append(
                        (
                            b,
                            "%s/%s points %s at %s, a checkout of %s"
                            % (a.name, file, d.shown, d.local, b.name),
                        )
                    )
            for b, line in lines:
                if b.id == a.id or (only is not None and only.id not in (a.id, b.id)):
                    continue
                if (a.id, b.id) in declared:
                    continue
                if (a.name, a.root_commit, "depends_on", b.name, b.root_commit) in declined:
                    continue
                evidence = found.setdefault((a.id, b.id), Suggestion(a, "depends_on", b, [])).evidence
                if line not in evidence:
                    evidence.append(line)
    return sorted(found.values(), key=lambda s: (s.from_repo.name, s.to_repo.name))


def accept_suggestion(store, suggestion):
    """Declare a suggested relation, its manifest evidence as the note."""
    return relate(store, suggestion.from_repo.name, suggestion.kind, suggestion.to_repo.name,
                  note=stored_cut("; ".join(suggestion.evidence), MAX_CLAIM_CHARS - len(TRUNCATED)))  # fmt: skip


def decline_suggestion(store, suggestion):
    """Remember that this suggestion was declined, so that it is not offered again."""
    a, b = suggestion.from_repo, suggestion.to_repo
    with store.atomic():
        store.db.execute(
            "INSERT INTO declined_relations(from_name, from_root, kind, to_name, to_root, declined_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (a.name, a.root_commit, suggestion.kind, b.name, b.root_commit, utc_now()),
        )
    return {"message": "declined %s %s %s (not suggested again)" % (a.name, suggestion.kind, b.name)}
