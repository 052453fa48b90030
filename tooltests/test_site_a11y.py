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
import time
from pathlib import Path

import pytest
from test_site import DEPS, Page, _missing, browser_at, looping_stage_5, page, serve, site  # noqa: F401 - page, site: fixtures

from autograd_kata.core.i18n import t_in
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


# ---------------------------------------------------------------- the keyboard


def focused(page: Page) -> dict:
    """What has the focus, and the ring drawn for it: the element's own outline or, in the editor,
    the frame over the editor's pane (#code's ::after: an outline there would be under the
    gutters and the text)."""
    return page.call("(() => { const e = document.activeElement; const code = e.closest('#code');"
                     " const style = code ? getComputedStyle(code, '::after') : getComputedStyle(e);"
                     " const side = code ? 'borderTop' : 'outline';"
                     " return {id: e.id || (e.closest('#editor') ? 'editor' : e.tagName.toLowerCase()),"
                     " outline: style[side + 'Style'], width: parseFloat(style[side + 'Width']) || 0,"
                     " color: style[side + 'Color']}; })()")


def press(page: Page, *keys):
    """Real key events to whatever has the focus (selenium's ActionChains)."""
    from selenium.webdriver.common.action_chains import ActionChains
    chain = ActionChains(page.driver)
    for key in keys:
        chain.send_keys(key)
    chain.perform()


def seen(ring: dict) -> bool:
    """A ring one can see: an outline of 2 px or more (the browser's own is 1 px, and none on
    the editor), not transparent."""
    return ring["outline"] not in ("none", "hidden") and ring["width"] >= 2 and not ring["color"].endswith(", 0)")


def test_tab_reaches_every_control_and_each_shows_a_focus_ring(page):
    """From the top of the page, Tab by Tab: the language, the stage, each enabled button, the
    explorer link, the editor (left by Escape, then Tab) and the output, each with a ring."""
    from selenium.webdriver.common.keys import Keys
    page.open(1)
    page.set_source(1, stub(1))
    before = page.call("window.kata.shown()")
    page.call("(document.activeElement.blur(), window.scrollTo(0, 0), true)")
    page.driver.find_element("css selector", "header h1").click()  # where the next Tab starts from
    stops = []
    for _ in range(12):
        press(page, Keys.TAB)
        now = focused(page)
        stops.append(now)
        if now["id"] == "editor":
            press(page, Keys.ESCAPE, Keys.TAB)
            stops.append(focused(page))
            break
    order = [stop["id"] for stop in stops]
    assert order == ["lang", "stage", "check", "hint", "diff", "reset", "download", "explore", "editor", "out"], \
        f"Tab from the top went {order} (Restore is off: nothing kept yet)"
    unseen = [stop for stop in stops if not seen(stop)]
    assert unseen == [], f"focused with no visible ring (an outline of 2 px or more): {unseen}"
    assert page.call("window.kata.shown()") == before, "leaving the editor typed nothing into it"


def test_check_pressed_from_the_keyboard_leaves_the_focus_on_check(page):
    """The button is off during the run (one run at a time), which drops the focus to the page's
    body; when the run ends the focus is back on Check, ringed, for the next press."""
    from selenium.webdriver.common.keys import Keys
    page.open(1)
    for key, source in ((Keys.ENTER, reference(1)), (Keys.SPACE, stub(1))):
        page.set_source(1, source)
        checks = page.call("window.kata.timings.checks.length")
        page.call("(document.querySelector('#stage').focus(), true)")
        press(page, Keys.TAB)
        assert focused(page)["id"] == "check"
        press(page, key)
        assert page.call("(async () => { for (let i = 0; i < 1200 && window.kata.timings.checks.length === args[0];"
                         " i++) await new Promise((r) => setTimeout(r, 100));"
                         " return window.kata.timings.checks.length; })()", checks) == checks + 1, \
            f"{key!r} on Check ran no check within 120 s"
        verdict = page.call("document.querySelector('#out').className")
        assert verdict == ("passed" if source == reference(1) else "failed")
        after = page.call("(async () => { for (let i = 0; i < 50 && document.activeElement.id !== 'check'; i++)"
                          " await new Promise((r) => setTimeout(r, 100)); return true; })()") and focused(page)
        assert after["id"] == "check", f"after a check pressed from the keyboard the focus is on {after['id']}"
        assert seen(after), f"Check has the focus but no visible ring: {after}"


