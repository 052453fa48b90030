"""The thin CLI layer (issue 12): cli.py alone owns argparse, the printing of a
refusal and the exit codes; every command is one entry of ``cli.COMMANDS``.

Read from the source: no other module imports argparse or registers
subcommands, no module catches ``Refusal`` but cli.py, no private name crosses
a module.  Read from the table: every handler exists and takes exactly its
arguments' values, every help id is in every catalogue and says its words in
one language, and ``kata --help`` imports no handler.
"""
from __future__ import annotations

import ast
import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_i18n_cli import assert_in_language, help_text
from test_imports import PACKAGE, modules

from autograd_kata import cli
from autograd_kata.core import i18n
from autograd_kata.core.errors import Refusal
from autograd_kata.core.manifest import STAGES, KataNotFound, find_root

ROOT = Path(__file__).resolve().parent.parent
TOP = {"autograd_kata.cli", "autograd_kata.__main__", "autograd_kata.instructor"}


def trees() -> dict[str, ast.Module]:
    return {name: ast.parse(path.read_text(encoding="utf-8"), str(path)) for name, path in modules().items()}


def imported_names(tree: ast.Module):
    """(module, name) of every ``import`` in ``tree``; name is None for ``import module``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                yield "." * node.level + (node.module or ""), alias.name


def private(name: str | None) -> bool:
    return name is not None and name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


# --- read from the source --------------------------------------------------------------

def test_only_cli_imports_argparse():
    found = [name for name, tree in trees().items()
             if any(module.split(".")[0] == "argparse" for module, _ in imported_names(tree))]
    assert sorted(found) == ["autograd_kata.cli", "autograd_kata.cli_argparse"], \
        "argparse belongs to the command layer alone (cli.py, and cli_argparse.py, its wording): " + ", ".join(found)


def test_no_module_registers_its_own_subcommands():
    found = [f"{name}.{node.name}" for name, tree in trees().items() for node in ast.walk(tree)
             if isinstance(node, ast.FunctionDef) and node.name in ("register", "add_grade_parser")]
    assert found == [], "a command is one entry of cli.COMMANDS: " + ", ".join(found)


def test_only_cli_catches_a_refusal():
    found = []
    for name, tree in trees().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ExceptHandler) and node.type is not None:
                caught = {n.id if isinstance(n, ast.Name) else getattr(n, "attr", "") for n in ast.walk(node.type)}
                if caught & {"Refusal", "KataNotFound"}:
                    found.append(name)
    assert set(found) <= {"autograd_kata.cli"}, "only cli.main prints a refusal: " + ", ".join(found)


def package_modules_bound(tree: ast.Module, known: set[str]) -> set[str]:
    """The names ``tree`` binds to one of the package's modules (``from x import graph``)."""
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("autograd_kata"):
            bound |= {a.asname or a.name for a in node.names if f"{node.module}.{a.name}" in known}
        elif isinstance(node, ast.Import):
            bound |= {a.asname for a in node.names if a.asname and a.name in known}
    return bound


def private_crossings() -> list[str]:
    known = set(modules())
    bad = []
    for name, tree in trees().items():
        for module, imported in imported_names(tree):
            if module.startswith(("autograd_kata", ".")) and private(imported):
                bad.append(f"{name} imports {imported} from {module}")
        bound = package_modules_bound(tree, known)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in bound and private(node.attr)):
                bad.append(f"{name} uses {node.value.id}.{node.attr}")
    return bad


def test_no_private_name_crosses_a_module():
    bad = private_crossings()
    assert bad == [], "a name another module needs is public:\n  " + "\n  ".join(bad)


def test_the_private_name_check_sees_both_ways_across():
    tree = ast.parse("from autograd_kata.core.build import _owner\nfrom autograd_kata.pictures import graph\n"
                     "graph._box()\n")
    assert [n for _, n in imported_names(tree) if private(n)] == ["_owner"]
    known = {"autograd_kata.pictures.graph"}
    assert package_modules_bound(tree, known) == {"graph"}


# --- read from the table -------------------------------------------------------------------

