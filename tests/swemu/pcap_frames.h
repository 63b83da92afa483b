#pragma once
// Frames to and from pcap files for the real-time tests (inputs of net_pcap ports and hosts,
// and what they captured).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/engine/pcap_io.h"

namespace swemu::testing {

using Frames = std::vector<std::vector<uint8_t>>;

// One record per frame, 1 us apart.
inline void WritePcap(const std::string& path, const Frames& frames) {
  Result<std::unique_ptr<PcapWriter>> writer = PcapWriter::Open(path);
  ASSERT_TRUE(writer.ok()) << writer.message();
  TimeNs ts = 1000;
  for (const auto& frame : frames) (*writer)->Write(ts += 1000, frame.data(), frame.size());
  ASSERT_TRUE((*writer)->Close().ok());
}

inline Frames ReadFrames(const std::string& path) {
  Result<std::vector<PcapRecord>> records = ReadPcapFile(path);
  EXPECT_TRUE(records.ok()) << records.message();
  Frames frames;
  if (records.ok()) {
    for (const PcapRecord& record : *records) frames.push_back(record.bytes);
  }
  return frames;
}

}  // namespace swemu::testing
