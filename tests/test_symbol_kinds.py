"""Every kind of definition a user cites (constants, assignments, type aliases, fields, grouped
declarations, impl items) is a symbol: located with its whole statement, and judged through the
CLI like a function (an edit inside it is stale and names the commit, an edit beside it leaves it
current)."""

import textwrap

import pytest

import wctx


def src(text):
    return textwrap.dedent(text).lstrip("\n")


# Each case: (path, source, symbol, first line, last line, edit beside, edit inside). The first
# and last lines are the located text's; an edit is (old, new), applied once to the source.
CASES = [
    # ------------------------------------------------------------------------------- Python
    (
        "pkg/config.py",
        src("""
            import enum

            DEFAULT_TIMEOUT = 5
            RETRIES: int = 3
            LIFESPAN: dict[str, str] = {
                "auto": "auto",
                "on": "on",
            }
            MAX_BATCH = 512 * 1024


            def load():
                return DEFAULT_TIMEOUT
            """),
        "LIFESPAN",
        "LIFESPAN: dict[str, str] = {",
        "}",
        ("MAX_BATCH = 512 * 1024", "MAX_BATCH = 256 * 1024"),
        ('"auto": "auto"', '"auto": "off"'),
    ),
    (  # a def and a later assignment of its name: the def is the symbol, as before assignments were
        "pkg/wrapped.py",
        src("""
            def traced(f):
                return f


            def handler():
                return 1


            handler = traced(handler)
            """),
        "handler",
        "def handler():",
        "    return 1",
        ("handler = traced(handler)", "handler = traced(traced(handler))"),
        ("    return 1", "    return 2"),
    ),
    (
        "pkg/limits.py",
        src("""
            LOW, HIGH = (
                1,
                10,
            )
            STEP = 2
            """),
        "HIGH",
        "LOW, HIGH = (",
        ")",
        ("STEP = 2", "STEP = 3"),
        ("    10,", "    20,"),
    ),
    (
        "pkg/model.py",
        src("""
            class Config:
                host = "localhost"
                port: int = 8000
                workers: int

                class Meta:
                    ordering = ["name"]

                def url(self):
                    return "%s:%d" % (self.host, self.port)
            """),
        "Config.port",
        "    port: int = 8000",
        "    port: int = 8000",
        ('host = "localhost"', 'host = "0.0.0.0"'),
        ("port: int = 8000", "port: int = 8080"),
    ),
    (
        "pkg/meta.py",
        src("""
            class Config:
                host = "localhost"

                class Meta:
                    ordering = [
                        "name",
                    ]

                def url(self):
                    return self.host
            """),
        "Config.Meta.ordering",
        "        ordering = [",
        "        ]",
        ("return self.host", "return self.host.lower()"),
        ('"name",', '"-name",'),
    ),
    (
        "pkg/types.py",
        src("""
            from typing import TypeAlias, Union

            Number: TypeAlias = Union[
                int,
                float,
            ]
            Text = str


            def f(x: Number) -> Text:
                return str(x)
            """),
        "Number",
        "Number: TypeAlias = Union[",
        "]",
        ("return str(x)", "return repr(x)"),
        ("    float,", "    complex,"),
    ),
    (
        "pkg/aliases.py",
        src("""
            type Pair[T] = tuple[
                T,
                T,
            ]
            type Name = str


            def first(p):
                return p[0]
            """),
        "Pair",
        "type Pair[T] = tuple[",
        "]",
        ("return p[0]", "return p[1]"),
        ("    T,\n]", "    int,\n]"),
    ),
    # ------------------------------------------------------------------ TypeScript / JavaScript
    (
        "src/limits.ts",
        src("""
            export const MAX_BATCH: number =
              512 * 1024;
            const RETRIES = 3
            function send() {
              const MAX_BATCH = 1;
              return MAX_BATCH;
            }
            """),
        "MAX_BATCH",
        "export const MAX_BATCH: number =",
        "  512 * 1024;",
        ("const RETRIES = 3", "const RETRIES = 4"),
        ("512 * 1024", "256 * 1024"),
    ),
    (
        "src/settings.js",
        src("""
            let mode = "auto";
            var defaults = {
              timeout: 5,
              retries: 2,
            };
            function apply(o) { return Object.assign({}, defaults, o); }
            """),
        "defaults",
        "var defaults = {",
        "};",
        ("{}, defaults, o", "{ mode }, defaults, o"),
        ("retries: 2", "retries: 3"),
    ),
    (
        "src/types.ts",
        src("""
            export type Handler<T> = (event: T) =>
              Promise<void>;
            export type Id = string;
            """),
        "Handler",
        "export type Handler<T> = (event: T) =>",
        "  Promise<void>;",
        ("Id = string", "Id = number"),
        ("Promise<void>", "Promise<boolean>"),
    ),
    (
        "src/shapes.ts",
        src("""
            export interface Shape {
              area(): number;
              name?: string;
            }
            export enum Color {
              Red = "red",
              Green = "green",
            }
            """),
        "Shape.name",
        "  name?: string;",
        "  name?: string;",
        ('Red = "red"', 'Red = "crimson"'),
        ("name?: string", "name?: String"),
    ),
    (
        "src/colors.ts",
        src("""
            export enum Color {
              Red = "red",
              Green = "green",
            }
            """),
        "Color.Green",
        '  Green = "green",',
        '  Green = "green",',
        ('Red = "red"', 'Red = "crimson"'),
        ('Green = "green"', 'Green = "lime"'),
    ),
    (
        "src/space.ts",
        src("""
            export namespace Limits {
              export const upload = 10;
              export const download = 20;
            }
            """),
        "Limits.download",
        "  export const download = 20;",
        "  export const download = 20;",
        ("upload = 10", "upload = 11"),
        ("download = 20", "download = 21"),
    ),
    (
        "src/pool.ts",
        src("""
            export class Pool {
              private readonly size: number = 8;
              @observable
              idle = [
                1,
              ];
              grow() {
                const idle = 2;
                return this.size * idle;
              }
            }
            """),
        "Pool.idle",
        "  @observable",
        "  ];",
        ("this.size * idle", "this.size + idle"),
        ("    1,", "    2,"),
    ),
    # --------------------------------------------------------------------------------------- Go
    (
        "pkg/limits.go",
        src("""
            package pkg

            const MaxBatch = 512 << 10

            var DefaultConfig = Config{
            \tTimeout: 5,
            }

            func Use() int { return MaxBatch }
            """),
        "DefaultConfig",
        "var DefaultConfig = Config{",
        "}",
        ("return MaxBatch", "return MaxBatch + 1"),
        ("Timeout: 5", "Timeout: 6"),
    ),
    (
        "pkg/level.go",
        src("""
            package pkg

            const (
            \tDebug Level = iota
            \tInfo
            \tWarn, Error = 7, 8
            )

            func (l Level) String() string { return "level" }
            """),
        "Error",
        "\tWarn, Error = 7, 8",
        "\tWarn, Error = 7, 8",
        ('return "level"', 'return "lvl"'),
        ("7, 8", "7, 9"),
    ),
    (
        "pkg/vars.go",
        src("""
            package pkg

            var (
            \tretries int = 3
            \tnames = map[string]int{
            \t\t"a": 1,
            \t}
            )

            type ID int64
            """),
        "names",
        "\tnames = map[string]int{",
        "\t}",
        ("ID int64", "ID int32"),
        ('"a": 1', '"a": 2'),
    ),
    (
        "pkg/config.go",
        src("""
            package pkg

            type Config struct {
            \tName    string `json:"name"`
            \tTimeout int    `json:"timeout"`
            }

            type Mode string
            """),
        "Config.Timeout",
        '\tTimeout int    `json:"timeout"`',
        '\tTimeout int    `json:"timeout"`',
        ("Mode string", "Mode int"),
        ('json:"timeout"', 'json:"timeout,omitempty"'),
    ),
    # ------------------------------------------------------------------------------------- Rust
    (
        "src/limits.rs",
        src("""
            pub const MAX_BATCH: usize =
                512 * 1024;
            static mut COUNT: u32 = 0;
            pub type Res<T> = Result<T, Error>;
            """),
        "MAX_BATCH",
        "pub const MAX_BATCH: usize =",
        "    512 * 1024;",
        ("COUNT: u32 = 0", "COUNT: u32 = 1"),
        ("512 * 1024", "256 * 1024"),
    ),
    (
        "src/count.rs",
        src("""
            static mut COUNT: u32 = 0;
            pub type Res<T> = Result<T, Error>;
            """),
        "Res",
        "pub type Res<T> = Result<T, Error>;",
        "pub type Res<T> = Result<T, Error>;",
        ("COUNT: u32 = 0", "COUNT: u32 = 1"),
        ("Result<T, Error>", "Result<T, Box<Error>>"),
    ),
    (
        "src/pool.rs",
        src("""
            pub struct Pool {
                pub size: usize,
                idle: Vec<u32>,
            }

            impl Pool {
                pub const DEFAULT: usize = 8;

                pub fn new() -> Self {
                    Pool { size: 1, idle: Vec::new() }
                }
            }
            """),
        "Pool::new",
        "    pub fn new() -> Self {",
        "    }",
        ("DEFAULT: usize = 8", "DEFAULT: usize = 9"),
        ("size: 1,", "size: 2,"),
    ),
    (
        "src/fields.rs",
        src("""
            pub struct Pool {
                pub size: usize,
                idle: Vec<u32>,
            }

            impl Pool {
                pub const DEFAULT: usize = 8;
            }
            """),
        "Pool::DEFAULT",
        "    pub const DEFAULT: usize = 8;",
        "    pub const DEFAULT: usize = 8;",
        ("pub size: usize", "pub size: u64"),
        ("DEFAULT: usize = 8", "DEFAULT: usize = 9"),
    ),
    (
        "src/size.rs",
        src("""
            pub struct Pool {
                pub size: usize,
                idle: Vec<u32>,
            }
            """),
        "Pool.idle",
        "    idle: Vec<u32>,",
        "    idle: Vec<u32>,",
        ("pub size: usize", "pub size: u64"),
        ("Vec<u32>", "Vec<u64>"),
    ),
    (
        "src/kinds.rs",
        src("""
            pub enum Kind {
                Plain,
                Sized(u32),
            }

            pub trait Store {
                fn get(&self) -> u32;
            }
            """),
        "Kind.Sized",
        "    Sized(u32),",
        "    Sized(u32),",
        ("-> u32;", "-> u64;"),
        ("Sized(u32)", "Sized(u64)"),
    ),
    (
        "src/store.rs",
        src("""
            pub enum Kind {
                Plain,
            }

            pub trait Store {
                fn get(&self) -> u32;
            }
            """),
        "Store",
        "pub trait Store {",
        "}",
        ("Plain,", "Plain, Other,"),
        ("-> u32;", "-> u64;"),
    ),
    (
        "src/macros.rs",
        src("""
            macro_rules! square {
                ($x:expr) => {
                    $x * $x
                };
            }

            fn four() -> u32 { square!(2) }
            """),
        "square",
        "macro_rules! square {",
        "}",
        ("square!(2)", "square!(3)"),
        ("$x * $x", "($x) * ($x)"),
    ),
    # ---------------------------------------------------------------------------- other languages
    (
        "src/Limits.java",
        src("""
            public class Limits {
                public static final int MAX_BATCH =
                    512 * 1024;
                private String name;

                int twice() {
                    int local = 2;
                    return MAX_BATCH * local;
                }
            }
            """),
        "Limits.MAX_BATCH",
        "    public static final int MAX_BATCH =",
        "        512 * 1024;",
        ("MAX_BATCH * local", "MAX_BATCH + local"),
        ("512 * 1024", "256 * 1024"),
    ),
    (
        "src/Color.java",
        src("""
            public enum Color {
                RED("r"),
                GREEN("g");

                private final String code;
            }
            """),
        "Color.GREEN",
        '    GREEN("g");',
        '    GREEN("g");',
        ('RED("r")', 'RED("R")'),
        ('GREEN("g")', 'GREEN("G")'),
    ),
    (
        "src/limits.h",
        src("""
            #define SQUARE(x) \\
                ((x) * (x))
            #define MAX_BATCH 512
            static const int RETRIES = 3;
            """),
        "SQUARE",
        "#define SQUARE(x) \\",
        "    ((x) * (x))",
        ("MAX_BATCH 512", "MAX_BATCH 256"),
        ("((x) * (x))", "((x) * (x) * 1)"),
    ),
    (
        "src/point.c",
        src("""
            static const int RETRIES = 3;
            struct point {
                int x;
                long y;
            };
            enum color { RED, GREEN };
            """),
        "point.y",
        "    long y;",
        "    long y;",
        ("RETRIES = 3", "RETRIES = 4"),
        ("long y;", "double y;"),
    ),
    (
        "src/Limits.kt",
        src("""
            const val MAX_BATCH = 512
            class Pool {
                val size: Int = 8
                var names = listOf(
                    "a",
                )
            }
            """),
        "Pool.names",
        "    var names = listOf(",
        "    )",
        ("MAX_BATCH = 512", "MAX_BATCH = 256"),
        ('"a",', '"b",'),
    ),
    (
        "src/Limits.cs",
        src("""
            public class Limits
            {
                public const int MaxBatch = 512;
                public int Size { get; set; }
            }
            """),
        "Limits.Size",
        "    public int Size { get; set; }",
        "    public int Size { get; set; }",
        ("MaxBatch = 512", "MaxBatch = 256"),
        ("int Size", "long Size"),
    ),
    (
        "src/Limits.swift",
        src("""
            let maxBatch = 512
            struct Pool {
                var size: Int = 8
                let name: String
            }
            """),
        "Pool.size",
        "    var size: Int = 8",
        "    var size: Int = 8",
        ("maxBatch = 512", "maxBatch = 256"),
        ("size: Int = 8", "size: Int = 9"),
    ),
    (
        "src/Limits.scala",
        src("""
            object Limits {
              val MaxBatch = 512
              lazy val names = Seq(
                "a"
              )
            }
            """),
        "Limits.names",
        "  lazy val names = Seq(",
        "  )",
        ("MaxBatch = 512", "MaxBatch = 256"),
        ('"a"', '"b"'),
    ),
    (
        "src/Limits.php",
        src("""
            <?php
            const MAX_BATCH = 512;
            class Pool {
                const SIZE = 8;
                private static int $count = 0;
            }
            """),
        "Pool.count",
        "    private static int $count = 0;",
        "    private static int $count = 0;",
        ("SIZE = 8", "SIZE = 9"),
        ("$count = 0", "$count = 1"),
    ),
    (
        "lib/limits.rb",
        src("""
            module Limits
              MAX_BATCH = 512
              NAMES = [
                'a',
              ].freeze
            end
            """),
        "Limits.NAMES",
        "  NAMES = [",
        "  ].freeze",
        ("MAX_BATCH = 512", "MAX_BATCH = 256"),
        ("'a',", "'b',"),
    ),
    (  # a field whose type's '*' stands against the type: void** pointer;
        "src/pair.c",
        src("""
            struct pair {
                void** pointer;
                void* old_value;
            };
            """),
        "pair.pointer",
        "    void** pointer;",
        "    void** pointer;",
        ("void* old_value;", "char* old_value;"),
        ("void** pointer;", "char** pointer;"),
    ),
    (  # a C++ alias declaration
        "src/io.cc",
        src("""
            namespace io {
            using rwresult = int;
            using mode_t = unsigned;
            }
            """),
        "rwresult",
        "using rwresult = int;",
        "using rwresult = int;",
        ("mode_t = unsigned", "mode_t = int"),
        ("rwresult = int", "rwresult = long"),
    ),
    (  # a field assigned in an expression-bodied method is defined once, where it is declared
        "src/Bench.cs",
        src("""
            public class Bench
            {
                private Provider? _provider;

                public void Setup() =>
                    _provider = new Provider();
            }
            """),
        "Bench._provider",
        "    private Provider? _provider;",
        "    private Provider? _provider;",
        ("new Provider();", "new Provider(1);"),
        ("Provider? _provider", "Provider _provider"),
    ),
    (  # enum cases with raw values, one a line
        "src/Kind.swift",
        src("""
            enum Kind: String {
                case json = "application/json"
                case xml = "application/xml"
            }
            """),
        "Kind.xml",
        '    case xml = "application/xml"',
        '    case xml = "application/xml"',
        ('"application/json"', '"text/json"'),
        ('"application/xml"', '"text/xml"'),
    ),
    (  # a field with its annotation on the same line
        "src/Retry.java",
        src("""
            public class Retry {
              @SerializedName("wait") final long waitMillis = 500;
              @Deprecated private int attempts = 3;
            }
            """),
        "Retry.waitMillis",
        '  @SerializedName("wait") final long waitMillis = 500;',
        '  @SerializedName("wait") final long waitMillis = 500;',
        ("attempts = 3", "attempts = 4"),
        ("waitMillis = 500", "waitMillis = 250"),
    ),
    (  # an enum constant with a body of its own
        "src/Policy.java",
        src("""
            public enum Policy {
              DOUBLE {
                @Override public Object read() {
                  return 1.0;
                }
              },
              LONG {
                @Override public Object read() {
                  return 1L;
                }
              };
            }
            """),
        "Policy.DOUBLE",
        "  DOUBLE {",
        "  },",
        ("return 1L;", "return 2L;"),
        ("return 1.0;", "return 2.0;"),
    ),
    (  # a constant passed as an argument later in the class is not a second definition of it
        "src/Builder.java",
        src("""
            public class Builder {
              static final boolean UNSAFE = true;
              static final Maker MAKER =
                  new Maker(Collections.emptyMap(), UNSAFE, Collections.emptyList());
            }
            """),
        "Builder.UNSAFE",
        "  static final boolean UNSAFE = true;",
        "  static final boolean UNSAFE = true;",
        ("emptyMap()", "emptyMap(1)"),
        ("UNSAFE = true", "UNSAFE = false"),
    ),
    (  # a match arm naming a variant is no definition of it
        "src/handle.rs",
        src("""
            pub enum Handle {
                Current(u8),
                Multi(u16),
            }

            impl Handle {
                pub fn size(&self) -> usize {
                    match self {
                        Handle::Current(n) => *n as usize,
                        Handle::Multi(n) => *n as usize,
                    }
                }
            }
            """),
        "Handle::Current",
        "    Current(u8),",
        "    Current(u8),",
        ("Handle::Current(n) => *n as usize", "Handle::Current(n) => *n as usize + 1"),
        ("Current(u8),", "Current(u32),"),
    ),
    (  # an annotation on the method's own line
        "src/Task.java",
        src("""
            public class Task implements Runnable {
              private int runs;

              @Override public void run() {
                runs++;
              }
            }
            """),
        "Task.run",
        "  @Override public void run() {",
        "  }",
        ("private int runs;", "private int runs = 0;"),
        ("runs++;", "runs += 2;"),
    ),
]


