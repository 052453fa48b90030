"""The page offline after a reload (issue 28): its service worker (sw.js) keeps the build's files.

In real headless Chromium, as test_site.py drives it (its site, server, browser and
helpers): the page is loaded once with the server up, the server is stopped, and the
page is reloaded: it must load, start Python and give a check's verdict with nothing
to fetch from. Without the browser: the worker's cache is named by the built files, so
the same files give the same name and a changed file a new one (the browser then
replaces the old cache), and it lists every file of the site.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from test_site import Page, browser_at, deps_args, kata_cli, serve, site  # noqa: F401 - site: a fixture

from autograd_kata.core.manifest import stage
from autograd_kata.site import build as site_build
from kit import ROOT, clone, stub

pytestmark = pytest.mark.timeout(300)
NEW_BUILD = "0123456789abcdef"  # a build id no build of these files has


def worker_says(folder: Path) -> tuple[str, list[str]]:
    """What a built sw.js names: its cache's build id and the files it keeps."""
    text = (folder / site_build.SERVICE_WORKER).read_text(encoding="utf-8")
    build_id = re.search(r'^const BUILD = "([0-9a-f]+)";$', text, re.MULTILINE)
    files = re.search(r"^const FILES = (\[.*\]);$", text, re.MULTILINE)
    assert build_id and files, f"sw.js does not name its build and its files (kata site writes them):\n{text[:600]}"
    return build_id[1], json.loads(files[1])


def offline_ready(page: Page) -> dict:
    """Once the page's service worker has installed (every file in its cache): its scope and caches."""
    kept = page.call("window.kata.offline")
    assert kept, "the page registered no service worker (window.kata.offline is null): a reload offline would fail"
    return kept


def stopped(url: str) -> bool:
    import urllib.error
    import urllib.request
    try:
        urllib.request.urlopen(url + "site.json", timeout=5)  # noqa: S310 - our own 127.0.0.1 server
    except (urllib.error.URLError, OSError):
        return True
    return False


def test_a_reload_with_the_server_stopped_still_loads_the_page_python_and_a_check(site):
    url, stop = serve(site)
    try:
        with browser_at(url) as page:
            kept = offline_ready(page)
            build_id, _ = worker_says(site)
            assert kept["scope"] == url, "the worker's scope is the site's own folder"
            assert kept["caches"] == [f"kata:{url}:{build_id}"], kept
            page.set_source(1, stub(1))
            online = page.check(1)
            stop()
            stop = None
            assert stopped(url), "the server still answers: this test would prove nothing"
            page.driver.refresh()
            try:  # the page, its editor, Pyodide, the wheels and the kata: all from the cache
                page.ready()
            except AssertionError as error:
                raise AssertionError("the reloaded page did not start with the server stopped: sw.js did not "
                                     f"answer from its cache ({error})") from None
            assert page.call("Boolean(navigator.serviceWorker.controller)"), "the reloaded page has no service worker"
            assert page.call("window.kata.shown()") == stub(1), "stage 1 opened, with the text saved before"
            offline = page.check(1)
            assert offline["passed"] is False and offline["text"], offline
            assert offline == online, "the same code, the same verdict, with or without the server"
            missing = page.call("fetch('not-a-file-of-the-site.txt').then((r) => r.status, (e) => 'failed')")
            assert missing == "failed", "a file the site does not have came from somewhere: the server is not stopped"
    finally:
        if stop is not None:
            stop()


def test_two_copies_on_one_origin_keep_their_own_files(site, tmp_path):
    """Every project site of one GitHub account shares one origin: each copy's worker answers
    only in its own folder, from its own cache."""
    for name in ("one", "two"):
        shutil.copytree(site, tmp_path / name)
    marker = "/* the second copy */\n"
    style = tmp_path / "two" / "style.css"
    style.write_text(marker + style.read_text(encoding="utf-8"), encoding="utf-8")
    root_url, stop = serve(tmp_path)
    try:
        with browser_at(root_url + "one/") as page:
            kept = {"one": offline_ready(page)}
            page.driver.get(root_url + "two/index.html")
            page.ready()
            kept["two"] = offline_ready(page)
            build_id, _ = worker_says(site)
            for name, seen in kept.items():
                assert seen["scope"] == f"{root_url}{name}/", seen
                assert seen["caches"] == [f"kata:{root_url}{name}/:{build_id}"], seen
            stop()
            stop = None
            assert stopped(root_url + "one/")
            for name in ("one", "two"):
                page.driver.get(f"{root_url}{name}/index.html")
                page.ready()
                css = page.call("fetch('style.css').then((r) => r.text())")
                assert css.startswith(marker) == (name == "two"), f"copy {name} was served the other copy's style.css"
    finally:
        if stop is not None:
            stop()