def test_the_audiences_are_derived_from_the_table():
    assert list(cli.AUDIENCE) == list(cli.COMMANDS)
    assert set(cli.AUDIENCE.values()) <= set(cli.AUDIENCES)
    assert cli.NOT_IN_A_STUDENT_COPY == {n: a for n, a in cli.AUDIENCE.items() if a != "learners"}
    assert {"status", "check", "graph"} <= {n for n, a in cli.AUDIENCE.items() if a == "learners"}
    assert {"grade", "release"} <= set(cli.NOT_IN_A_STUDENT_COPY) and "verify" in cli.NOT_IN_A_STUDENT_COPY


def dests(command: str) -> set[str]:
    """The names of the parsed values a command's handler gets, as argparse reads them."""
    parser = cli.parser(command, cli.AUDIENCES)
    argv = [command] + [a.flags[0].upper() for a in cli.COMMANDS[command].args if not a.flags[0].startswith("-")
                        and "nargs" not in a.options]
    return {k for k in vars(parser.parse_args(argv)) if k not in ("command", "lang")}


@pytest.mark.parametrize("name", list(cli.COMMANDS))
def test_every_handler_takes_exactly_its_arguments(name):
    module, _, function = cli.COMMANDS[name].handler.partition(":")
    handler = getattr(__import__(module, fromlist=[function]), function)
    params = set(inspect.signature(handler).parameters)
    assert params == dests(name), f"{name}: the handler takes {sorted(params)}, the table gives {sorted(dests(name))}"


def help_ids(command: cli.Command) -> list[str]:
    ids = [command.help_id, command.description_id] + ([command.epilog] if command.epilog else [])
    return ids + [a.help for a in command.args if a.help]


@pytest.mark.parametrize("lang", i18n.languages())
def test_every_help_id_of_the_table_is_in_every_catalogue(lang):
    catalogue = i18n.MESSAGES.catalogue(lang).messages
    missing = [(c.name, msgid) for c in cli.COMMANDS.values() for msgid in help_ids(c) if msgid not in catalogue]
    assert missing == []


