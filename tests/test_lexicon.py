"""The symbol locator reads each language through its row of the lexicon (comments, strings, how a
block ends): a brace or an ``end`` inside any comment or string form a row declares never ends
a definition early, and every language wctx reads has a row."""

import pytest

import wctx

# A definition per language, its body at BODY, followed by another definition.
DEFINITIONS = {
    "c": ("a.c", "int target(void) {\n    BODY\n    return 0;\n}\n", "int after(void) {\n    return 1;\n}\n"),
    "cpp": ("a.cpp", "int target() {\n    BODY\n    return 0;\n}\n", "int after() {\n    return 1;\n}\n"),
    "csharp": ("A.cs", "static int Target() {\n    BODY\n    return 0;\n}\n", "static int After() {\n    return 1;\n}\n"),
    "java": ("A.java", "static int target() {\n    BODY\n    return 0;\n}\n", "static int after() {\n    return 1;\n}\n"),
    "go": ("a.go", "func target() int {\n\tBODY\n\treturn 0\n}\n", "func after() int {\n\treturn 1\n}\n"),
    "rust": ("a.rs", "fn target() -> i32 {\n    BODY\n    0\n}\n", "fn after() -> i32 {\n    1\n}\n"),
    "kotlin": ("a.kt", "fun target(): Int {\n    BODY\n    return 0\n}\n", "fun after(): Int {\n    return 1\n}\n"),
    "scala": ("a.scala", "def target(): Int = {\n  BODY\n  0\n}\n", "def after(): Int = {\n  1\n}\n"),
    "swift": ("a.swift", "func target() -> Int {\n    BODY\n    return 0\n}\n", "func after() -> Int {\n    return 1\n}\n"),
    "javascript": ("a.js", "function target() {\n  BODY\n  return 0;\n}\n", "function after() {\n  return 1;\n}\n"),
    "typescript": ("a.ts", "function target(): number {\n  BODY\n  return 0;\n}\n", "function after() {\n  return 1;\n}\n"),
    "php": ("a.php", "function target() {\n    BODY\n    return 0;\n}\n", "function after() {\n    return 1;\n}\n"),
    "ruby": ("a.rb", "def target\n  BODY\n  0\nend\n", "def after\n  1\nend\n"),
}  # fmt: skip


def _forms(lexicon):
    """(what, a statement holding a stray '}' and a stray ``end`` line) for each comment and
    string form the row declares."""
    forms = [("double-quoted string", 'x = "}\nend\n";' if lexicon.multiline_strings else 'x = "}";')]
    for comment in lexicon.line_comments:
        forms.append(("line comment " + comment, comment + " } {{ end"))
    if lexicon.block_comments:
        opener, closer = lexicon.block_comments
        forms.append(("block comment", "%s }\nend\n%s" % (opener, closer)))
        if lexicon.nested_comments:
            forms.append(("nested block comment", "%s %s } %s }\nend\n%s" % (opener, opener, closer, closer)))
    if lexicon.char_literals:
        forms.append(("character literal", "c = '}';"))
    else:
        forms.append(("single-quoted string", "x = '}\nend\n';" if lexicon.multiline_strings else "x = '}';"))
    if lexicon.triple_quotes:
        forms.append(("triple-quoted string", 'x = """ } "\nend\n """;'))
    forms.append(("backquoted string", "x = `}\nend\n`;"))
    raw = {"rust": 'x = r#"}"\nend\n"#;', "cpp": 'x = R"d(}")\nend\n)d";', "verbatim": 'x = @"}""\nend\n";'}
    if lexicon.raw_strings:
        forms.append(("raw string", raw[lexicon.raw_strings]))
    if lexicon.regex_literals:
        forms.append(("regex literal", "x = /}[/]end/;"))
    if lexicon.ruby:
        forms += [
            ("interpolated string", 'x = "#{"}"}\nend\n"'),
            ("percent literal", "x = %w[}\nend\n]"),
            ("heredoc", "x = <<~EOS\nend\n}\nEOS"),
            ("=begin block", "x = 1\n=begin\nend\n}\n=end"),
        ]
    return forms


CASES = [
    pytest.param(language, form, id="%s: %s" % (language, what))
    for language in DEFINITIONS
    for what, form in _forms(wctx.lexicon_of(language))
]


@pytest.mark.parametrize("language, form", CASES)
def test_a_brace_or_end_in_a_comment_or_string_never_ends_a_definition(language, form):
    path, definition, after = DEFINITIONS[language]
    target = definition.replace("BODY", form)
    source = target + "\n" + after
    name = "Target" if language == "csharp" else "target"
    found = wctx.locate_symbol_lines(source, path, name)
    assert found is not None, source
    assert found[0] == target.rstrip("\n"), source
    assert found[1] == [(1, target.count("\n"))]
    other = wctx.locate_symbol_lines(source, path, "After" if language == "csharp" else "after")
    assert other is not None and other[0] == after.rstrip("\n"), source


def test_every_language_read_has_a_lexicon_row():
    assert set(wctx.LANGUAGE_BY_EXTENSION.values()) <= set(wctx.LEXICONS)
    for language, row in wctx.LEXICONS.items():
        assert row.blocks in ("braces", "indent", "end"), language


def test_a_lexicon_row_refuses_a_fact_it_does_not_know():
    with pytest.raises(TypeError, match="unknown lexicon facts: nested"):
        wctx.Lexicon(nested=True)
