"""The ``kata`` command: argparse, printing of errors and exit codes, in one place.

``COMMANDS`` below is the one table of commands (as rustlings' info.toml drives
its CLI): per command its name, its audience, its handler as a lazy
``"module:function"`` string, its arguments, and the catalogue ids of every help
text.  Adding a command is one entry here, its texts in ``locales/*.po`` and a
plain function in its audience's package.

A handler takes the parsed values as keyword arguments (named by each argument's
``dest``), returns an exit status, and raises ``core.errors.Refusal`` when it
cannot go on: ``main`` alone prints ``kata: <message>`` on stderr and returns its
code.  Only the chosen command's handler module is imported, and only its parser
is filled in (description, arguments), so ``kata --help`` stays fast.

Layering, bottom to top: ``core`` <- one subpackage per audience (``learner``,
``classroom``, ``pictures``, ``maintainer``) <- this module (tooltests/test_imports.py).
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from dataclasses import dataclass, field

from autograd_kata import __version__
from autograd_kata.cli_argparse import (
    HelpFormatter,
    RawDescriptionHelpFormatter,
    argparse_in_language,
    argparse_word,
    command_in,
    invoked_as,
)
from autograd_kata.core import i18n, manifest
from autograd_kata.core.errors import Refusal
from autograd_kata.core.term import tolerant_output

# (argparse in the learner's language: cli_argparse.py)
AUDIENCES = ("learners", "instructors", "maintainers")


@dataclass(frozen=True)
class From:
    """A value read from ``"module:NAME"`` only when its command's parser is built."""
    spec: str

    def get(self):
        module, _, name = self.spec.partition(":")
        return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class Arg:
    """One argument: argparse's own keywords, but ``help`` is a catalogue id."""
    flags: tuple[str, ...]
    help: str | None = None
    options: dict = field(default_factory=dict)


def arg(*flags: str, help: str | None = None, **options) -> Arg:
    return Arg(flags, help, options)


@dataclass(frozen=True)
class Command:
    """One ``kata`` command.  Help ids default to ``help.<name>`` (the line in
    ``kata --help``) and ``help.<name>.desc`` (the text of ``kata <name> --help``);
    every help text is formatted with ``valid``/``last`` (the stages), ``choices``
    (an argument's choices) and what ``fields`` (a ``From``) returns."""
    name: str
    audience: str                # learners, instructors or maintainers
    handler: str                 # "module:function", imported only when the command runs
    args: tuple[Arg, ...] = ()
    help: str = ""
    description: str = ""
    epilog: str = ""             # a catalogue id
    raw: bool = False            # keep the description's own line breaks
    fields: From | None = None   # computed {fields} of the help texts

    @property
    def help_id(self) -> str:
        return self.help or f"help.{self.name}"

    @property
    def description_id(self) -> str:
        return self.description or f"help.{self.name}.desc"


STAGE = arg("stage", metavar="N", help="help.stage")
STAGE_OR_NEXT = arg("stage", nargs="?", metavar="N", help="help.stage_default")
LEARNER = "autograd_kata.learner.commands"
PICTURES = "autograd_kata.pictures.commands"
CLASSROOM = "autograd_kata.classroom.commands"
PICTURE_FIELDS = From(f"{PICTURES}:help_fields")

