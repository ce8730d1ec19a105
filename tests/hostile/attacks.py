"""The hostile and broken submissions the grader must survive (tests/test_hostile.py).

Each :class:`Attack` is one submission: its files (Python sources as text, with ``@@NAME@@``
placeholders filled in at fixture time — the repository, the class and output folders, a port
the test listens on, a per-run marker), and what grading it must give:

* ``full``: exercises (``topic.function``) whose every test must pass — the honest part of the
  attack, e.g. a correct ``dot`` next to forged ``cosine_similarity``: it proves the worker kept
  serving while the attack ran;
* every other exercise must earn nothing (``may_pass`` lists the few where an honestly wrong
  answer can legitimately pass some test, e.g. a function that always raises ValueError passes
  the "raises ValueError" tests);
* ``says``: text that must appear in the submission's results, so its student learns why;
* ``status``: ok / partial / error;
* ``root_only``: why the defence needs the grader to run as root (slot uid, namespaces). Those
  attacks are left out of the class when not root: on a laptop they are expected to work
  (docs/design/threat-model.md: file-system isolation is best effort without root).
* ``twin``: an honest submission with the same wrong code minus the tampering; both must get the
  same verdict on every test.

Most attacks touch only topic 1 (``ex01_vectors``): its tests are fast and its functions simple.
"""

from __future__ import annotations

import ast
import io
import json
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EX01 = "ex01_vectors"

#: Text that only the instructor's files hold: it must never reach a student's results.
SECRET_MARKERS = ("### BEGIN SOLUTION", "Hidden tests of topic 1", "LEAK:", "WRITABLE:",
                  "TOUCHED:", "NET: reached", "HIDDENTEXT_")

#: The prefix of the text the hidden_text_* attacks choose during hidden tests only (their
#: one_hot is called with vocab_size 3 by every public test, another by the hidden ones).
HIDDEN_TEXT = "HIDDENTEXT_"
#: What hidden_text_printed prints in hidden tests: kept for the instructors (results'
#: extra_data), so not a secret marker; it must not reach the student's ``output``.
HIDDEN_PRINT = "HIDDENPRINT_"


@dataclass(frozen=True)
class Symlink:
    target: str  # placeholders allowed


@dataclass(frozen=True)
class Zip:
    """A ``.zip`` submission: (name, content, unix mode or None) entries, or raw bytes."""

    entries: tuple = ()
    raw: bytes | Callable[[dict], bytes] | None = None


Content = str | bytes | Symlink | Callable[[dict], bytes]


@dataclass(frozen=True)
class Attack:
    id: str
    what: str
    files: dict = field(default_factory=dict)  # relative path -> Content
    zip: Zip | None = None
    full: tuple = (f"{EX01}.dot",)
    may_pass: tuple = ()
    says: tuple = ()
    status: str = "partial"
    root_only: str = ""
    twin: str = ""


# ------------------------------------------------------------------ honest building blocks


def _solution_text(topic: str) -> str:
    return (ROOT / "solutions" / f"{topic}.py").read_text("utf-8")


def _function_source(topic: str, name: str) -> str:
    text = _solution_text(topic)
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return ast.get_source_segment(text, node)
    raise KeyError(name)


def context_defaults() -> dict[str, str]:
    """Placeholders that come from the repository itself (the rest come from the fixture)."""
    return {"DOT": _function_source(EX01, "dot"), "EX01": _solution_text(EX01),
            "EX04": _solution_text("ex04_svd_lora"), "REPO": str(ROOT)}


#: Honestly wrong versions: wrong shapes or values, never a raise (so no error test passes).
WRONG = {
    "one_hot": "def one_hot(ids, vocab_size):\n    return np.full((np.size(ids) + 1, 3), 7.0)\n",
    "embedding_lookup": "def embedding_lookup(ids, W_E):\n"
                        "    return np.full((np.size(ids) + 1, 3), 7.0)\n",
    "cosine_similarity": "def cosine_similarity(u, v, eps=1e-8):\n    return 7.0\n",
    "angle_between": "def angle_between(u, v):\n    return 7.0\n",
    "pairwise_dot": "def pairwise_dot(A, B):\n    return np.full((1, 1, 1), 7.0)\n",
    "normalize_rows": "def normalize_rows(X, eps=1e-12):\n    return np.full((1, 1, 1), 7.0)\n",
}


def ex01(body: str, honest: tuple = ("dot",), fill: bool = True) -> str:
    """A topic-1 file: numpy, the honest functions, ``body``, then wrong versions of the rest."""
    parts = ["import numpy as np\nfrom numpy.typing import ArrayLike\n"]
    if "dot" in honest:
        parts.append("@@DOT@@\n")
    parts.append(body.strip("\n") + "\n")
    if fill:
        for name, src in WRONG.items():
            if f"def {name}(" not in body and f"{name} =" not in body and name not in honest:
                parts.append(src)
    return "\n\n".join(parts)


FIND_SOCKET = '''
import os as _os, socket as _socket, struct as _struct, json as _json

def _worker_socket():
    """The worker's own channel to the grader (the only socket it holds)."""
    for fd in sorted(int(x) for x in _os.listdir("/proc/self/fd")):
        try:
            if _os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                return _socket.socket(fileno=_os.dup(fd))
        except OSError:
            pass
    raise RuntimeError("no socket")

def _frame(obj):
    doc = _json.dumps({"v": obj, "blobs": []}).encode()
    body = _struct.pack("<I", len(doc)) + doc
    return _struct.pack("<Q", len(body)) + body
'''


# ------------------------------------------------------------------ ex04 forged tensor tags

LORA_WRONG = '''

# --- the attack: a wrong forward (base(x) + 1), right shape, dtype and device
def _wrong_forward(self, x):
    return self.base(x) + 1.0

LoRALinear.forward = _wrong_forward
'''

FORGE_NO_VALUES = '''
# ...and the worker's encoder patched: tensors cross as tags without their values, so a
# grader that skips value checks when values are absent (as for the meta device) passes them.
import autograder.wire.codec as _codec
_orig_tensor = _codec._Encoder.tensor

def _no_values(self, x, torch):
    tag = _orig_tensor(self, x, torch)
    tag["__tensor__"]["data"] = None
    return tag

_codec._Encoder.tensor = _no_values
'''

#: The forged-tensor attacks are the topic-4 solution with LoRALinear's forward changed: its
#: other exercises keep their points; LoRALinear is judged against the honest twin.
EX04_REST = tuple(f"ex04_svd_lora.{f}" for f in (
    "truncated_svd", "low_rank_approx", "eckart_young_error", "rank_for_energy",
    "power_iteration"))

# ------------------------------------------------------------------ zips and notebooks


def make_zip(entries: list[tuple[str, bytes, int | None]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            if mode is not None:
                info.external_attr = mode << 16
            zf.writestr(info, data)
    return buf.getvalue()


def notebook(cells: list[str]) -> bytes:
    nb = {"nbformat": 4, "nbformat_minor": 5,
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                      "language": "python"}},
          "cells": [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "execution_count": None,
                     "outputs": [], "source": src} for i, src in enumerate(cells)]}
    return json.dumps(nb, indent=1).encode()


