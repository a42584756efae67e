"""Symbol location per language: the cited symbol is found, its extent is right, and an edit in
another function leaves its hash unchanged while an edit inside it changes the hash."""

import textwrap

import pytest

import wctx


def src(text):
    return textwrap.dedent(text).lstrip("\n")


# Ruby that defeats naive scanning: a heredoc whose body sits at column 0 and holds a quote,
# a special global ($`), a regex, a percent literal and quotes inside #{...}.
RUBY_MKMF = (
    "module MakeMakefile\n"
    "  if ok\n"
    "    x = 1\n"
    "  else\n"
    "    abort <<MESSAGE\n"
    "can't find header files (ruby.h)\n"
    "MESSAGE\n"
    "  end\n"
    "\n"
    "  def self::log_open\n"
    "    @log ||= File::open(@logfile, 'wb')\n"
    "  end\n"
    "\n"
    "  def del_trailing_separator(path)\n"
    "    $` + File.dirname(path)[/#{SEPARATOR_PAT}*\\z/o]\n"
    "  end\n"
    "\n"
    "  def compsys(to)\n"
    '    to << %Q[  "#{o}[#{d}]" \\\\n]\n'
    '    to << "#{x ? "a" : \'b\'}"\n'
    "  end\n"
    "\n"
    "  def rm_f(*files)\n"
    "    FileUtils.rm_f(files)\n"
    "  end\n"
    "end\n"
)

