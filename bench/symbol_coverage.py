#!/usr/bin/env python3
"""Symbol coverage against a parser: does wctx locate every definition a user would cite, with
the same extent as the parser?

For every source file under ``--repo`` (read-only, at most ``--files`` per language), a parser
lists the definitions of each kind: Python through ``ast`` (module- and class-level assignments,
annotated or not, tuple targets, type aliases, nested classes, functions, classes, methods), the
other languages through tree-sitter grammars from PyPI (a benchmark-only dependency,
``pip install -e .[bench]``): constants, variables, fields, enum members, type aliases,
interfaces, namespaces, macros, ``impl`` and trait items beside functions, classes and methods.
Each definition is cited as a user would (``Type.field`` or ``Type::item`` in Rust) and asked of
wctx's locator (``locate_symbol_lines``); it counts as located when wctx returns the same lines as
the parser. Where one name is defined several times in a file (overloads, ``cfg`` variants,
``impl`` blocks of one type), both sides join every definition of it.

    python3 bench/symbol_coverage.py --repo /work/repos/encode/uvicorn --repo ... [--files 300]

Reports, per language and kind: definitions, the share located with the same extent, and every
miss by cause (not found, or the lines wctx returns against the parser's); ``--misses N`` prints
N examples per cause.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import os
import re
import sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from freshness import GRAMMARS, MAX_FILE_BYTES  # noqa: E402

SKIP_DIRS = {".git", "node_modules", "vendor", "target", "build", "dist", "__pycache__", "third_party"}
# A test file: under a folder of tests, or named as one (hiredis's test.c, fmt's format-test.cc).
TEST_DIRS = {"test", "tests", "testing", "testdata", "__tests__", "spec"}
TEST_NAME = re.compile(r"(?:^test|[_.-]tests?\.|^conftest\.)", re.I)


def is_test_path(relative):
    """Whether the file at ``relative`` (a path inside a repository) is a test."""
    *folders, name = relative.replace(os.sep, "/").split("/")
    return any(f.lower() in TEST_DIRS for f in folders) or TEST_NAME.search(name) is not None


# ---------------------------------------------------------------------------------------------
# The parser's definitions: (qualified name, kind, first line, last line)
# ---------------------------------------------------------------------------------------------


def python_definitions(source):
    """Module- and class-level definitions of a Python file, through ``ast``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    out = []

    def visit(body, scope):
        for node in body:
            first = node.lineno
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                if isinstance(node, ast.ClassDef):
                    kind = "nested class" if scope else "class"
                else:
                    kind = "method" if scope else "function"
                out.append((scope + [node.name], kind, first, node.end_lineno))
                if isinstance(node, ast.ClassDef):
                    visit(node.body, scope + [node.name])
                continue
            if isinstance(node, (ast.If, ast.Try)):
                visit(node.body, scope)
                visit(node.orelse, scope)
                for handler in getattr(node, "handlers", []):
                    visit(handler.body, scope)
                continue
            for name, kind in _python_targets(node):
                kind = ("class-level " if scope else "module-level ") + kind
                out.append((scope + [name], kind, first, node.end_lineno))

    visit(tree.body, [])
    return out


def _python_targets(node):
    if type(node).__name__ == "TypeAlias":
        return [(node.name.id, "type alias")]
    if isinstance(node, ast.AnnAssign):
        if not isinstance(node.target, ast.Name):
            return []
        ann = ast.unparse(node.annotation)
        return [(node.target.id, "type alias" if ann.endswith("TypeAlias") else "annotated assignment")]
    if not isinstance(node, ast.Assign):
        return []
    found = []
    for target in node.targets:
        if isinstance(target, ast.Name):
            found.append((target.id, "assignment"))
        elif isinstance(target, (ast.Tuple, ast.List)):
            stack = list(target.elts)
            while stack:
                element = stack.pop(0)
                if isinstance(element, ast.Name):
                    found.append((element.id, "tuple target"))
                elif isinstance(element, ast.Starred) and isinstance(element.value, ast.Name):
                    found.append((element.value.id, "tuple target"))
                elif isinstance(element, (ast.Tuple, ast.List)):
                    stack[:0] = element.elts
    return found


