"""Tests of `kata site` (issue 19): the kata in a browser tab.

The site is built once per module, served on 127.0.0.1 and driven in a real
headless Chromium through the page's automation hook ``window.kata``.  Chromium
runs with a dead proxy for every host but 127.0.0.1, so any request that would
leave the machine fails: the page works offline or not at all.  Every text the
page shows is compared with what the terminal command prints for the same code
(``kata check N``, ``kata hint N``, ``kata diff N --previous``), run in a copy
of the kata.

Needs, beyond the core install (skipped, with the reason, when missing; CI
fetches them, see .ci/run, and there a missing one is a failure):
  the site's pinned Pyodide, wheels and editor   kata site DIR --fetch (into .kata/site-deps/), or KATA_SITE_DEPS=DIR
  selenium + Chromium                    pip install selenium; apt install chromium chromium-driver
"""
from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import zipfile
from pathlib import Path

import pytest

from autograd_kata.core.i18n import t_in
from autograd_kata.core.manifest import STAGES, stage
from autograd_kata.learner.feel import runs_engine
from autograd_kata.site import build as site_build
from autograd_kata.site import codemirror, limits
from kit import ROOT, clone, reference, run, stub

# Pyodide's cold start (~10 s on 2 busy cores) is paid in the first test's setup.
pytestmark = pytest.mark.timeout(180)

DEPS = Path(os.environ.get("KATA_SITE_DEPS") or ROOT / site_build.DEPS_DIR)
IN_CI = bool(os.environ.get("CI"))
HANG_LINE = "        while True: pass  # the loop the page must stop\n"


def _missing(reason: str):
    if IN_CI:  # CI fetches everything this test needs: a missing piece is a broken CI step
        pytest.fail(reason)
    pytest.skip(reason)


def have_deps() -> bool:
    return (DEPS / site_build.PYODIDE_TARBALL).is_file() and all((DEPS / w).is_file() for w in site_build.WHEELS) \
        and (DEPS / codemirror.BUNDLE).is_file()


def deps_args(**leave_out) -> list:
    """The pinned files, each named (as an instructor's offline copy would pass them)."""
    named = {"--pyodide": DEPS / site_build.PYODIDE_TARBALL, "--wheels": DEPS, "--codemirror": DEPS / codemirror.BUNDLE}
    return [arg for option, path in named.items() if option.lstrip("-") not in leave_out for arg in (option, path)]


# ---------------------------------------------------------------- the build, without a browser


def kata_cli(*argv, cwd):
    return run(["kata", *map(str, argv)], cwd=cwd)


def test_a_wheel_that_is_not_the_pinned_one_is_refused_by_name(tmp_path):
    if not have_deps():
        _missing(f"the site's Pyodide and wheels are not in {DEPS} (kata site DIR --fetch)")
    deps = tmp_path / "deps"
    shutil.copytree(DEPS, deps)
    name = next(iter(site_build.WHEELS))
    (deps / name).write_bytes((deps / name).read_bytes() + b"tampered")
    proc = kata_cli("site", tmp_path / "site", "--wheels", deps, "--pyodide", deps / site_build.PYODIDE_TARBALL,
                    cwd=ROOT)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert name in proc.stderr and "pinned" in proc.stderr
    assert not (tmp_path / "site").exists(), "nothing is written when a file does not match"


def test_an_editor_bundle_that_is_not_the_pinned_one_is_refused_by_name(tmp_path):
    if not have_deps():
        _missing(f"the site's Pyodide, wheels and editor are not in {DEPS} (kata site DIR --fetch)")
    bundle = tmp_path / codemirror.BUNDLE
    bundle.write_bytes((DEPS / codemirror.BUNDLE).read_bytes().replace(b"createEditor", b"createEditoR", 1))
    proc = kata_cli("site", tmp_path / "site", *deps_args(codemirror=False), "--codemirror", bundle, cwd=ROOT)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert codemirror.BUNDLE in proc.stderr and "pinned" in proc.stderr and codemirror.BUNDLE_SHA256 in proc.stderr
    assert not (tmp_path / "site").exists(), "nothing is written when the editor does not match"
    proc = kata_cli("site", tmp_path / "site", *deps_args(codemirror=False), "--codemirror", tmp_path / "none.mjs",
                    cwd=ROOT)
    assert proc.returncode == 2 and "none.mjs" in proc.stderr and "--fetch" in proc.stderr, proc.stderr
    assert not (tmp_path / "site").exists()


def test_the_editor_bundle_is_built_from_the_lock_and_its_build_is_the_pinned_one():
    """What --fetch runs: npm ci --ignore-scripts (every package's integrity hash is in the
    lock) and esbuild, from the project in site/editor/; the same bytes on every machine."""
    import json as json_
    files = codemirror.project_files()
    manifest = json_.loads(files["package.json"])
    lock = json_.loads(files["package-lock.json"])
    pinned = {**manifest["dependencies"], **manifest["devDependencies"]}
    assert pinned["codemirror"] == codemirror.CODEMIRROR_VERSION
    assert pinned["@codemirror/lang-python"] == codemirror.LANG_PYTHON_VERSION
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", version) for version in pinned.values()), "exact versions only"
    packages = {name: entry for name, entry in lock["packages"].items() if name}
    assert packages and all(entry.get("integrity", "").startswith("sha512-") for entry in packages.values())
    for name, version in pinned.items():
        assert packages[f"node_modules/{name}"]["version"] == version, name
    npm = shutil.which("npm")
    if npm is None:
        _missing("npm is not installed (apt install npm): kata site --fetch builds the editor with it")
    bundle = codemirror.build_bundle(npm)
    assert site_build.sha256(bundle) == codemirror.BUNDLE_SHA256, "the build is the pinned bundle"
    assert b"createEditor" in bundle and 200e3 < len(bundle) < 800e3


