"""`tabletimer formats` and `tabletimer dry-run`: the competition formats and
scenario check commands.  hub/cli/main.py registers them with
`cli_formats.add_subcommands(sub)`.  Each command function returns an exit
code: 0 fine, 1 a scenario's expectations differ, 2 bad input."""

from __future__ import annotations

import json
import sys

from ..rules.formats import (Format, FormatError, all_presets, describe, fmt_duration, format_text,
                      load_format)
from ..rules.relay import relay_states
from ..rules.scenario import ScenarioError, check_expectations, load_scenario
from ..rules.standings import StandingRow, row_dict


def add_subcommands(sub) -> None:
    """Register `formats [show NAME]` and `dry-run SCENARIO` on the
    subparsers object of the `tabletimer` command."""
    f = sub.add_parser("formats", help="list the competition format presets (`formats show NAME` prints one)",
                       description="List the shipped competition formats, or print one to copy and edit.")
    f.set_defaults(func=cmd_formats)
    fsub = f.add_subparsers(dest="formats_cmd")
    s = fsub.add_parser("show", help="print a preset (or check and print a format file)")
    s.add_argument("name", help="preset name (see `tabletimer formats`) or path to a .toml format file")
    s.add_argument("--explain", action="store_true",
                   help="print what the format does instead of the file text")
    s.set_defaults(func=cmd_formats_show)

    d = sub.add_parser("dry-run", help="rank a scenario file (docs/scenarios.md) and print the standings",
                       description="Rank a written competition (docs/scenarios.md) without boards or a hub.")
    d.add_argument("scenario", help="scenario .toml file")
    d.add_argument("--json", action="store_true", help="machine-readable standings (a JSON list)")
    d.add_argument("--splits", action="store_true", help="also print each puzzle's split time")
    d.set_defaults(func=cmd_dry_run)


def cmd_formats(args) -> int:
    if getattr(args, "formats_cmd", None) == "show":
        return cmd_formats_show(args)
    try:
        presets = all_presets()
    except FormatError as e:        # a broken preset is a bug, but say which
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(format_table(presets))
    print("\n`tabletimer formats show NAME` prints one; copy it to a file, edit it, and give the"
          " file's path wherever a format name is accepted.")
    return 0


def format_table(presets: list[Format]) -> str:
    rows = [("name", "entrants", "limit", "puzzles", "summary")]
    for f in presets:
        rows.append((f.name, f.kind_text(), fmt_duration(f.time_limit_ms), f.puzzles_text(), f.summary))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "  " + r[4] for r in rows)


def cmd_formats_show(args) -> int:
    try:
        fmt = load_format(args.name)
        text = format_text(args.name)
    except FormatError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {args.name}: {e}", file=sys.stderr)
        return 2
    print(describe(fmt) if args.explain else text.rstrip("\n"))
    return 0


