"""The judge/sandbox pipe (classroom/sandbox/remote.py + sandbox_server.py): the proxies behave
as the module would locally, only data crosses, and a hostile or broken sandbox costs a
plain failure, never a hang and never a pass."""
from __future__ import annotations

import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograd_kata.classroom.sandbox import jail, jailroot, pool, remote
from autograd_kata.classroom.sandbox.jail import launcher
from autograd_kata.core.manifest import STAGES
from expect import in_engine

pytestmark = pytest.mark.timeout(300)  # the end-to-end runs below grade whole test suites

ROOT = Path(__file__).resolve().parent.parent

TOY = '''\
"""A small engine with every kind of member the stage tests touch."""
import os

print("toy: a print at import goes to stderr, not into the protocol")
os.write(1, b"toy: so does a raw write to fd 1\\n")


class Value:
    def __init__(self, data, _children=(), _op=""):
        if not isinstance(data, (int, float)):
            raise TypeError(f"data must be a number, not {type(data).__name__}")
        self.data, self.grad, self._prev, self._op = float(data), 0.0, set(_children), _op

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"

    def __add__(self, other):
        if not isinstance(other, (int, float, Value)):
            return NotImplemented
        print("toy: adding")
        other = other if isinstance(other, Value) else Value(other)
        return Value(self.data + other.data, (self, other), "+")

    def __mul__(self, other):
        if not isinstance(other, (int, float, Value)):
            return NotImplemented
        other = other if isinstance(other, Value) else Value(other)
        return Value(self.data * other.data, (self, other), "*")

    __radd__, __rmul__ = __add__, __mul__

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return other + (-self)

    def __pow__(self, n):
        if not isinstance(n, (int, float)):
            raise TypeError(f"the exponent must be an int or float, not {type(n).__name__}")
        return Value(self.data ** n, (self,), f"**{n}")

    def __truediv__(self, other):
        return self * other ** -1

    def __rtruediv__(self, other):
        return other * self ** -1

    def __lt__(self, other):
        return self.data < (other.data if isinstance(other, Value) else other)


class Bag:
    def __init__(self, *items):
        self.items = list(items)

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        return iter(self.items)

    def __getitem__(self, i):
        return self.items[i]

    def __contains__(self, x):
        return x in self.items


class Oops(ValueError):
    pass


def data():
    return {"int": 3, "float": 3.0, "bool": True, "none": None, "str": "é\\n\\x00", "tuple": (1, 2.5),
            "set": {1, 2}, "frozenset": frozenset({3}), "nested": [[1, (2, [3])]], "nan": float("nan"),
            "inf": float("-inf"), "notimpl": NotImplemented, 7: "int key", (1, 2): "tuple key"}


def types(*args, **kwargs):
    return [type(a).__name__ for a in args], {k: type(v).__name__ for k, v in kwargs.items()}


def fail(kind):
    if kind == "zero":
        return 1 / 0
    if kind == "oops":
        raise Oops("a learner's own error")
    if kind == "key":
        return {}["missing"]
    if kind == "exit":
        raise SystemExit(3)


def loop():
    while True:
        pass


def die():
    os._exit(0)
'''


def toy_folder(tmp):
    (tmp / "pkg").mkdir()
    (tmp / "pkg" / "__init__.py").write_text("")
    (tmp / "pkg" / "toy.py").write_text(TOY)
    return tmp


