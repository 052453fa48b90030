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

COMMAND_MODULES = (
    "autograd_kata.learner.commands",    # status, check, hint, diff, reset, watch
    "autograd_kata.core.build",      # build
    "autograd_kata.maintainer.verify",     # verify
    "autograd_kata.classroom.commands",  # release, grade
    "autograd_kata.pictures.commands",   # graph, explore, train
    "autograd_kata.maintainer.mutation",   # mutate
)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kata",
        description="Build a scalar autograd engine in eight stages. "
                    "Run `kata` alone to see where you are and what to do next.",
    )
    p.add_argument("--version", action="version", version=f"kata {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return p


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = parser()
    if not argv and "status" in p._subparsers._group_actions[0].choices:
        argv = ["status"]
    args = p.parse_args(argv)
    if not getattr(args, "func", None):
        p.print_help()
        return 2
    try:
        return args.func(args) or 0
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
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
