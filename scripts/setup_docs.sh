#!/usr/bin/env bash
# Vendor MathJax 3 for the lesson site, so that the maths renders with no network at read time.
# Fetches the pinned release from the npm registry with `npm pack` (no node_modules, no CDN) and
# copies the parts the site loads into docs/assets/vendor/mathjax/ (git-ignored).
# Idempotent: returns at once when the pinned version is already in place.
set -euo pipefail

MATHJAX_VERSION=3.2.2   # mathjax@3; npm's `latest` is 4.x, whose files are laid out differently
root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/docs/assets/vendor/mathjax"
stamp="$dest/.version"
# What the stamp holds: the version, and that its CDN fallbacks were taken out (below).
vendored="$MATHJAX_VERSION offline"

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$vendored" ] && [ -f "$dest/tex-mml-chtml.js" ]; then
  exit 0
fi
# Concurrent callers (parallel test workers) wait here, then find the work done.
mkdir -p "$root/docs/assets/vendor"
exec 9>"$root/docs/assets/vendor/.lock"
flock 9
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$vendored" ] && [ -f "$dest/tex-mml-chtml.js" ]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "setup_docs: npm is needed once to fetch mathjax@$MATHJAX_VERSION (apt-get install npm)" >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "setup_docs: fetching mathjax@$MATHJAX_VERSION from the npm registry" >&2
(cd "$tmp" && npm pack --silent "mathjax@$MATHJAX_VERSION" >/dev/null)
tar -xzf "$tmp/mathjax-$MATHJAX_VERSION.tgz" -C "$tmp"
es5="$tmp/package/es5"

# The combined TeX+MathML → CommonHTML component, its web fonts, the TeX extensions it may
# autoload, and the menu / accessibility components the page can load on demand.
rm -rf "$dest.new"
mkdir -p "$dest.new/output/chtml/fonts" "$dest.new/input/tex"
cp "$es5/tex-mml-chtml.js" "$dest.new/"
cp -R "$es5/output/chtml/fonts/woff-v2" "$dest.new/output/chtml/fonts/"
cp -R "$es5/input/tex/extensions" "$dest.new/input/tex/"
cp -R "$es5/a11y" "$es5/ui" "$dest.new/"
cp "$tmp/package/LICENSE" "$dest.new/LICENSE"
# The speech-rule engine bundled in the menu and accessibility components falls back to
# jsdelivr for its speech maps and, in old browsers, an XPath polyfill (a reader who turns
# speech on in MathJax's menu). The site never reaches a CDN: those addresses are pointed into
# the site, where they are not served (speech output is not offered offline).
{ grep -rlZ 'https://cdn.jsdelivr.net/npm/' "$dest.new" || true; } | xargs -0 -r \
  sed -i 's#https://cdn.jsdelivr.net/npm/#../not-vendored/#g'
if grep -rq 'cdn.jsdelivr.net' "$dest.new"; then
  echo "setup_docs: a CDN address is left in the vendored MathJax" >&2
  exit 1
fi
echo "$vendored" >"$dest.new/.version"
rm -rf "$dest"
mv "$dest.new" "$dest"
echo "setup_docs: MathJax $MATHJAX_VERSION is in ${dest#"$root"/}" >&2
