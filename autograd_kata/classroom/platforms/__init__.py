"""The graders' hosts: Gradescope's autograder zip and Classroom 50's autograder."""
