#!/usr/bin/env bash
# Shards on a real Slurm cluster: one node, on this machine (issue 37).
#
# Installs Debian's slurm-wlm and munge (apt-get, as root) when they are missing, starts munged
# (unless a working one runs), then slurmctld and slurmd with a minimal slurm.conf of its own
# (this host's name, its CPUs, ports 16817/16818, everything under the work folder), grades the
# example class (examples/submissions) once unsharded (`course grade --jobs 2`), then has Slurm
# grade it in N=4 shards: the file `course cluster slurm` prints, run as an instructor would
# (an array job `sbatch --array=0-3` and a report job that depends on it). Waits for the report
# job, then compares the two output folders: grades.csv, report.html and every feedback file
# byte for byte, every results file byte for byte but for execution_time. Prints both wall
# times and a verdict. Exit 0 only if they are identical and every job succeeded.
#
#   sudo scripts/slurm_check.sh          # from anywhere; a few minutes (the install: ~1 more)
#   sudo scripts/slurm_check.sh --keep   # leave the daemons running afterwards
#
# Do not edit the checkout's autograder/ or solutions/ while it runs: the grader version digests
# them, so the two runs would carry different versions (and report.html names the version).
# Stops only the daemons it started (by their pid files). Environment:
#   SLURM_CHECK_DIR   work folder (default build/slurm-check in the repository; emptied first)
#   SHARDS            how many shards (default 4)
#   CPUS              the node's CPUs in slurm.conf (default: nproc)
set -euo pipefail

cd "$(dirname "$0")/.."
REPO=$PWD
WORK=${SLURM_CHECK_DIR:-$REPO/build/slurm-check}
SHARDS=${SHARDS:-4}
CPUS=${CPUS:-$(nproc)}
CLASS=$REPO/examples/submissions
COURSE=$REPO/.venv/bin/course
PY=$REPO/.venv/bin/python
KEEP=0
WAIT_SECONDS=1800

die() { echo "slurm_check: $*" >&2; exit 2; }
log() { printf '\n== %s\n' "$*"; }

for arg in "$@"; do
  case $arg in
    --keep) KEEP=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$arg' (try --help)" ;;
  esac
done
[ "$(id -u)" = 0 ] || die "must run as root (apt-get, the Slurm daemons)"
[ -x "$COURSE" ] || die "$COURSE missing: run 'make' first"
case $WORK in /|"") die "SLURM_CHECK_DIR must not be '$WORK'" ;; esac

missing=()
command -v slurmctld >/dev/null || missing+=(slurm-wlm)
command -v munged >/dev/null || missing+=(munge)
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  apt-get update -q
  # RUNLEVEL=1: the packages' scripts do not start their daemons (this script starts its own).
  RUNLEVEL=1 DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi
log "versions: $(slurmctld -V), $(munged -V 2>&1 | head -1)"

# ------------------------------------------------------------------ munge

STARTED_MUNGE=0
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  log "starting munged"
  if [ ! -s /etc/munge/munge.key ]; then
    mungekey --create --keyfile=/etc/munge/munge.key
    chown munge:munge /etc/munge/munge.key
    chmod 0400 /etc/munge/munge.key
  fi
  install -d -o munge -g munge -m 0755 /run/munge
  runuser -u munge -- /usr/sbin/munged
  STARTED_MUNGE=1
  munge -n | unmunge >/dev/null || die "munged does not answer"
fi

# ------------------------------------------------------------------ slurm

HOST=$(hostname -s)
rm -rf "$WORK"
mkdir -p "$WORK/state" "$WORK/spool"
CONF=$WORK/slurm.conf
cat >"$CONF" <<EOF
# slurm_check.sh's one-node cluster
ClusterName=coursecheck
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
MinJobAge=3600
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=check Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$CONF

