"""Six costs of Triton 3.9's interpreter that a worker pays per launch and per call, removed
once per zygote (:func:`autograder.sandbox.zygote._preload_triton` calls :func:`install`).

The interpreter runs a kernel by patching ``triton.language`` for the duration of the launch
(``triton/runtime/interpreter.py``: ``GridExecutor.__call__`` calls ``_patch_lang``, which
finds every Triton builtin of ``tl``, ``tl.core``, ``tl.tensor``, ``tl.math`` and
``tl.core.tensor_descriptor_base`` with ``inspect.getmembers`` and wraps it), and checks
every integer operation for overflow. Six things there cost more than the kernels the
course grades:

1. ``inspect.getmembers`` builds, sorts and filters a list of every attribute of those modules
   and classes, five times per ``_patch_lang``. :func:`_patch_builtin` visits the same
   (name, value) pairs without the sorting and the ``dir()`` copies: a module's own
   ``__dict__`` (a module without ``__dir__``/``__getattr__``, which is what ``dir()`` lists
   then), a class's names along its MRO read back with ``getattr``, as ``getmembers`` does.
   The same attributes are wrapped the same way; only the order of visiting differs, and each
   name is set once.
2. Every call of a ``@triton.jit`` function from inside a kernel (``tl.max``, ``tl.sum`` and
   the other reductions of ``triton/language/standard.py`` are such functions, so a
   FlashAttention kernel makes two per key block) runs ``_patch_lang`` again
   (``InterpretedFunction.__call__``), and throws away the record of what it set. Within one
   launch, after the first such call for a given set of language modules, the language is
   already patched for them and nothing has put it back, so a repeat finds no builtin left to
   wrap and only re-sets a few interpreter helpers to fresh copies of themselves.
   :func:`_device_call` skips that repeat: once per launch and set of modules it patches as
   before. Any launch that starts or ends (a kernel launched from a kernel included) starts
   afresh, and a call outside a launch always patches.

3. Every integer ``+``, ``-`` and ``*`` of a kernel (its pointer arithmetic: several per key
   block) runs ``binary_op_sanitize_overflow_impl`` (``triton/language/semantic.py``): it
   recomputes the operation in int64, compares it with the type's bounds and hands the result
   to ``device_assert``, which returns at once unless the builder's ``options.debug`` is set,
   and the interpreter's never is (``InterpreterOptions.debug`` is False, and nothing in 3.9
   changes it). :func:`_sanitize` asks that same question first, on the interpreter's
   semantic object only, and skips the computation whose result would be dropped; with
   ``debug`` on it runs Triton's own.
4. Even once per launch, 1. lists every attribute of those modules and classes and makes a
   new wrapper (``_patch_attr``'s lambda) for each of a few hundred builtins, twice per launch
   (the kernel's ``tl`` and the standard library's ``tl.core``). The names that hold builtins
   do not change after ``triton.language`` is imported, and a wrapper holds nothing but its
   builtin and the interpreter's one semantic object: :func:`_builtin_names` reads the names
   once per process and pkg, and each builtin's wrapper is made once and set again at every
   launch (and put back as before by the launch's own scope).

5. Every operation of a kernel builds its result's ``block_type`` and ``tensor``
   (``triton/language/core.py``), and both constructors turn the shape into Triton's own
   ``tuple`` by unwrapping each dimension and deriving the tuple's type from its values, then
   check every dimension again (``validate_block_shape``): in a FlashAttention launch that is
   a fifth of the front end's work, for the same dozen shapes over and over.
   :func:`_make_block_type_init` and :func:`_make_tensor_init` remember, per shape of plain
   ``int`` dimensions (or ``constexpr`` of ints), what Triton computed from it the first time
   (the tuple's type, the element count, the name's shape part) and build each new object
   with the very attributes Triton's constructor gives it: new ``tuple`` and ``constexpr``
   objects every time, so nothing a kernel holds is shared with another object. A shape of
   anything else (a bool, a numpy integer, a nested tuple) and every shape Triton refuses
   (not a power of two, too many elements: its own error) go through Triton's constructor.
6. Broadcasting two operands (``semantic.py``'s ``broadcast_impl_value``, on most binary
   operations) compares each operand's shape, a Triton ``tuple``, with the result's, a list
   of ints; Triton's ``tuple.__eq__`` first rebuilds the list as a Triton tuple, unwrapping
   every element. :func:`_make_tuple_eq` compares the two lists of ints directly where both
   hold nothing else, and returns what Triton returns (a ``constexpr`` of the bool).

Measured in docs/design/measured-facts.md ("Triton in the sandbox"). What a kernel computes is
untouched: the same builtins are wrapped with the interpreter's own wrapper, and the kernels'
numpy work is Triton's. Only Triton 3.9's layout is recognised; with any other version (or a
missing piece) :func:`install` changes nothing and says so.
"""

