#!/bin/bash
# Hashes of the sites built from the same input, to show a change to the build leaves its
# output byte-identical. Run from the repository root; CODE is the tree whose ibistatic is
# used (default: this one); WORK (default /tmp/ibistatic-hashes) holds inputs and outputs,
# always at the same paths (nginx/apache files name the output folder).
#   bash scripts/build_hashes.sh [CODE]
# For the bundled sample and a synthetic project of 2,000 items (benchmarks/make_archive.py):
# a full build, then an update after one item's title changes and one repository goes.
set -euo pipefail
ROOT=$PWD
CODE=$(realpath "${1:-$PWD}")
WORK=${WORK:-/tmp/ibistatic-hashes}
rm -rf "$WORK" && mkdir -p "$WORK"
cp -r ibistatic/sample_archive "$WORK/sample"
python3 benchmarks/make_archive.py --items 2000 --seed 0 "$WORK/synthetic" > /dev/null
edit() {  # change the title of the first item with one, remove the last repository
    python3 - "$1" <<'PY'
import sys, shutil, yaml
from pathlib import Path
items = sorted(Path(sys.argv[1]).rglob("item.yaml"))
for path in items:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if isinstance(data.get("dublin-core"), dict) and data["dublin-core"].get("title"):
        data["dublin-core"]["title"] = "Changed: " + str(data["dublin-core"]["title"])
        path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
        print("changed", path)
        break
shutil.rmtree(items[-1].parent)
print("removed", items[-1].parent)
PY
}
build() {  # the build's mode and counts (its summary less the time), then the tree's hash
    (cd "$WORK" && PYTHONPATH=$CODE python3 -m ibistatic build --config "$1" --output "$2" "${@:3}" 2>&1 || true) \
        | grep '^published' | sed 's/^published [^ ]* //; s/ in [0-9.]* s$//'
}
for project in sample synthetic; do
    config=$(ls "$WORK/$project"/*.yaml | head -1)
    out="$WORK/out-$project"
    echo "$project build: $(build "$config" "$out")"
    echo "$project full:   $(python3 "$ROOT/scripts/site_hash.py" "$out")"
    edit "$WORK/$project" > /dev/null
    echo "$project build: $(build "$config" "$out")"
    echo "$project update: $(python3 "$ROOT/scripts/site_hash.py" "$out")"
    echo "$project build: $(build "$config" "$out" --full)"
    echo "$project full after the change: $(python3 "$ROOT/scripts/site_hash.py" "$out")"
done