def _id(case):
    return "%s#%s" % (case[0], case[2])


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_the_definition_is_located_with_its_whole_statement(case):
    path, source, symbol, first, last = case[:5]
    found = wctx.locate_symbol(source, path, symbol)
    assert found is not None, "%s not found in %s" % (symbol, path)
    lines = found.split("\n")
    assert (lines[0], lines[-1]) == (first, last)


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_an_edit_beside_is_current_and_an_edit_inside_is_stale(case, git_repo, run_cli):
    path, source, symbol, _, _, beside, inside = case
    assert source.count(beside[0]) == 1 and source.count(inside[0]) == 1
    repo = git_repo("kinds", {path: source})
    assert run_cli(["repo", "add", repo.path]).code == 0
    res = run_cli(
        ["capture", "--finding", "what it holds", "--file", path + "#" + symbol, "--json"], cwd=repo.path
    )
    assert res.code == 0, res
    assert res.json["warnings"] == [], res.json
    eid = res.json["evidence"][0]["id"]

    repo.write(path, repo.read(path).replace(*beside))
    repo.commit("edit beside it")
    res = run_cli(["verify", eid, "--json"])
    item = res.json["items"][0]
    assert (res.code, item["verdict"]) == (0, "current"), item["reasons"]

    repo.write(path, repo.read(path).replace(*inside))
    changed = repo.commit("edit inside it")
    res = run_cli(["verify", eid, "--json"])
    item = res.json["items"][0]
    assert (res.code, item["verdict"]) == (1, "stale"), item["reasons"]
    reason = item["reasons"][0]
    assert reason.startswith("%s#%s changed in 1 commit" % (path, symbol)), reason
    assert changed[:7] in reason and '"edit inside it"' in reason
    assert '"edit beside it"' not in reason


