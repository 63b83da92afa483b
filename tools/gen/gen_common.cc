#include "tools/gen/gen_common.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "pipeline/control/units.h"
#include "pipeline/engine/pcap_io.h"

namespace swemu::gen {

Status CheckUint(const po::variables_map& vm, const char* name, uint64_t min, uint64_t max,
                 uint64_t* out) {
  return Check(name, ParseUint(Text(vm, name), min, max), out);
}

Status CheckPcapTime(TimeNs ts, const std::string& frame, const std::string& advice) {
  if (ts <= PcapWriter::kPcapLastNs) return Status::Ok();
  return Status::Error(frame + " would be at " + std::to_string(ts / 1'000'000'000) +
                       " s, past the last time a pcap file can hold (4294967295 s): " + advice);
}

AsideFiles::~AsideFiles() {
  for (const Entry& e : entries_) {
    if (!e.renamed) std::remove(e.temp.c_str());
  }
}

std::string AsideFiles::Aside(const std::string& final_path) {
  // A missing directory is made, as swemu --out-dir does (a failure shows when the file opens).
  const std::filesystem::path parent = std::filesystem::path(final_path).parent_path();
  std::error_code ignored;
  if (!parent.empty()) std::filesystem::create_directories(parent, ignored);
  entries_.push_back({final_path + ".tmp-" + std::to_string(getpid()), final_path});
  return entries_.back().temp;
}

std::string AsideFiles::Scratch(const std::string& near, const std::string& tag) {
  entries_.push_back({near + ".tmp-" + std::to_string(getpid()) + "-" + tag, ""});
  return entries_.back().temp;
}

Status AsideFiles::Commit() {
  for (Entry& e : entries_) {
    if (e.final_path.empty()) continue;
    if (std::rename(e.temp.c_str(), e.final_path.c_str()) != 0) {
      return Status::Error(e.final_path + ": " + std::strerror(errno));
    }
    e.renamed = true;
  }
  return Status::Ok();
}

}  // namespace swemu::gen
