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
    from autograder import worker

    ctl.sendall(b'{"ready": true}\n')
    while True:
        msg, fds, _flags, _addr = socket.recv_fds(ctl, 1 << 16, 1)
        if not msg:
            return
        cmd = json.loads(msg)
        if cmd["op"] == "fork":
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
            _killall(cmd["uid"])
            reply = {"done": True}
        elif cmd["op"] == "exit":
            return
        else:
            reply = {"error": f"unknown op {cmd['op']!r}"}
        ctl.sendall(json.dumps(reply).encode() + b"\n")


if __name__ == "__main__":
    main()