# The order is the order of `kata --help`.
COMMANDS: dict[str, Command] = {c.name: c for c in (
    Command("init", "learners", "autograd_kata.learner.init:init_command", (
        arg("folder", nargs="?", default=manifest.INIT_FOLDER, metavar="DIR", help="help.init.folder"),),
        fields=From("autograd_kata.learner.init:help_fields")),
    Command("status", "learners", f"{LEARNER}:status"),
    Command("check", "learners", f"{LEARNER}:check", (
        STAGE_OR_NEXT,
        arg("--all", dest="everything", action="store_true", help="help.check.all"))),
    Command("hint", "learners", f"{LEARNER}:hint", (
        STAGE_OR_NEXT,
        arg("--level", type=int, choices=From(f"{LEARNER}:LEVELS"), help="help.hint.level"))),
    Command("diff", "learners", f"{LEARNER}:diff", (
        STAGE,
        arg("--reveal", action="store_true", help="help.diff.reveal"),
        arg("--previous", action="store_true", help="help.diff.previous"))),
    Command("reset", "learners", f"{LEARNER}:reset", (
        STAGE,
        arg("--yes", "-y", action="store_true", help="help.reset.yes"))),
    Command("watch", "learners", f"{LEARNER}:watch", (
        STAGE_OR_NEXT,
        arg("--poll", action="store_true", help="help.watch.poll"))),
    Command("build", "maintainers", "autograd_kata.core.build:build_command", (
        arg("--check", action="store_true", help="help.build.check"),)),
    Command("verify", "maintainers", "autograd_kata.maintainer.verify:verify_command", (
        arg("--mutation", action="store_true", help="help.verify.mutation"),)),
    Command("release", "instructors", f"{CLASSROOM}:release", (
        arg("folder", metavar="DIR", help="help.release.folder"),
        arg("--with-diff", action="store_true", help="help.release.with_diff"))),
    Command("site", "instructors", "autograd_kata.site.build:site_command", (
        arg("folder", metavar="DIR", help="help.site.folder"),
        arg("--pyodide", metavar="PATH", help="help.site.pyodide"),
        arg("--wheels", metavar="DIR", help="help.site.wheels"),
        arg("--codemirror", dest="codemirror_bundle", metavar="PATH", help="help.site.codemirror"),
        arg("--fetch", dest="fetch_deps", action="store_true", help="help.site.fetch"))),
    Command("grade", "instructors", f"{CLASSROOM}:grade", (
        arg("--submission", metavar="DIR", help="help.grade.submission"),
        arg("--format", dest="fmt", choices=From("autograd_kata.classroom.grading.formats:FORMATS"), default="text",
            help="help.grade.format"),
        arg("--out", metavar="PATH", help="help.grade.out"),
        arg("--stage", dest="stages", action="append", metavar="N", help="help.grade.stage"),
        arg("--stage-timeout", type=float, default=30.0, metavar="SECONDS", help="help.grade.stage_timeout"),
        arg("--jobs", type=int, default=None, metavar="N", help="help.grade.jobs"),
        arg("--class", dest="class_dir", metavar="DIR", help="help.grade.class"),
        arg("--tests-from", metavar="DIR", help="help.grade.tests_from"),
        arg("--autograder", metavar="ZIP", help="help.grade.autograder"),
        arg("--seed", type=int, default=None, metavar="N", help="help.grade.seed"),
        arg("--workers", type=int, default=None, metavar="N", help="help.grade.workers"),
        arg("--force", action="store_true", help="help.grade.force"),
        arg("--student", metavar="NAME", help="help.grade.student"),
        arg("--shard", metavar="K/N", help="help.grade.shard"),
        arg("--merge", action="store_true", help="help.grade.merge"),
        arg("shards", nargs="*", metavar="CSV", help="help.grade.shards")),
        raw=True, fields=From(f"{CLASSROOM}:help_fields")),
    Command("autograder", "instructors", f"{CLASSROOM}:autograder", (
        arg("zip_path", metavar="PATH", help="help.autograder.zip_path"),
        arg("--classroom50", action="store_true", help="help.autograder.classroom50"),
        arg("--prairielearn", action="store_true", help="help.autograder.prairielearn"))),
    Command("graph", "learners", f"{PICTURES}:graph_command", (
        arg("--expr", metavar="EXPR", help="help.graph.expr"),
        arg("--set", dest="sets", metavar="NAME=NUMBER", action="append", default=[], help="help.graph.set"),
        arg("--stage", default=None, metavar="N", help="help.graph.stage"),
        arg("--impl", choices=manifest.IMPLS, default="exercises", help="help.graph.impl"),
        arg("--out", metavar="FILE", help="help.graph.out"),
        arg("--no-backward", action="store_true", help="help.graph.no_backward"),
        arg("--open", dest="open_it", action="store_true", help="help.graph.open")),
        epilog="help.graph.epilog", raw=True, fields=PICTURE_FIELDS),
    Command("explore", "learners", f"{PICTURES}:explore_command", (
        arg("--out", metavar="FILE.html", help="help.explore.out"),
        arg("--fn", choices=From("autograd_kata.pictures.explore:FUNCTIONS"), default="tanh",
            help="help.explore.fn"),
        arg("--x", type=float, default=0.5, help="help.explore.x"),
        arg("--no-open", action="store_true", help="help.explore.no_open")),
        raw=True),
    Command("train", "learners", f"{PICTURES}:train_command", (
        arg("--impl", choices=manifest.IMPLS, default="exercises", help="help.train.impl"),
        arg("--out", metavar="FILE.png", help="help.train.out"),
        arg("--steps", type=int, default=200, help="help.train.steps"),
        arg("--points", type=int, default=80, help="help.train.points"),
        arg("--batch", type=int, default=16, help="help.train.batch"),
        arg("--lr", type=float, default=0.2, help="help.train.lr"),
        arg("--noise", type=float, default=0.1, help="help.train.noise"),
        arg("--seed", type=int, default=0, help="help.train.seed"),
        arg("--no-zero-grad", action="store_true", help="help.train.no_zero_grad")),
        raw=True, fields=PICTURE_FIELDS),
    Command("mutate", "maintainers", "autograd_kata.maintainer.mutation:mutate_command", (
        arg("--max-children", type=int, default=min(2, os.cpu_count() or 1), help="help.mutate.max_children"),
        arg("--stage", default=None, metavar="N", help="help.mutate.stage"))),
    Command("new-stage", "maintainers", "autograd_kata.maintainer.scaffold:new_stage_command", (
        arg("stage", metavar="N", help="help.new_stage.stage"),
        arg("slug", metavar="SLUG", help="help.new_stage.slug"),
        arg("--title", default="", help="help.new_stage.title"),
        arg("--title-ja", default="", help="help.new_stage.title_ja"),
        arg("--points", default="10", help="help.new_stage.points"))),
)}