class TreeSitter:
    def __init__(self):
        self.parsers = {}

    def parser(self, language):
        if language not in self.parsers:
            import tree_sitter

            module, function = GRAMMARS[language]
            grammar = getattr(importlib.import_module(module), function)()
            self.parsers[language] = tree_sitter.Parser(tree_sitter.Language(grammar))
        return self.parsers[language]

    def definitions(self, language, path, source, left_out=None):
        """The parser's definitions; what it takes for a definition and a user would not cite
        (see ``Walker.artefact``) is counted in ``left_out`` by (kind, reason) instead."""
        grammar = "tsx" if path.endswith(".tsx") else language
        tree = self.parser(grammar).parse(source)
        out = []
        walker = Walker(language, source, out)
        walker.walk(tree.root_node, [])
        if left_out is not None:
            left_out.update(walker.left_out)
        return out


def _lines(node, extent=None):
    extent = extent or node
    end = extent.end_point[0]
    if extent.end_point[1] == 0 and end > extent.start_point[0]:
        end -= 1  # a node that ends with its newline (a #define) ends on the line before
    return extent.start_point[0] + 1, end + 1


def _exported(node):
    parent = node.parent
    return parent if parent is not None and parent.type == "export_statement" else node


_ENCLOSING = {
    # language: node types whose named children are walked in the same scope
    "all": {
        "program",
        "source_file",
        "translation_unit",
        "compilation_unit",
        "export_statement",
        "declaration_list",
        "statement_block",
        "expression_statement",
        "ambient_declaration",
        "class_body",
        "enum_body",
        "enum_class_body",
        "field_declaration_list",
        "enum_variant_list",
        "enumerator_list",
        "interface_body",
        "namespace_definition",
        "namespace_declaration",
        "file_scoped_namespace_declaration",
        "linkage_specification",
        "template_declaration",
        "preproc_ifdef",
        "preproc_if",
        "preproc_else",
        "preproc_elif",
        "body_statement",
        "const_spec_list",
        "var_spec_list",
        "protocol_body",
        "companion_object",
        "object_declaration_body",
    },
}


