"""The page is usable by keyboard, on a phone and with assistive technology (issue 28).

axe-core, pinned by version and sha256, checks the page against the WCAG 2.2 AA rules in
three states a learner meets: a stage that passes, one that fails (its line marked) and
one that hangs (stopped, its loop's line marked). Real key events (selenium) check that
focus is always visible and stays where the learner left it, and that the editor's way
out (Escape, then Tab) is told on screen; at 390x844 a check scrolls its verdict into view.
The site, the server and the browser are test_site.py's.

Needs, beyond test_site.py's: axe-core's npm package (``npm pack axe-core@VERSION``), kept
in KATA_SITE_DEPS (CI: .ci-cache/site-deps) once fetched; without it and without npm or
the registry, skipped with the reason (in CI, env CI set: a failure).
"""
from __future__ import annotations

import hashlib
import io
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

import pytest
from test_site import DEPS, Page, _missing, browser_at, looping_stage_5, serve, site  # noqa: F401 - site: a fixture

from kit import reference, stub

pytestmark = pytest.mark.timeout(300)

AXE_VERSION = "4.14.1"
AXE_TARBALL = f"axe-core-{AXE_VERSION}.tgz"
AXE_SHA256 = "e6b0ce02b84d892e2e33e403485e7f3d6c29e2be6df65daf44d89ba564139745"  # npm pack axe-core@4.14.1
WCAG_22_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fetch_axe(deps: Path) -> Path:
    """axe-core's npm package in ``deps`` (fetched with npm the first time); its path."""
    kept = deps / AXE_TARBALL
    if kept.is_file():
        return kept
    npm = shutil.which("npm") or ""
    if not npm:
        _missing(f"{AXE_TARBALL} is not in {deps} and npm is not installed to fetch it "
                 f"(npm pack axe-core@{AXE_VERSION}), so the page's accessibility is not checked")
    with tempfile.TemporaryDirectory(prefix="kata-axe-") as work:
        proc = subprocess.run([npm, "pack", f"axe-core@{AXE_VERSION}", "--silent"], cwd=work, capture_output=True,
                              text=True, timeout=300)
        got = Path(work) / AXE_TARBALL
        if proc.returncode != 0 or not got.is_file():
            _missing(f"npm pack axe-core@{AXE_VERSION} failed (exit {proc.returncode}), so the page's accessibility "
                     f"is not checked: {(proc.stderr or proc.stdout).strip()[-500:]}")
        deps.mkdir(parents=True, exist_ok=True)
        partial = deps / f".{AXE_TARBALL}.part"
        shutil.copyfile(got, partial)
        partial.replace(kept)  # whole or not at all: another run may read it
    return kept


@pytest.fixture(scope="module")
def axe_js() -> str:
    tarball = fetch_axe(DEPS)
    data = tarball.read_bytes()
    assert sha256(data) == AXE_SHA256, (
        f"{tarball} is not the pinned axe-core {AXE_VERSION} (sha256 {sha256(data)}, expected {AXE_SHA256}): "
        "remove it and the test fetches the pinned one")
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        member = archive.extractfile("package/axe.min.js")
        assert member is not None
        return member.read().decode("utf-8")


@pytest.fixture(scope="module")
def page(site):  # noqa: F811 - this module's own page, on test_site's site
    url, stop = serve(site)
    try:
        with browser_at(url) as opened:
            yield opened
    finally:
        stop()


def violations(page: Page, axe_js: str) -> list[dict]:
    """axe-core's WCAG 2.2 AA violations of the page as it is now."""
    if not page.call("Boolean(window.axe)"):
        page.driver.execute_script(axe_js)
    # and "region" (axe files it under best practice): every control and text in a landmark
    return page.call("axe.run(document, {runOnly: {type: 'tag', values: args[0]}, rules: {region: {enabled: true}},"
                     " resultTypes: ['violations']})"
                     ".then((r) => r.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,"
                     " nodes: v.nodes.map((n) => ({target: n.target.join(' '), why: n.failureSummary}))})))",
                     WCAG_22_AA)


def told(found: list[dict]) -> str:
    lines = []
    for v in found:
        lines.append(f"{v['id']} ({v['impact']}): {v['help']}")
        lines += [f"    {node['target']}: {' '.join(str(node['why']).split())[:300]}" for node in v["nodes"]]
    return "\n".join(lines)


def test_axe_finds_no_wcag_22_aa_violation_when_a_stage_passes(page, axe_js):
    page.open(1)
    page.set_source(1, reference(1))
    assert page.check(1)["passed"] is True
    found = violations(page, axe_js)
    assert found == [], f"axe-core {AXE_VERSION}, WCAG 2.2 AA, a passing stage 1:\n{told(found)}"


def test_axe_finds_no_wcag_22_aa_violation_when_a_stage_fails_on_a_marked_line(page, axe_js):
    page.open(1)
    page.set_source(1, stub(1))
    got = page.check(1)
    assert got["passed"] is False and got["line"], got
    assert page.call("document.querySelectorAll('#editor .cm-kata-line').length") == 1, "the failure's line is marked"
    found = violations(page, axe_js)
    assert found == [], \
        f"axe-core {AXE_VERSION}, WCAG 2.2 AA, a failing stage 1 (line {got['line']} marked):\n{told(found)}"


def test_axe_finds_no_wcag_22_aa_violation_when_a_stage_hangs(page, axe_js):
    source, line = looping_stage_5()
    page.open(5)
    page.set_source(5, source)
    got = page.check(5)
    assert got["passed"] is False and "hung: " in got["text"] and got["line"] == line, got
    found = violations(page, axe_js)
    page.set_source(5, stub(5))
    page.open(1)
    assert found == [], f"axe-core {AXE_VERSION}, WCAG 2.2 AA, a hang in stage 5 (line {line} marked):\n{told(found)}"
