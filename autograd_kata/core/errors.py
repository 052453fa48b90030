"""The one error a command raises when it cannot go on.

A handler raises ``Refusal(message, code)``; only ``cli.main`` catches it,
prints ``kata: <message>`` on stderr and returns ``code``.  ``where`` names the
command in that line when the message needs it (``kata grade: ...``); a
message that is its own whole line (its catalogue text says who speaks, as in
``kata train draws its picture with matplotlib, ...``) passes ``where=None``.
``manifest.KataNotFound`` is a Refusal (code 2) that is also a LookupError.
"""
from __future__ import annotations


class Refusal(Exception):
    """A command that cannot go on: its message on stderr, then exit ``code``."""

    def __init__(self, message: str, code: int = 1, where: str | None = ""):
        super().__init__(message)
        self.message = message
        self.code = code
        self.where = where

    def line(self) -> str:
        """What the learner reads on stderr."""
        if self.where is None:
            return self.message
        return f"kata{' ' + self.where if self.where else ''}: {self.message}"
