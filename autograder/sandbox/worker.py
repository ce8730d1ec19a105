"""The worker: the only place where student code runs (docs/design/grading-contract.md).

This module is imported by the zygote before it forks; ``child_main`` runs in the forked child:
it drops privileges and resources, then serves requests from the trusted grader over one Unix
socket. Everything it sends back goes through :mod:`autograder.wire.codec`, so the grader only ever
sees plain data. Nothing in here decides a grade.
"""

from __future__ import annotations

import importlib
import os
import resource
import signal
import socket
import stat
import struct
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Any

from autograder.limits import Limits
from autograder.sandbox import interpreter, isolation, probes, seccomp_filter
from autograder.sandbox.tracebacks import (
    describe_exception,
    exception_frames,
    warnings_at_submission,
)
from autograder.wire import codec, frames


class Server:
    """Serves requests inside the worker. Runs student code; holds its objects by handle."""

    def __init__(self, sock: socket.socket, sub_dir: str) -> None:
        self.sock = sock
        self.sub_dir = sub_dir
        self.objects: dict[int, Any] = {}
        #: Seconds spent dispatching requests (student code, mostly): a statistic for the
        #: throughput benchmark, read back with the ``busy`` op. Never part of a verdict.
        self.busy = 0.0
        self._exceptions: dict[tuple, bytes] = {}

    # -- values crossing in: tensors are rebuilt with torch, handles looked up
    def _tensor(self, data: Any, tag: dict) -> Any:
        import torch

        dtype = getattr(torch, tag["dtype"])
        if tag["device"] == "meta" or data is None:
            t = torch.empty(tuple(tag["shape"]), dtype=dtype, device=tag["device"])
        else:
            t = torch.from_numpy(data.copy()).to(dtype=dtype, device=tag["device"])
        return t.requires_grad_(bool(tag.get("requires_grad")))

    def _lookup(self, hid: Any) -> Any:
        key = int(hid["id"] if isinstance(hid, dict) else hid)
        if key not in self.objects:
            raise LookupError(f"the worker holds no object number {key}")
        return self.objects[key]

    def _keep(self, obj: Any) -> dict:
        hid = len(self.objects) + 1
        self.objects[hid] = obj
        t = type(obj)
        return {"__handle__": {"id": hid, "type": f"{t.__module__}.{t.__qualname__}"}}

    def respond(self, value: Any, keep: bool = False) -> None:
        """Send ``{"ok": value}`` (``keep``: a handle to it); too large or unencodable values
        are answered with a marker the grader reports (``__too_large__``, ``Unsupported``)."""
        if keep:
            frame = _raw_frame({"__dict__": {"ok": self._keep(value)}})  # a dict travels tagged
        else:
            try:
                frame = codec.encode({"ok": value})
            except codec.FrameTooLarge as exc:  # refused before copying it
                frame = codec.encode({"ok": {"__too_large__": exc.args[0]}})
            except Exception as exc:  # a value the codec could not take apart
                frame = codec.encode({"ok": codec.Unsupported(type=f"unencodable ({exc})")})
            if len(frame) > codec.MAX_FRAME:
                frame = codec.encode({"ok": {"__too_large__": len(frame)}})
        self.sock.sendall(frame)

    def serve(self) -> None:
        """Answer requests until the grader closes the socket (then exit at once)."""
        while True:
            try:
                body = frames.read_frame(self.sock, codec.MAX_FRAME)
            except EOFError:
                os._exit(0)
            # Decoding is inside handle's try: a pipelined request may name an object this
            # submission never made (its constructor raised): an error reply, not a dead worker.
            self.handle(lambda body=body: codec.decode(body, tensors=self._tensor,
                                                       handles=self._lookup))

    def handle(self, request: Any) -> None:
        """Answer one request (``request()`` builds it) with exactly one reply frame."""
        keep = False
        try:
            req = request()
            if req.get("op") == "plan":
                self.run_plan(req["topic"])
                return
            keep = bool(req.get("keep"))
            t0 = time.perf_counter()
            try:
                value = self.dispatch(req)
            finally:
                self.busy += time.perf_counter() - t0
        except BaseException as exc:  # noqa: BLE001 - sys.exit in student code is a result too
            self.sock.sendall(self._exception_frame(exc))
            return
        self.respond(value, keep=keep)

    def _exception_frame(self, exc: BaseException) -> bytes:
        """The reply for an exception, made once per distinct exception and place.

        A stub raises the same NotImplementedError from the same line thousands of times per
        submission; describing it (its traceback's source lines, the encoding) was most of
        the worker's time then.
        """
        try:
            message = str(exc)
        except Exception:  # noqa: BLE001 - describe_exception says so in the reply
            message = None
        where = tuple(exception_frames(exc))
        key = (type(exc), message, where)
        frame = self._exceptions.get(key) if message is not None else None
        if frame is None:
            frame = codec.encode({"exc": describe_exception(exc, self.sub_dir)})
            if message is not None and len(self._exceptions) < 1024:
                self._exceptions[key] = frame
        return frame

    def run_plan(self, topic: str) -> None:
        """Answer a topic's recorded requests, decoded by the zygote before the fork.

        One reply per request, exactly as if each had come as a frame (autograder.grading.replay); each
        request is answered once (a second ``plan`` of the topic answers nothing: the grader
        never sends one).
        """
        for pre, refers in PLANNED.pop(topic, ()):
            # Used once, so no copy is needed unless an object reference must be looked up.
            self.handle(lambda pre=pre, refers=refers: self._resolved(pre) if refers else pre)

    def _resolved(self, x: Any) -> Any:
        """A predecoded request with its object references looked up (in new containers)."""
        if isinstance(x, HandleRef):
            return self._lookup(x.id)
        if type(x) is list:
            return [self._resolved(v) for v in x]
        if type(x) is dict:
            return {k: self._resolved(v) for k, v in x.items()}
        return x

    def dispatch(self, req: dict) -> Any:
        """Run one decoded request by its ``op``; what it returns (student code may raise)."""
        op = req["op"]
        args, kwargs = req.get("args", []), req.get("kwargs", {})
        if op == "load":
            return self.load(req["module"])
        if op == "call":
            fn = _resolve(sys.modules.get(req["module"]) or importlib.import_module(req["module"]),
                          req["name"])
            return fn(*args, **kwargs)
        if op == "method":
            method = req["name"].rsplit(".", 1)[-1]
            return getattr(self._lookup(req["handle"]), method)(*args, **kwargs)
        if op == "lib":
            # Trusted code asks for a library object (a torch.nn.Linear to wrap, say).
            mod_name, _, attr = req["name"].rpartition(".")
            return _resolve(importlib.import_module(mod_name), attr)(*args, **kwargs)
        if op == "probe":
            return getattr(probes, req["name"])(self, *args, **kwargs)
        if op == "ping":
            return "pong"
        if op == "busy":
            return self.busy
        if op == "forget":
            # A batch's plan starts each topic afresh: handle numbers then do not depend on
            # what earlier topics kept (autograder.grading.replay compares requests byte for byte).
            self.objects.clear()
            return None
        raise ValueError(f"unknown op {op!r}")

    def load(self, module: str) -> list[str]:
        """Import the submission's ``module``; its public names, sorted."""
        mod = importlib.import_module(module)
        return sorted(n for n in vars(mod) if not n.startswith("_"))


