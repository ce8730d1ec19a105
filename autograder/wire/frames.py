"""The u64 framing of the wire format (docs/design/wire-format.md): one parser for every reader.

A frame is a little-endian u64 body length, then the body. Every reader of frames, on both
sides of the boundary, goes through :func:`frame_length` (the one place a length the sender
chose is checked against a limit): the worker reading requests (:func:`read_frame`), the grader
reading one reply by a deadline (:func:`read_frame` with ``deadline``) or a run of pipelined
replies (:func:`frame_at`), the zygote splitting a batch plan (:func:`split_frames`) and the
nbgrader adapter, which frames in-process (:func:`unframe`).

Security-relevant: a length comes from whoever wrote the frame (student code, on the worker's
side). No error message quotes it: a hidden test's feedback would show a number the submission
picked.
"""

from __future__ import annotations

import socket
import struct
import time

#: A frame's header: its body's length, a little-endian u64.
FRAME_HEADER = struct.Struct("<Q")
HEADER_SIZE = FRAME_HEADER.size  # 8 bytes


class FrameError(ValueError):
    """Frames that are not in the wire format (truncated, or a length over the limit).

    :class:`autograder.wire.codec.DecodeError` (a body that is not) derives from it: a
    reader catching this one catches both.
    """


def frame(body: bytes) -> bytes:
    """``body`` as one frame: the u64 length, then the body."""
    return FRAME_HEADER.pack(len(body)) + body


def frame_length(buf: bytes | bytearray | memoryview, offset: int, limit: int) -> int:
    """The body length in the frame header at ``buf[offset:]`` (8 bytes must be there).

    Raises:
        FrameError: the length is over ``limit`` (bytes); the message never quotes the
            length, which the sender chose.
    """
    (n,) = FRAME_HEADER.unpack_from(buf, offset)
    if n > limit:
        raise FrameError(f"a result over the {limit} byte limit")
    return n


def frame_at(buf: bytes | bytearray | memoryview, offset: int, limit: int) -> slice | None:
    """The slice of ``buf`` holding the body of the frame at ``offset``, or ``None`` while
    that frame has not fully arrived (a pipeline's receive buffer fills in pieces).

    Raises:
        FrameError: its length is over ``limit`` (:func:`frame_length`).
    """
    if len(buf) - offset < HEADER_SIZE:
        return None
    start = offset + HEADER_SIZE
    end = start + frame_length(buf, offset, limit)
    return slice(start, end) if end <= len(buf) else None


def split_frames(buf: bytes | memoryview, limit: int) -> list[bytes]:
    """The bodies of the frames that fill ``buf`` exactly, in order.

    Raises:
        FrameError: a length over ``limit``, or frames that do not fill ``buf`` exactly.
    """
    view, off, out = memoryview(buf), 0, []
    while off < len(view):
        if len(view) - off < HEADER_SIZE:
            raise FrameError("a truncated frame header")
        body = frame_at(view, off, limit)
        if body is None:
            raise FrameError("a truncated frame")
        out.append(bytes(view[body]))
        off = body.stop
    return out


def unframe(buf: bytes, limit: int) -> bytes:
    """The body of the one frame that fills ``buf`` exactly (what ``codec.encode`` made).

    Raises:
        FrameError: not exactly one frame, or its length over ``limit``.
    """
    bodies = split_frames(buf, limit)
    if len(bodies) != 1:
        raise FrameError("not exactly one frame")
    return bodies[0]


def recv_exact(sock: socket.socket, n: int, deadline: float | None = None) -> bytes:
    """Exactly ``n`` bytes from ``sock``.

    With ``deadline`` (a ``time.monotonic()`` value), all of them by then: a socket timeout
    bounds each ``recv``, not the whole read, and a peer trickling a byte every 0.3 s would
    never time out (hostile battery: slowloris_reply), so every read gets what is left.
    Without one, the socket's own blocking mode applies (the worker waits for requests).

    Raises:
        TimeoutError: the deadline passed (or the socket's timeout expired).
        EOFError: the other end closed the connection first.
    """
    buf = bytearray()
    while len(buf) < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("deadline passed")
            sock.settimeout(left)
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise EOFError("worker closed the connection")
        buf += chunk
    return bytes(buf)


def read_frame(sock: socket.socket, limit: int, deadline: float | None = None) -> bytes:
    """One frame body from ``sock`` (all of it by ``deadline`` when given: :func:`recv_exact`).

    Raises:
        FrameError: a length over ``limit`` bytes (nothing more is read).
        TimeoutError, EOFError: as :func:`recv_exact`.
    """
    n = frame_length(recv_exact(sock, HEADER_SIZE, deadline), 0, limit)
    return recv_exact(sock, n, deadline)