# Names that only look like declarations of the new kinds: a function's local in Python, a
# property of an object literal, a struct literal's field, a Go assignment outside any group.
NOT_DEFINITIONS = [
    ("pkg/run.py", "def run():\n    limit = 5\n    return limit\n", "limit"),
    ("pkg/run.py", "class A:\n    def m(self):\n        size = 2\n        return size\n", "A.size"),
    (
        "src/opts.ts",
        "export function make() {\n  return new Pool();\n}\nconst o = {\n  size: 1,\n};\n",
        "Pool.size",
    ),
    ("src/make.rs", "fn make() -> Pool {\n    Pool {\n        size: 1,\n    }\n}\n", "Pool.size"),
    ("pkg/run.go", "package pkg\n\nfunc run() {\n\tlimit = 5\n}\n", "limit"),
    # a module's constant moved into a function is a local there, no longer the module's
    ("scripts/check.mjs", "function main() {\n  const data = read();\n  return data;\n}\n", "data"),
    ("src/run.ts", "export function run(): number {\n  let count = 0;\n  return count;\n}\n", "count"),
]


@pytest.mark.parametrize(
    "path, source, symbol", NOT_DEFINITIONS, ids=[c[0] + "#" + c[2] for c in NOT_DEFINITIONS]
)
def test_a_name_that_only_looks_declared_is_not_found(path, source, symbol):
    assert wctx.locate_symbol(source, path, symbol) is None


