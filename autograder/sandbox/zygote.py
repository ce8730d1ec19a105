"""A pre-warmed process that forks workers (docs/design/measured-facts.md: ``import torch`` costs
2+ s, a fork 30 ms).

Started once per worker slot by :mod:`autograder.driver.slot`; imports numpy, torch, Triton where
it is installed, and the worker code (running no torch op, so forked children do not hang),
then obeys one-line JSON commands on its control socket: ``fork`` (the worker's socket arrives
as a passed file descriptor), ``reap``, ``killall``, ``plan`` (decode a batch's requests for the
workers to inherit) and ``exit``. It never runs student code itself.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import socket
import sys
import threading
import time

#: Triton's modules a worker would otherwise import itself: the package (about 0.35 s of CPU
#: per worker) and what the interpreter imports at its first launch (0.15 s more); measured in
#: docs/design/measured-facts.md, Triton in the sandbox.
TRITON_MODULES = ("triton", "triton.language", "triton.runtime.interpreter",
                  "triton.compiler.code_generator", "triton.experimental.gluon",
                  "triton.language.extra.libdevice")


def _preload() -> None:
    import numpy  # noqa: F401

    try:
        import torch  # noqa: F401
    except ImportError:  # the numpy topics still grade
        pass
    _preload_triton()
    from autograder.sandbox import (
        isolation,
        probes,
        worker,  # noqa: F401
    )
    from autograder.wire import codec

    try:  # libseccomp, bound once here rather than in every worker
        import pyseccomp  # noqa: F401
    except (ImportError, RuntimeError):
        pass


def _preload_triton() -> None:
    """Import Triton (topic 8) when it is installed, running nothing: no kernel, no thread.

    Optional: without triton (or with one that fails to load) every other topic grades as
    before, and a submission that imports it gets the import error itself. Triton decides
    between interpreter and compiler when a kernel is decorated, not at import, so importing
    it here is the same for both kinds of slot (``Slot.triton_interpret``).
    """
    import importlib

    for name in TRITON_MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - an optimisation only
            if name == "triton":
                return
    if os.environ.get("TRITON_INTERPRET") == "1":
        # The interpreter's per-launch and per-call re-patching of triton.language, done the
        # cheap way once for every worker (triton_fast's docstring; measured-facts.md).
        from autograder.sandbox import triton_fast

        triton_fast.install()


def _warm_up() -> None:
    """Import what torch imports lazily on its first meta-device op (``torch._check`` pulls in
    torch.fx's symbolic shapes and sympy, decompositions pull in torch._dynamo): ~1100 modules,
    3-6 s on these machines, paid by every forked worker otherwise, which made correct
    meta-device and op-count code time out under load (hostile battery: the correct
    submission lost points). Then a few single-threaded ops (:func:`_warm_ops`). Done when a
    batch's plan arrives, or else just before the second fork, where no call is being timed:
    a slot still answers its first fork at once (`course check`, and the sandbox tests that
    time a slot's first call), and every later worker starts warm.
    """
    if "torch" not in sys.modules:
        return
    try:
        import torch._dynamo  # noqa: F401
        import torch.fx.experimental.symbolic_shapes  # noqa: F401
    except Exception:  # noqa: BLE001 - an optimisation only
        pass
    _warm_ops()
    _warm_triton()


def _warm_ops() -> None:
    """Run, once, the kinds of operation the tests ask of a submission.

    A fresh worker otherwise pays each one's first-call cost (lazy imports, dispatch tables,
    LAPACK set-up): about a quarter of a correct submission's time in a batch. Only with one
    thread (the zygote's environment sets ``OMP_NUM_THREADS=1``, so no thread pool exists to be
    broken by the fork: docs/design/measured-facts.md's fork hazard), only our own code, nothing a
    worker could read
    back but the library state every worker starts from anyway.
    """
    import numpy as np

    torch = sys.modules.get("torch")
    if torch is None or torch.get_num_threads() != 1 or _threads() != 1:
        return
    # nn.Linear's initialisation draws from torch's generator: put its state back, or the
    # first worker of a slot would start from another random state than the later ones.
    rng = torch.random.get_rng_state()
    try:
        a = np.linspace(-1.0, 1.0, 36).reshape(6, 6) + np.eye(6)
        for x in (a, a.astype(np.float32)):
            np.linalg.svd(x)
            np.linalg.qr(x)
            np.linalg.eigh(x + x.T)
            np.linalg.solve(x, x[0])
            np.linalg.det(x), np.linalg.inv(x), np.linalg.matrix_rank(x), np.linalg.norm(x, axis=-1)
            np.einsum("ij,kj->ik", x, x), np.exp(x) / np.exp(x).sum(-1, keepdims=True)
            np.cos(x), np.sin(x), np.sqrt(np.abs(x)), np.log(np.abs(x) + 1), np.tanh(x)
        for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
            t = torch.from_numpy(a).to(dtype)
            t @ t.T, torch.softmax(t, -1), torch.nn.functional.layer_norm(t, (6,))
            torch.triu(t), torch.tril(t), torch.where(t > 0, t, t)
            t.masked_fill(t > 0, float("-inf"))
            torch.einsum("ij,kj->ik", t, t), t.exp(), t.sqrt(), t.rsqrt(), t.cos(), t.sin()
            torch.nn.functional.scaled_dot_product_attention(t[None], t[None], t[None])
        t = torch.from_numpy(a).float()
        torch.linalg.svd(t), torch.linalg.qr(t), torch.linalg.norm(t), torch.linalg.eigh(t + t.T)
        layer = torch.nn.Linear(6, 3)
        layer(t.requires_grad_(True)).sum().backward()
        meta = torch.nn.Linear(6, 3, device="meta")
        meta(torch.empty(2, 6, device="meta")) @ torch.empty(3, 4, device="meta")
        from autograder.wire import codec, frames

        frame = codec.encode({"t": t.detach(), "a": a, "h": t.half()})
        codec.decode(frames.unframe(frame, codec.MAX_FRAME))
    except Exception:  # noqa: BLE001 - an optimisation only
        pass
    finally:
        torch.random.set_rng_state(rng)


def _warm_triton() -> bool:
    """Launch one tiny kernel of our own through Triton's interpreter, once; True if it ran.

    An interpreted launch's first run builds what every later one reuses (the interpreter's
    patched ``triton.language``, its type tables, the AST rewriting machinery): about 70 ms,
    otherwise paid by each worker that grades topic 8, twice per submission (public and hidden
    phase); a student's own kernel then pays only its own rewriting (docs/design/measured-facts.md,
    "Triton in the sandbox"). Only where the interpreter is on (a CUDA slot would compile, which
    is not this function's business) and the process still runs one thread; the launch starts
    none, runs no student code and writes no file.
    """
    if os.environ.get("TRITON_INTERPRET") != "1" or "triton" not in sys.modules:
        return False
    torch = sys.modules.get("torch")
    if torch is None or _threads() != 1:
        return False
    try:
        from autograder.sandbox import triton_warm

        triton_warm.launch()
    except Exception:  # noqa: BLE001 - an optimisation only
        return False
    return True


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def _status(pid: int, wait_s: float) -> str:
    deadline = time.monotonic() + wait_s
    nap = 0.0002  # a killed worker is gone within a millisecond or two: look again soon
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return "gone"
        if done:
            if os.WIFSIGNALED(status):
                sig = os.WTERMSIG(status)
                return f"killed by signal {sig} ({signal.Signals(sig).name})"
            return f"exited with status {os.WEXITSTATUS(status)}"
        if time.monotonic() > deadline:
            return "still running"
        time.sleep(nap)
        nap = min(nap * 2, 0.005)


def _end(init: int) -> None:
    """SIGKILL a PID namespace's init, ending the namespace, and reap it if it goes at once
    (else :func:`_kill_strays` will)."""
    try:
        os.kill(init, signal.SIGKILL)
    except ProcessLookupError:
        return
    _reap([init], 1.0)


def _reap(pids: list[int], wait_s: float) -> None:
    """Reap the children ``pids`` (sent SIGKILL), in whatever order they go, for up to
    ``wait_s`` seconds.

    Never one blocking wait after another: a namespace's init that is killed exits only once
    every process of its namespace is reaped, and the worker in it is our child, not the
    init's, so waiting for the init first would wait for ever (isolation.PidNamespaces).
    """
    left, nap = set(pids), 0.0002
    deadline = time.monotonic() + wait_s
    while left:
        for pid in list(left):
            try:
                if os.waitpid(pid, os.WNOHANG)[0]:
                    left.discard(pid)
            except ChildProcessError:
                left.discard(pid)
        if not left or time.monotonic() > deadline:
            return
        time.sleep(nap)
        nap = min(nap * 2, 0.005)


def _children() -> list[int]:
    me = str(os.getpid())
    kids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[1].decode() == me:
            kids.append(int(pid))
    return kids


def _kill_strays() -> None:
    """Kill and reap every child: with no live worker, each one is a stray a submission left.

    We are the workers' subreaper, so a daemon that double-forked away from its worker is still
    our child (without a slot uid there is no other way to find it), and what the slot uid's
    ``kill -1`` ended is reaped here instead of lingering as a zombie.
    """
    for _ in range(100):
        kids = _children()
        if not kids:
            return
        for pid in kids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        _reap(kids, 5.0)


def _killall(uid: int) -> None:
    """Kill every process of a slot uid (strays a submission left behind)."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(os.getgid())
            os.setuid(uid)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def main() -> None:
    """Serve the slot's control socket (fd ``sys.argv[1]``) until ``exit`` or the grader goes."""
    # Ctrl-C is the grader's to handle: it closes this zygote through the socket (its workers
    # set SIGINT back to the default: worker.child_main). No KeyboardInterrupt traceback here.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    ctl = socket.socket(fileno=int(sys.argv[1]))
    _preload()
    from autograder.sandbox import host_counters, isolation, worker

    isolation.become_subreaper()
    # Read before any worker runs: every worker sees these counters as they are now.
    host_counters.PROC_SNAPSHOT.update(host_counters.proc_snapshot())
    namespaces = host_counters.PidNamespaces()
    inits: dict[int, int] = {}  # worker pid -> its PID namespace's init
    # Where the slot's memory cap is hit, the OOM killer ends a worker, never us (the workers
    # set their own score back up: worker.child_main).
    isolation.prefer_killing_me(-1000)

    ctl.sendall(b'{"ready": true}\n')
    uid, forks, warm = None, 0, False
    while True:
        try:
            msg, fds, _flags, _addr = socket.recv_fds(ctl, 1 << 16, 1)
        except OSError:  # a grader killed with replies unread resets the socket: gone too
            msg, fds = b"", []
        if not msg:  # the grader is gone: take what its submissions left with us
            if uid is not None:
                _killall(uid)
            _kill_strays()
            return
        cmd = json.loads(msg)
        if cmd["op"] == "fork":
            uid = cmd.get("uid")
            if forks == 1 and not warm:
                _warm_up()
                warm = True
            forks += 1
            init = namespaces.prepare(keep_private=(ctl.fileno(), fds[0]))
            # Forked workers then share the zygote's heap instead of copying it: a collection
            # in a worker would write to the header of every object it walks (Python's gc
            # docs, gc.freeze). Only what was made since the last fork is collected here.
            gc.collect()
            gc.freeze()
            try:
                pid = os.fork()
                if pid == 0:
                    ctl.close()
                    worker.child_main(fds[0], cmd)
                    os._exit(70)
            finally:
                if init is not None:
                    namespaces.restore()
            if init is not None:
                inits[pid] = init
            os.close(fds[0])
            reply = {"pid": pid}
        elif cmd["op"] == "reap":
            reply = {"status": _status(cmd["pid"], cmd.get("wait", 2.0))}
            if reply["status"] != "still running" and cmd["pid"] in inits:
                _end(inits.pop(cmd["pid"]))  # and with it the worker's strays
        elif cmd["op"] == "killall":
            if cmd.get("uid") is not None:
                _killall(cmd["uid"])
            _kill_strays()  # the namespaces' inits too
            inits.clear()
            reply = {"done": True}
        elif cmd["op"] == "plan":
            # A batch's plan (autograder.grading.replay): decoded once here, inherited by every worker.
            try:
                with open(cmd["path"], "rb") as f:
                    reply = {"counts": worker.predecode(f.read(), cmd["counts"])}
            except Exception as exc:  # noqa: BLE001 - the grader then sends frames instead
                reply = {"error": f"{type(exc).__name__}: {exc}"}
            if not warm:  # part of the batch's set-up, not of its first submission
                _warm_up()
                warm = True
        elif cmd["op"] == "warm":  # Slot.warm_up: the grader has other work meanwhile
            if not warm:
                _warm_up()
                warm = True
            reply = {"warm": True}
        elif cmd["op"] == "exit":
            _kill_strays()
            return
        else:
            reply = {"error": f"unknown op {cmd['op']!r}"}
        try:
            ctl.sendall(json.dumps(reply).encode() + b"\n")
        except OSError:  # the grader went (killed, or stopped by Ctrl-C) before reading it
            if uid is not None:
                _killall(uid)
            _kill_strays()
            return


if __name__ == "__main__":
    main()
    # Nothing to flush or save: skip the interpreter's teardown of torch's ~1000 modules (a
    # second or more on a busy machine), which a grader closing its slots, on Ctrl-C too,
    # would otherwise wait for.
    os._exit(0)
