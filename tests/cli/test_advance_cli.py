"""`tabletimer advance DIR --round final`: the plan, then the act, on a real
event folder (three groups of 12 with their logs, a final with an
[advancement] rule), and every refusal writing nothing
(hub/cli/advance.py, outputs/advancement_plan.py, event/folder/advance_files.py).
The oracle is tests/rules/test_advancement.py's, worked out there."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tabletimer.hub.cli import main as cli
from tabletimer.hub.event.folder import advance_files
from tabletimer.hub.event.log.rows import RowKind, kind_of
from tabletimer.hub.event.log.store import EventStore

from rules.test_advancement import COUNTRIES, OFFSET_MS

MIN = 60_000
RULE = """
[advancement]
from = ["group-a", "group-b", "group-c"]
total = 10
per_country = 1
"""
ORACLE = ["a1", "c1", "b1", "a2", "c2", "b2", "a4", "c6", "b9", "c12"]


def record(db: Path, rows: list[tuple[str, dict]], at: int) -> None:
    store = EventStore(db)
    try:
        for action, payload in rows:
            store.append("operator", action, dict(payload, who="desk"), at)
    finally:
        store.close()


def event(tmp: Path, countries: bool = True, run_c: bool = True) -> Path:
    """Groups a, b, c (the oracle's results: the k-th of group a in 38 + 2k min, ...; all confirmed,
    their time up 3 h ago) and a final of 10 seats (T01..T05, two buttons each)."""
    hall = tmp / "wjpc"
    start = int(time.time() * 1000) - 5 * 3_600_000
    for g in "abc":
        name = f"group-{g}"
        assert cli.main(["round", "add", str(hall), name, "--format", "cz-championship-individuals"]) == 0
        d = hall / "rounds" / name
        head = "id,name,country" if countries else "id,name"
        lines = [head] + [f"{g}{k},{g.upper()} {k}" + (f",{c}" if countries else "")
                          for k, c in enumerate(COUNTRIES[g].split(), start=1)]
        (d / "entrants.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (d / "stations.csv").write_text("board,button,table,entrant\n" + "".join(
            f"T{(k + 1) // 2:02},{2 - k % 2},T{(k + 1) // 2},{g}{k}\n" for k in range(1, 13)), encoding="utf-8")
        if g == "c" and not run_c:
            continue
        rows: list[tuple[str, dict]] = [("round_start", {"at": start})]
        for k in range(1, 13):
            rows.append(("press", {"entrant": f"{g}{k}", "puzzle": 1,
                                   "at": start + (38 + 2 * k) * MIN + OFFSET_MS[g]}))
            rows.append(("confirm", {"entrant": f"{g}{k}", "puzzle": 1}))
        record(d / "events.sqlite", rows, start)
    assert cli.main(["round", "add", str(hall), "final", "--format", "cz-championship-individuals"]) == 0
    f = hall / "rounds" / "final"
    with open(f / "format.toml", "a", encoding="utf-8") as out:
        out.write(RULE)
    (f / "stations.csv").write_text("board,button,table,entrant\n" + "".join(
        f"T{t:02},{b},Final {t},1\n" for t in range(1, 6) for b in (1, 2)), encoding="utf-8")
    return hall


def files(hall: Path) -> dict[str, bytes]:
    d = hall / "rounds" / "final"
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def advance(hall: Path, *extra: str) -> int:
    return cli.main(["advance", str(hall), "--round", "final", *extra])


def code_of(out: str) -> str:
    return out.split("--apply ")[1].split()[0]


def advance_rows(hall: Path) -> list[dict]:
    store = EventStore(hall / "rounds" / "final" / "events.sqlite")
    try:
        return [r["payload"] for r in store.events() if kind_of(r) is RowKind.OP_ADVANCE]
    finally:
        store.close()


def test_the_plan_then_the_act_then_a_withdrawal(tmp_path, capsys):
    hall = event(tmp_path)
    capsys.readouterr()
    before = files(hall)
    assert advance(hall) == 0
    out = capsys.readouterr()
    assert "this is the plan: nothing was written" in out.out and files(hall) == before
    assert "not official" in out.err and "--as-they-are" in out.err
    listed = [ln.split()[1] for ln in out.out.splitlines() if ln[:6].strip().rstrip(".").isdigit()]
    assert listed == ORACLE
    assert "R1   a3" in out.out
    code = code_of(out.out)
    # not official and no --as-they-are: refused, nothing written
    assert advance(hall, "--apply", code) == 2
    assert "are not official: add --as-they-are" in capsys.readouterr().err and files(hall) == before
    # a code that is not the plan's (a plan printed before a result changed): refused
    assert advance(hall, "--apply", "0123456789ab", "--as-they-are") == 2
    assert f"the plan now is {code}" in capsys.readouterr().err and files(hall) == before

    assert advance(hall, "--apply", code, "--as-they-are") == 0
    out = capsys.readouterr()
    assert "applied: 10 entrants" in out.out and "10 seated in the previous rounds' positions" in out.out
    final = hall / "rounds" / "final"
    _, rows = advance_files.read_rows(final / "entrants.csv")
    assert [r["id"] for r in rows] == ORACLE and rows[7]["country"] == "ESP"
    assert "group-c place 6: best of ESP" in rows[7]["notes"]
    _, seats = advance_files.read_rows(final / "stations.csv")
    assert [(s["board"], s["button"], s["entrant"]) for s in seats[:3]] == [
        ("T01", "1", "a1"), ("T01", "2", "c1"), ("T02", "1", "b1")]
    (row,) = advance_rows(hall)
    assert row["phase"] == "apply" and row["entrants"] == ORACLE and row["as_they_are"] == 1
    assert row["reserves"][:2] == ["a3", "c3"] and len(row["hash"]) == 64 and row["who"] == "desk"

    # applying twice: said, nothing written
    applied = files(hall)
    assert advance(hall, "--apply", code, "--as-they-are") == 0
    assert "already applied" in capsys.readouterr().out and files(hall) == applied

    # b2 withdraws: the first reserve a3 takes the place and b2's seat (T03 button 2)
    assert advance(hall, "--withdraw", "b2") == 0
    assert "a3 takes the place" in capsys.readouterr().out
    _, rows = advance_files.read_rows(final / "entrants.csv")
    assert [r["id"] for r in rows] == [e if e != "b2" else "a3" for e in ORACLE]
    _, seats = advance_files.read_rows(final / "stations.csv")
    assert ("T03", "2", "a3") in [(s["board"], s["button"], s["entrant"]) for s in seats]
    last = advance_rows(hall)[-1]
    assert (last["phase"], last["withdrawn"], last["reserve"]) == ("withdraw", "b2", "a3")
    # a4 (DEN's only finalist) withdraws: DEN's next best b5 comes in, not the reserve c3
    assert advance(hall, "--withdraw", "a4") == 0
    assert "b5 takes the place" in capsys.readouterr().out

    # a source result changes after the plan: a withdrawal is refused, saying what to do
    record(hall / "rounds" / "group-c" / "events.sqlite", [("dq", {"entrant": "c12", "reason": "late"})],
           int(time.time() * 1000))
    now = files(hall)
    assert advance(hall, "--withdraw", "c1") == 2
    err = capsys.readouterr().err
    assert "the source results changed since the plan was applied" in err and "--again" in err
    assert files(hall) == now
    # and a second apply of the new plan needs --again
    assert advance(hall) == 0
    out = capsys.readouterr()
    assert "the source results changed since" in out.err
    new = code_of(out.out.split("Apply it:")[1])
    assert advance(hall, "--apply", new, "--as-they-are") == 2
    assert "applied already" in capsys.readouterr().err and files(hall) == now
    assert advance(hall, "--apply", new, "--as-they-are", "--again") == 0

    # the round starts: its entrants are fixed
    record(final / "events.sqlite", [("round_start", {"at": int(time.time() * 1000)})], int(time.time() * 1000))
    now = files(hall)
    assert advance(hall, "--withdraw", "c1") == 2
    assert "has started: its entrants are fixed" in capsys.readouterr().err and files(hall) == now


@pytest.mark.parametrize("kw,says", [
    ({"run_c": False}, "group-c has not started"),
    ({"countries": False}, "has no country column: the rule's per_country needs one"),
])
def test_a_source_not_finished_or_without_countries_is_refused(tmp_path, capsys, kw, says):
    hall = event(tmp_path, **kw)
    capsys.readouterr()
    before = files(hall)
    assert advance(hall) == 0
    out = capsys.readouterr()
    assert says in out.err
    assert advance(hall, "--apply", code_of(out.out), "--as-they-are") == 2
    assert says in capsys.readouterr().err and files(hall) == before


def test_a_rule_asking_for_more_than_the_sources_hold_is_refused(tmp_path, capsys):
    hall = event(tmp_path)
    fmt = hall / "rounds" / "final" / "format.toml"
    fmt.write_text(fmt.read_text().replace("total = 10", "total = 40"))
    capsys.readouterr()
    before = files(hall)
    assert advance(hall) == 0
    out = capsys.readouterr()
    assert "asks for 40 entrants but group-a, group-b, group-c hold 36" in out.err
    assert advance(hall, "--apply", code_of(out.out), "--as-they-are") == 2
    assert files(hall) == before


def test_a_round_without_a_rule_says_how_to_add_one(tmp_path, capsys):
    hall = event(tmp_path)
    assert cli.main(["advance", str(hall), "--round", "group-a"]) == 2
    assert "has no [advancement]" in capsys.readouterr().err


def test_the_days_results_say_who_went_on(tmp_path, capsys):
    """`results --day`: each group says who of it went on to the final (after the apply, in the
    final's seating order: the oracle's a1, a2, a4 of group a), the final's podium beside them."""
    import json

    hall = event(tmp_path)
    capsys.readouterr()
    assert cli.main(["results", str(hall), "--day", "--json", "-"]) == 0
    doc = json.loads(capsys.readouterr().out)
    group_a = next(r for r in doc["rounds"] if r["round"] == "group-a")
    assert group_a["went_on"] == [{"round": "final", "entrants": []}]        # not applied yet
    assert advance(hall) == 0
    code = code_of(capsys.readouterr().out)
    assert advance(hall, "--apply", code, "--as-they-are") == 0
    capsys.readouterr()
    assert cli.main(["results", str(hall), "--day", "--json", "-"]) == 0
    doc = json.loads(capsys.readouterr().out)
    went = {r["round"]: [e["entrant"] for x in r["went_on"] for e in x["entrants"]] for r in doc["rounds"]}
    assert went == {"group-a": ["a1", "a2", "a4"], "group-b": ["b1", "b2", "b9"],
                    "group-c": ["c1", "c2", "c6", "c12"], "final": []}
    assert cli.main(["results", str(hall), "--day"]) == 0
    out = capsys.readouterr().out
    assert "Went on to final (3): A 1, A 2, A 4" in out and "Went on to final (4): C 1, C 2, C 6, C 12" in out
    html = tmp_path / "day.html"
    assert cli.main(["results", str(hall), "--day", "--html", str(html)]) == 0
    assert '<p class="went-on" data-to="final"><b>Went on to final (3)</b>: A 1, A 2, A 4</p>' in html.read_text()


