"""Ready to publish: the GitHub workflows, the release check, the floors on every Python.

- ``.github/workflows/*.yml`` pass GitHub's workflow schema (check-jsonschema's vendored
  copy, as ``.ci/run`` checks them), and the check sees a broken one;
- ci.yml runs the learner's loop on Linux, macOS and Windows for every Python the
  classifiers name, and all of ``.ci/run`` in two Ubuntu jobs, each within 15 minutes;
- release.yml publishes by trusted publishing only after ``.ci/release_check.py``, which
  refuses a tag that is not the version, an undated CHANGELOG, a page that links to main;
- the pictures extra's floors are the first releases with wheels on each Python, the
  maintainers' tools are pinned in one place that pre-commit repeats, and a missing
  Python fails ``.ci/lowest-direct``.
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from kit import run

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
PYTHONS = ["3.10", "3.11", "3.12", "3.13", "3.14", "3.15"]
# each action at its current major (Node 24); an older major fails here, not on GitHub's deprecation date
CURRENT = {"actions/checkout": "v6", "actions/setup-python": "v6", "actions/setup-node": "v6",
           "actions/upload-artifact": "v7", "actions/download-artifact": "v8",
           "actions/upload-pages-artifact": "v5", "actions/deploy-pages": "v5",
           "pypa/gh-action-pypi-publish": "release/v1"}

yaml = pytest.importorskip("yaml")
tomllib = pytest.importorskip("tomllib")


def workflow(name: str) -> dict:
    data = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as True
    return data


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def steps(job: dict) -> list[dict]:
    return job["steps"]


def load_release_check():
    spec = importlib.util.spec_from_file_location("release_check", ROOT / ".ci" / "release_check.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- the workflows against GitHub's schema -----------------------------------------------------

def schema_check(*files: Path) -> subprocess.CompletedProcess:
    exe = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent)) or shutil.which("check-jsonschema")
    if not exe:
        pytest.skip("check-jsonschema is not installed (pyproject.toml's [dependency-groups] dev)")
    return run([exe, "--builtin-schema", "vendor.github-workflows", *map(str, files)], cwd=ROOT, timeout=120)


def test_every_workflow_passes_githubs_schema_and_ci_checks_them_so():
    files = sorted(WORKFLOWS.glob("*.yml"))
    assert {f.name for f in files} >= {"ci.yml", "release.yml", "pages.yml"}
    proc = schema_check(*files)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml" in ci


def test_the_schema_check_sees_a_broken_workflow(tmp_path):
    text = (WORKFLOWS / "ci.yml").read_text(encoding="utf-8")
    broken = text.replace("runs-on: ubuntu-24.04", "runs_on: ubuntu-24.04")
    assert "runs_on" in broken, "the edit did not apply: ci.yml changed under this test"
    (tmp_path / "ci.yml").write_text(broken, encoding="utf-8")
    proc = schema_check(tmp_path / "ci.yml")
    assert proc.returncode == 1 and "'runs-on' is a required property" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize("name", ["ci.yml", "release.yml", "pages.yml"])
def test_each_action_is_at_its_current_major_and_each_job_ends_within_15_minutes(name):
    data = workflow(name)
    for job_name, job in data["jobs"].items():
        assert job.get("timeout-minutes", 360) <= 15, f"{name}: job {job_name} has no 15-minute limit"
        for step in steps(job):
            if "uses" in step:
                action, _, ref = step["uses"].partition("@")
                assert CURRENT.get(action) == ref, f"{name}: {step['uses']}; current: {action}@{CURRENT.get(action)}"
            node = step.get("with", {}).get("node-version")
            assert node in (None, "24"), f"{name}: Node {node}; Node 20's life ended in April 2026"


# --- ci.yml ---------------------------------------------------------------------------------

def test_the_learner_loop_runs_on_three_systems_for_every_python_the_classifiers_name():
    job = workflow("ci.yml")["jobs"]["learner"]
    matrix = job["strategy"]["matrix"]
    assert set(matrix["os"]) == {"ubuntu-latest", "macos-latest", "windows-latest"}
    classifiers = [c.rsplit(" :: ", 1)[1] for c in pyproject()["project"]["classifiers"]
                   if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)]
    assert matrix["python"] == classifiers == PYTHONS
    assert job["strategy"]["fail-fast"] is False  # one system's failure does not hide another's
    runs = [step for step in steps(job) if "run" in step]
    assert [step["run"].split()[:2] for step in runs] == [["bash", ".ci/learner-loop"]]
    assert runs[0]["shell"] == "bash"  # Git Bash on Windows
    loop = ROOT / ".ci" / "learner-loop"
    assert run(["bash", "-n", str(loop)], cwd=ROOT).returncode == 0
    text = loop.read_text(encoding="utf-8")
    for command in ("kata\" init", "kata\" check 1", "kata\" hint 1", "-m pytest -q", "--lang ja check 1",
                    "autograd-kata\" --version", "-m pytest --impl solutions", '"$work"/dist/*.whl',
                    'expect 0 "$dev/kata" grade', 'expect 2 "$dev/kata" grade', "the jail needs Linux"):
        assert command in text, command


def ci_parts() -> list[str]:
    text = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    found = re.search(r'^ALL="([^"]+)"', text, re.MULTILINE)
    assert found, ".ci/run names its parts in ALL=\"...\""
    return found.group(1).split()


def test_the_two_ubuntu_jobs_run_all_of_ci_run_between_them_as_root():
    jobs = workflow("ci.yml")["jobs"]
    parts = []
    for name in ("suite", "gates"):
        job = jobs[name]
        assert job["runs-on"] == "ubuntu-24.04" and job["timeout-minutes"] <= 15
        (step,) = [s for s in steps(job) if "bash .ci/run" in s.get("run", "")]
        assert step["run"].startswith("sudo -E ")  # root, with the KATA_ variables kept
        assert step["env"]["KATA_TORCH_INDEX"].endswith("/whl/cpu")  # not this machine's torch file
        parts += step["env"]["KATA_CI_STEPS"].split()
    assert sorted(parts) == sorted(ci_parts()), "every part of .ci/run runs on GitHub, once"
    gates = jobs["gates"]
    lowest = gates["steps"][-1]["env"]["KATA_LOWEST_PYTHONS"].split()
    assert lowest[0] == PYTHONS[0] and {"3.14", "3.15"} <= set(lowest)
    installed = next(s for s in steps(gates) if s.get("uses", "").startswith("actions/setup-python"))
    assert set(lowest) <= set(installed["with"]["python-version"].split())
    assert any("apparmor_restrict_unprivileged_userns=0" in s.get("run", "") for s in steps(gates))


def test_ci_run_refuses_a_part_it_does_not_have_before_doing_anything(tmp_path):
    env = {**os.environ, "KATA_CI_STEPS": "lint tests"}
    proc = subprocess.run(["bash", str(ROOT / ".ci" / "run")], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "KATA_CI_STEPS: unknown part 'tests'" in proc.stdout and "python packages" not in proc.stdout


def test_the_jail_set_ups_run_every_attack_file_a_set_up_changes_and_name_each_skip_with_its_reason():
    """Issue 26: each attack in the set-ups where it applies.  Every ``tooltests/test_attacks*.py``
    is either run in all four set-ups of ``.ci/jail-setups`` or named there as not run, with why;
    each run reports its skipped tests and their reasons (``-rs``), so CI's log says which set-up
    skipped what."""
    text = (ROOT / ".ci" / "jail-setups").read_text(encoding="utf-8")
    listed = re.search(r'^tests="([^"]+)"$', text, re.MULTILINE)
    assert listed, '.ci/jail-setups names its test files in tests="..."'
    not_here = dict(re.findall(r"^# not run here: (tooltests/\S+) \((.+)\)$", text, re.MULTILINE))
    attack_files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tooltests").glob("test_attacks*.py"))
    assert sorted([*listed.group(1).split(), *not_here]) == attack_files
    assert all(len(why) > 20 for why in not_here.values()), not_here
    runs = [line for line in text.splitlines() if re.search(r"\bpytest .*\$tests\b", line)]
    modes = re.findall(r"KATA_EXPECT_MODE=(\w+)", text)
    assert len(runs) == 4 and sorted(modes) == ["chroot", "none", "userns", "userns"], runs
    assert all(" -rs " in line for line in runs), runs


# --- release.yml and .ci/release_check.py ----------------------------------------------------

def test_a_version_tag_builds_checks_and_publishes_by_trusted_publishing_only():
    data = workflow("release.yml")
    assert data["on"] == {"push": {"tags": ["v*"]}}
    build, publish = data["jobs"]["build"], data["jobs"]["publish"]
    runs = "\n".join(step.get("run", "") for step in steps(build))
    assert 'python .ci/release_check.py "$GITHUB_REF_NAME"\n' in runs + "\n"
    assert "python -m twine check --strict dist/*" in runs
    assert 'python .ci/release_check.py "$GITHUB_REF_NAME" --dist dist' in runs
    built = next(step for step in steps(build) if "python -m build" in step.get("run", ""))
    assert built["env"]["KATA_LINK_REF"] == "${{ github.ref_name }}"
    assert publish["needs"] == "build" and publish["environment"] == "pypi"
    assert publish["permissions"] == {"id-token": "write"}
    assert steps(publish)[-1]["uses"] == "pypa/gh-action-pypi-publish@release/v1"
    text = (WORKFLOWS / "release.yml").read_text(encoding="utf-8")
    assert "secrets." not in text and "password" not in text  # no token anywhere
    assert data["permissions"] == {"contents": "read"}


def release_tree(tmp_path: Path, version: str, changelog: str) -> Path:
    (tmp_path / "autograd_kata").mkdir()
    (tmp_path / "autograd_kata" / "__init__.py").write_text(f'"""x"""\n\n__version__ = "{version}"\n', encoding="utf-8")
    (tmp_path / "CHANGELOG.md").write_text(changelog, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("tag, changelog, reason", [
    ("v0.2.0", "## 0.1.0 - 2026-12-02\n", "the tag 'v0.2.0' is not the version: autograd_kata/__init__.py says 0.1.0"),
    ("0.1.0", "## 0.1.0 - 2026-12-02\n", "so the tag must be v0.1.0"),
    ("v0.1.0", "## Unreleased\n\n## 0.1.0\n", "CHANGELOG.md's heading for 0.1.0 has no release date: '## 0.1.0'"),
    ("v0.1.0", "## 0.1.0 - soon\n", "has no release date"),
    ("v0.1.0", "## 0.1.0 - 2026-13-02\n", "CHANGELOG.md's date for 0.1.0, 2026-13-02, is not a date"),
    ("v0.1.0", "## 0.1.1 - 2026-12-02\n## 0.1.00 - 2026-12-02\n", "CHANGELOG.md has no heading for 0.1.0"),
])
def test_the_release_check_refuses_a_wrong_tag_or_an_undated_version(tmp_path, tag, changelog, reason):
    check = load_release_check()
    root = release_tree(tmp_path, "0.1.0", changelog)
    found = check.problems(tag, root)
    assert any(reason in problem for problem in found), found
    proc = run([sys.executable, str(ROOT / ".ci" / "release_check.py"), tag, "--root", str(root)], cwd=tmp_path)
    assert proc.returncode == 1 and reason in proc.stderr, proc.stdout + proc.stderr


def fake_dist(folder: Path, version: str, description: str) -> Path:
    folder.mkdir()
    with zipfile.ZipFile(folder / f"autograd_kata-{version}-py3-none-any.whl", "w") as wheel:
        wheel.writestr(f"autograd_kata-{version}.dist-info/METADATA",  # a header may link into main
                       f"Name: autograd-kata\nProject-URL: Changelog, https://x/blob/main/CHANGELOG.md\n\n{description}")
    (folder / f"autograd_kata-{version}.tar.gz").write_bytes(b"")
    return folder


def test_the_release_check_passes_a_dated_version_whose_page_links_into_the_tag(tmp_path):
    check = load_release_check()
    (tmp_path / "tree").mkdir()
    root = release_tree(tmp_path / "tree", "0.3.0", "## Unreleased\n\n## 0.3.0 - 2026-12-02\n")
    source = "https://github.com/autograd-kata/autograd-kata"
    good = fake_dist(tmp_path / "good", "0.3.0", f"[guide]({source}/blob/v0.3.0/docs/a.md)")
    assert check.problems("v0.3.0", root) == [] and check.problems("v0.3.0", root, good) == []
    on_main = fake_dist(tmp_path / "main", "0.3.0", f"[guide]({source}/blob/main/docs/a.md)")
    assert check.problems("v0.3.0", root, on_main) == [
        "the package page links into main, not v0.3.0: build with KATA_LINK_REF=v0.3.0"]
    old = fake_dist(tmp_path / "old", "0.2.0", f"[guide]({source}/blob/v0.3.0/docs/a.md)")
    assert any("is not version 0.3.0" in p for p in check.problems("v0.3.0", root, old))


def test_the_repositorys_own_version_is_ready_to_tag():
    check = load_release_check()
    from autograd_kata import __version__
    assert check.problems(f"v{__version__}") == []


def test_the_package_page_links_into_the_ref_kata_link_ref_names(monkeypatch):
    spec = importlib.util.spec_from_file_location("kata_setup", ROOT / "setup.py")
    assert spec and spec.loader
    setup_py = importlib.util.module_from_spec(spec)
    import setuptools
    calls: list[dict] = []
    monkeypatch.setattr(setuptools, "setup", lambda **kw: calls.append(kw))  # setup.py's import finds this
    monkeypatch.setenv("KATA_LINK_REF", "v9.8.7")
    spec.loader.exec_module(setup_py)
    assert "/blob/v9.8.7/" in calls[0]["long_description"] and "/blob/main/" not in calls[0]["long_description"]
    assert setup_py.link_ref({}) == "main" and setup_py.link_ref({"KATA_LINK_REF": "v0.1.0"}) == "v0.1.0"
    for bad in ("v1 0", "../main", "-x", "main?raw=1"):
        with pytest.raises(SystemExit, match="is not a branch or tag name"):
            setup_py.link_ref({"KATA_LINK_REF": bad})
    text = setup_py.absolute_links("[a](docs/a.md) ![p](docs/p.png)", "https://github.com/o/r", "v0.1.0")
    assert text == "[a](https://github.com/o/r/blob/v0.1.0/docs/a.md) " \
                   "![p](https://raw.githubusercontent.com/o/r/v0.1.0/docs/p.png)"


# --- floors, tools, metadata -------------------------------------------------------------------

def floors(requirements: list[str], python: str) -> dict[str, str]:
    from packaging.requirements import Requirement
    found: dict[str, str] = {}
    for line in requirements:
        req = Requirement(line)
        if req.marker is None or req.marker.evaluate({"python_version": python, "python_full_version": python + ".0"}):
            assert req.name not in found, f"two floors of {req.name} apply on Python {python}"
            (spec,) = req.specifier
            found[req.name] = spec.version
    return found


@pytest.mark.parametrize("python, numpy, matplotlib", [
    ("3.10", "1.24", "3.7"), ("3.11", "1.24", "3.7"), ("3.12", "1.26", "3.8"), ("3.13", "2.1", "3.9.2"),
    ("3.14", "2.3.2", "3.10.5"), ("3.15", "2.5.2", "3.11.2"), ("3.16", "2.5.2", "3.11.2"),
])
def test_the_pictures_floors_are_the_first_releases_with_wheels_on_each_python(python, numpy, matplotlib):
    extra = pyproject()["project"]["optional-dependencies"]["pictures"]
    assert floors(extra, python) == {"numpy": numpy, "matplotlib": matplotlib}


def test_the_maintainers_tools_are_pinned_once_and_pre_commit_repeats_the_pins():
    data = pyproject()
    group = data["dependency-groups"]["dev"]
    pinned = {re.split(r"[=;]", line)[0]: line for line in group}
    assert {"ruff", "mypy", "pytest", "numpy", "check-jsonschema"} <= set(pinned)  # mypy reads pytest's, numpy's types
    assert all("==" in line for line in group), group
    assert not [d for d in data["project"]["optional-dependencies"]["dev"] if d.startswith(("ruff", "mypy"))]
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
             ["repos"][0]["hooks"]}
    assert all(h["language"] == "python" for h in hooks.values())  # its own environment: any shell, no venv
    assert hooks["ruff"]["additional_dependencies"] == [pinned["ruff"]]
    assert hooks["mypy"]["additional_dependencies"] == [line for line in group if line.split("==")[0]
                                                        in ("mypy", "pytest", "numpy")]
    assert "--group dev" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_both_commands_and_the_pages_homepage():
    project = pyproject()["project"]
    assert project["scripts"] == {"kata": "autograd_kata.cli:main", "autograd-kata": "autograd_kata.cli:main"}
    homepage = project["urls"]["Homepage"]
    assert homepage == "https://autograd-kata.github.io/autograd-kata/" and homepage != project["urls"]["Source"]
    assert homepage in (WORKFLOWS / "pages.yml").read_text(encoding="utf-8")
    for readme in ("README.md", "README.ja.md"):  # "In your browser": the page itself, one click away
        assert f"]({homepage})" in "\n".join((ROOT / readme).read_text(encoding="utf-8").splitlines()[:8]), readme


def test_the_lowest_direct_script_fails_on_a_python_it_cannot_find_and_says_why(tmp_path):
    proc = run(["bash", str(ROOT / ".ci" / "lowest-direct"), "2.99"], cwd=tmp_path, timeout=60)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "MISSING: lowest-direct on Python 2.99: no Python 2.99 interpreter on this machine" in proc.stdout
    lines = proc.stdout.strip().splitlines()
    assert lines[-2] == "lowest-direct: 0 of 1 Python versions tested"
    assert lines[-1].startswith("lowest-direct FAILED: the floors are untested on Python 2.99")
