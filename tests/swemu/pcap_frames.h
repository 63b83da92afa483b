#pragma once
// Frames to and from pcap files for the real-time tests (inputs of net_pcap ports and hosts,
// and what they captured).
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/engine/pcap_io.h"
#include "pipeline/wire/atp.h"
#include "pipeline/wire/byte_order.h"
#include "pipeline/wire/ipv4.h"

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

// The ATP header of a gradient frame (IPv4 without options, UDP to port 9000), or nullopt.
inline std::optional<AtpFields> AtpOf(const std::vector<uint8_t>& f) {
  if (f.size() < kAtpHeaderOffset + kAtpHeaderLen || f[23] != kIpProtoUdp ||
      LoadBe16(&f[36]) != kAtpDefaultUdpPort) {
    return std::nullopt;
  }
  return AtpFields::Decode(f.data() + kAtpHeaderOffset, f.size() - kAtpHeaderOffset);
}
// Element i of an ATP gradient frame.
inline int32_t AtpElement(const std::vector<uint8_t>& f, std::size_t i) {
  return LoadAtpInt(f.data() + kAtpHeaderOffset + kAtpHeaderLen, i);
}

}  // namespace swemu::testing
