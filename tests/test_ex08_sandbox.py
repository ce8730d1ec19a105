"""Topic 8's Triton kernels inside the sandbox: interpreted on CPU tensors, within the default
limits, with Triton's folders private to each worker, on both isolation paths.

The submissions here are this file's own tiny Triton programs (a row softmax and a 64 × 64
attention-like kernel), graded through the real sandbox as ``tests/test_sandbox.py`` does.
Skipped where triton is not installed: the other topics do not need it
(``test_without_triton_the_numpy_topics_still_grade`` shows that).
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import os
import pwd
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from autograder.limits import Limits
from autograder.driver import allowlist
from autograder.sandbox import probes, zygote
from autograder.driver import slot as slot_module
from autograder.wire.codec import TensorData
from autograder.driver.errors import StudentException
from autograder.sandbox.interpreter import TRITON_FOLDERS
from autograder.driver.session import Session
from autograder.driver.slot import Slot
from tests.helpers import grade_sources, solution_source

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    importlib.util.find_spec("triton") is None,
    reason="triton is not installed (topic 8 needs it; pip install triton==3.9.0)")]

TOPIC = "ex08_flash_attention"

#: A Triton submission: kernels, the functions that launch them, and probes of the worker.
KERNELS = r'''
import os
import resource
import sys
import time

import torch
import triton
import triton.language as tl


@triton.jit
def _row_softmax(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=float("-inf"))
    e = tl.exp(x - tl.max(x, 0))
    tl.store(y_ptr + row * stride + cols, e / tl.sum(e, 0), mask=cols < n_cols)


def softmax_rows(x):
    y = torch.empty_like(x)
    block = triton.next_power_of_2(x.shape[1])
    _row_softmax[(x.shape[0],)](x, y, x.shape[1], x.stride(0), BLOCK=block)
    return y


def softmax_twice(x):
    return softmax_rows(softmax_rows(x))


def torch_softmax(x):
    return torch.softmax(x, -1)


@triton.jit
def _nothing(x_ptr):
    pass


def torch_softmax_beside_an_empty_kernel(x):
    """The threat model's cheat: PyTorch's maths, and a launch that only looks like work."""
    _nothing[(x.shape[0],)](x)
    return torch.softmax(x, -1)


@triton.jit
def _load_and_discard(x_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.load(x_ptr + i, mask=i < n)


def torch_softmax_beside_a_loading_kernel(x):
    """The next cheat: a kernel that reads every element and throws it away, beside PyTorch's
    maths (whatever shape of maths: a matmul and an exponential as well)."""
    _load_and_discard[(triton.cdiv(x.numel(), 16),)](x, x.numel(), BLOCK=16)
    e = torch.exp(x - x.amax(-1, keepdim=True))
    return e / (e @ torch.ones(x.shape[-1], 1))


def launcher_chores(x):
    """What a natural launcher does around its kernel, none of it the maths: casts, layouts,
    padding a head to a power of two, a scale, dead rows found and zeroed, a log of a sum."""
    y = torch.nn.functional.pad(x.float(), (0, 3)).transpose(0, 1).contiguous().t()
    dead = torch.isneginf(x).all(dim=-1, keepdim=True)
    y = torch.where(dead, torch.zeros_like(x), x * 0.5).to(torch.float16).float()
    return y + torch.log(y.abs().sum(-1, keepdim=True) + 1.0) - y.amax(-1, keepdim=True)


@triton.jit
def _attention(q_ptr, k_ptr, v_ptr, o_ptr, L, S, scale, E: tl.constexpr,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    bh = tl.program_id(1)
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    e = tl.arange(0, E)
    q = tl.load(q_ptr + bh * L * E + rows[:, None] * E + e[None, :], mask=rows[:, None] < L,
                other=0.0)
    m = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    s_sum = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, E), tl.float32)
    for start in range(0, S, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        kv = bh * S * E + cols[:, None] * E + e[None, :]
        k = tl.load(k_ptr + kv, mask=cols[:, None] < S, other=0.0)
        v = tl.load(v_ptr + kv, mask=cols[:, None] < S, other=0.0)
        s = tl.where(cols[None, :] < S, tl.dot(q, tl.trans(k)) * scale, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m - m_new)
        s_sum = s_sum * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p, v)
        m = m_new
    tl.store(o_ptr + bh * L * E + rows[:, None] * E + e[None, :], acc / s_sum[:, None],
             mask=rows[:, None] < L)


def attention(q, k, v, block=16):
    BH, L, E = q.shape
    o = torch.empty_like(q)
    grid = (triton.cdiv(L, block), BH)
    _attention[grid](q, k, v, o, L, k.shape[1], E ** -0.5, E, block, block)
    return o


def _status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return -1


def attention_cost(q, k, v):
    """The kernel's output, with what running it cost this worker."""
    t0 = time.process_time()
    o = attention(q, k, v)
    return {"out": o, "cpu_seconds": time.process_time() - t0,
            "vm_peak": _status("VmPeak"), "vm_hwm": _status("VmHWM"),
            "threads": len(os.listdir("/proc/self/task")),
            "address_space_limit": resource.getrlimit(resource.RLIMIT_AS)[0]}


