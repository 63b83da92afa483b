#pragma once
// Two model TCP hosts, A on port 0 and B on port 1 of one l2l3 switch whose port 1 (toward B)
// is the bottleneck: the set-up of the EcnTcp and TcpHost tests.
#include <gtest/gtest.h>

#include <string>

#include "pipeline/engine/engine.h"
#include "pipeline/wire/address.h"

namespace swemu::testing {

inline const MacAddr kMacA = MacAddr::FromU64(0x020000000001ull);
inline const MacAddr kMacB = MacAddr::FromU64(0x020000000002ull);
inline constexpr Ipv4Addr kIpA = 0x0A000001, kIpB = 0x0A000002;
inline constexpr uint16_t kSinkPort = 5001;

// Adds sw0 to `engine`: A <-> B forwarded by MAC, port 1 shaped to `rate` with a `depth`-packet
// queue; ecn_pkts > 0 marks at that many full frames.
inline Switch& AddBottleneckSwitch(Engine& engine, const std::string& rate, uint32_t depth,
                                   uint32_t ecn_pkts = 0) {
  SwitchConfig config;
  config.num_ports = 2;
  config.program = "l2l3";
  EXPECT_TRUE(engine.AddSwitch(config, "").ok());
  Switch& sw = *engine.FindSwitch("sw0");
  for (const std::string& cmd :
       {"table_add dmac forward " + FormatMac(kMacB) + " => 1",
        "table_add dmac forward " + FormatMac(kMacA) + " => 0", "set_port_rate 1 " + rate,
        "set_queue_depth " + std::to_string(depth) + " 1",
        "set_ecn_threshold 1 all " + std::to_string(ecn_pkts * 1514)}) {
    Result<std::string> r = sw.commands().Execute(cmd);
    EXPECT_TRUE(r.ok()) << cmd << ": " << r.message();
  }
  return sw;
}

}  // namespace swemu::testing
