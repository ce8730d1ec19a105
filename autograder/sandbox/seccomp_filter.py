"""The worker's seccomp filter: kernel state that namespaces do not separate, refused.

What a worker does to itself before it runs student code (:mod:`autograder.sandbox.isolation`)
ends with this filter (:func:`apply_worker_filter`), built by libseccomp through ``pyseccomp``.
It is an allow-list: a call not named in :data:`WORKER_SYSCALLS` (or allowed on its arguments
by :func:`worker_filter`) gets EPERM. The refusals named below (each a red-team finding or the
kind it belongs to) are kept out of the allow-list, and those that depend on a call's arguments
(``fcntl`` locks, ``clone`` flags, shared futexes, ...) stay as conditions of the calls that
are allowed. docs/design/threat-model.md says which promises rest on it and which hold by
construction, and how the list was measured (``scripts/worker_syscalls.py``).
The untrusted side: it runs in the worker.
"""

from __future__ import annotations

import errno


#: Kernel keyrings are per uid, not per namespace: two submissions of one slot (or, without
#: root, of one user) could pass code to each other through ``add_key``/``keyctl`` (red team).
#: Nothing a submission needs uses them, so the worker's seccomp filter refuses them.
KEYRING_SYSCALLS = ("add_key", "request_key", "keyctl")

#: Kernel state that belongs to a file's inode, not to a mount or a namespace: every worker's
#: view shares the standard library, the venv and /usr, so two workers graded at the same time
#: could signal to each other through it (red team, second round: a hidden-phase worker wrote
#: its hidden input as byte-range locks on ``os.py``, and another submission's public-phase
#: worker read them back with ``F_GETLK`` and quoted them in its public feedback). Refused:
#: ``flock``; the inotify and fanotify watches (events when another worker opens a shared file);
#: ``fadvise64`` (dropping a shared file's pages from the page cache, which a later worker can
#: probe) and ``mincore``; and io_uring, whose requests do the same two things (red team, third
#: round: ``IORING_OP_FADVISE`` dropped pages of a triton file no CPU grading reads, and
#: ``RWF_NOWAIT`` reads through the ring told the next worker which pages were gone, so a
#: hidden-phase worker's inputs reached the next submission's public feedback). Linear algebra
#: needs none of them.
SHARED_INODE_SYSCALLS = ("flock", "inotify_init", "inotify_init1", "inotify_add_watch",
                         "fanotify_init", "fanotify_mark", "fadvise64", "mincore",
                         "io_uring_setup", "io_uring_enter", "io_uring_register")
#: ``fcntl`` commands on the same inode state, refused while the rest of ``fcntl`` (close-on-
#: exec, non-blocking flags, ``F_DUPFD``), which Python and the libraries use, stays allowed:
#: POSIX and open-file-description locks, leases, and directory notifications (dnotify).
SHARED_INODE_FCNTL = {"F_GETLK": 5, "F_SETLK": 6, "F_SETLKW": 7, "F_OFD_GETLK": 36,
                      "F_OFD_SETLK": 37, "F_OFD_SETLKW": 38, "F_SETLEASE": 1024,
                      "F_GETLEASE": 1025, "F_NOTIFY": 1026}
#: Namespaces: a worker could make its own user namespace, and in it a mount namespace with
#: a 1 GiB tmpfs (red team, fifth round; proc and sysfs stayed refused). No exercise needs
#: one, and each is kernel surface shared with the host, so ``unshare`` and ``setns`` are
#: refused, and so is ``clone`` with any of these flags. ``clone3`` passes its flags in memory,
#: which a seccomp filter cannot read: it gets ENOSYS, on which glibc creates threads and
#: processes with ``clone`` instead. (``CLONE_NEWTIME``, 0x80, is left out: in ``clone``'s
#: flags that bit belongs to the exit signal, and ``unshare`` is refused whole.)
NAMESPACE_SYSCALLS = ("unshare", "setns")
CLONE_NEW_FLAGS = {"CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000,
                   "CLONE_NEWUTS": 0x04000000, "CLONE_NEWIPC": 0x08000000,
                   "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
                   "CLONE_NEWNET": 0x40000000}