# Who each command is for.  A student copy (kata release) offers the learners'
# commands only, so its `kata --help` lists nothing it cannot use.
AUDIENCE = {name: c.audience for name, c in COMMANDS.items()}
# the commands a student copy leaves out, for a one-line answer instead of argparse's error
NOT_IN_A_STUDENT_COPY = {name: who for name, who in AUDIENCE.items() if who != "learners"}


def _student_copy() -> bool:
    try:
        return manifest.is_student_copy(manifest.find_root())
    except LookupError:  # no kata around: show everything
        return False


def maintainer_tools() -> bool:
    """The maintainers' checks are installed: a clone or an editable install (the
    wheel leaves ``autograd_kata/maintainer/`` out, with the reference it quotes)."""
    import importlib.util
    return importlib.util.find_spec("autograd_kata.maintainer") is not None


def audiences_here() -> tuple[str, ...]:
    if _student_copy():
        return ("learners",)
    return AUDIENCES if maintainer_tools() else ("learners", "instructors")


def _warn_if_another_kata() -> None:
    try:
        problem = manifest.package_mismatch(manifest.find_root())
    except LookupError:
        return
    if problem:
        print(problem, file=sys.stderr)


def _lang_in(argv) -> str | None:
    """The value of `--lang X` / `--lang=X` anywhere in argv, if it names a language
    (a wrong one is left for argparse to refuse, in the default language)."""
    for i, word in enumerate(argv):
        value = argv[i + 1] if word == "--lang" and i + 1 < len(argv) else (
            word.split("=", 1)[1] if word.startswith("--lang=") else None)
        if value is not None:
            try:
                return i18n.current_language(value)
            except ValueError:
                return None
    return None


def _fill(p: argparse.ArgumentParser, command: Command) -> None:
    """Give the chosen command's parser its texts and arguments."""
    fields = {"valid": ", ".join(str(s.number) for s in manifest.STAGES), "last": manifest.STAGES[-1].number,
              "mlp": manifest.role("mlp").number,
              **(command.fields.get()() if command.fields else {})}
    p.description = i18n.t(command.description_id, **fields)
    if command.epilog:
        p.epilog = i18n.t(command.epilog, **fields)
    if command.raw:
        p.formatter_class = RawDescriptionHelpFormatter
    for a in command.args:
        options = {key: value.get() if isinstance(value, From) else value for key, value in a.options.items()}
        if a.help:
            choices = ", ".join(map(str, options.get("choices", ())))
            options["help"] = i18n.t(a.help, **fields, choices=choices)
        p.add_argument(*a.flags, **options)