# Each case: (path, source, symbol, first line, last line, edit elsewhere, edit inside).
# An edit is (old, new), applied once to the source.
CASES = [
    # ---------------------------------------------------------------- JavaScript / TypeScript
    (
        "src/upload.js",
        src("""
            // uploadDocument() is called below; this comment must not be taken for it
            function helper(a) {
              return { text: "}" + a };
            }

            export async function uploadDocument(file, opts = {}) {
              const re = /[{]/g;
              const s = `template ${file} }`;
              return helper(file).text.replace(re, "");
            }

            function after() { return 2; }
            """),
        "uploadDocument",
        "export async function uploadDocument(file, opts = {}) {",
        "}",
        ("return 2;", "return 3;"),
        ('replace(re, "")', 'replace(re, "x")'),
    ),
    (
        "lib/api.js",
        src("""
            const fetchAll = async (urls) => {
              return Promise.all(urls.map((u) => fetch(u)));
            };
            const double = (x) => x * 2
            const triple = (x) => x * 3
            """),
        "double",
        "const double = (x) => x * 2",
        "const double = (x) => x * 2",
        ("x * 3", "x * 4"),
        ("x * 2", "x * 5"),
    ),
    (
        "lib/legacy.js",
        src("""
            function Client(url) { this.url = url; }
            Client.prototype.send = function (body) {
              return post(this.url, body);
            };
            Client.prototype.close = function () { return null; };
            """),
        "Client.send",
        "Client.prototype.send = function (body) {",
        "};",
        ("return null;", "return 0;"),
        ("post(this.url, body)", "post(this.url, body, 1)"),
    ),
    (
        "src/store.ts",
        src("""
            export interface Options {
              retries: number;
            }

            export class Store<T> {
              private items: T[] = [];

              @logged
              add(item: T): void {
                this.items.push(item);
              }

              get size(): number {
                return this.items.length;
              }
            }

            export type Id = string | number
            """),
        "Store.add",
        "  @logged",
        "  }",
        ("return this.items.length;", "return 0;"),
        ("this.items.push(item);", "this.items.unshift(item);"),
    ),
    (
        "src/store.ts",
        src("""
            export interface Options {
              retries: number;
            }
            export type Id = string | number
            export function make(o: Options): Id { return o.retries; }
            """),
        "Id",
        "export type Id = string | number",
        "export type Id = string | number",
        ("return o.retries;", "return 1;"),
        ("string | number", "string"),
    ),
    (
        "src/shapes.ts",
        src("""
            abstract class Shape {
              abstract area(): number;
              describe(): string { return "shape"; }
            }
            """),
        "Shape.area",
        "  abstract area(): number;",
        "  abstract area(): number;",
        ('"shape"', '"form"'),
        ("area(): number", "area(): bigint"),
    ),
    # ---------------------------------------------------------------- Go
    (
        "pkg/upload/upload.go",
        src("""
            package upload

            type Client struct {
            \tURL string
            }

            // Upload sends the file. It used to call Upload(nil) recursively.
            func (c *Client) Upload(name string) error {
            \tif name == "" {
            \t\treturn fmt.Errorf("empty name: %s", "}")
            \t}
            \treturn nil
            }

            func New(url string) *Client {
            \treturn &Client{URL: url}
            }
            """),
        "Client.Upload",
        "func (c *Client) Upload(name string) error {",
        "}",
        ("return &Client{URL: url}", 'return &Client{URL: url + "/"}'),
        ("return nil", "return errNone"),
    ),
    (
        "pkg/upload/types.go",
        src("""
            package upload

            type (
            \tID int
            \tItem struct {
            \t\tName string
            \t}
            )

            type Mode int

            func Parse(s string) Mode { return Mode(len(s)) }
            """),
        "Item",
        "\tItem struct {",
        "\t}",
        ("Mode(len(s))", "Mode(0)"),
        ("Name string", "Name []byte"),
    ),
    (
        "pkg/upload/types.go",
        src("""
            package upload

            type Mode int

            func Parse(s string) Mode { return Mode(len(s)) }
            """),
        "Mode",
        "type Mode int",
        "type Mode int",
        ("Mode(len(s))", "Mode(0)"),
        ("type Mode int", "type Mode uint"),
    ),
    (
        "cobra/completions.go",
        src("""
            package cobra

            // MarkFlagRequired on a command: cited as Command.MarkFlagRequired.
            func (c *Command) MarkFlagRequired(name string) error {
            \treturn MarkFlagRequired(c.Flags(), name)
            }

            // MarkFlagRequired on a flag set: the package-level function.
            func MarkFlagRequired(flags *FlagSet, name string) error {
            \treturn flags.SetAnnotation(name, "required")
            }
            """),
        "MarkFlagRequired",
        "func MarkFlagRequired(flags *FlagSet, name string) error {",
        "}",
        ("c.Flags(), name", "c.PersistentFlags(), name"),
        ('"required"', '"mandatory"'),
    ),
    # ---------------------------------------------------------------- Rust
    (
        "src/lib.rs",
        src("""
            #[derive(Debug)]
            pub struct Parser<'a> {
                input: &'a str,
            }

            impl<'a> Parser<'a> {
                pub fn new(input: &'a str) -> Self {
                    let _brace = '{';
                    let _raw = r#"a "}" b"#;
                    Parser { input }
                }

                fn peek(&self) -> Option<char> {
                    self.input.chars().next()
                }
            }

            /* a block comment with a stray { and /* nested */ comment */
            pub fn parse(s: &str) -> usize { s.len() }
            """),
        "Parser.new",
        "    pub fn new(input: &'a str) -> Self {",
        "    }",
        ("self.input.chars().next()", "self.input.chars().last()"),
        ("Parser { input }", "Parser { input: input }"),
    ),
    (
        "src/lib.rs",
        src("""
            pub trait Named {
                fn name(&self) -> String;
                fn greet(&self) -> String {
                    format!("hi {}", self.name())
                }
            }

            pub fn parse(s: &str) -> usize { s.len() }
            """),
        "Named.greet",
        "    fn greet(&self) -> String {",
        "    }",
        ("s.len()", "s.len() + 1"),
        ('"hi {}"', '"hello {}"'),
    ),
    # ---------------------------------------------------------------- Java / Kotlin / C#
    (
        "src/main/java/com/acme/Uploader.java",
        src("""
            package com.acme;

            /**
             * Calls upload(file) with retries. {@link #upload(File)}
             */
            public class Uploader {
                private final char open = '{';

                @Override
                public String toString() { return "Uploader{}"; }

                @Retry(times = 3)
                public Result upload(File file) throws IOException {
                    String s = "}";
                    return client.send(file, s);
                }

                interface Listener {
                    void done(Result r);
                }
            }
            """),
        "Uploader.upload",
        "    @Retry(times = 3)",
        "    }",
        ('return "Uploader{}";', 'return "U";'),
        ("client.send(file, s)", "client.send(file)"),
    ),
    (
        "src/main/java/com/acme/Uploader.java",
        src("""
            public class Uploader {
                interface Listener {
                    void done(Result r);
                }
                void other() { int x = 1; }
            }
            """),
        "Uploader.Listener.done",
        "        void done(Result r);",
        "        void done(Result r);",
        ("int x = 1;", "int x = 2;"),
        ("Result r", "Result result"),
    ),
    (
        "app/src/main/kotlin/Screen.kt",
        src("""
            package app

            data class Size(val w: Int, val h: Int)

            class Screen(private val size: Size) : View() {
                fun area(): Int = size.w * size.h

                override fun draw(canvas: Canvas) {
                    canvas.fill("{")
                }

                companion object {
                    fun create(): Screen = Screen(Size(1, 1))
                }
            }

            fun Screen.describe(): String {
                return "screen"
            }
            """),
        "Screen.area",
        "    fun area(): Int = size.w * size.h",
        "    fun area(): Int = size.w * size.h",
        ('canvas.fill("{")', 'canvas.fill("}")'),
        ("size.w * size.h", "size.h * size.w"),
    ),
    (
        "app/src/main/kotlin/Screen.kt",
        src("""
            data class Size(val w: Int, val h: Int)

            class Screen(private val size: Size)

            fun Screen.describe(): String {
                return "screen"
            }
            """),
        "Size",
        "data class Size(val w: Int, val h: Int)",
        "data class Size(val w: Int, val h: Int)",
        ('return "screen"', 'return "view"'),
        ("val h: Int", "val h: Long"),
    ),
    (
        "app/src/main/kotlin/Screen.kt",
        src("""
            class Screen(private val size: Size)

            fun Screen.describe(): String {
                return "screen"
            }

            fun other() = 1
            """),
        "Screen.describe",
        "fun Screen.describe(): String {",
        "}",
        ("fun other() = 1", "fun other() = 2"),
        ('return "screen"', 'return "view"'),
    ),
    (
        "src/Uploader.cs",
        src("""
            namespace Acme
            {
                public class Uploader
                {
                    [Obsolete("use UploadAsync")]
                    public int Upload(string path)
                    {
                        var s = @"C:\\temp\\{";
                        return path.Length;
                    }

                    public int Count => 3;

                    private void Other() { }
                }
            }
            """),
        "Uploader.Upload",
        '        [Obsolete("use UploadAsync")]',
        "        }",
        ("private void Other() { }", "private void Other() { Log(); }"),
        ("return path.Length;", "return 0;"),
    ),
    # ---------------------------------------------------------------- C / C++
    (
        "src/upload.c",
        src("""
            #include <stdio.h>

            static int upload_file(const char *path);

            /* upload_file(path) { is documented here } */
            static int
            upload_file(const char *path)
            {
                const char *brace = "}";
                if (path == NULL) {
                    return -1;
                }
                return puts(brace);
            }

            struct config {
                int retries;
            };

            int main(void) { return upload_file("x"); }
            """),
        "upload_file",
        "static int",
        "}",
        ('upload_file("x")', 'upload_file("y")'),
        ("return -1;", "return -2;"),
    ),
    (
        "src/upload.c",
        src("""
            struct config {
                int retries;
            };

            struct config *make(void) { struct config *c = 0; return c; }
            """),
        "config",
        "struct config {",
        "};",
        ("struct config *c = 0;", "struct config *c = NULL;"),
        ("int retries;", "long retries;"),
    ),
    (
        "src/proxy.cpp",
        src("""
            namespace rn {

            class Proxy {
            public:
                Proxy(int n);
                int size() const { return n_; }
                void reset();
            private:
                int n_;
            };

            Proxy::Proxy(int n) : n_{n}, cache_(n) {
                init();
            }

            void Proxy::reset() {
                n_ = 0;
            }

            template <typename T>
            T twice(T v) { return v + v; }

            }  // namespace rn
            """),
        "Proxy.reset",
        "void Proxy::reset() {",
        "}",
        ("init();", "init(1);"),
        ("n_ = 0;", "n_ = 1;"),
    ),
    (
        "src/proxy.cpp",
        src("""
            class Proxy {
            public:
                Proxy(int n);
            private:
                int n_;
            };

            Proxy::Proxy(int n) : n_{n}, cache_(n) {
                init();
            }

            void Proxy::reset() {
                n_ = 0;
            }
            """),
        "Proxy.Proxy",
        "Proxy::Proxy(int n) : n_{n}, cache_(n) {",
        "}",
        ("n_ = 0;", "n_ = 1;"),
        ("init();", "init(1);"),
    ),
    (
        "src/proxy.hpp",
        src("""
            class Proxy {
            public:
                int size() const { return n_; }
                void reset();
            private:
                int n_;
            };
            int other() { return 1; }
            """),
        "Proxy.size",
        "    int size() const { return n_; }",
        "    int size() const { return n_; }",
        ("return 1;", "return 2;"),
        ("return n_;", "return n_ + 0;"),
    ),
    # ---------------------------------------------------------------- Ruby
    (
        "lib/uploader.rb",
        src("""
            module Acme
              class Uploader < Base
                def initialize(path)
                  @path = path
                end

                def upload(retries: 3)
                  body = <<~TEXT
                    this heredoc has an end
                  end
                  TEXT
                  retries.times do |i|
                    send(body) if i > 0
                  end
                end

              private

                def send(body) # a comment with end
                  @client.post(body)
                end

                def self.build = new("x")
              end
            end
            """),
        "Acme.Uploader.upload",
        "    def upload(retries: 3)",
        "    end",
        ("@client.post(body)", "@client.put(body)"),
        ("send(body) if i > 0", "send(body) if i > 1"),
    ),
    (
        "lib/uploader.rb",
        src("""
            class Uploader
              def initialize(path)
                @path = path
              end

            private

              def send(body)
                @client.post(body)
              end
            end

            class Other
              def x; 1; end
            end
            """),
        "Uploader",
        "class Uploader",
        "end",
        ("def x; 1; end", "def x; 2; end"),
        ("@client.post(body)", "@client.put(body)"),
    ),
    (
        "src/client.ts",
        src("""
            function getStream(folder: Folder, error: (msg: string) => void):
              Promise<{ host: string; port: number }>
            {
              return open(folder, "--lsp");
            }

            type Props = Omit<
              BaseProps,
              'enabled' | 'native'
            > & {
              id: string;
            };

            function after(): { ok: boolean } {
              return { ok: true };
            }
            """),
        "getStream",
        "function getStream(folder: Folder, error: (msg: string) => void):",
        "}",
        ("return { ok: true };", "return { ok: false };"),
        ('"--lsp"', '"--stdio"'),
    ),
    (
        "src/client.ts",
        src("""
            type Props = Omit<
              BaseProps,
              'enabled' | 'native'
            > & {
              id: string;
            };

            function after(): { ok: boolean } {
              return { ok: true };
            }
            """),
        "Props",
        "type Props = Omit<",
        "};",
        ("return { ok: true };", "return { ok: false };"),
        ("id: string;", "id: number;"),
    ),
    (
        "app/src/main/kotlin/Traits.kt",
        src("""
            object Traits {
                @Deprecated(
                    "no effect on SDK 35 (edge-to-edge)",
                )
                internal fun setColor(screen: Screen) {
                    screen.paint()
                }

                internal fun setStyle(screen: Screen) {
                    screen.style()
                }
            }
            """),
        "Traits.setColor",
        "    @Deprecated(",
        "    }",
        ("screen.style()", "screen.restyle()"),
        ("(edge-to-edge)", "(always)"),
    ),
    (
        "app/src/main/kotlin/Container.kt",
        src("""
            internal abstract class StrategyBase(
                var enabled: Boolean = false,
            ) : Strategy {
                override fun enable() {
                    enabled = true
                }
            }

            internal class SwapLastTwo : StrategyBase() {
                protected fun createTransaction(): Transaction =
                    requireNotNull(manager) { "no manager" }
                        .beginTransaction()
                        .setReorderingAllowed(true)

                fun pick(a: Boolean): Int =
                    if (a) {
                        1
                    } else {
                        2
                    }
            }
            """),
        "SwapLastTwo.createTransaction",
        "    protected fun createTransaction(): Transaction =",
        "            .setReorderingAllowed(true)",
        ("2\n", "3\n"),
        (".setReorderingAllowed(true)", ".setReorderingAllowed(false)"),
    ),
    (
        "app/src/main/kotlin/Container.kt",
        src("""
            internal abstract class StrategyBase(
                var enabled: Boolean = false,
            ) : Strategy {
                override fun enable() {
                    enabled = true
                }
            }

            internal class SwapLastTwo : StrategyBase() {
                fun pick(a: Boolean): Int =
                    if (a) {
                        1
                    } else {
                        2
                    }
            }
            """),
        "StrategyBase",
        "internal abstract class StrategyBase(",
        "}",
        ("if (a)", "if (!a)"),
        ("enabled = true", "enabled = !enabled"),
    ),
    (
        "src/screen.cpp",
        src("""
            Screen::Screen(int n) : n_(n) {
                init();
            }

            Screen::~Screen() {
                release();
            }
            """),
        "Screen.Screen",
        "Screen::Screen(int n) : n_(n) {",
        "}",
        ("release();", "release(true);"),
        ("init();", "init(1);"),
    ),
    (
        "lib/mkmf.rb",
        RUBY_MKMF,
        "MakeMakefile.rm_f",
        "  def rm_f(*files)",
        "  end",
        ("@log ||= File::open(@logfile, 'wb')", "@log ||= File::open(@logfile, 'ab')"),
        ("FileUtils.rm_f(files)", "FileUtils.rm_rf(files)"),
    ),
    (
        "lib/mkmf.rb",
        src("""
            module MakeMakefile
              def self::log_open
                @log ||= File::open(@logfile, 'wb')
              end

              def rm_f(*files)
                FileUtils.rm_f(files)
              end
            end
            """),
        "MakeMakefile.log_open",
        "  def self::log_open",
        "  end",
        ("FileUtils.rm_f(files)", "FileUtils.rm_rf(files)"),
        ("'wb'", "'ab'"),
    ),
    (
        "lib/yaml/dbm.rb",
        src("""
            module YAML

            class DBM < ::DBM
              def fetch(keystr, default = nil, &block)
                val = super(keystr)
                return YAML.load(val) if String === val
                block ? block.call(keystr) : default
              end

              def key(keystr)
                invert[keystr]
              end
            end

            end
            """),
        "YAML.DBM.key",
        "  def key(keystr)",
        "  end",
        ("YAML.load(val)", "YAML.safe_load(val)"),
        ("invert[keystr]", "invert.fetch(keystr)"),
    ),
    # ---------------------------------------------------------------- Python (ast)
    (
        "pkg/mod.py",
        src("""
            import functools


            class Store:
                @functools.lru_cache()
                def get(self, key):
                    return self.data[key]

                def put(self, key, value):
                    self.data[key] = value
            """),
        "Store.get",
        "    @functools.lru_cache()",
        "        return self.data[key]",
        ("self.data[key] = value", "self.data[key] = [value]"),
        ("return self.data[key]", "return self.data.get(key)"),
    ),
]


