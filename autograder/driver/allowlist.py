"""The worker's file system as an allow-list, built from nothing by bubblewrap.

A deny-list (hide the repository's solutions and suites) cannot know every other copy on the
machine: an nbgrader course's ``source/``, a release, last term's checkout, a backup (red team:
a submission found one outside the repository and scored with it). So, as root and where
Debian's ``bubblewrap`` runs, each slot's zygote is started inside a view that holds only:

- the system's libraries, binaries and headers (``/usr/lib``, ``/usr/lib64``, ``/usr/bin``,
  ``/usr/sbin``, ``/usr/include``; not ``/usr/local``, ``/usr/share`` or ``/usr/src``) and the
  dynamic loader's cache;
- the Python installation (its standard library, headers and executable) and the venv,
  read-only;
- the grading package itself, read-only, with its suites folder covered by an empty tmpfs;
- the slot's own temp root (where each submission's read-only copy and output file live);
- a fresh ``/tmp``, a minimal ``/dev`` (plus the GPU's device nodes where there are some) and
  its own ``/proc``;

and nothing else of the host. The zygote keeps root inside (it forks the workers, which then
enter their own mount namespace, get private size-capped tmpfs folders and drop to the slot's
uid: :func:`autograder.sandbox.isolation.enter`), but it has no network, no IPC namespace of the host
and no controlling terminal. Every worker inherits the view.

Without bubblewrap, or where namespaces are refused (some containers), the slot runs as before
(:mod:`autograder.sandbox.isolation`'s deny-list); ``docs/design/threat-model.md`` says what each path
holds.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
import sys
import sysconfig

from autograder.paths import PACKAGE_DIR
from autograder.host import is_root

#: Folders of ``/usr`` a worker may read: libraries (numpy's and torch's too), the loader,
#: binaries (``ldconfig`` for ctypes' library search; a compiler for Triton on a GPU) and headers.
SYSTEM_DIRS = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/libexec", "/usr/bin", "/usr/sbin",
               "/usr/include")
#: Top-level names that merged-/usr systems make symlinks into ``/usr``.
TOP_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
LOADER_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d")
#: The names of installed-package folders on sys.path.
PACKAGE_FOLDERS = ("site-packages", "dist-packages")


def bwrap_path() -> str | None:
    """The ``bwrap`` executable, or None where it is not installed."""
    return shutil.which("bwrap")


#: What of a venv the interpreter uses (not ``src/``, where ``pip install -e git+…`` keeps a
#: whole clone, nor ``share/``).
VENV_PARTS = ("bin", "lib", "lib64", "include", "pyvenv.cfg")


def _chain(path: str) -> list[str]:
    """``path`` and every link it goes through to the real file, in order."""
    out = [os.path.abspath(path)]
    while os.path.islink(out[-1]) and len(out) < 40:
        target = os.readlink(out[-1])
        out.append(os.path.normpath(os.path.join(os.path.dirname(out[-1]), target)))
    return out


def _inside(p: str, roots: list[str]) -> bool:
    return any(p == r or p.startswith(r.rstrip("/") + "/") for r in roots)


def python_paths() -> list[str]:
    """The folders and files of the running Python a worker may read, bound read-only:
    the venv's own parts (:data:`VENV_PARTS`), the interpreter file itself, the standard
    library, the headers, ``libpython`` where it is shared, and package folders that
    ``.pth`` files add. Red team: binding the base interpreter's whole ``bin/`` and the whole
    venv let a copy of the solutions kept there be read.
    """
    paths = {os.path.realpath(sys.executable)}
    venv = sys.prefix
    if sys.prefix != sys.base_prefix:
        paths.update(os.path.join(venv, part) for part in VENV_PARTS
                     if not os.path.islink(os.path.join(venv, part)))
    for key in ("stdlib", "platstdlib", "include", "platinclude", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            paths.add(p)
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    paths.update(glob.glob(os.path.join(libdir, "libpython*")))
    # Package folders that .pth files add (a venv layered on another's packages). Only those:
    # never the working folder (``python -m`` puts it first on sys.path, and an instructor may
    # grade from a folder full of solutions), nor the checkout or anything in it (its package
    # is bound on its own, with its suites covered).
    checkout = os.path.realpath(PACKAGE_DIR.parent)
    for entry in sys.path:
        real = os.path.realpath(entry) if entry else ""
        if (real and os.path.isdir(real) and os.path.basename(real) in PACKAGE_FOLDERS
                and real != checkout and not real.startswith(checkout + "/")):
            paths.add(real)
    found = sorted({os.path.realpath(p) for p in paths if os.path.exists(p)})
    # A folder inside another on the list comes with it.
    return [p for p in found if not any(p.startswith(q + "/") for q in found)]


def python_links(bound: list[str]) -> list[tuple[str, str]]:
    """(link, target) to make in the view: the links between ``sys.executable`` and the real
    interpreter that lie outside the folders ``bound``, the linked folders on the way to the
    venv, and the venv's link parts (``lib64``)."""
    links = [(p, os.readlink(p)) for p in _chain(sys.executable)[:-1] if not _inside(p, bound)]
    # A venv reached through a linked folder (``.venv -> /elsewhere/venv``): its parts are bound
    # at their real paths, and the interpreter, started by the linked path, looks for its
    # ``pyvenv.cfg`` there, so each linked folder on the way to the venv is made as a link too.
    folder = os.path.abspath(sys.prefix)
    while folder != os.path.dirname(folder):
        if os.path.islink(folder) and not _inside(folder, bound):
            links.append((folder, os.readlink(folder)))
        folder = os.path.dirname(folder)
    if sys.prefix != sys.base_prefix:
        for part in VENV_PARTS:
            p = os.path.join(sys.prefix, part)
            if os.path.islink(p):
                links.append((p, os.readlink(p)))
    return links


