"""The kata's tool: stage manifest, stub generator, CLI, grading and release."""

__version__ = "0.1.0"