class Walker:
    """The definitions tree-sitter finds, each with the kind a reader would call it."""

    def __init__(self, language, source, out):
        self.language, self.source, self.out = language, source, out
        self.left_out = Counter()  # (kind, reason) of the parser's artefacts, not counted

    def text(self, node):
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def add(self, scope, name, kind, node, extent=None, first=None):
        if name and name.replace("$", "_").isidentifier():
            start, end = _lines(node, extent)
            template = node.parent
            if template is not None and template.type == "template_declaration":
                first = template.start_point[0] + 1  # template <class T> is the definition's first line
            self.out.append((scope + [name], kind, min(start, first or start), end))

    def walk(self, node, scope):
        handler = getattr(self, "on_" + self.language)
        for child in node.named_children:
            if handler(child, scope) is False and child.type in _ENCLOSING["all"]:
                self.walk(child, scope)

    def name_of(self, node, field="name"):
        name = node.child_by_field_name(field)
        return self.text(name) if name is not None else None

    # JavaScript and TypeScript ---------------------------------------------------------------
    def on_javascript(self, node, scope):
        t = node.type
        if t in ("function_declaration", "generator_function_declaration"):
            self.add(scope, self.name_of(node), "function", node, _exported(node))
        elif t in ("class_declaration", "abstract_class_declaration"):
            name = self.name_of(node)
            self.add(scope, name, "class", node, _exported(node))
            if name:
                self.walk(node.child_by_field_name("body"), scope + [name])
        elif t == "method_definition" and scope:
            self.add(scope, self.name_of(node), "method", node)
        elif t in ("public_field_definition", "field_definition") and scope:
            name = node.child_by_field_name("name") or node.child_by_field_name("property")
            if name is not None:
                self.add(scope, self.text(name).lstrip("#"), "class field", node)
        elif t in ("lexical_declaration", "variable_declaration"):
            keyword = self.text(node).split(None, 1)[0]
            kind = ("exported " if _exported(node) is not node else "") + keyword
            for declarator in node.named_children:
                if declarator.type == "variable_declarator":
                    name = declarator.child_by_field_name("name")
                    if name is not None and name.type == "identifier":
                        self.add(scope, self.text(name), kind, node, _exported(node))
        elif t in ("type_alias_declaration", "interface_declaration", "enum_declaration"):
            name = self.name_of(node)
            kind = {"type_alias_declaration": "type", "interface_declaration": "interface"}.get(t, "enum")
            self.add(scope, name, kind, node, _exported(node))
            if t == "enum_declaration" and name:
                for member in node.child_by_field_name("body").named_children:
                    target = (
                        member.child_by_field_name("name") if member.type == "enum_assignment" else member
                    )
                    if target is not None and target.type == "property_identifier":
                        self.add(scope + [name], self.text(target), "enum member", member)
        elif t == "internal_module":
            name = self.name_of(node)
            if name and "." not in name:
                self.add(scope, name, "namespace", node, _exported(node.parent) if node.parent else None)
                body = node.child_by_field_name("body")
                if body is not None:
                    self.walk(body, scope + [name])
        else:
            return False
        return True

    on_typescript = on_tsx = on_javascript

    # Go --------------------------------------------------------------------------------------
    def on_go(self, node, scope):
        t = node.type
        if t == "function_declaration":
            self.add(scope, self.name_of(node), "func", node)
        elif t == "method_declaration":
            receiver = node.child_by_field_name("receiver")
            rtype = self.text(receiver).strip("()").split()[-1].lstrip("*").split("[")[0]
            self.add([rtype], self.name_of(node), "method", node)
        elif t in ("const_declaration", "var_declaration", "type_declaration"):
            keyword = t.split("_")[0]
            grouped = any(c.type == "(" for c in node.children) or any(
                c.type.endswith("_spec_list") for c in node.named_children
            )
            specs = [c for c in node.named_children if c.type.endswith(("_spec", "_alias"))]
            for group in node.named_children:
                if group.type.endswith("_spec_list"):
                    specs += [c for c in group.named_children if c.type.endswith("_spec")]
            for spec in specs:
                kind = keyword + (" (grouped)" if grouped else "")
                names = [c for c in spec.named_children if c.type in ("identifier", "type_identifier")]
                if keyword == "type":
                    names = names[:1]
                else:
                    names = [c for c in spec.children_by_field_name("name")]
                for name in names:
                    self.add(scope, self.text(name), kind, spec, spec if grouped else node)
                struct = spec.child_by_field_name("type")
                if keyword == "type" and struct is not None and struct.type == "struct_type" and names:
                    self.go_fields(struct, self.text(names[0]))
        else:
            return False
        return True

    def go_fields(self, struct, owner):
        for body in struct.named_children:
            for field in body.named_children:
                if field.type == "field_declaration":
                    for name in field.children_by_field_name("name"):
                        self.add([owner], self.text(name), "struct field", field)

    # Rust ------------------------------------------------------------------------------------
    _RUST_KINDS = {
        "function_item": "fn",
        "function_signature_item": "fn",
        "struct_item": "struct",
        "enum_item": "enum",
        "trait_item": "trait",
        "union_item": "union",
        "const_item": "const",
        "static_item": "static",
        "type_item": "type",
        "associated_type": "type",
        "macro_definition": "macro_rules!",
    }

    def on_rust(self, node, scope, owner_kind=None):
        t = node.type
        if t in self._RUST_KINDS:
            name = self.name_of(node)
            kind = self._RUST_KINDS[t]
            if owner_kind:
                kind = owner_kind + " " + kind
            self.add(scope, name, kind, node)
            body = node.child_by_field_name("body")
            if name and body is not None and t in ("struct_item", "enum_item", "union_item"):
                for member in body.named_children:
                    if member.type in ("field_declaration", "enum_variant"):
                        member_kind = "struct field" if member.type == "field_declaration" else "enum variant"
                        self.add(scope + [name], self.name_of(member), member_kind, member)
            elif name and body is not None and t == "trait_item":
                for member in body.named_children:
                    self.on_rust(member, scope + [name], "trait")
        elif t == "impl_item":
            kind_node = node.child_by_field_name("type")
            owner = self.text(kind_node).split("<")[0].split("::")[-1].strip() if kind_node else ""
            body = node.child_by_field_name("body")
            if owner.isidentifier() and body is not None:
                for member in body.named_children:
                    self.on_rust(member, scope + [owner], "impl")
        elif t == "mod_item" and node.child_by_field_name("body") is not None:
            self.walk(node.child_by_field_name("body"), scope + [self.name_of(node)])
        else:
            return False
        return True

    # Java, C#, Kotlin, PHP, Swift: classes with members ---------------------------------------
    _CLASSLIKE = {
        "class_declaration": "class",
        "interface_declaration": "interface",
        "enum_declaration": "enum",
        "record_declaration": "record",
        "struct_declaration": "struct",
        "annotation_type_declaration": "annotation",
        "object_declaration": "object",
        "trait_declaration": "trait",
        "protocol_declaration": "protocol",
    }

    def classlike(self, node, scope):
        name = self.name_of(node)
        if name is None:
            for child in node.named_children:
                if child.type in ("identifier", "type_identifier", "simple_identifier", "name"):
                    name = self.text(child)
                    break
        kind = self._CLASSLIKE[node.type]
        if self.language == "swift":
            kind = self.text(node).split("{")[0].split()
            kind = next((k for k in kind if k in ("class", "struct", "enum", "extension", "actor")), "class")
            if kind == "extension":
                name = name and name.split(".")[-1].split("<")[0]
        self.add(scope, name, ("nested " if scope else "") + kind, node)
        body = node.child_by_field_name("body")
        if body is None:
            body = next((c for c in node.named_children if c.type.endswith("body")), None)
        if name and body is not None:
            self.walk(body, scope + [name])

    def declarators(self, node):
        """The variable_declarator children of a declaration, at any depth of wrapping."""
        found = []
        for child in node.named_children:
            if child.type in ("variable_declarator", "const_element", "property_element"):
                found.append(child)
            elif child.type in ("variable_declaration",):
                found += self.declarators(child)
        return found

    def on_java(self, node, scope):
        t = node.type
        if t in self._CLASSLIKE:
            self.classlike(node, scope)
        elif t == "method_declaration":
            self.add(scope, self.name_of(node), "method", node)
        elif t in ("field_declaration", "constant_declaration") and scope:
            modifiers = self.text(node).split("=")[0]
            kind = (
                "constant"
                if t == "constant_declaration" or ("static" in modifiers and "final" in modifiers)
                else "field"
            )
            for declarator in self.declarators(node):
                self.add(scope, self.name_of(declarator), kind, node)
        elif t == "enum_constant":
            self.add(scope, self.name_of(node), "enum constant", node)
        else:
            return False
        return True

    def on_csharp(self, node, scope):
        t = node.type
        if t in self._CLASSLIKE:
            self.classlike(node, scope)
        elif t == "method_declaration":
            self.add(scope, self.name_of(node), "method", node)
        elif t in ("field_declaration", "event_field_declaration") and scope:
            head = self.text(node).split("=")[0].split()
            kind = "event" if t.startswith("event") else "const" if "const" in head else "field"
            for declarator in self.declarators(node):
                name = declarator.child_by_field_name("name") or next(
                    (c for c in declarator.named_children if c.type == "identifier"), None
                )
                if name is not None:
                    self.add(scope, self.text(name), kind, node)
        elif t == "property_declaration" and scope:
            self.add(scope, self.name_of(node), "property", node)
        elif t == "enum_member_declaration":
            self.add(scope, self.name_of(node), "enum member", node)
        else:
            return False
        return True

    def on_kotlin(self, node, scope):
        t = node.type
        if t in self._CLASSLIKE:
            self.classlike(node, scope)
        elif t == "function_declaration":
            self.add(scope, self.name_of(node) or self._first_identifier(node), "fun", node)
        elif t == "property_declaration":
            declaration = next((c for c in node.named_children if c.type == "variable_declaration"), None)
            if declaration is not None:
                keyword = "val" if " val " in " " + self.text(node).split("=")[0] + " " else "var"
                kind = ("member " if scope else "top-level ") + keyword
                self.add(scope, self._first_identifier(declaration), kind, node)
        elif t == "enum_entry":
            self.add(scope, self._first_identifier(node), "enum entry", node)
        elif t == "type_alias":
            self.add(scope, self._first_identifier(node), "typealias", node)
        else:
            return False
        return True

    def _first_identifier(self, node):
        for child in node.named_children:
            if child.type in ("identifier", "simple_identifier", "type_identifier"):
                return self.text(child)
        return None

    def on_php(self, node, scope):
        t = node.type
        if t in self._CLASSLIKE:
            self.classlike(node, scope)
        elif t in ("method_declaration", "function_definition"):
            self.add(scope, self.name_of(node), "method" if scope else "function", node)
        elif t == "const_declaration":
            for element in node.named_children:
                if element.type == "const_element":
                    name = next((c for c in element.named_children if c.type == "name"), None)
                    if name is not None:
                        self.add(scope, self.text(name), "class const" if scope else "const", node)
        elif t == "property_declaration" and scope:
            for element in node.named_children:
                if element.type == "property_element":
                    variable = element.child_by_field_name("name") or element.named_children[0]
                    self.add(scope, self.text(variable).lstrip("$"), "property", node)
        elif t == "enum_case":
            self.add(scope, self.name_of(node), "enum case", node)
        elif t in ("namespace_definition",):
            body = node.child_by_field_name("body")
            if body is not None:
                self.walk(body, scope)
        elif t == "compound_statement":  # a namespace's braces
            self.walk(node, scope)
        else:
            return False
        return True

    def on_swift(self, node, scope):
        t = node.type
        if t in self._CLASSLIKE:
            self.classlike(node, scope)
        elif t in ("function_declaration", "protocol_function_declaration"):
            self.add(scope, self.name_of(node), "func", node)
        elif t in ("property_declaration", "protocol_property_declaration"):
            names = [c for c in node.named_children if c.type == "pattern"]
            keyword = "let" if self.text(node).lstrip().split("=")[0].find("let ") >= 0 else "var"
            for pattern in names[:1]:
                self.add(scope, self.text(pattern), ("member " if scope else "top-level ") + keyword, node)
        elif t == "typealias_declaration":
            self.add(scope, self.name_of(node), "typealias", node)
        elif t == "enum_entry":
            for name in node.children_by_field_name("name"):
                self.add(scope, self.text(name), "enum case", node)
        else:
            return False
        return True

    # C and C++ -------------------------------------------------------------------------------
    def on_c(self, node, scope):
        t = node.type
        reason = self.c_artefact(node, scope)
        if reason:
            kind = "function" if t == "function_definition" else "global"
            self.left_out[(kind, reason)] += 1
            return True
        if t == "function_definition":
            name = self.c_declarator_name(node.child_by_field_name("declarator"))
            before = node.prev_named_sibling
            while before is not None and before.type == "comment":
                before = before.prev_named_sibling
            specifiers = self.c_specifier_line(before)
            first = specifiers.start_point[0] + 1 if specifiers is not None else None
            kind_of_type = node.child_by_field_name("type")
            declarator = node.child_by_field_name("declarator")
            if (
                specifiers is not None
                and kind_of_type is not None
                and kind_of_type.type == "type_identifier"
                and declarator is not None
                and declarator.type == "parenthesized_declarator"
            ):  # int CJSON_CDECL main(void): the parser's "type" is the name
                name = self.text(kind_of_type)
            if name and "::" in name:
                parts = name.split("::")
                self.add(scope + parts[:-1], parts[-1], "method", node, first=first)
            else:
                self.add(scope, name, "method" if scope else "function", node, first=first)
        elif t in ("preproc_def", "preproc_function_def"):
            self.add(scope, self.name_of(node), "#define", node)
        elif t in ("struct_specifier", "union_specifier", "enum_specifier", "class_specifier"):
            self.c_type(node, scope, node)
        elif t == "type_definition":
            declarator = node.child_by_field_name("declarator")
            if declarator is not None and declarator.type == "type_identifier":
                self.add(scope, self.text(declarator), "typedef", node)
            inner = node.child_by_field_name("type")
            if inner is not None and inner.child_by_field_name("body") is not None:
                self.c_type(inner, scope, node)
        elif t in ("declaration", "field_declaration"):
            inner = node.child_by_field_name("type")
            if inner is not None and inner.child_by_field_name("body") is not None:
                self.c_type(inner, scope, node)
            if t == "field_declaration" and not scope:
                return True
            for declarator in node.children_by_field_name("declarator"):
                if declarator.type in ("function_declarator",) or (
                    declarator.type != "init_declarator" and "function_declarator" in self.text(declarator)
                ):
                    continue
                if _has_function_declarator(declarator):
                    continue
                name = self.c_declarator_name(declarator)
                kind = ("field" if t == "field_declaration" else "member") if scope else "global"
                self.add(scope, name, kind, node)
        elif t == "alias_declaration":
            self.add(scope, self.name_of(node), "using", node)
        elif t == "namespace_definition":
            body = node.child_by_field_name("body")
            if body is not None:
                self.walk(body, scope)
        else:
            return False
        return True

    on_cpp = on_c

    # What the C and C++ grammars take for a definition where a macro stands (the preprocessor
    # is not run), and a user would not cite; counted apart, by reason:
    MACRO_INVOCATION = "a macro invocation (TEST(suite, name) { ... })"
    LOST_LOCAL = "a local the parser lost (a macro without ';' broke its function)"
    SPECIFIER_MACROS = "specifier macros on their own line, joined to the function below"
    MACRO_LINE = "a macro line the parser read as a declaration without its ';' (FMT_END_NAMESPACE)"

    def c_artefact(self, node, scope):
        """Why the parser's ``node`` is no definition a user cites, or None."""
        t = node.type
        if t == "function_definition" and not scope:
            declarator = node.child_by_field_name("declarator")
            inner = declarator.child_by_field_name("declarator") if declarator is not None else None
            name = self.text(inner) if inner is not None and inner.type == "identifier" else ""
            parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
            bare = parameters is not None and all(  # TEST(suite, name): names, no types
                p.type == "parameter_declaration" and p.child_by_field_name("declarator") is None
                for p in parameters.named_children
            )
            if re.fullmatch(r"[A-Z][A-Z0-9_]*", name) and (node.child_by_field_name("type") is None or bare):
                return self.MACRO_INVOCATION
            kind_of_type = node.child_by_field_name("type")
            if (  # TEST_SETUP(group) { ... }: read as a type and a parenthesized name
                declarator is not None
                and declarator.type == "parenthesized_declarator"
                and kind_of_type is not None
                and re.fullmatch(r"[A-Z][A-Z0-9_]*", self.text(kind_of_type))
            ):
                return self.MACRO_INVOCATION
        parent = node.parent
        if (
            t in ("declaration", "function_definition")
            and parent is not None
            and parent.parent is None
            and parent.has_error
            and node.start_point[1] > 0
        ):
            return self.LOST_LOCAL
        if self.c_specifier_line(node) is not None:
            return self.SPECIFIER_MACROS
        if t == "declaration" and node.children and node.children[-1].is_missing:
            return self.MACRO_LINE
        return None

    def c_specifier_line(self, node):
        """``node`` when it is a line of specifier macros the parser read as a declaration
        without its ';' (``ffc_internal ffc_inline`` above a function, ``int CJSON_CDECL`` before
        ``main``), right before a function definition; else None."""
        if (
            node is None
            or node.type != "declaration"
            or not node.children
            or not node.children[-1].is_missing
        ):
            return None
        if any(
            c.type not in ("type_identifier", "identifier", "primitive_type", "comment", ";")
            for c in node.children
        ):
            return None
        following = node.next_named_sibling
        while following is not None and following.type == "comment":
            following = following.next_named_sibling
        if following is None or following.type != "function_definition":
            return None
        return node

    def c_type(self, node, scope, extent):
        name = self.name_of(node)
        body = node.child_by_field_name("body")
        if not name or body is None:
            return
        kind = node.type.split("_")[0]
        self.add(scope, name, kind, node, extent)
        if kind == "enum":
            for member in body.named_children:
                if member.type == "enumerator":
                    self.add(scope + [name], self.name_of(member), "enumerator", member)
        else:
            self.walk(body, scope + [name])

    def c_declarator_name(self, declarator):
        while declarator is not None:
            if declarator.type in ("identifier", "field_identifier", "type_identifier"):
                return self.text(declarator)
            if declarator.type == "qualified_identifier":
                text = self.text(declarator).replace(" ", "")
                return None if ("<" in text or "operator" in text or "~" in text) else text.lstrip(":")
            inner = declarator.child_by_field_name("declarator")
            if inner is None:
                inner = next(
                    (
                        c
                        for c in declarator.named_children
                        if "declarator" in c.type or c.type.endswith("identifier")
                    ),
                    None,
                )
            declarator = inner
        return None

    # Ruby ------------------------------------------------------------------------------------
    def on_ruby(self, node, scope):
        t = node.type
        if t in ("class", "module"):
            name = self.text(node.child_by_field_name("name")).split("::")[-1]
            self.add(scope, name, ("nested " if scope else "") + t, node)
            for child in node.named_children:
                if child.type == "body_statement":
                    self.walk(child, scope + [name])
        elif t in ("method", "singleton_method"):
            self.add(scope, self.name_of(node), "method" if scope else "def", node)
        elif t == "assignment":
            left = node.child_by_field_name("left")
            if left is not None and left.type == "constant":
                self.add(scope, self.text(left), "constant", node, _with_heredocs(node))
        else:
            return False
        return True