def test_without_pyodide_it_says_how_to_get_it(tmp_path):
    proc = kata_cli("site", tmp_path / "site", "--pyodide", tmp_path / "nothing.tgz", cwd=ROOT)
    assert proc.returncode == 2
    assert f"npm pack pyodide@{site_build.PYODIDE_VERSION}" in proc.stderr and "--fetch" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_the_time_limit_stops_a_loop_in_the_katas_code_and_names_its_line(tmp_path):
    """site/limits.py on this interpreter (settrace below 3.12, sys.monitoring above): what the page uses."""
    (tmp_path / "exercises").mkdir()
    module = tmp_path / "exercises" / "spin.py"
    module.write_text("def spin():\n    n = 0\n    while True:\n        n += 1\n", encoding="utf-8")
    namespace = {}
    exec(compile(module.read_text(), str(module), "exec"), namespace)  # noqa: S102 - our own two lines
    import time
    import traceback
    started = time.monotonic()
    with pytest.raises(limits.TimeLimit) as caught:
        with limits.deadline(0.3, str(tmp_path)):
            namespace["spin"]()
    assert time.monotonic() - started < 2.5
    lines = [f.lineno for f in traceback.extract_tb(caught.value.__traceback__) if f.filename == str(module)]
    assert lines and lines[-1] in (3, 4), lines
    assert sys.gettrace() is None
    assert not hasattr(sys, "monitoring") or sys.monitoring.get_tool(limits.TOOL_ID) is None


