"""The judge's stand-ins for the sandbox's objects: one ``Proxy`` per handle.

A ``Proxy`` forwards attribute access, calls, operators (reflected and in-place ones too),
``repr``, ``len``, iteration and ``isinstance(x, engine.Value)`` to its ``Client``
(``remote.py``) as requests; it holds nothing but its client and its handle, so identity,
``hash`` and ``is`` are the judge's own.  A proxy's class, and a remote exception's, is named
after the remote type (``type(x).__name__`` reads as it would locally), at most 1,000 of them.
"""
from __future__ import annotations

from typing import Any


class RemoteError(Exception):
    """Base of exceptions whose type is not a builtin one (named after the remote type)."""



class NotSendable(TypeError):
    """A local object that cannot cross to the sandbox (only data and proxies can)."""



def type_name(text, fallback):
    return text if isinstance(text, str) and text.isidentifier() and len(text) <= 100 else fallback


_CLASSES: dict = {}


def proxy_class(name):
    """A Proxy subclass named after the remote type, so ``type(x).__name__`` reads as it would locally."""
    name = type_name(name, "Proxy")
    if name not in _CLASSES and len(_CLASSES) < 1000:
        _CLASSES[name] = type(name, (Proxy,), {"__slots__": (), "__module__": "sandbox"})
    return _CLASSES.get(name, Proxy)


def remote_error(name, base):
    key = (name, base)
    if key not in _CLASSES and len(_CLASSES) >= 1000:  # a sandbox inventing names without end
        return RemoteError
    if key not in _CLASSES:
        bases = (RemoteError,) if base is Exception else (RemoteError, base)
        try:
            _CLASSES[key] = type(name, bases, {"__module__": "sandbox"})
        except TypeError:  # a builtin base whose layout cannot be mixed in
            _CLASSES[key] = type(name, (RemoteError,), {"__module__": "sandbox"})
    return _CLASSES[key]


def _binary(name):
    def forward(self, other):
        __tracebackhide__ = True
        try:
            return _client(self).request(name, self, other)
        except NotSendable:
            return NotImplemented

    def reflected(self, other):
        __tracebackhide__ = True
        try:
            return _client(self).request(name, other, self)
        except NotSendable:
            return NotImplemented
    return forward, reflected


def _call(name, check=None):
    def forward(self, *args):
        __tracebackhide__ = True
        result = _client(self).request(name, self, *args)
        if check is not None and type(result) is not check:
            raise TypeError(f"the sandbox's {name}() gave a {type(result).__name__}, not a {check.__name__}")
        return result
    return forward


def _client(proxy) -> Any:  # its remote.Client (not imported: remote.py imports this)
    return object.__getattribute__(proxy, "_kata_client")


class Proxy:
    """An object that lives in the sandbox.  Everything but identity is asked of it."""

    __slots__ = ("_kata_client", "_kata_handle", "__weakref__")

    def __init__(self, client, handle):
        object.__setattr__(self, "_kata_client", client)
        object.__setattr__(self, "_kata_handle", handle)

    def __getattr__(self, name):
        __tracebackhide__ = True
        if name.startswith("_kata_"):
            raise AttributeError(name)
        return _client(self).request("getattr", self, name)

    def __setattr__(self, name, value):
        __tracebackhide__ = True
        _client(self).request("setattr", self, name, value)

    def __delattr__(self, name):
        __tracebackhide__ = True
        _client(self).request("delattr", self, name)

    def __call__(self, *args, **kwargs):
        __tracebackhide__ = True
        return _client(self).request("call", self, *args, **kwargs)

    __hash__ = object.__hash__  # identity, as for a Value that does not define __eq__
    __repr__, __str__, __format__ = _call("repr", str), _call("str", str), _call("format", str)
    __len__, __bool__, __float__ = _call("len", int), _call("bool", bool), _call("float", float)
    __int__, __index__, __round__ = _call("int", int), _call("index", int), _call("round")
    __contains__, __getitem__ = _call("contains", bool), _call("getitem")
    __setitem__, __delitem__, __dir__ = _call("setitem"), _call("delitem"), _call("dir", list)
    __neg__, __pos__, __abs__, __invert__ = _call("neg"), _call("pos"), _call("abs"), _call("invert")
    __eq__, _ = _binary("eq")
    __ne__, _ = _binary("ne")
    __lt__, _ = _binary("lt")
    __le__, _ = _binary("le")
    __gt__, _ = _binary("gt")
    __ge__, _ = _binary("ge")
    __add__, __radd__ = _binary("add")
    __sub__, __rsub__ = _binary("sub")
    __mul__, __rmul__ = _binary("mul")
    __truediv__, __rtruediv__ = _binary("truediv")
    __floordiv__, __rfloordiv__ = _binary("floordiv")
    __mod__, __rmod__ = _binary("mod")
    __pow__, __rpow__ = _binary("pow")
    __matmul__, __rmatmul__ = _binary("matmul")
    __and__, __rand__ = _binary("and_")
    __or__, __ror__ = _binary("or_")
    __xor__, __rxor__ = _binary("xor")
    __lshift__, __rlshift__ = _binary("lshift")
    __rshift__, __rrshift__ = _binary("rshift")
    del _

    def __iter__(self):
        __tracebackhide__ = True
        client = _client(self)
        iterator = client.request("iter", self)
        while True:
            try:
                yield client.request("next", iterator)
            except StopIteration:
                return

    def __instancecheck__(self, obj):  # isinstance(x, engine.Value): self is the remote class
        __tracebackhide__ = True
        try:
            return _client(self).request("isinstance", obj, self) is True
        except NotSendable:
            return False  # a local object is no instance of a sandbox class

    def __subclasscheck__(self, cls):
        __tracebackhide__ = True
        try:
            return _client(self).request("issubclass", cls, self) is True
        except NotSendable:
            return False

    def __mro_entries__(self, bases):
        raise TypeError("a class in a test cannot subclass a class of the sandbox: define it inside an "
                        "@in_engine function (tests/expect.py), which runs where the engine lives")


for _op in "add sub mul truediv floordiv mod pow matmul lshift rshift and or xor".split():
    setattr(Proxy, f"__i{_op}__", _binary(f"i{_op}")[0])  # a += b: the sandbox's own in-place rule
del _op


class RemoteModule(Proxy):
    """The submitted module; ``__kata_remote__`` is its Client (for ``expect.in_engine``)."""

    __slots__ = ()

    @property
    def __kata_remote__(self) -> Any:
        return _client(self)