# Each case: (path, source, {symbol: the lines of every definition of it}). Names whose pattern
# once matched something else: a Rust call or match arm at a line's start, a Rust field beside an
# impl item of its name, a Java annotation on a method's own line, a member before the cited one
# that starts with an annotation, a Swift optional type at the end of a line.
EXTENTS = [
    (
        "src/handle.rs",
        src("""
            pub enum Handle {
                Current(u8),
                Multi(u16),
            }

            impl Handle {
                pub fn size(&self) -> usize {
                    match self {
                        Handle::Current(n) => *n as usize,
                        Self::Multi(n) => *n as usize,
                    }
                }
            }
            """),
        {"Handle::Current": [(2, 2)], "Handle::Multi": [(3, 3)], "Handle.Multi": [(3, 3)]},
    ),
    (
        "src/poll.rs",
        src("""
            pub struct Poll {
                registry: Registry,
                size: usize,
            }

            impl Poll {
                pub fn registry(&self) -> &Registry {
                    &self.registry
                }
            }
            """),
        {"Poll::registry": [(2, 2), (7, 9)], "Poll.size": [(3, 3)]},
    ),
    (
        "src/Task.java",
        src("""
            public class Task implements Runnable {
              private int runs;

              @Override public void run() {
                runs++;
              }
            }
            """),
        {"Task.run": [(4, 6)]},
    ),
    (
        "src/Retry.java",
        src("""
            public class Retry {
              @Expose private int attempts = 3;
              private long waitMillis = 500;
              @Deprecated
              private long limit = 9;
            }
            """),
        {"Retry.waitMillis": [(3, 3)], "Retry.limit": [(4, 5)], "Retry.attempts": [(2, 2)]},
    ),
    (
        "Sources/Request.swift",
        src("""
            final class Request {
                @Published var state: State = .idle
                var retries: Int = 0
                var task: URLSessionTask?
                var delegate: Delegate?
                var error: Error? {
                    didSet { notify() }
                }
            }
            """),
        {"Request.retries": [(3, 3)], "Request.task": [(4, 4)], "Request.error": [(6, 8)]},
    ),
    (  # an annotation whose arguments nest parentheses is still an annotation alone on its line
        "Sources/Roll.swift",
        src("""
            struct RollOptions: ParsableArguments {
              @Option(help: ArgumentHelp("Rolls the dice <n> times.", valueName: "n"))
              var times = 1
              @Flag var verbose = false
              var sides: Int?
            }
            """),
        {"RollOptions.times": [(2, 3)], "RollOptions.verbose": [(4, 4)], "RollOptions.sides": [(5, 5)]},
    ),
    (
        "src/Buffer.kt",
        src("""
            class Buffer {
              internal var head: Segment?

              var size: Long = 0L
              val root: Path?
              val name: String?
                get() = root?.name
              var limit: Int = 0
                private set
            }
            """),
        {
            "Buffer.head": [(2, 2)],
            "Buffer.size": [(4, 4)],
            "Buffer.root": [(5, 5)],
            "Buffer.name": [(6, 7)],
            "Buffer.limit": [(8, 9)],
        },
    ),
]


def _extent_cases():
    for path, source, expected in EXTENTS:
        for symbol, lines in expected.items():
            yield pytest.param(path, source, symbol, lines, id=path + "#" + symbol)


@pytest.mark.parametrize("path, source, symbol, lines", _extent_cases())
def test_only_the_definitions_of_the_name_are_located(path, source, symbol, lines):
    found = wctx.locate_symbol_lines(source, path, symbol)
    assert found is not None, "%s not found in %s" % (symbol, path)
    assert found[1] == lines