@pytest.mark.parametrize("lang", i18n.languages())
@pytest.mark.parametrize("name", [None, *cli.COMMANDS])
def test_every_commands_help_is_in_one_language(capsys, monkeypatch, name, lang):
    """The instructors' and maintainers' help too (the maintainers' repository
    offers every command), with test_i18n_cli's rules."""
    monkeypatch.chdir(ROOT)
    for var in ("KATA_LANG", "LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        monkeypatch.delenv(var, raising=False)
    _, prose = help_text(capsys, lang, *([name] if name else []))
    # argparse's syntax on a line of its own: a long command name, a positional's metavar
    syntax = {*cli.COMMANDS, *(a.options.get("metavar") for c in cli.COMMANDS.values() for a in c.args)}
    assert_in_language("\n".join(line for line in prose.splitlines() if line.strip() not in syntax), lang)


# --- cli.main: the one place a refusal is printed ---------------------------------------

@pytest.fixture
def fake_command(monkeypatch):
    """A command `fake` whose handler is ``behave`` below (set per test)."""
    calls = []
    module = type(sys)("fake_handlers")
    module.behave = lambda **values: calls.append(values) or 0
    monkeypatch.setitem(sys.modules, "fake_handlers", module)
    command = cli.Command("fake", "learners", "fake_handlers:behave", (cli.arg("--flag", action="store_true"),),
                          help="help.status", description="help.status.desc")
    monkeypatch.setattr(cli, "COMMANDS", {**cli.COMMANDS, "fake": command})
    monkeypatch.setattr(cli, "AUDIENCE", {**cli.AUDIENCE, "fake": "learners"})
    return module, calls


def test_a_handler_gets_the_parsed_values_as_keywords(fake_command, capsys):
    _, calls = fake_command
    assert cli.main(["fake", "--flag"]) == 0
    assert calls == [{"flag": True}]


@pytest.mark.parametrize("refusal, line", [
    (Refusal("no such thing", code=2), "kata: no such thing"),
    (Refusal("could not write x", where="grade"), "kata grade: could not write x"),
    (Refusal("kata train draws with matplotlib", where=None), "kata train draws with matplotlib"),
    (KataNotFound("no kata here"), "kata: no kata here"),
])
def test_a_refusal_is_one_line_on_stderr_and_its_code(fake_command, capsys, refusal, line):
    module, _ = fake_command

    def refuse(**values):
        raise refusal
    module.behave = refuse
    code = cli.main(["fake"])
    out, err = capsys.readouterr()
    assert code == refusal.code and out == "" and err == line + "\n"


def test_kata_not_found_is_a_refusal_and_a_lookup_error():
    missing = KataNotFound("x")
    assert isinstance(missing, Refusal) and isinstance(missing, LookupError) and missing.code == 2


def test_outside_a_kata_every_learner_command_says_so_with_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(KataNotFound):
        find_root()
    for argv in (["status"], ["hint", "1"], ["diff", "1"], ["reset", "1", "--yes"]):
        assert cli.main(argv) == 2, argv
        _, err = capsys.readouterr()
        assert err.startswith("kata: ") and len(err.splitlines()) == 1, err


# --- speed: kata --help imports no handler ----------------------------------------------

def test_kata_help_imports_no_handler_module():
    handlers = sorted({c.handler.partition(":")[0] for c in cli.COMMANDS.values()} - {"autograd_kata.core.build"})
    code = ("import sys, autograd_kata.cli as c; c.parser(None, c.AUDIENCES).format_help(); "
            f"print([m for m in {handlers!r} if m in sys.modules])")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.stdout.strip() == "[]", proc.stdout + proc.stderr


# --- the Classroom workflow's entry ------------------------------------------------------

def test_the_workflow_grades_through_the_instructor_entry():
    text = (PACKAGE / "templates" / "kata-grade.yml.tmpl").read_text(encoding="utf-8")
    # the installed grader, isolated from the repository's files (-I), writing JUnit
    assert "python -I -m autograd_kata.instructor grade --submission" in text
    assert "--format junit" in text
    assert '"-m", "autograd_kata.instructor", "grade"' in (PACKAGE / "templates" /
                                                           "classroom50_autograder.py.tmpl").read_text(encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "autograd_kata.instructor", "grade", "--stage", "99"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env={**os.environ, "KATA_LANG": "en"})
    assert proc.returncode == 2 and proc.stderr.startswith("kata grade: no stage '99'"), proc.stderr


def test_a_student_copys_kata_refuses_grade_and_the_instructor_entry_offers_it(tmp_path, monkeypatch, capsys):
    for name in ("exercises", "tests"):
        (tmp_path / name).mkdir()
    (tmp_path / ".kata-release.json").write_text("{}", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KATA_LANG", "en")
    i18n.reset()
    assert cli.main(["grade", "--stage", "99"]) == 2
    assert "student copy" in capsys.readouterr().err
    assert cli.main(["grade", "--stage", "99"], audiences=("learners", "instructors")) == 2
    valid = ", ".join(str(s.number) for s in STAGES)
    assert capsys.readouterr().err == f"kata grade: no stage '99'; the stages are {valid}\n"


# --- a bug found on the way ----------------------------------------------------------------

def test_a_hint_file_without_a_title_line_gets_the_stage_title(tmp_path, monkeypatch, capsys):
    """The hint's heading once shadowed the function ``title``: a hint file whose first
    line is empty crashed with TypeError instead of showing the stage's title."""
    from autograd_kata.core.manifest import stage
    from autograd_kata.learner.feedback import title
    for name in ("exercises", "tests"):
        (tmp_path / name).mkdir()
    hint = tmp_path / stage(1).hint_file("en")
    hint.parent.mkdir(parents=True)
    hint.write_text("\n## Level 1 - why\n\nbecause\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KATA_LANG", "en")
    monkeypatch.setenv("NO_COLOR", "1")
    i18n.reset()
    assert cli.main(["hint", "1", "--level", "1"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == i18n.t("hint.title", n=1, title=title(stage(1))) and "because" in out


@pytest.mark.parametrize("script, shown", [
    ("autograd-kata", "autograd-kata"),  # the script under the distribution's name says its name
    ("autograd-kata.exe", "autograd-kata"),
    ("kata", "kata"),
    ("__main__.py", "kata"),             # python -m autograd_kata
])
def test_usage_names_the_command_the_learner_typed(script, shown):
    """Where another package's ``kata`` is installed, the learner types ``autograd-kata``:
    its usage line and errors must not tell them to type ``kata``."""
    env = {**os.environ, "KATA_LANG": "en"}
    out = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.argv[0] = {'/v/bin/' + script!r}; "
         "from autograd_kata.cli import main; raise SystemExit(main(['--help']))"],
        capture_output=True, text=True, env=env, check=False)
    assert out.returncode == 0 and out.stdout.startswith(f"usage: {shown} "), out.stdout[:200] + out.stderr
