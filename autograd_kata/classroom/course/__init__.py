"""A whole class: who is graded (the roster, shards), what is kept of each
student (records), the CSV, the reports and the summary."""
