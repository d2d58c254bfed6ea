"""The layout's arrows (docs/architecture.md, "Parts"): each part of the hub
imports only the parts below it, shared/ imports nothing of ours, the hub
imports the tools only from its command line, no module reads another
module's private names (nor a test, but for those left listed), and no
modules import each other in a circle (hub/, firmware/, shared/, tools/;
every import counts, those inside a function or under TYPE_CHECKING too).  Read from the source with ast:
nothing is run."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tabletimer import repo_root

ROOT = repo_root()

# part -> the parts it may import (besides itself); the order is the arrows' direction
# the event part's rooms, each a part of its own
EVENT = ("hub.event.time", "hub.event.log", "hub.event.folder", "hub.event.fold", "hub.event.actions")
MAY_IMPORT = {
    "shared": set(),
    "hub.rules": {"shared"},
    "hub.i18n": set(),              # the catalogues (Babel): beside the rules, importing nothing of ours
    # the event's rooms: time, log and folder at the bottom, the fold on them, the actions on top
    "hub.event.time": {"hub.rules", "shared"},
    "hub.event.log": {"hub.event.time", "hub.rules", "shared"},
    "hub.event.folder": {"hub.i18n", "hub.rules", "shared"},
    "hub.event.fold": {"hub.event.folder", "hub.event.log", "hub.event.time", "hub.rules", "shared"},
    "hub.event.actions": {"hub.event.fold", "hub.event.folder", "hub.event.log", "hub.event.time",
                          "hub.rules", "shared"},
    "hub.protocol": {*EVENT, "hub.rules", "shared"},
    "hub.broker": {"hub.protocol", *EVENT, "hub.rules", "shared"},
    "hub.fleet": {"hub.protocol", *EVENT, "hub.rules", "shared"},
    "hub.core": {"hub.fleet", "hub.protocol", *EVENT, "hub.rules", "shared"},
    "hub.link": {"hub.core", "hub.broker", "hub.protocol", *EVENT, "hub.rules", "shared"},
    "hub.outputs": {"hub.i18n", *EVENT, "hub.rules", "shared"},
    "hub.console": {"hub.core", "hub.fleet", "hub.protocol", *EVENT, "hub.rules", "shared"},
    "hub.web": {"hub.i18n", "hub.core", "hub.broker", "hub.fleet", "hub.protocol", *EVENT, "hub.rules", "hub.outputs",
                "shared"},
    "hub.runtime": {"hub.i18n", "hub.web", "hub.console", "hub.outputs", "hub.link", "hub.core", "hub.fleet", "hub.broker",
                    "hub.protocol", *EVENT, "hub.rules", "shared"},
    "hub.cli": {"hub.i18n", "hub.runtime", "hub.web", "hub.console", "hub.outputs", "hub.link", "hub.core", "hub.fleet",
                "hub.broker", "hub.protocol", *EVENT, "hub.rules", "shared", "tools"},
}
# parts made of rooms of their own (hub/event/log, ...): each room is a part
ROOMS_INSIDE = {"event"}
# the names of a namedtuple's public API start with an underscore
NAMEDTUPLE_API = {"_asdict", "_replace", "_fields", "_make"}
# the standard library's documented names that start with an underscore
STDLIB_PRIVATE = {("os", "_exit")}
# private names of a third party the hub must reach (and why)
FOREIGN_PRIVATE = {
    ("hub/broker/broker_child.py", "_subscriptions"): "amqtt 0.12.1 iterates it unsafely: the patch swaps it",
    ("hub/link/mqtt_client.py", "_set_as_published"): "paho 2.2.0 (pinned): a message the hub's client "
                                                        "writes or retires is marked as paho marks it",
}
# private names the tests still read, left to their rooms' owners (issue 46 asks for them to be
# rewritten against public interfaces): (test file, name) -> what for.  A new one fails the check,
# and so does one listed here that is no longer read (take it out).
TESTS_PRIVATE_LEFT = {
    **{("tests/broker/test_embedded_broker.py", n): "amqtt 0.12.1's own state and methods, which "
       "patch_amqtt (hub/broker/broker_child.py) swaps and wraps: the test runs the patched ones"
       for n in ("_sessions", "_subscriptions", "_cleanup_session", "_matches")},
    ("tests/core/test_hub_core.py", "_load"): "counts BoardKeys' reads of the keys file",
    ("tests/broker/test_port_holder.py", "_linux"): "takes the lsof way on Linux",
    ("tests/firmware/test_board_check.py", "_fallback_lines"): "the lines the check falls back on",
    ("tests/firmware/test_mqtt_client.py", "_hdr"): "the firmware MQTT client's remaining-length encoding",
    ("tests/firmware/test_overlapping_gestures.py", "_follow_presses"): "the rehearsal's press follower, "
                                                                         "run on a thread",
}


def modules(folder: str, root: Path = ROOT) -> list[Path]:
    return sorted(p for p in (root / folder).rglob("*.py"))


def dotted(path: Path, root: Path = ROOT) -> str:
    """hub/core/service.py -> tabletimer.hub.core.service"""
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["tabletimer", *parts])


def imports(path: Path, root: Path = ROOT) -> list[tuple[str, list[str], int]]:
    """(absolute module, names imported from it, line) for every import in
    the file, relative ones resolved."""
    tree = ast.parse(path.read_text(), str(path))
    here = dotted(path, root).split(".")
    if path.name != "__init__.py":
        here = here[:-1]                     # the package the module is in
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out.append((a.name, [], node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.append((mod, [a.name for a in node.names], node.lineno))
    return out


def part_of(module: str) -> str | None:
    """tabletimer.hub.rules.standings -> hub.rules; tabletimer.tools.x -> tools."""
    parts = module.split(".")
    if parts[0] != "tabletimer" or len(parts) < 2:
        return None
    if parts[1] == "hub":
        if len(parts) > 3 and parts[2] in ROOMS_INSIDE:
            return f"hub.{parts[2]}.{parts[3]}"
        return "hub." + parts[2] if len(parts) > 2 else "hub"
    return parts[1]


def is_module(module: str) -> bool:
    rel = Path(*module.split(".")[1:])
    return (ROOT / rel).with_suffix(".py").exists() or (ROOT / rel / "__init__.py").exists()


def wrong_arrows(part: str, root: Path = ROOT) -> list[str]:
    """The imports of the part's modules that point at a part it may not import."""
    folder = part.replace(".", "/")
    assert modules(folder, root), f"{folder}/ has no modules"
    wrong = []
    for path in modules(folder, root):
        for mod, _names, line in imports(path, root):
            other = part_of(mod)
            if other is not None and other != part and other not in MAY_IMPORT[part]:
                wrong.append(f"{path.relative_to(root)}:{line} imports {mod} ({other})")
    return wrong


