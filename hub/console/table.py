"""A read-only table for the console's live data (calls, standings, hall).

Textual's DataTable redraws every visible cell of a table after any update of
it (its render caches are keyed on an update counter), which at 300 stations
and a burst of presses cost 100-200 ms a frame.  This table keeps one
rendered line per row and renders again only the rows whose cells changed;
a new order of the rows moves the rendered lines, and a frame is mostly
copying them.  Columns widen to fit (never shrink while shown, so a
changing cell does not re-measure a whole column); the header stays on top
while the rows scroll; the cursor row follows its key when rows move.
"""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.events import Click
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

Cell = Any                 # str or rich Text


def _text(cell: Cell) -> Text:
    # plain strings become Text without markup parsing (a name like "[x]"
    # is a name, not markup)
    return cell if isinstance(cell, Text) else Text(str(cell))


def _same(a: Cell, b: Cell) -> bool:
    if isinstance(a, Text) and isinstance(b, Text):     # Text's == ignores the style
        return a.plain == b.plain and a.style == b.style and a.spans == b.spans
    return type(a) is type(b) and a == b


class LiveTable(ScrollView, can_focus=True):
    """Rows (key, cells) shown with `set_rows`; the selected row by key."""

    COMPONENT_CLASSES = {"live-table--header", "live-table--cursor", "live-table--even-row"}
    DEFAULT_CSS = """
    LiveTable {
        background: $surface;
        color: $foreground;
        height: auto;
        max-height: 100%;
        &:focus {
            background-tint: $foreground 5%;
            & > .live-table--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
        }
        & > .live-table--header { text-style: bold; background: $panel; color: $foreground; }
        & > .live-table--even-row { background: $surface-lighten-1 50%; }
        &:dark > .live-table--even-row { background: $surface-darken-1 40%; }
        & > .live-table--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
    }
    """
    BINDINGS = [
        Binding("up", "cursor(-1)", "up", show=False),
        Binding("down", "cursor(1)", "down", show=False),
        Binding("pageup", "page(-1)", "page up", show=False),
        Binding("pagedown", "page(1)", "page down", show=False),
        Binding("home", "cursor_to(0)", "first", show=False),
        Binding("end", "cursor_to(-1)", "last", show=False),
    ]
    PAD = 1                # blank cells each side of a cell

    def __init__(self, *columns: str, zebra_stripes: bool = False, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.columns = list(columns)
        self.widths = [cell_len(c) for c in columns]
        self.zebra_stripes = zebra_stripes
        self.cursor_row = 0
        self._keys: list[str] = []
        self._cells: dict[str, list[Cell]] = {}        # as given, to compare with the next rows
        self._lines: dict[str, Strip] = {}             # key -> the row rendered, unstyled
        self._header: Strip | None = None
        self._styles = (Style(),) * 4                  # base, header, cursor, even row: per frame

    # ---------------------------------------------------------------- data
    @property
    def row_count(self) -> int:
        return len(self._keys)

    @property
    def keys(self) -> list[str]:
        return list(self._keys)

    def row(self, key: str) -> list[Text]:
        return [_text(c) for c in self._cells[key]]

    def selected_key(self) -> str | None:
        return self._keys[self.cursor_row] if 0 <= self.cursor_row < len(self._keys) else None

    def set_rows(self, rows: list[tuple[str, list[Cell]]]) -> None:
        """Show these rows in this order.  Only rows whose cells changed are
        rendered again; the selected row (by key) stays selected."""
        selected, old_cursor = self.selected_key(), self.cursor_row
        keys = [k for k, _ in rows]
        widened = False
        changed: list[str] = []
        for key, cells in rows:
            old = self._cells.get(key)
            if old is not None and len(old) == len(cells) and all(map(_same, old, cells)):
                continue
            changed.append(key)
            self._cells[key] = cells
            self._lines.pop(key, None)
            for x, c in enumerate(cells):
                n = cell_len(c.plain if isinstance(c, Text) else str(c))
                if n > self.widths[x]:
                    self.widths[x] = n
                    widened = True
        old_keys = self._keys
        moved = keys != old_keys
        if moved:
            for gone in self._cells.keys() - set(keys):
                del self._cells[gone]
                self._lines.pop(gone, None)
            self._keys = keys
        if widened:
            self._lines.clear()
            self._header = None
        if selected is not None and moved and selected in self._cells:
            self.cursor_row = keys.index(selected)
        self.cursor_row = max(0, min(self.cursor_row, len(keys) - 1))
        size = Size(self._row_width(), len(keys) + 1)
        if size != self.virtual_size:
            self.virtual_size = size
        if widened:
            self.refresh()
            return
        # what is to be drawn again: the rows changed in place, when the
        # order changed every row from the first that is not where it was,
        # and the cursor's old and new rows;
        # of those, only what is in view (one region, once)
        spans = []
        if changed:
            index = {k: i for i, k in enumerate(keys)}
            spans += [(index[k], index[k]) for k in changed]
        if moved:
            first = next((i for i, (a, b) in enumerate(zip(old_keys, keys)) if a != b),
                         min(len(old_keys), len(keys)))
            spans.append((first, max(len(old_keys), len(keys)) - 1))
        if self.cursor_row != old_cursor:      # the cursor's style, off one row and onto another
            spans += [(old_cursor, old_cursor), (self.cursor_row, self.cursor_row)]
        top = round(self.scroll_y)
        bottom = top + self._rows_in_view() - 1                          # the last row in view
        spans = [(max(a, top), min(b, bottom)) for a, b in spans if a <= bottom and b >= top]
        if spans:
            lo, hi = min(a for a, _ in spans), max(b for _, b in spans)
            self.refresh_lines(lo + 1, hi - lo + 1)

    # ---------------------------------------------------------------- drawing
    def _row_width(self) -> int:
        return sum(self.widths) + 2 * self.PAD * len(self.widths)

    def _render_cells(self, cells: list[Cell]) -> Strip:
        pad = " " * self.PAD
        line = Text(no_wrap=True)
        for width, c in zip(self.widths, cells):
            t = _text(c).copy()
            t.truncate(width, overflow="ellipsis", pad=True)
            line.append(pad)
            line.append_text(t)
            line.append(pad)
        return Strip(line.render(self.app.console), self._row_width())

    def render_lines(self, crop: Region) -> list[Strip]:
        # the styles once a frame, not once a line (each costs a CSS lookup)
        base = self.rich_style
        self._styles = (base, base + self.get_component_rich_style("live-table--header"),
                        base + self.get_component_rich_style("live-table--cursor"),
                        base + self.get_component_rich_style("live-table--even-row"))
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        base, header, cursor, even = self._styles
        if y == 0:
            if self._header is None:
                self._header = self._render_cells(self.columns)
            line, style = self._header, header
        else:
            i = scroll_y + y - 1
            if i >= len(self._keys):
                return Strip.blank(width, base)
            key = self._keys[i]
            if key not in self._lines:
                self._lines[key] = self._render_cells(self._cells[key])
            line = self._lines[key]
            style = cursor if i == self.cursor_row else even if self.zebra_stripes and i % 2 else base
        # the line's style across the whole width (header, cursor, stripes)
        return line.apply_style(style).crop_extend(scroll_x, scroll_x + width, style)

    # ---------------------------------------------------------------- cursor
    def _rows_in_view(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)        # below the header

    def move_cursor(self, row: int) -> None:
        if not self._keys:
            return
        old, self.cursor_row = self.cursor_row, max(0, min(row, len(self._keys) - 1))
        self.refresh_line(old + 1)
        self.refresh_line(self.cursor_row + 1)
        visible = self._rows_in_view()
        top = round(self.scroll_y)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False)
        elif self.cursor_row >= top + visible:
            self.scroll_to(y=self.cursor_row - visible + 1, animate=False)

    def action_cursor(self, step: int) -> None:
        self.move_cursor(self.cursor_row + step)

    def action_page(self, direction: int) -> None:
        self.move_cursor(self.cursor_row + direction * max(1, self._rows_in_view() - 1))

    def action_cursor_to(self, row: int) -> None:
        self.move_cursor(row if row >= 0 else len(self._keys) - 1)

    def on_click(self, event: Click) -> None:
        if event.y >= 1:
            self.move_cursor(round(self.scroll_y) + event.y - 1)
