"""A pre-warmed process that forks workers (DESIGN.md: ``import torch`` costs 2+ s, a fork 30 ms).

Started once per worker slot by :mod:`autograder.sandbox`; imports numpy, torch and the worker
code (running no torch op, so forked children do not hang), then obeys one-line JSON commands on
its control socket: ``fork`` (the worker's socket arrives as a passed file descriptor), ``reap``,
``killall`` and ``exit``. It never runs student code itself.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time


def _preload() -> None:
    import numpy  # noqa: F401

    try:
        import torch  # noqa: F401
    except ImportError:  # the numpy topics still grade
        pass
    from autograder import codec, isolation, probes, worker  # noqa: F401


def _warm_up() -> None:
    """Import what torch imports lazily on its first meta-device op (``torch._check`` pulls in
    torch.fx's symbolic shapes and sympy, decompositions pull in torch._dynamo): ~1100 modules,
    3-6 s on these machines, paid by every forked worker otherwise, which made correct
    meta-device and op-count code time out under load (hostile battery: the correct
    submission lost points). Imports only, no op: no thread pool starts (DESIGN.md's fork
    hazard). Done just before the second fork, where no call is being timed: a slot still
    answers its first fork at once (`course check`, and the sandbox tests that time a slot's
    first call), and every later worker starts warm.
    """
    if "torch" not in sys.modules:
        return
    try:
        import torch._dynamo  # noqa: F401
        import torch.fx.experimental.symbolic_shapes  # noqa: F401
    except Exception:  # noqa: BLE001 - an optimisation only
        pass


def _status(pid: int, wait_s: float) -> str:
    deadline = time.monotonic() + wait_s
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
        time.sleep(0.005)


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
        for pid in kids:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


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
    ctl = socket.socket(fileno=int(sys.argv[1]))
    _preload()
    from autograder import isolation, worker

    isolation.become_subreaper()

    ctl.sendall(b'{"ready": true}\n')
    uid, forks = None, 0
    while True:
        msg, fds, _flags, _addr = socket.recv_fds(ctl, 1 << 16, 1)
        if not msg:  # the grader is gone: take what its submissions left with us
            if uid is not None:
                _killall(uid)
            _kill_strays()
            return
        cmd = json.loads(msg)
        if cmd["op"] == "fork":
            uid = cmd.get("uid")
            if forks == 1:
                _warm_up()
            forks += 1
            pid = os.fork()
            if pid == 0:
                ctl.close()
                worker.child_main(fds[0], cmd)
                os._exit(70)
            os.close(fds[0])
            reply = {"pid": pid}
        elif cmd["op"] == "reap":
            reply = {"status": _status(cmd["pid"], cmd.get("wait", 2.0))}
        elif cmd["op"] == "killall":
            if cmd.get("uid") is not None:
                _killall(cmd["uid"])
            _kill_strays()
            reply = {"done": True}
        elif cmd["op"] == "exit":
            _kill_strays()
            return
        else:
            reply = {"error": f"unknown op {cmd['op']!r}"}
        ctl.sendall(json.dumps(reply).encode() + b"\n")


if __name__ == "__main__":
    main()
