"""The console's LiveTable: rows follow set_rows (cells changed in place, a
new order, rows gone and added, wider cells), the selected row follows its
key, and what a terminal shows after Textual's incremental updates (only
the lines the table asked to redraw) is the same as the table's rows: no
line left stale, in view or scrolled into view."""

from __future__ import annotations

import asyncio

import pyte
from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.driver import Driver
from textual.geometry import Size

from tabletimer.hub.console.table import LiveTable
from waiting import settle

COLUMNS = ("place", "name")
HEIGHT = 8                  # the header and 7 rows


class Terminal:
    """The screen as a terminal shows it: the app runs with a driver (the
    public textual.driver.Driver) whose output, the escape codes Textual
    writes to a terminal, goes into pyte's VT100 emulator."""

    def __init__(self, width: int, height: int) -> None:
        self.size = (width, height)
        self.screen = pyte.Screen(width, height)
        self.stream = pyte.Stream(self.screen)
        self.frames = 0                                           # updates written so far

    def driver(self) -> type[Driver]:
        """The driver class to give the App (driver_class=...)."""
        terminal = self

        class ToTerminal(Driver):
            def write(self, data: str) -> None:
                terminal.stream.feed(data)

            def flush(self) -> None:                  # the app flushes once after each update
                terminal.frames += 1

            def start_application_mode(self) -> None:  # a terminal tells the app its size
                size = Size(*terminal.size)
                self.send_message(events.Resize(size, size))

            def disable_input(self) -> None:
                pass

            def stop_application_mode(self) -> None:
                pass

        return ToTerminal

    def text(self, y0: int, height: int) -> list[str]:
        return [line.rstrip() for line in self.screen.display[y0:y0 + height]]

    def grid(self, y0: int, height: int) -> list[list[pyte.screens.Char]]:
        """Each cell's character and its colours and attributes."""
        width = self.size[0]
        return [[self.screen.buffer[y][x] for x in range(width)] for y in range(y0, y0 + height)]


def expected(table: LiveTable, rows: list[tuple[str, list[str]]]) -> list[str]:
    """What the table should show: the header, then the rows from the
    scroll position, each cell padded to its column's width."""
    widths = [max(len(c), *(len(r[1][x]) for r in rows)) if rows else len(c)
              for x, c in enumerate(COLUMNS)]
    line = lambda cells: "".join(f" {c:<{w}} " for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    top = round(table.scroll_y)
    return [line(COLUMNS)] + [line(r[1]) for r in rows[top:top + HEIGHT - 1]] + \
        [""] * max(0, HEIGHT - 1 - len(rows[top:]))


class One(App):
    CSS = f"LiveTable {{ height: {HEIGHT}; width: 40; scrollbar-size: 0 0; }}"

    def compose(self) -> ComposeResult:
        yield LiveTable(*COLUMNS, id="t", zebra_stripes=True)


def test_rows_follow_set_rows_and_the_screen_shows_them(monkeypatch) -> None:
    # a terminal that shows 24-bit colour, whatever runs the tests: the
    # stripes and the cursor's row differ in their colours on the screen
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("COLORTERM", "truecolor")
    monkeypatch.delenv("NO_COLOR", raising=False)
    terminal = Terminal(60, 12)

    async def run() -> None:
        app = One(driver_class=terminal.driver())
        async with app.run_test(headless=False, size=terminal.size) as pilot:
            t = app.query_one(LiveTable)
            rows = [(f"k{i}", [str(i + 1), f"Puzzler {i}"]) for i in range(30)]

            async def on_screen(what: str) -> None:
                await settle(pilot, lambda: terminal.text(0, HEIGHT) == expected(t, rows), what,
                             seen=lambda: (terminal.text(0, HEIGHT), expected(t, rows)))

            async def same_when_redrawn_whole() -> None:
                # the styles too (cursor, stripes): what the table drew line
                # by line is what it draws when redrawn whole
                seen = terminal.grid(0, HEIGHT)
                frames = terminal.frames
                t.refresh()
                await settle(pilot, lambda: terminal.frames > frames, "a frame after the whole redraw")
                assert terminal.grid(0, HEIGHT) == seen

            async def show(new: list[tuple[str, list[str]]]) -> None:
                rows[:] = new
                t.set_rows([(k, list(c)) for k, c in new])
                assert t.keys == [k for k, _ in new]
                assert [[c.plain for c in t.row(k)] for k in t.keys] == [c for _, c in new]
                await on_screen("the new rows on the screen")
                await same_when_redrawn_whole()

            async def move(row: int) -> None:
                t.move_cursor(row)
                await on_screen(f"the cursor on row {row} on the screen")
                await same_when_redrawn_whole()

            await show(list(rows))
            await move(2)                                          # select k2
            await show([rows[0], rows[1], (rows[2][0], ["3", "Puzzler 2 (called)"])] + rows[3:])
            assert t.selected_key() == "k2"
            # out of view: changed, not drawn now, right when scrolled to
            await show(rows[:20] + [("k20", ["21", "Late change"])] + rows[21:])
            await show([rows[25]] + rows[:25] + rows[26:])         # from the bottom to the top
            assert t.selected_key() == "k2" and t.cursor_row == 3
            await show([r for r in rows if r[0] not in ("k1", "k4")] + [("new", ["-", "Newcomer"])])
            assert t.row_count == 29 and t.selected_key() == "k2"
            await show(rows[:1] + [(rows[1][0], ["2", "A much longer name than before"])] + rows[2:])
            t.focus()
            await pilot.press("end")                                # scroll to the last rows
            await settle(pilot, lambda: t.selected_key() == "new", "the cursor on the last row",
                         seen=t.selected_key)
            await show(rows[:-1])                  # the selected last row goes: the one above it is selected
            assert t.selected_key() == rows[-1][0]
            await show(rows + [("new", ["-", "Newcomer"])])
            await move(t.row_count - 1)
            await move(t.keys.index("k20"))                        # changed while out of view
            assert "Late change" in "\n".join(terminal.text(0, HEIGHT))
            await show([r if r[0] != "k27" else ("k27", ["28", "Changed in view"]) for r in rows])
            await pilot.press("home")
            await settle(pilot, lambda: t.selected_key() == rows[0][0], "the cursor on the first row",
                         seen=t.selected_key)
            await on_screen("the first rows on the screen")
            # fewer rows than the table's height (no scrolling to redraw it
            # all): the selected last row goes, the cursor is on the one above
            await show(rows[:3])
            await move(2)
            await show(rows[:2])
            assert t.selected_key() == rows[1][0]
            # a change of style alone is a change
            t.set_rows([(k, [c[0], Text(c[1], "green")]) if k == rows[0][0] else (k, list(c))
                        for k, c in rows])
            assert t.row(rows[0][0])[1].style == "green"

    asyncio.run(run())
