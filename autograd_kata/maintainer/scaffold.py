"""``kata new-stage``: write a new stage's files, so that adding a stage is filling them in.

    kata new-stage 9 softmax --title "softmax and cross-entropy" --title-ja "ソフトマックスと交差エントロピー"

A stage is its own files (docs/maintainers.md, "Adding a stage"); this writes each one
where the manifest and the tools look for it, with what can be known before a person
writes the stage (its number, module, titles) and a placeholder, ``PLACEHOLDER``, for the
rest:

- the manifest's row (``autograd_kata/core/manifest.py``), no role;
- its message files ``autograd_kata/locales/{en,ja}/stageNN.po``: the title and the lesson;
- its ranges in ``reference/engine.py``: the module's docstring after the last stage's,
  and its code after the last stage's (above the file's last section, the contracts'
  notes), and its block of that section: a clause's breaker to write
  (``autograd_kata/maintainer/contracts.py``);
- ``tests/test_stageNN_<slug>.py``: the contract's first clause and one test that fails
  until it is replaced (so ``kata verify`` fails on an unwritten stage);
- ``hints/{en,ja}/stageNN_<slug>.md``: titled, three levels;
- a row of the stage table in ``README.md`` and ``README.ja.md``.

It refuses a number that is not the next stage, a slug that is not a Python name, and any
file that is already there: it never overwrites work.  ``kata build`` then cuts the stage's
modules.  ``tooltests/test_add_stage.py`` adds a real stage 9 through it.
"""
from __future__ import annotations

import re
from pathlib import Path

from autograd_kata.core.errors import Refusal
from autograd_kata.core.manifest import LANGS, STAGES, Stage
from autograd_kata.maintainer.contracts import HEADING, placeholder_block

#: what the scaffold leaves for a person to write; a tooltest fails while any is left in the kata
PLACEHOLDER = "(kata new-stage: write this)"
SLUG = re.compile(r"[a-z][a-z0-9_]*")


def _refuse(message: str) -> Refusal:
    return Refusal(f"new-stage: {message}", 2, where=None)


def _po_header(root: Path, lang: str, number: int) -> str:
    """The previous stage's message file's header, its first comment line made this stage's."""
    previous = (root / "autograd_kata" / "locales" / lang / f"stage{number - 1:02d}.po").read_text(encoding="utf-8")
    header = previous[:previous.index("\n\n", previous.index('msgid ""')) + 2]
    return re.sub(r"stage \d+'s own words", f"stage {number}'s own words", header, count=1)


def _files(s: Stage, title_ja: str) -> dict[str, str]:
    n, todo = s.number, PLACEHOLDER
    test = f'''"""Stage {n}: {s.title}.

The contract, clause by clause:

- [first-clause] {todo}: what holds, one clause per rule, each broken by a note in
  reference/engine.py's last section ("Each stage's contract, broken clause by clause").
"""
from autograd_kata.core.i18n import t
from expect import Expect

expect = Expect(stage={n})


def test_the_stage_is_written(engine):
    expect.fail(t("s{n}.unwritten"))
'''
    hints = {
        "en": (f"# Stage {n} — {s.title}\n\n## Level 1 — why\n\n{todo}\n\n## Level 2 — the shape\n\n{todo}\n\n"
               f"## Level 3 — nearly the answer\n\n{todo}\n"),
        "ja": (f"# ステージ{n}：{title_ja}\n\n## レベル1：なぜ\n\n{todo}\n\n## レベル2：形\n\n{todo}\n\n"
               f"## レベル3：ほぼ答え\n\n{todo}\n"),
    }
    messages = {
        "en": (f'msgid "title.stage{n}"\nmsgstr "{s.title}"\n\nmsgid "lesson.stage{n}"\nmsgstr "{todo}"\n\n'
               f'msgid "s{n}.unwritten"\nmsgstr "{todo}: the tests of stage {n}"\n'),
        "ja": (f'msgid "title.stage{n}"\nmsgstr "{title_ja}"\n\nmsgid "lesson.stage{n}"\nmsgstr "{todo}"\n\n'
               f'msgid "s{n}.unwritten"\nmsgstr "{todo}: ステージ {n} のテスト"\n'),
    }
    files = {s.test_file: test}
    for lang in LANGS:
        files[s.hint_file(lang)] = hints[lang]
        files[f"autograd_kata/locales/{lang}/stage{n:02d}.po"] = messages[lang]
    return files


