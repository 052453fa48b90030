"""The package: `pip install autograd-kata`, then `kata init`.

The sdist is the whole kata; the wheel is the tool and the learner's kit that
`kata init` writes out, with no reference code (no solutions/, no solution
region, not the maintainers' mistake catalogue).  Built once per module with
`python -m build` (the sdist, then the wheel from it, as a release is made),
installed in a fresh venv and used from an empty folder as a newcomer would.
Also here: the package page (twine check --strict, no relative link), one
version source, template files that no tool takes for configuration, and a
.gitignore that covers what the README's commands write.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

from autograd_kata import __version__, cli
from autograd_kata.core.build import expected_exercises
from autograd_kata.core.leaks import normalize, scan
from autograd_kata.core.manifest import INIT_FOLDER, STAGES, is_student_copy, source_url
from autograd_kata.learner.init import kit_files
from kit import run, run_kata

pytestmark = pytest.mark.timeout(600)  # building, a fresh venv and pip install take a while on two busy cores

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "autograd_kata"
LEARNER_COMMANDS = {name for name, who in cli.AUDIENCE.items() if who == "learners"}
MAINTAINER_COMMANDS = {name for name, who in cli.AUDIENCE.items() if who == "maintainers"}


def catalogue_fragments() -> list[tuple[str, str]]:
    """The maintainers' mistake catalogue's reference fragments (``old``, normalized as
    the leak scan does) that no stub holds, nor the tests and hints a learner reads
    anyway (``rng = random.Random(seed)`` is test code too): they must reach nothing
    a learner gets."""
    from autograd_kata.maintainer.mistakes import MISTAKES

    shown = [normalize(text) for text in expected_exercises(ROOT).values()]
    shown += [normalize(p.read_text(encoding="utf-8")) for p in [*ROOT.glob("tests/*.py"), *ROOT.glob("hints/*/*.md")]]
    found = []
    for m in MISTAKES:
        key = normalize(m.old)
        if len(key.replace("\n", "")) >= 20 and not any(key in text for text in shown):
            found.append((m.id, key))
    return found


def leaked_fragments(folder: Path) -> list[str]:
    fragments = catalogue_fragments()
    bad = []
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            text = normalize(path.read_bytes().decode("utf-8", errors="replace"))
            bad += [f"{path.relative_to(folder)}: {mid}" for mid, key in fragments if key in text]
    return bad


# --- the built distributions ----------------------------------------------------------

def source_copy(dest: Path) -> Path:
    """The files git tracks, and those it does not ignore, as they are now (no .git, no venvs)."""
    listed = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                            check=False)
    if listed.returncode != 0:  # not a git checkout: the tree, without what a build or a venv leaves
        shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns(".git", ".*venv*", "build", "dist", "*.egg-info",
                                                                  "__pycache__", ".kata", "mutants"))
        return dest
    for name in filter(None, listed.stdout.decode().split("\0")):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    return dest


@pytest.fixture(scope="module")
def dists(tmp_path_factory):
    pytest.importorskip("build", reason="python -m build is not installed (the dev extra)")
    out = tmp_path_factory.mktemp("dist")
    # built from a copy of the working tree: setuptools writes build/, *.egg-info and the sdist's
    # autograd_kata-VERSION/ beside the sources, and another test checks the repository stays as it is
    source = source_copy(tmp_path_factory.mktemp("src") / "kata")
    proc = run([sys.executable, "-m", "build", "--outdir", str(out), str(source)], cwd=source, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "autograd_kata/kit:" in proc.stdout and "scanned: no reference code" in proc.stdout, proc.stdout[-3000:]
    (sdist,), (wheel,) = list(out.glob("*.tar.gz")), list(out.glob("*.whl"))
    return sdist, wheel


@pytest.fixture(scope="module")
def wheel_tree(dists, tmp_path_factory):
    """The wheel, unpacked."""
    dest = tmp_path_factory.mktemp("wheel")
    with zipfile.ZipFile(dists[1]) as whl:
        whl.extractall(dest)
    return dest


def test_the_sdist_holds_what_the_tests_need_and_the_wheel_is_the_tool(dists):
    sdist, wheel = dists
    with tarfile.open(sdist) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    for needed in ("LICENSE", "README.md", "README.ja.md", "CHANGELOG.md", "CONTRIBUTING.md", "conftest.py",
                   "pyproject.toml", "setup.py",
                   ".gitignore", "reference/engine.py", "tests/expect.py",
                   "autograd_kata/templates/kata-grade.yml.tmpl", "autograd_kata/maintainer/mistakes.py",
                   "autograd_kata/maintainer/equivalent_mutants.json"):
        assert needed in names, needed
    for s in STAGES:
        assert {s.test_file, s.source("exercises"), s.source("solutions"), s.hint_file("en")} <= names, s.module
    assert not [n for n in names if n.startswith(("tooltests/", ".ci/")) or "__pycache__" in n]
    with zipfile.ZipFile(wheel) as whl:
        inside = set(whl.namelist())
    assert "autograd_kata/templates/verify_release.py.tmpl" in inside
    # what `kata site --fetch` builds the page's editor from, for an instructor who installed the wheel
    from autograd_kata.site.codemirror import PROJECT
    assert {f"autograd_kata/site/editor/{name}" for name in PROJECT} <= inside
    assert any(n.endswith("licenses/LICENSE") for n in inside), sorted(inside)[-5:]
    assert not [n for n in inside if n.startswith(("tests/", "solutions/", "exercises/", "reference/"))]
    assert wheel.name.startswith(f"autograd_kata-{__version__}-"), wheel.name


def test_the_wheel_holds_no_reference_code(wheel_tree, tmp_path):
    package = wheel_tree / "autograd_kata"
    assert not (package / "maintainer").exists()
    assert not [p for p in wheel_tree.rglob("*") if p.name in ("solutions", "reference")]
    kit = package / "kit"
    for s in STAGES:
        assert (kit / s.source("exercises")).is_file() and (kit / s.test_file).is_file(), s.module
    # the kit is scanned where it is laid out as a kata (its later stages carry earlier code, by design) ...
    assert scan(kit, ROOT) == []
    # ... and the rest of the wheel, the tool, holds no region at all
    rest = tmp_path / "rest"
    shutil.copytree(wheel_tree, rest, ignore=lambda folder, names: ["kit"] if Path(folder) == package else [])
    assert (rest / "autograd_kata" / "cli.py").is_file() and not (rest / "autograd_kata" / "kit").exists()
    assert scan(rest, ROOT) == []
    assert catalogue_fragments(), "the fragment check found no fragment to look for"
    assert leaked_fragments(wheel_tree) == []


def test_the_scans_would_see_a_leak_in_the_wheel(wheel_tree, tmp_path):
    """The checks above can fail: a solution region and a catalogue fragment planted in a copy are found."""
    from autograd_kata.maintainer.mistakes import MISTAKES

    copy = tmp_path / "wheel"
    shutil.copytree(wheel_tree / "autograd_kata" / "kit", copy)
    s = STAGES[3]
    (copy / s.source("exercises")).write_text((ROOT / s.source("solutions")).read_text(encoding="utf-8"))
    assert [leak.stage for leak in scan(copy, ROOT)] and 4 in [leak.stage for leak in scan(copy, ROOT)]
    mid, _ = catalogue_fragments()[-1]
    (copy / "notes.txt").write_text(next(m.old for m in MISTAKES if m.id == mid))
    assert leaked_fragments(copy) == [f"notes.txt: {mid}"]


# --- the package page ---------------------------------------------------------------

def long_description(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as whl:
        meta = whl.read(f"autograd_kata-{__version__}.dist-info/METADATA").decode("utf-8")
    headers, _, body = meta.partition("\n\n")
    assert "Description-Content-Type: text/markdown" in headers
    return body


def link_targets(markdown: str) -> list[str]:
    return (re.findall(r"!?\[[^\]]*\]\(([^)\s]+)\)", markdown)
            + re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", markdown))


def test_the_long_description_has_no_relative_link_and_every_link_is_to_a_file_of_the_repository(dists):
    body = long_description(dists[1])
    targets = link_targets(body)
    assert len(targets) >= 5, targets  # the article map (2) and the three pictures at least
    relative = [t for t in targets if not re.match(r"^(https?://|mailto:|#)", t)]
    assert relative == [], relative
    source = source_url()
    raw = source.replace("https://github.com/", "https://raw.githubusercontent.com/") + "/main/"
    for target in targets:
        for base in (f"{source}/blob/main/", raw):
            if target.startswith(base):
                assert (ROOT / target[len(base):].partition("#")[0]).is_file(), target  # a section: its file
    assert "docs/pictures/graph.svg" in body and "kata init" in body


def test_the_link_check_sees_a_relative_link():
    assert link_targets("see [map](docs/a.md) and ![x](p.png) <img src='q.png'>") == ["docs/a.md", "p.png", "q.png"]


def test_twine_check_strict_passes(dists):
    pytest.importorskip("twine", reason="twine is not installed (the dev extra)")
    proc = run([sys.executable, "-m", "twine", "check", "--strict", *map(str, dists)], cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("PASSED") == 2, proc.stdout


def test_the_metadata_names_the_project_urls_and_the_version_once():
    tomllib = pytest.importorskip("tomllib")
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    project = data["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert data["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "autograd_kata.__version__"}
    assert {"Homepage", "Source", "Issues", "Changelog"} <= set(project["urls"])
    assert source_url() == project["urls"]["Source"]
    assert 'tomli>=1.1; python_version < "3.11"' in [d.replace("'", '"') for d in project["dependencies"]]
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## {__version__}" in changelog


# --- a wheel user, from an empty folder --------------------------------------------------

@pytest.fixture(scope="module")
def wheel_venv(dists, tmp_path_factory):
    """A fresh venv with the wheel installed (its dependencies from the index)."""
    home = tmp_path_factory.mktemp("wheel-venv") / "venv"
    venv.create(home, with_pip=True)
    proc = in_venv(home, "python", "-m", "pip", "install", "-q", str(dists[1]), cwd=home, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return home


def in_venv(home: Path, *args, cwd, timeout=300):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTEST_ADDOPTS")}
    env.update({"PATH": f"{home / 'bin'}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": str(home),
                "PYTHONDONTWRITEBYTECODE": "1", "NO_COLOR": "1", "KATA_LANG": "en", "KATA_IMPL": ""})
    return subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False, env=env)


def listed(help_text: str) -> set[str]:
    """The commands ``kata --help`` lists (4 spaces in; a wrapped help line is further in)."""
    return set(re.findall(r"^    (\w+)", help_text, flags=re.MULTILINE))


def test_kata_init_from_the_wheel_then_kata_shows_the_table_and_pytest_fails_on_the_stubs(wheel_venv, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = in_venv(wheel_venv, "kata", cwd=empty)
    assert proc.returncode == 2 and "kata init" in proc.stderr and source_url() in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr

    proc = in_venv(wheel_venv, "kata", "init", "k", cwd=empty)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "Next: cd k && kata", proc.stdout
    k = empty / "k"
    assert is_student_copy(k) and not (k / "autograd_kata").exists() and not (k / "solutions").exists()

    proc = in_venv(wheel_venv, "kata", cwd=k)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line for line in proc.stdout.splitlines() if re.match(r"^\s*\d+\s", line)]
    assert [int(r.split()[0]) for r in rows] == [s.number for s in STAGES], proc.stdout
    assert "run: kata check 1" in proc.stdout.strip().splitlines()[-1], proc.stdout
    assert proc.stderr == "", proc.stderr  # no "this folder has its own autograd_kata" warning

    proc = in_venv(wheel_venv, "python", "-m", "pytest", "-p", "no:cacheprovider", cwd=k)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr
    assert proc.stdout.strip().splitlines()[-1].endswith("work on one at a time, the first: kata check 1  "
                                                         "(or: pytest -m stage1 -x)"), proc.stdout[-500:]

    proc = in_venv(wheel_venv, "kata", "check", "1", cwd=k)
    assert proc.returncode == 1 and "not written yet: stage 1" in proc.stdout, proc.stdout + proc.stderr

    assert scan(k, ROOT) == [] and leaked_fragments(k) == []
    # its pyproject installs into the learner's venv: this very version of the tool, nothing else
    proc = in_venv(wheel_venv, "python", "-m", "pip", "install", "-q", "-e", str(k), cwd=k, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = in_venv(wheel_venv, "python", "-c", "import autograd_kata, importlib.metadata as m; "
                   "print(m.version('autograd-kata'), m.version('my-autograd-kata'), autograd_kata.__file__)", cwd=k)
    assert proc.stdout.split()[:2] == [__version__, "0"] and "site-packages" in proc.stdout, proc.stdout + proc.stderr


def test_a_wheel_user_gets_learner_commands_and_a_line_for_a_maintainers_one(wheel_venv, tmp_path):
    proc = in_venv(wheel_venv, "kata", "--help", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    offered = listed(proc.stdout)
    assert LEARNER_COMMANDS <= offered and {"grade", "release"} <= offered, proc.stdout
    assert not offered & MAINTAINER_COMMANDS, proc.stdout
    proc = in_venv(wheel_venv, "kata", "verify", cwd=tmp_path)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "clone of the repository" in proc.stderr and source_url() in proc.stderr
    proc = in_venv(wheel_venv, "kata", "init", cwd=tmp_path)
    assert proc.returncode == 0 and (tmp_path / INIT_FOLDER / "exercises").is_dir(), proc.stdout + proc.stderr
    proc = in_venv(wheel_venv, "kata", "--help", cwd=tmp_path / INIT_FOLDER)
    assert listed(proc.stdout) == LEARNER_COMMANDS, proc.stdout


def test_the_sdist_installed_in_a_fresh_venv_runs_its_tests_as_the_clone_does(dists, tmp_path):
    sdist, _ = dists
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path, filter="data")
    (unpacked,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    home = tmp_path / "venv"
    venv.create(home, with_pip=True)
    proc = in_venv(home, "python", "-m", "pip", "install", "-q", str(sdist), cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = in_venv(home, "python", "-m", "autograd_kata", "--help", cwd=tmp_path)
    assert proc.returncode == 0 and "kata" in proc.stdout, proc.stdout + proc.stderr

    def tally(cwd, python):
        proc = subprocess.run([python, "-m", "pytest", "--impl", "solutions", "-q", "-p", "no:cacheprovider"],
                              cwd=cwd, capture_output=True, text=True, timeout=600,
                              env={**os.environ, "KATA_IMPL": "", "PYTHONDONTWRITEBYTECODE": "1"})
        return proc.stdout.strip().splitlines()[-1].split(" in ")[0]

    assert tally(unpacked, str(home / "bin" / "python")) == tally(ROOT, sys.executable)
    # the installed (not editable) kata, run in the unpacked folder, says it is not that folder's
    proc = in_venv(home, "kata", "hint", "1", cwd=unpacked)
    assert "this folder has its own" in proc.stderr, proc.stdout + proc.stderr


# --- kata init in this process (a clone: the kit is written from the repository) -------------

def test_kata_init_from_a_clone_writes_the_kit_and_refuses_a_folder_in_use(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_LANG", "en")
    dest = tmp_path / "mine"
    code, out, err = run_kata(capsys, "init", str(dest))
    assert code == 0, out + err
    written = {p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()}
    assert {"pyproject.toml", "README.md", "README.ja.md", ".kata-release.json",
            ".kata-pristine/exercises/stage01_value.py"} <= written
    assert {f for f in kit_files(ROOT) if not f.startswith("exercises/")} <= written
    assert not [w for w in written if w.startswith(("autograd_kata/", "solutions/", "reference/"))]
    for s in STAGES:
        assert (dest / s.source("exercises")).read_text(encoding="utf-8") == \
            expected_exercises(ROOT)[ROOT / s.source("exercises")], s.module
    readme = (dest / "README.md").read_text(encoding="utf-8")
    assert "For maintainers" not in readme and "compare with the reference: `kata diff N`" not in readme
    readme = (dest / "README.ja.md").read_text(encoding="utf-8")
    assert "<!--" not in readme and "参照実装と比べます: `kata diff N`" not in readme  # filtered the same way
    assert scan(dest, ROOT) == [] and leaked_fragments(dest) == []

    (dest / "exercises" / "stage01_value.py").write_text("# mine\n")
    for lang, said in (("en", "is not an empty folder"), ("ja", "空のフォルダではありません")):
        code, out, err = run_kata(capsys, "--lang", lang, "init", str(dest))
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and said in err, err
    assert (dest / "exercises" / "stage01_value.py").read_text() == "# mine\n"
    (tmp_path / "a-file").write_text("x")
    code, _, err = run_kata(capsys, "init", str(tmp_path / "a-file"))
    assert code == 2 and "not an empty folder" in err


def test_the_learner_pyproject_is_pytest_settings_and_this_version_of_the_tool(tmp_path):
    tomllib = pytest.importorskip("tomllib")
    from autograd_kata.learner.init import learner_pyproject

    ours = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    text = learner_pyproject((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    theirs = tomllib.loads(text)
    assert theirs["project"]["dependencies"] == [f"autograd-kata=={__version__}"]
    assert theirs["project"]["optional-dependencies"] == {"pictures": [f"autograd-kata[pictures]=={__version__}"]}
    assert theirs["tool"]["pytest"]["ini_options"] == ours["tool"]["pytest"]["ini_options"]
    assert theirs["tool"]["setuptools"]["packages"] == []
    for word in ("mutmut", "solutions", "ruff", "mypy"):
        assert word not in text, word


def test_outside_a_kata_kata_says_how_to_get_one(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for lang in ("en", "ja"):
        code, out, err = run_kata(capsys, "--lang", lang)
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
        assert "kata init" in err and f"cd {INIT_FOLDER}" in err and source_url() in err, err


def test_without_the_maintainers_package_their_commands_are_not_offered(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(cli, "maintainer_tools", lambda: False)
    monkeypatch.chdir(ROOT)
    assert cli.audiences_here() == ("learners", "instructors")
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert not listed(out) & MAINTAINER_COMMANDS and "init" in listed(out), out
    for name in sorted(MAINTAINER_COMMANDS):
        code, out, err = run_kata(capsys, name)
        assert code == 2 and len(err.strip().splitlines()) == 1 and "clone of the repository" in err, err
    monkeypatch.setattr(cli, "maintainer_tools", lambda: True)
    assert cli.audiences_here() == cli.AUDIENCES


# --- files no tool mistakes, files git ignores --------------------------------------------

def test_template_files_are_named_so_no_tool_takes_them_for_configuration():
    templates = sorted((PACKAGE / "templates").iterdir())
    assert templates and all(p.name.endswith(".tmpl") for p in templates), templates
    config_names = {"pyproject.toml", "setup.cfg", "tox.ini", "ruff.toml", ".ruff.toml", "mypy.ini", ".mypy.ini",
                    "pytest.ini", ".pre-commit-config.yaml"}
    assert not [p for p in PACKAGE.rglob("*") if p.name in config_names]


def readme_outputs() -> list[str]:
    """The relative paths the README's commands write (their --out), but committed pictures."""
    text = "".join((ROOT / name).read_text(encoding="utf-8") for name in ("README.md", "docs/instructors.md",
                                                                            "docs/maintainers.md"))
    outs = re.findall(r"--out\s+([^\s`)]+)", text)
    return sorted({o for o in outs if not o.startswith(("/", "docs/pictures/"))})


