#!/usr/bin/env bash
# Install Debian's chromium for the docs' browser test (tests/docs/test_browser.py).
# Never downloads a Playwright browser build: Playwright drives /usr/bin/chromium.
# Does nothing when chromium is already there; needs root (apt-get) otherwise.
# Exit codes: 0 chromium available, 3 missing and cannot install (not root / no apt-get).
set -euo pipefail

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

if [ -x "$CHROMIUM" ]; then
  exit 0
fi
if [ "$(id -u)" != "0" ]; then
  echo "install_chromium: $CHROMIUM is missing and installing it needs root (apt-get)" >&2
  exit 3
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install_chromium: $CHROMIUM is missing and there is no apt-get on this machine" >&2
  exit 3
fi

export DEBIAN_FRONTEND=noninteractive
# Serialise concurrent callers (pytest-xdist workers): apt holds its own lock, but a second
# caller waiting here can then see the finished install and skip the work.
exec 9>/tmp/install_chromium.lock
flock 9
if [ -x "$CHROMIUM" ]; then
  exit 0
fi
echo "install_chromium: installing Debian's chromium (about a minute)" >&2
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
[ -x "$CHROMIUM" ]