def triton_dirs():
    return {"HOME": os.environ["HOME"], "home": triton.knobs.cache.home_dir,
            "cache": triton.knobs.cache.dir, "dump": triton.knobs.cache.dump_dir,
            "override": triton.knobs.cache.override_dir}


def cache_put(key, text):
    """Write a file through Triton's own cache (where a compiled kernel would go)."""
    from triton.runtime.cache import get_cache_manager
    try:
        return get_cache_manager(key).put(text, "planted.txt", binary=False)
    except OSError as exc:
        return type(exc).__name__


def cache_get(key):
    from triton.runtime.cache import get_cache_manager
    return get_cache_manager(key).get_file("planted.txt")


def libcuda_lookup():
    """Triton's own search for libcuda (``ldconfig -p``, on a GPU)."""
    from triton.backends.nvidia import driver
    try:
        return ["found", driver.libcuda_dirs()]
    except Exception as exc:
        return ["not found", type(exc).__name__]


def active_driver():
    try:
        return type(triton.runtime.driver.active).__name__
    except Exception as exc:
        return type(exc).__name__
'''

#: A module that imports no Triton: what the zygote preloaded, seen from a worker.
PLAIN = r'''
import os
import sys

import numpy as np


def seen(names):
    return {"interpret": os.environ.get("TRITON_INTERPRET"),
            "preloaded": [n for n in names if n in sys.modules]}


def norm(x):
    return float(np.linalg.norm(np.asarray(x)))
