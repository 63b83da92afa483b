#pragma once
// Frames and a rack setup for the atp program tests: workers 0-3 on ports 0-3, the PS on port 4
// (the addresses of configs/atp_rack.cli), job 1 aggregating into multicast group 1.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/programs/atp.h"
#include "pipeline/wire/atp.h"
#include "pipeline/wire/frame_builder.h"
#include "tests/pipeline/switch_harness.h"

namespace swemu::testing {

inline constexpr PortId kPsPort = 4;
inline constexpr uint16_t kJob = 1;

inline MacAddr WorkerMac(int w) { return *ParseMac("02:00:00:00:00:0" + std::to_string(w)); }
inline MacAddr PsMac() { return *ParseMac("02:00:00:00:00:10"); }

inline SwitchConfig AtpConfig(uint16_t elements = 8, uint32_t aggregators = 1024) {
  SwitchConfig config;
  config.num_ports = 5;
  config.program = "atp";
  config.program_options.Set("elements", std::to_string(elements));
  config.program_options.Set("aggregators", std::to_string(aggregators));
  return config;
}

// The rack of configs/atp_rack.cli.
inline void SetupRack(SwitchHarness& h) {
  for (int w = 0; w < 4; ++w) {
    h.MustCmd("table_add dmac forward 02:00:00:00:00:0" + std::to_string(w) + " => " +
              std::to_string(w));
  }
  h.MustCmd("table_add dmac forward 02:00:00:00:00:10 => 4");
  h.MustCmd("mc_mgrp_create 1");
  h.MustCmd("mc_node_create 0 0 1 2 3");
  h.MustCmd("mc_node_associate 1 0");
  h.MustCmd("table_add atp_job aggregate 1 => 1");
}

struct AtpPacket {
  AtpFields f;
  std::vector<int32_t> values;
  uint8_t tos = 0;  // IPv4 TOS (ECN in the low two bits)
  MacAddr dst = PsMac();
  MacAddr src = WorkerMac(0);
  uint16_t udp_port = kAtpDefaultUdpPort;

  std::vector<uint8_t> Build() const {
    std::vector<uint8_t> payload(AtpPayloadLen(static_cast<uint16_t>(values.size())));
    f.Encode(payload.data());
    for (std::size_t i = 0; i < values.size(); ++i) {
      StoreAtpInt(payload.data() + kAtpHeaderLen, i, values[i]);
    }
    return FrameBuilder()
        .Eth(dst, src)
        .Ipv4(0x0A000001, 0x0A000010)
        .Tos(tos)
        .Udp(static_cast<uint16_t>(20000 + f.worker_id), udp_port)
        .Payload(payload)
        .Build();
  }
};

// A worker's original gradient: bitmap = its own bit, edge 0.
inline AtpPacket Gradient(uint16_t job, uint32_t seq, uint8_t worker, uint8_t fan_in0,
                          uint8_t fan_in1, std::vector<int32_t> values, uint8_t flags = 0) {
  AtpPacket p;
  p.f.flags = flags;
  p.f.worker_id = worker;
  p.f.fan_in0 = fan_in0;
  p.f.fan_in1 = fan_in1;
  p.f.job_id = job;
  p.f.num_elements = static_cast<uint16_t>(values.size());
  p.f.seq = seq;
  p.f.bitmap = worker < 32 ? uint32_t{1} << worker : 1;
  p.values = std::move(values);
  p.src = WorkerMac(worker % 10);
  return p;
}

// The PS's parameter packet to the job's group.
inline AtpPacket Param(uint16_t job, uint32_t seq, std::size_t elements, uint32_t bitmap = 0xF) {
  AtpPacket p;
  p.f.flags = kAtpFlagParam | kAtpFlagFloat;
  p.f.job_id = job;
  p.f.num_elements = static_cast<uint16_t>(elements);
  p.f.seq = seq;
  p.f.bitmap = bitmap;
  p.values.assign(elements, 0);
  p.dst = *ParseMac("01:00:5e:01:00:01");
  p.src = PsMac();
  return p;
}

inline std::vector<int32_t> Fill(std::size_t n, int32_t v) { return std::vector<int32_t>(n, v); }

struct AtpOut {
  PortId port = 0;
  AtpFields f;
  std::vector<int32_t> values;
  uint8_t tos = 0;
};

inline AtpOut Decode(const SentFrame& frame) {
  AtpOut out;
  out.port = frame.port;
  EXPECT_GE(frame.bytes.size(), kAtpHeaderOffset + kAtpHeaderLen);
  if (frame.bytes.size() < kAtpHeaderOffset + kAtpHeaderLen) return out;
  const uint8_t* atp = frame.bytes.data() + kAtpHeaderOffset;
  out.f = *AtpFields::Decode(atp, kAtpHeaderLen);
  out.tos = frame.bytes[14 + 1];
  for (uint16_t i = 0; i < out.f.num_elements; ++i) {
    out.values.push_back(LoadAtpInt(atp + kAtpHeaderLen, i));
  }
  return out;
}

// A seq of `job` != seq whose aggregator index is the same as <job0, seq0>'s.
inline uint32_t CollidingSeq(uint16_t job0, uint32_t seq0, uint16_t job, uint32_t aggregators) {
  const uint32_t target = AtpAggregatorIndex(job0, seq0, aggregators);
  for (uint32_t s = 0;; ++s) {
    if ((job != job0 || s != seq0) && AtpAggregatorIndex(job, s, aggregators) == target) return s;
  }
}

inline AtpProgram& Atp(SwitchHarness& h) { return static_cast<AtpProgram&>(h.sw().program()); }

// True when every field of the aggregator is 0 (Fig. 4 (10): deallocated).
inline bool AggregatorEmpty(SwitchHarness& h, uint32_t index, uint16_t elements) {
  bool empty = Cell(h, "atp_id", index) == 0 && Cell(h, "atp_bitmap", index) == 0 &&
               Cell(h, "atp_count", index) == 0 && Cell(h, "atp_overflow", index) == 0;
  for (uint16_t e = 0; e < elements; ++e) {
    empty = empty && Cell(h, "atp_value", index, e) == 0;
  }
  return empty;
}

// One rack running atp (workers 0-3 on ports 0-3, the PS on port kPsPort), set up by SetupRack.
class AtpRackTest : public ::testing::Test {
 protected:
  explicit AtpRackTest(uint16_t elements = 8, uint32_t aggregators = 1024)
      : n_(elements), aggs_(aggregators), h_(AtpConfig(elements, aggregators)) {}
  void SetUp() override {
    ASSERT_TRUE(h_.ok()) << h_.error();
    SetupRack(h_);
  }
  void Send(const AtpPacket& p, PortId port = 0) { h_.Send(port, p.Build()); }
  uint32_t Index(uint32_t seq, uint16_t job = kJob) const {
    return AtpAggregatorIndex(job, seq, aggs_);
  }
  uint16_t n_;
  uint32_t aggs_;
  SwitchHarness h_;
};

}  // namespace swemu::testing
