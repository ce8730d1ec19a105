"""The worker's seccomp filter: kernel state that namespaces do not separate, refused.

What a worker does to itself before it runs student code (:mod:`autograder.sandbox.isolation`)
ends with this filter (:func:`apply_worker_filter`), built by libseccomp through ``pyseccomp``.
It is a deny-list: every rule below names a red-team finding or the kind it belongs to, and
docs/design/threat-model.md says which promises rest on it and which hold by construction.
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


def worker_filter() -> "pyseccomp.SyscallFilter":  # noqa: F821 - imported lazily
    """The worker's seccomp filter, built by libseccomp: EPERM for the keyring calls
    (:data:`KEYRING_SYSCALLS`), for new namespaces (:data:`NAMESPACE_SYSCALLS`, ``clone``
    with :data:`CLONE_NEW_FLAGS`; ``clone3`` ENOSYS) and for state shared through a file's inode
    (:data:`SHARED_INODE_SYSCALLS`, io_uring included, :data:`SHARED_INODE_FCNTL`, ``madvise`` with
    ``MADV_COLD``/``MADV_PAGEOUT``, ``preadv2`` with ``RWF_NOWAIT``, and process-shared futex
    wakes and requeues: :data:`FUTEX_SHARED_REFUSED`, :data:`FUTEX2_SYSCALLS`), and for the
    host-wide counters that outlive a worker (:data:`PERSISTENT_COUNTER_SYSCALLS`, ``clone``
    with ``CLONE_PIDFD``, :data:`MOUNT_ID_SYSCALLS`, ``statx`` with ``STATX_MNT_ID_UNIQUE``);
    everything else allowed.

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
    f = seccomp.SyscallFilter(seccomp.ALLOW)
    f.set_attr(seccomp.Attr.ACT_BADARCH, refuse)
    for name in (KEYRING_SYSCALLS + SHARED_INODE_SYSCALLS + NAMESPACE_SYSCALLS
                 + PERSISTENT_COUNTER_SYSCALLS):
        f.add_rule(refuse, name)
    for number in MOUNT_ID_SYSCALLS.values():
        f.add_rule(refuse, number)
    f.add_rule(refuse, "statx", seccomp.Arg(3, seccomp.MASKED_EQ, STATX_MNT_ID_UNIQUE,
                                            STATX_MNT_ID_UNIQUE))
    for flag in (*CLONE_NEW_FLAGS.values(), CLONE_PIDFD):
        f.add_rule(refuse, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    f.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    for cmd in SHARED_INODE_FCNTL.values():
        f.add_rule(refuse, "fcntl", seccomp.Arg(1, seccomp.EQ, cmd))
    for advice in (MADV_COLD, MADV_PAGEOUT):
        f.add_rule(refuse, "madvise", seccomp.Arg(2, seccomp.EQ, advice))
    f.add_rule(refuse, "preadv2", seccomp.Arg(5, seccomp.MASKED_EQ, RWF_NOWAIT, RWF_NOWAIT))
    for cmd in FUTEX_SHARED_REFUSED:  # the private bit clear: a shared word
        f.add_rule(refuse, "futex", seccomp.Arg(1, seccomp.MASKED_EQ, FUTEX_CMD_MASK, cmd))
    for name in ("futex_wake", "futex_wait"):  # their flags are the fourth argument
        f.add_rule(refuse, FUTEX2_SYSCALLS[name],
                   seccomp.Arg(3, seccomp.MASKED_EQ, FUTEX2_PRIVATE, 0))
    for name in ("futex_waitv", "futex_requeue"):
        f.add_rule(refuse, FUTEX2_SYSCALLS[name])
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
