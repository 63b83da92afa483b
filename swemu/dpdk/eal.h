#pragma once
// DPDK's Environment Abstraction Layer: its arguments come from the config's [eal] args and
// from everything after "--" on swemu's command line (in that order, so the command line can
// add to the file). Without usable hugepages swemu adds --no-huge itself, so it runs anywhere.
#include <ostream>
#include <string>
#include <vector>

#include "pipeline/core/status.h"

namespace swemu {

struct EalArgs {
  std::vector<std::string> args;  // without argv[0]
  bool added_no_huge = false;     // warn the user once
};

// Splits on whitespace (no quoting: EAL arguments never contain spaces in swemu's configs).
std::vector<std::string> SplitWords(const std::string& text);
// True when /proc/meminfo reports free hugepages and /proc/mounts has a hugetlbfs mount.
bool HugepagesUsable(const std::string& meminfo, const std::string& mounts);
// The final argument list: file args, command-line args, then what swemu adds: --no-huge and
// -m 256 without usable hugepages (unless --no-huge, -m or --socket-mem were given), and
// --log-level=notice unless a log level was given (keeps EAL's start-up chatter off stderr).
EalArgs MakeEalArgs(const std::string& file_args, const std::vector<std::string>& cli_args,
                    bool hugepages_usable);
// Reads /proc/meminfo and /proc/mounts.
bool HostHugepagesUsable();

// rte_eal_init; prints the --no-huge warning on `err`. Error: "EAL: <rte_strerror(rte_errno)>".
Status InitEal(const EalArgs& eal, std::ostream& err);
void CleanupEal();

}  // namespace swemu
