#pragma once
// dlcp: DLCP's switch side (sections 3.2.2-3.2.3, 4.2) on top of l2l3. Ingress classifies by
// DSCP into the egress port's 8 strict-priority queues: data tag t (pipeline/wire/dlcp.h) into
// queue 6 - t, control signals into queue 7, anything else where l2l3's qos table puts it. Each
// data queue has a RED/ECN threshold S_i and a capacity L_i in the TM (its commodity-switch
// trick): at or above S_i packets an ECT packet (an important gradient) is CE-marked and kept, a
// Not-ECT one (unimportant) dropped; at L_i everything is dropped, with no push-out. The control
// queue has no threshold. S_i = T * (1 + (i - 1) * d) for i = 1..7, i = 1 the front layers'
// queue (6), so front-layer queues drop unimportant packets first. Per-packet spraying over an
// ECMP group is l2l3's (ecmp_select with mode 1).
#include <array>
#include <cstdint>
#include <string>

#include "pipeline/programs/l2l3.h"
#include "pipeline/wire/dlcp.h"

namespace swemu {

// The defaults: Appendix B (corrected, hostlib/dlcp/thresholds.h) for ResNet-50 in a 512 KB
// (349-packet) port at load 1.2, the fit S_i = T(1 + (i - 1)d) with the optimum's L_i
// (`swemu-dlcp thresholds --load 1.2 --buffer 523500`); docs/papers.md ("DLCP") says why this load.
inline constexpr double kDlcpDefaultT = 23.25;
inline constexpr double kDlcpDefaultD = 0.55;
inline constexpr std::array<uint32_t, kDlcpDataPriorities> kDlcpDefaultCaps = {14, 18, 21, 33,
                                                                               39, 98, 126};

struct DlcpThresholds {
  double t = kDlcpDefaultT;  // T, packets
  double d = kDlcpDefaultD;
  // L_i per priority i = 1..7 (index 0 = i = 1, the front layers); 0 = 2 * S_i.
  std::array<uint32_t, kDlcpDataPriorities> caps = kDlcpDefaultCaps;

  // S_i in packets (i = 1..7), rounded to the nearest packet, at least 1.
  uint32_t S(uint32_t i) const noexcept;
  uint32_t L(uint32_t i) const noexcept;
  // One line naming the bad value: T >= 1, d >= 0, every S_i and L_i within the TM's limit.
  // An S_i at or above its L_i is allowed: the capacity drops before the threshold acts.
  Status Validate() const;
};

class DlcpProgram final : public Program {
 public:
  std::string_view name() const noexcept override { return "dlcp"; }
  Status Load(ProgramContext& ctx) override;
  void Ingress(Packet& pkt) noexcept override;
  void IngressBurst(Packet** pkts, uint32_t n) noexcept override;
  void Egress(Packet& pkt) noexcept override { l2l3_.Egress(pkt); }
  void EgressBurst(Packet** pkts, uint32_t n) noexcept override { l2l3_.EgressBurst(pkts, n); }
  uint32_t UserMetadataWords() const noexcept override { return 0; }
  SWEMU_L2L3_DIGESTS(l2l3_)

  const DlcpThresholds& thresholds() const noexcept { return thresholds_; }

 private:
  // Installs S_i and L_i on every port's data queues (and no threshold on the control queue).
  Status Apply(const DlcpThresholds& th);
  Status AddCommands(CommandTable& commands);
  std::string Show() const;

  L2l3Program l2l3_;
  TrafficManager* tm_ = nullptr;
  uint16_t num_ports_ = 0;
  uint8_t dscp_base_ = kDlcpDefaultDscpBase;
  uint8_t control_dscp_ = kDlcpDefaultControlDscp;
  // DSCP -> queue (or -1: l2l3's choice stands), a 64-entry stateless lookup.
  std::array<int8_t, 64> queue_of_dscp_{};
  DlcpThresholds thresholds_;
};

}  // namespace swemu