def test_the_editor_says_beside_it_how_to_leave_it_and_escape_then_tab_does(page):
    """Tab alone indents in the editor (focus stays); Escape, then Tab, leaves it. A line by the
    editor says so, and the editor names that line (aria-describedby) for a screen reader."""
    from selenium.webdriver.common.keys import Keys
    page.open(1)
    page.set_source(1, stub(1))
    keys_line = page.driver.find_element("id", "keys")
    assert keys_line.is_displayed() and keys_line.text == t_in("en", "site.editor_keys")
    box = page.call("(() => { const k = document.querySelector('#keys').getBoundingClientRect();"
                    " const e = document.querySelector('#editor').getBoundingClientRect();"
                    " return {gap: e.top - k.bottom, overlap: Math.min(k.right, e.right) - Math.max(k.left, e.left),"
                    " described: document.querySelector('#editor .cm-content').getAttribute('aria-describedby')}; })()")
    assert 0 <= box["gap"] < 20 and box["overlap"] > 100, f"the line is not by the editor: {box}"
    assert box["described"] == "keys"
    page.driver.find_element("css selector", "#editor .cm-content").click()
    # the click and a key first: after an Escape (an earlier test's) Tab leaves, until a key or a focus
    press(page, Keys.END, Keys.TAB)
    assert focused(page)["id"] == "editor", "Tab alone stays in the editor"
    assert page.call("window.kata.shown()") != stub(1), "and indents"
    page.set_source(1, stub(1))
    press(page, Keys.ESCAPE)
    assert page.call("document.querySelector('#note').textContent") == t_in("en", "site.escape_tab").replace("`", "")
    press(page, Keys.TAB)
    assert focused(page)["id"] == "out", "Escape, then Tab leaves the editor for the output"
    assert page.call("window.kata.shown()") == stub(1)


def escape_read_then_tab(page: Page, box: str):
    """On stage 1, open in ``box``: Escape, then Tab after the learner has read the note (3 s:
    CodeMirror's own way out ends after 2 s), leaves ``box`` for the output; back in it by
    Shift+Tab, Tab indents again; and Escape then another key then Tab indents too: the way
    out is for the next Tab only, and its note goes with it."""
    from selenium.webdriver.common.keys import Keys
    text = page.call("window.kata.shown()")
    page.driver.find_element("css selector", box).click()
    press(page, Keys.END)
    press(page, Keys.ESCAPE)
    time.sleep(3)
    press(page, Keys.TAB)
    assert focused(page)["id"] == "out", "Escape, then Tab 3 s later, leaves the editor for the output"
    assert page.call("window.kata.shown()") == text, "and types nothing"
    from selenium.webdriver.common.action_chains import ActionChains
    ActionChains(page.driver).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
    assert focused(page)["id"] == "editor", "Shift+Tab from the output is back in the editor"
    press(page, Keys.TAB)
    assert focused(page)["id"] == "editor", "back in the editor, Tab indents again"
    assert page.call("window.kata.shown()") != text
    page.set_source(1, text)
    press(page, Keys.ESCAPE)
    assert page.call("document.querySelector('#note').textContent") != ""
    press(page, Keys.END)
    assert page.call("document.querySelector('#note').textContent") == "", "the way out is over: so is its note"
    time.sleep(3)
    press(page, Keys.TAB)
    assert focused(page)["id"] == "editor", "Escape, then another key: the next Tab indents"
    assert page.call("window.kata.shown()") != text


def test_escape_then_tab_leaves_the_editor_however_long_the_note_is_read(page):
    """Issue 28 item 10's way out had CodeMirror's 2 s timer: a learner who pressed Escape, read
    the note, then Tab, was kept in the editor (Tab indented)."""
    page.open(1)
    page.set_source(1, stub(1))
    try:
        escape_read_then_tab(page, "#editor .cm-content")
    finally:
        page.set_source(1, stub(1))