# C and C++ written the way libraries write them: a return type through an export macro, a
# field among several declarators of one line, a name after its body (typedef struct { ... } T;
# and a struct or union member), a struct with an attribute or an export macro in its header,
# and a forward declaration beside the definition.
C_EXTENTS = [
    (
        "lib/queue.c",
        src("""
            #include "queue.h"

            struct queue;

            typedef struct {
                const char *data;
                size_t length;
            } span;

            struct __attribute__ ((__packed__)) header8 {
                unsigned char flags;
            };

            typedef struct queue {
                struct item *first, *last;
                union {
                    long integer;
                    double real;
                } value;
                struct {
                    int fd;
                } io;
            } queue;

            QUEUE_PUBLIC(const char *) queue_name(const queue *q)
            {
                return q->name;
            }

            static QUEUE_PUBLIC(void) queue_drop(queue *q) {
                free(q);
            }
            """),
        {
            "span": [(5, 8)],
            "span.length": [(7, 7)],
            "header8": [(10, 12)],
            "queue": [(14, 23)],
            "queue.first": [(15, 15)],
            "queue.last": [(15, 15)],
            "queue.value": [(16, 19)],
            "queue.io": [(20, 22)],
            "queue_name": [(25, 28)],
            "queue_drop": [(30, 32)],
        },
    ),
    (
        "src/logger.hpp",
        src("""
            namespace log {
            class LOG_API logger {
            public:
                int level() const;
            };
            }
            """),
        {"logger": [(2, 5)]},
    ),
    (
        "lib/flags.h",
        src("""
            typedef struct context context;
            typedef struct pair { unsigned low; unsigned high; } pair;

            enum flags {
                FLAG_FIXED = 1 << 0,
                FLAG_SCIENTIFIC = 1 << 1,
                PRESET_GENERAL = FLAG_FIXED | FLAG_SCIENTIFIC,
                PRESET_JSON = FLAG_SCIENTIFIC |
                    PRESET_GENERAL,
            };

            static enum flags parse_flags(const char *text)
            {
                return PRESET_GENERAL;
            }
            """),
        {
            "context": [(1, 1)],
            "pair.high": [(2, 2)],
            "flags.PRESET_GENERAL": [(7, 7)],
            "flags.PRESET_JSON": [(8, 9)],
            "parse_flags": [(12, 15)],
        },
    ),
    (  # a forward declaration is what a header holds of a type defined elsewhere
        "lib/net.h",
        src("""
            struct timeval;
            struct conn;

            struct conn {
                int fd;
            };
            """),
        {"timeval": [(1, 1)], "conn": [(4, 6)]},
    ),
    (  # what a namespace holds stands beside what is outside it: overloads in both are joined
        "src/format.cc",
        src("""
            enum class color { red, green };
            auto format_as(color c) -> int { return 1; }

            namespace detail {
            enum class color { red, green };
            auto format_as(long n) -> long { return n; }
            }  // namespace detail

            extern "C" int format_c(const char* text, int size) {
                return size;
            }

            __attribute__((visibility("default"))) int version() {
                return 11;
            }

            template <typename T,
                      enable_if_t<is_integral<T>::value, int> = 0>
            auto test_value() -> T {
                return 42;
            }
            """),
        {
            "color": [(1, 1), (5, 5)],
            "format_as": [(2, 2), (6, 6)],
            "format_c": [(9, 11)],
            "version": [(13, 15)],
            "test_value": [(17, 21)],
        },
    ),
    (  # a C++ header named .h
        "include/box.h",
        src("""
            namespace box {
            using handle = int;
            template <typename T> struct holder {
                T value;
            };
            struct strings : holder<char> {
                using base = holder<char>;
                using base::base;
            };
            }
            """),
        {"handle": [(2, 2)], "holder": [(3, 5)], "strings.base": [(7, 7)]},
    ),
    (  # a template's parameters and a function's parameters are no declarations of their names
        "include/parse.h",
        src("""
            const char* end = nullptr;
            using Char = char;

            template <typename Char, typename GetArg = int>
            auto parse_header(const Char*& it, const Char* end,
                              GetArg get_arg) -> int {
                return 0;
            }
            """),
        {"end": [(1, 1)], "Char": [(2, 2)], "GetArg": None, "parse_header": [(4, 8)]},
    ),
    (  # a macro used where a function's name would stand is no definition of it
        "include/enable.h",
        src("""
            #define ENABLE_IF(...) typename enable_if<(__VA_ARGS__), int>::type = 0

            template <typename T,
                      ENABLE_IF(is_integral<T>::value)>
            void write(T value) {
                put(value);
            }
            """),
        {"ENABLE_IF": [(1, 1)], "write": [(3, 7)]},
    ),
]


@pytest.mark.parametrize(
    "path, source, symbol, lines",
    [
        pytest.param(path, source, symbol, lines, id=path + "#" + symbol)
        for path, source, expected in C_EXTENTS
        for symbol, lines in expected.items()
    ],
)
def test_c_definitions_written_through_macros_or_named_after_their_body(path, source, symbol, lines):
    found = wctx.locate_symbol_lines(source, path, symbol)
    if lines is None:  # no definition of the name
        assert found is None, found
        return
    assert found is not None, "%s not found in %s" % (symbol, path)
    assert found[1] == lines


# Ruby, PHP and C#: definitions whose extent a literal or a one-line body used to hide.
RUBY_PHP_CSHARP_EXTENTS = [
    (
        "lib/shop/order.rb",
        src("""
            module Shop
              class Order
                SPLIT = /[;,]/
                LIMIT = 5

                HEADER = <<-PAGE
            <html>
              PAGE
                FOOTER = <<~PAGE.strip # closing tags
                  </html>
                PAGE

                Builder = proc do |x|
                  x * 2
                end

                @@log = Object.new
                def @@log.write(*) end

                def label(name = "#{name[/`.*'/]} x")
                  name
                end

                def kind(c)
                  case c
                  when ?" then :quote
                  when ?# then :hash
                  end
                end

                def total
                  LIMIT
                end
              end

              module ::Helper; def help; 'h'; end; end
            end
            """),
        {
            "Shop.Order.SPLIT": [(3, 3)],
            "Shop.Order.LIMIT": [(4, 4)],
            "Shop.Order.HEADER": [(6, 8)],
            "Shop.Order.FOOTER": [(9, 11)],
            "Shop.Order.Builder": [(13, 15)],
            "Shop.Order.write": [(18, 18)],
            "Shop.Order.label": [(20, 22)],
            "Shop.Order.kind": [(24, 29)],
            "Shop.Order.total": [(31, 33)],
            "Shop.Order": [(2, 34)],
            "Shop.Helper.help": [(36, 36)],
        },
    ),
    (
        "lib/shop/item.rb",
        src("""
            class Item
              attr_accessor :name, :size
              attr_reader :kind

              protected def weight = 2

              def label
                name
              end
            end
            """),
        {
            "Item.name": [(2, 2)],
            "Item.size": [(2, 2)],
            "Item.kind": [(3, 3)],
            "Item.weight": [(5, 5)],
            "Item.label": [(7, 9)],
        },
    ),
    (
        "src/Bundle.php",
        src("""
            <?php
            final class Bundle
            {
                public static function missing(): string
                {
                    throw new \\RuntimeException(
                        <<< EOT
            No CA bundle } found; it can't be verified.
            EOT
                    );
                }

                public static function template(): string
                {
                    return <<<'HTML'
                        <p>it's { here</p>
                        HTML;
                }

                public function path(): string
                {
                    return '/etc/ssl';
                }

                #[Route('/home', methods: ['GET'])]
                public function home(): string
                {
                    return '/';
                }
            }
            """),
        {
            "Bundle.missing": [(4, 11)],
            "Bundle.template": [(13, 18)],
            "Bundle.path": [(20, 23)],
            "Bundle.home": [(25, 29)],
            "Bundle": [(2, 30)],
        },
    ),
    (
        "src/Breaker.cs",
        src("""
            namespace Polly;

            public abstract class Breaker
            {
                protected readonly Action<Context, State, TimeSpan> OnBreak;
                private readonly Func<Context, object> _ttl;

                public static object[] Data()
                {
                    return new object[] { 1 };
                }

                public (bool, object?) TryGet(string key)
                {
                    return (true, null);
                }

                public async Task<(bool, object?)> TryGetAsync(string key)
                {
                    return await Task.FromResult((true, (object?)null));
                }

                public State State
                {
                    get
                    {
                        return _state;
                    }
                }

                public Func<Context, bool> ShouldHandle { get; set; } = args =>
                {
                    return true;
                };

                public Strategy Strategy { get; set; }
                    = Strategy.Default;

                public void Reset() =>
                    OnReset(Context.None());

                public object Ttl(Context context) =>
                    _ttl(context);

                public abstract void OnReset(Context context);
            }
            """),
        {
            "Breaker.OnBreak": [(5, 5)],
            "Breaker._ttl": [(6, 6)],
            "Breaker.Data": [(8, 11)],
            "Breaker.TryGet": [(13, 16)],
            "Breaker.TryGetAsync": [(18, 21)],
            "Breaker.State": [(23, 29)],
            "Breaker.ShouldHandle": [(31, 34)],
            "Breaker.Strategy": [(36, 37)],
            "Breaker.Reset": [(39, 40)],
            "Breaker.Ttl": [(42, 43)],
            "Breaker.OnReset": [(45, 45)],
        },
    ),
]


