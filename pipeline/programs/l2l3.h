#pragma once
// l2l3: the first dataplane program. Exact MAC forwarding; IPv4 and IPv6 LPM routing with
// next-hop MAC rewrite and TTL (hop limit) decrement for frames addressed to a router MAC; ECMP
// groups with per-flow hashing or per-packet spraying (round robin kept in a register);
// multicast groups; DSCP (IPv4's TOS, IPv6's traffic class) to queue mapping; ECN CE marking of
// ECT packets whose queue was at or above its threshold.
#include <cstdint>
#include <memory>

#include "pipeline/program/program.h"
#include "pipeline/programs/l2l3_neighbour.h"

namespace swemu {

class MacLearning;  // l2l3_learn.h

// In a program that composes l2l3 as `member` (atp, pcn, dlcp, goat, flow_ecn): hands l2l3's
// MAC learning digests and its counters on, so `learning = on` works there too.
#define SWEMU_L2L3_DIGESTS(member)                                                   \
  DigestChannel* digest_channel() noexcept override { return member.digest_channel(); } \
  void OnDigests(std::span<const DigestRecord> records, TimeNs now) override {       \
    member.OnDigests(records, now);                                                  \
  }                                                                                  \
  void OnControlTime(TimeNs now) override { member.OnControlTime(now); }             \
  void WriteControlPlaneCounters(JsonWriter& json) const override {                  \
    member.WriteControlPlaneCounters(json);                                          \
  }

class L2l3Program final : public Program {
 public:
  L2l3Program();
  ~L2l3Program() override;
  // Action indices, in the order the tables declare them.
  enum DmacAction : uint16_t { kForward, kDmacMulticast, kDmacDrop };
  // glean: a connected subnet's host with no /32 yet; to_cpu: a gateway address
  // (l2l3_neighbour.h).
  enum LpmAction : uint16_t { kSetNhop, kSetEcmp, kLpmMulticast, kLpmDrop, kGlean, kLpmToCpu };
  enum NexthopAction : uint16_t { kRewrite, kNhopDrop, kNhopToCpu };
  enum EcmpMode : uint64_t { kPerFlow = 0, kPerPacket = 1 };

  std::string_view name() const noexcept override { return "l2l3"; }
  Status Load(ProgramContext& ctx) override;
  void Ingress(Packet& pkt) noexcept override;
  void IngressBurst(Packet** pkts, uint32_t n) noexcept override;
  void Egress(Packet& pkt) noexcept override;
  void EgressBurst(Packet** pkts, uint32_t n) noexcept override;
  // With router interfaces, the punt reason and its argument (PuntToCpu).
  uint32_t UserMetadataWords() const noexcept override { return neighbours_ ? 2 : 0; }
  // MAC learning's control plane (l2l3_learn.h); no channel without `learning = on`.
  DigestChannel* digest_channel() noexcept override;
  void OnDigests(std::span<const DigestRecord> records, TimeNs now) override;
  void OnControlTime(TimeNs now) override;
  // counters.json: "learning", MacLearning's counters (in l2l3_learn.cc).
  void WriteControlPlaneCounters(JsonWriter& json) const override;

 private:
  Status LoadLearning(ProgramContext& ctx);
  Status LoadNeighbours(ProgramContext& ctx, uint32_t nhop_size);
  void Bridge(Packet** pkts, uint32_t n) noexcept;
  void Route(Packet** pkts, uint32_t n) noexcept;
  uint32_t LookupRoutes(Packet** pkts, uint32_t n, Packet** live, LookupResult* res) noexcept;
  bool SelectEcmpMember(Packet& pkt, uint64_t group, uint64_t* nhop) noexcept;

  MatchTable* dmac_ = nullptr;
  MatchTable* router_mac_ = nullptr;
  MatchTable* qos_ = nullptr;
  MatchTable* ipv4_lpm_ = nullptr;
  MatchTable* ipv6_lpm_ = nullptr;  // same actions as ipv4_lpm (LpmAction)
  MatchTable* ecmp_group_ = nullptr;
  MatchTable* ecmp_member_ = nullptr;
  MatchTable* nexthop_ = nullptr;
  RegisterArray* ecmp_rr_ = nullptr;
  MatchTable* arp_trap_ = nullptr;                // with router interfaces only
  MatchTable* nd_trap_ = nullptr;                 // with an interface's ip6 only
  std::unique_ptr<L2l3Neighbours> neighbours_;  // their control plane
  bool ecn_ = true;
  std::unique_ptr<MacLearning> learning_;  // learning = on
};

}  // namespace swemu
