#!/usr/bin/env bash
# Builds the lesson site's mkdocs.yml with Zensical as well as with mkdocs, and compares them
# (opt-in, like scripts/slurm_check.sh; not part of `make test`).
#
# Zensical (on the package index) is the successor of mkdocs-material, which is in maintenance
# mode; it reads mkdocs.yml. This check says how far the course is from switching:
#   1. the page lists of the two builds (every .html file) must be the same;
#   2. every plugin and hook mkdocs.yml names must have visibly run in Zensical's build: each
#      has a marker below, something it puts into the pages (a plugin or hook with no marker
#      fails too, so that a new one gets a marker);
#   3. what had to be changed in a copy of mkdocs.yml for Zensical to read it at all is printed.
# Exit 0 only if 1 and 2 hold; 1 when they do not; 2 when a build fails.
#
#   scripts/zensical_check.sh           # from anywhere; about a minute after the first run
#
# Zensical goes into its own venv, never into .venv (mkdocs and Zensical pin different
# versions of the same Markdown stack): $ZENSICAL_VENV, default build/zensical-venv, made on
# the first run with Zensical and the mkdocstrings versions .venv has (pip, package index).
# Environment: ZENSICAL_VENV, ZENSICAL_CHECK_DIR (default build/zensical-check; emptied first;
# must lie inside the repository, as Zensical requires of a site folder).
# The design pages' section "The lesson site and Zensical" (docs/design/README.md) records
# what this found and what stands between the site and a switch.
set -euo pipefail

cd "$(dirname "$0")/.."
REPO=$PWD
PY=$REPO/.venv/bin/python
ZVENV=${ZENSICAL_VENV:-$REPO/build/zensical-venv}
WORK=${ZENSICAL_CHECK_DIR:-$REPO/build/zensical-check}
CONFIG=$REPO/.zensical-check.yml   # Zensical wants its config's folder to hold docs/ and the site

die() { echo "zensical_check: $*" >&2; exit 2; }
log() { printf '\n== %s\n' "$*"; }

[ -x "$PY" ] || die "no .venv: run 'make venv' first"
case $WORK in "$REPO"/*) ;; *) die "ZENSICAL_CHECK_DIR must lie inside $REPO" ;; esac

if [ ! -x "$ZVENV/bin/zensical" ]; then
  log "installing Zensical into $ZVENV (its own venv)"
  python3 -m venv "$ZVENV"
  # mkdocstrings as .venv has it: the API reference is the part most likely to differ.
  pins=$("$PY" -c 'from importlib.metadata import version as v
print(f"mkdocstrings=={v(\"mkdocstrings\")} mkdocstrings-python=={v(\"mkdocstrings-python\")}")')
  "$ZVENV/bin/pip" install -q zensical $pins
fi
echo "zensical $("$ZVENV/bin/zensical" --version 2>&1 | tail -1)"

rm -rf "$WORK"
mkdir -p "$WORK"
trap 'rm -f "$CONFIG"' EXIT

log "mkdocs build --strict"
bash scripts/setup_docs.sh
t0=$(date +%s)
NO_MKDOCS_2_WARNING=1 "$REPO/.venv/bin/mkdocs" build --strict --quiet --site-dir "$WORK/mkdocs" \
  || die "mkdocs build failed"
echo "built in $(( $(date +%s) - t0 )) s"

log "zensical build (a copy of mkdocs.yml: $(basename "$CONFIG"))"
# What Zensical cannot read as it stands, changed in the copy only; printed as findings.
"$PY" - "$REPO/mkdocs.yml" "$CONFIG" "${WORK#"$REPO"/}/zensical" <<'EOF'
import re, sys
src, dest, site = sys.argv[1:]
text = open(src, encoding="utf-8").read()
changes = []
if "!relative $config_dir" in text:
    text = text.replace("!relative $config_dir", ".")
    changes.append("the YAML tag `!relative $config_dir` (pymdownx.snippets' base_path): "
                   "Zensical's loader has no constructor for it; the copy says '.' (the "
                   "repository, Zensical's working folder)")
text = re.sub(r"^docs_dir: .*$", lambda m: m.group(0) + f"\nsite_dir: {site}", text, count=1,
              flags=re.M)
open(dest, "w", encoding="utf-8").write(text)
for c in changes:
    print("changed for Zensical:", c)
EOF
t0=$(date +%s)
# The API reference's griffe extension (docs/hooks/griffe_examples.py) imports autograder.
PYTHONPATH=$REPO "$ZVENV/bin/zensical" build -f "$CONFIG" >"$WORK/zensical.log" 2>&1 \
  || { tail -30 "$WORK/zensical.log" >&2; die "zensical build failed (log: $WORK/zensical.log)"; }
grep -v '^$' "$WORK/zensical.log" | tail -3
echo "built in $(( $(date +%s) - t0 )) s"

log "comparing the two sites"
"$PY" - "$REPO/mkdocs.yml" "$WORK/mkdocs" "$WORK/zensical" <<'EOF'
import re, sys
from pathlib import Path

import yaml

config_path, mk, zs = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])


class Loader(yaml.SafeLoader):
    pass


# mkdocs' own tags (!relative, !ENV) carry nothing this comparison needs
Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
config = yaml.load(open(config_path, encoding="utf-8"), Loader=Loader)

def pages(site):
    return {p.relative_to(site).as_posix() for p in site.rglob("*.html")}

def any_page(site, pattern):
    return any(re.search(pattern, p.read_text(errors="ignore")) for p in site.rglob("*.html"))

failures = []
a, b = pages(mk), pages(zs)
print(f"pages: mkdocs {len(a)}, zensical {len(b)}, in both {len(a & b)}")
for p in sorted(a - b):
    failures.append(f"page missing from Zensical's site: {p}")
for p in sorted(b - a):
    failures.append(f"page only in Zensical's site: {p}")

# What each plugin and hook of mkdocs.yml leaves in the pages: (what, regex over the HTML).
MARKERS = {
    "search": ("a search index", None),  # checked as files below: each tool has its own
    "mkdocstrings": ("rendered API entries, no raw ':::' lines",
                     r'class="doc doc-object'),
    "docs/hooks/build_assets.py": ("inline maths kept with its punctuation (on_page_content)",
                                   r'class="math-punct"'),
}
names = []
for plugin in config.get("plugins", []):
    names.append(next(iter(plugin)) if isinstance(plugin, dict) else plugin)
names += config.get("hooks", [])
for name in names:
    if name not in MARKERS:
        failures.append(f"{name}: no marker in scripts/zensical_check.sh to tell whether it ran")
        continue
    what, pattern = MARKERS[name]
    if name == "search":
        ran = {"mkdocs": (mk / "search" / "search_index.json").is_file(),
               "zensical": (zs / "search.json").is_file() or (zs / "search").is_dir()}
    else:
        ran = {"mkdocs": any_page(mk, pattern), "zensical": any_page(zs, pattern)}
        if name == "mkdocstrings":
            ran["zensical"] &= not any_page(zs, r"<p>:::\s")
    verdict = "runs" if ran["zensical"] else "IGNORED"
    print(f"{name}: {verdict} in Zensical ({what}; in mkdocs: {'yes' if ran['mkdocs'] else 'no'})")
    if not ran["mkdocs"]:
        failures.append(f"{name}: its marker is not in mkdocs' build either: fix the marker")
    elif not ran["zensical"]:
        failures.append(f"{name}: Zensical ignores it")

if failures:
    print("\nFAIL:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("\nOK: the same pages, and every plugin and hook ran")
EOF