@pytest.mark.parametrize("part", sorted(MAY_IMPORT))
def test_each_part_imports_only_the_parts_below_it(part):
    wrong = wrong_arrows(part)
    assert not wrong, f"{part} may import only {sorted(MAY_IMPORT[part])}:\n" + "\n".join(wrong)


def test_every_hub_module_is_in_a_part():
    loose = [p.name for p in (ROOT / "hub").glob("*.py") if p.name != "__init__.py"]
    assert not loose, f"modules of no part in hub/: {loose}"
    assert set(p.name for p in (ROOT / "hub").iterdir() if p.is_dir() and (p / "__init__.py").exists()) \
        == {k.split(".")[1] for k in MAY_IMPORT if k.startswith("hub.")}
    for room in ROOMS_INSIDE:
        loose = [p.name for p in (ROOT / "hub" / room).glob("*.py") if p.name != "__init__.py"]
        assert not loose, f"modules of no room in hub/{room}/: {loose}"
        assert set(p.name for p in (ROOT / "hub" / room).iterdir() if (p / "__init__.py").exists()) \
            == {k.split(".")[2] for k in MAY_IMPORT if k.startswith(f"hub.{room}.")}


def private_uses(path: Path, root: Path = ROOT) -> list[str]:
    """Another module's private names that the file imports or reads: `from
    m import _x`, `m._x` for a module m it imported, `obj._x` for any
    object other than self/cls when no class of this file defines _x, and
    anything from a private module (`from textual._compositor import ...`,
    a third party's too)."""
    return [f for f, _ in private_names(path, root)]