def parser(command: str | None = None, audiences: tuple[str, ...] | None = None) -> argparse.ArgumentParser:
    """The parser of ``kata``: every command of ``audiences`` listed, ``command``'s filled in."""
    audiences = audiences or audiences_here()
    p = argparse.ArgumentParser(prog=invoked_as(), description=i18n.t("help.kata", n=len(manifest.STAGES)),
                                formatter_class=HelpFormatter)
    p.add_argument("--version", action="version", version=f"kata {__version__}",
                   help=argparse_word("show program's version number and exit"))  # 3.10-3.12 do not ask
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    # One language setting for every command, before or after its name (SUPPRESS:
    # a command that was not given --lang must not erase `kata --lang ja ...`).
    langs = i18n.languages()
    lang: dict = dict(choices=langs, default=argparse.SUPPRESS, metavar="LANG",
                      help=i18n.t("help.lang", choices=", ".join(langs)))
    for c in COMMANDS.values():
        if c.audience in audiences:
            one = sub.add_parser(c.name, help=i18n.t(c.help_id, mlp=manifest.role("mlp").number),
                                 formatter_class=HelpFormatter)
            if c.name == command:
                _fill(one, c)
            one.add_argument("--lang", **lang)
    p.add_argument("--lang", **lang)
    return p


def run(command: str, values: dict) -> int:
    """Import ``command``'s handler and call it with the parsed values."""
    module, _, name = COMMANDS[command].handler.partition(":")
    return getattr(importlib.import_module(module), name)(**values) or 0


# options whose value is a name anyone may have chosen: one that starts with "-" (a student
# folder "-m17") is still that option's value, not an option of its own
NAME_OPTIONS = ("--student",)


def _names_kept(argv: list[str]) -> list[str]:
    """``--student -m17`` as ``--student=-m17``, which argparse reads as the value it is."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] in NAME_OPTIONS and i + 1 < len(argv) and argv[i + 1].startswith("-"):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
            continue
        if argv[i] == "--":
            return out + argv[i:]
        out.append(argv[i])
        i += 1
    return out


def main(argv=None, audiences: tuple[str, ...] | None = None) -> int:
    """``kata argv``: the exit status.  ``audiences`` (default: the learners' only in
    a student copy, else everyone's) are the commands offered."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # the language first: the parser's help texts come from the catalogue
    i18n.setup(_lang_in(argv))  # --lang, else KATA_LANG, else the locale; English if unshowable
    audiences = audiences or audiences_here()
    name = command_in(argv)
    if name in COMMANDS and AUDIENCE[name] not in audiences:
        if AUDIENCE[name] == "maintainers" and not _student_copy():
            print(i18n.t("cli.maintainers_only", command=name, source=manifest.source_url()), file=sys.stderr)
            return 2
        who = i18n.t(f"cli.audience.{AUDIENCE[name]}")
        print(i18n.t("cli.not_in_student_copy", command=name, who=who), file=sys.stderr)
        return 2
    _warn_if_another_kata()
    argv = _names_kept(argv)
    with argparse_in_language():  # its --help, its usage and its errors exit from in here
        args = parser(name, audiences).parse_args(argv)
        if args.command is None:
            # `kata` alone, or with options only (`kata --lang ja`), means `kata status`
            argv.append("status")
            args = parser("status", audiences).parse_args(argv)
    values = {key: value for key, value in vars(args).items() if key not in ("command", "lang")}
    tolerant_output()
    try:
        return run(args.command, values)
    except Refusal as refusal:  # manifest.KataNotFound too: run outside a kata checkout
        print(refusal.line(), file=sys.stderr, flush=True)
        return refusal.code
    except KeyboardInterrupt:
        print("\n" + i18n.t("cli.interrupted"), file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