def test_gitignore_covers_what_the_readme_writes_and_the_tools_leave():
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    outputs = readme_outputs()
    assert {"grades.csv", "grades.xml", "grades.json"} <= set(outputs), outputs
    paths = outputs + ["grades.summary.txt", "uv.lock", ".python-version", f"{INIT_FOLDER}/README.md",
                       ".kata/explore.html", "dist/x.whl", "build/lib/x.py", ".ci-venv/bin/python",
                       ".venv/bin/python", ".ci-stubs.log", "autograd_kata.egg-info/PKG-INFO"]
    proc = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=ROOT, input="\n".join(paths),
                          capture_output=True, text=True, check=False)
    ignored = set(proc.stdout.split())
    assert ignored == set(paths), sorted(set(paths) - ignored)


# --- lint, types and lower bounds, as CI and pre-commit run them ------------------------

def test_ruff_and_mypy_are_configured_and_run_by_ci_and_pre_commit():
    tomllib = pytest.importorskip("tomllib")
    yaml = pytest.importorskip("yaml")
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    assert {"F", "E", "I", "B", "UP"} <= set(tool["ruff"]["lint"]["select"])
    assert tool["ruff"]["target-version"] == "py310" and tool["mypy"]["python_version"] == "3.10"
    assert {"autograd_kata", "tooltests"} <= set(tool["mypy"]["files"])
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert "ruff check ." in ci and "mypy" in ci and "bash .ci/lowest-direct $LOWEST" in ci
    assert "LOWEST=${KATA_LOWEST_PYTHONS:-3.10 3.13}" in ci
    hooks = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))["repos"][0]["hooks"]
    assert [h["entry"].split()[0] for h in hooks] == ["ruff", "mypy"]  # their pins: tooltests/test_workflows.py


def test_ruff_check_is_clean():
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if not ruff:
        pytest.skip("ruff is not installed (the dev extra)")
    proc = run([ruff, "check", "--no-cache", "."], cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