def _id(case):
    return "%s#%s" % (case[0], case[2])


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_symbol_found_with_its_extent(case):
    path, source, symbol, first, last = case[:5]
    text = wctx.locate_symbol(source, path, symbol)
    assert text is not None, "%s not found" % symbol
    lines = text.split("\n")
    assert lines[0] == first
    assert lines[-1] == last


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_edit_elsewhere_keeps_the_hash_and_edit_inside_changes_it(case):
    path, source, symbol = case[:3]
    elsewhere, inside = case[5], case[6]
    before = wctx.symbol_hash_of(source.encode(), path, symbol)
    assert before is not None
    assert elsewhere[0] in source and inside[0] in source
    other = source.replace(elsewhere[0], elsewhere[1], 1)
    assert wctx.symbol_hash_of(other.encode(), path, symbol) == before
    edited = source.replace(inside[0], inside[1], 1)
    assert wctx.symbol_hash_of(edited.encode(), path, symbol) != before


@pytest.mark.parametrize(
    "path, source, symbol",
    [
        ("a.c", "int f(int x);\nint g(void) { return f(1); }\n", "h"),
        ("a.js", "// function gone() {}\nconst s = 'function gone() {}';\n", "gone"),
        ("a.go", "package a\n\nfunc (c *Client) Upload() {}\n", "Server.Upload"),
        ("a.rb", "class A\n  def a; end\nend\n", "A.b"),
        ("a.rs", "impl A { fn a(&self) {} }\n", "B.a"),
    ],
)
def test_missing_symbols_are_not_found(path, source, symbol):
    assert wctx.locate_symbol(source, path, symbol) is None


