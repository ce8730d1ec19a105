#!/usr/bin/env bash
# Gradescope's setup.sh and run_autograder, run for real in a clean Debian bookworm root (issue 15).
#
# Builds the autograder zip (`course gradescope`), a minimal bookworm root (mmdebstrap, cached
# under build/gradescope-root/), unzips the zip to ROOT/autograder/source, runs setup.sh in it as
# root (chroot with /proc, /sys, /dev bound), then grades three submissions with
# /autograder/run_autograder as Gradescope would: complete (the solutions), partial (topic 1
# solved, the rest generated stubs) and hostile (a topic-1 file that tries, at import, to read the
# instructor's files and the grading plan setup.sh recorded, and to write outside its sandbox).
# Checks each results.json, prints the seconds from run_autograder's start to results.json (and
# run_autograder's own table of them by phase), and a summary table last. Exit 0 only if
# every check passes. Needs root and the network (Debian's mirror, PyPI: ~600 MB the first time;
# apt's and pip's downloads are cached under build/gradescope-root/cache/ for reruns).
#
#   sudo scripts/gradescope_root_check.sh                # from anywhere; takes 10-20 minutes
#   sudo scripts/gradescope_root_check.sh --fresh-base   # rebuild the cached bookworm tarball too
#
# Environment:
#   TORCH_INDEX_URL   passed to setup.sh (default here: PyPI, https://pypi.org/simple, beside the
#                     local wheels below); setup.sh's own default is PyTorch's CPU index.
#   WHEELS            a folder holding a CPU torch 2.13.0 wheel for CPython 3.11 (default
#                     /opt/wheels); bound into the root as /opt/wheels and pinned by a pip
#                     constraint, so that pip takes that file and never a multi-GB CUDA build.
#                     Set it empty to let setup.sh fetch torch from TORCH_INDEX_URL alone.
#   DEBIAN_MIRROR     default http://deb.debian.org/debian
#   GS_ROOT_DIR       work folder (default build/gradescope-root in the repository)
set -euo pipefail

cd "$(dirname "$0")/.."
REPO=$PWD
WORK=${GS_ROOT_DIR:-$REPO/build/gradescope-root}
WHEELS=${WHEELS-/opt/wheels}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
INDEX=${TORCH_INDEX_URL:-https://pypi.org/simple}
SUITE=bookworm
BASE=$WORK/$SUITE-minbase.tar
ROOT=$WORK/root
AG=$ROOT/autograder
VENV=/opt/course-venv
TARGET_SECONDS=10
FRESH_BASE=0

die() { echo "gradescope_root_check: $*" >&2; exit 2; }
log() { printf '\n== %s\n' "$*"; }

for arg in "$@"; do
  case $arg in
    --fresh-base) FRESH_BASE=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$arg' (try --help)" ;;
  esac
done
[ "$(id -u)" = 0 ] || die "must run as root (chroot, mounts)"
[ -x "$REPO/.venv/bin/course" ] || die "$REPO/.venv/bin/course missing: run 'make' first"
case $WORK in /|"") die "GS_ROOT_DIR must not be '$WORK'" ;; esac

missing=()
command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)
command -v unzip >/dev/null || missing+=(unzip)
command -v findmnt >/dev/null || missing+=(util-linux)
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi

# ------------------------------------------------------------------ mounts (and their undoing)

# Every mount below ROOT, deepest first (findmnt escapes a space as \x20: WORK has none).
mounts_under_root() { findmnt -rn -o TARGET | grep -E "^$ROOT(/|$)" | sort -r || true; }

unmount_root() {
  local m
  for m in $(mounts_under_root); do
    umount -l "$m" 2>/dev/null || true
  done
  if [ -n "$(mounts_under_root)" ]; then
    echo "gradescope_root_check: still mounted under $ROOT:" >&2
    mounts_under_root >&2
    return 1
  fi
}

remove_root() {
  [ -e "$ROOT" ] || return 0
  # Never rm -rf with a host folder (/dev, /sys, the wheels) still bound into the root.
  unmount_root || die "refusing to delete $ROOT while something is mounted under it"
  rm -rf --one-file-system "$ROOT"
}

trap 'unmount_root || true' EXIT

bind() {  # bind SOURCE TARGET [ro]: TARGET inside the root; rslave so unmounts stay here
  mkdir -p "$2"
  mount --rbind "$1" "$2"
  mount --make-rslave "$2"
  if [ "${3:-}" = ro ]; then mount -o remount,bind,ro "$2"; fi
}

