from __future__ import annotations

import sys

# ----------------------------------------------------------------------------------------------
# The service layer: enums and result shapes below are derived from it, never written out again
# ----------------------------------------------------------------------------------------------


def core_module():
    """The wctx module this server serves: the one already loaded, else an import."""
    module = sys.modules.get("wctx")
    if module is None:
        main_module = sys.modules.get("__main__")
        if getattr(main_module, "__file__", "").endswith("wctx.py") and hasattr(main_module, "open_store"):
            module = main_module  # `python3 wctx.py mcp`: do not import a second copy
        else:
            import wctx as module
    return module


CORE = core_module()