class _Span:
    """An extent from one node's start to another's end."""

    def __init__(self, first, last):
        self.start_point, self.end_point = first.start_point, last.end_point


def _with_heredocs(node):
    """A Ruby statement's extent with the heredoc bodies it opens (``X = <<~EOS``), which the
    grammar puts beside the statement rather than in it."""
    last, sibling = node, node.next_named_sibling
    while sibling is not None and sibling.type in ("heredoc_body", "comment"):
        if sibling.type == "comment" and sibling.start_point[0] != node.end_point[0]:
            break  # a comment on a line of its own
        if sibling.type == "heredoc_body":
            last = sibling
        sibling = sibling.next_named_sibling
    return _Span(node, last)


def _has_function_declarator(node):
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in ("function_declarator", "abstract_function_declarator"):
            return True
        if current.type in ("init_declarator",):
            value = current.child_by_field_name("value")
            stack += [c for c in current.named_children if c != value]
        else:
            stack += current.named_children
    return False


# ---------------------------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------------------------


# Kinds bench/freshness.py cites by default; --kinds declarations cites every other kind.
CALLABLE_KINDS = frozenset(
    {"function", "method", "func", "fn", "impl fn", "trait fn", "fun", "def", "class", "module"}
)


def citation(language, parts):
    return ("::" if language == "rust" else ".").join(parts)