from __future__ import annotations

import inspect
import types
from typing import Any

#: The Triton version whose interpreter this module knows (``triton/runtime/interpreter.py``).
KNOWN_VERSION = "3.9."

_state = {"generation": 0, "launching": 0, "patched": set()}


def _members(pkg: Any) -> list[tuple[str, Any]]:
    """The (name, value) pairs ``inspect.getmembers(pkg)`` returns, in no particular order.

    A module's ``__dict__`` where the module defines neither ``__dir__`` nor ``__getattr__``
    (``dir()`` of such a module is its ``__dict__``'s keys); for a class, every name in the
    ``__dict__`` of the class and its bases, read with ``getattr`` (what ``dir()`` and
    ``getmembers`` do); anything else through ``inspect.getmembers`` itself.
    """
    if isinstance(pkg, types.ModuleType):
        own = vars(pkg)
        if "__dir__" not in own and "__getattr__" not in own:
            return list(own.items())
    elif isinstance(pkg, type) and type(pkg) is type:
        names: set[str] = set()
        for klass in pkg.__mro__:
            names.update(vars(klass))
        out = []
        for name in names:
            try:
                out.append((name, getattr(pkg, name)))
            except AttributeError:
                continue  # getmembers skips it too (unless it is a DynamicClassAttribute)
        return out
    return inspect.getmembers(pkg)


#: pkg -> the names under which it held a Triton builtin when first patched (_builtin_names)
_names: dict[Any, tuple[str, ...]] = {}


def _builtin_names(pkg: Any, is_builtin: Any) -> tuple[str, ...]:
    """The names of ``pkg`` (a module or class of ``triton.language``) whose value is a Triton
    builtin, or the interpreter's wrapper of one (``_patch_attr``'s lambda keeps the builtin
    as its ``member`` default), read with :func:`_members` once per process and pkg.

    Triton defines its builtins when ``triton.language`` is imported, and the interpreter only
    swaps them for wrappers and back, so the names do not change between launches; listing
    every attribute of five modules and classes twice per launch was about a tenth of a
    one-program launch (docs/design/measured-facts.md, "Triton in the sandbox"). A builtin put
    under a new name of ``triton.language`` after the first launch would not be wrapped.
    """
    names = _names.get(pkg)
    if names is None:
        found = []
        for name, member in _members(pkg):
            wrapped = getattr(member, "__kwdefaults__", None)
            if is_builtin(member) or (isinstance(wrapped, dict)
                                      and is_builtin(wrapped.get("member"))):
                found.append(name)
        names = _names[pkg] = tuple(found)
    return names


def _make_patch_builtin(interp: Any) -> Any:
    is_builtin = interp.tl.core.is_builtin
    patch_attr = interp._patch_attr

    wrappers: dict[Any, Any] = {}  # builtin -> the interpreter's wrapper of it

    class _Kept:
        """A stand-in for the interpreter's patch scope that keeps the value set."""

        value: Any = None

        def set_attr(self, obj: Any, name: str, value: Any) -> None:
            self.value = value

    def _patch_builtin(pkg: Any, builder: Any, scope: Any) -> None:
        """Triton's ``_patch_builtin`` (wrap every builtin of ``pkg`` for the interpreter,
        recording the originals in ``scope``), over the names of ``pkg`` that held a builtin
        the first time (:func:`_builtin_names`), each builtin's wrapper made once:
        ``_patch_attr``'s wrapper holds nothing but the builtin and the interpreter's one
        semantic object, so the same wrapper serves every launch."""
        for name in _builtin_names(pkg, is_builtin):
            member = getattr(pkg, name, None)
            if not is_builtin(member):
                continue
            wrapper = wrappers.get(member)
            if wrapper is None:
                kept = _Kept()
                patch_attr(pkg, name, member, builder, kept)
                wrapper = wrappers[member] = kept.value
            scope.set_attr(pkg, name, wrapper)

    return _patch_builtin


def _make_np_dtype(interp: Any) -> Any:
    tl, np = interp.tl, interp.np
    original = interp._get_np_dtype
    # Triton's own table, built once instead of on every call
    table = {t: original(t) for t in (
        tl.int1, tl.float16, tl.float32, tl.float64, tl.int8, tl.uint8, tl.int16, tl.uint16,
        tl.int32, tl.uint32, tl.int64, tl.uint64, tl.bfloat16, tl.float8e5, tl.float8e5b16,
        tl.float8e4nv, tl.float8e4b8, tl.float8e4b15)}
    pointer = np.dtype(np.uint64)

    def _get_np_dtype(tt_dtype: Any) -> Any:
        """Triton's ``_get_np_dtype`` (the numpy dtype that holds a Triton type's values)
        over a table built once."""
        if isinstance(tt_dtype, tl.pointer_type):
            return pointer
        if isinstance(tt_dtype, tl.block_type):
            if isinstance(tt_dtype.element_ty, tl.pointer_type):
                return pointer
            return table[tt_dtype.element_ty]
        return table[tt_dtype]

    return _get_np_dtype


