"""The compiler's diagnostics as Python objects."""

from typing import List, NamedTuple, Optional, Sequence


class Diagnostic(NamedTuple):
    """One diagnostic of the compiler, as composer-opt prints it."""

    severity: str
    """``"error"``, ``"warning"``, ``"remark"`` or ``"note"``."""
    location: str
    """``model.py:12:8``, as composer-opt prints it."""
    file: str
    """The file of the first file location in it ("" when it has none)."""
    line: int
    column: int
    message: str
    notes: List["Diagnostic"]

    @classmethod
    def _from_record(cls, record: dict) -> "Diagnostic":
        return cls(
            record["severity"], record["location"], record["file"],
            record["line"], record["column"], record["message"],
            [cls._from_record(note) for note in record["notes"]])

    def __str__(self) -> str:
        lines = [f"{self.location}: {self.severity}: {self.message}"]
        lines += [f"{note.location}: note: {note.message}"
                  for note in self.notes]
        return "\n".join(lines)


class CompilerError(Exception):
    """A failure of the compiler: an invalid model, pipeline or option.

    ``diagnostics`` holds the errors with their locations (the line of the
    model's Python source where there is one) and notes; ``str(error)`` reads
    as composer-opt prints them.
    """

    def __init__(self, message: str, diagnostics: Sequence = ()):
        super().__init__(message)
        self.diagnostics: List[Diagnostic] = [
            d if isinstance(d, Diagnostic) else Diagnostic._from_record(d)
            for d in diagnostics]

    @property
    def location(self) -> Optional[Diagnostic]:
        """The first diagnostic, whose ``file``, ``line`` and ``column`` say
        where the error is; None for an error without one."""
        return self.diagnostics[0] if self.diagnostics else None


class CompilerWarning(UserWarning):
    """A warning of the compiler, such as a pass that changed nothing."""