def _ruby_php_csharp_cases():
    for path, source, expected in RUBY_PHP_CSHARP_EXTENTS:
        for symbol, lines in expected.items():
            yield pytest.param(path, source, symbol, lines, id=path + "#" + symbol)


# Kotlin and Swift definitions whose header, body or owner the locator once misread, each with
# the lines of every definition of the cited name.
KOTLIN_SWIFT_EXTENTS = [
    (  # a class header whose primary constructor starts the next line
        "src/Spec.kt",
        src("""
            public class Spec
            private constructor(
              private val name: String,
            ) : Named {
              private val cache = mutableMapOf<String, Int>()

              fun emit(out: Appendable) {
                out.append(name)
              }
            }

            class Plain
            internal constructor(val size: Int) {
              val twice = size * 2
            }
            """),
        {"Spec": [(1, 10)], "Spec.cache": [(5, 5)], "Spec.emit": [(7, 9)], "Plain.twice": [(14, 14)]},
    ),
    (  # extension properties and functions on a generic or star-projected receiver
        "src/Metadata.kt",
        src("""
            internal val KmClass.isObject: Boolean
              get() = kind == ClassKind.OBJECT

            val <T> List<T>.second: T
              get() = this[1]

            val Metadata.createdAt: Long?
              get() {
                val createdAt = millis ?: return null
                return createdAt / 1000
              }

            internal fun KClass<*>.toSpec(lenient: Boolean): Spec = java.toSpec(lenient)

            internal fun Class<*>.toSpec(lenient: Boolean): Spec =
              read(::getAnnotation).toSpec(lenient)

            class Inspector {
              private fun Class<*>.lookupField(name: String): Field? {
                return null
              }
            }
            """),
        {
            "isObject": [(1, 2)],
            "second": [(4, 5)],
            "createdAt": [(7, 11)],
            "toSpec": [(13, 13), (15, 16)],
            "Inspector.lookupField": [(19, 21)],
        },
    ),
    (  # an extension of a nested type (cited by its last name), a case list, a where clause and a
        # result type on the lines after a header
        "Sources/AFError.swift",
        src("""
            public enum AFError: Error {
                public enum EncodingReason {
                    case missingURL, jsonEncodingFailed(Error), customFailed(error: Error, code: Int)
                }

                case invalidURL(url: String)
            }

            extension AFError {
                public var url: String? {
                    nil
                }
            }

            extension AFError.EncodingReason {
                var underlyingError: Error? {
                    switch self {
                    case let .jsonEncodingFailed(error),
                         let .customFailed(error, _):
                        return error
                    case .missingURL:
                        return nil
                    }
                }
            }

            final class Inner<Downstream: Subscriber & Sendable>: Subscription
                where Downstream.Input == Output {
                private let request: Request

                func response<Serializer: ResponseSerializer>(queue: Queue = .main,
                                                              serializer: Serializer)
                    -> Self {
                    respond(queue, serializer)
                }
            }
            """),
        {
            "AFError": [(1, 7), (9, 13)],
            "AFError.EncodingReason": [(2, 4)],
            "AFError.EncodingReason.jsonEncodingFailed": [(3, 3)],
            "AFError.EncodingReason.customFailed": [(3, 3)],
            "AFError.url": [(10, 12)],
            "EncodingReason": [(15, 25)],
            "EncodingReason.underlyingError": [(16, 24)],
            "Inner": [(27, 36)],
            "Inner.request": [(29, 29)],
            "Inner.response": [(31, 35)],
        },
    ),
    (  # a triple-quoted value over several lines; a type named after a property's colon is no
        # definition of the type
        "Sources/Average.swift",
        src('''
            let sample = """
              Lorem "ipsum"
              """
            let other = 1

            struct Average {
                enum Kind: String {
                    case mean, median
                }

                var kind: Kind = .mean
                static let usage: String = """
                    Usage: average <values>
                    """
                static let help = 2
            }
            '''),
        {
            "sample": [(1, 3)],
            "other": [(4, 4)],
            "Average.Kind": [(7, 9)],
            "Average.kind": [(11, 11)],
            "Average.usage": [(12, 14)],
            "Average.help": [(15, 15)],
        },
    ),
    (
        "src/Options.kt",
        src('''
            class Options {
              enum class Mode { FAST, SLOW }

              var current: Mode = Mode.FAST
              val usage = """
                Usage: options
                """
              val help = 2
            }
            '''),
        {
            "Options.Mode": [(2, 2)],
            "Options.current": [(4, 4)],
            "Options.usage": [(5, 7)],
            "Options.help": [(8, 8)],
        },
    ),
    (  # a call at a line's start is no definition (functions say func or fun), nor is a value
        # local to a function in an extension
        "Sources/Headers.swift",
        src("""
            protocol Lock {
                func lock()
                func unlock()
            }

            extension Lock {
                func around(_ closure: () -> Void) {
                    lock(); defer { unlock() }
                    closure()
                }
            }

            struct Headers {
                var headers: [String] = []

                func index(of name: String) -> Int? {
                    headers.firstIndex(of: name)
                }

                init(_ headers: [String]) {
                    self.headers = headers
                }
            }

            extension Headers {
                mutating func update(_ name: String) {
                    guard let index = index(of: name) else { return }
                    var headers = self.headers
                    headers[index] = name
                }
            }
            """),
        {
            "Lock.lock": [(2, 2)],
            "Lock.around": [(7, 10)],
            "Headers.index": [(16, 18)],
            "Headers.init": [(20, 22)],
            "Headers.headers": [(14, 14)],
        },
    ),
    (
        "src/Headers.kt",
        src("""
            interface Lock {
              fun lock()
            }

            class Headers(private val names: MutableList<String>) {
              fun update(name: String) {
                val index = names.indexOf(name)
                lock()
                names[index] = name
              }

              fun index(name: String): Int = names.indexOf(name)

              fun lock() {
              }

              constructor() : this(mutableListOf())
            }
            """),
        {
            "Lock.lock": [(2, 2)],
            "Headers.index": [(12, 12)],
            "Headers.lock": [(14, 15)],
            "Headers.constructor": [(17, 17)],
        },
    ),
    (  # enum entries with arguments on one line, an entry after an annotation
        "src/KeySize.kt",
        src("""
            enum class KeySize(val size: Int) {
              K8(8), K32(32), K48(48),
            }

            enum class Target {
              FILE,
              @Experimental ALL,
              NONE,
            }
            """),
        {"KeySize.K32": [(2, 2)], "KeySize.K48": [(2, 2)], "Target.ALL": [(7, 7)], "Target.NONE": [(8, 8)]},
    ),
    (  # a string template whose expression runs over several lines
        "src/Builder.kt",
        src("""
            class Builder {
              fun check(format: String, index: Int) {
                require(index >= 0) {
                  "index ${index + 1} for '${format.substring(
                    index - 1,
                    index + 1,
                  )}' not in range"
                }
              }

              fun build(): String = "done"
            }
            """),
        {"Builder": [(1, 12)], "Builder.check": [(2, 9)], "Builder.build": [(11, 11)]},
    ),
    (  # a where clause on lines of its own, the body's brace below it
        "Sources/Named.swift",
        src("""
            protocol Named {
              var name: String { get }
            }

            extension Named
            where
              Self: CaseIterable, Self: RawRepresentable
            {
              var allNames: [String] {
                Self.allCases.map { $0.name }
              }
            }
            """),
        {"Named": [(1, 3), (5, 12)], "Named.allNames": [(9, 11)]},
    ),
]