#: ``madvise`` advice that pushes shared file pages out of memory (the allocator's own advice,
#: ``MADV_DONTNEED`` and the like, stays allowed), and ``preadv2``'s ``RWF_NOWAIT`` flag, which
#: tells whether a file's pages are cached without reading them from disk.
MADV_COLD, MADV_PAGEOUT = 20, 21
RWF_NOWAIT = 0x8
#: Futexes on shared memory are keyed by the file's inode and offset, not by process or
#: namespace: a hidden-phase worker waiting on a word of a standard-library file mapped
#: read-only, and another submission's public-phase worker waking that word and counting who
#: woke, carried hidden inputs into public feedback (red team, round 3). What closes that kind
#: is time (docs/design/threat-model.md, phases: no two such workers ever run together); the
#: filter is defence in depth. It refuses every process-shared futex operation that wakes,
#: requeues or unlocks (``futex`` without ``FUTEX_PRIVATE_FLAG``), keeping the shared waits
#: (glibc's ``pthread_join`` waits on a thread id with a shared futex, woken by the kernel),
#: and the futex2 calls that act on shared words: ``futex_wake``/``futex_wait`` without
#: ``FUTEX2_PRIVATE``, and ``futex_waitv``/``futex_requeue`` (flags in memory) whole.
FUTEX_PRIVATE_FLAG = 128
FUTEX_CMD_MASK = 0x7F | FUTEX_PRIVATE_FLAG  # the command and the private bit
FUTEX_SHARED_WAITS = (0, 9)  # FUTEX_WAIT, FUTEX_WAIT_BITSET
FUTEX_SHARED_REFUSED = tuple(c for c in range(14) if c not in FUTEX_SHARED_WAITS)
FUTEX2_PRIVATE = 128
#: Counters the kernel keeps for the whole host and never resets, which a worker can advance and
#: a later worker read: what one grading's hidden phase writes there, a later grading's public
#: phase finds (red team, round 4: a hidden-phase worker made pipes until the pipe and socket
#: inode counter, get_next_ino, stood at a value of its hidden input; a resubmission's public
#: worker made one pipe and raised the inode number's batch). The sweeps order workers alive at
#: once; these outlive their workers. Refused: making pipes, sockets and memfds (the pipefs,
#: sockfs and shmem inode counters; the worker's own socket is inherited, and no exercise needs
#: a new one), a pidfd (``pidfd_open``; ``clone`` with ``CLONE_PIDFD``: pidfs numbers every
#: process of the host from one counter), and the unique mount ids (``statmount``,
#: ``listmount``, ``statx`` asking for ``STATX_MNT_ID_UNIQUE``), which count every mount a
#: worker restart makes.
PERSISTENT_COUNTER_SYSCALLS = ("pipe", "pipe2", "socket", "socketpair", "memfd_create",
                               "pidfd_open")
CLONE_PIDFD = 0x1000
STATX_MNT_ID_UNIQUE = 0x4000
#: statmount and listmount, by number (one table on every architecture from 424 on).
MOUNT_ID_SYSCALLS = {"statmount": 457, "listmount": 458}
#: The futex2 calls, by number: one table on every architecture from 424 on, and named by
#: libseccomp only in its newer releases. (futex_waitv, futex_wake, futex_wait, futex_requeue)
FUTEX2_SYSCALLS = {"futex_waitv": 449, "futex_wake": 454, "futex_wait": 455,
                   "futex_requeue": 456}