'''


@pytest.fixture(scope="module")
def session(slot):
    s = Session(slot, {TOPIC: KERNELS.encode()})
    yield s
    s.close()


def call(s: Session, name: str, *args, module: str = TOPIC):
    return s.call(module, name, args)


def _qkv(bh: int = 4, L: int = 64, S: int = 64, E: int = 32) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(8)
    return tuple(torch.randn(bh, n, E, generator=g) for n in (L, S, S))


def _reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    q, k, v = (t.double() for t in (q, k, v))
    return torch.softmax(q @ k.transpose(-1, -2) * q.shape[-1] ** -0.5, -1) @ v


def tensor(got: TensorData, dtype: str = "float32", shape: tuple[int, ...] | None = None
           ) -> torch.Tensor:
    """A returned tensor's values, once its tag is the one expected."""
    assert isinstance(got, TensorData), got
    assert got.dtype == dtype and got.device == "cpu", got.describe()
    assert shape is None or got.shape == shape, got.describe()
    return torch.from_numpy(got.values)


# ------------------------------------------------------------------ interpreter and preload


def test_workers_interpret_triton_and_the_zygote_preloaded_it(slot):
    s = Session(slot, {"ex01_vectors": PLAIN.encode()})
    try:
        got = call(s, "seen", list(zygote.TRITON_MODULES), module="ex01_vectors")
    finally:
        s.close()
    assert got == {"interpret": "1", "preloaded": list(zygote.TRITON_MODULES)}


def test_a_triton_kernel_runs_on_cpu_tensors_in_the_worker(session):
    x = torch.randn(5, 37, generator=torch.Generator().manual_seed(1))
    got = tensor(call(session, "softmax_rows", x), shape=(5, 37))
    torch.testing.assert_close(got, torch.softmax(x, -1), rtol=1e-5, atol=1e-6)


def test_a_64x64_attention_kernel_fits_the_default_limits(session):
    """B·H = 4, L = S = 64, E = 32, 16 × 16 blocks: 16 programs of 4 key blocks each, under
    the worker's real 4 GiB address-space cap (numbers: docs/design/measured-facts.md)."""
    q, k, v = _qkv()
    got = call(session, "attention_cost", q, k, v)
    torch.testing.assert_close(tensor(got["out"]).double(), _reference(q, k, v),
                               rtol=1e-4, atol=1e-5)
    if not os.path.exists("/dev/nvidiactl"):  # with a GPU the cap is RLIMIT_DATA instead
        assert got["address_space_limit"] == Limits().address_space
    assert 0 < got["vm_peak"] < Limits().address_space
    assert got["threads"] <= 2, got  # one thread measured: the interpreter starts none
    print(f"\n64x64 attention in a worker: {got['cpu_seconds']:.2f} s CPU, VmPeak "
          f"{got['vm_peak'] / 2**20:.0f} MiB, VmHWM {got['vm_hwm'] / 2**20:.0f} MiB, "
          f"{got['threads']} thread(s)")


def test_the_interpreter_runs_under_a_small_process_cap():
    """Four processes and threads in all for the worker's uid (the default is 64)."""
    with Slot(3, Limits(processes=4)) as small:
        s = Session(small, {TOPIC: KERNELS.encode()})
        try:
            q, k, v = _qkv(bh=1, L=32, S=32, E=16)
            got = call(s, "attention_cost", q, k, v)
        finally:
            s.close()
    torch.testing.assert_close(tensor(got["out"]).double(), _reference(q, k, v),
                               rtol=1e-4, atol=1e-5)


def test_a_failed_libcuda_lookup_is_harmless(session):
    """Triton's GPU driver looks for libcuda with ``/sbin/ldconfig -p`` (bound in the
    allow-list view); off a GPU the lookup fails inside the student's call, and so does asking
    for the active driver, and the worker goes on."""
    found, what = call(session, "libcuda_lookup")
    if not os.path.exists("/dev/nvidiactl"):
        assert found == "not found", what
    assert isinstance(call(session, "active_driver"), str)
    x = torch.ones(2, 3)
    got = tensor(call(session, "softmax_rows", x))
    torch.testing.assert_close(got, torch.full((2, 3), 1 / 3))


# ------------------------------------------------------------------ the launch-counting probe


def test_the_probe_counts_kernel_launches(session):
    x = torch.randn(3, 8, generator=torch.Generator().manual_seed(2))
    one = session.call(TOPIC, "triton_launches", (TOPIC, "softmax_rows", x), op="probe")
    assert one["launches"] == 1
    assert one["loaded"] == 24  # each of the 3 rows' 8 entries once, by one program per row
    torch.testing.assert_close(tensor(one["result"]), torch.softmax(x, -1), rtol=1e-5, atol=1e-6)
    two = session.call(TOPIC, "triton_launches", (TOPIC, "softmax_twice", x), op="probe")
    assert two["launches"] == 2 and two["loaded"] == 48
    q, k, v = _qkv(bh=2, L=16, S=48, E=8)
    attn = session.call(TOPIC, "triton_launches", (TOPIC, "attention", q, k, v), {"block": 16},
                        op="probe")
    assert attn["launches"] == 1  # one launch of a grid of programs
    # Two programs (one per head), each loading its 16 queries and all 48 keys and values.
    assert attn["loaded"] == q.numel() + k.numel() + v.numel()


def test_the_probe_counts_no_load_for_pytorch_beside_an_empty_kernel(session):
    """The cheat the load count is for: a launch, but no element of the input read (the test
    fails if the probe counts launches only, as it once did)."""
    x = torch.randn(3, 8, generator=torch.Generator().manual_seed(5))
    got = session.call(TOPIC, "triton_launches", (TOPIC, "torch_softmax_beside_an_empty_kernel",
                                                  x), op="probe")
    assert got["launches"] == 1 and got["loaded"] == 0
    torch.testing.assert_close(tensor(got["result"]), torch.softmax(x, -1))
    real = session.call(TOPIC, "triton_launches", (TOPIC, "softmax_rows", x), op="probe")
    assert real["launches"] == 1 and real["loaded"] == x.numel()  # what tells them apart


def test_the_probe_counts_pytorch_maths_beside_a_kernel_that_loads_everything(session):
    """The cheat the maths count is for: launches and loads enough, but PyTorch computes the
    answer (the test fails if the probe counts launches and loads only, as it once did); the
    real kernel's launcher dispatches no maths at all."""
    x = torch.randn(3, 8, generator=torch.Generator().manual_seed(6))
    got = session.call(TOPIC, "triton_launches", (TOPIC, "torch_softmax_beside_a_loading_kernel",
                                                  x), op="probe")
    assert got["launches"] == 1 and got["loaded"] == x.numel()
    assert got["torch_maths"] == 2  # the exponential and the matrix product
    torch.testing.assert_close(tensor(got["result"]), torch.softmax(x, -1))
    real = session.call(TOPIC, "triton_launches", (TOPIC, "softmax_rows", x), op="probe")
    assert real["torch_maths"] == 0  # what tells them apart
    q, k, v = _qkv(bh=2, L=16, S=48, E=8)
    attn = session.call(TOPIC, "triton_launches", (TOPIC, "attention", q, k, v), {"block": 16},
                        op="probe")
    assert attn["torch_maths"] == 0
    pure = session.call(TOPIC, "triton_launches", (TOPIC, "torch_softmax", x), op="probe")
    assert pure["torch_maths"] == 1  # torch.softmax is one ATen op


def test_the_probe_counts_no_maths_in_a_launchers_chores(session):
    """Fairness of the maths count: casts, layouts, padding, scaling, masking dead rows, a
    log and a max (what correct launchers do beside their kernels) count as no maths."""
    x = torch.randn(3, 8, generator=torch.Generator().manual_seed(7))
    got = session.call(TOPIC, "triton_launches", (TOPIC, "launcher_chores", x), op="probe")
    assert got["launches"] == 0 and got["torch_maths"] == 0


def test_the_probe_counts_no_launch_for_pure_torch_and_restores_triton(session):
    x = torch.randn(3, 8, generator=torch.Generator().manual_seed(3))
    got = session.call(TOPIC, "triton_launches", (TOPIC, "torch_softmax", x), op="probe")
    assert got["launches"] == 0 and got["loaded"] is None  # no interpreted kernel ran
    torch.testing.assert_close(tensor(got["result"]), torch.softmax(x, -1))
    # Put back afterwards: a kernel launched outside the probe still runs, and is not counted.
    torch.testing.assert_close(tensor(call(session, "softmax_rows", x)), torch.softmax(x, -1))
    again = session.call(TOPIC, "triton_launches", (TOPIC, "torch_softmax", x), op="probe")
    assert again["launches"] == 0 and again["loaded"] is None


def test_the_probe_puts_triton_back_when_the_call_raises(session):
    with pytest.raises(StudentException):
        session.call(TOPIC, "triton_launches", (TOPIC, "softmax_rows", "not a tensor"),
                     op="probe")
    x = torch.randn(2, 4, generator=torch.Generator().manual_seed(4))
    got = session.call(TOPIC, "triton_launches", (TOPIC, "softmax_rows", x), op="probe")
    assert got["launches"] == 1  # one wrapper, not two stacked: the first was removed
    assert got["loaded"] == 8


def test_the_probe_counts_zero_where_triton_is_missing(monkeypatch):
    """In-process (the probe is plain code): with no triton to import, nothing is patched."""
    monkeypatch.setattr(probes, "TRITON_LAUNCHERS", (("no_such_triton.jit", "JITFunction"),))
    monkeypatch.setattr(probes, "TRITON_LOADS", ("no_such_triton.interpreter",
                                                 "InterpreterBuilder", "create_masked_load"))
    got = probes.triton_launches(None, "math", "sqrt", 4.0)
    assert got == {"result": 2.0, "launches": 0, "loaded": None, "torch_maths": 0}


# ------------------------------------------------------------------ Triton's folders


def _b32(key: str) -> str:
    return base64.b32encode(bytes.fromhex(key)).decode().rstrip("=")


@pytest.fixture(params=["bubblewrap", "fallback"])
def isolation_path(request, monkeypatch):
    """Run a test once in bubblewrap's allow-list view (where it works) and once on the
    fallback path without it (as tests/test_isolation.py forces it)."""
    if request.param == "bubblewrap" and not allowlist.usable():
        pytest.skip("bubblewrap is not usable here: " + allowlist.status())
    if request.param == "fallback":
        monkeypatch.setattr(allowlist, "usable", lambda: False)
    return request.param


def test_triton_writes_only_into_the_workers_private_folder(isolation_path):
    """Triton's home, cache, dump and override folders lie in the worker's own scratch folder;
    a file put in Triton's cache lands there, nowhere on the host (not the grader's
    ``~/.triton``, not ``/root/.triton``, not the slot user's home), and the next submission on
    the same slot does not find it. A kernel also runs on this path."""
    key = hashlib.sha256(secrets.token_bytes(16)).hexdigest()
    with Slot(4, Limits(call_seconds=60)) as slot:
        first = Session(slot, {TOPIC: KERNELS.encode()})
        try:
            scratch = os.path.join(first.workdir, "tmp")
            dirs = call(first, "triton_dirs")
            assert dirs["HOME"] == scratch
            assert dirs["home"] == scratch
            for knob, variable in (("cache", "TRITON_CACHE_DIR"), ("dump", "TRITON_DUMP_DIR"),
                                   ("override", "TRITON_OVERRIDE_DIR")):
                assert dirs[knob] == os.path.join(scratch, TRITON_FOLDERS[variable])
            planted = call(first, "cache_put", key, "from the first submission")
            assert isinstance(planted, str) and planted.startswith(scratch + "/"), planted
            x = torch.randn(2, 5, generator=torch.Generator().manual_seed(5))
            got = tensor(call(first, "softmax_rows", x))
            torch.testing.assert_close(got, torch.softmax(x, -1))
        finally:
            first.close()
        assert not os.path.exists(planted)  # gone with the first submission's folder
        homes = {os.path.expanduser("~"), "/root"}
        if slot.uid is not None:
            homes.add(pwd.getpwuid(slot.uid).pw_dir)
        for home in homes:
            assert not Path(home, ".triton", "cache", _b32(key)).exists(), home
        second = Session(slot, {TOPIC: KERNELS.encode()})
        try:
            assert call(second, "cache_get", key) is None
            assert call(second, "triton_dirs")["cache"] != dirs["cache"]
        finally:
            second.close()


# ------------------------------------------------------------------ the CPU, shared between slots


#: A submission whose child leaves for a session of its own, as each of a CPU hog's sixty
#: spinning children did (red team, topic 8: every new session got a CPU share of its own).
SETSID_CHILD = r'''
import os
import time