# Run a command in the root as root, with a clean environment (nothing of the host's leaks in).
CHROOT_ENV=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
            LANG=C.UTF-8 TERM=dumb)
in_root() { chroot "$ROOT" /usr/bin/env -i "${CHROOT_ENV[@]}" "$@"; }

# ------------------------------------------------------------------ 1. the autograder zip

mkdir -p "$WORK/cache/pip" "$WORK/cache/apt" "$WORK/subs"
log "building the autograder zip"
# This checkout's code, even where .venv is shared with another checkout (a git worktree's
# symlinked venv): its `course` script imports the package the venv was installed from.
PYTHONPATH=$REPO "$REPO/.venv/bin/python" -m autograder.cli gradescope --out "$WORK/autograder.zip"

# ------------------------------------------------------------------ 2. a clean bookworm root

[ "$FRESH_BASE" = 1 ] && rm -f "$BASE"
if [ ! -s "$BASE" ]; then
  log "mmdebstrap: $SUITE minbase + ca-certificates -> $BASE (cached for reruns)"
  mmdebstrap --variant=minbase --include=ca-certificates --format=tar "$SUITE" "$BASE.tmp" \
    "deb $MIRROR $SUITE main" "deb $MIRROR $SUITE-updates main" \
    "deb ${MIRROR%/debian}/debian-security $SUITE-security main"
  mv "$BASE.tmp" "$BASE"
else
  log "reusing $BASE (--fresh-base rebuilds it)"
fi
remove_root
mkdir -p "$ROOT"
tar -xpf "$BASE" -C "$ROOT" --numeric-owner
rm -f "$ROOT/etc/resolv.conf"
cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf"

mount -t proc proc "$ROOT/proc"
bind /sys "$ROOT/sys"
bind /dev "$ROOT/dev"
bind "$WORK/cache/apt" "$ROOT/var/cache/apt/archives"
bind "$WORK/cache/pip" "$ROOT/root/.cache/pip"

# A TLS-intercepting proxy (CI sandboxes): its CA, from the host's local CAs, trusted in the root
# too, and named to pip (the venv's first pip bundles its own CA list).
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/"
  in_root update-ca-certificates >/dev/null
  CHROOT_ENV+=(PIP_CERT=/etc/ssl/certs/ca-certificates.crt)
fi

mkdir -p "$AG/source"
unzip -q "$WORK/autograder.zip" -d "$AG/source"

# ------------------------------------------------------------------ 3. setup.sh, as Gradescope

SETUP_ENV=(TORCH_INDEX_URL="$INDEX")
if [ -n "$WHEELS" ]; then
  wheel=$(find "$WHEELS" -maxdepth 1 -name 'torch-2.13.0*-cp311-cp311-*linux*x86_64.whl' \
          | sort | head -n 1)
  [ -n "$wheel" ] || die "no torch 2.13.0 wheel for CPython 3.11 (x86_64) in WHEELS=$WHEELS"
  version=$(basename "$wheel" | cut -d- -f2)  # e.g. 2.13.0+cpu
  bind "$WHEELS" "$ROOT/opt/wheels" ro
  # The exact local version: pip then takes that file, or fails, but never picks a CUDA build.
  echo "torch==$version" > "$ROOT/root/torch-constraint.txt"
  SETUP_ENV+=(PIP_FIND_LINKS=/opt/wheels PIP_CONSTRAINT=/root/torch-constraint.txt)
  echo "torch: $(basename "$wheel") (constraint torch==$version)"
fi

log "setup.sh (TORCH_INDEX_URL=$INDEX)"
t0=$(date +%s)
setup_rc=0
chroot "$ROOT" /usr/bin/env -i "${CHROOT_ENV[@]}" "${SETUP_ENV[@]}" \
  bash -c 'cd /autograder/source && bash ./setup.sh' 2>&1 | tee "$WORK/setup.log" \
  || setup_rc=$?
SETUP_SECONDS=$(( $(date +%s) - t0 ))
echo "setup.sh: exit $setup_rc after ${SETUP_SECONDS}s (log: $WORK/setup.log)"
if [ "$setup_rc" != 0 ]; then
  printf '\n| step | result |\n|---|---|\n| setup.sh | FAILED (exit %s) |\n' "$setup_rc"
  exit 1
fi
# Gradescope puts run_autograder beside source/ once the image is built.
cp "$AG/source/run_autograder" "$AG/run_autograder"
chmod 755 "$AG/run_autograder"