#: Where an installed copy of the course would keep what workers must not read.
COURSE_FOLDERS = ("autograder/suites", "solutions")


def python_covers(bound: list[str]) -> list[str]:
    """Folders inside ``bound`` to cover with an empty tmpfs: the standard library's own
    ``site-packages`` when it is not on sys.path (a venv does not use it, and a copy of the
    course installed there would be readable), and installed copies of the course's suites or
    solutions in the package folders that are on it."""
    on_path = [os.path.realpath(p) for p in sys.path if p]
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    covers = [os.path.join(stdlib, f) for f in PACKAGE_FOLDERS
              if os.path.isdir(os.path.join(stdlib, f))
              and os.path.join(stdlib, f) not in on_path]
    for folder in on_path:
        if os.path.basename(folder) in PACKAGE_FOLDERS and _inside(folder, bound):
            covers += [os.path.join(folder, c) for c in COURSE_FOLDERS
                       if os.path.isdir(os.path.join(folder, c))]
    return sorted(set(covers))


def view_args(slot_dir: str, hide: list[str] | None = None) -> list[str]:
    """bubblewrap's options for a slot's zygote: the allow-list above, in mount order.

    ``slot_dir`` is bound read-write (the grader puts each submission there); ``hide`` are
    folders inside an allowed one to cover with an empty tmpfs (the package's suites).
    """
    # No --die-with-parent: its signal follows the *thread* that started bwrap, and a test or
    # tool that starts a slot from a short-lived thread would lose the zygote with it. The
    # zygote leaves by itself when the grader's end of its control socket closes.
    flags = ["--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
             "--new-session", "--cap-add", "ALL"]
    # The fresh folders first: a venv or slot folder below /tmp is then bound on top of them.
    fresh = ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp"]
    binds: list[str] = []
    args = binds
    for d in SYSTEM_DIRS:
        if os.path.isdir(d):
            args += ["--ro-bind", d, d]
    for name in TOP_LINKS:
        host = "/" + name
        if os.path.islink(host):
            args += ["--symlink", os.readlink(host), host]
        elif os.path.isdir(host):
            args += ["--ro-bind", host, host]
    for f in LOADER_FILES:
        if os.path.exists(f):
            args += ["--ro-bind", f, f]
    bound = python_paths()
    for p in bound:
        args += ["--ro-bind", p, p]
    for link, target in python_links(bound):
        args += ["--symlink", target, link]
    for p in python_covers(bound):
        args += ["--tmpfs", p, "--remount-ro", p]
    package = str(PACKAGE_DIR)
    args += ["--ro-bind", package, package]
    for p in hide or []:
        if os.path.isdir(p) and p.startswith(package + "/"):
            args += ["--tmpfs", p, "--remount-ro", p]
    # CUDA needs its device nodes (the driver's libraries are under /usr/lib) and reads the
    # PCI topology from /sys (kernel state, no host files): only where a GPU is there.
    nodes = sorted(glob.glob("/dev/nvidia*"))
    for node in nodes:
        args += ["--dev-bind", node, node]
    if nodes and os.path.isdir("/sys"):
        args += ["--ro-bind", "/sys", "/sys"]
    args += ["--bind", slot_dir, slot_dir]
    return [*flags, *fresh, *_open_parents(binds, {fresh[i + 1] for i in range(0, len(fresh), 2)}),
            *binds, "--chdir", slot_dir]