def test_a_copy_nested_in_another_keeps_its_own_files_code_and_offline_reload(site, tmp_path):
    """A copy at /k/ and another at /k/inner/: the outer worker's scope (/k/) covers the inner
    folder, so the inner page's first load is the outer worker's to answer. Each page must
    still load its own files (the inner copy's own style.css), keep its own saved code, cache
    only its own folder's files (a new build of the outer copy replaces its own cache, not the
    inner's), and start again offline from its own cache."""
    outer, inner = tmp_path / "k", tmp_path / "k" / "inner"
    shutil.copytree(site, outer)
    shutil.copytree(site, inner)
    marker = "/* the inner copy */\n"
    style = inner / "style.css"
    style.write_text(marker + style.read_text(encoding="utf-8"), encoding="utf-8")
    root_url, stop = serve(tmp_path)
    build_id, _ = worker_says(site)
    code = {"k/": "# the outer copy's\n" + stub(1), "k/inner/": "# the inner copy's\n" + stub(1)}
    css = "fetch('style.css').then((r) => r.text())"
    try:
        with browser_at(root_url + "k/") as page:
            for folder in ("k/", "k/inner/"):  # the outer first: its worker is there when the inner one loads
                if folder != "k/":
                    page.driver.get(f"{root_url}{folder}index.html")
                    page.ready()
                kept = offline_ready(page)
                assert kept["scope"] == root_url + folder, kept
                assert kept["caches"] == [f"kata:{root_url}{folder}:{build_id}"], kept
                assert page.call(css).startswith(marker) == (folder == "k/inner/"), f"{folder} got the other's style"
                page.set_source(1, code[folder])
            # a new build of the outer copy: its new worker replaces its own cache, not the inner's
            outer_style = outer / "style.css"
            outer_style.write_text("/* the outer copy, rebuilt */\n" + outer_style.read_text(encoding="utf-8"),
                                   encoding="utf-8")
            worker_js = outer / site_build.SERVICE_WORKER
            worker_js.write_text(worker_js.read_text(encoding="utf-8").replace(build_id, NEW_BUILD), encoding="utf-8")
            page.driver.get(f"{root_url}k/index.html")
            page.ready()
            names = page.call("(async () => { let names; for (let i = 0; i < 600; i++) {"
                              " names = (await caches.keys()).sort(); if (names.includes(args[0])"
                              " && !names.includes(args[1])) return names;"
                              " await new Promise((r) => setTimeout(r, 100)); } return names; })()",
                              f"kata:{root_url}k/:{NEW_BUILD}", f"kata:{root_url}k/:{build_id}")
            assert names == sorted([f"kata:{root_url}k/:{NEW_BUILD}", f"kata:{root_url}k/inner/:{build_id}"]), \
                f"after the outer copy's new build the caches are {names}"
            builds = {"k/": NEW_BUILD, "k/inner/": build_id}
            # each cache holds its own folder's files only: not the other copy's
            held = page.call("(async () => { const out = {}; for (const name of await caches.keys())"
                             " out[name] = (await (await caches.open(name)).keys()).map((r) => r.url);"
                             " return out; })()")
            for folder in ("k/", "k/inner/"):
                urls = held[f"kata:{root_url}{folder}:{builds[folder]}"]
                assert urls and all(url.startswith(root_url + folder) for url in urls)
                other = [url for url in urls if folder == "k/" and url.startswith(root_url + "k/inner/")]
                assert other == [], f"the outer copy's cache holds the inner copy's files: {other[:3]}"
            stop()
            stop = None
            assert stopped(root_url + "k/")
            for folder in ("k/inner/", "k/"):
                page.driver.get(f"{root_url}{folder}index.html")
                try:
                    page.ready()
                except AssertionError as error:
                    raise AssertionError(f"{folder} did not start again offline ({error})") from None
                worker = page.call("navigator.serviceWorker.controller && navigator.serviceWorker.controller.scriptURL")
                assert worker == f"{root_url}{folder}sw.js", f"{folder} offline is answered by {worker}"
                assert page.call(css).startswith(marker if folder == "k/inner/" else "/* the outer copy, rebuilt */"), \
                    f"{folder} offline was served another copy's (or build's) style.css"
                assert page.call("window.kata.shown()") == code[folder], f"{folder} shows another copy's code"
                got = page.check(1)
                assert got["passed"] is False and got["text"].startswith("Stage 1 - "), got
    finally:
        if stop is not None:
            stop()


# ---------------------------------------------------------------- the cache's name, without a browser


def test_the_cache_is_named_by_the_built_files_the_same_files_the_same_name(site, tmp_path):
    again = tmp_path / "again"
    proc = kata_cli("site", again, *deps_args(), cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (again / "sw.js").read_bytes() == (site / "sw.js").read_bytes(), \
        "two builds of the same files wrote two service workers: every reload would fill a new cache"
    build_id, files = worker_says(site)
    on_disk = sorted(p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file())
    assert sorted(files) == sorted(["./", *(name for name in on_disk if name != "sw.js")]), \
        "sw.js must keep every file of the site (a file it misses fails a start offline)"
    assert {"index.html", "kata.js", "worker.js", "editor.mjs", "kata.zip", "pyodide/pyodide.asm.wasm"} <= set(files)
    assert {f"wheels/{name}" for name in site_build.WHEELS} <= set(files)

    changed = clone(tmp_path / "changed")
    hint = changed / stage(1).hint_file("en")
    hint.write_text(hint.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    rebuilt = tmp_path / "rebuilt"
    proc = kata_cli("site", rebuilt, *deps_args(), cwd=changed)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    new_id, _ = worker_says(rebuilt)
    assert (rebuilt / "kata.zip").read_bytes() != (site / "kata.zip").read_bytes(), "the change reached the site"
    assert new_id != build_id, "a build with a changed file kept the old cache's name: learners would keep old files"

