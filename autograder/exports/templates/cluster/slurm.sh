#!/usr/bin/env bash
# Grade a class in @{shards} shards on Slurm. Written by `course cluster slurm`; run it on a
# login node with bash (not sbatch): it submits
#   - an array job of @{shards} tasks (sbatch --array=0-@{last}), task K running
#     `course grade --class CLASS --out OUT --shard K/@{shards}`, all into one output folder;
#   - a report job that starts once every task has ended (--dependency=afterany) and runs
#     `course report OUT --class CLASS`: grades.csv and report.html, or exit 1 naming the
#     submissions that have no result (a task failed: run this file again, and every shard
#     grades only what is still missing).
# The class, the output folder and the course's virtual environment must be on a file system
# that every compute node mounts at the same path. Extra sbatch options (a partition, an
# account, a time limit) go in $SBATCH_OPTIONS, e.g. SBATCH_OPTIONS="--partition=short".
# Shards that land on one node are graders of one machine: the host-wide phase lock orders
# their public and hidden phases (docs/instructors.md, shards).
set -euo pipefail

COURSE=@{course}
CLASS=@{class_dir}
OUT=@{out}
SHARDS=@{shards}
JOBS=@{jobs}

mkdir -p "$OUT/slurm"
# --wrap runs under /bin/sh: every path goes in shell-quoted (printf %q).
grade=$(printf '%q ' "$COURSE" grade --class "$CLASS" --out "$OUT" --jobs "$JOBS")
array=$(sbatch --parsable --job-name=course-grade --array=0-$((SHARDS - 1)) \
  --cpus-per-task="$JOBS" --output="$OUT/slurm/grade-%A_%a.log" ${SBATCH_OPTIONS:-} \
  --wrap="$grade --shard \"\$SLURM_ARRAY_TASK_ID/$SHARDS\"")
array=${array%%;*}  # "id;cluster" on a multi-cluster site
report=$(sbatch --parsable --job-name=course-report --dependency="afterany:$array" \
  --output="$OUT/slurm/report-%j.log" ${SBATCH_OPTIONS:-} \
  --wrap="$(printf '%q ' "$COURSE" report "$OUT" --class "$CLASS")")
report=${report%%;*}
echo "array job: $array ($SHARDS shards, logs in $OUT/slurm/)"
echo "report job: $report (then $OUT/grades.csv and $OUT/report.html)"