def _make_sanitize(interp: Any) -> Any:
    semantic = interp.interpreter_semantic
    original = semantic.binary_op_sanitize_overflow_impl

    def _sanitize(lhs: Any, rhs: Any, binary_op: Any) -> None:
        """Triton's overflow check of an integer operation, skipped where its only effect,
        ``device_assert``, would do nothing (``options.debug`` off: module docstring)."""
        if not semantic.builder.options.debug:
            return None
        return original(lhs, rhs, binary_op)

    return _sanitize


def _make_grid_call(interp: Any, original: Any) -> Any:
    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        """Triton's launch, marked: device calls inside it may skip repeating the patch."""
        _state["generation"] += 1
        _state["launching"] += 1
        try:
            return original(self, *args, **kwargs)
        finally:
            _state["launching"] -= 1
            _state["generation"] += 1
            _state["patched"].clear()

    __call__.__wrapped__ = original  # type: ignore[attr-defined]
    return __call__


def _make_device_call(interp: Any) -> Any:
    tl = interp.tl

    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        """Triton's ``InterpretedFunction.__call__`` (a jitted function called from a kernel),
        patching the language only the first time per launch and set of modules."""
        glob = self.fn.__globals__
        key = (_state["generation"],
               tuple(id(v) for v in glob.values()
                     if isinstance(v, types.ModuleType) and (v is tl or v is tl.core)))
        if not _state["launching"] or key not in _state["patched"]:
            interp._patch_lang(self.fn)
            if _state["launching"]:
                _state["patched"].add(key)
        fn = self.rewrite()
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            raise interp.InterpreterError(repr(e)) from e

    return __call__


def _plain_shape(shape: Any, tl: Any) -> tuple[int, ...] | None:
    """``shape`` as a tuple of ints where it is a list or a Triton ``tuple`` whose every
    dimension is an ``int`` or a ``constexpr`` holding one (what ``_unwrap_shape`` gives then);
    None for anything else, which Triton's own constructors handle (a Python tuple included:
    ``block_type`` asserts that its shape is a list or a *Triton* tuple)."""
    kind = type(shape)
    if kind is list:
        values = shape
    elif kind is tl.core.tuple:
        values = shape.values
    else:
        return None
    out = []
    for d in values:
        if type(d) is int:
            out.append(d)
        elif type(d) is tl.core.constexpr and type(d.value) is int:
            out.append(d.value)
        else:
            return None
    return tuple(out)


def _shape_tuple(new_tuple: Any, values: list, ty: Any) -> Any:
    """A new Triton ``tuple`` holding ``values`` with the type ``ty`` (what its constructor
    would derive from them), built without deriving it again."""
    made = new_tuple.__new__(new_tuple)
    made.values = values
    made.type = ty
    return made


def _make_block_type_init(interp: Any) -> Any:
    tl = interp.tl
    core = tl.core
    original = core.block_type.__init__
    new_tuple = core.tuple
    #: plain shape -> (the shape tuple's type, numel, the shape as the name shows it)
    known: dict[tuple[int, ...], tuple[Any, int, str]] = {}

    def __init__(self: Any, element_ty: Any, shape: Any) -> None:
        """Triton's ``block_type.__init__``, from what the first block type of the same plain
        shape computed (module docstring, 5.)."""
        key = _plain_shape(shape, tl)
        seen = known.get(key) if key is not None else None
        if seen is None:
            original(self, element_ty, shape)  # validates; raises as Triton does
            if key is not None and len(known) < 4096:
                known[key] = (self.shape.type, self.numel, str(self.shape))
            return
        ty, numel, text = seen
        self.element_ty = element_ty
        self.shape = _shape_tuple(new_tuple, list(key), ty)
        self.numel = numel
        self.name = f"<{text}, {element_ty}>"

    __init__.__wrapped__ = original  # type: ignore[attr-defined]
    return __init__