def _kotlin_swift_cases():
    for path, source, expected in KOTLIN_SWIFT_EXTENTS:
        for symbol, lines in expected.items():
            yield pytest.param(path, source, symbol, lines, id=path + "#" + symbol)


# Shapes the shared lexer and engine once read wrongly, each with the lines of every definition
# of the name: JavaScript declarations written comma-first or comma-last (every name declared,
# each with the whole statement), template literals holding templates with escaped backquotes,
# Go raw strings over several lines and a result type with braces (struct{}), generator methods,
# the last enum member without a comma, a C# attribute inside #if ... #endif above its class.
LEXER_EXTENTS = [
    (
        "lib/server.js",
        src("""
            'use strict'

            var http = require('http')
              , path = require('path')
              , listen = http.createServer();

            var first = 1,
                second = first + 1;
            let left = 0, right = 2;

            function handle(req) {
              path.join(req.url);
              listen(req);
            }
            """),
        {
            "http": [(3, 5)],
            "path": [(3, 5)],
            "listen": [(3, 5)],
            "first": [(7, 8)],
            "second": [(7, 8)],
            "right": [(9, 9)],
            "handle": [(11, 14)],
        },
    ),
    (
        "src/hint.ts",
        src("""
            export const hint = (names: string[]) =>
              `Use one of: ${names.map(n => `\\`${n}\\``).join(', ')}
            or none.`;

            const rows = `first ${`inner ${'}'}`}
            second`;

            export const LIMIT = 3;
            """),
        {"hint": [(1, 3)], "rows": [(5, 6)], "LIMIT": [(8, 8)]},
    ),
    (  # a regular expression holding a quote inside a template's ${...}
        "src/quote.ts",
        src("""
            export function quote(val: string): string {
              return `"${val.replaceAll(/"|\\\\/g, '\\\\$&')}"`;
            }

            export const DEFAULTS = {
              escape: true,
            };
            """),
        {"quote": [(1, 3)], "DEFAULTS": [(5, 7)]},
    ),
    (  # a name on its own line inside a type's generic arguments is not declared there
        "src/make.ts",
        src("""
            export interface Config {
              strict: boolean;
            }

            export const make: Factory<
              Maker<Config>,
              Config
            > = config => build(config);
            """),
        {"Config": [(1, 3)], "make": [(5, 8)]},
    ),
    (  # an object literal's property ends at its comma, after a template over several lines
        "src/notes.ts",
        src("""
            const notes = {
              browser: () =>
                `Option ${bold(
                  'browser',
                )} is gone.`,

              timers: () => 'use fakeTimers',
            };
            """),
        {"browser": [(2, 5)], "timers": [(7, 7)]},
    ),
    (  # a parameter typed as a function is no property: the object's method is the definition
        "src/schema.ts",
        src("""
            export const makeSchema = (
              validate: (value: unknown) => boolean,
            ): Schema => ({
              validate(value) {
                return validate(value);
              },
            });
            """),
        {"validate": [(4, 6)], "makeSchema": [(1, 7)]},
    ),
    (
        "src/bag.ts",
        src("""
            export class Bag {
              private items: string[] = [];

              *entries(): Iterable<string> {
                yield* this.items;
              }

              async *stream() {
                yield 1;
              }
            }

            function *walk(root: string) {
              yield root;
            }
            """),
        {"Bag.entries": [(4, 6)], "Bag.stream": [(8, 10)], "walk": [(13, 15)]},
    ),
    (
        "tmpl/usage.go",
        src("""
            package tmpl

            var usage = `
            usage: {{.name}}
            `

            var (
            \tshort = "x"
            \tlong  = `line one
            line two`
            \tafter = 2
            )

            func emptySet() map[string]struct{} {
            \treturn map[string]struct{}{}
            }

            func zero() struct{} {
            \treturn struct{}{}
            }
            """),
        {
            "usage": [(3, 5)],
            "long": [(9, 10)],
            "after": [(11, 11)],
            "emptySet": [(14, 16)],
            "zero": [(18, 20)],
        },
    ),
    (
        "src/Palette.java",
        src("""
            public class Palette {
              enum Color {
                @Deprecated
                RED,

                @Deprecated
                GREEN
              }

              enum Size { SMALL, LARGE }
            }
            """),
        {"Palette.Color.RED": [(3, 4)], "Palette.Color.GREEN": [(6, 7)], "Palette.Size.LARGE": [(10, 10)]},
    ),
    (
        "src/Level.cs",
        src("""
            namespace Shop
            {
                public enum Level
                {
                    Low = 1,
                    High = 2
                }
            }
            """),
        {"Level.Low": [(5, 5)], "Level.High": [(6, 6)]},
    ),
    (  # a regular expression at the end of a line ends its statement; /x spans lines
        "lib/patterns.rb",
        src("""
            module Patterns
              ORIGIN_FORM = /\\A\\/[^#]*\\z/
              ASTERISK_FORM = '*'

              HOST = /
                (?<name>[a-z.]+)
                | \\[(?<ip>[0-9a-f:]+)\\]
              /x.freeze
              PORT = /:(\\d+)/

              def self.rooted(path)
                path = "/#{path}" unless path[0] == ?/
                path
              end
              ROOT = '/'
            end
            """),
        {
            "Patterns.ORIGIN_FORM": [(2, 2)],
            "Patterns.HOST": [(5, 8)],
            "Patterns.PORT": [(9, 9)],
            "Patterns.rooted": [(11, 14)],
            "Patterns.ROOT": [(15, 15)],
        },
    ),
    (
        "src/patterns.js",
        src("""
            const SLASH = /\\//
            const LIMIT = 10
            """),
        {"SLASH": [(1, 1)], "LIMIT": [(2, 2)]},
    ),
    (  # explicit interface members: IDictionary.IsFixedSize, IAsyncStore<Item>.PutAsync
        "src/Bag.cs",
        src("""
            namespace Store
            {
                public sealed class Bag : IDictionary, IAsyncStore<Item>
                {
                    bool IDictionary.IsFixedSize => false;

                    bool ICollection<KeyValuePair<string, object>>.IsReadOnly => true;

                    async Task<(bool, Item?)> IAsyncStore<Item>.TryGetAsync(string key)
                    {
                        return (false, null);
                    }

                    Task IAsyncStore<Item>.PutAsync(string key, Item value) =>
                        Task.CompletedTask;

                    public void Clear()
                    {
                        store.Clear();
                        this.Reset(store.PutAsync(null));
                    }
                }
            }
            """),
        {
            "Bag.IsFixedSize": [(5, 5)],
            "Bag.IsReadOnly": [(7, 7)],
            "Bag.TryGetAsync": [(9, 12)],
            "Bag.PutAsync": [(14, 15)],
            "Bag.Clear": [(17, 21)],
        },
    ),
    (
        "src/OrderException.cs",
        src("""
            namespace Shop;

            /// <summary>Thrown when an order is refused.</summary>
            #if NETSTANDARD2_0
            [Serializable]
            #endif
            public class OrderException : Exception
            {
                public OrderException() { }
            }

            #if DEBUG
            public class Trace
            {
            }
            #endif
            """),
        {"OrderException": [(4, 10)], "Trace": [(13, 15)]},
    ),
]