def private_names(path: Path, root: Path = ROOT) -> list[tuple[str, str]]:
    """private_uses() with the private name each finding is about."""
    text = path.read_text()
    tree = ast.parse(text, str(path))
    own = set()                                  # private names this file defines
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            own.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            own.add(node.target.id)
    found = []
    rel = str(path.relative_to(root))
    flat = {q.stem for folder in ("firmware", "shared") for q in (root / folder).glob("*.py")}
    for mod, names, line in imports(path, root):
        ours = mod.startswith("tabletimer") or (rel.startswith("firmware/") and mod.split(".")[0] in flat)
        for n in names:
            if n.startswith("_") and not n.startswith("__") and ours:
                found.append((f"{rel}:{line} imports {n} from {mod}", n))
        hidden = [p for p in mod.split(".")[1:] if p.startswith("_") and not p.startswith("__")]
        if hidden:                                 # (a top-level _thread is the stdlib's)
            found.append((f"{rel}:{line} imports the private module {mod}", hidden[0]))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        a = node.attr
        if not a.startswith("_") or a.startswith("__") or a in NAMEDTUPLE_API:
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue
        if isinstance(node.value, ast.Name) and (node.value.id, a) in STDLIB_PRIVATE:
            continue
        if a in own or (rel, a) in FOREIGN_PRIVATE:
            continue
        found.append((f"{rel}:{node.lineno} reads {ast.unparse(node)}", a))
    return found


def test_no_module_reads_another_modules_private_names():
    """The hub, shared/, the tools and the firmware (whose modules import
    each other and shared/'s by bare name)."""
    found = []
    for folder in ("hub", "shared", "tools", "firmware"):
        for path in modules(folder):
            found += private_uses(path)
    assert not found, "private names read across modules:\n" + "\n".join(found)


def test_the_tests_read_no_private_names_but_those_left():
    """The tests too: Textual's, amqtt's and our modules' private names are
    not read, but for those TESTS_PRIVATE_LEFT names."""
    found, left = [], set()
    for path in modules("tests"):
        rel = str(path.relative_to(ROOT))
        for f, name in private_names(path):
            if (rel, name) in TESTS_PRIVATE_LEFT:
                left.add((rel, name))
            else:
                found.append(f)
    assert not found, "private names read by tests:\n" + "\n".join(found)
    assert not TESTS_PRIVATE_LEFT.keys() - left, \
        f"no longer read: take them out of TESTS_PRIVATE_LEFT: {sorted(TESTS_PRIVATE_LEFT.keys() - left)}"


LONG_LINES = 450


