"""Which submitted file a stage grades (README, "Which file is graded"): the grader's
first step."""
from __future__ import annotations

import os
from pathlib import Path

from autograd_kata.core.manifest import Stage

SKIP_DIRS = ("solutions", "__pycache__", "node_modules", "venv")


def find_stage_files(submission: Path, stage: Stage) -> list[Path]:
    """Every file of the submission named like ``stage``'s module, in the
    order of the rule (README, "Which file is graded"): ``exercises/NAME`` at
    the top, then ``NAME`` at the top, then the shallowest, preferring a
    folder named ``exercises``, ties alphabetical.  Hidden folders,
    ``solutions/`` and caches are never searched."""
    submission = Path(submission)
    name = f"{stage.module}.py"
    found, seen = [], 0
    for folder, dirs, files in os.walk(submission):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
        seen += len(files)
        if name in files:
            found.append(Path(folder) / name)
        if seen > 20000:
            break

    def rank(p: Path):
        rel = p.relative_to(submission)
        return (rel != Path("exercises") / name, rel != Path(name), len(rel.parts),
                p.parent.name != "exercises", str(rel))
    return sorted(found, key=rank)
