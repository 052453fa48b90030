"""``python -m autograd_kata.instructor grade --stage N``: the ``kata`` command with
the instructors' commands offered, in a student copy too.

A student copy's ``kata`` offers the learners' commands only; the GitHub
Actions workflow it ships (``templates/kata-grade.yml.tmpl``) grades with
this entry instead.  It sits on top, beside ``cli.py``: nothing
below imports it (tooltests/test_imports.py).
"""
import sys

from autograd_kata.cli import main

if __name__ == "__main__":
    sys.exit(main(audiences=("learners", "instructors")))
