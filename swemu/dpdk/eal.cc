#include "swemu/dpdk/eal.h"

#include <rte_eal.h>
#include <rte_errno.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>

namespace swemu {
namespace {

std::string ReadProcFile(const char* path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool HasArg(const std::vector<std::string>& args, const std::string& name) {
  return std::any_of(args.begin(), args.end(), [&](const std::string& arg) {
    return arg == name || arg.rfind(name + "=", 0) == 0;
  });
}

}  // namespace

std::vector<std::string> SplitWords(const std::string& text) {
  std::istringstream in(text);
  return {std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
}

bool HugepagesUsable(const std::string& meminfo, const std::string& mounts) {
  std::istringstream lines(meminfo);
  std::string line;
  long free_pages = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("HugePages_Free:", 0) == 0) free_pages = std::atol(line.c_str() + 15);
  }
  // A mount line is "source mountpoint fstype options ...".
  std::istringstream mount_lines(mounts);
  bool mounted = false;
  while (std::getline(mount_lines, line)) {
    std::vector<std::string> fields = SplitWords(line);
    if (fields.size() > 2 && fields[2] == "hugetlbfs") mounted = true;
  }
  return free_pages > 0 && mounted;
}

EalArgs MakeEalArgs(const std::string& file_args, const std::vector<std::string>& cli_args,
                    bool hugepages_usable) {
  EalArgs eal;
  eal.args = SplitWords(file_args);
  eal.args.insert(eal.args.end(), cli_args.begin(), cli_args.end());
  if (!hugepages_usable && !HasArg(eal.args, "--no-huge")) {
    eal.args.push_back("--no-huge");
    if (!HasArg(eal.args, "-m") && !HasArg(eal.args, "--socket-mem")) {
      eal.args.push_back("-m");
      eal.args.push_back("256");
    }
    eal.added_no_huge = true;
  }
  if (!HasArg(eal.args, "--log-level")) eal.args.push_back("--log-level=notice");
  return eal;
}

bool HostHugepagesUsable() {
  return HugepagesUsable(ReadProcFile("/proc/meminfo"), ReadProcFile("/proc/mounts"));
}

Status InitEal(const EalArgs& eal, std::ostream& err) {
  if (eal.added_no_huge) err << "swemu: no free hugepages; running with --no-huge\n" << std::flush;
  // EAL may keep pointers into argv for the life of the process.
  static std::vector<std::string> storage;
  static std::vector<char*> argv;
  storage.clear();
  storage.push_back("swemu");
  storage.insert(storage.end(), eal.args.begin(), eal.args.end());
  argv.clear();
  for (std::string& arg : storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  if (rte_eal_init(static_cast<int>(storage.size()), argv.data()) < 0) {
    return Status::Error(std::string("EAL: ") + rte_strerror(rte_errno));
  }
  return Status::Ok();
}

void CleanupEal() { rte_eal_cleanup(); }

}  // namespace swemu
