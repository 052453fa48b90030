"""The learner's commands: status, check, hint, diff, reset, watch."""