def local_toy(folder):
    spec = importlib.util.spec_from_file_location("toy_here", folder / "pkg" / "toy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return toy_folder(tmp_path_factory.mktemp("sandbox"))


@pytest.fixture(scope="module")
def toy(folder):
    module = remote.connect("pkg.toy", folder)
    yield module
    module.__kata_remote__.close()


@pytest.fixture(scope="module")
def here(folder):
    return local_toy(folder)


def error_of(action):
    try:
        action()
    except Exception as error:  # noqa: BLE001 - the test compares what came
        return type(error), str(error)
    return None


# data -----------------------------------------------------------------------------

def test_data_comes_back_with_its_exact_types(toy):
    got = toy.data()
    assert type(got) is dict
    assert type(got["int"]) is int and type(got["float"]) is float and got["bool"] is True and got["none"] is None
    assert got["str"] == "é\n\x00"
    assert type(got["tuple"]) is tuple and got["tuple"] == (1, 2.5)
    assert type(got["set"]) is set and got["set"] == {1, 2}
    assert type(got["frozenset"]) is frozenset and got["nested"] == [[1, (2, [3])]]
    assert math.isnan(got["nan"]) and got["inf"] == -math.inf
    assert got["notimpl"] is NotImplemented
    assert got[7] == "int key" and got[(1, 2)] == "tuple key"


def test_arguments_cross_with_their_exact_types(toy):
    got = toy.types(1, 1.0, True, None, "s", (1,), [2], {3}, frozenset(), {"k": 4}, key=2.5)
    assert got == (["int", "float", "bool", "NoneType", "str", "tuple", "list", "set", "frozenset", "dict"],
                   {"key": "float"})


def test_big_requests_and_answers_cross_whole(toy):
    names, _ = toy.types(*[0.5] * 100_000)  # ~0.5 MB there, ~0.9 MB back: more than a pipe holds,
    assert names == ["float"] * 100_000      # less than the 1 MiB an answer may have (MAX_FRAME)


def test_a_local_object_never_crosses(toy):
    with pytest.raises(TypeError, match="@in_engine"):
        toy.types(lambda: 1)
    with pytest.raises(TypeError, match="@in_engine"):
        toy.types(object())
    v = toy.Value(1.0)
    with pytest.raises(TypeError, match="unsupported operand"):
        v + object()  # noqa: B018 - the proxy gives way (NotImplemented), so Python raises as locally
    with pytest.raises(TypeError, match="@in_engine"):
        class Mine(toy.Value):  # noqa: F841 - subclassing a sandbox class is refused with the way out
            pass


# proxies --------------------------------------------------------------------------

def test_one_proxy_per_object_so_identity_sets_and_dicts_work(toy):
    a, b = toy.Value(1.0), toy.Value(2.0)
    out = a + b
    assert out._prev == {a, b} and any(p is a for p in out._prev)
    assert {id(p) for p in out._prev} == {id(a), id(b)}
    assert {a: "a"}[next(p for p in out._prev if p is a)] == "a"
    assert a == a and a != b and not (a == b)
    twice = toy.Value(1.0, (a, a))
    assert twice._prev == {a} and len(twice._prev) == 1


def test_attributes_methods_and_classes(toy):
    v = toy.Value(3)
    assert type(v.data) is float and v.data == 3.0 and v._op == ""
    v.grad = 1.5
    assert v.grad == 1.5
    assert hasattr(v, "data") and not hasattr(v, "nope") and getattr(v, "nope", None) is None
    with pytest.raises(AttributeError, match="nope"):
        v.nope  # noqa: B018
    del v.grad
    assert not hasattr(v, "grad")
    assert type(v).__name__ == "Value" and type(toy.Bag()).__name__ == "Bag"
    method = v.__add__
    assert method(2).data == 5.0


def test_operators_reflected_ones_too_give_what_they_give_locally(toy, here):
    cases = {"v + 2": lambda m: m.Value(1.5) + 2, "2 + v": lambda m: 2 + m.Value(1.5),
             "3 * v": lambda m: 3 * m.Value(-1.5), "-v": lambda m: -m.Value(2.5),
             "v - w": lambda m: m.Value(5.0) - m.Value(2.0), "1 - v": lambda m: 1 - m.Value(4.0),
             "v ** 2": lambda m: m.Value(3.0) ** 2, "v / 4": lambda m: m.Value(3.0) / 4,
             "2 / v": lambda m: 2 / m.Value(0.8), "v += 1": lambda m: _iadd(m.Value(1.0), 1)}
    for what, make in cases.items():
        assert make(toy).data == make(here).data, what
    assert toy.Value(1.0) < 2 and not (toy.Value(3.0) < toy.Value(2.0))
    errors = {"v + 'a'": lambda m: m.Value(1.0) + "a", "'a' + v": lambda m: "a" + m.Value(1.0),
              "None * v": lambda m: None * m.Value(1.0), "v ** Value": lambda m: m.Value(3.0) ** m.Value(2),
              "1 / Value(0)": lambda m: 1 / m.Value(0.0), "Value('3')": lambda m: m.Value("3")}
    for what, make in errors.items():
        assert error_of(lambda make=make: make(toy)) == error_of(lambda make=make: make(here)) != None, what  # noqa: E711


def _iadd(v, n):
    v += n
    return v


def test_repr_str_format_len_iteration_and_membership(toy):
    v = toy.Value(2)
    v.grad = -0.5
    assert repr(v) == "Value(data=2.0, grad=-0.5)" == str(v) == f"{v}"
    assert f"{v!r:>30}" == f"{'Value(data=2.0, grad=-0.5)':>30}"
    bag = toy.Bag(v, 2, "x")
    assert len(bag) == 3 and list(bag) == [v, 2, "x"] and bag[0] is v
    assert 2 in bag and "y" not in bag and bool(bag) and not bool(toy.Bag())


def test_isinstance_with_a_class_of_the_sandbox(toy):
    v = toy.Value(1.0)
    assert isinstance(v, toy.Value) and isinstance(v + 1, toy.Value)
    assert not isinstance(3.0, toy.Value) and not isinstance(toy.Bag(), toy.Value)
    assert not isinstance(object(), toy.Value) and isinstance(v, (list, toy.Value))
    assert not isinstance(v, float) and issubclass(toy.Value, toy.Value)


def test_an_exception_keeps_its_builtin_type_message_and_the_learners_line(toy, here):
    with pytest.raises(ZeroDivisionError, match="division by zero") as raised:
        toy.fail("zero")
    (frame,) = raised.value.learner_frames
    assert frame == ("pkg/toy.py", TOY.splitlines().index("        return 1 / 0") + 1, "return 1 / 0")
    assert error_of(lambda: toy.fail("key")) == error_of(lambda: here.fail("key"))  # KeyError: "'missing'"
    with pytest.raises(ValueError, match="a learner's own error") as raised:
        toy.fail("oops")
    assert type(raised.value).__name__ == "Oops" and isinstance(raised.value, remote.RemoteError)
    with pytest.raises(remote.RemoteError) as raised:  # never a SystemExit in the judge
        toy.fail("exit")
    assert type(raised.value).__name__ == "SystemExit" and not isinstance(raised.value, SystemExit)


@in_engine.witness  # the sandbox's own report, for this test to read
def defined_in_the_sandbox(engine, data):
    import os
    import sys

    class Twice(engine.Value):
        def twice(self):
            return self * 2

    return Twice(data).twice(), os.getpid(), "pytest" in sys.modules


def test_call_source_runs_judge_written_code_next_to_the_engine(toy):
    value, pid, pytest_there = defined_in_the_sandbox(toy, 1.25)
    assert isinstance(value, toy.Value) and value.data == 2.5
    assert pid != os.getpid() and pytest_there is False


def test_an_in_engine_function_cannot_take_its_surroundings_along(toy):
    factor = 2

    @in_engine
    def scaled(engine, data):
        return engine.Value(data * factor)

    with pytest.raises(TypeError, match="uses factor of the function around it"):
        scaled(toy, 1.0)


@in_engine.witness  # the sandbox's own report, for this test to read
def seed_seen_by_the_sandbox(engine):
    import os

    return os.environ.get("KATA_HIDDEN_SEED")


@pytest.mark.parametrize("jailed", [False, True], ids=["default_launch", "jail_launcher"])
def test_the_hidden_seed_in_the_judges_environment_never_reaches_the_sandbox(folder, monkeypatch, jailed):
    monkeypatch.setenv("KATA_HIDDEN_SEED", "12345")
    toy = remote.connect("pkg.toy", folder, launch=launcher(folder) if jailed else None)
    try:
        assert seed_seen_by_the_sandbox(toy) is None
    finally:
        toy.__kata_remote__.close()


def test_learner_prints_do_not_disturb_the_protocol(toy):
    # the toy prints at import and in every __add__, to sys.stdout and straight to fd 1
    assert sum([toy.Value(1.0) for _ in range(3)], toy.Value(0.5)).data == 3.5


def test_a_module_that_does_not_import_is_reported_as_data(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "broken.py").write_text("x = 1\ndef f(:\n    pass\n")
    (tmp_path / "pkg" / "raises.py").write_text("import os\nraise RuntimeError('no')\n")
    (tmp_path / "pkg" / "wants.py").write_text("import pytest\n")  # no site-packages in the sandbox
    with pytest.raises(remote.ImportFailed) as raised:
        remote.connect("pkg.broken", tmp_path)
    assert raised.value.kind == "SyntaxError" and raised.value.lineno == 2
    with pytest.raises(remote.ImportFailed) as raised:
        remote.connect("pkg.raises", tmp_path)
    assert (raised.value.kind, raised.value.message) == ("RuntimeError", "no")
    assert raised.value.learner_frames == [("pkg/raises.py", 2, "raise RuntimeError('no')")]
    with pytest.raises(remote.ImportFailed, match="No module named 'pytest'"):
        remote.connect("pkg.wants", tmp_path)


# a sandbox that hangs, dies or lies ------------------------------------------------

def assert_stopped(module, reason):
    client = module.__kata_remote__
    assert client.proc.poll() is not None, "the sandbox must be killed"
    start = time.monotonic()
    with pytest.raises(remote.SandboxError, match="stopped earlier in this stage") as raised:
        module.Value(1.0)
    assert reason in str(raised.value) and time.monotonic() - start < 0.1


def test_a_hang_is_killed_after_the_call_timeout_and_ends_the_module(folder):
    toy = remote.connect("pkg.toy", folder, call_timeout=0.5)
    start = time.monotonic()
    with pytest.raises(remote.SandboxError, match=r"your code did not answer within 0.5 s - an infinite loop\?"):
        toy.loop()
    assert time.monotonic() - start < 2.5
    assert_stopped(toy, "did not answer")


def test_a_sandbox_that_exits_is_a_failure_not_a_pass(folder):
    toy = remote.connect("pkg.toy", folder)
    with pytest.raises(remote.SandboxError, match=r"exited \(status 0\)"):
        toy.die()
    assert_stopped(toy, "exited")


def test_the_jails_launcher_runs_the_same_sandbox(folder):
    toy = remote.connect("pkg.toy", folder, launch=launcher(folder))
    try:
        assert (toy.Value(2.0) * 3).data == 6.0
    finally:
        toy.__kata_remote__.close()


@in_engine.witness  # the sandbox's own report, for this test to read
def who_and_what_the_sandbox_sees(engine, paths):
    import os

    return os.getuid(), [os.path.exists(p) for p in paths]


@pytest.mark.skipif(not jail.detect().isolated, reason="needs a jail (root, or user namespaces)")
def test_in_the_jail_the_sandbox_runs_as_another_user_and_sees_only_its_folder(tmp_path):
    found = jail.detect()
    (tmp_path / "stage").mkdir()
    folder = toy_folder(jailroot.stage_folder(Path(found.root)) if found.mode == "chroot" else tmp_path / "stage")
    for path in (folder, folder / "pkg"):
        path.chmod(0o755)
    launch = launcher(folder, mode=found.mode, root=found.root or None)
    toy = remote.connect("pkg.toy", folder, launch=launch)
    try:
        uid, seen = who_and_what_the_sandbox_sees(toy, [str(ROOT / "solutions"), str(ROOT / "tests"),
                                                        launch.folder_inside + "/pkg/toy.py"])
        assert (toy.Value(2.0) * 3).data == 6.0
        lease_uid = toy.__kata_remote__.proc.kata_uid
    finally:
        toy.__kata_remote__.close()
        if found.mode == "chroot":
            shutil.rmtree(folder)
    assert seen == [False, False, True]
    if jail.is_root():  # a user of the pool, never root, and given back clean
        assert uid == lease_uid != 0 and not pool.processes_of(uid, zombies=True)
    else:  # a user namespace: the grader's own uid, but nothing of the grader's to see
        assert uid == os.getuid()


FAKE = '''\
import json, os, sys, time

def send(message=None, raw=None):
    data = raw if raw is not None else json.dumps(message).encode()
    os.write(1, len(data).to_bytes(4, "big") + data)

def read():
    head = b""
    while len(head) < 4:
        head += os.read(0, 4 - len(head))
    size, body = int.from_bytes(head, "big"), b""
    while len(body) < size:
        body += os.read(0, size - len(body))

mode = sys.argv[1]
if mode != "silent":
    send({"ok": {"H": 1, "c": "module"}})
    read()
    if mode == "garbage":
        send(raw=b"not json at all")
    elif mode == "huge":
        os.write(1, (1 << 30).to_bytes(4, "big"))
    elif mode == "shape":
        send({"ok": 1, "and": 2})
    elif mode == "value":
        send({"ok": {"Q": [1]}})
    elif mode == "handle":
        send({"ok": {"H": 99, "c": "Value"}})
    elif mode == "error":
        send({"error": {"type": 3}})
    elif mode == "exit":
        os._exit(3)
    elif mode == "long":  # what a hostile server could send: every part of an error long
        big, line = "y" * 60_000, "w" * 1000  # under the 1 MiB an answer may be, far over what is kept
        send({"error": {"type": "ValueError", "builtin": "ValueError", "args": [big, big], "message": big,
                        "frames": [[line, 1, line]] * 60}})
    elif mode == "strings":
        send({"ok": ["z" * 200_000]})
time.sleep(60)
'''


@pytest.mark.parametrize("mode, reason", [
    ("garbage", "is not valid JSON"),
    ("huge", f"an answer of {1 << 30} bytes"),
    ("shape", "the wrong shape"),
    ("value", "something that is not a value"),
    ("handle", "names object 99, which it never gave"),
    ("error", "an error in the wrong shape"),
    ("sleep", "your code did not answer within 0.5 s"),
    ("exit", "exited (status 3)"),
])
def test_a_hostile_sandbox_answer_stops_the_sandbox_with_a_plain_reason(tmp_path, mode, reason):
    fake = tmp_path / "fake.py"
    fake.write_text(FAKE)

    def launch(argv, **popen):
        return subprocess.Popen([sys.executable, str(fake), mode], start_new_session=True, **popen)

    module = remote.connect("pkg.toy", tmp_path, launch=launch, call_timeout=0.5)
    start = time.monotonic()
    with pytest.raises(remote.SandboxError) as raised:
        module.Value  # noqa: B018 - one request
    assert reason in str(raised.value) and time.monotonic() - start < 2.5
    assert_stopped(module, reason)


def test_what_a_hostile_sandbox_sends_is_cut_to_size_with_a_note(tmp_path):
    fake = tmp_path / "fake.py"
    fake.write_text(FAKE)

    def connect(mode):
        return remote.connect("pkg.toy", tmp_path, call_timeout=5, launch=lambda argv, **popen: subprocess.Popen(
            [sys.executable, str(fake), mode], start_new_session=True, **popen))

    module = connect("long")
    with pytest.raises(ValueError) as raised:
        module.Value  # noqa: B018 - one request
    error = raised.value
    note = "... [58000 more characters cut by the grader]"
    assert list(error.args) == ["y" * remote.MAX_MESSAGE + note] * 2
    assert len(error.learner_frames) == remote.MAX_FRAMES
    assert all(len(f[0]) <= remote.MAX_LINE + 60 and len(f[2]) <= remote.MAX_LINE + 60 for f in error.learner_frames)
    module.__kata_remote__.close()
    module = connect("strings")
    text, = module.Value
    assert len(text) < remote.MAX_STRING + 60 and text.endswith("more characters cut by the grader]")
    module.__kata_remote__.close()


def test_a_sandbox_that_never_says_hello_fails_at_the_start(tmp_path):
    fake = tmp_path / "fake.py"
    fake.write_text(FAKE)

    def launch(argv, **popen):
        return subprocess.Popen([sys.executable, str(fake), "silent"], start_new_session=True, **popen)

    with pytest.raises(remote.SandboxError, match=r"importing pkg/toy.py did not finish within 0.5 s"):
        remote.connect("pkg.toy", tmp_path, launch=launch, call_timeout=0.5)


# the stage tests through the sandbox ----------------------------------------------

def stage_folder(tmp_path, impl, source, edit=None):
    """tmp_path/<impl>/stageNN_*.py copied from ROOT/<source>, each passed through ``edit``."""
    target = tmp_path / impl
    target.mkdir(parents=True)
    (target / "__init__.py").write_text("")
    for s in STAGES:
        text = (ROOT / source / f"{s.module}.py").read_text(encoding="utf-8")
        (target / f"{s.module}.py").write_text(edit(s, text) if edit else text, encoding="utf-8")
    return tmp_path


def run_stage_tests(folder, *args, env=None):
    results = folder / "results.json"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           "-p", "autograd_kata.core.results.channel", f"--kata-results={results}",
                           f"--sandbox={folder}", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=280, env={**os.environ, "KATA_IMPL": "", **(env or {})})
    data = json.loads(results.read_text(encoding="utf-8"))
    return proc, data


