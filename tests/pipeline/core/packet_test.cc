// Packet::ResetState: a new pass starts from fresh parse state and metadata, and clears only the
// user words the program declared.
#include "pipeline/core/packet.h"

#include <gtest/gtest.h>

#include <utility>

namespace swemu {
namespace {

Packet Dirty() {
  Packet pkt;
  pkt.hdr.ipv4 = 14;
  pkt.hdr.udp = 34;
  pkt.hdr.vlan[1] = 18;
  pkt.hdr.vlan_count = 2;
  pkt.hdr.ip_proto = 17;
  pkt.hdr.dirty = kDirtyIpv4;
  pkt.meta.ingress_ts = 5;
  pkt.meta.egress_spec = 3;
  pkt.meta.mcast_grp = 9;
  pkt.meta.consumed = true;
  pkt.meta.MarkDrop(DropReason::kTmQueueFull);
  pkt.meta.register_access_mask = ~0ull;
  for (uint32_t& word : pkt.meta.user) word = 0xABCD;
  return pkt;
}

TEST(PacketTest, ResetStateRestoresEveryDefault) {
  Packet pkt = Dirty();
  uint8_t frame[64] = {};
  pkt.data = frame;
  pkt.len = 60;
  pkt.ResetState();
  const Packet fresh;
  EXPECT_EQ(pkt.hdr.ipv4, kHeaderAbsent);
  EXPECT_EQ(pkt.hdr.dirty, 0);
  EXPECT_EQ(pkt.meta.ingress_ts, 0u);
  EXPECT_EQ(pkt.meta.egress_spec, kPortUnset);
  EXPECT_EQ(pkt.meta.mcast_grp, 0);
  EXPECT_FALSE(pkt.meta.consumed);
  EXPECT_FALSE(pkt.meta.dropped());
  EXPECT_EQ(pkt.meta.register_access_mask, 0u);
  for (uint32_t word : pkt.meta.user) EXPECT_EQ(word, 0u);
  // Every header field (not a memcmp: the struct's padding bytes are indeterminate).
  const ParsedHeaders& h = pkt.hdr;
  const ParsedHeaders& f = fresh.hdr;
  EXPECT_EQ(h.eth, f.eth);
  EXPECT_EQ(h.vlan[0], f.vlan[0]);
  EXPECT_EQ(h.vlan[1], f.vlan[1]);
  EXPECT_EQ(h.udp, f.udp);
  EXPECT_EQ(h.tcp, f.tcp);
  EXPECT_EQ(h.app, f.app);
  EXPECT_EQ(h.payload, f.payload);
  EXPECT_EQ(h.app_id, f.app_id);
  EXPECT_EQ(h.parsed_bytes, f.parsed_bytes);
  EXPECT_EQ(h.vlan_count, f.vlan_count);
  EXPECT_EQ(h.ip_proto, f.ip_proto);
  // The frame is not part of the state.
  EXPECT_EQ(pkt.data, frame);
  EXPECT_EQ(pkt.len, 60u);
}

TEST(PacketTest, ResetStateClearsOnlyTheDeclaredUserWords) {
  Packet pkt = Dirty();
  pkt.ResetState(3);
  for (int i = 0; i < kUserMetadataWords; ++i) {
    EXPECT_EQ(pkt.meta.user[i], i < 3 ? 0u : 0xABCDu) << i;
  }
  EXPECT_EQ(pkt.meta.egress_spec, kPortUnset);
  pkt.ResetState(99);  // more than there are: all of them
  for (uint32_t word : pkt.meta.user) EXPECT_EQ(word, 0u);
  pkt = Dirty();
  pkt.ResetState(0);  // none: the words stay, the rest is reset
  for (uint32_t word : pkt.meta.user) EXPECT_EQ(word, 0xABCDu);
  EXPECT_EQ(pkt.meta.egress_spec, kPortUnset);
}

// The fast path's one-word test: each of the four fields alone makes a packet unusual, and the
// fields beside them (congested, queue_id, recirculate_count) do not.
TEST(PacketTest, UnusualIsSetByEachOfItsFourFieldsAndNoOther) {
  Metadata meta;
  EXPECT_EQ(meta.Unusual(), 0u);
  meta.congested = true;
  meta.queue_id = 7;
  meta.recirculate_count = 3;
  meta.mcast_grp = 1;
  EXPECT_EQ(meta.Unusual(), 0u);
  const std::pair<const char*, void (*)(Metadata&)> fields[] = {
      {"recirculate", [](Metadata& m) { m.recirculate = true; }},
      {"consumed", [](Metadata& m) { m.consumed = true; }},
      {"ecn_marked", [](Metadata& m) { m.ecn_marked = true; }},
      {"drop_reason", [](Metadata& m) { m.MarkDrop(DropReason::kTmQueueFull); }},
  };
  for (const auto& [name, set] : fields) {
    Metadata one;
    set(one);
    EXPECT_NE(one.Unusual(), 0u) << name;
  }
}

}  // namespace
}  // namespace swemu
