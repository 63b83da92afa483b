#!/usr/bin/env bash
# The two Quick start commands of the README, for a fresh Debian 12 machine as root:
#   tools/bootstrap.sh demo   install what is missing, build, run the main job
#   tools/bootstrap.sh test   install what is missing, build (normal + ASan/UBSan), run ctest
set -euo pipefail
cd "$(dirname "$0")/.."

mode="${1:-}"
case "$mode" in
  demo|test) ;;
  *) echo "usage: tools/bootstrap.sh demo|test" >&2; exit 2 ;;
esac

packages=(build-essential cmake ninja-build pkg-config git clang libclang-rt-14-dev
          libdpdk-dev dpdk libpcap-dev libtbb-dev libboost-program-options-dev
          libgtest-dev libgmock-dev libbenchmark-dev iproute2
          python3-matplotlib tshark tcpreplay tcpdump iperf3 ethtool coinor-libclp-dev
          python3-pybind11 pybind11-dev python3-numpy python3-torch python3-sklearn
          libns3-dev libopenmpi-dev openmpi-bin time)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

jobs=$(nproc)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$jobs"

if [ "$mode" = demo ]; then
  # The ATP demo: swemu on vhost-user ports, 4 workers and a PS over virtio_user, ResNet-50's
  # gradients with and without in-network aggregation (docs/cli.md, "swemu-atp").
  exec build/tools/swemu-atp demo --out-dir out/atp_demo
fi

# The whole suite: unit, scenario and end-to-end tests, then the same tests plus the fuzzers
# (bounded time) under AddressSanitizer and UndefinedBehaviorSanitizer with clang.
# The README blocks that take minutes (label readme_long) are left out: README, Quick start.
ctest --test-dir build --output-on-failure -j "$jobs" -LE readme_long
CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DSWEMU_SANITIZE=ON -DSWEMU_FUZZ=ON -DSWEMU_BENCH=OFF >/dev/null
cmake --build build-asan -j "$jobs"
# Long experiment runs whose results the normal build checks are left out here: the list, and
# the shorter tests that run their code under the sanitizers, is tests/sanitized_skip.txt.
left_out=$(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' tests/sanitized_skip.txt)
skip=$(sed 's/[].[*^$+?(){}|]/\\&/g' <<<"$left_out" | paste -sd '|')
echo "bootstrap: build-asan leaves out $(wc -l <<<"$left_out") long runs (tests/sanitized_skip.txt)"
ctest --test-dir build-asan --output-on-failure -j "$jobs" -E "^($skip)\$"
