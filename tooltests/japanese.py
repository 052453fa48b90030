"""The one checker of "no English in Japanese text, no Japanese in English text", for every
tool test that reads what the kata says: its catalogues, its command output, its stage runs.

A Japanese line may keep, as they are: code in backticks, quoted values and quoted program
output ('...', "...", 「...」), calls and reprs with one level of nesting
(Value(data=1.5, grad=0.0)), kata commands, any token with _ . ( ) [ ] { } = * / < > + : or a
digit in it (identifiers, paths, numbers, test ids), Python's exception classes, and the
names of things that have no Japanese name (NAMES; an operation's method is a name: the
operations table's).  Any other word of two or more Latin letters is English left in it.
"""
from __future__ import annotations

import re

from autograd_kata.core.operations import methods

#: kana, kanji, full-width forms and Japanese punctuation
JAPANESE = re.compile(r"[\u3000-\u303f\u3040-\u30ff\u3400-\u9fff\uff00-\uffef]")
#: what is not prose
CODE = re.compile(r"`[^`\n]*`|'[^'\n]*'|\"[^\"\n]*\"|「[^」\n]*」"
                  r"|\w+\((?:[^()\n]|\([^()\n]*\))*\)"
                  r"|kata \w+(?: (?:N|\d+|--\w+))*"
                  r"|[\w.\-]*[_.()\[\]{}=*/<>+:\d][\w.()\[\]{}=*/<>+:\-]*")
#: names of things, the same in both languages
NAMES = {"Value", "float", "int", *methods(), "sigmoid", "ReLU", "MLP", "PyTorch", "micrograd", "autograd", "kata",
         "UTF", "Shift", "Home", "End", "out", "data", "grad", "backward", "zero_grad", "retain_graph",
         "Neuron", "Layer", "Module", "list", "set", "tuple", "str", "None", "True", "False"}
ERROR_CLASS = re.compile(r"^[A-Z]\w*(?:Error|Exception)$")


def english_words(text: str) -> list[str]:
    """The English words left in ``text`` once code, quotations, commands and names are taken out."""
    return [w for w in re.findall(r"[A-Za-z]{2,}", CODE.sub(" ", text))
            if w not in NAMES and not ERROR_CLASS.match(w)]


def prose_trouble(message: str, lang: str) -> list[str]:
    """Every line of ``message`` that is not in ``lang``, each with why."""
    trouble = []
    for line in message.splitlines():
        if not line.strip():
            continue
        if lang == "ja":
            left = english_words(line)
            if left:
                trouble.append(f"English words {left}: {line}")
            elif re.search(r"[A-Za-z]{2,}", CODE.sub(" ", line)) and not JAPANESE.search(line):
                trouble.append(f"no Japanese: {line}")
        elif JAPANESE.search(line):
            trouble.append(f"Japanese in English: {line}")
    return trouble