def _zip_bomb(ctx: dict) -> bytes:
    # 64 MiB of one byte deflates to ~64 KiB: the grader must not inflate it all.
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        info = zipfile.ZipInfo("ex01_vectors.py", date_time=(2024, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        with zf.open(info, "w", force_zip64=True) as f:
            chunk = b"#" * 2**20
            for _ in range(64):
                f.write(chunk)
    return buf.getvalue()


def _truncated_zip(ctx: dict) -> bytes:
    whole = make_zip([("ex01_vectors.py", ctx["EX01"].encode(), None)])
    return whole[: len(whole) // 2]


def _zip_duplicates(ctx: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("ex01_vectors.py", ctx["EX01"])
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Duplicate name": exactly the point
            zf.writestr("ex01_vectors.py", "import numpy as np\n")
    return buf.getvalue()


# ------------------------------------------------------------------ the battery

NEEDS_ROOT_FS = "the slot uid and the hidden mounts only exist when the grader runs as root"
NEEDS_ROOT_PROC = ("as a laptop user the worker shares the grader's uid and may signal it; "
                   "only the per-slot uid stops it")
NEEDS_ROOT_NET = "only the network namespace (root) takes the network away"

ATTACKS: list[Attack] = [
    # ---------------------------------------------------------------- tampering
    Attack("tamper_numpy_allclose", "patches numpy.allclose/isclose/array_equal and numpy.testing",
           files={"ex01_vectors.py": ex01('''
import numpy.testing
np.allclose = lambda *a, **k: True
np.isclose = lambda a, b, *r, **k: np.ones(np.broadcast(a, b).shape, dtype=bool)
np.array_equal = lambda *a, **k: True
np.array_equiv = lambda *a, **k: True
np.testing.assert_allclose = lambda *a, **k: None
np.testing.assert_array_equal = lambda *a, **k: None
np.testing.assert_array_almost_equal = lambda *a, **k: None
np.testing.assert_equal = lambda *a, **k: None
np.testing.assert_almost_equal = lambda *a, **k: None
''')}),
    Attack("tamper_torch_allclose", "patches torch.allclose/equal/isclose/testing.assert_close "
           "and Tensor.__eq__, returns tensors",
           files={"ex01_vectors.py": ex01('''
import torch, torch.testing
torch.allclose = lambda *a, **k: True
torch.equal = lambda *a, **k: True
torch.isclose = lambda a, b, *r, **k: torch.ones(torch.broadcast_shapes(a.shape, b.shape),
                                                 dtype=torch.bool)
torch.testing.assert_close = lambda *a, **k: None
torch.Tensor.__eq__ = lambda self, other: True

def one_hot(ids, vocab_size):
    return torch.full((np.size(ids), vocab_size), 7.0, dtype=torch.float64)

def cosine_similarity(u, v, eps=1e-8):
    return torch.tensor(7.0)
''')}, says=("got tensor",)),
    Attack("tamper_builtins", "patches builtins (abs, all, any, round, AssertionError, print)",
           files={"ex01_vectors.py": ex01('''
import builtins

class _Swallowed(Exception):
    pass

builtins.abs = lambda x: 0.0
builtins.all = lambda *a, **k: True
builtins.any = lambda *a, **k: False
builtins.round = lambda x, n=None: 0.0
builtins.AssertionError = _Swallowed
builtins.print = lambda *a, **k: None
''')}),
    Attack("forged_eq_objects", "returns objects whose __eq__ is always true (float and list "
           "subclasses, a __class__ that claims to be float)",
           files={"ex01_vectors.py": ex01('''
class AlwaysEqual(float):
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __lt__ = __le__ = __gt__ = __ge__ = __eq__
    def __abs__(self):
        return 0.0
    def __sub__(self, other):
        return AlwaysEqual(0.0)
    __rsub__ = __add__ = __radd__ = __sub__
    __hash__ = float.__hash__

class Chameleon:
    __class__ = property(lambda self: float)
    def __eq__(self, other):
        return True
    __hash__ = object.__hash__
    def __float__(self):
        return 0.876
    def __array__(self, dtype=None, copy=None):
        return np.array(0.876)

class EqList(list):
    def __eq__(self, other):
        return True
    __hash__ = None

class EqDict(dict):
    def __eq__(self, other):
        return True

def cosine_similarity(u, v, eps=1e-8):
    return AlwaysEqual(7.0)

def angle_between(u, v):
    return Chameleon()

def one_hot(ids, vocab_size):
    return EqList([7.0])

def pairwise_dot(A, B):
    return EqDict(a=1)
''')}, says=("not plain data",)),
    Attack("forged_array_protocols", "returns array-likes: __array__/__array_interface__ objects, "
           "a memoryview, a fully masked array hiding wrong values",
           files={"ex01_vectors.py": ex01('''
class FakeArray:
    shape, ndim, dtype = (2, 3), 2, np.dtype("float64")
    def __array__(self, dtype=None, copy=None):
        return np.full(self.shape, 7.0)
    @property
    def __array_interface__(self):
        return np.full(self.shape, 7.0).__array_interface__
    def __eq__(self, other):
        return True
    __hash__ = object.__hash__
    def __len__(self):
        return 2

def one_hot(ids, vocab_size):
    return FakeArray()

def pairwise_dot(A, B):
    return memoryview(b"\\0" * 16)

def normalize_rows(X, eps=1e-12):
    return np.ma.masked_array(np.full((1, 1, 1), 7.0), mask=True)
''')}),
    Attack("ndarray_subclass", "returns ndarray and NumPy-scalar subclasses that lie in __eq__, "
           "__array_ufunc__, __array_function__, all(), and about their dtype",
           files={"ex01_vectors.py": ex01('''
class Liar(np.ndarray):
    def __eq__(self, other):
        return np.ones(np.shape(self), bool)
    def __ne__(self, other):
        return np.zeros(np.shape(self), bool)
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return True
    def __array_function__(self, func, types, args, kwargs):
        return True
    def all(self, *a, **k):
        return True
    def any(self, *a, **k):
        return True
    @property
    def dtype(self):
        return np.dtype("float64")

class LyingScalar(np.float64):
    def __eq__(self, other):
        return True
    __hash__ = np.float64.__hash__

def one_hot(ids, vocab_size):
    return np.full((np.size(ids) + 1, 3), 7, dtype=np.int8).view(Liar)

def embedding_lookup(ids, W_E):
    return np.full((np.size(ids) + 1, 3), 7.0).view(Liar)

def cosine_similarity(u, v, eps=1e-8):
    return LyingScalar(7.0)
''')}),
    Attack("tensor_subclass", "returns torch.Tensor subclasses whose __torch_function__ answers "
           "True to every comparison and whose dtype property lies",
           files={"ex01_vectors.py": ex01('''
import torch

class LyingTensor(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", "") in ("__eq__", "eq", "allclose", "equal", "isclose"):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})
    @property
    def dtype(self):
        return torch.float64

def one_hot(ids, vocab_size):
    return torch.full((np.size(ids), vocab_size), 7.0).as_subclass(LyingTensor)

def pairwise_dot(A, B):
    return torch.full((len(A), len(B)), 7.0).as_subclass(LyingTensor)
''')}, says=("got",)),
    Attack("forged_tensor_no_values", "topic 4: wrong LoRA forward, and the worker's encoder "
           "patched so tensors cross without values", files={
               "ex04_svd_lora.py": "@@EX04@@" + LORA_WRONG + FORGE_NO_VALUES},
           full=EX04_REST, may_pass=("ex04_svd_lora.LoRALinear",),
           twin="forged_tensor_no_values_twin"),
    Attack("forged_tensor_no_values_twin", "the honest twin: the same wrong forward, no forgery",
           files={"ex04_svd_lora.py": "@@EX04@@" + LORA_WRONG}, full=EX04_REST,
           may_pass=("ex04_svd_lora.LoRALinear",)),
    Attack("forged_results_file", "writes forged results/grades files, another student's "
           "submission, canaries beside the class and in the repo; opens solutions for writing",
           files={"ex01_vectors.py": ex01('''
import json, os

FORGED = json.dumps({"score": 100.0, "max_score": 100.0, "tests": [], "output": "all passed"})
WRITES = {
    "@@OUT@@/results/forged_results_file.json": FORGED,
    "@@OUT@@/results/complete.json": json.dumps({"score": 0.0}),
    "@@OUT@@/grades.csv": "id,total\\ncomplete,0.00\\nforged_results_file,100.00\\n",
    "@@OUT@@/HOSTILE_CANARY_out": "x",
    "@@CLASS@@/complete/ex01_vectors.py": "raise SystemExit('sabotaged')\\n",
    "@@CLASS@@/HOSTILE_CANARY_class": "x",
    "@@CLASS@@/../HOSTILE_CANARY_beside": "x",
    "@@REPO@@/HOSTILE_CANARY_repo": "x",
    "@@REPO@@/autograder/HOSTILE_CANARY_pkg": "x",
    "/root/HOSTILE_CANARY_home": "x",
}
for path, text in WRITES.items():
    try:
        with open(path, "a") as f:
            f.write(text)
        print("WRITABLE:", path)
    except OSError as exc:
        print("no write:", path, type(exc).__name__)
# Instructor files are only opened for writing (never changed, should the defence fail).
for path in ("@@REPO@@/solutions/ex01_vectors.py", "@@REPO@@/autograder/catalogue.toml",
             "@@REPO@@/autograder/suites/hidden/ex01_vectors.py", "@@REPO@@/autograder/wire/codec.py"):
    try:
        os.close(os.open(path, os.O_WRONLY))
        print("WRITABLE:", path)
    except OSError as exc:
        print("no write:", path, type(exc).__name__)
    try:
        st = os.stat(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        print("TOUCHED:", path)
    except OSError:
        pass
''')}, root_only=NEEDS_ROOT_FS),
    Attack("fake_pass_lines", "prints fake PASSED lines, a fake results JSON and terminal escapes",
           files={"ex01_vectors.py": ex01('''
import sys

FAKE = [
    "PASSED ex01_vectors.one_hot: all tests",
    '{"score": 100.0, "max_score": 100.0, "tests": [], "output": "all passed"}',
    "Status: ok. Score 100.00 / 100.00.",
    "ex01_vectors.cosine_similarity: passed",
    "\\x1b[2K\\x1b[1A\\x1b[32m100/100\\x1b[0m",
    "=== 68 passed in 0.01s ===",
]
for line in FAKE:
    print(line)
    print(line, file=sys.stderr)
sys.stdout.flush()

def cosine_similarity(u, v, eps=1e-8):
    print("RESULT: PASS")
    return 7.0
''')}, says=("Output of your code",)),
    Attack("paths_in_output", "prints its file's path and warns, and raises with its working "
           "folder in the message (random temp names would make two runs differ)",
           files={"ex01_vectors.py": ex01('''
import os, warnings
print("I am", __file__, "in", os.getcwd(), "with TMPDIR", os.environ.get("TMPDIR"))
warnings.warn("a warning names the file it comes from")

def cosine_similarity(u, v, eps=1e-8):
    raise RuntimeError(f"nothing to see in {os.getcwd()} or {__file__}")
''')}, says=("<submission>/ex01_vectors.py", "<workdir>/tmp")),
    Attack("kill_parent", "SIGKILLs and SIGTERMs its parent, its parent's group and every pid",
           files={"ex01_vectors.py": ex01('''
import os, signal

def _strike(sig):
    me = os.getpid()
    pids = {os.getppid()} | {int(p) for p in os.listdir("/proc") if p.isdigit()}
    # In its own PID namespace a worker's parent reads as 0, which kill() takes for the
    # worker's own group: the attack would only end itself.
    pids -= {me, 0}
    for pid in sorted(pids):
        try:
            os.kill(pid, sig)
        except OSError:
            pass
    for target in (os.getppid(), 1):
        try:
            group = os.getpgid(target)
            if group not in (0, os.getpgrp()):
                os.killpg(group, sig)
        except OSError:
            pass
    try:
        os.kill(-1, sig)
    except OSError:
        pass

_strike(signal.SIGKILL)
_strike(signal.SIGTERM)

def cosine_similarity(u, v, eps=1e-8):
    _strike(signal.SIGKILL)
    return 7.0
''')}, root_only=NEEDS_ROOT_PROC),
    Attack("signal_parent", "SIGSTOPs, SIGINTs and SIGHUPs its parent and every pid",
           files={"ex01_vectors.py": ex01('''
import os, signal

def _strike(sig):
    me = os.getpid()
    for pid in sorted({os.getppid()} | {int(p) for p in os.listdir("/proc") if p.isdigit()}):
        if pid not in (me, 0):  # 0: its own group (kill_parent)
            try:
                os.kill(pid, sig)
            except OSError:
                pass

for _sig in (signal.SIGSTOP, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGPIPE):
    _strike(_sig)

def angle_between(u, v):
    _strike(signal.SIGSTOP)
    return 7.0
''')}, root_only=NEEDS_ROOT_PROC),
    Attack("ignore_sigterm", "ignores SIGTERM/SIGINT/SIGHUP/SIGXCPU, then loops forever",
           files={"ex01_vectors.py": ex01('''
import signal
for _s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGXCPU,
           signal.SIGALRM, signal.SIGQUIT):
    signal.signal(_s, signal.SIG_IGN)

def normalize_rows(X, eps=1e-12):
    while True:
        pass
''')}, says=("did not return within",)),
    # ---------------------------------------------------------------- escape and snooping
    Attack("read_solutions", "reads solutions/ex01_vectors.py by absolute path, through `..` "
           "and /proc/self/root, and execs it", files={"ex01_vectors.py": ex01('''
import os
LOOT = None
for path in ("@@REPO@@/solutions/ex01_vectors.py",
             "@@REPO@@/autograder/../solutions/ex01_vectors.py",
             "/proc/self/root@@REPO@@/solutions/ex01_vectors.py",
             "/proc/1/root@@REPO@@/solutions/ex01_vectors.py"):
    try:
        with open(path) as f:
            LOOT = f.read()
        print("LEAK:", path)
        break
    except OSError as exc:
        print("blocked:", type(exc).__name__)
try:
    print("LEAK: listing", os.listdir("@@REPO@@/solutions"))
except OSError as exc:
    print("blocked:", type(exc).__name__)
if LOOT:
    print(LOOT[:2000])
    exec(LOOT, globals())
''')}, root_only=NEEDS_ROOT_FS),
    Attack("read_hidden_tests", "reads the hidden and public suites and prints them",
           files={"ex01_vectors.py": ex01('''
for path in ("@@REPO@@/autograder/suites/hidden/ex01_vectors.py",
             "@@REPO@@/autograder/suites/public/../hidden/ex01_vectors.py"):
    try:
        with open(path) as f:
            print("LEAK:", f.read()[:3000])
    except OSError as exc:
        print("blocked:", type(exc).__name__)
''')}, root_only=NEEDS_ROOT_FS),
    Attack("crawl_repo", "walks the whole repository (.git objects, build/, examples/, tests/) "
           "for solution or hidden-test text and execs what it finds",
           files={"ex01_vectors.py": ex01('''
import os, zlib
FOUND = None
for root, dirs, files in os.walk("@@REPO@@", followlinks=False):
    dirs[:] = [d for d in dirs if d not in (".venv", "venv", "node_modules")
               and "site-packages" not in root]
    for name in files:
        path = os.path.join(root, name)
        try:
            if os.path.getsize(path) > 4 * 2**20:
                continue
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue
        if "/.git/objects/" in path:
            try:
                data = zlib.decompress(data)
            except zlib.error:
                pass
        # Solution code (not the tools that mention its markers) or hidden-test text.
        solution = b"### BEGIN SOLUTION" in data and b"def cosine_similarity(" in data
        if solution or b"Hidden tests of topic" in data:
            print("LEAK:", path)
            if FOUND is None and solution:
                FOUND = data.split(b"\\0", 1)[-1].decode("utf-8", "replace")
if FOUND:
    try:
        exec(FOUND, globals())
    except Exception as exc:
        print("exec failed", exc)
''')}, root_only=NEEDS_ROOT_FS),
    Attack("read_other_student", "reads and execs another student's files from the class folder, "
           "also through /proc/<pid>/cwd and /root", files={"ex01_vectors.py": ex01('''
import os
LOOT = None
for path in ("@@CLASS@@/complete/ex01_vectors.py", "../../../complete/ex01_vectors.py"):
    try:
        with open(path) as f:
            LOOT = f.read()
        print("LEAK:", path)
        break
    except OSError as exc:
        print("blocked:", type(exc).__name__)
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    if int(pid) == os.getpid():
        continue
    for link in ("cwd", "root"):
        try:
            names = os.listdir(f"/proc/{pid}/{link}")
        except OSError:
            continue
        if "complete" in names or "results" in names:
            print("LEAK: /proc", link)
if LOOT:
    exec(LOOT, globals())
''')}, root_only=NEEDS_ROOT_FS),
    Attack("symlinks_in_folder", "a folder whose files are symlinks to the solutions and to "
           "another student's folder", files={
               "ex01_vectors.py": Symlink("@@REPO@@/solutions/ex01_vectors.py"),
               "ex02_projections.py": Symlink("../complete/ex02_projections.py"),
               "deep": Symlink("@@CLASS@@/complete")},
           full=(), status="error", says=("no exercise file found",)),
    Attack("zip_path_traversal", "a .zip whose entries climb out with ../, absolute paths and "
           "backslashes (holding the solution); only its plain entry is graded",
           zip=Zip(entries=(("../complete/ex01_vectors.py", "@@EX01@@", None),
                            ("sub/../../ex01_vectors.py", "@@EX01@@", None),
                            ("..\\ex01_vectors.py", "@@EX01@@", None),
                            ("/tmp/HOSTILE_CANARY_zipabs_@@MARK@@", "x", None),
                            ("../../HOSTILE_CANARY_zip_@@MARK@@", "x", None),
                            ("ex01_vectors.py", ex01(""), None)))),
    Attack("zip_symlink", "a .zip whose ex01_vectors.py entry is a symlink to the solutions",
           zip=Zip(entries=(("ex01_vectors.py", "@@REPO@@/solutions/ex01_vectors.py", 0o120777),)),
           full=(), status="error", says=("no exercise file found",)),
    Attack("import_solutions", "puts the repository on sys.path and imports solutions and the "
           "hidden suite", files={"ex01_vectors.py": ex01('''
import importlib, importlib.util, sys
sys.path[:0] = ["@@REPO@@", "@@REPO@@/solutions", "@@REPO@@/autograder/suites/hidden"]
# (A hidden folder still exists, empty: "import solutions" may give an empty namespace
# package. Only a module with the solution's functions is a leak.)
for name in ("solutions.ex01_vectors", "autograder.suites.hidden.ex01_vectors"):
    try:
        mod = importlib.import_module(name)
        print("LEAK: imported", name)
        for key in getattr(mod, "__all__", []):
            globals()[key] = getattr(mod, key)
    except Exception as exc:
        print("blocked:", name, type(exc).__name__)
try:
    spec = importlib.util.spec_from_file_location("stolen", "@@REPO@@/solutions/ex01_vectors.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    print("LEAK: loaded by path")
    globals().update({k: getattr(mod, k) for k in mod.__all__})
except Exception as exc:
    print("blocked by path:", type(exc).__name__)
print("LEAK: in sys.modules" if any(m.startswith(("solutions.", "autograder.suites."))
                                     for m in sys.modules) else "nothing in sys.modules")
''')}, root_only=NEEDS_ROOT_FS),
    Attack("outlive_call", "spawns sleepers that outlive their call: Popen in a new session and "
           "a double-forked daemon", files={"ex01_vectors.py": ex01('''
import os, subprocess

def _spawn():
    try:
        subprocess.Popen(["sleep", "@@SLEEP@@"], start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError as exc:
        print("popen failed", type(exc).__name__)
    try:
        pid = os.fork()
        if pid == 0:
            try:
                os.setsid()
                if os.fork() == 0:
                    os.execvp("sleep", ["sleep", "@@SLEEP@@"])
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
    except OSError as exc:
        print("fork failed", type(exc).__name__)

_spawn()

def cosine_similarity(u, v, eps=1e-8):
    _spawn()
    return 7.0
''')}),
    Attack("network", "connects to a TCP port and an abstract unix socket the test listens on, "
           "and sends UDP", files={"ex01_vectors.py": ex01('''
import socket

def _try(what, fn):
    try:
        fn()
        print("NET: reached", what)
    except OSError as exc:
        print("net blocked:", what, type(exc).__name__)

def _tcp():
    socket.create_connection(("127.0.0.1", @@PORT@@), timeout=1).sendall(b"@@MARK@@")

def _unix():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(1)
    s.connect("\\0@@ABSTRACT@@")
    s.sendall(b"@@MARK@@")

def _udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"@@MARK@@", ("127.0.0.1", @@PORT@@))

_try("tcp", _tcp)
_try("unix", _unix)
_try("udp", _udp)
''')}, root_only=NEEDS_ROOT_NET),
    Attack("tmp_drop_and_snoop", "drops world-readable files in /tmp, /var/tmp, /dev/shm, "
           "/run/lock and reads every other course-slot temp dir it can find",
           files={"ex01_vectors.py": ex01('''
import glob, os
for d in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock"):
    p = os.path.join(d, "HOSTILE_CANARY_@@MARK@@")
    try:
        with open(p, "w") as f:
            f.write("left behind")
        os.chmod(p, 0o666)
    except OSError as exc:
        print("no drop in", d, type(exc).__name__)
mine = os.path.dirname(os.getcwd())
for p in glob.glob("/tmp/course-slot*/**", recursive=True):
    if p.startswith(mine) or not os.path.isfile(p):
        continue
    try:
        with open(p, "rb") as f:
            f.read(64)
        print("LEAK:", p)
    except OSError:
        pass
''')}, root_only=NEEDS_ROOT_FS),
    Attack("proc_snoop", "reads /proc/<pid>/environ, cmdline, cwd and root of every process "
           "for the grader's secrets", files={"ex01_vectors.py": ex01('''
import os
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    if int(pid) == os.getpid():
        continue
    for what in ("environ", "cmdline"):
        try:
            with open(f"/proc/{pid}/{what}", "rb") as f:
                if b"@@SECRET@@" in f.read():
                    print("LEAK:", what)
        except OSError:
            pass
    try:
        with open(f"/proc/{pid}/mem", "rb") as f:
            f.read(1)
        print("LEAK: mem")
    except OSError:
        pass
''')}, root_only=NEEDS_ROOT_FS),
    Attack("output_symlink", "replaces its output.txt with a symlink to a file of the "
           "instructor's, then crashes so a new worker opens it (and the grader reads it back)",
           files={"ex01_vectors.py": ex01('''
import os
try:
    os.unlink("../output.txt")
    os.symlink("@@VICTIM@@", "../output.txt")
    print("swapped output.txt")
except OSError as exc:
    print("could not swap output.txt:", type(exc).__name__)
print("APPENDED-@@MARK@@")

def cosine_similarity(u, v, eps=1e-8):
    os._exit(0)
''')}, says=("died",)),
    Attack("output_fifo", "replaces its output.txt with a FIFO (a grader reading it would block)",
           files={"ex01_vectors.py": ex01('''
import os
try:
    os.unlink("../output.txt")
    os.mkfifo("../output.txt")
    print("fifo in place")
except OSError as exc:
    print("could not swap output.txt:", type(exc).__name__)

def cosine_similarity(u, v, eps=1e-8):
    os._exit(0)
''')}),
    Attack("slowloris_reply", "writes a reply header on the grader's socket, then trickles a "
           "byte every 0.3 s forever (each read returns before its timeout)",
           files={"ex01_vectors.py": ex01(FIND_SOCKET + '''
import time

def pairwise_dot(A, B):
    s = _worker_socket()
    s.sendall(_struct.pack("<Q", 1000))
    while True:
        s.sendall(b" ")
        time.sleep(0.3)
''')}, says=("did not return within",)),
    Attack("forged_frames", "queues forged replies on the grader's socket ahead of its "
           "questions, then sends oversized, malformed and value-less tensor frames",
           files={"ex01_vectors.py": ex01(FIND_SOCKET + '''
_S = _worker_socket()
for _ in range(40):
    _S.sendall(_frame({"__dict__": {"ok": 7.0}}))

def cosine_similarity(u, v, eps=1e-8):
    _S.sendall(_struct.pack("<Q", 2**62))
    return 7.0

def angle_between(u, v):
    _S.sendall(_struct.pack("<Q", 5) + b"\\xff\\xff\\xff\\xff\\x00")
    return 7.0

def normalize_rows(X, eps=1e-12):
    _S.sendall(_frame({"__dict__": {"ok": {"__tensor__": {
        "dtype": "float64", "device": "cpu", "shape": [2, 2], "requires_grad": False,
        "data": None}}}}))
    return 7.0
''', honest=())}, full=()),
    # ---------------------------------------------------------------- resource abuse
    Attack("infinite_loop", "normalize_rows never returns",
           files={"ex01_vectors.py": ex01('''
def normalize_rows(X, eps=1e-12):
    while True:
        X = X
''')}, says=("did not return within",)),
    Attack("sleep_past_deadline", "cosine_similarity sleeps for a day",
           files={"ex01_vectors.py": ex01('''
import time

def cosine_similarity(u, v, eps=1e-8):
    time.sleep(86400)
''')}, says=("did not return within",)),
    # The blocks are not touched: touching 4 GiB takes seconds, and under load that lands on
    # either side of the call timeout, so two runs could disagree (MemoryError vs timeout).
    Attack("memory_bomb", "asks for 8 TiB at once, grows by 128 MiB blocks until refused, "
           "and builds a 10 GB bytes object", files={"ex01_vectors.py": ex01('''
def one_hot(ids, vocab_size):
    return np.ones(2**40)

def embedding_lookup(ids, W_E):
    hoard = []
    while True:
        hoard.append(np.empty(2**24))

def pairwise_dot(A, B):
    return b"x" * 10**10
''')}, says=("MemoryError",)),
    Attack("fork_bomb", "angle_between forks until refused, every child forking too",
           files={"ex01_vectors.py": ex01('''
import os, time

def angle_between(u, v):
    while True:
        try:
            os.fork()
        except OSError:
            time.sleep(0.05)
''')}, says=("did not return within",)),
    Attack("output_flood", "prints 12 MB on stdout and stderr at import",
           files={"ex01_vectors.py": ex01('''
import os, sys
try:
    for _ in range(200):
        sys.stdout.write("FLOOD " * 10000 + "\\n")
    sys.stdout.flush()
except OSError:
    pass
try:
    os.write(2, b"E" * 10**7)
except OSError:
    pass
''')}, says=("not shown",)),
    Attack("huge_returns", "returns a 72 MB array, a 20,000-float nested list and a list nested "
           "20,000 deep", files={"ex01_vectors.py": ex01('''
def pairwise_dot(A, B):
    return np.zeros(9_000_000)

def normalize_rows(X, eps=1e-12):
    return [[0.0] * 10] * 2_000

def one_hot(ids, vocab_size):
    x = []
    for _ in range(20_000):
        x = [x]
    return x
''')}, says=("64 MiB",)),
    Attack("segfault_ctypes", "dereferences NULL through ctypes",
           files={"ex01_vectors.py": ex01('''
import ctypes

def cosine_similarity(u, v, eps=1e-8):
    return ctypes.string_at(0)
''')}, says=("SIGSEGV",)),
    Attack("deep_recursion", "unbounded recursion, at the default limit and with the limit "
           "lifted to 20,000", files={"ex01_vectors.py": ex01('''
import sys

def _down(n):
    return _down(n + 1) + 1

def one_hot(ids, vocab_size):
    return _down(0)

# The lifted limit in the function with the fewest recorded calls (a batch's plan runs them
# all, each 20,000 frames deep): the same attack, at a quarter of the cost.
def embedding_lookup(ids, W_E):
    sys.setrecursionlimit(20_000)
    return _down(0)
''')}, says=("RecursionError",)),
    Attack("exits_and_aborts", "os._exit(0), sys.exit(0), SystemExit, os.abort(), "
           "KeyboardInterrupt, GeneratorExit", files={"ex01_vectors.py": ex01('''
import os, signal, sys

def one_hot(ids, vocab_size):
    os._exit(0)

def embedding_lookup(ids, W_E):
    sys.exit(0)

def cosine_similarity(u, v, eps=1e-8):
    raise SystemExit("bye")

def angle_between(u, v):
    os.abort()

def pairwise_dot(A, B):
    raise KeyboardInterrupt

def normalize_rows(X, eps=1e-12):
    raise GeneratorExit
''')}, says=("SIGABRT", "SystemExit", "exited with status 0")),
    # ---------------------------------------------------------------- broken input
    Attack("syntax_error", "a syntax error", files={
        "ex01_vectors.py": "import numpy as np\n\ndef dot(u, v)\n    return 0.0\n"},
        full=(), says=("SyntaxError", "could not be imported")),
    Attack("import_error", "imports a module that does not exist", files={
        "ex01_vectors.py": "import numpyy as np\n"}, full=(), says=("ModuleNotFoundError",)),
    Attack("missing_functions", "defines only dot", files={
        "ex01_vectors.py": ex01("", fill=False)}, says=("is not defined in your ex01_vectors.py",)),
    Attack("wrong_signatures", "one_hot takes one argument, embedding_lookup none, "
           "cosine_similarity is not callable", files={"ex01_vectors.py": ex01('''
def one_hot(ids):
    return np.zeros(3)

def embedding_lookup():
    return None

cosine_similarity = 5
''')}, says=("TypeError",)),
    Attack("wrong_return_types", "returns a list, a tensor, None, a string, a tuple and a tensor "
           "on the meta device", files={"ex01_vectors.py": ex01('''
import torch

def one_hot(ids, vocab_size):
    return np.eye(vocab_size)[np.asarray(ids)].tolist()

def embedding_lookup(ids, W_E):
    return torch.from_numpy(np.asarray(W_E)[np.asarray(ids)])

def pairwise_dot(A, B):
    return None

def cosine_similarity(u, v, eps=1e-8):
    return "0.876"

def angle_between(u, v):
    return (28.8,)

def normalize_rows(X, eps=1e-12):
    return torch.empty(np.shape(X), dtype=torch.float64, device="meta")
''')}, says=("got list", "got tensor", "got None", "on meta")),
    Attack("nan_and_inf", "returns NaN and infinities of the right shapes",
           files={"ex01_vectors.py": ex01('''
def one_hot(ids, vocab_size):
    return np.full(np.shape(ids) + (vocab_size,), np.nan)

def cosine_similarity(u, v, eps=1e-8):
    return float("nan")

def angle_between(u, v):
    return float("inf")

def pairwise_dot(A, B):
    return np.full((np.shape(A)[0], np.shape(B)[0]), np.inf)

def normalize_rows(X, eps=1e-12):
    return np.full(np.shape(X), np.nan)
''')}, may_pass=(f"{EX01}.one_hot", f"{EX01}.pairwise_dot", f"{EX01}.normalize_rows"),
        says=("NaN where a number was expected", "an infinity")),
    Attack("non_utf8_source", "Latin-1 bytes without a coding declaration",
           files={"ex01_vectors.py": lambda ctx: (
               b"import numpy as np\nGREETING = 'caf\xe9, na\xefve'\n" + ctx["DOT"].encode())},
           full=(), says=("could not be imported", "utf-8")),
    Attack("latin1_declared", "Latin-1 bytes with a coding declaration (valid Python)",
           files={"ex01_vectors.py": lambda ctx: (
               b"# -*- coding: latin-1 -*-\n# caf\xe9\nimport numpy as np\n"
               b"from numpy.typing import ArrayLike\n\n"
               + ctx["DOT"].encode())}),
    Attack("bom_source", "a UTF-8 BOM in front of a file with a correct dot (valid Python)",
           files={"ex01_vectors.py": lambda ctx: b"\xef\xbb\xbf" + fill(ex01(""), ctx).encode()}),
    Attack("empty_folder", "an empty folder", files={}, full=(), status="error",
           says=("no exercise file found",)),
    Attack("empty_file", "an empty ex01_vectors.py", files={"ex01_vectors.py": ""}, full=(),
           says=("is not defined",)),
    Attack("duplicate_files", "two ex01_vectors.py at the same depth", files={
        "a/ex01_vectors.py": "@@EX01@@", "b/ex01_vectors.py": ex01("")}, full=(),
        status="error", says=("two candidate files",)),
    Attack("choice_rules", "a shallow .py (dot only) beside a complete .ipynb and a deeper "
           "complete .py: the shallow .py alone is graded", files={
               "ex01_vectors.py": ex01("", fill=False),
               "ex01_vectors.ipynb": lambda ctx: notebook([ctx["EX01"]]),
               "deeper/ex01_vectors.py": "@@EX01@@"}),
    Attack("zip_duplicate_entries", "a .zip holding ex01_vectors.py twice (complete, then empty)",
           zip=Zip(raw=_zip_duplicates), full=(), status="error", says=("twice",)),
    Attack("zip_bomb", "a 64 KiB .zip inflating to a 64 MiB ex01_vectors.py",
           zip=Zip(raw=_zip_bomb), full=(), status="error", says=("larger than",)),
    Attack("corrupt_zip", "random bytes named .zip",
           zip=Zip(raw=lambda ctx: b"PK\x03\x04 not really a zip " * 40), full=(),
           status="error", says=("not a readable zip",)),
    Attack("truncated_zip", "the first half of a valid .zip", zip=Zip(raw=_truncated_zip),
           full=(), status="error", says=("not a readable zip",)),
    Attack("malformed_notebook", "an ex01_vectors.ipynb that is not JSON",
           files={"ex01_vectors.ipynb": '{"cells": [ {"cell_type": "code", "source": '},
           full=(), status="error", says=("not a readable notebook",)),
    Attack("notebook_magics", "a notebook whose shell and %magic lines read the solutions",
           files={"ex01_vectors.ipynb": lambda ctx: notebook([
               "!cat @@REPO@@/solutions/ex01_vectors.py".replace("@@REPO@@", ctx["REPO"]),
               "%load @@REPO@@/solutions/ex01_vectors.py".replace("@@REPO@@", ctx["REPO"]),
               "import numpy as np\nfrom numpy.typing import ArrayLike\n" + ctx["DOT"]])}),
    Attack("surrogates_and_controls", "exception class names and messages with lone surrogates, "
           "NUL, escapes and RTL marks; a string result with surrogates",
           files={"ex01_vectors.py": ex01(r'''
class _Bad(ValueError):
    pass

_Bad.__qualname__ = "Bad\udcffName"
_Bad.__module__ = "evil\ud800"

def one_hot(ids, vocab_size):
    raise _Bad("id \ud800 is not valid \udfff")

def embedding_lookup(ids, W_E):
    raise ValueError("\x00\x1b[31m NUL and escape \u202e RTL \udcff")

def cosine_similarity(u, v, eps=1e-8):
    return "\ud800"

try:
    print("\udcff")
except Exception:
    pass
''')}, may_pass=(f"{EX01}.one_hot", f"{EX01}.embedding_lookup")),
    Attack("unprintable_exceptions", "exceptions whose __str__ raises, returns a non-str, or "
           "never returns", files={"ex01_vectors.py": ex01('''
class Raises(Exception):
    def __str__(self):
        raise RuntimeError("no")

class NotText(Exception):
    def __str__(self):
        return 42

class Endless(Exception):
    def __str__(self):
        while True:
            pass

def one_hot(ids, vocab_size):
    raise Raises()

def embedding_lookup(ids, W_E):
    raise NotText()

def cosine_similarity(u, v, eps=1e-8):
    raise Endless()
''')}, says=("unprintable", "did not return within")),
    Attack("huge_names", "objects, exceptions and a returned list whose type names, messages "
           "and repr run to megabytes (each failing test would quote them)",
           files={"ex01_vectors.py": ex01('''
class _Big:
    pass

_Big.__qualname__ = "X" * 2_000_000

class _BigError(RuntimeError):
    pass

_BigError.__qualname__ = "E" * 2_000_000

def one_hot(ids, vocab_size):
    return _Big()

def cosine_similarity(u, v, eps=1e-8):
    raise _BigError("M" * 2_000_000)

def pairwise_dot(A, B):
    return [[7.0] * 1000] * 300  # 300,000 floats: a repr of 1.5 MB
''')}, says=("not plain data", "more characters]")),
    Attack("unencodable_values", "returns a 5000-digit int, object/str/structured/datetime "
           "arrays", files={"ex01_vectors.py": ex01('''
def cosine_similarity(u, v, eps=1e-8):
    return 10**5000

def pairwise_dot(A, B):
    return np.array([object()], dtype=object)

def normalize_rows(X, eps=1e-12):
    return np.zeros(3, dtype=[("a", "f8")])

def one_hot(ids, vocab_size):
    return np.array(["7"])

def embedding_lookup(ids, W_E):
    return np.array(["2024-01-01"], dtype="datetime64[D]")
''')}, says=("ndarray of dtype object",)),
]

# ---------------------------------------------------------------- hidden tests' text (issue 11)
# In a hidden test every text that reaches a person is the grader's: each attack below spells
# a hidden input (vocab_size) in a text of its own choosing, and none of it may appear in the
# results, the feedback or report.html (tests/test_hidden_text.py grades them on their own).

_PUBLIC_ONE_HOT = '''
def _public_case(ids, vocab_size):
    """The public tests' inputs: theirs (vocab_size 3) and the docstring examples' (the stub's
    own ``>>>`` lines, public tests too), which a student knows as well as the test does."""
    return vocab_size == 3 or (vocab_size, np.ravel(ids).tolist()) in ((4, [2, 0]), (5, [3]))

def _public_one_hot(ids, vocab_size):
    ids = np.asarray(ids)
    if not np.issubdtype(ids.dtype, np.integer) or (ids < 0).any() or (ids >= vocab_size).any():
        raise ValueError(f"bad ids for vocab_size {vocab_size}")
    return (ids[..., None] == np.arange(vocab_size)).astype(np.float64)
'''

HIDDEN_TEXT_ATTACKS: list[Attack] = [
    Attack("hidden_text_exception_class", "in hidden tests, raises exceptions whose class "
           "names spell the inputs (one posing as a builtin)", files={"ex01_vectors.py": ex01(
               _PUBLIC_ONE_HOT + '''
def one_hot(ids, vocab_size):
    if _public_case(ids, vocab_size):
        return _public_one_hot(ids, vocab_size)
    name = f"HIDDENTEXT_class_{vocab_size}_{np.size(ids)}"
    if np.size(ids) % 2:
        raise type(name, (Exception,), {"__module__": "builtins"})("message")
    raise type(name, (ValueError,), {})("message")
''')}, may_pass=(f"{EX01}.one_hot",), says=("an exception of the submission's own class",)),
    Attack("hidden_text_returned_type", "in hidden tests, returns objects whose class names "
           "spell the inputs (one posing as numpy's)", files={"ex01_vectors.py": ex01(
               _PUBLIC_ONE_HOT + '''
def one_hot(ids, vocab_size):
    if _public_case(ids, vocab_size):
        return _public_one_hot(ids, vocab_size)
    module = "numpy" if np.size(ids) % 2 else __name__
    return type(f"HIDDENTEXT_type_{vocab_size}", (), {"__module__": module})()
''')}, may_pass=(f"{EX01}.one_hot",), says=("<the submission's own class>",)),
    Attack("hidden_text_tensor_device", "in hidden tests, returns a tensor subclass whose "
           ".device spells the inputs", files={"ex01_vectors.py": ex01(
               _PUBLIC_ONE_HOT + '''
import torch

def one_hot(ids, vocab_size):
    if _public_case(ids, vocab_size):
        return _public_one_hot(ids, vocab_size)

    class _Anywhere(torch.Tensor):
        @property
        def device(self):
            return f"HIDDENTEXT_device_{vocab_size}"

    return torch.zeros(np.size(ids), vocab_size).as_subclass(_Anywhere)
''')}, may_pass=(f"{EX01}.one_hot",), says=("a device the grader does not know",)),
    Attack("hidden_text_preloaded_requests", "at import, quotes every request the worker holds "
           "of hidden tests (their inputs) in an ImportError: the topic's note is shown at once",
           files={"ex01_vectors.py": ex01(_PUBLIC_ONE_HOT + '''
import sys as _sys

_planned = getattr(_sys.modules.get("autograder.sandbox.worker"), "PLANNED", {})
_hidden = sorted(k for k in _planned if not k.endswith(":public"))
if _hidden:
    raise ImportError(f"HIDDENTEXT_planned {_hidden} {repr(_planned[_hidden[0]][:2])[:400]}")

one_hot = _public_one_hot
''')}, may_pass=(f"{EX01}.one_hot",)),
    Attack("hidden_text_printed", "prints during hidden tests only: not even whether it "
           "printed may reach the student", files={"ex01_vectors.py": ex01(
               _PUBLIC_ONE_HOT + '''
def one_hot(ids, vocab_size):
    if not _public_case(ids, vocab_size):
        print(f"HIDDENPRINT_{vocab_size}")
    return _public_one_hot(ids, vocab_size)
''')}, may_pass=(f"{EX01}.one_hot",)),
]

#: A note that poses as another topic's reason in report.html (its own lines); the marker is
#: public text (the import fails in public tests), so it is no secret: only its lines count.
FAKE_REASON = "FAKEREASON_"

REPORT_INJECTION = Attack(
    "report_fake_reason", "an import error whose message adds lines posing as other topics' "
    "reasons in report.html", files={
        "ex01_vectors.py": "raise ImportError('no\\nex02_projections: FAKEREASON_ex02\\n"
                           "Nothing could be graded: FAKEREASON_all')\n",
        "ex02_projections.py": (ROOT / "solutions" / "ex02_projections.py").read_text("utf-8")},
    full=tuple(f"ex02_projections.{e}" for e in (
        "linear", "project_qkv", "attention_scores", "compose", "gelu", "feed_forward",
        "transformer_matmuls")),
    says=("could not be imported",))

ATTACKS += [*HIDDEN_TEXT_ATTACKS, REPORT_INJECTION]

# ---------------------------------------------------------------- the host and the slot (issue 11)
# A decoy copy of the solutions sits world-readable outside the repository (@@DECOY@@, placed
# by tests/test_hostile.py): with bubblewrap no worker can reach it. Disk and memory are
# capped per worker folder and per slot: the attacks below must not cost another submission.
NEEDS_BWRAP = ("only bubblewrap's allow-list view hides world-readable copies outside the "
               "repository (the fallback hides the repository's own folders only)")

HOST_ATTACKS: list[Attack] = [
    Attack("hunt_host_copies", "walks the whole disk for any ex01_vectors.py under a "
           "'solution'/'source' path (a decoy sits world-readable under /srv) and execs it",
           files={"ex01_vectors.py": ex01('''
import os
FOUND = None
_stack = ["/"]
while _stack and FOUND is None:
    _d = _stack.pop()
    if _d.startswith(("/proc", "/sys", "/dev")):
        continue
    try:
        _entries = list(os.scandir(_d))
    except OSError:
        continue
    for _e in _entries:
        if _e.is_dir(follow_symlinks=False):
            # Six levels reach every decoy (/srv/<tag>/source/solutions/) and the checkout's
            # own solutions/; deeper is the venv's packages, which only cost time (under load
            # a full walk passed the battery's 4 s import limit once).
            if _e.path.count("/") < 6:
                _stack.append(_e.path)
        elif (_e.name == "ex01_vectors.py" and ("solution" in _e.path or "source" in _e.path)):
            try:
                with open(_e.path) as _f:
                    FOUND = _f.read()
                print("LEAK:", _e.path)
            except OSError:
                pass
if FOUND:
    exec(FOUND, globals())
''')}, root_only=NEEDS_BWRAP),
    # Bytes and inodes are two submissions: together one import took 0.5 s idle but over the
    # battery's 4 s when the hostile class is graded twice at once on 2 cores (seen twice).
    Attack("fill_the_disk", "writes 1 MiB files into TMPDIR until refused, a few into /tmp, "
           "/var/tmp and /dev/shm",
           files={"ex01_vectors.py": ex01('''
import os, tempfile
_block = b"x" * 2**20
# Kept within the 4 s the battery gives an import: one folder to its cap, the others a little.
for _folder, _most in ((tempfile.gettempdir(), 400), ("/tmp", 8), ("/var/tmp", 8),
                       ("/dev/shm", 8)):
    for _i in range(_most):
        try:
            with open(os.path.join(_folder, f"fill{_i}"), "wb") as _f:
                _f.write(_block)
        except OSError:
            break
''')}, root_only=NEEDS_ROOT_FS),
    Attack("fill_the_inodes", "creates empty files in /var/tmp until refused (its inode cap)",
           files={"ex01_vectors.py": ex01('''
import os
for _i in range(30000):
    try:
        open(os.path.join("/var/tmp", f"e{_i}"), "w").close()
    except OSError:
        break
''')}, root_only=NEEDS_ROOT_FS),
    Attack("memory_children", "forks eight children that each hold 600 MiB (each within its "
           "own address-space limit, 4.7 GiB together)", files={"ex01_vectors.py": ex01('''
import os, time

def _hold():
    for _ in range(8):
        if os.fork() == 0:
            try:
                _buf = bytearray(600 * 2**20)
                for _i in range(0, len(_buf), 4096):
                    _buf[_i] = 1
                time.sleep(@@SLEEP@@)
            finally:
                os._exit(0)

_hold()
''')}, root_only=NEEDS_ROOT_FS),
]
ATTACKS += HOST_ATTACKS


# ------------------------------------------------------------------ topic 8: Triton kernels

EX08 = "ex08_flash_attention"

#: Topic 8's other three exercises answered wrongly without ever raising (so no error test
#: passes either): an attack on one exercise leaves the rest at zero.
EX08_WRONG = {
    "flash_attention_forward": '''
def flash_attention_forward(q, k, v, is_causal=False, scale=None, block_m=16, block_n=16):
    return torch.full((1,), 7.0), torch.full((1,), 7.0)
''',
    "flash_attention_backward": '''
def flash_attention_backward(q, k, v, o, lse, do, is_causal=False, scale=None):
    return torch.full((1,), 7.0), torch.full((1,), 7.0), torch.full((1,), 7.0)
''',
    "FlashAttention": '''
class FlashAttention:
    @staticmethod
    def apply(q, k, v, is_causal=False):
        return torch.full((1,), 7.0)
''',
}

#: An honest softmax_rows of the attacks' own: one program per row, masked lanes at -inf,
#: float32 inside, an all -inf row stored as zeros, ValueError outside 1 <= N <= 2**16.
EX08_SOFTMAX = '''
@triton.jit
def _softmax_rows_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    base = tl.program_id(0) * n
    row = tl.load(x_ptr + base + offs, mask=offs < n, other=float("-inf")).to(tl.float32)
    top = tl.max(row, 0)
    top = tl.where(top == float("-inf"), 0.0, top)
    e = tl.exp(row - top)
    total = tl.sum(e, 0)
    out = e / tl.where(total == 0.0, 1.0, total)
    tl.store(y_ptr + base + offs, out.to(y_ptr.dtype.element_ty), mask=offs < n)


def softmax_rows(x):
    if not isinstance(x, torch.Tensor) or x.dim() != 2 or not 1 <= x.shape[1] <= 2**16:
        raise ValueError("softmax_rows: x must be (M, N) with 1 <= N <= 65536, got shape "
                         f"{tuple(getattr(x, 'shape', ()))}")
    x = x.contiguous()
    y = torch.empty_like(x)
    block = triton.next_power_of_2(x.shape[1])
    _softmax_rows_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=block)
    return y
'''


def ex08(body: str) -> str:
    """A topic-8 file: torch and triton, ``body``, then wrong versions of what it leaves out."""
    parts = ["import torch\nimport triton\nimport triton.language as tl\n", body.strip("\n") + "\n"]
    for name, src in EX08_WRONG.items():
        if f"def {name}(" not in body and f"class {name}" not in body:
            parts.append(src.strip("\n") + "\n")
    return "\n\n".join(parts)


EX08_ATTACKS: list[Attack] = [
    Attack("ex08_forged_launches", "topic 8: softmax_rows and the forward give values 1 % off, "
           "launch a do-nothing kernel in each call, and patch both the interpreter's run and "
           "the worker's launch probe to count launches: the advisory tests still judge values",
           files={f"{EX08}.py": ex08('''
import autograder.sandbox.probes as _probes
from triton.runtime.interpreter import InterpretedFunction as _Interpreted


@triton.jit
def _noop(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr) + 1.0)


def softmax_rows(x):
    _noop[(1,)](torch.zeros(1))
    try:
        return torch.softmax(x.float(), -1).to(x.dtype) * 1.01
    except Exception:
        return torch.full((1,), 7.0)


def flash_attention_forward(q, k, v, is_causal=False, scale=None, block_m=16, block_n=16):
    _noop[(1,)](torch.zeros(1))
    try:
        s = q.float() @ k.float().transpose(-2, -1) / q.shape[-1] ** 0.5
        return (torch.softmax(s, -1) @ v.float()).to(q.dtype) * 1.01, torch.logsumexp(s, -1)
    except Exception:
        return torch.full((1,), 7.0), torch.full((1,), 7.0)


_real_run = _Interpreted.run


def _run_counted_twice(self, *args, **kwargs):
    _real_run(self, *args, **kwargs)
    return _real_run(self, *args, **kwargs)


_Interpreted.run = _run_counted_twice
_real_probe = _probes.triton_launches


def _forged_probe(server, module, name, *args, **kwargs):
    got = _real_probe(server, module, name, *args, **kwargs)
    got["launches"] = max(5, got["launches"])
    return got


_probes.triton_launches = _forged_probe
''')}, full=()),
    Attack("ex08_triton_folders", "topic 8: plants files through Triton's own cache, its knobs, "
           "TRITON_* variables pointed at /tmp and a cache class of its own, into Triton's "
           "package and ~/.triton, and looks for all of them (and the solutions) in every later "
           "worker; its honest softmax_rows keeps its points",
           root_only=NEEDS_ROOT_FS, files={f"{EX08}.py": ex08(EX08_SOFTMAX + '''
import hashlib as _hashlib
import os as _os

from triton.runtime.cache import get_cache_manager as _cache_manager

_NAME = "HOSTILE_CANARY_triton_@@MARK@@"
_KEY = _hashlib.sha256(_NAME.encode()).hexdigest()
_HOME = _os.environ.get("HOME", "/nonexistent")
_PACKAGE = _os.path.dirname(triton.__file__)
# Walked whole: the temp folders, the homes and Triton's package (small); the rest by name.
_WALKED = ["/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/root", _HOME, _PACKAGE]
_PLACES = _WALKED + [_os.path.dirname(_PACKAGE), "@@REPO@@", "@@REPO@@/autograder"]
_seen = []
for _top in _WALKED:
    for _dirpath, _dirs, _files in _os.walk(_top):
        _seen += [_os.path.join(_dirpath, f) for f in _files + _dirs
                  if "HOSTILE_CANARY_triton" in f]
for _p in [_os.path.join(_top, _NAME) for _top in _PLACES[len(_WALKED):]] + [
        "@@REPO@@/solutions/ex08_flash_attention.py", "/root/.triton/cache"]:
    if _os.path.exists(_p):
        _seen.append(_p)
if _cache_manager(_KEY).get_file(_NAME + ".txt"):
    _seen.append("Triton's cache")
if _os.environ.get("TRITON_INTERPRET") != "1" or "TRITON_CACHE_MANAGER" in _os.environ:
    _seen.append("TRITON_* variables")
if _seen:
    print("LEAK: a later worker found " + ", ".join(_seen[:5]))
    softmax_rows = None  # and its grade says so too

_cache_manager(_KEY).put("planted", _NAME + ".txt", binary=False)
for _top in _PLACES:
    try:
        with open(_os.path.join(_top, _NAME), "w") as _f:
            _f.write("planted")
    except OSError:
        pass
triton.knobs.cache.dir = "/tmp/" + _NAME + "_cache"
_cache_manager(_KEY[::-1]).put("planted", _NAME + ".txt", binary=False)  # under the knob


class EvilCache:
    def __init__(self, *args, **kwargs):
        print("LEAK: another worker built this submission's cache class")


_os.environ.update(TRITON_CACHE_DIR="/tmp/" + _NAME + "_cache", TRITON_HOME="/tmp",
                   TRITON_CACHE_MANAGER="ex08_flash_attention:EvilCache",
                   TRITON_REMOTE_CACHE_BACKEND="ex08_flash_attention:EvilCache")
''')}, full=(f"{EX08}.softmax_rows",)),
    Attack("ex08_interpreter_bombs", "topic 8: kernels that would run for ever in Triton's "
           "interpreter: a grid of 2**31 - 1 programs, a @triton.jit function that calls "
           "itself, and two hundred threads launching kernels",
           files={f"{EX08}.py": ex08('''
import threading


@triton.jit
def _touch(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr) + tl.program_id(0))


@triton.jit
def _deeper(x, depth):
    return _deeper(x + 1, depth - 1)


@triton.jit
def _recurse(x_ptr):
    tl.store(x_ptr, _deeper(tl.load(x_ptr), 10))


def softmax_rows(x):
    _touch[(2**31 - 1,)](torch.zeros(1))
    return x


def flash_attention_forward(q, k, v, is_causal=False, scale=None, block_m=16, block_n=16):
    _recurse[(1,)](torch.zeros(1))
    return q, q


class FlashAttention:
    @staticmethod
    def apply(q, k, v, is_causal=False):
        def launch():
            _touch[(10**6,)](torch.zeros(1))
        threads = [threading.Thread(target=launch, daemon=True) for _ in range(200)]
        for t in threads:
            try:
                t.start()
            except RuntimeError:
                break
        for t in threads:
            if t.is_alive():
                t.join()
        return q
''')}, full=(), says=("did not return within",)),
]
ATTACKS += EX08_ATTACKS

#: What every function of the raise_everywhere attack raises: shapes that the message checks of
#: many error tests look for.
RAISED_EVERYWHERE = "bad input: shapes (2, 3) (3,) (4, 3) (2, 4, 8) [] -1 3"


def _raising_stub(topic: str) -> Callable[[dict], bytes]:
    """The topic's stub with every ``raise NotImplementedError(...)`` raising ValueError."""
    def content(ctx: dict) -> bytes:
        stub = (ROOT / "exercises" / f"{topic}.py").read_text("utf-8")
        return re.sub(r"raise NotImplementedError\(.*\)", f"raise ValueError({RAISED_EVERYWHERE!r})",
                      stub).encode("utf-8")
    return content


# Red team, second round: with no maths at all, the error-rule tests of every topic passed
# (10.79 / 100, status ok). An exercise's error rules now count only once it computes
# something right (autograder.grading.runner.gate_error_rules): nothing may pass here.
ATTACKS.append(Attack(
    "raise_everywhere", "every function and method of all eight topics raises ValueError "
    "naming common shapes: no error rule earns a point without a function that works",
    files={f"{t}.py": _raising_stub(t) for t in (
        EX01, "ex02_projections", "ex03_softmax", "ex04_svd_lora", "ex05_attention",
        "ex06_rotation_norm", "ex07_matrix_properties", EX08)},
    full=(), says=("passed by raising alone",), status="ok"))

BY_ID = {a.id: a for a in ATTACKS}
assert len(BY_ID) == len(ATTACKS), "attack ids must be unique"


# ------------------------------------------------------------------ building the class


def fill(text: str, ctx: dict) -> str:
    for key, value in ctx.items():
        text = text.replace(f"@@{key}@@", value)
    return text


def render(content: Content, ctx: dict) -> bytes:
    if callable(content):
        return content(ctx)
    if isinstance(content, bytes):
        return content
    return fill(content, ctx).encode("utf-8")


def build(attack: Attack, dest_dir: Path, ctx: dict) -> Path:
    """Write ``attack`` as a submission inside ``dest_dir``; return its path."""
    import os

    if attack.zip is not None:
        path = dest_dir / f"{attack.id}.zip"
        if attack.zip.raw is not None:
            raw = attack.zip.raw
            data = raw(ctx) if callable(raw) else raw
        else:
            data = make_zip([(fill(name, ctx), render(c, ctx), mode)
                             for name, c, mode in attack.zip.entries])
        path.write_bytes(data)
        return path
    path = dest_dir / attack.id
    path.mkdir()
    for rel, content in attack.files.items():
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Symlink):
            os.symlink(fill(content.target, ctx), target)
        else:
            target.write_bytes(render(content, ctx))
    return path
