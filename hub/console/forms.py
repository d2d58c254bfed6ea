"""The console's operator actions as forms: the fields each asks for, how
their text becomes (action, payload) for HubService.act, and whether the
action must be confirmed before it is recorded."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol

from ..core import before_start
from ..core.service import HubService, with_defaults
from ..event.fold.official import OfficialMark
from ..rules.formats import fmt_duration
from ..rules.timetext import parse_clock_time, parse_duration_ms, start_clock_doubt


class Desk(Protocol):
    """What the forms and their screens need of the console that opens them
    (app.py's ConsoleApp): its service, its operator, what is selected, and
    the checking, describing and recording of an action."""
    service: HubService
    who: str

    def selected(self, table_id: str) -> str | None: ...
    def selected_entrant(self) -> str: ...
    def selected_board(self) -> str: ...
    def entrant_id(self, text: str) -> str: ...
    def check(self, action: str, payload: dict) -> None: ...
    def describe(self, action: str, payload: dict) -> str: ...
    def perform(self, action: str, payload: dict, why: str) -> dict: ...


PRESS_ID = "press id (either form: T07-5 or T07/3/5)"


# ------------------------------------------------------------------ parsing

def parse_int(text: str, what: str, default: int | None = None) -> int | None:
    t = text.strip()
    if not t:
        return default
    try:
        return int(t)
    except ValueError:
        raise ValueError(f"{what}: a whole number, not {text!r}") from None


# ------------------------------------------------------------------ forms

@dataclass
class FormField:
    name: str
    label: str
    default: str = ""
    placeholder: str = ""


@dataclass
class ActionForm:
    """One operator action: its fields, how they become (action, payload),
    and whether it must be confirmed before it is recorded."""
    key: str
    title: str
    fields: list[FormField]
    build: Callable[[dict[str, str]], tuple[str, dict]]
    destructive: bool = False
    why_required: bool = False
    why_missing: str = ""      # a why_required form's words when it has none ("" : "KEY: a reason (why) is needed")
    note: str = ""
    # why these values are asked about first, though the action is not destructive (a
    # round start typed as a clock time far in the past or ahead); None: no question
    doubt: Callable[[dict[str, str]], "str | None"] | None = None
    # not an action on this console's round: run(values, why) does it (the draw and the seating,
    # core/before_start.py) and returns what it made, shown in a dialog; None: an action
    run: Callable[[dict[str, str], str], str] | None = None
    # run's values for "do it again" (the draw again: a new seed); None: no such button
    again: Callable[[dict[str, str]], dict[str, str]] | None = None


def _not_an_action(v: dict[str, str]) -> tuple[str, dict]:
    raise ValueError("done by the form itself, not an action of this round")


def before_start_forms(console: Desk) -> dict[str, ActionForm]:
    """The team draw and the seating of a round before its start (of this
    console's round, or another of the event), as `tabletimer draw`/`seat`
    make them: core/before_start.py, the same checks and messages."""
    found = before_start.folder_of_log(getattr(console.service.store, "path", None) or Path("."))
    hall, own = found if found is not None else (None, "")
    default = before_start.default_round(hall, own) if hall is not None else ""

    def place(v: dict[str, str]) -> tuple[Path, str]:
        if hall is None:
            raise ValueError("this console has no event folder here (a console on another laptop): draw and "
                             "seat on the laptop with the event folder (`tabletimer draw`, `tabletimer seat`)")
        name = v["round"].strip() or own
        return hall, name

    def stale(name: str) -> str:
        return (f"\nThis console shows round {own}'s entrants and stations as it opened them: open it again "
                f"to see these." if name == own else "")

    def draw(v: dict[str, str], why: str) -> str:
        where, name = place(v)
        size = parse_int(v["teams_of"], "teams of")
        if size is None:
            raise ValueError("teams of: how many members a team (e.g. 4)")
        apart, balance = v["apart_by"].strip() or None, v["balance_by"].strip() or None
        try:
            made = before_start.draw_round(where, name, size, parse_int(v["seed"], "seed"), apart, balance,
                                           who=console.who, why=why)
        except before_start.Refused as e:
            raise ValueError(str(e)) from None
        return f"Round {made.round}\n" + "\n".join(before_start.draw_lines(made, apart, balance)) + stale(made.round)

    def seat(v: dict[str, str], why: str) -> str:
        where, name = place(v)
        warned: list[str] = []
        try:
            by, rank_of = before_start.seat_order(v["by"].split(), "by")
            made = before_start.seat_round(where, name, by, rank_of, parse_int(v["seed"], "seed"),
                                           who=console.who, why=why, warn=warned.append)
        except before_start.Refused as e:
            raise ValueError(str(e)) from None
        tables: dict[str, list[str]] = {}
        names = {e.id: e.name for e in made.entrants}
        for st in made.seats:
            seated = tables.setdefault(st.table, [])
            if st.entrant not in seated:
                seated.append(st.entrant)
        return "\n".join(
            [f"Round {made.round}: seated {made.seated} by {by}" + (f" {' '.join(rank_of)}" if rank_of else "")
             + (f", seed {made.seed}" if made.seed is not None else "") + f" at {len(tables)} tables of "
             f"{made.source}; recorded in the log (row #{made.row}) and written to {made.folder / 'stations.csv'}"]
            + [f"warning: {w}" for w in warned]
            + [f"  {t}: " + ", ".join(f"{e} {names.get(e, '')}".strip() for e in es) for t, es in tables.items()]
            + [f"the table cards: `tabletimer cards {where} --round {made.round} --html FILE`"]) + stale(made.round)

    R = FormField("round", "round (blank = this console's" + (f", {own}" if own else "") + ")", default)
    return {
        "draw": ActionForm("draw", "Team draw (before the round's start)", [
            R, FormField("teams_of", "teams of (members a team)", "4"),
            FormField("seed", "draw number (seed; blank = a new one)", "", "e.g. 4711"),
            FormField("apart_by", "keep apart by (a column of registrations.csv: club, family; blank = none)", ""),
            FormField("balance_by", "balance by the places of an earlier round (blank = no)", ""),
        ], _not_an_action, run=draw, again=lambda v: dict(v, seed=""),
            note="the round's registrations.csv drawn into teams, its entrants.csv written, the draw recorded "
                 "in its log; refused once its start is recorded"),
        "seat": ActionForm("seat", "Seating (before the round's start)", [
            R, FormField("by", "by: random | rank-of ROUND [ROUND ...] | name | registration", "random"),
            FormField("seed", "random: its number (blank = a new one)", ""),
        ], _not_an_action, run=seat,
            note="the round's entrants at the hall's tables (hall.csv), its stations.csv written, the seating "
                 "recorded in its log; refused once its start is recorded"),
    }


def action_forms(console: Desk) -> dict[str, ActionForm]:
    """The console's forms by key, filled in from what is selected now."""
    svc = console.service
    now = svc.clock.now_ms()
    comp = svc.competition
    call = console.selected("calls") or ""
    entrant = console.selected_entrant()

    def start(v: dict[str, str]) -> tuple[str, dict]:
        if v["at"].strip() and v["in_s"].strip():
            raise ValueError("round_start: give either 'at' or 'in seconds', not both")
        at = now
        if v["at"].strip():
            at = parse_clock_time(v["at"], now)
        elif v["in_s"].strip():
            at = now + parse_duration_ms(v["in_s"], "in")
        duration = parse_duration_ms(v["limit"], "limit") if v["limit"].strip() else None
        words = v["warn"].replace(",", " ").split()
        warnings: list[int] | None = None       # blank: the format's, as `act` and every path gives them
        if [w.lower() for w in words] in (["none"], ["-"]):
            warnings = []
        elif words:
            warnings = [parse_duration_ms(w, "warnings") for w in words]
        return "round_start", with_defaults(comp.format, "round_start",
                                            {"at": at, "duration": duration, "warnings": warnings})

    def start_doubt(v: dict[str, str]) -> str | None:
        if not v["at"].strip():
            return None
        return start_clock_doubt(v["at"], parse_clock_time(v["at"], now), now)

    def confirm(v: dict[str, str]) -> tuple[str, dict]:
        return "confirm", {"press_id": v["press_id"].strip(),
                           "missing_found": parse_int(v["found"], "found", 0),
                           "missing_lost": parse_int(v["lost"], "lost", 0),
                           "missing_adjacent": parse_int(v["adjacent"], "adjacent", 0)}

    def void(v: dict[str, str]) -> tuple[str, dict]:
        return "void", {"press_id": v["press_id"].strip()}

    def count(v: dict[str, str]) -> tuple[str, dict]:
        return "count", {"entrant": console.entrant_id(v["entrant"]),
                         "puzzle": parse_int(v["puzzle"], "puzzle", 1),
                         "placed": parse_int(v["placed"], "placed"),
                         "remaining": parse_int(v["remaining"], "remaining")}

    def offset(v: dict[str, str]) -> tuple[str, dict]:
        start_ms = comp.start_ms
        if v["offset"].strip():
            off = parse_duration_ms(v["offset"], "offset")
        elif start_ms is None:
            raise ValueError("start_offset: the round has not started")
        else:
            off = now - start_ms
        return "start_offset", {"entrant": console.entrant_id(v["entrant"]), "offset_ms": off}

    def entrant_only(action: str) -> Callable[[dict[str, str]], tuple[str, dict]]:
        return lambda v: (action, {"entrant": console.entrant_id(v["entrant"])})

    def dq(v: dict[str, str]) -> tuple[str, dict]:
        return "dq", {"entrant": console.entrant_id(v["entrant"]), "reason": v["reason"].strip()}

    def replace(v: dict[str, str]) -> tuple[str, dict]:
        if not v["absent"].strip():
            raise ValueError("replace: absent (the entrant who did not come) is needed")
        if not v["entrant"].strip():
            raise ValueError("replace: entrant (who takes the station: a listed one, or a new id) is needed")
        p = {"absent": console.entrant_id(v["absent"]), "entrant": console.entrant_id(v["entrant"])}
        return "replace", dict(p, **{k: v[k].strip() for k in ("name", "members", "eligible") if v[k].strip()})

    def check_in(v: dict[str, str]) -> tuple[str, dict]:
        undo = v["undo"].strip().lower()
        if undo not in ("", "y", "yes", "n", "no"):
            raise ValueError(f"check_in: undo is y or blank, not {v['undo']!r}")
        return "check_in", {"entrant": console.entrant_id(v["entrant"]), "present": 0 if undo in ("y", "yes") else 1}

    def identify(v: dict[str, str]) -> tuple[str, dict]:
        if not v["board"].strip():
            raise ValueError("identify: board is needed")
        return "identify", {"board": v["board"].strip()}

    def correct(v: dict[str, str]) -> tuple[str, dict]:
        t = v["time"].strip()
        if not t:
            raise ValueError("correct: the new time is needed")
        if t.isdigit() and len(t) >= 11:
            at = int(t)
        else:
            if comp.start_ms is None:
                raise ValueError("correct: the round has not started (give hub ms)")
            at = comp.start_ms + parse_duration_ms(t, "time")
        return "correct", {"press_id": v["press_id"].strip(), "at": at}

    def resolve(v: dict[str, str]) -> tuple[str, dict]:
        row = parse_int(v["conflict"], "conflict")
        if row is None:
            raise ValueError("resolve: the conflict's log row is needed (the alert's 'log row #N')")
        return "resolve", {"conflict": row}

    open_conflicts = svc.read(lambda c, _now: c.open_conflicts())
    door = svc.read(lambda c, _now: c.check_in_summary())
    official_now, not_yet = svc.read(lambda c, t: (c.official_book().official(), c.official_problem(t)))
    E = FormField("entrant", "entrant (id or name)", entrant)
    return {
        "start": ActionForm("round_start", "Start the round", [
            FormField("in_s", "in (seconds or m:ss from now; blank = now)", "", "e.g. 120"),
            FormField("at", "or at (local clock HH:MM[:SS], or hub ms)", "", "e.g. 10:30"),
            FormField("limit", "limit (h:mm:ss; blank = the format's "
                      f"{fmt_duration(comp.format.time_limit_ms)})", ""),
            FormField("warn", "warnings before the end (h:mm:ss, space separated; blank = the format's "
                      f"{' '.join(map(fmt_duration, comp.format.default_warnings_ms())) or 'none'}; "
                      "none = no warnings)", "", "e.g. 10:00 1:00"),
        ], start, destructive=comp.round_start_row() is not None,
            note="a new start replaces the armed/running one" if comp.round_start_row() else "",
            doubt=start_doubt),
        "confirm": ActionForm("confirm", "Confirm the selected call", [
            FormField("press_id", PRESS_ID, call),
            FormField("found", "missing pieces found", "0"),
            FormField("lost", "missing pieces lost", "0"),
            FormField("adjacent", "missing adjacent (production fault)", "0"),
        ], confirm),
        "void": ActionForm("void", "Void the selected call", [FormField("press_id", PRESS_ID, call)],
                           void, destructive=True),
        "count": ActionForm("count", "Piece count", [
            E, FormField("puzzle", f"puzzle (1..{len(comp.format.puzzles)})", "1"),
            FormField("placed", "placed (or leave blank and give remaining)", ""),
            FormField("remaining", "remaining", ""),
        ], count),
        "start_offset": ActionForm("start_offset", "Restart an entrant's clock", [
            E, FormField("offset", "start after the round start (h:mm:ss; blank = now)", ""),
        ], offset, note="" if comp.format.start_offsets else
            "this format has no per-entrant start: the offset is recorded but ignored"),
        "dns": ActionForm("dns", "Did not start", [E], entrant_only("dns"), destructive=True),
        "dq": ActionForm("dq", "Disqualify", [E, FormField("reason", "reason (required)", "")], dq,
                         destructive=True),
        "replace": ActionForm("replace", "Give an absent entrant's station to another participant", [
            FormField("absent", "absent entrant (id or name)", entrant),
            FormField("entrant", "who takes the station: a listed entrant (id or name), or a new id", "",
                      "e.g. R1"),
            FormField("name", "a new entrant's name (blank for a listed one)", ""),
            FormField("members", "a new pair's or team's members (A|B|...)", ""),
            FormField("eligible", "a new entrant's eligibility (yes / no, or yes|no|... per member)", ""),
        ], replace, destructive=True, note=(
            f"the station may go {fmt_duration(comp.format.no_show_after_ms)} after the start (before: "
            "asks first); the time runs from the round's start" if comp.format.no_show_after_ms is not None
            else "this format lets no station go to another (entrants.no_show_after is not set)")),
        "check_in": ActionForm("check_in", "Check in an entrant at the door", [
            E, FormField("undo", "undo a check-in made by mistake (y; blank = present)", ""),
        ], check_in, note=door.text() + (f"; not here yet: {', '.join(door.absent[:10])}"
                                         + (" ..." if len(door.absent) > 10 else "") if door.absent else "")),
        "identify": ActionForm("identify", "Identify a board (buzz and blink)", [
            FormField("board", "board", console.selected_board())], identify),
        "correct": ActionForm("correct", "Correct a time", [
            FormField("press_id", PRESS_ID, call),
            FormField("time", "new time since the round start (h:mm:ss[.fff]) or hub ms", ""),
        ], correct, destructive=True, why_required=True),
        "resolve": ActionForm("resolve", "Resolve a conflict (its CONFLICT alert ends)", [
            FormField("conflict", "the conflict's log row (the alert's 'log row #N')",
                      str(open_conflicts[0].row) if open_conflicts else ""),
        ], resolve, why_required=True,
            note=open_conflicts[0].text if open_conflicts else "no conflict is open"),
        **results_forms(official_now, not_yet),
    }


def results_forms(official_now: "OfficialMark | None", not_yet: str | None) -> dict[str, ActionForm]:
    """Making the round's results official, and reopening them (who: the
    console's operator; why: required to reopen), as `tabletimer results
    --official`/`--reopen` do: the same checks (event/fold/official.py), the
    same refusals, each asked first."""
    return {
        "official": ActionForm("official", "Make the round's results official", [], lambda v: ("official", {}),
                               destructive=True, note=(
            f"the results are official already ({official_now.text()}): reopen them first (u)"
            if official_now is not None else f"not yet: {not_yet}" if not_yet else
            "time is up and every check is done: after this, every change of a result is refused until "
            "the results are reopened (u), saying why")),
        "reopen": ActionForm("reopen", "Reopen the official results", [], lambda v: ("reopen", {}),
                             destructive=True, why_required=True,
                             why_missing="reopen: say why the results are reopened (logged with who reopened "
                                         "them and shown on the sheet); nothing recorded",
                             note=(f"the results are {official_now.text()}; why is required, logged and shown "
                                   "on the sheet; make them official again (f) when done"
                                   if official_now is not None else "the results are not official: nothing to "
                                                                    "reopen")),
    }
