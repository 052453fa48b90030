"""The learner's engine, for the pictures: imported from the kata root by package name,
and its failures (a stub not written yet, an exception) turned into the refusal that
says what to do.  Only the standard library and core are imported here."""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

from autograd_kata.core import manifest
from autograd_kata.core.errors import Refusal
from autograd_kata.core.i18n import t
from autograd_kata.core.term import say

PICTURES_EXTRA = "pip install -e '.[pictures]'"


def kata_root() -> Path:
    root = manifest.find_root()
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    return root


def load(impl: str, stage):
    """Import ``impl.stageNN_x`` by package name from the kata root."""
    root = kata_root()
    if impl == "solutions" and not (root / "solutions").is_dir():  # a student copy: said, not a traceback
        raise Refusal(t("pictures.no_reference"), where=None)
    name = f"{impl}.{stage.module}"
    try:
        return importlib.import_module(name)
    except Exception as error:
        sys.modules.pop(name, None)
        line = error.lineno if isinstance(error, SyntaxError) and error.lineno else None
        raise ImportError(t("pictures.no_import_line" if line else "pictures.no_import",
                            file=f"{impl}/{stage.module}.py", line=line,
                            error=f"{type(error).__name__}: {error}")) from None


def is_stub(error: BaseException) -> bool:
    return isinstance(error, NotImplementedError) and str(error).startswith("stage ")


def default_out(name: str) -> Path:
    return kata_root() / ".kata" / name


def open_in_browser(path: Path) -> None:
    import webbrowser
    url = path.resolve().as_uri()
    try:
        opened = webbrowser.open(url)
    except Exception:  # no browser at all, a broken BROWSER variable, ...
        opened = False
    if not opened:
        say(t("train.open", url=url), file=sys.stderr)


def stub_said(error) -> str:
    from autograd_kata.core.explain import stub_said as said  # here, not at the top: `kata --help` stays fast
    return said(error)


def engine_failed(error, where, impl, doing) -> Refusal:
    """The refusal (exit 1) for the learner's engine failing, to raise."""
    if is_stub(error):
        if impl == "exercises" and (manifest.find_root() / "solutions").is_dir():
            lines = [t("train.not_written", error=stub_said(error)), t("train.not_written_reference")]
        else:  # a student copy has no reference to fall back on: one line, what to do
            lines = [t("train.not_written_student", error=stub_said(error))]
    else:
        lines = [t("train.raised", where=where, kind=type(error).__name__, doing=doing, error=error)]
        if isinstance(error, AttributeError) or "unsupported operand" in str(error):
            lines.append(t("train.later_stage"))
    return Refusal("\n".join(lines), where=None)