def compare(wctx, language, path, text, definitions):
    """[(kind, cause or None, example)] for each definition; cause None when located exactly."""
    by_name = defaultdict(list)
    for parts, kind, first, last in definitions:
        by_name[tuple(parts)].append((kind, first, last))
    results = []
    for parts, found in by_name.items():
        expected = sorted({(first, last) for _, first, last in found})
        cited = citation(language, parts)
        located = wctx.locate_symbol_lines(text, path, cited)
        got = sorted(set(located[1])) if located is not None else None
        if got == expected:
            cause = None
        elif got is None:
            cause = "not found"
        elif set(expected) < set(got):
            cause = "joins other definitions of the name"
        elif set(got) < set(expected):
            cause = "leaves out definitions of the name"
        elif len(got) != len(expected):
            cause = "%d definitions, parser %d" % (len(got), len(expected))
        else:
            cause = _extent_cause(got, expected)
        for kind, _, _ in found:
            results.append((kind, cause, "%s#%s wctx %s parser %s" % (path, cited, got, expected)))
    return results


def _extent_cause(got, expected):
    causes = []
    for (a, b), (c, d) in zip(got, expected):
        if a != c:
            causes.append("starts %s" % ("earlier" if a < c else "later"))
        if b != d:
            causes.append("ends %s" % ("earlier" if b < d else "later"))
    return ", ".join(sorted(set(causes))) or "other"