def _open_parents(args: list[str], fresh: set[str]) -> list[str]:
    """Options making each mount point's parents as empty 0755 folders of the view, to come
    before ``args`` (the fresh mounts ``fresh`` are made before and left alone).

    bubblewrap would copy the host's modes: a venv or interpreter under ``/root`` (0700) would
    then stay out of the slot uid's reach. The view's ``/root`` holds nothing else anyway.
    """
    targets = [args[i + 2] for i, a in enumerate(args)
               if a in ("--ro-bind", "--bind", "--dev-bind")]
    parents: list[str] = []
    for t in targets:
        parts = t.strip("/").split("/")[:-1]
        for k in range(1, len(parts) + 1):
            d = "/" + "/".join(parts[:k])
            if d not in parents and d not in fresh:
                parents.append(d)
    made: list[str] = []
    for d in parents:
        made += ["--perms", "0755", "--dir", d]
    return made


def wrap(command: list[str], slot_dir: str, hide: list[str] | None = None) -> list[str]:
    """``command`` run inside the allow-list view, when :func:`usable`; else unchanged."""
    bwrap = bwrap_path()
    if bwrap is None or not usable():
        return command
    return [bwrap, *view_args(slot_dir, hide), "--", *command]


@functools.lru_cache(maxsize=1)
def usable() -> bool:
    """Whether this process can start workers inside bubblewrap: root, ``bwrap`` installed,
    and the kernel lets it make the namespaces (a container may refuse). Tried once, by
    running the interpreter in the view; ``COURSE_NO_BWRAP=1`` turns it off (tests of the
    fallback path, and a way out should a system's bwrap misbehave).
    """
    if os.environ.get("COURSE_NO_BWRAP") == "1" or not is_root():
        return False
    bwrap = bwrap_path()
    if bwrap is None:
        return False
    probe_dir = os.path.realpath(os.environ.get("TMPDIR", "/tmp"))
    try:
        done = subprocess.run([bwrap, *view_args(probe_dir), "--", sys.executable, "-c", "0"],
                              capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def status() -> str:
    """One line for the instructor: which file-system isolation this machine gives workers."""
    if not is_root():
        return "not root: file-system isolation is best effort (workers run as you)"
    if usable():
        return "bubblewrap: workers see an allow-list of the host (Python, venv, submission)"
    why = "not installed" if bwrap_path() is None else "refused here"
    return f"bubblewrap {why}: workers see the host less the instructor's folders (deny-list)"