def _lexer_extent_cases():
    for path, source, expected in LEXER_EXTENTS:
        for symbol, lines in expected.items():
            yield pytest.param(path, source, symbol, lines, id=path + "#" + symbol)


@pytest.mark.parametrize("path, source, symbol, lines", _ruby_php_csharp_cases())
def test_ruby_php_and_csharp_definitions_are_located_with_their_extent(path, source, symbol, lines):
    found = wctx.locate_symbol_lines(source, path, symbol)
    assert found is not None, "%s not found in %s" % (symbol, path)
    assert found[1] == lines


@pytest.mark.parametrize("path, source, symbol, lines", _lexer_extent_cases())
def test_the_lexer_and_engine_read_each_definition_whole(path, source, symbol, lines):
    found = wctx.locate_symbol_lines(source, path, symbol)
    assert found is not None, "%s not found in %s" % (symbol, path)
    assert found[1] == lines


# Cases as CASES above, for those shapes: an edit to a later line of the statement is stale.
LEXER_CASES = [
    (
        "test/app.js",
        src("""
            var assert = require('assert')
              , request = require('supertest')
              , limit = 10;

            describe('app', function () {
              it('answers', function () {
                request(app).get('/').expect(200);
              });
            });
            """),
        "request",
        "var assert = require('assert')",
        "  , limit = 10;",
        ("expect(200)", "expect(204)"),
        ("limit = 10", "limit = 20"),
    ),
    (
        "version/info.go",
        src("""
            package version

            var infoTemplate = `
            {{.program}}, version {{.version}}
              built by: {{.user}}
            `

            func Print() string {
            \treturn infoTemplate
            }
            """),
        "infoTemplate",
        "var infoTemplate = `",
        "`",
        ("return infoTemplate", 'return infoTemplate + ""'),
        ("built by:", "built for:"),
    ),
    (  # the enum's closing brace stands on a line of its own, which is not the member's
        "src/Speed.cs",
        src("""
            namespace Shop
            {
                public enum Speed
                {
                    Fast = 1,
                    Slow = 2
                }

                public static class Weights
                {
                    public static int Of() => 1;
                }
            }
            """),
        "Speed.Slow",
        "        Slow = 2",
        "        Slow = 2",
        ("    }\n\n    public", "    } // the speeds\n\n    public"),
        ("Slow = 2", "Slow = 3"),
    ),
]


@pytest.mark.parametrize("case", LEXER_CASES, ids=_id)
def test_an_edit_inside_such_a_definition_is_stale_and_one_beside_it_current(case, git_repo, run_cli):
    test_an_edit_beside_is_current_and_an_edit_inside_is_stale(case, git_repo, run_cli)


@pytest.mark.parametrize("path, source, symbol, lines", _kotlin_swift_cases())
def test_kotlin_and_swift_definitions_are_located_with_the_parser_extent(path, source, symbol, lines):
    found = wctx.locate_symbol_lines(source, path, symbol)
    assert found is not None, "%s not found in %s" % (symbol, path)
    assert found[1] == lines


# A C declaration whose earlier declarators have initialisers: each later name is a global of its
# own, with the whole statement; a call's arguments after '=' are no declarators.
C_INITIALISED_DECLARATORS = src("""
    #include <stdio.h>

    static int tests = 0, fails = 0, skips = 0;
    static int limit = compute(1, depth), depth;

    int main(void) {
        return tests + fails + skips;
    }
    """)


@pytest.mark.parametrize(
    "symbol, lines",
    [("tests", [(3, 3)]), ("fails", [(3, 3)]), ("skips", [(3, 3)]), ("limit", [(4, 4)])],
)
def test_c_names_declared_after_an_initialised_declarator_are_located(symbol, lines):
    found = wctx.locate_symbol_lines(C_INITIALISED_DECLARATORS, "test.c", symbol)
    assert found is not None, "%s not found" % symbol
    assert found[1] == lines


# A Swift enum written on one line, nested in another type: its cases are members of it.
SWIFT_ONE_LINE_ENUM = src("""
    import Foundation

    extension SecTrust {
        enum TrustError: Error { case invalid }
        enum Outcome { case accepted, rejected(String) }

        func evaluate() throws {
            throw TrustError.invalid
        }
    }
    """)


@pytest.mark.parametrize(
    "symbol, lines",
    [("TrustError.invalid", [(4, 4)]), ("Outcome.accepted", [(5, 5)]), ("Outcome.rejected", [(5, 5)])],
)
def test_swift_cases_of_an_enum_written_on_one_line_are_located(symbol, lines):
    found = wctx.locate_symbol_lines(SWIFT_ONE_LINE_ENUM, "Sources/Trust.swift", symbol)
    assert found is not None, "%s not found" % symbol
    assert found[1] == lines