def files_of(repo, language_of, cap, counts):
    for top, dirs, files in os.walk(repo):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            path = os.path.join(top, name)
            language = language_of(path)
            if language is None or counts[(repo, language)] >= cap:
                continue
            if language != "python" and language not in GRAMMARS:
                continue
            if os.path.getsize(path) > MAX_FILE_BYTES:
                continue
            counts[(repo, language)] += 1
            yield path, language


def load_wctx(path):
    spec = importlib.util.spec_from_file_location("wctx_bench", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["wctx_bench"] = module
    spec.loader.exec_module(module)
    return module


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", action="append", required=True)
    parser.add_argument("--wctx", default=os.path.join(ROOT, "wctx.py"))
    parser.add_argument("--files", type=int, default=300, help="files per language and repository")
    parser.add_argument("--misses", type=int, default=0, help="examples printed per cause")
    parser.add_argument("--language", action="append", help="only these languages")
    parser.add_argument(
        "--headers", choices=("c", "cpp"), default="c", help="the parser's language for .h files"
    )
    parser.add_argument(
        "--tests",
        choices=("with", "without", "only"),
        default="with",
        help="count test files (with, the default), leave them out, or count them alone",
    )
    args = parser.parse_args(argv)
    wctx = load_wctx(args.wctx)
    language_of = wctx.language_of
    if args.headers == "cpp":  # a C++ library's .h files, parsed as C++ (wctx reads them as it does)
        language_of = lambda path: "cpp" if path.endswith(".h") else wctx.language_of(path)  # noqa: E731
    ts = TreeSitter()
    tally = defaultdict(Counter)  # (language, kind) -> Counter(cause)
    examples = defaultdict(list)
    files = Counter()
    counts = Counter()
    left_out = defaultdict(Counter)  # language -> (kind, reason) -> count
    for repo in args.repo:
        for path, language in files_of(repo, language_of, args.files, counts):
            if args.language and language not in args.language:
                continue
            if args.tests != "with" and is_test_path(os.path.relpath(path, repo)) != (args.tests == "only"):
                continue
            with open(path, "rb") as fh:
                data = fh.read()
            if language == "python":
                definitions = python_definitions(data)
            else:
                definitions = ts.definitions(language, path, data, left_out[language])
            if not definitions:
                continue
            files[language] += 1
            text = data.decode("utf-8", "replace")
            relative = os.path.relpath(path, os.path.dirname(repo))
            for kind, cause, example in compare(wctx, language, relative, text, definitions):
                tally[(language, kind)][cause] += 1
                if cause is not None and len(examples[(language, kind, cause)]) < args.misses:
                    examples[(language, kind, cause)].append(example)
    print("| language | kind | definitions | same extent | misses by cause |")
    print("| --- | --- | ---: | ---: | --- |")
    for (language, kind), causes in sorted(tally.items()):
        total = sum(causes.values())
        misses = ", ".join("%s %d" % (c, n) for c, n in causes.most_common() if c is not None)
        print("| %s | %s | %d | %.3f | %s |" % (language, kind, total, causes[None] / total, misses or "-"))
    for language, reasons in sorted(left_out.items()):
        for (kind, reason), n in sorted(reasons.items()):
            print("\n%s: left out, %s %s: %d" % (language, kind, reason, n), end="")
    print()
    print()
    print("files per language: " + ", ".join("%s %d" % kv for kv in sorted(files.items())))
    for key, lines in sorted(examples.items()):
        print("\n%s / %s / %s:" % key)
        for line in lines:
            print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
