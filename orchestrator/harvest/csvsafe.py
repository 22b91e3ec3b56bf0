"""Every CSV the product writes goes through :func:`writer`: cells cannot become spreadsheet formulas.

Why: QA exports carry text from crawled servers (a MIME type is whatever a server sent as
Content-Type, e.g. ``=cmd|' /C calc'!A0``) and from curators (definition names, notes). Opened in a
spreadsheet, a cell starting with ``=``, ``+``, ``-`` or ``@`` (or TAB/CR, which some programs skip
before such a character) is evaluated as a formula: CSV injection. As OWASP advises, such a cell is
prefixed with a single quote, which spreadsheets show as text and do not evaluate.

A plain number (``-5``, ``+12.5%``, ``1,234.5``) is left as it is: a spreadsheet reads it as the number
it is and nothing in it can call a function, so the QA export's changes stay numbers.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from typing import Any, Protocol

#: First characters that make a spreadsheet cell a formula (OWASP "CSV Injection").
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?\d[\d,]*(?:\.\d+)?%?")


def safe_cell(value: Any) -> Any:
    """``value``, with a ``'`` in front if it is text a spreadsheet would evaluate as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


class _Stream(Protocol):
    def write(self, s: str, /) -> Any: ...


class SafeWriter:
    """``csv.writer`` whose rows are neutralised cell by cell (:func:`safe_cell`)."""

    def __init__(self, stream: _Stream, **options: Any) -> None:
        self._writer = csv.writer(stream, **options)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._writer.writerow([safe_cell(v) for v in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def writer(stream: _Stream, **options: Any) -> SafeWriter:
    """The product's CSV writer: ``csv.writer`` options, formula cells neutralised."""
    return SafeWriter(stream, **options)
