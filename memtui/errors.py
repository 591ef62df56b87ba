"""Domain errors: every error memtui shows a user carries a message and a hint."""

from __future__ import annotations


class MemtuiError(Exception):
    """Base class for errors a user can act on.

    ``message`` says what went wrong, ``hint`` what to do about it.
    """

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class FieldNotFoundError(MemtuiError):
    """The memory folder does not exist or is not a folder."""


class UnsafePathError(MemtuiError):
    """A path points outside the field, into sessions/ or .git/, or is not a page."""


class StaleWriteError(MemtuiError):
    """The file on disk changed since it was loaded; writing would lose that change."""

    def __init__(self, message: str, hint: str = "", *, current_hash: str | None = None) -> None:
        super().__init__(message, hint)
        self.current_hash = current_hash


class ReadOnlyFieldError(MemtuiError):
    """The field was opened read-only (a .memoryfield.zip)."""


class ArchiveError(MemtuiError):
    """A .memoryfield.zip is unsafe or unreadable."""


class FrontmatterError(MemtuiError):
    """Frontmatter cannot be parsed or edited."""

    def __init__(self, message: str, hint: str = "", *, line: int | None = None) -> None:
        super().__init__(message, hint)
        self.line = line
