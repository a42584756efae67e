# ruff: noqa: UP004, UP031, UP036
# Entry point of wctx.pyz (copied into the archive as __main__.py by zipapp/build.py).
#
# The first lines must parse and run on any Python, 2.7 included, so that an interpreter too old
# for wctx says why in one line instead of failing with a SyntaxError from deep inside wctx.py:
# no f-strings, no annotations, no keyword-only arguments, nothing newer than 2.7 syntax.
import sys

if sys.version_info < (3, 8):
    sys.stderr.write(
        "wctx needs Python 3.8 or newer, but this is Python %d.%d.%d (%s); "
        "run wctx.pyz with a newer python3.\n"
        % (sys.version_info[0], sys.version_info[1], sys.version_info[2], sys.executable or "python")
    )
    sys.exit(2)

import marshal  # noqa: E402
import os  # noqa: E402

# Filled in by zipapp/build.py: module name -> sha256 of the source stored in this archive.
SOURCE_HASHES = {}


def _cache_dirs(archive):
    """Where compiled modules of this archive are kept between runs, in the order tried (empty:
    do not cache).

    Python cannot write .pyc files into a zip archive, so every run would compile wctx.py from
    source again; caching the code objects under the user's cache directory keeps start-up close to
    that of an installed module. Where that directory cannot be written (a read-only home), a
    __pycache__ folder beside the archive serves, as it does for a module's .pyc files.
    WCTX_PYZ_CACHE=0 disables caching, WCTX_PYZ_CACHE=DIR names the one directory to use; without
    WCTX_PYZ_CACHE, PYTHONDONTWRITEBYTECODE (python -B) lets a run read entries but not write them.
    """
    setting = os.environ.get("WCTX_PYZ_CACHE", "")
    if setting == "0":
        return []
    if setting:
        return [setting]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return [os.path.join(base, "wctx", "pyz"), os.path.join(os.path.dirname(archive), "__pycache__")]


class _CachedSourceLoader(object):
    """Loads this archive's own modules, reusing code objects compiled by an earlier run."""

    def __init__(self, archive_loader, archive):
        self.archive_loader = archive_loader
        self.archive = archive

    def find_spec(self, name, path=None, target=None):
        if path is not None or name not in SOURCE_HASHES:
            return None
        import importlib.machinery

        origin = os.path.join(self.archive, name + ".py")
        spec = importlib.machinery.ModuleSpec(name, self, origin=origin)
        spec.has_location = True
        return spec

    def create_module(self, spec):
        return None

    def get_source(self, name):
        return self.archive_loader.get_source(name)

    def get_code(self, name):
        origin = os.path.join(self.archive, name + ".py")
        tag = sys.implementation.cache_tag or "python"
        entry = "%s-%s.%s.bin" % (name, SOURCE_HASHES[name][:24], tag)
        paths = [os.path.join(folder, entry) for folder in _cache_dirs(self.archive)]
        for cached in paths:
            if not _private(cached):
                continue
            try:
                with open(cached, "rb") as handle:
                    code = marshal.loads(handle.read())
                if code.co_filename == origin:
                    return code
            except (OSError, EOFError, ValueError, TypeError, AttributeError):
                pass
        code = compile(self.get_source(name), origin, "exec", dont_inherit=True)
        if os.environ.get("WCTX_PYZ_CACHE") or not sys.dont_write_bytecode:
            data = marshal.dumps(code)
            for cached in paths:
                if _write_cache(cached, data):
                    break
        return code

    def exec_module(self, module):
        module.__file__ = module.__spec__.origin
        exec(self.get_code(module.__name__), module.__dict__)


def _private(path):
    """True when ``path`` and its folder belong to this user and nobody else may write them: code
    read from an entry runs, and an archive may sit in a folder others can write (/tmp), where
    anyone could create a __pycache__ beside it."""
    if not hasattr(os, "getuid"):
        return os.path.isfile(path)
    try:
        for st in (os.lstat(os.path.dirname(path)), os.lstat(path)):
            if st.st_uid != os.getuid() or st.st_mode & 0o022 or (st.st_mode & 0o170000) == 0o120000:
                return False
    except OSError:
        return False
    return True


def _write_cache(path, data):
    """Best effort (True when written): a read-only or full disk only costs the next run a compile."""
    tmp = "%s.%d.tmp" % (path, os.getpid())
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        # Only this user may write it, whatever the umask: _private refuses anything else.
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
        return True
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False


def _install_loader():
    archive_loader = globals().get("__loader__")
    archive = getattr(archive_loader, "archive", None)
    if archive and hasattr(archive_loader, "get_source") and SOURCE_HASHES:
        sys.meta_path.insert(0, _CachedSourceLoader(archive_loader, archive))


_install_loader()

import wctx  # noqa: E402

sys.exit(wctx.main())
