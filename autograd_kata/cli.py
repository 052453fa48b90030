"""The ``kata`` command.  Each command module registers its own subcommands.

Layering, bottom to top: ``manifest`` (the stage list) <- ``build`` (stubs,
backups) <- ``runner`` (pytest in a subprocess) <- the command modules below.
Command modules keep their top-level imports light: ``kata --help`` must start
fast, so heavy imports happen inside the handlers.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from autograd_kata import __version__
from autograd_kata.core import i18n

COMMAND_MODULES = (
    "autograd_kata.learner.commands",    # status, check, hint, diff, reset, watch
    "autograd_kata.core.build",      # build
    "autograd_kata.maintainer.verify",     # verify
    "autograd_kata.classroom.commands",  # release, grade
    "autograd_kata.pictures.commands",   # graph, explore, train
    "autograd_kata.maintainer.mutation",   # mutate
)
# Who each module's commands are for.  A student copy (kata release) registers
# the learners' commands only, so its `kata --help` lists nothing it cannot use.
AUDIENCE = {
    "autograd_kata.learner.commands": "learners",
    "autograd_kata.pictures.commands": "learners",
    "autograd_kata.core.build": "maintainers",
    "autograd_kata.maintainer.verify": "maintainers",
    "autograd_kata.maintainer.mutation": "maintainers",
    "autograd_kata.classroom.commands": "instructors",
}
# the commands a student copy leaves out, for a one-line answer instead of argparse's error
NOT_IN_A_STUDENT_COPY = {"build": "maintainers", "verify": "maintainers", "mutate": "maintainers",
                         "release": "instructors", "grade": "instructors", "autograder": "instructors"}


def _student_copy() -> bool:
    from autograd_kata.core.manifest import find_root, is_student_copy
    try:
        return is_student_copy(find_root())
    except LookupError:  # no kata around: show everything
        return False


def _warn_if_another_kata() -> None:
    from autograd_kata.core.manifest import find_root, package_mismatch
    try:
        problem = package_mismatch(find_root())
    except LookupError:
        return
    if problem:
        print(problem, file=sys.stderr)


def _lang_in(argv) -> str | None:
    """The value of `--lang X` / `--lang=X` anywhere in argv, if it names a language
    (a wrong one is left for argparse to refuse, in the default language)."""
    for i, arg in enumerate(argv):
        value = argv[i + 1] if arg == "--lang" and i + 1 < len(argv) else (
            arg.split("=", 1)[1] if arg.startswith("--lang=") else None)
        if value is not None:
            try:
                return i18n.current_language(value)
            except ValueError:
                return None
    return None


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kata",
        description=i18n.t("help.kata"),
    )
    p.add_argument("--version", action="version", version=f"kata {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    student = _student_copy()
    for name in COMMAND_MODULES:
        if student and AUDIENCE[name] != "learners":
            continue
        importlib.import_module(name).register(sub)
    # One language setting for every command, before or after its name (SUPPRESS:
    # a subcommand that was not given --lang must not erase `kata --lang ja ...`).
    langs = i18n.languages()
    lang = dict(choices=langs, default=argparse.SUPPRESS, metavar="LANG",
                help=i18n.t("help.lang", langs=", ".join(langs)))
    for command in (p, *sub.choices.values()):
        if "--lang" not in command._option_string_actions:
            command.add_argument("--lang", **lang)
    return p


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # the language first: the parser's help texts come from the catalogue
    i18n.setup(_lang_in(argv))  # --lang, else KATA_LANG, else the locale; English if unshowable
    if argv and argv[0] in NOT_IN_A_STUDENT_COPY and _student_copy():
        who = i18n.t(f"cli.audience.{NOT_IN_A_STUDENT_COPY[argv[0]]}")
        print(i18n.t("cli.not_in_student_copy", command=argv[0], who=who), file=sys.stderr)
        return 2
    _warn_if_another_kata()
    p = parser()
    args = p.parse_args(argv)
    if not getattr(args, "func", None):
        # `kata` alone, or with options only (`kata --lang ja`), means `kata status`
        args = p.parse_args([*argv, "status"])
    if not getattr(args, "func", None):
        p.print_help()
        return 2
    try:
        return args.func(args) or 0
    except KeyboardInterrupt:
        print("\n" + i18n.t("cli.interrupted"), file=sys.stderr)
        return 130
    except LookupError as error:  # manifest.KataNotFound: run outside a kata checkout
        from autograd_kata.core.manifest import KataNotFound
        if not isinstance(error, KataNotFound):
            raise
        print(f"kata: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
