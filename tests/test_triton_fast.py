"""``autograder.sandbox.triton_fast``: the zygote's cheaper patching of Triton's interpreter
gives every kernel the very same results and errors, and does the costly part once.

Each check runs in a fresh interpreter (``TRITON_INTERPRET=1`` must be set before triton
decorates a kernel, and the install changes the process for good), once as Triton ships and
once after :func:`~autograder.sandbox.triton_fast.install`, on the topic 8 reference's kernels
and on a kernel of this file that calls a jitted function of its own and raises.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("triton") is None,
                                reason="triton is not installed (topic 8 needs it)")

ROOT = Path(__file__).resolve().parents[1]

#: Prepended to each script: wrap ``owner.name`` so that its calls are counted.
COUNTING = r'''
def counting(owner, name):
    count = [0]
    original = getattr(owner, name)
    def counted(*args, **kwargs):
        count[0] += 1
        return original(*args, **kwargs)
    setattr(owner, name, counted)
    return count
'''

#: Run the kernels; print their results' bytes digested, the errors' types, and how often
#: the interpreter patched triton.language (its ``_patch_lang``) per launch.
SCRIPT = r'''
import hashlib, json, sys
import numpy as np
import torch
import triton
import triton.language as tl
from triton.runtime import interpreter

fast = sys.argv[1] == "fast"
wrapped = counting(interpreter, "_patch_attr")  # wrappers the interpreter made for builtins
if fast:
    from autograder.sandbox import triton_fast
    assert triton_fast.install() and triton_fast.install()  # a second call does nothing

from solutions import ex08_flash_attention as fa

asserts = counting(interpreter.interpreter_semantic, "device_assert")
calls = counting(interpreter, "_patch_lang")


@triton.jit
def _halve(x):
    return x * 0.5 + tl.max(x, 0) * 0.0


@triton.jit
def _nested(x_ptr, n, BLOCK: tl.constexpr, FAIL: tl.constexpr):
    i = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < n, other=0.0)
    for _ in range(3):
        x = _halve(x)
    if FAIL:
        tl.static_assert(BLOCK < 0, "a kernel that raises")
    tl.store(x_ptr + i, x, mask=i < n)


digest = hashlib.sha256()
def keep(*ts):
    for t in ts:
        digest.update(t.detach().contiguous().view(torch.uint8).numpy().tobytes())

g = torch.Generator().manual_seed(0)
rand = lambda *s, dtype=torch.float32: torch.randn(*s, generator=g).to(dtype)
per_launch, wrappers = [], []
for dtype in (torch.float32, torch.float16):
    for (B, H, L, S, E, Ev, causal, bm, bn) in ((1, 2, 20, 37, 8, 12, False, 16, 16),
                                                 (2, 1, 17, 17, 5, 3, True, 32, 16),
                                                 (1, 1, 40, 70, 16, 16, True, 64, 32)):
        q, k = rand(B, H, L, E, dtype=dtype), rand(B, H, S, E, dtype=dtype)
        v = rand(B, H, S, Ev, dtype=dtype)
        before, made = calls[0], wrapped[0]
        keep(*fa.flash_attention_forward(q, k, v, is_causal=causal, block_m=bm, block_n=bn))
        per_launch.append(calls[0] - before)
        wrappers.append(wrapped[0] - made)
keep(fa.softmax_rows(rand(5, 37)))
q, k, v = (rand(1, 2, 9, 16).requires_grad_() for _ in range(3))
o = fa.FlashAttention.apply(q, k, v, True)
o.sum().backward()
keep(o, q.grad, k.grad, v.grad)
errors = []
for fail in (False, True, False):  # a launch that raises leaves the next one as it was
    x = torch.arange(10.0)
    try:
        _nested[(1,)](x, 10, BLOCK=16, FAIL=fail)
    except Exception as e:
        errors.append(type(e).__name__)
    keep(x)


@triton.jit
def _overflow(x_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(x_ptr + i, (i + 2**30) * 4)


launch_asserts = asserts[0]
import dataclasses
options = interpreter.interpreter_builder.options
interpreter.interpreter_builder.options = dataclasses.replace(options, debug=True)
try:  # with debug on, an int32 overflow is reported as Triton reports it
    _overflow[(1,)](torch.zeros(16, dtype=torch.int32), BLOCK=16)
except Exception as e:
    errors.append(repr(e)[:200])
interpreter.interpreter_builder.options = options

def state(pkg):
    # which names hold a builtin and which the interpreter's wrapper of one, between launches
    out = {"builtin": [], "wrapper": []}
    for name in sorted(vars(pkg)):
        value = vars(pkg)[name]
        held = getattr(value, "__kwdefaults__", None)
        if tl.core.is_builtin(value):
            out["builtin"].append(name)
        elif isinstance(held, dict) and tl.core.is_builtin(held.get("member")):
            out["wrapper"].append(name)
    return out


print(json.dumps({"digest": digest.hexdigest(), "errors": errors, "per_launch": per_launch,
                  "wrappers": wrappers,
                  "state": [state(p) for p in (tl, tl.core, tl.math, tl.tensor,
                                               tl.core.tensor_descriptor_base)],
                  "asserts": launch_asserts,
                  "tl_sum_builtin": tl.core.is_builtin(tl.sum) or tl.sum.__class__.__name__}))
'''


def _run(mode: str) -> dict:
    env = {**os.environ, "TRITON_INTERPRET": "1", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", COUNTING + SCRIPT, mode], capture_output=True,
                          text=True, check=False, env=env, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def both() -> tuple[dict, dict]:
    return _run("slow"), _run("fast")


def test_the_kernels_give_the_same_bytes_and_errors(both):
    slow, fast = both
    assert slow["digest"] == fast["digest"]
    assert slow["errors"] == fast["errors"]
    assert slow["errors"][0] == "InterpreterError"
    assert "int32 overflow detected for operation mul" in slow["errors"][1]
    assert slow["tl_sum_builtin"] == fast["tl_sum_builtin"]


def test_a_launch_patches_the_language_once_per_set_of_modules(both):
    """As Triton ships, every tl.max / tl.sum inside a kernel (jitted functions of
    triton/language/standard.py) patches the whole language again: tens of times per launch.
    After install, once for the launch and once per set of modules the jitted functions it
    calls see (the standard library's), whatever the number of programs and key blocks."""
    slow, fast = both
    # (1 + two per key block and program: 33, 13 and 9 for these three launches)
    assert min(slow["per_launch"]) >= 9
    assert max(fast["per_launch"]) <= 3


def test_the_builtins_are_wrapped_once_per_process_and_put_back_as_before(both):
    """As Triton ships, every launch wraps each builtin of triton.language anew (hundreds per
    launch, twice). After install, the first launch makes the wrappers and later launches reuse
    them, and between launches the language holds the same builtins and wrappers, name by
    name, as it does without the install."""
    slow, fast = both
    assert min(slow["wrappers"]) >= 100
    assert fast["wrappers"][0] >= 100 and max(fast["wrappers"][1:]) == 0
    assert slow["state"] == fast["state"]
    assert slow["state"][0]["builtin"]  # the check reads something: tl's own builtins


def test_install_leaves_another_triton_alone():
    script = ("import triton; triton.__version__ = '3.10.0'\n"
              "from triton.runtime import interpreter as i\n"
              "before = (i._patch_builtin, i._get_np_dtype, i.GridExecutor.__call__,"
              " i.InterpretedFunction.__call__)\n"
              "import triton.language as tl\n"
              "inits = (tl.core.block_type.__init__, tl.core.tensor.__init__,"
              " tl.core.tuple.__eq__)\n"
              "from autograder.sandbox import triton_fast\n"
              "assert triton_fast.install() is False\n"
              "assert before == (i._patch_builtin, i._get_np_dtype, i.GridExecutor.__call__,"
              " i.InterpretedFunction.__call__)\n"
              "assert inits == (tl.core.block_type.__init__, tl.core.tensor.__init__,"
              " tl.core.tuple.__eq__)\n")
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=False, env=env, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_integer_operations_skip_the_overflow_check_that_asserts_nothing(both):
    """As Triton ships, each integer +, - and * of a kernel builds an int64 overflow check
    and hands it to device_assert, which drops it (the interpreter's options.debug is off).
    After install the check is not built (with debug on it is: the error above)."""
    slow, fast = both
    assert slow["asserts"] > 100
    assert fast["asserts"] == 0


#: Build block types, tensors and tuple comparisons with Triton's own constructors (each
#: replacement keeps the original as ``__wrapped__``) and with the installed ones, on shapes of
#: every kind Triton takes or refuses; print what differs, and how often the installed
#: constructors still ran Triton's shape unwrapping.
SHAPES_SCRIPT = r'''
import json
import numpy as np
import triton.language as tl
from triton.runtime import interpreter
from autograder.sandbox import triton_fast
assert triton_fast.install()
core = tl.core
C = core.constexpr
shapes = [[16], (16,), [1], [16, 32], (32, 1), [1, 64, 2], [C(16), 8], (C(4), C(2)),
          core.tuple([16, 4]), core.tuple([C(8)]), [16, 32], [16], [3], [0], [16, 12],
          [True, 2], [np.int64(16)], [16.0], [2 ** 20, 2 ** 20], [], [[16]], "16", None]


def attrs(obj):
    out = {}
    for k, v in vars(obj).items():
        if isinstance(v, core.tuple):
            v = ["tuple", [repr(x) if isinstance(x, C) else x for x in v.values],
                 str(v.type), type(v.type).__name__, [str(t) for t in v.type.types]]
        elif isinstance(v, C):
            v = ["constexpr", v.value, str(v.type)]
        else:
            v = repr(v)
        out[k] = v
    return out


def made(cls, init, *args):
    obj = cls.__new__(cls)
    init(obj, *args)
    return obj


def build(make):
    try:
        return ["ok", attrs(make())]
    except Exception as e:
        return ["error", type(e).__name__, str(e)]


unwrapped = counting(core, "_unwrap_shape")

diffs, kinds = [], set()
for elt in (tl.float32, tl.float16, tl.int1, tl.pointer_type(tl.float32)):
    for shape in shapes:
        for _ in range(2):  # the second time from what the first one kept
            mine = build(lambda: core.block_type(elt, shape))
            theirs = build(lambda: made(core.block_type, core.block_type.__init__.__wrapped__,
                                        elt, shape))
            kinds.add(mine[0])
            if mine != theirs:
                diffs.append(["block_type", str(elt), repr(shape), mine, theirs])
            if mine[0] != "ok":
                continue
            ty = core.block_type(elt, shape)
            for t in (ty, elt):
                a = made(core.tensor, core.tensor.__init__, None, t)
                b = made(core.tensor, core.tensor.__init__.__wrapped__, None, t)
                if attrs(a) != attrs(b):
                    diffs.append(["tensor", str(t), attrs(a), attrs(b)])
            for other in ([16], (16,), [16, 32], [1, 64, 2], [C(16)], [True], [], "x", None):
                for left in (ty.shape, core.tuple([C(d) for d in ty.shape.values])):
                    mine = build(lambda: C(left == other))
                    theirs = build(lambda: C(core.tuple.__eq__.__wrapped__(left, other)))
                    if mine != theirs:
                        diffs.append(["eq", repr(left.values), repr(other), mine, theirs])
before = unwrapped[0]
for _ in range(100):
    core.block_type(tl.float32, [16, 32])
print(json.dumps({"diffs": diffs[:5], "n_diffs": len(diffs), "kinds": sorted(kinds),
                  "unwrapped_repeats": unwrapped[0] - before}))
'''


def test_block_types_tensors_and_shape_comparisons_are_built_as_triton_builds_them():
    """The installed constructors give every attribute Triton's give, on shapes of every kind
    (ints, constexprs, Triton tuples; shapes Triton refuses with its own error), and a shape
    seen before is not unwrapped again."""
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", COUNTING + SHAPES_SCRIPT], capture_output=True,
                          text=True, check=False, env=env, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["n_diffs"] == 0, got["diffs"]
    assert got["kinds"] == ["error", "ok"]  # both paths were exercised
    assert got["unwrapped_repeats"] == 0