#: topic -> the batch plan's PUBLIC requests, decoded by the zygote (trusted: they come from
#: the grader, and public inputs are no secret), each with whether it refers to an object the
#: worker holds; a forked worker inherits them. Hidden requests are never here: a worker holds
#: no hidden input before a test asks (an import could quote them all: test_hidden_text.py).
PLANNED: dict[str, list[tuple[Any, bool]]] = {}


@dataclass(frozen=True)
class HandleRef:
    """An object reference in a predecoded request, looked up when the request runs."""

    id: int


def predecode(plan: bytes, counts: dict[str, int]) -> dict[str, int]:
    """Decode a batch plan's request frames (``plan``, in topic order) into :data:`PLANNED`.

    Runs in the zygote, before it forks: workers then skip decoding the thousands of requests
    of a submission. Returns how many requests each topic got.

    Raises:
        ValueError: a topic key that is not a public plan's (``topic:public``), or frames that
            do not match ``counts``.
    """
    server = Server.__new__(Server)  # only for its tensor builder: no socket, no objects
    PLANNED.clear()
    if any(not t.endswith(":public") for t in counts):
        raise ValueError("only public requests are preloaded")
    split = frames.split_frames(plan, codec.MAX_FRAME)
    if sum(counts.values()) != len(split):
        raise ValueError("the plan's frames do not match its counts")
    bodies = iter(split)
    for topic, n in counts.items():
        reqs = []
        for _ in range(n):
            refs: list[HandleRef] = []
            req = codec.decode(next(bodies), tensors=server._tensor,
                               handles=lambda v, refs=refs: refs.append(_handle_ref(v)) or refs[-1])
            reqs.append((req, bool(refs)))
        PLANNED[topic] = reqs
    return {t: len(r) for t, r in PLANNED.items()}


