"""Who a ``--class`` run grades: one folder per student (hidden ones skipped), each
named as every output writes it (``name_of``), and the students of one shard
(``--shard K/N``: a stable hash of the name, whatever the order or the other folders)."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from autograd_kata.classroom.grading.discovery import shown
from autograd_kata.core.errors import Refusal


def students(class_dir: Path) -> list[Path]:
    """One folder per student (hidden folders skipped), alphabetical."""
    return sorted(p for p in Path(class_dir).iterdir() if p.is_dir() and not p.name.startswith("."))


def name_of(folder: Path) -> str:
    """A student's name as the CSV, the summary, the reports and the terminal write it: the
    folder's name with any byte that is not UTF-8 and any control character written out
    (``discovery.shown``), so two folders never share a name and a name is one line."""
    return shown(Path(folder).name)


def parse_shard(text: str | None, env=os.environ) -> tuple[int, int] | None:
    """``K/N`` (1-based), or ``N`` alone with K from ``JOB_COMPLETION_INDEX`` (a
    Kubernetes Indexed Job's, 0-based) or ``KATA_SHARD_INDEX`` (1-based, e.g. an
    Actions matrix value)."""
    if not text:
        return None
    k_text, slash, n_text = text.partition("/")
    if not slash:
        k_text, n_text = "", text
    try:
        n = int(n_text)
        if k_text:
            k = int(k_text)
        elif env.get("JOB_COMPLETION_INDEX", "").strip():
            k = int(env["JOB_COMPLETION_INDEX"]) + 1
        elif env.get("KATA_SHARD_INDEX", "").strip():
            k = int(env["KATA_SHARD_INDEX"])
        else:
            raise Refusal(f"--shard {text}: give K/N, or set JOB_COMPLETION_INDEX (0-based) or "
                          f"KATA_SHARD_INDEX (1-based)", code=2, where="grade --shard")
    except ValueError:
        raise Refusal(f"--shard {text}: expected K/N, two whole numbers", code=2, where="grade --shard") from None
    if not 1 <= k <= n:
        raise Refusal(f"--shard {k}/{n}: K must be from 1 to N", code=2, where="grade --shard")
    return k, n


def shard_of(name: str, n: int) -> int:
    """The shard (1..n) of a student: a hash of the name, so it never depends on who else is there."""
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "big") % n + 1


def in_shard(name: str, shard: tuple[int, int] | None) -> bool:
    return shard is None or shard_of(name, shard[1]) == shard[0]
