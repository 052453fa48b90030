"""The core every audience stands on: the stage manifest, the stub generator, the
test runner, the learner's state and the terminal."""