def outcomes(data):
    return {t["nodeid"]: t["outcome"] for t in data["tests"]}


def test_the_reference_passes_every_stage_test_through_the_sandbox(tmp_path):
    folder = stage_folder(tmp_path, "solutions", "solutions")
    proc, data = run_stage_tests(folder, "--impl", "solutions", "tests")
    got = outcomes(data)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert data["collected"] == len(got) > 400 and set(got.values()) == {"passed"}


def test_the_untouched_stubs_fail_every_stage_test_through_the_sandbox(tmp_path):
    folder = stage_folder(tmp_path, "exercises", "exercises")
    proc, data = run_stage_tests(folder, "tests")
    got = outcomes(data)
    assert proc.returncode == 1
    assert data["collected"] == len(got) > 100 and set(got.values()) == {"failed"}
    messages = [t["message"] for t in data["tests"]]
    assert all("\n" not in m for m in messages if m.startswith("not written yet")), messages


def test_a_module_that_does_not_import_fails_with_the_same_line_as_locally(tmp_path):
    broken = lambda s, text: text.replace("def __add__(self, other):", "def __add__(self, other)", 1)  # noqa: E731
    folder = stage_folder(tmp_path / "graded", "exercises", "solutions", broken)
    proc, data = run_stage_tests(folder, STAGES[1].test_file)
    local = tmp_path / "local"
    for name in ("tests", "conftest.py", "pyproject.toml"):
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy
        copy(ROOT / name, local / name)
    shutil.copytree(folder / "exercises", local / "exercises")
    here = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", STAGES[1].test_file],
                          cwd=local, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "KATA_IMPL": ""})
    line = next(m for m in (t["message"] for t in data["tests"]))
    assert line.startswith("exercises/stage02_add_mul.py does not import (line ") and "SyntaxError" in line
    assert line in here.stdout and set(outcomes(data).values()) == {"error"}  # in setup, as locally


