#!/bin/bash
# Starts a switch program of your own from the flow_ecn example (docs/programs.md): copies its
# source, header, unit test and config under NAME, with flow_ecn renamed (FlowEcn as the CamelCase
# class prefix). Nothing needs adding to a CMakeLists.txt: pipeline/programs/ and
# tests/pipeline/programs/ are globbed (pipeline/CMakeLists.txt, tests/CMakeLists.txt), and the
# program registers itself by name (SWEMU_REGISTER_PROGRAM).
#
#   tools/new_program.sh [--dry-run] [--root DIR] NAME
#     NAME       lower_snake_case, e.g. heavy_hitter
#     --dry-run  print what would be created and change nothing
#     --root DIR the source tree to read the example from and write into (default: this one)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dry_run=0
name=

die() { echo "new_program: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --dry-run) dry_run=1; shift ;;
    --root) [[ $# -ge 2 && -n $2 ]] || die "--root: needs a directory"; root=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) [[ -z $name ]] || die "one NAME only (got $name and $1)"; name=$1; shift ;;
  esac
done

[[ -n $name ]] || die "missing NAME (see --help)"
[[ $name =~ ^[a-z][a-z0-9_]*$ && $name != *__* && $name != *_ ]] ||
  die "NAME $name: use lower_snake_case (a-z, 0-9, _), starting with a letter"
[[ -d $root ]] || die "--root $root: no such directory"

# heavy_hitter -> HeavyHitter; flow_ecn's EAL file prefix uses dashes.
camel=$(sed -E 's/(^|_)([a-z0-9])/\U\2/g' <<<"$name")
dashed=${name//_/-}

# example file -> new file, relative to the root.
declare -A files=(
  [pipeline/programs/flow_ecn.h]=pipeline/programs/$name.h
  [pipeline/programs/flow_ecn.cc]=pipeline/programs/$name.cc
  [tests/pipeline/programs/flow_ecn_test.cc]=tests/pipeline/programs/${name}_test.cc
  [configs/flow_ecn.ini]=configs/$name.ini
)

# Every check before anything is written.
for from in "${!files[@]}"; do
  [[ -f $root/$from ]] || die "$root/$from: the example is missing"
  [[ ! -e $root/${files[$from]} ]] || die "$root/${files[$from]} exists already"
done
if grep -rqs "SWEMU_REGISTER_PROGRAM(\"$name\"" "$root/pipeline/programs"; then
  die "a program named $name is registered already (pipeline/programs/)"
fi

for from in $(printf '%s\n' "${!files[@]}" | sort); do
  to=${files[$from]}
  if ((dry_run)); then
    echo "would create $to (from $from)"
  else
    sed -e '/The running example of docs\/programs.md/d' -e "s/flow_ecn/$name/g" \
      -e "s/FlowEcn/$camel/g" -e "s/flow-ecn/$dashed/g" \
      "$root/$from" >"$root/$to"
    echo "created $to"
  fi
done

cat <<EOF
next: edit the comments and the stages of pipeline/programs/$name.cc, then
  cmake -S . -B build   # picks up the new files (the lists are globs)
  ninja -C build swemu pipeline_programs_tests
  ctest --test-dir build -R ${camel} --output-on-failure
  build/swemu/swemu --config configs/$name.ini --show-resources
EOF
