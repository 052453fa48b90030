"""The kata in a browser tab: ``kata site DIR`` (``build.py``) writes a static site
whose page runs the stage tests in Pyodide, in a Web Worker (``static/``), with
the same feedback code as the terminal (``inpage.py``) and time limits without
signals (``limits.py``).

Layer: like ``cli.py``, above the audiences: the site is built from the student
copy's writer and leak scan (``classroom.release``) and shows what the
learner's commands show (``learner``)."""


def plain(text: str) -> str:
    """``text`` as the page shows it: the catalogue's backticks mark code for a terminal (and let
    Latin words into Japanese text), the page's text is plain, so they are left out."""
    return text.replace("`", "")