def _engine(text: str, s: Stage) -> str:
    """reference/engine.py with the stage's docstring range after the last one's, its code after the
    last stage's code and its contract's block at the end of the contracts' section, the file's last."""
    n = s.number
    lines = text.splitlines(keepends=True)
    if HEADING + "\n" not in lines:
        raise _refuse(f"reference/engine.py has no line {HEADING!r}: the contracts' section, the file's "
                      "last, where the stage's block goes")
    at = lines.index(HEADING + "\n")
    while at and lines[at - 1] == "##\n":  # the section's own spacing lines, above its heading
        at -= 1
    section = len("".join(lines[:at]))
    start = text.index(f"# >> stage {n - 1} only\n")
    end = text.index("# <<\n", start) + len("# <<\n")
    doc = (f'# >> stage {n} only\n"""Stage {n} - {s.title}.\n\n{PLACEHOLDER}: what the stage teaches.\n'
           f'You write: {PLACEHOLDER}.\n\nRun the tests:  pytest tests/test_{s.module}.py   (or: kata check {n})\n'
           f'Stuck?         kata hint {n}\n"""\n# <<\n')
    code = (f"# >> stage {n}\n\n\ndef stage_{n}():\n    \"\"\"{PLACEHOLDER}: the stage's code, what the learner "
            f"writes between the markers.\"\"\"\n    # BEGIN SOLUTION\n    return None\n    # END SOLUTION\n# <<\n")
    return (text[:end] + doc + text[end:section].rstrip("\n") + "\n" + code + text[section:].rstrip("\n") + "\n"
            + placeholder_block(n, PLACEHOLDER))


def _manifest(text: str, s: Stage, points: int) -> str:
    start = text.index("STAGES: tuple[Stage, ...] = (\n")
    end = text.index("\n)\n", start) + 1  # the tuple's closing line (a Stage may span lines)
    row = (f'    Stage({s.number}, "{s.slug}", "{s.title}", {points}, "lesson.stage{s.number}", '
           f'"title.stage{s.number}"),\n')
    return text[:end] + row + text[end:]


def _readme(text: str, s: Stage, title: str, last: Stage) -> str:
    """The stage table with a row for ``s`` after the last stage's."""
    lines = text.splitlines(keepends=True)
    at = next((i for i, line in enumerate(lines) if line.startswith(f"| {last.number} | `{last.module}`")), None)
    if at is None:
        raise _refuse(f"no row of stage {last.number} (`{last.module}`) in the stage table to add "
                      f"stage {s.number} after")
    lines.insert(at + 1, f"| {s.number} | `{s.module}` | {title} | `kata hint {s.number}` |\n")
    return "".join(lines)


def new_stage(root: Path, number: int, slug: str, title: str, title_ja: str, points: int = 10) -> list[str]:
    """Write stage ``number``'s files into the kata at ``root``; the paths written, in order."""
    root = Path(root)
    last = STAGES[-1]
    if number != last.number + 1:
        raise _refuse(f"the next stage is {last.number + 1}, not {number} (the manifest ends at stage {last.number})")
    if not SLUG.fullmatch(slug):
        raise _refuse(f"{slug!r} is not a slug: lower-case letters, digits and _, a letter first")
    if not title.strip() or not title_ja.strip() or '"' in title + title_ja:
        raise _refuse("give --title and --title-ja, each without double quotes")
    if points <= 0:
        raise _refuse(f"a stage earns points: {points}")
    s = Stage(number, slug, title, points, f"lesson.stage{number}", f"title.stage{number}")
    files = _files(s, title_ja)
    there = [name for name in files if (root / name).exists()]
    if there:
        raise _refuse(f"{', '.join(there)} already there: nothing written")
    edits = {"autograd_kata/core/manifest.py": lambda text: _manifest(text, s, points),
             "reference/engine.py": lambda text: _engine(text, s),
             "README.md": lambda text: _readme(text, s, title, last),
             "README.ja.md": lambda text: _readme(text, s, title_ja, last)}
    edited = {name: edit((root / name).read_text(encoding="utf-8")) for name, edit in edits.items()}
    for lang in LANGS:  # every check before the first write
        files[f"autograd_kata/locales/{lang}/stage{number:02d}.po"] = (
            _po_header(root, lang, number) + files[f"autograd_kata/locales/{lang}/stage{number:02d}.po"])
    for name, text in {**files, **edited}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return [*files, *edited]


def new_stage_command(stage: str, slug: str, title: str = "", title_ja: str = "", points: str = "10") -> int:
    """``kata new-stage N SLUG --title T --title-ja T [--points P]``."""
    from autograd_kata.core.manifest import find_root
    if not (str(stage).isdigit() and str(points).isdigit()):
        raise _refuse(f"the stage's number and its points are whole numbers, not {stage!r} and {points!r}")
    for name in new_stage(find_root(), int(stage), slug, title, title_ja, int(points)):
        print(f"wrote {name}")
    print(f"new-stage: now fill in every {PLACEHOLDER!r}, then run kata build and kata verify "
          f"(docs/maintainers.md, \"Adding a stage\")")
    return 0
