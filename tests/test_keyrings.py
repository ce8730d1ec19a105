"""Kernel keyrings are per uid, not per namespace: the worker refuses them.

Red team: a submission stored its solution with ``add_key`` in the slot uid's user keyring, and
the next submission graded on that slot read it back with ``keyctl`` and scored with it. The
worker's seccomp filter (:func:`autograder.sandbox.isolation.block_keyrings`) now refuses ``add_key``,
``request_key`` and ``keyctl`` with EPERM, as root or not.
"""

from __future__ import annotations

import errno
import json
import os
import re
import struct
import tempfile

import pytest

from autograder.sandbox import isolation
from autograder.limits import Limits
from autograder.sandbox.session import Session
from autograder.sandbox.slot import Slot

pytestmark = pytest.mark.skipif(os.uname().machine not in ("x86_64", "aarch64"),
                                reason="the attack below knows x86_64's and aarch64's numbers")

#: add_key and keyctl's numbers, as a submission would find them.
CALLS = '''
import ctypes, os

_libc = ctypes.CDLL(None, use_errno=True)
_NR = {"x86_64": (248, 250), "aarch64": (217, 219)}[os.uname().machine]
_USER_KEYRING = ctypes.c_long(-4)  # KEY_SPEC_USER_KEYRING

def add_key(name, payload):
    ctypes.set_errno(0)
    data = payload.encode()
    r = _libc.syscall(ctypes.c_long(_NR[0]), b"user", name.encode(), data,
                      ctypes.c_size_t(len(data)), _USER_KEYRING)
    return [r, ctypes.get_errno()]

def search(name):
    ctypes.set_errno(0)
    r = _libc.syscall(ctypes.c_long(_NR[1]), ctypes.c_long(10), _USER_KEYRING,  # KEYCTL_SEARCH
                      b"user", name.encode(), ctypes.c_long(0))
    return [r, ctypes.get_errno()]
'''


def _in_child(filtered: bool) -> list[int]:
    """add_key then keyctl(SEARCH) in a forked child, with or without the filter."""
    namespace: dict = {}
    exec(CALLS, namespace)  # noqa: S102 - our own test code, run in a child
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            ok = isolation.block_keyrings() if filtered else True
            name = f"course-test-{os.getpid()}"
            added = namespace["add_key"](name, "payload")
            found = namespace["search"](name)
            getpid_works = int(os.getpid() > 0)
            os.write(w, json.dumps([int(ok), *added, *found, getpid_works]).encode())
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 4096):
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return json.loads(data)


def test_the_filter_refuses_add_key_and_keyctl_and_nothing_else():
    ok, added, add_errno, found, search_errno, getpid_works = _in_child(filtered=True)
    assert ok == 1, "the kernel refused the seccomp filter"
    assert (added, add_errno) == (-1, errno.EPERM)
    assert (found, search_errno) == (-1, errno.EPERM)
    assert getpid_works == 1


def test_without_the_filter_keyrings_work_here():
    """What the filter takes away (else the test above could pass for another reason)."""
    _ok, added, add_errno, found, _search_errno, _ = _in_child(filtered=False)
    if added < 0:
        pytest.skip(f"keyrings are refused here anyway (errno {add_errno})")
    assert found == added


def test_a_worker_cannot_use_the_keyrings():
    slot = Slot(0, Limits(call_seconds=30))
    session = Session(slot, {"ex01_vectors": CALLS.encode()})
    try:
        session.load("ex01_vectors")
        assert session.call("ex01_vectors", "add_key", ("rt:ex01_vectors", "def dot(): ...")) \
            == [-1, errno.EPERM]
        assert session.call("ex01_vectors", "search", ("rt:ex01_vectors",)) == [-1, errno.EPERM]
    finally:
        session.close()
        slot.close()


def _compiled() -> list[tuple[int, int, int, int]]:
    """The classic-BPF program libseccomp compiled, as (code, jt, jf, k) instructions."""
    with tempfile.TemporaryFile("w+b") as f:
        isolation.keyring_filter().export_bpf(f)
        f.seek(0)
        raw = f.read()
    return [struct.unpack("<HBBI", raw[i:i + 8]) for i in range(0, len(raw), 8)]


def test_the_program_checks_the_architecture_first():
    """libseccomp's program loads the call's architecture before anything else and refuses
    any other ABI with EPERM (an i386 ``int 0x80`` from a 64-bit process has other numbers)."""
    prog = _compiled()
    assert prog[0] == (0x20, 0, 0, 4)  # load seccomp_data.arch
    assert prog[1][0] == 0x15  # jeq: this machine's AUDIT_ARCH, else ...
    assert prog[-1] == (0x06, 0, 0, 0x00050001)  # ... SECCOMP_RET_ERRNO | EPERM
    if os.uname().machine == "x86_64":
        # x32 shares x86_64's AUDIT_ARCH; its calls have bit 30 set: refused too.
        assert any(ins[0] == 0x35 and ins[3] == 0x40000000 for ins in prog)


def test_the_filter_names_exactly_the_keyring_calls():
    with tempfile.TemporaryFile("w+") as f:
        isolation.keyring_filter().export_pfc(f)
        f.seek(0)
        pfc = f.read()
    named = set(re.findall(r'filter for syscall "(\w+)"', pfc))
    assert named == {"add_key", "request_key", "keyctl"}