def test_a_hang_costs_one_timeout_and_the_rest_of_the_stage_fails_fast(tmp_path):
    def hang(s, text):
        return text.replace("        # BEGIN SOLUTION\n        out = Value(self.data + other.data",
                            "        while True:\n            pass\n        out = Value(self.data + other.data", 1)

    folder = stage_folder(tmp_path, "exercises", "solutions", hang)
    assert "while True" in (folder / "exercises" / f"{STAGES[1].module}.py").read_text()
    start = time.monotonic()
    proc, data = run_stage_tests(folder, STAGES[1].test_file, env={"KATA_SANDBOX_TIMEOUT": "1"})
    took = time.monotonic() - start
    messages = [t["message"] for t in data["tests"]]
    assert proc.returncode == 1 and took < 30, took
    # the sandbox stops the loop itself and says where it was, as kata check does (core/explain.hang)
    lineno = next(i for i, line in enumerate((folder / "exercises" / f"{STAGES[1].module}.py").read_text()
                                             .splitlines(), 1) if "while True:" in line)
    first = "hung: the test ran past its 1 s time limit; your code was at exercises/stage02_add_mul.py:{}"
    loop = (first.format(f"{lineno}: while True:"), first.format(f"{lineno + 1}: pass"))
    assert messages[0].splitlines()[0] in loop, messages[0]
    assert data["tests"][0]["kind"] == "hang", data["tests"][0]
    assert len(messages) == data["collected"] > 5
    hung = data["tests"][0]["name"]
    assert all(m == f"not run: stage 2 stopped at its first hang, in {hung}" for m in messages[1:]), messages
    assert {t["outcome"] for t in data["tests"][1:]} == {"skipped"}, data["tests"]