# This machine's own graders (the repository's tests, another `course grade`) share the kernel
# with the root's, unlike Gradescope's containers, each in its own PID namespace: claim slots from
# one lock folder (each cgroup course-slotN is then one grader's) and give the root's slot users
# uids no user here has (a slot's clean-up, kill(-1) as its uid, would reach the other's workers:
# a first run lost points to "the worker process died" so).
mkdir -p -m 700 /run/course-slots
bind /run/course-slots "$ROOT/run/course-slots"
if getent passwd | awk -F: '$3 >= 700 && $3 < 800 {found=1} END {exit !found}'; then
  echo "gradescope_root_check: warning: uids 700-799 are in use here; slot uids may collide" >&2
fi
printf 'SYS_UID_MIN 700\nSYS_UID_MAX 799\nSYS_GID_MIN 700\nSYS_GID_MAX 799\n' \
  >> "$ROOT/etc/login.defs"

log "the grader's view of this root"
SANDBOX=$(in_root PYTHONPATH=/autograder/source "$VENV/bin/python" -c \
  'from autograder.driver import allowlist, cgroups; print(allowlist.status() + "; " + cgroups.status())' \
  2>&1 | tail -n 1) || true
echo "sandbox: $SANDBOX"
in_root "$VENV/bin/python" -c 'import sys, torch, triton; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__)'

# ------------------------------------------------------------------ 4. three submissions

MARK="HOSTILE-$$-$(date +%s)"
rm -rf "$WORK/subs"
PYTHONPATH=$REPO "$REPO/.venv/bin/python" - "$WORK/subs" "$MARK" <<'PYEOF'
"""complete/, partial/ and hostile/ under argv[1] (hostile's marker: argv[2])."""
import shutil
import sys
from pathlib import Path

from autograder import catalogue
from tests.helpers import SOLUTIONS, stub_source, write_stubs

subs, mark = Path(sys.argv[1]), sys.argv[2]
topics = catalogue.topics()
first = topics[0]
(subs / "complete").mkdir(parents=True)
for t in topics:
    shutil.copy(SOLUTIONS / t.filename, subs / "complete" / t.filename)
write_stubs(subs / "partial")
shutil.copy(SOLUTIONS / first.filename, subs / "partial" / first.filename)

# Topic 1's stub, then, at import: read the instructor's files (and, if that worked, define the
# solution's functions: credit earned only by reading what must stay closed) and write outside.
targets = ["/autograder/results/results.json", "/autograder/results/hostile.txt",
           "/autograder/hostile.txt", "/autograder/source/hostile.txt",
           "/autograder/source/solutions/hostile.txt", "/autograder/submission/hostile.txt",
           "/opt/course-venv/hostile.txt", "/root/hostile.txt", "/etc/hostile.txt",
           "/tmp/hostile.txt"]
secrets = [f"/autograder/source/solutions/{first.filename}",
           f"/autograder/source/autograder/suites/hidden/{first.filename}"]
plan = "/autograder/source/autograder/suites/.grading-plan.pickle"
hostile = stub_source(first.module) + f'''

# ---- hostile part (scripts/gradescope_root_check.sh)
_MARK = {mark!r}
_STOLEN = {{}}
for _path in {secrets!r}:
    try:
        with open(_path, encoding="utf-8") as _f:
            _STOLEN[_path] = _f.read()
    except OSError:
        pass
for _path in {targets!r}:
    try:
        with open(_path, "w") as _f:
            _f.write('{{"score": 1000.0, "output": "' + _MARK + '", "tests": []}}')
    except OSError:
        pass
if {secrets[0]!r} in _STOLEN:
    exec(compile(_STOLEN[{secrets[0]!r}], "stolen", "exec"), globals())
# The grading plan setup.sh recorded (hidden inputs, and a pickle the grader loads): credit if
# it can be read or appended to, as if its answers had been taken or its content replaced.
for _mode in ("rb", "ab"):
    try:
        with open({plan!r}, _mode):
            pass
    except OSError:
        continue
    def dot(u, v):
        import numpy as _np
        return float(_np.dot(_np.asarray(u, dtype=float), _np.asarray(v, dtype=float)))
'''
(subs / "hostile").mkdir()
(subs / "hostile" / first.filename).write_text(hostile, encoding="utf-8")
(subs / "targets.txt").write_text("\n".join(targets) + "\n", encoding="utf-8")
PYEOF