def long_modules_allowed() -> set[str]:
    """The modules docs/architecture.md names, with a reason, under "Modules
    over 450 lines"."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text.split("## Modules over 450 lines", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^- `([^`]+\.py)`:", section, flags=re.M))


def test_no_module_of_the_hub_or_the_benches_is_over_450_lines_without_a_reason():
    long = {str(p.relative_to(ROOT)): len(p.read_text().splitlines())
            for folder in ("hub", "tools/bench") for p in modules(folder)}
    over = {m: n for m, n in long.items() if n > LONG_LINES}
    allowed = long_modules_allowed()
    assert allowed, "docs/architecture.md has no section 'Modules over 450 lines'"
    unexplained = sorted(set(over) - allowed)
    assert not unexplained, (f"over {LONG_LINES} lines without a reason in docs/architecture.md: "
                             + ", ".join(f"{m} ({over[m]})" for m in unexplained))
    stale = sorted(m for m in allowed if long.get(m, 0) <= LONG_LINES)
    assert not stale, f"docs/architecture.md explains modules that are no longer over {LONG_LINES} lines: {stale}"


def test_architecture_md_names_every_module_and_none_that_is_gone():
    """docs/architecture.md names every module of the hub, shared/, the
    firmware and the tools (by its file name, in backquotes), and no file
    that is not in the tree (tests/ counted)."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    named = set(re.findall(r"`([^`\s]*?\.py)`", text))
    names = {Path(n).name for n in named}
    ours = [p for folder in ("hub", "shared", "firmware", "tools") for p in modules(folder)
            if p.name != "__init__.py" and "__pycache__" not in p.parts]
    missing = sorted(str(p.relative_to(ROOT)) for p in ours if p.name not in names)
    assert not missing, f"modules docs/architecture.md does not name: {missing}"
    present = {p.name for folder in ("hub", "shared", "firmware", "tools", "tests") for p in modules(folder)}
    gone = sorted(n for n in named if Path(n).name not in present)
    assert not gone, f"docs/architecture.md names modules that are not in the tree: {gone}"


def module_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the modules of ours it imports.  The hub, shared/ and
    tools/ by their installed names; the firmware's flat modules (deployed
    side by side with shared/'s, imported by bare name) as firmware.<name>."""
    paths = {dotted(p, root): p for folder in ("hub", "shared", "tools") for p in modules(folder, root)}
    firmware = {p.stem: p for p in (root / "firmware").glob("*.py")}
    shared = {p.stem for p in (root / "shared").glob("*.py") if p.stem != "__init__"}
    graph: dict[str, set[str]] = {}
    for mod, path in paths.items():
        out = set()
        for imported, names, _line in imports(path, root):
            subs = [f"{imported}.{n}" for n in names if f"{imported}.{n}" in paths]
            out.update(subs or ([imported] if imported in paths else []))
        graph[mod] = out - {mod}
    for name, path in firmware.items():
        out = set()
        for imported, _names, _line in imports(path, root):
            top = imported.split(".")[0]
            if top in firmware:
                out.add(f"firmware.{top}")
            elif top in shared:
                out.add(f"tabletimer.shared.{top}")
        graph[f"firmware.{name}"] = out - {f"firmware.{name}"}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's circles: each strongly connected set of two or more
    modules (Tarjan's algorithm, without recursion), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    members.append(m)
                    if m == node:
                        break
                if len(members) > 1:
                    found.append(sorted(members))
    return sorted(found)


def test_no_modules_import_each_other_in_a_circle():
    found = circles(module_graph())
    assert not found, "modules that import each other in a circle (a concept in the wrong file?):\n" + \
        "\n".join(" <-> ".join(c) for c in found)


def source_copy(tmp_path: Path) -> Path:
    """The modules of hub/, shared/, tools/ and firmware/, copied: the probes
    below change a copy, never the tree other tests run meanwhile."""
    copy = tmp_path / "src"
    for folder in ("hub", "shared", "tools", "firmware"):
        for path in (ROOT / folder).rglob("*.py"):
            target = copy / path.relative_to(ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    return copy


def test_the_circle_test_sees_a_new_circle(tmp_path):
    """A module importing one that imports it back (under TYPE_CHECKING or
    in a function: still one concept in two files) is a circle, in the hub
    and in the firmware alike; the tree as it is has none."""
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    src = source_copy(tmp_path)
    assert circles(module_graph(src)) == []
    (src / "hub" / "rules" / "circle_probe.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .standings import Standings\n")
    with open(src / "hub" / "rules" / "standings.py", "a") as f:
        f.write("\n\ndef probe():\n    from . import circle_probe\n")
    (src / "firmware" / "circle_probe.py").write_text("import app\n")
    with open(src / "firmware" / "app.py", "a") as f:
        f.write("\n\ndef probe():\n    import circle_probe\n")
    found = circles(module_graph(src))
    assert ["tabletimer.hub.rules.circle_probe", "tabletimer.hub.rules.standings"] in found
    assert ["firmware.app", "firmware.circle_probe"] in found and len(found) == 2, found


def test_the_arrows_test_sees_a_wrong_arrow_and_a_private_read(tmp_path):
    """The checks above can fail: an upward import and a private read are seen."""
    src = source_copy(tmp_path)
    bad = src / "hub" / "rules" / "arrow_probe.py"
    bad.write_text("from ..core.service import HubService\nfrom ..event.log import store\n"
                   "from textual._compositor import ChopsUpdate\nx = store._db\n")
    assert "hub/rules/arrow_probe.py:1 imports tabletimer.hub.core.service (hub.core)" in \
        wrong_arrows("hub.rules", src)
    assert wrong_arrows("hub.rules") == []
    assert any("reads store._db" in f for f in private_uses(bad, src))
    assert any("imports the private module textual._compositor" in f for f in private_uses(bad, src))
