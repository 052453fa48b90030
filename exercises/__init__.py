"""Your code: one module per stage. Edit these."""