def test_a_student_copy_gives_its_own_files_and_no_reference(tmp_path):
    copy = tmp_path / "student"
    proc = kata_cli("release", copy, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    files = site_build.learner_files(copy)
    assert {s.source("exercises") for s in STAGES} <= set(files)
    assert {f".kata-pristine/{s.source('exercises')}" for s in STAGES} <= set(files), "for Reset"
    assert {s.test_file for s in STAGES} | {"conftest.py", "pyproject.toml"} <= set(files)
    assert not any(name.startswith(("solutions/", "reference/", "autograd_kata/maintainer/")) for name in files)
    assert files[stage(1).source("exercises")].decode() == stub(1)


def test_no_stage_test_is_left_out_of_the_page():
    """A test marked native_only is left out of the page, so a stage's verdict there would rest on
    fewer tests than `kata check N`'s: no test in tests/ may carry the mark (issue 19)."""
    proc = run([sys.executable, "-m", "pytest", "--impl", "solutions", "--collect-only", "-q",
                "-p", "no:cacheprovider", "-m", "native_only", "tests"], cwd=ROOT)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 5, f"tests marked native_only, which the page would not run:\n{out}"
    assert int(re.search(r"no tests collected \((\d+) deselected\)", out)[1]) >= 9 * len(STAGES), out


def with_the_pages_plugin(folder: Path, tests: str):
    """``tests`` as ``folder/test_x.py``, run by a pytest with site/limits.py in pytest-timeout's
    place, as the page runs them; it prints ``LEFT_OUT [names] EXIT code`` last."""
    (folder / "test_x.py").write_text(tests, encoding="utf-8")
    script = ("import sys, pytest\nfrom autograd_kata.site import limits\n"
              "code = pytest.main(['-q', '-p', 'no:timeout', '-p', 'no:cacheprovider', sys.argv[1]], "
              "plugins=[limits])\nprint('LEFT_OUT', limits.LEFT_OUT, 'EXIT', int(code))\n")
    proc = run([sys.executable, "-c", script, str(folder)], cwd=folder)
    return proc.stdout + proc.stderr


def test_the_pages_plugin_leaves_out_a_native_only_test_and_names_it(tmp_path):
    """The mark's handling in the page (site/limits.py), on a test file of its own: the marked
    test is deselected and named, the other one runs."""
    out = with_the_pages_plugin(tmp_path, "import pytest\n\n\n@pytest.mark.native_only\n"
                                          "def test_needs_a_terminal():\n    pass\n\n\n"
                                          "def test_runs_anywhere():\n    pass\n")
    assert "LEFT_OUT ['test_needs_a_terminal'] EXIT 0" in out, out
    assert "1 passed, 1 deselected" in out


def test_the_pages_limit_counts_time_spent_in_c_as_the_terminals_does(tmp_path):
    """Measured (issue 28): ``time.sleep(3)`` in ``__init__`` passed every stage-1 test in the
    page, where ``kata check 1`` names a hang: a sleep makes no event of the kata's code to stop it
    in.  Past its limit when its call returns, the test fails with pytest-timeout's words; one
    within its limit passes."""
    out = with_the_pages_plugin(tmp_path, "import time\nimport pytest\n\n\n@pytest.mark.timeout(0.3)\n"
                                          "def test_sleeps_past_its_limit():\n    time.sleep(0.8)\n\n\n"
                                          "@pytest.mark.timeout(5)\ndef test_sleeps_within_it():\n"
                                          "    time.sleep(0.1)\n")
    assert "1 failed, 1 passed" in out and "EXIT 1" in out, out
    assert "FAILED test_x.py::test_sleeps_past_its_limit" in out and "\n" + limits.MESSAGE % 0.3 + "\n" in out, out


def test_the_pages_workflow_builds_and_publishes_the_site():
    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load((ROOT / ".github/workflows/pages.yml").read_text(encoding="utf-8"))
    steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
    runs = [step.get("run", "") for step in steps]
    assert "kata site _site --fetch" in runs
    # the editor too: built by --fetch (npm ci, keyed by its lock), and its absence fails the build
    node = next(step for step in steps if step.get("uses", "").startswith("actions/setup-node"))
    assert node["with"]["cache-dependency-path"] == "autograd_kata/site/editor/package-lock.json"
    assert any(f"test -s _site/{codemirror.SITE_FILE}" in line for line in runs[runs.index("kata site _site --fetch"):])
    assert any(step.get("uses", "").startswith("actions/upload-pages-artifact") and step["with"]["path"] == "_site"
               for step in steps)
    assert any(step.get("uses", "").startswith("actions/deploy-pages") for step in steps)
    assert workflow["permissions"]["pages"] == "write"


def test_the_docs_say_how_to_host_the_page_where_it_can_be_hosted(tmp_path):
    """GitHub Pages publishes the workflow's site only with Settings -> Pages -> Source set to
    "GitHub Actions", and only a repository with pages.yml and `kata site` builds it: the
    maintainers' or a fork, never a `kata release` copy (which has neither, nor these words)."""
    for name in ("README.md", "README.ja.md", "docs/instructors.md"):
        text = " ".join((ROOT / name).read_text(encoding="utf-8").split())
        assert "Settings → Pages → Source" in text and "GitHub Actions" in text, f"{name}: no Pages setting"
        assert "kata release" in text and "fork" in text, f"{name}: where the page can be hosted from is not said"
    copy = tmp_path / "student"
    proc = kata_cli("release", copy, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert not (copy / ".github" / "workflows" / "pages.yml").exists(), "a release copy has pages.yml: fix the docs"
    assert "Settings → Pages" not in (copy / "README.md").read_text(encoding="utf-8"), \
        "a learner's README tells them to host the page, which their copy cannot build"


def test_the_readme_starts_with_both_ways_to_start_and_the_instructors_command():
    top = "\n".join((ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:14])
    assert "In your browser" in top and "python -m pip install autograd-kata" in top
    assert "kata init" in top and "[Start here](#start-here)" in top
    assert "kata site DIR --fetch" in top


# ---------------------------------------------------------------- the site in a browser


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    if not have_deps():
        _missing(f"the site's Pyodide and wheels are not in {DEPS} (kata site DIR --fetch)")
    folder = tmp_path_factory.mktemp("site") / "site"
    proc = kata_cli("site", folder, *deps_args(), cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "plain text box" not in proc.stdout
    return folder


def serve(folder: Path, handler=None):
    """A web server for ``folder`` on 127.0.0.1 (a free port) in a thread; (url, stop)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler or Quiet,
                                                                                directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def stop():
        server.shutdown()
        server.server_close()
    return f"http://127.0.0.1:{server.server_address[1]}/", stop


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class Isolated(Quiet):
    """Cross-origin isolation (COOP/COEP): the page then has SharedArrayBuffer and Pyodide's interrupt buffer."""

    def end_headers(self):
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        super().end_headers()


@contextlib.contextmanager
def browser_at(url: str):
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
    binary = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
    driver_path = shutil.which("chromedriver")
    if not binary or not driver_path:
        _missing("Chromium and chromedriver are not installed (apt install chromium chromium-driver)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = binary
    profile = tempfile.mkdtemp(prefix="kata-chromium-")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 # every host but the loopback goes to a proxy that is not there: offline, or it fails
                 "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=127.0.0.1",
                 "--lang=en-US", "--window-size=1280,820", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        driver.set_page_load_timeout(30)
        driver.set_script_timeout(180)
        driver.get(url + "index.html")
        Page(driver).ready()
        yield Page(driver)
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def page(site):
    """The site served and open in Chromium, for one test module (test_site_safety.py and
    test_site_a11y.py import it: each module gets its own); ``page.url`` is where."""
    url, stop = serve(site)
    try:
        with browser_at(url) as opened:
            opened.url = url
            yield opened
    finally:
        stop()


class Page:
    def __init__(self, driver):
        self.driver = driver

    def call(self, expression: str, *args):
        """``await expression`` in the page (``args`` as ``args[0]``, ...); its JSON value."""
        script = ("const done = arguments[arguments.length - 1]; const args = Array.from(arguments).slice(0, -1);"
                  f"(async () => JSON.stringify(await ({expression})))()"
                  ".then(done, (e) => done(JSON.stringify({error: String(e && e.stack || e)})));")
        value = json.loads(self.driver.execute_async_script(script, *args) or "null")
        if isinstance(value, dict) and set(value) == {"error"}:
            raise AssertionError(value["error"])
        return value

    def ready(self):
        return self.call("(async () => { for (let i = 0; i < 300 && !window.kata; i++)"
                         " await new Promise((r) => setTimeout(r, 100)); return window.kata.ready; })()")

    def check(self, n: int) -> dict:
        return self.call("window.kata.check(args[0])", n)

    def set_source(self, n: int, text: str):
        return self.call("window.kata.setSource(args[0], args[1])", n, text)

    def open(self, n: int):
        """Pick stage ``n`` in the page's stage list, as a learner does: its module opens in the editor."""
        from selenium.webdriver.support.ui import Select
        Select(self.driver.find_element("id", "stage")).select_by_value(str(n))
        assert self.call("(async () => { for (let i = 0; i < 100; i++) {"
                         " if (localStorage.getItem(window.kata.storeKey('stage')) === args[0]"
                         " && window.kata.shown() === await window.kata.getSource(Number(args[0]))) return true;"
                         " await new Promise((r) => setTimeout(r, 100)); } return false; })()", str(n)) is True, \
            f"stage {n} did not open in the editor within 10 s"

    def type_at_start(self, text: str, editable: str):
        """Real key events: a click into ``editable``, Ctrl+Home, then ``text`` typed."""
        from selenium.webdriver.common.keys import Keys
        box = self.driver.find_element("css selector", editable)
        box.click()
        box.send_keys(Keys.CONTROL, Keys.HOME)
        box.send_keys(text)


@pytest.fixture(scope="module")
def terminal(tmp_path_factory):
    """A copy of the kata where `kata check` runs in a terminal-like child process."""
    return clone(tmp_path_factory.mktemp("terminal"))


def terminal_says(root: Path, n: int, source: str | None, *args) -> str:
    path = root / stage(n).source("exercises")
    path.write_text(source if source is not None else stub(n), encoding="utf-8")
    shutil.rmtree(root / ".kata", ignore_errors=True)  # nothing cached, nothing remembered: as the page starts
    proc = run(["kata", *args], cwd=root, env={"NO_COLOR": "1", "KATA_LANG": ""})
    return proc.stdout.rstrip("\n")


def failure_block(text: str) -> list[str]:
    """The first failing test's lines: from the first ✗ line to the next blank line."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("✗"))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def test_the_stage_1_stub_fails_with_what_kata_check_1_says(page, terminal):
    page.set_source(1, stub(1))
    got = page.check(1)
    assert got["passed"] is False
    said = terminal_says(terminal, 1, None, "check", "1")
    assert failure_block(got["text"])[:2] == failure_block(said)[:2]
    assert got["text"] == on_the_page(said, 1), "the same code makes the same lines"


def on_the_page(said: str, n: int) -> str:
    """The terminal's report as the page words it: its own advice in place of `kata check N --all`."""
    terminal, page = t_in("en", "check.fold_all", n=n), t_in("en", "site.fold_all", n=n)
    return said.replace(terminal, page)


def test_the_page_advises_no_command_it_does_not_have(page, terminal):
    """`kata check N --all` has no button in the page: where the terminal's report advises it
    (every failure in full), the page gives its own advice, and the terminal keeps its own."""
    page.set_source(2, stub(2))  # two kinds of failure: the report folds the second
    got = page.check(2)["text"]
    said = terminal_says(terminal, 2, None, "check", "2")
    assert t_in("en", "check.fold_all", n=2) in said, "the terminal's report no longer folds the stub's failures"
    assert "--all" not in got, f"the page advises a command it does not have:\n{got}"
    assert got.splitlines()[-3] == "  " + t_in("en", "site.fold_all", n=2), got
    assert got == on_the_page(said, 2), "but for that advice, the terminal's lines"


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_every_message_that_advises_all_has_the_pages_own_words(lang):
    """Any message of the catalogue that names `--all` can reach the page's report (a test's
    message, the report's folds): each has its page words in site/inpage.py's PAGE_WORDS,
    and none of those names a command the page does not have."""
    from autograd_kata.core import i18n
    from autograd_kata.site import inpage
    advising = {msgid for msgid, text in i18n.MESSAGES.catalogue(lang).messages.items()
                if "--all" in (text if isinstance(text, str) else " ".join(text))}
    assert advising, "no message names --all: the terminal's advice is gone, or this test looks in the wrong place"
    assert advising <= set(inpage.PAGE_WORDS), \
        f"{sorted(advising - set(inpage.PAGE_WORDS))} advise --all, which the page has not: give each page words"
    with inpage.page_words():
        for msgid in inpage.PAGE_WORDS:
            page_text = i18n.MESSAGES.raw(msgid, lang, 2)
            assert "--all" not in page_text and "kata check" not in page_text, (msgid, page_text)
            assert "`" not in page_text, f"{msgid} ({lang}): the page shows backticks as they are"
    assert "--all" in i18n.MESSAGES.raw("check.fold_all", lang, 2), "after page_words the terminal's words are back"


@pytest.mark.parametrize("n", [s.number for s in STAGES])
def test_the_reference_of_each_stage_passes(page, terminal, n):
    page.set_source(n, reference(n))
    got = page.check(n)
    assert got["passed"] is True, got["text"]
    said = terminal_says(terminal, n, reference(n), "check", str(n))
    page_lines, terminal_lines = got["text"].splitlines(), said.splitlines()
    # up to the next step (the terminal's copy has the reference, so it also offers `kata diff N`)
    taught = [line for line in terminal_lines if line.startswith("  ")][:1]
    cut = terminal_lines.index(taught[0]) + 1 if taught else 1
    assert page_lines[0].split(":")[0] == terminal_lines[0].split(":")[0]
    assert page_lines[1:cut] == terminal_lines[1:cut]
    if runs_engine(stage(n)):  # the numbers from the learner's own engine, in the page too, the same numbers
        numbers = [line for line in terminal_lines[cut:] if not line.strip().startswith(("Next:", "then:"))]
        assert numbers and all(line in page_lines for line in numbers), (got["text"], said)


def test_stage_5_runs_all_its_tests_in_the_browser(page, terminal):
    """The 100,000-op chain too: the page leaves no stage test out (the chain is freed without
    recursion in C, which overflowed the worker's stack)."""
    page.set_source(5, reference(5))
    text = page.check(5)["text"]
    said = terminal_says(terminal, 5, reference(5), "check", "5")
    total = int(re.search(r"all (\d+) tests pass", said)[1])
    assert total > 0 and f"all {total} tests pass" in text.splitlines()[0], (text, said)
    not_here = t_in("en", "site.not_here", names="", stage=5).split(":")[0]  # the page is in English
    for n in (1, 2, 3, 4, 5, 6, 7, 8):  # no stage leaves a test out
        page.set_source(n, stub(n))
        assert not_here not in page.check(n)["text"]


@pytest.mark.parametrize("mistake_id", ["no-reverse", "recursive-topological-sort", "recursion-limit-raised"])
def test_a_classic_mistake_in_stage_5_is_named_as_kata_check_5_names_it(page, terminal, mistake_id):
    """A recursive order (micrograd's, with or without a raised limit) fails the 100,000-op chain
    in the page with the terminal's lines, as an order not reversed fails the order tests."""
    from autograd_kata.maintainer.mistakes import MISTAKES
    mistake = next(m for m in MISTAKES if m.id == mistake_id)
    source = reference(5)
    assert source.count(mistake.old) == 1
    source = source.replace(mistake.old, mistake.new)
    page.set_source(5, source)
    got = page.check(5)
    assert got["passed"] is False
    said = terminal_says(terminal, 5, source, "check", "5")
    assert failure_block(got["text"]) == failure_block(on_the_page(said, 5))
    assert mistake.phrase in got["text"]


def looping_stage_5(loop: str = HANG_LINE) -> tuple[str, int]:
    """The stage-5 reference with an endless ``loop`` (its lines, indented for backward's
    body) as backward()'s first statement, and the loop's first line."""
    lines = reference(5).splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("def backward(")) + 1
    if lines[at].strip().startswith('"""'):  # after the docstring
        at = next(j for j in range(at, len(lines)) if lines[j].rstrip().endswith('"""')
                  and (j > at or lines[j].strip().count('"""') == 2)) + 1
    lines[at:at] = loop.splitlines(keepends=True)
    return "".join(lines), at + 1


# Endless loops whose turn has more than one line: where in a turn a stop lands depends on
# the Python (3.11's signal, 3.14's sys.monitoring), the loop's header does not
LOOPS = {"while": "        while True:\n            pass\n",
         "for": "        import itertools\n        for turn in itertools.count():\n            turn -= 1\n"
                "            turn += 1\n"}


def hang_line(text: str) -> str:
    """The line of a report that says where a hang was."""
    at = t_in("en", "hang.at", where="").strip()
    return next(ln for ln in text.splitlines() if at in ln)


@pytest.mark.parametrize("kind", sorted(LOOPS))
def test_kata_check_names_a_hang_on_its_loops_header(terminal, kind):
    """The issue's `:29 pass` in the page, `:28 while True:` in the terminal: both now name the
    innermost loop around the line the stop landed on, by its header (read with ast)."""
    source, line = looping_stage_5(LOOPS[kind])
    header = line + 1 if kind == "for" else line
    said = terminal_says(terminal, 5, source, "check", "5")
    code = source.splitlines()[header - 1].strip()
    assert f"exercises/stage05_backward.py:{header}, in backward: {code}" in hang_line(said), said


def test_kata_check_stops_a_loop_inside_c_within_its_limit_and_names_its_line(terminal):
    """No signal stops ``sum(itertools.count())`` (no Python event until it returns: kata check
    waited out its 300 s run limit). faulthandler's own thread, armed each test 3 s past its limit
    (results.channel.CLoopWatch), ends the run and writes the stacks, which name the learner's line."""
    source, line = looping_stage_5("        import itertools\n        sum(itertools.count())  # a loop in C\n")
    said = terminal_says(terminal, 5, source, "check", "5")
    hung = [ln for ln in said.splitlines() if "hung: " in ln]
    assert hung and f"exercises/stage05_backward.py:{line + 1}: sum(itertools.count())" in hung[0], said
    assert t_in("en", "hang.whole_run_next", n=5).strip() in said, said


@pytest.mark.parametrize("loop", [HANG_LINE, LOOPS["while"]], ids=["one line", "two lines"])
def test_an_infinite_loop_in_stage_5_is_stopped_naming_its_line_and_the_next_check_works(page, terminal, loop):
    source, line = looping_stage_5(loop)
    page.open(5)
    page.set_source(5, source)
    got = page.check(5)
    assert got["passed"] is False
    place = f"exercises/stage05_backward.py:{line}"
    assert "hung: " in got["text"] and place in got["text"], got["text"]
    assert got["line"] == line, "the page points at the loop's line, as data"
    marked = page.call("Array.from(document.querySelectorAll('#editor .cm-kata-line'), (e) => e.textContent)")
    assert marked == [loop.splitlines()[0]], "the editor marks that line"
    said = terminal_says(terminal, 5, source, "check", "5")
    assert place in said, "kata check 5 names the same line"
    assert hang_line(got["text"]) == hang_line(said), "the page and the terminal say the same words"
    hung = [ln for ln in got["text"].splitlines() if "hung: " in ln]
    assert hung == [ln for ln in said.splitlines() if "hung: " in ln]
    page.set_source(5, reference(5))
    again = page.check(5)
    assert again["passed"] is True, "after a hang the page still works"
    assert again["line"] is None and page.call("document.querySelectorAll('#editor .cm-kata-line').length") == 0
    page.open(1)



def test_the_page_warms_pytest_while_the_learner_reads_and_a_check_after_it_works(page):
    """Most of a cold page's first check was pytest's first import (issue 28): once ready, the
    page has its worker import pytest and its plugins (``inpage.warm``, timed in ``timings.warm_ms``;
    its effect on the time is a benchmark's matter: docs/maintainers.md, "The page")."""
    warmed = page.call("(async () => { for (let i = 0; i < 1200 && window.kata.timings.warm_ms === null; i++)"
                       " await new Promise((r) => setTimeout(r, 50)); return window.kata.timings.warm_ms; })()")
    assert isinstance(warmed, (int, float)) and warmed > 0, f"the worker never warmed pytest: {warmed!r}"
    page.set_source(1, reference(1))
    try:
        assert page.check(1)["passed"] is True
    finally:
        page.set_source(1, stub(1))


def test_an_edit_after_a_pass_is_what_the_next_check_tests(page):
    """pytest.main twice in one process would test the module imported the first time,
    unless every module of the kata is dropped before each run."""
    page.set_source(2, reference(2))
    assert page.check(2)["passed"] is True
    page.set_source(2, stub(2))
    got = page.check(2)
    assert got["passed"] is False and "not written yet" in got["text"]


def test_the_editor_is_codemirror_with_python_highlighted(page):
    page.set_source(2, stub(2))
    page.open(2)
    assert page.call("window.kata.editor()") == "codemirror"
    assert page.call("document.querySelectorAll('#editor .cm-editor .cm-content').length") == 1
    assert page.call("document.querySelectorAll('#editor textarea').length") == 0
    classes = page.call("Object.fromEntries(['def', 'return', '# ', '\"\"\"', '0.0'].map((w) => [w, Array.from("
                        "document.querySelectorAll('#editor .cm-content [class^=tok-]'))"
                        ".filter((e) => e.textContent.startsWith(w)).map((e) => e.className)[0] || null]))")
    assert classes == {"def": "tok-keyword", "return": "tok-keyword", "# ": "tok-comment", '"""': "tok-string",
                       "0.0": "tok-number"}, classes
    names = page.call("Array.from(document.querySelectorAll('#editor .tok-definition'), (e) => e.textContent)")
    assert "__add__" in names and "__mul__" in names, names
    todo = page.call("Array.from(document.querySelectorAll('#editor .cm-kata-todo'), (e) => e.textContent)")
    assert todo and set(todo) == {"NotImplementedError"}, "what is left to write stands out"
    assert page.call("document.querySelectorAll('#editor .cm-lineNumbers .cm-gutterElement').length") > 10
    page.open(1)


def test_keys_typed_into_the_editor_are_what_check_tests(page):
    """Real key events (selenium's send_keys) into CodeMirror: the typed line is in the
    source the page keeps and in the module that Check tests, and the line is marked."""
    page.open(1)
    page.set_source(1, reference(1))
    assert page.check(1)["passed"] is True
    page.type_at_start("1/0\n", "#editor .cm-content")
    assert page.call("window.kata.getSource(1)") == "1/0\n" + reference(1)
    kept = page.call("localStorage.getItem(window.kata.storeKey('src:1'))")
    assert kept == "1/0\n" + reference(1), "kept for a reload"
    got = page.check(1)
    assert got["passed"] is False and "ZeroDivisionError" in got["text"], got["text"]
    from selenium.webdriver.common.keys import Keys
    page.call("(document.querySelector('#out').textContent = '')")
    checks = page.call("window.kata.timings.checks.length")
    page.driver.find_element("css selector", "#editor .cm-content").send_keys(Keys.CONTROL, Keys.ENTER)
    shown = page.call("(async () => { for (let i = 0; i < 300 && window.kata.timings.checks.length === args[0]; i++)"
                      " await new Promise((r) => setTimeout(r, 100));"
                      " return document.querySelector('#out').textContent; })()", checks)
    assert shown == got["text"], "Ctrl+Enter in the editor checks the stage"
    assert page.call("window.kata.shown()") == "1/0\n" + reference(1), "and types no new line"
    page.set_source(1, stub(1))


def test_a_loop_inside_c_is_stopped_from_outside_naming_its_test_and_the_page_starts_python_again(page, terminal):
    """No Python event to stop it at: the page ends the worker and starts a new one, within the
    terminal's bound (the test's limit and results.channel.GRACE: the worker tells the page both as
    the test starts; the check's own 60 s watchdog is not what stops it). It names the test the
    loop was in (the first to call backward(), the one a loop in Python fails in the terminal)
    and says why no line is named: the time went in a call that never came back to Python code."""
    from autograd_kata.core.results.channel import GRACE
    limit = re.search(r"^STAGE_TIMEOUT = ([0-9.]+)$", (ROOT / "conftest.py").read_text(encoding="utf-8"), re.M)
    source, _ = looping_stage_5()
    in_python = terminal_says(terminal, 5, source, "check", "5")
    first = next(ln.strip().removeprefix("✗ ") for ln in in_python.splitlines() if ln.startswith("✗ "))
    source = source.replace(HANG_LINE, "        import itertools; sum(itertools.count())  # a loop in C\n")
    page.set_source(5, source)
    assert page.call("window.kata.watchdogMs") == 60000
    got = page.check(5)
    bound = round(float(limit.group(1)) + GRACE)  # the stage tests' limit (conftest.py), and the grace
    assert got["passed"] is False and got["line"] is None, got
    assert got["text"].splitlines() == [
        "hung: " + t_in("en", "site.hang_in_c", test=first, seconds=bound).replace("`", ""),
        "The page stopped the run and started Python again; your code is kept."], got["text"]
    assert f"{first} had not finished after {bound} s" in got["text"] and "never came back to Python" in got["text"]
    assert page.call("window.kata.getSource(5)") == source
    page.set_source(5, reference(5))
    assert page.check(5)["passed"] is True, "the new worker checks the next edit"


def test_on_a_cross_origin_isolated_page_a_hang_in_c_is_stopped_and_the_next_check_works(site):
    """With COOP/COEP headers the page first tries Pyodide's interrupt buffer; a loop in C that
    never looks at it still ends in a new worker, which must not inherit the interrupt."""
    source, _ = looping_stage_5()
    source = source.replace(HANG_LINE, "        import itertools; sum(itertools.count())  # a loop in C\n")
    url, stop = serve(site, Isolated)
    try:
        with browser_at(url) as isolated:
            assert isolated.call("self.crossOriginIsolated") is True
            # a first check imports pytest and the tests: on busy cores that alone took over the 3 s
            # below, and the interrupt then stopped an import instead of the loop
            isolated.set_source(5, reference(5))
            assert isolated.check(5)["passed"] is True
            isolated.set_source(5, source)
            isolated.call("(window.kata.watchdogMs = 3000)")
            got = isolated.check(5)
            assert got["passed"] is False and "hung: " in got["text"]
            # the next check is the new worker's test, not the watchdog's: under CI's load a right
            # stage 5 took over 3 s in the page, and the 3 s watchdog interrupted it
            isolated.call("(window.kata.watchdogMs = 60000)")
            isolated.set_source(5, reference(5))
            assert isolated.check(5)["passed"] is True
    finally:
        stop()


def test_set_lang_ja_gives_the_japanese_lines(page, terminal):
    try:
        assert page.call("window.kata.setLang('ja')") == "ja"
        page.set_source(1, stub(1))
        got = page.check(1)
        said = terminal_says(terminal, 1, None, "check", "1", "--lang", "ja")
        assert got["text"] == said
        assert "まだ書かれていません" in got["text"]
        assert page.call("document.querySelector('#check').textContent") == "チェック"
    finally:
        page.call("window.kata.setLang('en')")


def test_hint_and_diff_previous_show_what_the_commands_show(page, terminal):
    first = page.call("window.kata.hint(2)")
    second = page.call("window.kata.hint(2)")
    root = terminal
    shutil.rmtree(root / ".kata", ignore_errors=True)
    one = run(["kata", "hint", "2"], cwd=root, env={"NO_COLOR": "1", "KATA_LANG": ""}).stdout.rstrip("\n")
    two = run(["kata", "hint", "2"], cwd=root, env={"NO_COLOR": "1", "KATA_LANG": ""}).stdout.rstrip("\n")
    assert (first, second) == (one, two)
    assert first != second, "each hint is the next level"
    diff = page.call("window.kata.diffPrevious(3)")
    said = run(["kata", "diff", "3", "--previous"], cwd=root, env={"NO_COLOR": "1", "KATA_LANG": ""}).stdout
    assert diff == said.rstrip("\n")
    assert "(stub)" in diff


def test_reset_puts_the_stub_back_and_keeps_the_old_text(page):
    mine = reference(2) + "\n# my notes\n"
    page.set_source(2, mine)
    assert page.call("window.kata.reset(2)") == stub(2)
    assert page.call("window.kata.getSource(2)") == stub(2)
    assert page.call("window.kata.restore(2)") == mine
    assert page.call("window.kata.getSource(2)") == mine


def test_restore_says_when_the_text_was_kept_in_the_learners_own_time(page):
    """A backup kept at 03:04 UTC, restored in Tokyo (UTC+9): the page says 12:04, the
    learner's clock, not the stored UTC stamp."""
    mine = reference(2) + "\n# kept in the morning\n"
    kept = [{"when": "2026-01-02T03:04:05.000Z", "text": mine}]
    page.call("(() => { localStorage.setItem(window.kata.storeKey('backup:2'), args[0]); return true; })()",
              json.dumps(kept))
    page.driver.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": "Asia/Tokyo"})
    try:
        assert page.call("window.kata.restore(2)") == mine
        said = page.call("document.querySelector('#out').textContent")
    finally:
        page.driver.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": ""})
    assert "2026-01-02T03:04" not in said and "03:04" not in said, f"a UTC stamp, not the learner's time: {said}"
    assert "12:04" in said and "Jan 2, 2026" in said, said
    assert said == t_in("en", "site.saved", when="Jan 2, 2026, 12:04 PM").replace("`", ""), said
    page.set_source(2, stub(2))


def test_download_gives_the_learners_exercises(page):
    mine = reference(3) + "\n# downloaded\n"
    page.set_source(3, mine)
    data = page.call("window.kata.download().then(() => window.kata.lastDownload())")
    archive = zipfile.ZipFile(__import__("io").BytesIO(bytes(data)))
    names = set(archive.namelist())
    assert {s.source("exercises") for s in STAGES} <= names
    assert archive.read(stage(3).source("exercises")).decode("utf-8") == mine


def test_after_download_the_page_says_what_it_gave(page):
    """The browser may save the zip without a word: the page's status line under the buttons
    names the file and what is in it, as a learner presses Download."""
    page.call("(() => { document.querySelector('#note').textContent = ''; return true; })()")
    page.driver.find_element("id", "download").click()
    said = page.call("(async () => { for (let i = 0; i < 300; i++) { const n = document.querySelector('#note');"
                     " if (n.textContent) return [n.textContent, n.getAttribute('role')];"
                     " await new Promise((r) => setTimeout(r, 100)); } return null; })()")
    data = page.call("window.kata.lastDownload()")
    names = [Path(name).name for name in zipfile.ZipFile(__import__("io").BytesIO(bytes(data))).namelist()]
    assert {Path(s.source("exercises")).name for s in STAGES} <= set(names)
    want = t_in("en", "site.downloaded", file="exercises.zip", files=", ".join(names)).replace("`", "")
    assert said == [want, "status"], f"after Download the page said {said!r}, not {want!r}"


def test_a_reload_keeps_the_source_and_a_new_visitor_gets_the_browsers_language(page):
    mine = stub(4).replace('"""', '"""Mine. ', 1)
    page.set_source(4, mine)
    agent = page.driver.execute_script("return navigator.userAgent")
    page.driver.execute_script("localStorage.removeItem('kata:lang')")  # no language chosen yet
    page.driver.execute_cdp_cmd("Emulation.setUserAgentOverride", {"userAgent": agent, "acceptLanguage": "ja-JP,ja"})
    try:
        page.driver.refresh()
        page.ready()
        assert page.call("window.kata.getSource(4)") == mine
        assert page.call("window.kata.language()") == "ja"
        assert page.call("document.querySelector('#hint').textContent") == "ヒント"
    finally:
        page.driver.execute_cdp_cmd("Emulation.setUserAgentOverride",
                                    {"userAgent": agent, "acceptLanguage": "en-US,en"})
        page.call("window.kata.setLang('en')")
    page.set_source(4, stub(4))


def test_the_site_holds_no_reference_code_and_says_its_versions(site, page):
    from autograd_kata.core.leaks import scan
    unpacked = Path(tempfile.mkdtemp(prefix="kata-site-zip-"))
    try:
        with zipfile.ZipFile(site / "kata.zip") as archive:
            archive.extractall(unpacked)
        assert not (unpacked / "solutions").exists()
        assert scan(unpacked, ROOT) == []
    finally:
        shutil.rmtree(unpacked, ignore_errors=True)
    footer = page.call("document.querySelector('#versions').textContent")
    assert f"Pyodide {site_build.PYODIDE_VERSION}" in footer and "pytest==" in footer
    assert f"editor: {codemirror.NAME}" in footer
    assert (site / codemirror.SITE_FILE).read_bytes() == (DEPS / codemirror.BUNDLE).read_bytes()
    assert (site / "explore.en.html").is_file() and (site / "explore.ja.html").is_file()
    size = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
    assert size < 20e6, f"the site is {size / 1e6:.1f} MB"
    scripts = "".join((site / name).read_text() for name in ("worker.js", "kata.js", "plain.js"))
    assert not re.search(r"https?://(?!127\.0\.0\.1)", scripts)


LONG_LINE = "# " + "a comment longer than the editor is wide " * 8 + "\n"
# What the editor shows, measured in the page: how wide its text is against its room (SCROLLER:
# the pane that would scroll sideways), how many rows the first line takes, and where the
# marked line and the first NotImplementedError (the line a stub's check marks) are drawn.
WRAP_SEEN = """(() => {
  const pane = document.querySelector('SCROLLER');
  const box = document.querySelector('#editor textarea');
  const todo = document.querySelector('#editor .cm-kata-todo').getBoundingClientRect();
  const mark = document.querySelector('#editor .mark, #editor .cm-kata-line').getBoundingClientRect();
  const first = document.querySelector('#editor .paint, #editor .cm-content');
  const range = document.createRange();
  range.selectNodeContents(first.querySelector('.tok-comment') || first);
  const lineHeight = parseFloat(getComputedStyle(first).lineHeight);
  return {wide: pane.scrollWidth, room: pane.clientWidth, box: box ? box.scrollWidth : 0,
          boxRoom: box ? box.clientWidth : 0, rows: Math.round(range.getBoundingClientRect().height / lineHeight),
          todo: (todo.top + todo.bottom) / 2, markTop: mark.top, markBottom: mark.bottom};
})()"""


def test_no_line_of_a_stub_is_cut_at_1280_px_the_editor_wraps_it(page):
    """CodeMirror wraps its lines (EditorView.lineWrapping): at 1280 px no stub's line runs
    past the editor's edge, and a line longer than any stub's wraps."""
    for n in [s.number for s in STAGES]:
        page.set_source(n, stub(n))
        page.open(n)
        wide = page.call("(() => { const s = document.querySelector('#editor .cm-scroller');"
                         " return [s.scrollWidth, s.clientWidth]; })()")
        assert wide[0] <= wide[1], f"stage {n}'s stub is {wide[0]} px wide in a {wide[1]} px editor: a line is cut"
    page.set_source(1, LONG_LINE + stub(1))
    page.open(1)
    got = page.check(1)
    assert got["line"] is not None
    seen = page.call(WRAP_SEEN.replace("SCROLLER", "#editor .cm-scroller"))
    assert seen["wide"] <= seen["room"] and seen["rows"] > 1, f"the long line is cut, not wrapped: {seen}"
    assert seen["markTop"] <= seen["todo"] <= seen["markBottom"], f"the mark is not on the line: {seen}"
    page.set_source(1, stub(1))


def plain_site(tmp_path: Path):
    """``kata site`` without the editor bundle (none in the deps folder, none named), into
    ``tmp_path / "site"``: (that folder, the command's CompletedProcess)."""
    if not have_deps():
        _missing(f"the site's Pyodide and wheels are not in {DEPS} (kata site DIR --fetch)")
    folder = tmp_path / "site"
    proc = run(["kata", "site", folder, *deps_args(codemirror=False)], cwd=ROOT,
               env={"KATA_SITE_DEPS": str(tmp_path / "no-deps"), "KATA_LANG": ""})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return folder, proc


def test_without_the_editor_bundle_the_site_has_a_plain_text_box_and_says_so(tmp_path):
    """A site built with no bundle (none in the deps folder, none named): the command says
    so once, the page's versions line says so, and keys typed into the text box are checked."""
    folder, proc = plain_site(tmp_path)
    said = t_in("en", "site.no_editor_bundle", path=tmp_path / "no-deps" / codemirror.BUNDLE,
                version=codemirror.CODEMIRROR_VERSION)
    assert proc.stdout.count("plain text box") == 1 and said in proc.stdout, proc.stdout
    assert not (folder / codemirror.SITE_FILE).exists()
    assert json.loads((folder / "site.json").read_text(encoding="utf-8"))["editor"] is None
    url, stop = serve(folder)
    try:
        with browser_at(url) as plain:
            assert plain.call("window.kata.editor()") == "plain"
            assert plain.call("document.querySelectorAll('#editor .cm-editor').length") == 0
            footer = plain.call("document.querySelector('#versions').textContent")
            assert "editor: " + t_in("en", "site.plain_editor") in footer, footer
            plain.set_source(1, reference(1))
            plain.type_at_start("1/0\n", "#editor textarea")
            assert plain.call("window.kata.getSource(1)") == "1/0\n" + reference(1)
            got = plain.check(1)
            assert got["passed"] is False and "ZeroDivisionError" in got["text"], got["text"]
            plain.set_source(1, stub(1))  # its first failure stops at a raise NotImplementedError: marked
            got = plain.check(1)
            first_raise = next(i for i, text in enumerate(stub(1).splitlines(), 1) if "NotImplementedError(" in text)
            assert got["line"] == first_raise, got
            assert plain.call("!document.querySelector('#editor .mark').hidden") is True
            # a line longer than the box wraps, in the box and in its painted copy alike, and the
            # line marked below it is still the one marked (the rows it takes are counted)
            plain.set_source(1, LONG_LINE + stub(1))
            got = plain.check(1)
            assert got["line"] == first_raise + 1, got
            seen = plain.call(WRAP_SEEN.replace("SCROLLER", "#editor.plain"))
            assert seen["wide"] <= seen["room"] and seen["box"] <= seen["boxRoom"], f"a line is cut: {seen}"
            assert seen["rows"] > 1, f"the long line did not wrap: {seen}"
            assert seen["markTop"] <= seen["todo"] <= seen["markBottom"], f"the mark is not on the line: {seen}"
            plain.set_source(1, stub(1))
    finally:
        stop()