def test_a_call_is_not_a_definition():
    source = src("""
        function main() {
          render(app, () => {
            console.log("done");
          });
        }

        function render(app, cb) {
          cb();
        }
        """)
    text = wctx.locate_symbol(source, "index.js", "render")
    assert text.startswith("function render(app, cb) {")


def test_prototype_only_header_gives_the_declaration():
    source = "#ifndef A_H\n#define A_H\nint upload(const char *path);\n#endif\n"
    assert wctx.locate_symbol(source, "a.h", "upload") == "int upload(const char *path);"


def test_overloads_are_joined_so_a_change_to_either_counts():
    source = src("""
        class A {
            int f(int x) { return x; }
            int f(String s) { return s.length(); }
            int g() { return 0; }
        }
        """)
    text = wctx.locate_symbol(source, "A.java", "A.f")
    assert "int f(int x)" in text and "int f(String s)" in text and "int g()" not in text
    before = wctx.symbol_hash_of(source.encode(), "A.java", "A.f")
    edited = source.replace("s.length()", "s.length() + 1")
    assert wctx.symbol_hash_of(edited.encode(), "A.java", "A.f") != before


def test_unparseable_python_falls_back_to_indentation():
    source = "def ok():\n    return 1\n\ndef broken(:\n    pass\n"
    assert wctx.locate_symbol(source, "m.py", "ok") == "def ok():\n    return 1"