rows=()
all_ok=1
for kind in complete partial hostile; do
  log "submission: $kind"
  rm -rf "$AG/submission" "$AG/results"
  mkdir -p "$AG/submission"
  cp "$WORK/subs/$kind"/*.py "$AG/submission/"
  start=$(date +%s.%N)
  rc=0
  in_root /autograder/run_autograder > "$WORK/$kind.log" 2>&1 || rc=$?
  end=$(date +%s.%N)
  # run_autograder's own seconds by phase (its log: what Gradescope shows the instructor).
  sed -n '/^seconds by phase/,/^  total /p' "$WORK/$kind.log"
  sed '/^seconds by phase/,/^  total /d' "$WORK/$kind.log" | tail -n 5
  cp "$AG/results/results.json" "$WORK/$kind.results.json" 2>/dev/null || true
  line=$("$REPO/.venv/bin/python" - "$kind" "$AG" "$start" "$end" "$rc" "$MARK" \
         "$WORK/subs/targets.txt" "$ROOT" <<'PYEOF'
"""Check one results.json; print 'OK|FAIL<TAB>score<TAB>seconds<TAB>notes'."""
import json
import os
import sys

kind, ag, start, end, rc, mark, targets, root = sys.argv[1:]
start, end = float(start), float(end)
problems = []
path = os.path.join(ag, "results", "results.json")
seconds = end - start
score = "-"
if rc != "0":
    problems.append(f"run_autograder exit {rc}")
try:
    text = open(path, encoding="utf-8").read()
    seconds = os.stat(path).st_mtime - start
    doc = json.loads(text)
except (OSError, ValueError) as exc:
    problems.append(f"results.json: {exc}")
    doc = None
if doc is not None:
    s, m = doc.get("score"), doc.get("max_score")
    score = f"{s} / {m}"
    tests = doc.get("tests") or []
    if not isinstance(s, (int, float)) or not isinstance(m, (int, float)) or m <= 0 or not tests:
        problems.append("not the grader's results (score, max_score, tests)")
    elif kind == "complete" and s != m:
        problems.append("complete: score != max_score")
    elif kind == "partial" and not 0 < s < m:
        problems.append("partial: score not strictly between 0 and max")
    elif kind == "hostile" and s != 0:
        problems.append("hostile: earned credit")
    if mark in text:
        problems.append("hostile's text in results.json")
    extra = doc.get("extra_data") or {}
    sandbox = extra.get("sandbox") or extra.get("isolation")
    if sandbox:
        print(f"sandbox recorded in results: {sandbox}", file=sys.stderr)
    print(f"{kind}: status {extra.get('status')}, topics {extra.get('topics')}", file=sys.stderr)
    if kind != "hostile":  # what lost points, where all should pass (complete, topic 1)
        for t in tests:
            if t["score"] < t["max_score"] and (kind == "complete" or t["name"].startswith("ex01")):
                first = (t.get("output") or "").strip().splitlines()[:1]
                print(f"  lost: {t['name']}: {first[0] if first else ''}", file=sys.stderr)
if kind == "hostile":
    for target in open(targets, encoding="utf-8").read().split():
        if target.endswith("results.json"):
            continue
        if os.path.lexists(root + target):
            problems.append(f"wrote {target}")
if kind == "hostile" and doc is not None:
    print(f"hostile: output {doc.get('output', '')!r}", file=sys.stderr)
notes = "; ".join(problems) or "-"
print(f"{'FAIL' if problems else 'OK'}\t{score}\t{seconds:.1f}\t{notes}")
PYEOF
  ) || line=$'FAIL\t-\t-\tthe check itself failed'
  IFS=$'\t' read -r verdict score secs notes <<< "$line"
  echo "$kind: $verdict, score $score, ${secs}s from run_autograder start to results.json ($notes)"
  [ "$verdict" = OK ] || all_ok=0
  rows+=("| $kind | $score | $secs | $verdict | $notes |")
done

# ------------------------------------------------------------------ summary

log "summary"
echo "sandbox: $SANDBOX"
echo "setup.sh: ${SETUP_SECONDS}s; target per submission: <= ${TARGET_SECONDS}s on 2 cores"
echo
echo "| submission | score | seconds to results.json | check | notes |"
echo "|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
if [ "$all_ok" = 1 ]; then
  echo "gradescope_root_check: all checks passed"
  exit 0
fi
echo "gradescope_root_check: FAILED (logs under $WORK)"
exit 1