def test_official_sources_are_applied_without_as_they_are(tmp_path, capsys):
    # the groups' time is up (3 h ago) and every finish is confirmed: the desk makes each group's
    # results official (`results --official`), and the plan is applied without --as-they-are
    hall = event(tmp_path)
    assert advance(hall) == 0
    out = capsys.readouterr()
    assert "official: none; not official: group-a, group-b, group-c (applied only with --as-they-are)" in out.out
    assert cli.main(["results", str(hall), "--round", "group-a", "--official", "--who", "Olga"]) == 0
    capsys.readouterr()
    assert advance(hall) == 0
    out = capsys.readouterr()
    assert "official: group-a; not official: group-b, group-c" in out.out
    assert "  group-a: 12 ranked, official" in out.out and "  group-b: 12 ranked, not official" in out.out
    assert advance(hall, "--apply", code_of(out.out)) == 2        # two sources still not official
    assert "the results of group-b, group-c are not official" in capsys.readouterr().err
    for g in "bc":
        assert cli.main(["results", str(hall), "--round", f"group-{g}", "--official", "--who", "Olga"]) == 0
    capsys.readouterr()
    assert advance(hall) == 0
    out = capsys.readouterr()
    assert "official: group-a, group-b, group-c; not official: none" in out.out
    assert "are not official" not in out.err and "--as-they-are" not in out.out
    assert advance(hall, "--apply", code_of(out.out)) == 0
    assert "applied: 10 entrants" in capsys.readouterr().out
    (row,) = advance_rows(hall)
    assert row["entrants"] == ORACLE and row["as_they_are"] == 0
