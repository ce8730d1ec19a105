#!/usr/bin/env bash
# Install what the grader's sandbox uses from the system: Debian's bubblewrap (the workers'
# allow-list view, autograder/driver/allowlist.py) and libseccomp (the keyring filter, bound by
# pyseccomp). Called by `make` at set-up and by the Gradescope image's setup.sh.
# Only as root with apt-get (CI, Gradescope, a grading server); elsewhere it says what is
# missing and exits 0: the grader then falls back as docs/design/threat-model.md describes.
set -euo pipefail

missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
# (not `grep -q`: with pipefail, ldconfig's SIGPIPE would count as "missing")
case "$(ldconfig -p 2>/dev/null || true)" in *libseccomp.so.2*) ;; *) missing+=(libseccomp2) ;; esac
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "install_sandbox: missing ${missing[*]}; not root with apt-get, so not installed." >&2
  echo "install_sandbox: grading still works, with the fallback isolation (see docs/design/threat-model.md)." >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
exec 9>/tmp/install_sandbox.lock
flock 9
echo "install_sandbox: installing ${missing[*]}" >&2
if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
