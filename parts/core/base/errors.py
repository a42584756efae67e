from __future__ import annotations

# ----------------------------------------------------------------------------------------------
# Errors
# ----------------------------------------------------------------------------------------------


class WctxError(Exception):
    """A failure the user can act on: the CLI prints its message on one line."""

    exit_code = 1


class UsageError(WctxError):
    """Bad input: unknown kind, bad confidence, malformed path and the like."""

    exit_code = 2


class NotFoundError(WctxError):
    """An id, repository, workspace or session that does not exist."""

    exit_code = 1


class MissingSymbolError(UsageError):
    """A cited symbol its file does not define (a typo, most often); the CLI adds how to insist."""
