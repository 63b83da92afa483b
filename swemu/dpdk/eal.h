#pragma once
// DPDK's Environment Abstraction Layer: its arguments come from the config's [eal] args and
// from everything after "--" on swemu's command line (in that order, so the command line can
// add to the file). Without usable hugepages swemu adds --no-huge itself, so it runs anywhere.
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "pipeline/core/status.h"

namespace swemu {

struct EalArgs {
  std::vector<std::string> args;  // without argv[0]
  bool added_no_huge = false;     // warn the user once
  bool quiet = false;             // no --log-level was given: drop DPDK's routine lines
};

// What a tool's -v/--verbose adds to the EAL arguments of DPDK processes it runs: DPDK's own
// default level, so its routine lines are printed too.
inline constexpr const char* kEalVerboseLogLevel = "--log-level=notice";

// `args`, with kEalVerboseLogLevel added under a tool's -v/--verbose.
inline std::vector<std::string> WithDpdkLog(std::vector<std::string> args, bool verbose) {
  if (verbose) args.push_back(kEalVerboseLogLevel);
  return args;
}

// DPDK logs a few routine events as warnings or errors although nothing is wrong (telemetry
// without legacy clients; a virtio_user port given no MAC takes a random one). True for a line
// of those; `quiet` runs do not print them.
bool IsRoutineDpdkLine(const std::string& line);

// Splits on whitespace (no quoting: EAL arguments never contain spaces in swemu's configs).
std::vector<std::string> SplitWords(const std::string& text);
// True when /proc/meminfo reports free hugepages and /proc/mounts has a hugetlbfs mount.
bool HugepagesUsable(const std::string& meminfo, const std::string& mounts);
// The final argument list: file args, command-line args, then what swemu adds: --no-huge and
// -m 256 without usable hugepages (unless --no-huge, -m or --socket-mem were given), and
// --log-level=notice unless a log level was given (keeps EAL's start-up chatter off stderr); then
// the run is also `quiet`. A given --log-level (kEalVerboseLogLevel, say) shows all DPDK logs.
EalArgs MakeEalArgs(const std::string& file_args, const std::vector<std::string>& cli_args,
                    bool hugepages_usable);
// Reads /proc/meminfo and /proc/mounts.
bool HostHugepagesUsable();

// rte_eal_init; prints the --no-huge warning on `err`. Error: "EAL: <rte_strerror(rte_errno)>".
// A `quiet` run sends DPDK's log to stderr without its routine lines (IsRoutineDpdkLine), for
// the life of the process.
Status InitEal(const EalArgs& eal, std::ostream& err);
void CleanupEal();

// Holds one of this process's standard streams in a memory file while DPDK runs a step that
// may print several lines (EAL's whole usage text, a driver's log), so that a failure gives
// one line; Restore() puts the stream back and returns what was written meanwhile.
class CapturedFd {
 public:
  explicit CapturedFd(int fd);
  ~CapturedFd() { Restore(); }
  CapturedFd(const CapturedFd&) = delete;
  CapturedFd& operator=(const CapturedFd&) = delete;
  std::string Restore();
  // Puts the stream back and writes to it what was held.
  void Release();

 private:
  int fd_;
  int memfd_ = -1;
  int saved_ = -1;
  int message_fd_ = -1;  // the interrupt line's fd before this one held stderr
};

// Holds stdout and stderr while a run sets itself up (EAL, ports, pools): Release() passes on
// what was printed once it is up; Drop(), or the destructor, discards it when the set-up fails
// and the run's own one line says why.
class HeldOutput {
 public:
  HeldOutput();
  void Release();
  void Drop();

 private:
  CapturedFd out_;
  CapturedFd err_;
};

// The line of what DPDK printed that says why a device failed: the driver's own (EAL's generic
// "cannot attach" lines skipped), without its "function(): " prefix; empty if there is none.
std::string DriverReason(const std::string& printed);

// Runs `step` with stdout and stderr held. On success what it printed is passed on; on
// failure it is dropped and the driver's reason is added to the error, in parentheses.
Status QuietDpdkStep(const std::function<Status()>& step);

}  // namespace swemu