@pytest.mark.parametrize("style", ["short", "native"])
def test_an_error_in_the_learners_code_shows_the_learners_line(tmp_path, style):
    typo = lambda s, text: text.replace("Value(self.data + other.data,", "Value(self.data + other.dat,", 1)  # noqa: E731
    folder = stage_folder(tmp_path, "exercises", "solutions", typo)
    lineno = next(i for i, line in enumerate((folder / "exercises" / f"{STAGES[1].module}.py").read_text()
                                             .splitlines(), 1) if "other.dat," in line)
    proc, data = run_stage_tests(folder, STAGES[1].test_file, "-k", "add_computes_the_sum", f"--tb={style}")
    (test,) = data["tests"]
    error = "AttributeError: 'Value' object has no attribute 'dat'"
    place = f"exercises/stage02_add_mul.py:{lineno}: out = Value(self.data + other.dat, (self, other), '+')"
    # whatever the traceback style, the crash is explained the learner's way (core/explain.py):
    # the error first (the line the grader shows), then the place in the submitted file
    lines = test["message"].splitlines()
    assert test["outcome"] == "failed" and lines[0] == f"crashed: {error}", test["message"]
    assert place in test["message"], test["message"]


def test_a_module_that_hangs_at_import_fails_every_test_of_its_stage_at_once(tmp_path):
    folder = stage_folder(tmp_path, "exercises", "solutions", lambda s, text: "while True:\n    pass\n" + text)
    start = time.monotonic()
    proc, data = run_stage_tests(folder, STAGES[0].test_file, env={"KATA_SANDBOX_TIMEOUT": "1"})
    took = time.monotonic() - start
    messages = {t["message"] for t in data["tests"]}
    # the sandbox stopped the import itself, and says the line it was on
    hung = "importing exercises/stage01_value.py did not finish within 1 s - an infinite loop?"
    assert messages in ({f"{hung} Your code was at exercises/stage01_value.py:1: while True:"},
                        {f"{hung} Your code was at exercises/stage01_value.py:2: pass"}), messages
    assert len(data["tests"]) == data["collected"] > 5 and proc.returncode == 1 and took < 30, took
