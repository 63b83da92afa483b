// libFuzzer over the whole l2l3 pipeline: parser, tables (IPv4 and IPv6 routes), ECMP,
// multicast, TM, egress and deparser. The first input byte picks the ingress port, the rest is the frame. After each
// input every queue is drained; the fuzzer traps if a buffer leaks, conservation breaks or an
// output frame's IPv4 checksum is wrong.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "pipeline/core/clock.h"
#include "pipeline/core/packet_pool.h"
#include "pipeline/switch/switch.h"
#include "pipeline/wire/checksum.h"

namespace {

using namespace swemu;

struct World {
  VirtualClock clock;
  HeapPacketPool pool{256};
  std::unique_ptr<Switch> sw;
  uint64_t sent = 0;
  uint64_t delivered = 0;

  World() {
    SwitchConfig config;
    config.program = "l2l3";
    config.tm.port_rate_bps = 10'000'000'000;
    sw = std::move(*Switch::Create(config, pool, clock));
    const char* setup[] = {
        "table_add dmac forward 00:00:00:00:00:0b => 1",
        "table_add dmac multicast ff:ff:ff:ff:ff:ff => 1",
        "mc_mgrp_create 1",
        "mc_node_create 0 0 1 2 3",
        "mc_node_associate 1 0",
        "table_add router_mac route 00:00:00:00:00:fe =>",
        "table_add ipv4_lpm set_nhop 10.0.2.0/24 => 2",
        "table_add ipv4_lpm set_ecmp 10.1.0.0/16 => 7",
        "table_add ipv4_lpm multicast 224.0.0.0/4 => 1",
        "table_add ipv6_lpm set_nhop 2001:db8:2::/64 => 2",
        "table_add ipv6_lpm set_ecmp 2001:db8:7::/48 => 7",
        "table_add ipv6_lpm multicast ff0e::/16 => 1",
        "table_add ecmp_group ecmp_select 7 => 2 1",
        "table_add ecmp_member set_nhop 7 0 => 2",
        "table_add ecmp_member set_nhop 7 1 => 3",
        "table_add nexthop rewrite 2 => 00:00:00:00:02:02 00:00:00:00:00:fe 2",
        "table_add nexthop rewrite 3 => 00:00:00:00:03:03 00:00:00:00:00:fe 3",
        "table_add qos set_queue 46&&&0x3f => 7 1",
        "set_ecn_threshold all all 100",
    };
    for (const char* line : setup) {
      if (!sw->commands().Execute(line).ok()) __builtin_trap();
    }
  }
};

World& TheWorld() {
  static World world;
  return world;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  World& w = TheWorld();
  Packet* pkt = w.pool.FromBytes(data + 1, static_cast<uint32_t>(size - 1));
  if (pkt == nullptr) return 0;  // longer than a jumbo frame: not a frame a port delivers
  ++w.sent;
  w.sw->Receive(pkt, static_cast<PortId>(data[0] % 5));  // port 4 does not exist
  for (;;) {
    TimeNs next = kNever;
    for (PortId p = 0; p < w.sw->num_ports(); ++p) next = std::min(next, w.sw->NextTransmitTime(p));
    if (next == kNever) break;
    if (next > w.clock.NowNs()) w.clock.Set(next);
    for (PortId p = 0; p < w.sw->num_ports(); ++p) {
      while (Packet* out = w.sw->Transmit(p)) {
        ++w.delivered;
        if (out->hdr.has_ipv4()) {
          const uint8_t* ip = out->data + out->hdr.ipv4;
          if (!Ipv4HeaderChecksumOk(ip, (ip[0] & 0xf) * 4u)) __builtin_trap();
        }
        w.pool.Free(out);
      }
    }
  }
  if (w.pool.InUse() != 0) __builtin_trap();
  uint64_t accounted = w.delivered + w.sw->counters().program.consumed + w.sw->TotalDrops();
  if (w.sent + w.sw->tm().multicast_copies() != accounted) __builtin_trap();
  return 0;
}
