"""`python -m autograd_kata` is the `kata` command."""
import sys

from autograd_kata.cli import main

sys.exit(main())