def setsid_child():
    """The pid of a child that has called setsid() and now waits to be killed (it says so
    with its session id: a worker may not make a pipe, sandbox/seccomp_filter.py)."""
    pid = os.fork()
    if pid == 0:
        os.setsid()
        time.sleep(120)
        os._exit(0)
    deadline = time.monotonic() + 30
    while os.getsid(pid) != pid and time.monotonic() < deadline:
        time.sleep(0.01)
    return pid
'''


def _host_has_cpu_controller() -> bool:
    try:
        with open("/sys/fs/cgroup/cgroup.controllers") as f:
            if "cpu" in f.read().split():
                return True
    except OSError:
        pass
    return os.path.isfile("/sys/fs/cgroup/cpu/cpu.shares")


def _cpu_group(pid: int) -> str | None:
    """The cgroup that weighs ``pid``'s CPU time, from the host's ``/proc/<pid>/cgroup``: the
    v1 line of the cpu controller, else the v2 group when the cpu controller is on there."""
    with open(f"/proc/{pid}/cgroup") as f:
        lines = [line.rstrip("\n").split(":", 2) for line in f]
    for _, controllers, path in lines:
        if "cpu" in controllers.split(","):
            return path
    for _, controllers, path in lines:
        if controllers == "":
            try:
                with open(f"/sys/fs/cgroup{path}/cgroup.controllers") as f:
                    return path if "cpu" in f.read().split() else None
            except OSError:
                return None
    return None


def _host_pid(parent: int, pid: int) -> int:
    """The host's PID of ``parent``'s child that is ``pid`` in its own PID namespace (a
    worker's: autograder.sandbox.host_counters.PidNamespaces), from each child's ``NSpid``."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                fields = dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
        except OSError:
            continue
        if fields.get("PPid") == str(parent) and fields.get("NSpid", "").split()[-1:] == [str(pid)]:
            return int(entry)
    raise LookupError(f"no child {pid} of {parent}")


@pytest.mark.skipif(os.geteuid() != 0 or not _host_has_cpu_controller(),
                    reason="slot control groups need root and the kernel's cpu controller")
def test_a_workers_children_share_the_slots_one_cpu_weight(slot):
    """A child that calls setsid() stays in its slot's cpu group, so sixty of them share one
    slot's weight against the other slot's. Without it, a CPU hog graded beside a correct
    topic-8 submission (the slowest topic: interpreted kernels) made it spend its 120 s budget
    and lose 8.5 of 14 points (docs/design/threat-model.md, Limits)."""
    assert slot.cgroup is not None
    s = Session(slot, {TOPIC: SETSID_CHILD.encode()})
    try:
        child = call(s, "setsid_child")
        child = _host_pid(s.pid, child)
        assert os.getsid(child) == child  # it did leave the worker's session
        assert _cpu_group(child) == "/" + slot.cgroup.name
    finally:
        s.close()


# ------------------------------------------------------------------ without triton, and on a GPU


def test_without_triton_the_numpy_topics_still_grade(monkeypatch):
    """A zygote whose ``import triton`` fails (a stand-in package that raises ImportError,
    first on its path) starts, preloads nothing of Triton, and grades topic 1 in full."""
    real_env = slot_module._clean_env
    with Slot(5) as slot:
        fake = Path(slot.tmp_root, "no-triton", "triton")
        fake.mkdir(parents=True)
        (fake / "__init__.py").write_text("raise ImportError('triton is not installed here')\n")
        for p in (fake.parent, fake):
            os.chmod(p, 0o755)
        os.chmod(fake / "__init__.py", 0o644)

        def env_without_triton(triton_interpret: bool = True) -> dict[str, str]:
            env = real_env(triton_interpret)
            return {**env, "PYTHONPATH": f"{fake.parent}{os.pathsep}{env['PYTHONPATH']}"}

        monkeypatch.setattr(slot_module, "_clean_env", env_without_triton)
        s = Session(slot, {"ex01_vectors": PLAIN.encode()})
        try:
            assert call(s, "seen", list(zygote.TRITON_MODULES),
                        module="ex01_vectors")["preloaded"] == []
            assert call(s, "norm", [3.0, 4.0], module="ex01_vectors") == 5.0
        finally:
            s.close()
        results = grade_sources(slot, {"ex01_vectors": solution_source("ex01_vectors")},
                                hidden=False)
    failed = [n for n, r in results.items() if not r.passed]
    assert results and not failed, failed


def test_a_compiling_slot_leaves_the_interpreter_off():
    """``Slot(triton_interpret=False)``, for CUDA tensors on a GPU (threat model, Triton
    kernels): its workers decorate compiled kernels, so a CPU tensor is refused by Triton
    itself here instead of being interpreted."""
    with Slot(6, triton_interpret=False) as compiled:
        s = Session(compiled, {"ex01_vectors": PLAIN.encode(), TOPIC: KERNELS.encode()})
        try:
            seen = call(s, "seen", ["triton"], module="ex01_vectors")
            assert seen == {"interpret": None, "preloaded": ["triton"]}
            with pytest.raises(StudentException):  # no GPU driver, or a CPU tensor on a GPU
                call(s, "softmax_rows", torch.ones(2, 3))
        finally:
            s.close()


WARM_TRITON = r'''
import json, os, sys
import torch
torch.set_num_threads(1)
import triton  # noqa: F401  (the zygote's _preload_triton)
from autograder.sandbox import zygote
ran = zygote._warm_triton()
print(json.dumps({"ran": ran, "threads": zygote._threads()}))
'''


@pytest.mark.parametrize("interpret", [True, False], ids=["interpreter", "compiler"])
def test_the_zygote_warms_triton_only_where_it_interprets(interpret):
    """``zygote._warm_triton`` launches its own tiny kernel through the interpreter (a worker's
    first interpreted launch then skips ~60 ms of one-time set-up, twice per topic-8
    submission) and leaves the process with one thread, so forking stays safe; it launches
    nothing where kernels would be compiled. Without this test a Triton upgrade that breaks
    the warm-up kernel would go unnoticed: the warm-up swallows its errors."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update({"OMP_NUM_THREADS": "1", "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    proc = subprocess.run([sys.executable, "-c", WARM_TRITON], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got == {"ran": interpret, "threads": 1}