def _handle_ref(v: Any) -> HandleRef:
    return HandleRef(int(v["id"] if isinstance(v, dict) else v))


def _raw_frame(payload: dict) -> bytes:
    import json

    doc = json.dumps({"v": payload, "blobs": []}).encode()
    return frames.frame(struct.pack("<I", len(doc)) + doc)


class MissingName(AttributeError):
    """The submission's module does not define the function or class a test asks for."""


def _resolve(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not hasattr(obj, part):
            raise MissingName(f"{part} is not defined")
        obj = getattr(obj, part)
    return obj


def child_main(fd: int, cmd: dict) -> None:
    """Entry point of a forked worker: isolate, limit, then serve forever."""
    code = 70
    try:
        sock = socket.socket(fileno=fd)
        os.setsid()  # own process group: the grader kills the whole group
        zygote = os.getppid()
        workdir, sub_dir = cmd["workdir"], cmd["sub_dir"]
        limits = Limits(**cmd["limits"])
        out = _open_output(os.path.join(workdir, "output.txt"))
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        keep = {0, 1, 2, sock.fileno()}
        for n in range(3, 1024):
            if n not in keep:
                try:
                    os.close(n)
                except OSError:
                    pass
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # output over the cap: writes fail, no kill
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        # The OOM killer's first choice in a slot whose memory cap is hit (autograder.driver.cgroups).
        isolation.prefer_killing_me(1000)
        isolation.enter(cmd)  # namespaces, private tmpfs, own uid (as root); may be a no-op
        # Die with the zygote (set after the uid change, which clears it): a grader killed
        # with SIGKILL must not leave a worker spinning in student code.
        isolation.die_with_parent()
        seccomp_filter.apply_worker_filter()  # kernel state another submission could read
        # The zygote died before the death signal was set. (In a PID namespace of its own the
        # parent, outside it, reads as 0 throughout: there the namespace's init exits with the
        # zygote and takes the worker with it, isolation.PidNamespaces.)
        if os.getppid() != zygote:
            os._exit(70)
        # cwd is the private scratch tmpfs; the submission is read-only, first on sys.path.
        scratch = os.path.join(workdir, "tmp")
        os.chdir(scratch if os.path.isdir(scratch) else sub_dir)
        _set_limits(limits)
        interpreter.prepare(sub_dir)
        warnings_at_submission(sub_dir)
        Server(sock, sub_dir).serve()
        code = 0
    except BaseException:  # noqa: BLE001
        # Before the output file is open this goes to the zygote's stderr (a terminal): stay
        # quiet where the workdir is gone, i.e. the grader removed it while stopping (Ctrl-C).
        if os.path.isdir(cmd.get("workdir", "")):
            traceback.print_exc()
    os._exit(code)


def _open_output(path: str) -> int:
    """Open the worker's output file for appending, as root, without following a link.

    Before a restart, a submission (as its slot uid without root) may have replaced the file:
    a symlink to a file of the instructor's would have root append student output to it; a
    FIFO would block this open (hostile battery: output_symlink, output_fifo). Anything but a
    plain file of our own is removed and the file made afresh.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        fd = os.open(path, flags, 0o600)
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
            return fd
        os.close(fd)
    except OSError:
        pass
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    return os.open(path, flags | os.O_EXCL, 0o600)


def _set_limits(limits: Limits) -> None:
    def cap(which: int, value: int) -> None:
        soft, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            pass

    if os.path.exists("/dev/nvidiactl"):
        # A CUDA context reserves far more address space than it uses: cap the data segment
        # (private writable memory, which a memory bomb needs) instead.
        cap(resource.RLIMIT_DATA, limits.address_space)
    else:
        cap(resource.RLIMIT_AS, limits.address_space)
    cpu = int(limits.submission_seconds) + 10
    cap(resource.RLIMIT_CPU, cpu)
    cap(resource.RLIMIT_FSIZE, limits.output_bytes + 4096)
    cap(resource.RLIMIT_CORE, 0)
    cap(resource.RLIMIT_NOFILE, limits.open_files)
    cap(resource.RLIMIT_NPROC, isolation.nproc_cap(limits.processes))