def _make_tensor_init(interp: Any) -> Any:
    tl = interp.tl
    core = tl.core
    original = core.tensor.__init__
    new_tuple, constexpr = core.tuple, core.constexpr
    #: plain shape -> (the constexpr shape tuple's type, numel)
    known: dict[tuple[int, ...], tuple[Any, int]] = {}

    def __init__(self: Any, handle: Any, type: Any) -> None:  # noqa: A002 - Triton's name
        """Triton's ``tensor.__init__``, from what the first tensor of the same plain block
        shape computed (module docstring, 5.)."""
        key = _plain_shape(type.shape, tl) if type.is_block() else ()
        seen = known.get(key) if key is not None else None
        if seen is None:
            original(self, handle, type)
            if key is not None and len(known) < 4096:
                known[key] = (self.shape.type, self.numel.value)
            return
        ty, numel = seen
        self.handle = handle
        self.numel = constexpr(numel)
        self.type = type
        self.dtype = type.scalar
        self.shape = _shape_tuple(new_tuple, [constexpr(d) for d in key], ty)

    __init__.__wrapped__ = original  # type: ignore[attr-defined]
    return __init__


def _make_tuple_eq(interp: Any) -> Any:
    core = interp.tl.core
    original = core.tuple.__eq__
    constexpr = core.constexpr

    def __eq__(self: Any, other: Any) -> Any:
        """Triton's ``tuple.__eq__`` (module docstring, 6.): a list or tuple of plain ints
        compared with a Triton tuple of plain ints is the comparison of the two lists, which
        Triton reaches by first rebuilding ``other`` as a Triton tuple."""
        kind = type(other)
        if kind is list or kind is tuple:
            mine = self.values
            if all(type(v) is int for v in other) and all(type(v) is int for v in mine):
                return constexpr(mine == list(other))
        return original(self, other)

    __eq__.__wrapped__ = original  # type: ignore[attr-defined]
    return __eq__


def install() -> bool:
    """Replace the costly pieces of Triton's interpreter in this process (module
    docstring); True if done, False where triton is missing, not 3.9, or not laid out as
    expected (then nothing is changed). Call it once, before any worker forks; a second call
    does nothing and returns True.
    """
    try:
        import triton
        from triton.runtime import interpreter as interp
    except Exception:  # noqa: BLE001 - optional: without it the interpreter is only slower
        return False
    if getattr(interp, "_course_fast", False):
        return True
    needed = ("_patch_builtin", "_get_np_dtype", "np", "_patch_attr", "_patch_lang", "GridExecutor",
              "InterpretedFunction", "InterpreterError", "tl")
    if not str(triton.__version__).startswith(KNOWN_VERSION) or not all(
            hasattr(interp, n) for n in needed):
        return False
    # The device call we replace must still be the one we read (its source names _patch_lang
    # and rewrite and nothing else of note): a later Triton that changed it keeps its own.
    try:
        src = inspect.getsource(interp.InterpretedFunction.__call__)
    except (OSError, TypeError):
        return False
    if "_patch_lang(self.fn)" not in src or "self.rewrite()" not in src:
        return False
    # The overflow check's one effect must still be device_assert's, which returns without
    # options.debug (read in Triton's source, as above).
    try:
        check = inspect.getsource(type(interp.interpreter_semantic).device_assert)
        sanitize = inspect.getsource(
            type(interp.interpreter_semantic).binary_op_sanitize_overflow_impl)
    except (OSError, TypeError, AttributeError):
        return False
    if ("if not self.builder.options.debug:\n            return\n" not in check
            or "self.device_assert(cond, msg, None)" not in sanitize
            or sanitize.count("self.device_assert") != 1 or "self.builder.create" in sanitize):
        return False
    # The constructors we replace must still compute what we read in them (5.).
    try:
        block_src = inspect.getsource(interp.tl.core.block_type.__init__)
        tensor_src = inspect.getsource(interp.tl.core.tensor.__init__)
    except (OSError, TypeError, AttributeError):
        return False
    if ("self.shape = tuple(_unwrap_shape(shape))" not in block_src
            or "self.numel = validate_block_shape(self.shape)" not in block_src
            or "self.name = f'<{self.shape}, {self.element_ty}>'" not in block_src
            or "self.shape = tuple([constexpr(s) for s in self.shape])" not in tensor_src
            or "self.numel = constexpr(math.prod(self.shape))" not in tensor_src
            or "other = _normalize_tuple(other)\n        return constexpr(self.values == other.values)"
            not in inspect.getsource(interp.tl.core.tuple.__eq__)):
        return False
    interp._patch_builtin = _make_patch_builtin(interp)
    interp._get_np_dtype = _make_np_dtype(interp)
    interp.interpreter_semantic.binary_op_sanitize_overflow_impl = _make_sanitize(interp)
    interp.GridExecutor.__call__ = _make_grid_call(interp, interp.GridExecutor.__call__)
    interp.InterpretedFunction.__call__ = _make_device_call(interp)
    interp.tl.core.block_type.__init__ = _make_block_type_init(interp)
    interp.tl.core.tensor.__init__ = _make_tensor_init(interp)
    interp.tl.core.tuple.__eq__ = _make_tuple_eq(interp)
    interp._course_fast = True
    return True
