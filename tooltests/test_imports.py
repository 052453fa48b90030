"""The package's layers, read from its imports: no cycle, and no upward import.

    cli.py, __main__.py, instructor.py        on top: may import anything
    learner/ classroom/ pictures/ maintainer/ one subpackage per audience: core only
    core/                                     at the bottom: nothing above it

Every ``import`` statement counts, also those inside functions (the CLI keeps
heavy imports there): a lazy import is still a dependency.  The package root
``autograd_kata/__init__.py`` (the version) may be imported from anywhere.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "autograd_kata"
AUDIENCES = ("learner", "classroom", "pictures", "maintainer")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))
            if "__pycache__" not in p.parts and "templates" not in p.parts}  # templates: package data


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that ``name`` imports (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imports(name, path, set(mods)) for name, path in mods.items()}


def layer(name: str) -> tuple[int, str]:
    parts = name.split(".")
    if len(parts) == 1:
        return 0, "root"  # autograd_kata/__init__.py: the version, importable from anywhere
    if parts[1] == "core":
        return 1, "core"
    if parts[1] in AUDIENCES:
        return 2, parts[1]
    return 3, parts[1]  # cli, __main__


def upward_imports() -> list[tuple[str, str]]:
    bad = []
    for name, targets in graph().items():
        mine, group = layer(name)
        for target in sorted(targets):
            theirs, other = layer(target)
            if other == "root":
                continue
            if theirs > mine or (theirs == mine == 2 and other != group):
                bad.append((name, target))
    return bad


def test_the_walk_sees_the_layers():
    g = graph()
    assert "autograd_kata.core.manifest" in g and "autograd_kata.cli" in g
    assert "autograd_kata.core.manifest" in g["autograd_kata.core.build"]
    assert "autograd_kata.cli" in g["autograd_kata.__main__"]
    assert "autograd_kata.cli" in g["autograd_kata.instructor"] and layer("autograd_kata.instructor")[0] == 3
    assert layer("autograd_kata.core.build")[0] < layer("autograd_kata.learner.commands")[0] \
        < layer("autograd_kata.cli")[0]


def test_no_module_imports_upward_or_across_audiences():
    bad = upward_imports()
    assert not bad, "imports against the layers (core <- audiences <- cli):\n" + "\n".join(
        f"  {a} imports {b}" for a, b in bad)


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(g.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_cycles_are_found():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_package_has_no_import_cycle():
    found = cycles(graph())
    assert not found, "import cycles:\n" + "\n".join("  " + " <-> ".join(group) for group in found)


def test_nothing_below_the_top_imports_the_cli_layer():
    """classroom/ runs the Classroom workflow's grading through autograd_kata.instructor,
    never by importing cli.py (a command module knows no parser)."""
    top = {"autograd_kata.cli", "autograd_kata.__main__", "autograd_kata.instructor"}
    below = {name: sorted(targets & top) for name, targets in graph().items() if name not in top}
    assert {name: found for name, found in below.items() if found} == {}


# The grader's steps, and the pictures' parts, one module each (issue 17 item 4): each may
# import only those before it, so a step never reaches up to the one that runs it.  The
# classroom's rooms are its pipeline: the sandbox, one submission's grading, a class, the
# platforms, the commands on top.
STEPS = {
    "classroom (the sandbox, one submission, a class, the platforms)": (
        "sandbox.seccomp", "sandbox.jailroot", "sandbox.pool", "sandbox.server", "sandbox.confine", "sandbox.reaper",
        "sandbox.jail", "sandbox.proxy", "sandbox.values", "sandbox.remote",
        "grading.report", "grading.discovery", "grading.folders", "grading.plugin", "grading.judging",
        "grading.formats", "grading.grade", "course.roster", "course.records", "course.outputs", "course.run",
        "release", "platforms.staging", "platforms.gradescope", "platforms.classroom50", "platforms.prairielearn",
        "commands"),
    "pictures": ("expression", "engine", "graph", "explore", "train", "commands"),
}


@pytest.mark.parametrize("package", sorted(STEPS))
def test_the_steps_import_one_way(package):
    sub = package.split()[0]
    names = [f"autograd_kata.{sub}.{step}" for step in STEPS[package]]
    g = graph()
    assert set(names) <= set(g), f"steps that are not modules: {sorted(set(names) - set(g))}"
    later = [(a, b) for i, a in enumerate(names) for b in names[i + 1:] if b in g[a]]
    assert not later, "a step imports one after it:\n" + "\n".join(f"  {a} imports {b}" for a, b in later)


def test_every_module_of_the_classroom_is_a_step():
    """A module added to a room of the classroom takes its place in the pipeline above."""
    rooms = next(v for k, v in STEPS.items() if k.startswith("classroom"))
    steps = {f"autograd_kata.classroom.{step}" for step in rooms}
    found = {name for name in graph() if name.startswith("autograd_kata.classroom.") and name.count(".") >= 2
             and name.rsplit(".", 1)[-1] not in ("sandbox", "grading", "course", "platforms")}
    assert found <= steps, f"modules of classroom/ that are not steps: {sorted(found - steps)}"


@pytest.mark.parametrize("package", ["classroom", "pictures"])
def test_the_split_modules_stay_small(package):
    """A module of the grader's pipeline or of the pictures holds one job: ~300 lines at most."""
    steps = next(v for k, v in STEPS.items() if k.split()[0] == package)
    long = {step: n for step in steps
            if (n := len((PACKAGE / package / f"{step.replace('.', '/')}.py").read_text(encoding="utf-8").splitlines()))
            > 300}
    assert not long, f"modules over 300 lines: {long}"


#: the bound on any module of the package: one job a module, readable in one sitting
MAX_LINES = 350


def lines_of(relative: str) -> int:
    return len((PACKAGE / relative).read_text(encoding="utf-8").splitlines())


def test_no_module_is_over_350_lines():
    long = {str(p.relative_to(PACKAGE)): n for p in sorted(PACKAGE.rglob("*.py"))
            if "__pycache__" not in p.parts and (n := lines_of(str(p.relative_to(PACKAGE)))) > MAX_LINES}
    assert not long, (f"modules over {MAX_LINES} lines: {long}; split each by its jobs "
                     f"(docs/maintainers.md, \"Layers\")")