def cmd_dry_run(args) -> int:
    try:
        scn = load_scenario(args.scenario)
    except (ScenarioError, FormatError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    rows = scn.standings()
    if args.json:
        from ..rules.relay import relay_view
        fmt = scn.format
        relay = (relay_view(fmt, scn.entrants, scn.facts, scn.now_ms, fmt.time_limit_ms)
                 if fmt.relay is not None and scn.now_ms is not None else [])
        print(json.dumps({"now": scn.now_ms, "standings": [row_dict(r) for r in rows], "relay": relay}, indent=2))
    else:
        fmt = scn.format
        when = (f"at {fmt_duration(scn.now_ms)} (live)" if scn.now_ms is not None
                else "after time-up")
        print(f"{scn.title} - {fmt.name}: {fmt.title}; standings {when}")
        print(standings_table(rows, fmt, splits=args.splits))
        if fmt.relay is not None and scn.now_ms is not None:
            print(relay_table(scn))
    problems = check_expectations(scn, rows)
    for p in problems:
        print(f"expectation not met: {p}", file=sys.stderr)
    return 1 if problems else 0


def relay_table(scn) -> str:
    """Who is at which relay station at the scenario's `now`."""
    states = relay_states(scn.format, scn.entrants, scn.facts, scn.now_ms)
    lines = [f"relay ({scn.format.relay.name}) at {fmt_duration(scn.now_ms)}:"]
    for e in scn.entrants:
        st = states[e.id]
        if st is None:
            lines.append(f"  {e.id}: not in the relay")
            continue
        if st.complete:
            lines.append(f"  {e.id}: complete, no more signals")
            continue
        names = [m.name for m in e.members]
        who = lambda m: names[m - 1] if m <= len(names) else f"member {m}"    # noqa: E731
        at = ", ".join(f"{who(m)} @ {s}" for m, s in sorted(st.positions.items(), key=lambda x: x[1]))
        done = ", ".join(f"{s} by {who(f.member) if f.member else '?'} {fmt_duration(f.at_ms)}"
                         for s, f in sorted(st.finished.items()))
        moves = "; nobody moves" if not st.next_moves else ""
        lines.append(f"  {e.id}: {at}; finished: {done or 'none'}; next signal"
                     f" {fmt_duration(st.next_signal_at)}{moves}")
    return "\n".join(lines)


def standings_table(rows: list[StandingRow], fmt: Format, splits: bool = False, notes: bool = True) -> str:
    """The standings as a text table (splits: each puzzle's under its row;
    notes: the ranking's remarks under their rows, for a format's author:
    the event's commands print them apart, for the desk, desk_notes)."""
    res = fmt.resolution_ms

    def t(ms: int | None) -> str:
        return fmt_duration(ms, res)

    pieces_first = fmt.order == "pieces"
    head = ("place", "award", "entrant", "name", "status", "pieces" if pieces_first else "time",
            "penalty" if not pieces_first else "deducted",
            "net" if not pieces_first else "last whole", "pieces" if not pieces_first else "", "")
    table = [head]
    extra: dict[int, list[str]] = {}
    for r in rows:
        flags = []
        if r.provisional:
            flags.append("provisional")
        if not r.official:
            flags.append("unofficial")
        if r.reason:
            flags.append(r.reason)
        ranked = r.status not in ("dns", "dq", "waiting")
        if pieces_first:
            cols = (str(r.pieces) if ranked else "-", str(r.deducted_pieces) if r.deducted_pieces else "-",
                    t(r.time_ms), "")
        else:
            cols = (t(r.time_ms), t(r.penalty_ms) if r.penalty_ms else "-", t(r.net_time_ms),
                    str(r.pieces) if ranked and r.status != "finished" else "")
        table.append((str(r.place) if r.place is not None else "-",
                      str(r.award_place) if r.award_place is not None else "-",
                      r.entrant, r.name, r.status, *cols, ", ".join(flags)))
        lines = []
        if splits and ranked:
            for sp in r.splits:
                what = (f"finished {t(sp.time_ms)} (lap {t(sp.lap_ms)})"
                        f"{'' if sp.confirmed else ', unconfirmed'}" if sp.status == "finished"
                        else "packed away (swap)" if sp.status == "packed"
                        else f"unfinished, {sp.credited} pieces counted")
                miss = [f"{n} {k}" for n, k in ((sp.missing_found, "missing"), (sp.missing_lost, "lost"),
                                                (sp.missing_adjacent, "adjacent")) if n]
                lines.append(f"puzzle {sp.puzzle} ({sp.pieces}): {what}"
                             f"{'; ' + ', '.join(miss) if miss else ''}")
        if notes:
            lines += [f"note: {n}" for n in r.notes]
        if lines:
            extra[len(table) - 1] = lines
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    out = []
    for i, row in enumerate(table):
        out.append("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        for line in extra.get(i, ()):
            out.append("      " + line)
    return "\n".join(out)
