// wire: a port-to-port patch for benchmarks (0<->1, 2<->3, ...; an odd last port loops back).
// It reads no header, so the switch skips the parser: what is left is the cost of the
// pipeline frame, the TM and the ports.
#include "pipeline/program/program.h"

namespace swemu {
namespace {

class WireProgram final : public Program {
 public:
  std::string_view name() const noexcept override { return "wire"; }
  Status Load(ProgramContext& ctx) override {
    num_ports_ = ctx.num_ports;
    return Status::Ok();
  }
  void Ingress(Packet& pkt) noexcept override { Patch(pkt, num_ports_); }
  void IngressBurst(Packet** pkts, uint32_t n) noexcept override {
    const PortId ports = num_ports_;  // a local: the stores to egress_spec may alias the member
    for (uint32_t i = 0; i < n; ++i) Patch(*pkts[i], ports);
  }
  void EgressBurst(Packet** /*pkts*/, uint32_t /*n*/) noexcept override {}
  // Stateless: ingress may run wherever the packet arrived. The receiving lcore owns the port
  // (port % N), so keying by port keeps ingress there; the default (the flow hash of a packet
  // nobody parsed: one key for all) sent every packet to one lcore.
  uint32_t ShardKey(const Packet& pkt) const noexcept override { return pkt.meta.ingress_port; }
  bool NeedsParser() const noexcept override { return false; }
  uint32_t UserMetadataWords() const noexcept override { return 0; }

 private:
  // Port 2k <-> 2k+1; the last port of an odd count sends back where it came from.
  static void Patch(Packet& pkt, PortId ports) noexcept {
    const PortId peer = pkt.meta.ingress_port ^ 1;
    pkt.meta.egress_spec = peer < ports ? peer : pkt.meta.ingress_port;
  }

  uint16_t num_ports_ = 0;
};

SWEMU_REGISTER_PROGRAM("wire", WireProgram);

}  // namespace
}  // namespace swemu
