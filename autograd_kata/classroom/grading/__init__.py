"""One submission, graded: which file a stage grades, the folders, the judge
processes, each stage's grade and the report in every format."""
