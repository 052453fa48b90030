"""For instructors: a student release, grading, the Gradescope autograder."""