def test_the_plain_text_box_passes_axe_and_escape_then_tab_leaves_it_too(tmp_path, axe_js):
    """A site built without the editor bundle: the text box is in the same landmarks, names the
    same line, and lets the keyboard out the same way (Tab alone indents)."""
    from selenium.webdriver.common.keys import Keys
    from test_site import plain_site
    folder, _ = plain_site(tmp_path)
    url, stop = serve(folder)
    try:
        with browser_at(url) as plain:
            assert plain.call("window.kata.editor()") == "plain"
            plain.set_source(1, stub(1))
            assert plain.check(1)["passed"] is False
            found = violations(plain, axe_js)
            assert found == [], f"axe-core {AXE_VERSION}, WCAG 2.2 AA, the plain text box:\n{told(found)}"
            assert plain.call("document.querySelector('#editor textarea').getAttribute('aria-describedby')") == "keys"
            plain.driver.find_element("css selector", "#editor textarea").click()
            press(plain, Keys.TAB)
            ring = focused(plain)
            assert ring["id"] == "editor" and seen(ring), ring
            assert plain.call("window.kata.shown()") != stub(1), "Tab alone indents"
            plain.set_source(1, stub(1))
            press(plain, Keys.ESCAPE, Keys.TAB)
            assert focused(plain)["id"] == "out", "Escape, then Tab leaves the text box for the output"
            assert plain.call("window.kata.shown()") == stub(1)
            escape_read_then_tab(plain, "#editor textarea")
    finally:
        stop()


# ---------------------------------------------------------------- a phone


PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True}


def verdict_box(page: Page) -> dict:
    """Where #out's first line (the verdict) is drawn, and the window's and #out's visible boxes,
    once it is in both (the page scrolls in the frames after the result) or after 10 s."""
    return page.call("(async () => { let box; for (let i = 0; i < 100; i++) {"
                     " const out = document.querySelector('#out'); const text = out.firstChild;"
                     " const first = out.textContent.split('\\n')[0]; const range = document.createRange();"
                     " range.setStart(text, 0); range.setEnd(text, first.length);"
                     " const line = range.getClientRects()[0]; const pane = out.getBoundingClientRect();"
                     " box = {first, top: line.top, bottom: line.bottom, pane_top: pane.top, pane_bottom: pane.bottom,"
                     " height: window.innerHeight};"
                     " if (box.top >= 0 && box.bottom <= box.height && box.top >= box.pane_top"
                     " && box.bottom <= box.pane_bottom) return box;"
                     " await new Promise((r) => setTimeout(r, 100)); } return box; })()")


def test_on_a_phone_check_brings_its_verdict_into_view(page, axe_js):
    """At 390x844 the output is under the editor, below the fold: after Check (a tap), the
    verdict's line is on the screen, also when the output pane was scrolled down before; and
    axe finds nothing there either."""
    page.open(1)
    page.set_source(1, stub(1))
    page.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    try:
        assert page.call("window.innerWidth") == PHONE["width"]
        for source, passed in ((stub(1), False), (reference(1), True)):
            page.set_source(1, source)
            page.call("(document.querySelector('#out').scrollTop = 1e6, window.scrollTo(0, 0), true)")
            below = page.call("document.querySelector('#out').getBoundingClientRect().top")
            assert below > PHONE["height"], f"the output starts at y={below}: not below the fold, nothing to test"
            checks = page.call("window.kata.timings.checks.length")
            page.driver.find_element("id", "check").click()
            assert page.call("(async () => { for (let i = 0; i < 1200 && window.kata.timings.checks.length === args[0];"
                             " i++) await new Promise((r) => setTimeout(r, 100));"
                             " return window.kata.timings.checks.length; })()", checks) == checks + 1
            assert page.call("document.querySelector('#out').className") == ("passed" if passed else "failed")
            seen_at = verdict_box(page)
            assert "Stage 1 - " in seen_at["first"], seen_at
            assert 0 <= seen_at["top"] and seen_at["bottom"] <= seen_at["height"], \
                f"after Check the verdict is off the screen: {seen_at}"
            assert seen_at["pane_top"] <= seen_at["top"] and seen_at["bottom"] <= seen_at["pane_bottom"], \
                f"the verdict is scrolled out of the output pane: {seen_at}"
        found = violations(page, axe_js)
        assert found == [], f"axe-core {AXE_VERSION}, WCAG 2.2 AA, at 390x844 after a pass:\n{told(found)}"
    finally:
        page.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        page.set_source(1, stub(1))
