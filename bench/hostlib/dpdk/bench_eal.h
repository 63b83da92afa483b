#pragma once
// EAL once per benchmark process (every benchmark in hostlib_dpdk_bench shares it): no
// hugepages, no PCI scan, lcore 1 (swemu takes lcore 0 on a small machine), its own file prefix.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "hostlib/dpdk/dpdk_host.h"

namespace swemu::bench {

inline const std::string& EalPrefix() {
  static const std::string prefix = "swemu-bench-hostlib-" + std::to_string(getpid());
  return prefix;
}

inline void CleanupEalAtExit() {
  DpdkHost::CleanupEal();
  std::error_code ignored;
  std::filesystem::remove_all("/var/run/dpdk/" + EalPrefix(), ignored);
}

inline bool EalReady() {
  static const bool ready = [] {
    Status status = DpdkHost::InitEal(
        {"--no-huge", "-m", "512", "--no-pci", "-l", "1", "--file-prefix", EalPrefix()}, std::cerr);
    if (!status.ok()) std::cerr << status.message() << "\n";
    std::atexit(CleanupEalAtExit);
    return status.ok();
  }();
  return ready;
}

}  // namespace swemu::bench