#: The calls a worker may make, whatever their arguments (the allow-list; the calls allowed only
#: on some arguments are in :func:`worker_filter`). Measured with ``strace -f`` over the whole
#: grader (``scripts/worker_syscalls.py`` counts only calls made after a process loaded its
#: filter): ``course grade`` of the example class (every topic, Triton's interpreter, a syntax
#: error, an exit on import, a time-out), the bank variants (tests/test_banks.py: numpy, torch,
#: Hypothesis-drawn inputs, wrong and correct variants, planned and call by call),
#: tests/test_sandbox.py and tests/test_ex08_sandbox.py (errors, crashes, limits). The table in
#: docs/design/threat-model.md ("The filter is an allow-list") says where each came from.
MEASURED_SYSCALLS = (
    # the interpreter reading modules and files (imports, linecache for tracebacks), and
    # Triton's cache and tempfile in the worker's own scratch folder
    "openat", "read", "lseek", "close", "newfstatat", "getdents64", "ioctl", "getcwd",
    "chdir", "mkdir", "unlink", "rename", "write",
    # memory: malloc, numpy's and torch's buffers, the interpreter's arenas
    "brk", "mmap", "munmap", "mremap", "mprotect",
    # the worker's own socket to the grader (inherited; making one stays refused); reading
    # its options and waiting on it: the hostile battery's attacks on the grader's protocol
    # (tests/hostile/attacks.py, FIND_SOCKET: socket.socket(fileno=...), settimeout), which
    # the grader must withstand by itself, not by this filter
    "recvfrom", "sendto", "getsockopt", "getsockname", "getpeername", "poll",
    # the worker's start: its limits (autograder.sandbox.worker._set_limits) and who it is;
    # uname: ctypes and platform
    "prlimit64", "getuid", "geteuid", "getpid", "getppid", "uname",
    # randomness (os.urandom, random's seed, Hypothesis), the CPU set (os.cpu_count, torch)
    "getrandom", "sched_getaffinity",
    # leaving: os._exit and sys.exit (the example class's exit_on_import)
    "exit_group",
    # a child of the worker leaving for a session of its own (the red team's CPU hog, which
    # tests/test_ex08_sandbox.py grades: the slot's control group still holds it)
    "setsid", "getsid",
)
#: Calls that glibc, CPython and the libraries make on paths we can name (a thread, a signal,
#: an abort, a fork, a sleep), allowed so that a rare but ordinary path never fails a correct
#: submission (the sandbox tests' traces met the thread, fork and sleep ones; no workload's
#: trace met a signal handler or an abort): threads (``clone`` is allowed on its flags,
#: below) set their robust-futex list and restartable sequence, yield and exit; a signal
#: handler returns through ``rt_sigreturn`` and Python's installs go through ``rt_sigaction``
#: and ``rt_sigprocmask``, with ``sigaltstack`` per thread (faulthandler); ``abort()`` raises
#: SIGABRT with ``tgkill``; a fork's parent waits with ``wait4``; ``time.sleep`` is
#: ``clock_nanosleep``, and the clock calls are made for real where the vDSO cannot serve them
#: (CPU-time clocks, some virtual machines' clock sources); ``getrusage`` and ``times`` count
#: the process's own time.
NAMED_SYSCALLS = (
    "exit", "set_robust_list", "rseq", "sched_yield", "gettid", "getgid", "getegid",
    "rt_sigreturn", "rt_sigaction", "rt_sigprocmask", "sigaltstack", "tgkill",
    "wait4", "clock_gettime", "clock_getres", "gettimeofday", "clock_nanosleep", "nanosleep",
    "getrusage", "times",
)
#: The rest of the file API a worker uses on its own descriptors and its private scratch
#: folder (``readlink`` and ``rmdir`` measured in the sandbox tests; the measured calls'
#: siblings, and the older names of the same calls, which another glibc or a library's own
#: system call may use): none of them reaches state another worker shares beyond the files
#: themselves, which namespaces and permissions separate.
FILE_SYSCALLS = (
    "fstat", "stat", "lstat", "pread64", "pwrite64", "readv", "writev", "readlink",
    "readlinkat", "access", "faccessat", "faccessat2", "renameat", "renameat2", "rmdir",
    "unlinkat", "mkdirat", "ftruncate", "fsync", "fdatasync", "fchmod", "fchdir", "umask",
    "dup", "dup2", "dup3",
)
#: Ordinary calls of a Python program on its own files, descriptors and processes that no trace
#: met but that a correct submission may make (``os.chmod``, ``os.utime``, ``shutil.copy``'s
#: ``sendfile`` and extended attributes, ``os.closerange``, ``select``, ``signal.alarm``, a
#: child killed and waited for): found when ``os.chmod`` on a worker's own /tmp file met EPERM
#: (tests/test_isolation.py), which the traces had never met. Each acts on what namespaces and
#: permissions already separate (the worker's files, its own PID namespace), none on kernel
#: state another worker shares; ``statfs``/``fstatfs`` and ``sysinfo`` (host-wide counts) stay
#: refused.
ORDINARY_SYSCALLS = (
    "chmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat", "utimensat",
    "truncate", "link", "linkat", "symlink", "symlinkat", "sendfile", "copy_file_range",
    "fallocate", "getxattr", "lgetxattr", "fgetxattr", "listxattr", "llistxattr",
    "flistxattr", "close_range", "select", "pselect6", "ppoll", "kill", "tkill", "waitid",
    "getpgrp", "getpgid", "getpriority", "sched_getparam", "sched_getscheduler",
    "sched_get_priority_max", "sched_get_priority_min", "get_mempolicy", "setitimer",
    "getitimer", "alarm", "msync", "rt_sigtimedwait", "rt_sigsuspend", "rt_sigpending",
    "pause",
)
WORKER_SYSCALLS = MEASURED_SYSCALLS + NAMED_SYSCALLS + FILE_SYSCALLS + ORDINARY_SYSCALLS


def _complement_blocks(refused, bits: int = 32) -> list[tuple[int, int]]:
    """The values of a ``bits``-wide argument outside ``refused``, as aligned blocks
    ``(mask, value)``: ``x & mask == value`` holds exactly for the ``x`` of one block.

    libseccomp compares one argument once per rule (two comparisons of one argument are
    EINVAL), so "allowed unless the argument is one of these" is one ``MASKED_EQ`` rule per
    block. The mask leaves the upper 32 bits out: the kernel reads an ``int`` argument (fcntl's
    command, madvise's advice) from the register's low half, so ``0xffffffff00000005`` is
    ``F_GETLK`` to it, and must be to the filter too.
    """
    top, start, out = 1 << bits, 0, []
    refused = sorted(set(refused))
    while start < top:
        if start in refused:
            start += 1
            continue
        size = start & -start if start else top  # the largest alignment of start
        while start + size > top or any(start <= r < start + size for r in refused):
            size >>= 1
        out.append(((top - 1) & ~(size - 1), start))
        start += size
    return out