# A long Python file is parsed in pieces (each top-level definition, a long class member by
# member) and each piece is kept by its text: the symbols found must be exactly those a whole
# parse finds, in every shape that could split a piece wrongly, and a later version of the file
# must not be served a piece of an earlier one.
PIECES_PY = '''"""Module doc.

def not_a_function_at_column_zero():
    this is inside a string
"""
import os


@decorator
def plain(a):
    return a


@decorator(
    "spread over lines",
)
def decorated(b):
    return b


if os.name:
    def conditional():
        return 1
else:
    def conditional():
        return 2


class Long(Base):
    """A class long enough to be parsed member by member.

def still_in_the_docstring():
    """

    attribute = 1

    def first(self):
        return "%s"

    @property
    def second(self):
        text = """
def inside_a_string_in_a_method():
"""
        return text

    @staticmethod
    @other(
        1,
    )
    def third():
        return 3

    class Inner:
        def deep(self):
            return "deep"

    if os.sep:
        def maybe(self):
            return 4

    def last(self):
        return "%s"


VALUE = 3


def after(c):
    return c
''' % ("x" * 1500, "y" * 1500)


def _whole_parse_texts(source):
    import ast

    lines = source.splitlines()
    found = {}

    def visit(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                name = prefix + node.name
                found.setdefault(name, []).append("\n".join(lines[first - 1 : node.end_lineno]))
                visit(node.body, name + ".")
            else:
                for field in ("body", "orelse", "finalbody"):
                    visit(getattr(node, field, None) or [], prefix)

    visit(ast.parse(source).body, "")
    return {name: "\n".join(texts) for name, texts in found.items()}


def test_python_pieces_find_what_a_whole_parse_finds():
    expected = _whole_parse_texts(PIECES_PY)
    assert {"plain", "decorated", "conditional", "Long", "Long.first", "Long.second", "Long.third",
            "Long.Inner", "Long.Inner.deep", "Long.maybe", "Long.last", "after"} <= set(expected)  # fmt: skip
    for name, text in expected.items():
        assert wctx.locate_symbol(PIECES_PY, "m.py", name) == text, name
    assert wctx.locate_symbol(PIECES_PY, "m.py", "not_a_function_at_column_zero") is None
    assert wctx.locate_symbol(PIECES_PY, "m.py", "inside_a_string_in_a_method") is None


def test_python_pieces_of_an_earlier_version_are_not_served_for_a_later_one():
    before = {
        name: wctx.symbol_hash_of(PIECES_PY.encode(), "m.py", name)
        for name in ("Long.first", "Long.last", "Long", "after")
    }
    edited = PIECES_PY.replace("        return 3\n", "        return 33\n")
    after = {name: wctx.symbol_hash_of(edited.encode(), "m.py", name) for name in before}
    assert after["Long.first"] == before["Long.first"] and after["Long.last"] == before["Long.last"]
    assert after["after"] == before["after"]
    assert after["Long"] != before["Long"]  # the class holds the edited member
    assert wctx.locate_symbol(edited, "m.py", "Long.third").endswith("return 33")


def test_typescript_interface_whose_extends_clause_starts_the_next_line_reaches_its_body():
    # Seen on a real history: the header ended at its first line, so an edit of the body was
    # never seen (a miss).
    source = (
        "export interface SubInput\n"
        "  extends BaseInput<string>,\n"
        "    Omit<Other, 'x'> {\n"
        "  current: State\n"
        "}\n"
        "\n"
        "export function after() {\n"
        "  return 1\n"
        "}\n"
    )
    text = wctx.locate_symbol(source, "types.ts", "SubInput")
    assert text.endswith("current: State\n}"), text
    edited = source.replace("current: State", "current: OtherState")
    assert wctx.symbol_hash_of(edited.encode(), "types.ts", "SubInput") != wctx.symbol_hash_of(
        source.encode(), "types.ts", "SubInput"
    )