stop_daemons() {
  local f
  for f in "$WORK/slurmd.pid" "$WORK/slurmctld.pid"; do
    [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
  done
  if [ "$STARTED_MUNGE" = 1 ] && [ -s /run/munge/munged.pid ]; then
    kill "$(cat /run/munge/munged.pid)" 2>/dev/null || true
  fi
}
if [ "$KEEP" = 0 ]; then trap stop_daemons EXIT; fi

log "starting slurmctld and slurmd ($HOST, $CPUS CPUs)"
slurmctld -f "$CONF" -i
slurmd -f "$CONF"
for _ in $(seq 60); do
  state=$(sinfo -h -n "$HOST" -o %t 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 1
done
sinfo
[ "$state" = idle ] || die "the node is '$state', not idle (see $WORK/slurmd.log, slurmctld.log)"

# ------------------------------------------------------------------ the two runs

log "unsharded: course grade --class examples/submissions --jobs 2"
t0=$(date +%s.%N)
"$COURSE" grade --class "$CLASS" --out "$WORK/whole" --jobs 2 >"$WORK/whole.log" 2>&1 \
  || { tail -30 "$WORK/whole.log"; die "the unsharded run failed"; }
t1=$(date +%s.%N)
tail -3 "$WORK/whole.log"

log "sharded: course cluster slurm --shards $SHARDS, submitted"
"$COURSE" cluster slurm --class "$CLASS" --out "$WORK/sharded" --shards "$SHARDS" \
  >"$WORK/grade.sh"
t2=$(date +%s.%N)
bash "$WORK/grade.sh" | tee "$WORK/submitted.txt"
report=$(sed -n 's/^report job: \([0-9]*\).*/\1/p' "$WORK/submitted.txt")
array=$(sed -n 's/^array job: \([0-9]*\).*/\1/p' "$WORK/submitted.txt")
[ -n "$report" ] || die "no report job id in the script's output"
for _ in $(seq "$WAIT_SECONDS"); do
  [ -z "$(squeue -h -j "$array,$report" 2>/dev/null)" ] && break
  sleep 1
done
t3=$(date +%s.%N)
[ -z "$(squeue -h -j "$array,$report")" ] || die "jobs still queued after $WAIT_SECONDS s"

log "jobs"
failed=0
# One line per array task (-o), then the report job's.
while read -r line; do
  job=$(sed -n 's/^JobId=\([0-9]*\) .*/\1/p' <<<"$line")
  name=$(sed -n 's/.*JobName=\([^ ]*\).*/\1/p' <<<"$line")
  task=$(sed -n 's/.*ArrayTaskId=\([^ ]*\).*/\1/p' <<<"$line")
  st=$(sed -n 's/.*JobState=\([^ ]*\).*/\1/p' <<<"$line")
  rc=$(sed -n 's/.* ExitCode=\([^ ]*\).*/\1/p' <<<"$line")
  run=$(sed -n 's/.*RunTime=\([^ ]*\).*/\1/p' <<<"$line")
  echo "job $job $name${task:+ task $task}: $st, exit $rc, ran $run"
  [ "$st" = COMPLETED ] || failed=1
done < <(scontrol -o show job "$array"; scontrol -o show job "$report")
for f in "$WORK"/sharded/slurm/*.log; do
  echo "--- $(basename "$f") (last lines)"
  tail -2 "$f"
done

log "comparing the merged shards with the unsharded run"
"$PY" - "$WORK/whole" "$WORK/sharded" <<'EOF' || failed=1
import json, sys
from pathlib import Path

whole, sharded = map(Path, sys.argv[1:])
def files(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and p.parts[len(root.parts)] != "slurm")
bad = []
if files(whole) != files(sharded):
    bad.append(f"different files: {sorted(set(files(whole)) ^ set(files(sharded)))}")
for rel in files(whole):
    a, b = whole / rel, sharded / rel
    if not b.exists():
        continue
    if rel.startswith("results/"):
        da, db = (json.loads(p.read_text("utf-8")) for p in (a, b))
        ta, tb = da.pop("execution_time"), db.pop("execution_time")
        same = da == db
        what = "" if same else " (differs in: " + ", ".join(sorted(
            k for k in {**da, **da["extra_data"]} if da.get(k, da["extra_data"].get(k))
            != db.get(k, db["extra_data"].get(k)))) + ")"
        print(f"{rel}: {'identical' if same else 'DIFFERENT'} but for execution_time "
              f"({ta} s unsharded, {tb} s sharded){what}")
    else:
        same = a.read_bytes() == b.read_bytes()
        print(f"{rel}: {'byte-identical' if same else 'DIFFERENT'}")
    if not same:
        bad.append(rel)
print("RESULT:", "identical" if not bad else f"{len(bad)} difference(s): {bad}")
sys.exit(1 if bad else 0)
EOF

printf '\n%-34s %8s\n' "run (example class, $CPUS CPUs)" "wall s"
printf '%-34s %8.1f\n' "unsharded, course grade --jobs 2" "$(awk "BEGIN { print $t1 - $t0 }")"
printf '%-34s %8.1f\n' "Slurm, $SHARDS shards + report job" "$(awk "BEGIN { print $t3 - $t2 }")"
[ "$failed" = 0 ] && echo "slurm_check: PASS" || echo "slurm_check: FAIL"
exit "$failed"
