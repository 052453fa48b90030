"""The reference: one module per stage, with the learner's parts between solution markers."""