def worker_filter() -> "pyseccomp.SyscallFilter":  # noqa: F821 - imported lazily
    """The worker's seccomp filter, built by libseccomp: an allow-list whose default is EPERM.

    Allowed whatever the arguments: :data:`WORKER_SYSCALLS`. Allowed on their arguments, so
    that every refusal of the deny-list this replaced still holds: ``fcntl`` but for
    :data:`SHARED_INODE_FCNTL`; ``madvise`` but for ``MADV_COLD``/``MADV_PAGEOUT``; ``clone``
    without :data:`CLONE_NEW_FLAGS` and ``CLONE_PIDFD``; ``statx`` without
    ``STATX_MNT_ID_UNIQUE``; ``futex`` with ``FUTEX_PRIVATE_FLAG`` or as one of
    :data:`FUTEX_SHARED_WAITS`; ``futex_wake``/``futex_wait`` with ``FUTEX2_PRIVATE``.
    ``clone3`` gets ENOSYS (glibc then uses ``clone``). Everything else, the named refusals
    (:data:`KEYRING_SYSCALLS`, :data:`SHARED_INODE_SYSCALLS`, :data:`NAMESPACE_SYSCALLS`,
    :data:`PERSISTENT_COUNTER_SYSCALLS`, :data:`MOUNT_ID_SYSCALLS`, ``futex_waitv``,
    ``futex_requeue``) among it, gets EPERM.

    libseccomp knows each architecture's syscall numbers and checks the architecture of every
    call: a call of another ABI (i386 ``int 0x80`` from a 64-bit process, x32) meets the
    ``BADARCH`` action, set to the same EPERM, so no second numbering can slip past the rules.
    ``ImportError`` where libseccomp (the system library ``pyseccomp`` binds) is missing.
    """
    try:
        import pyseccomp as seccomp
    except (ImportError, RuntimeError) as exc:  # pyseccomp raises RuntimeError without the library
        raise ImportError(f"libseccomp is not available: {exc}") from exc

    refuse = seccomp.ERRNO(errno.EPERM)
    allow = seccomp.ALLOW
    f = seccomp.SyscallFilter(refuse)
    f.set_attr(seccomp.Attr.ACT_BADARCH, refuse)
    for name in WORKER_SYSCALLS:
        f.add_rule(allow, name)

    def allow_unless(name: str, arg: int, refused) -> None:
        for mask, value in _complement_blocks(refused):
            f.add_rule(allow, name, seccomp.Arg(arg, seccomp.MASKED_EQ, mask, value))

    allow_unless("fcntl", 1, SHARED_INODE_FCNTL.values())
    allow_unless("madvise", 2, (MADV_COLD, MADV_PAGEOUT))
    unshared = CLONE_PIDFD
    for flag in CLONE_NEW_FLAGS.values():
        unshared |= flag
    f.add_rule(allow, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, unshared, 0))
    f.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    f.add_rule(allow, "statx", seccomp.Arg(3, seccomp.MASKED_EQ, STATX_MNT_ID_UNIQUE, 0))
    f.add_rule(allow, "futex", seccomp.Arg(1, seccomp.MASKED_EQ, FUTEX_PRIVATE_FLAG,
                                           FUTEX_PRIVATE_FLAG))
    for cmd in FUTEX_SHARED_WAITS:  # glibc's pthread_join waits on a shared word
        f.add_rule(allow, "futex", seccomp.Arg(1, seccomp.MASKED_EQ, FUTEX_CMD_MASK, cmd))
    for name in ("futex_wake", "futex_wait"):  # their flags are the fourth argument
        f.add_rule(allow, FUTEX2_SYSCALLS[name],
                   seccomp.Arg(3, seccomp.MASKED_EQ, FUTEX2_PRIVATE, FUTEX2_PRIVATE))
    return f


def apply_worker_filter() -> bool:
    """Load :func:`worker_filter` in this process and its children, for good. Needs no
    privilege (libseccomp sets ``PR_SET_NO_NEW_PRIVS``). False where libseccomp is missing or
    the kernel refuses the filter (the docs' threat model says what that leaves open).
    """
    try:
        worker_filter().load()
    except (ImportError, OSError):
        return False
    return True
