#!/bin/bash
# tools/new_program.sh into a scratch copy of the files it reads (never the real tree): bad
# names and clashes end with one line, status 2 and no file; --dry-run lists and writes nothing;
# a real run leaves no trace of flow_ecn in the new files, and they compile against the tree.
#   new_program_test.sh SOURCE_DIR CXX SCRATCH_DIR
set -euo pipefail

src=$1 cxx=$2 scratch=$3
tree=$scratch/tree
fail() { echo "FAIL: $*" >&2; exit 1; }

rm -rf "$scratch"
mkdir -p "$tree/tools" "$tree/pipeline/programs" "$tree/tests/pipeline/programs" "$tree/configs"
cp "$src/tools/new_program.sh" "$tree/tools/"
for f in pipeline/programs/flow_ecn.h pipeline/programs/flow_ecn.cc \
  tests/pipeline/programs/flow_ecn_test.cc configs/flow_ecn.ini; do
  cp "$src/$f" "$tree/$f"
done
gen=$tree/tools/new_program.sh
snapshot() { (cd "$tree" && find . -type f | sort); }
before=$(snapshot)

# Refusals: status 2, one line on stderr, nothing written.
for args in "Bad-Name" "9lives" "trailing_" "" "flow_ecn" "a b" "--bogus x"; do
  set +e
  # shellcheck disable=SC2086  # the words of $args are the arguments
  err=$("$gen" $args 2>&1 >/dev/null)
  status=$?
  set -e
  [[ $status == 2 ]] || fail "'$args': status $status, want 2"
  [[ $(wc -l <<<"$err") == 1 && $err == new_program:* ]] || fail "'$args': stderr '$err'"
  [[ $(snapshot) == "$before" ]] || fail "'$args' wrote a file"
done

# --dry-run names the four files and writes nothing.
out=$("$gen" --dry-run heavy_hitter)
[[ $(grep -c '^would create' <<<"$out") == 4 ]] || fail "dry run: $out"
grep -q 'would create pipeline/programs/heavy_hitter.cc' <<<"$out" || fail "dry run: $out"
[[ $(snapshot) == "$before" ]] || fail "--dry-run wrote a file"

# The real run.
"$gen" heavy_hitter >/dev/null
new=(pipeline/programs/heavy_hitter.h pipeline/programs/heavy_hitter.cc
  tests/pipeline/programs/heavy_hitter_test.cc configs/heavy_hitter.ini)
for f in "${new[@]}"; do
  [[ -s $tree/$f ]] || fail "$f not created"
  ! grep -n 'flow_ecn\|FlowEcn\|flow-ecn' "$tree/$f" || fail "$f still names flow_ecn"
done
grep -q 'SWEMU_REGISTER_PROGRAM("heavy_hitter", HeavyHitterProgram)' \
  "$tree/pipeline/programs/heavy_hitter.cc" || fail "the program is not registered by its name"
grep -q '^program = heavy_hitter$' "$tree/configs/heavy_hitter.ini" || fail "config's program"

# A second run refuses and leaves the files as they are.
sum=$(cd "$tree" && md5sum "${new[@]}")
if "$gen" heavy_hitter 2>/dev/null; then fail "a second run was not refused"; fi
[[ $(cd "$tree" && md5sum "${new[@]}") == "$sum" ]] || fail "a second run changed the files"

# The new program and its test compile against the tree, with the project's warnings.
flags=(-std=c++20 -march=corei7 -Wall -Wextra -Werror -I "$tree" -I "$src"
  -DSWEMU_SOURCE_DIR=\""$src"\" -DSWEMU_BINARY_DIR=\""$scratch"\")
"$cxx" "${flags[@]}" -c "$tree/pipeline/programs/heavy_hitter.cc" -o "$scratch/program.o"
"$cxx" "${flags[@]}" -c "$tree/tests/pipeline/programs/heavy_hitter_test.cc" -o "$scratch/test.o"
symbols=$(nm -C "$scratch/program.o")
grep -q 'HeavyHitterProgram::Load' <<<"$symbols" || fail "no HeavyHitterProgram::Load"
echo "new_program: ok"
