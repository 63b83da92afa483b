#include "tools/gen/gen_common.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "pipeline/engine/pcap_io.h"

namespace swemu::gen {

Status CheckPcapTime(TimeNs ts, const std::string& frame, const std::string& advice) {
  if (ts <= PcapWriter::kPcapLastNs) return Status::Ok();
  return Status::Error(frame + " would be at " + std::to_string(ts / 1'000'000'000) +
                       " s, past the last time a pcap file can hold (4294967295 s): " + advice);
}

}  // namespace swemu::gen
