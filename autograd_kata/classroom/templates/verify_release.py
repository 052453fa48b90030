# Are the graded files the ones `kata release` wrote?  Standard library only, run
# with `python3 -I -S` before anything of the repository is installed or imported.
import hashlib
import json
import os
import sys

# sha256 of every protected file (tests, conftest, pyproject, the tool);
# .kata-release.json holds them too, and this workflow's own checksum
EXPECTED = json.loads(r"""@@CHECKSUMS@@""")
RELEASE_FILE = "@@RELEASE_FILE@@"
WORKFLOW = "@@WORKFLOW@@"
FOLDERS = json.loads(r"""@@FOLDERS@@""")  # no file may be added in these


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


problems = []
for path, want in sorted(EXPECTED.items()):
    if not os.path.isfile(path):
        problems.append(f"{path} is missing")
    elif digest(path) != want:
        problems.append(f"{path} is not the released file")
for folder in FOLDERS:
    for top, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            path = os.path.join(top, name).replace(os.sep, "/")
            if path not in EXPECTED:
                problems.append(f"{path} was added")
try:
    with open(RELEASE_FILE, encoding="utf-8") as f:
        recorded = json.load(f)["files"][WORKFLOW]
except (OSError, ValueError, KeyError, TypeError):
    recorded = None
if recorded is None:
    problems.append(f"{RELEASE_FILE} does not record {WORKFLOW}")
elif not os.path.isfile(WORKFLOW) or digest(WORKFLOW) != recorded:
    problems.append(f"{WORKFLOW} (this workflow) is not the released one")
for problem in problems:
    print(f"::error::{problem}")
if problems:
    print(f"REFUSED: {len(problems)} graded file(s) differ from the release, so this run grades nothing. "
          f"Put back the released tests/, conftest.py, pyproject.toml, autograd_kata/ and {WORKFLOW} "
          f"(git checkout <first commit> -- <file>); your work lives in exercises/ only.")
    sys.exit(1)
print(f"ok: {len(EXPECTED)} released files and the workflow are unchanged")
