// flow_ecn: options, resources, the ingress stage and the control commands (see flow_ecn.h).
#include "pipeline/programs/flow_ecn.h"

#include "pipeline/control/units.h"
#include "pipeline/parser/header_ops.h"

namespace swemu {
namespace {

constexpr uint16_t kCountLane = 0;
constexpr uint16_t kWindowLane = 1;
constexpr uint32_t kMaxFlows = 1 << 24;

}  // namespace

// [program] threshold, window and flows; l2l3 reads its own keys (ecn, dmac_size, ...).
Result<FlowEcnConfig> FlowEcnProgram::ReadConfig(const ProgramOptions& options) {
  Result<uint64_t> threshold = options.GetUint("threshold", 64, 0, UINT32_MAX - 1);
  Result<std::string> window = options.GetString("window", "1ms");
  Result<uint64_t> flows = options.GetUint("flows", 4096, 1, kMaxFlows);
  for (const Status& s : {threshold.status(), window.status(), flows.status()}) {
    SWEMU_RETURN_IF_ERROR(s);
  }
  Result<uint64_t> window_ns = ParseDuration(*window);
  if (!window_ns.ok()) return Status::Error("program.window: " + window_ns.message());
  if ((*flows & (*flows - 1)) != 0) {
    return Status::Error("program.flows " + std::to_string(*flows) + ": must be a power of 2");
  }
  return FlowEcnConfig{static_cast<uint32_t>(*threshold), *window_ns,
                       static_cast<uint32_t>(*flows)};
}

Status FlowEcnProgram::Load(ProgramContext& ctx) {
  Result<FlowEcnConfig> config = ReadConfig(ctx.options);
  if (!config.ok()) return config.status();
  config_ = *config;
  SWEMU_RETURN_IF_ERROR(l2l3_.Load(ctx));
  // Two 32-bit lanes per cell (two stateful ALUs), stored in 4 bytes each (Rmw32).
  Result<RegisterArray*> counts = ctx.builder.AddRegister(
      Gress::kIngress, kCountStage, {"flow_ecn_count", config_.flows, 32, 2, /*storage_bytes=*/4});
  if (!counts.ok()) return counts.status();
  counts_ = *counts;
  ctx.builder.Note("flow_ecn: the flow hash and the CE rewrite are stateless");
  return AddCommands(ctx.commands);
}

void FlowEcnProgram::Ingress(Packet& pkt) noexcept {
  Packet* one = &pkt;
  IngressBurst(&one, 1);
}

void FlowEcnProgram::IngressBurst(Packet** pkts, uint32_t n) noexcept {
  l2l3_.IngressBurst(pkts, n);
  CountAndMark(pkts, n);
}

void FlowEcnProgram::CountAndMark(Packet** pkts, uint32_t n) noexcept {
  BurstScratch<uint32_t> cells;
  for (uint32_t i = 0; i < n; ++i) {  // hash first, so the cells' cache lines load meanwhile
    cells[i] = CellOf(*pkts[i]);
    counts_->Prefetch(cells[i]);
  }
  const uint32_t threshold = config_.threshold;
  const uint64_t window_ns = config_.window_ns;
  auto timed = counts_->TimeBurst(n);
  for (uint32_t i = 0; i < n; ++i) {
    Packet& pkt = *pkts[i];
    if (pkt.meta.dropped() || !pkt.hdr.has_ipv4()) continue;
    const auto window =
        static_cast<uint32_t>(window_ns == 0 ? 0 : pkt.meta.ingress_ts / window_ns);
    uint32_t count = 0;
    counts_->Rmw32<false>(pkt, cells[i], [&](std::span<uint32_t> cell) {
      if (cell[kWindowLane] != window) cell[kCountLane] = 0;  // a new window starts from zero
      if (cell[kCountLane] != UINT32_MAX) ++cell[kCountLane];
      cell[kWindowLane] = window;
      count = cell[kCountLane];
    });
    if (count > threshold) MarkEcnCe(pkt);  // leaves Not-ECT packets as they are
  }
}

std::string FlowEcnProgram::Show() const {
  return "flow_ecn: CE-marks a flow's ECT packets past " + std::to_string(config_.threshold) +
         " packets per " +
         (config_.window_ns == 0 ? std::string("run")
                                 : std::to_string(config_.window_ns) + " ns window") +
         "; " + std::to_string(config_.flows) +
         " flow cells in register flow_ecn_count (ingress stage " + std::to_string(kCountStage) +
         ", lanes: count,window)\n";
}

Status FlowEcnProgram::AddCommands(CommandTable& commands) {
  SWEMU_RETURN_IF_ERROR(commands.Add({"show flow_ecn", "", "flow_ecn's threshold, window and cells",
                                      0, 0, [this](CommandArgs) -> Result<std::string> {
                                        return Show();
                                      }}));
  return commands.Add({"flow_ecn_threshold", "<packets>",
                       "packets per flow and window that pass unmarked", 1, 1,
                       [this](CommandArgs args) -> Result<std::string> {
                         Result<uint64_t> packets = ParseUint(args[0], 0, UINT32_MAX - 1);
                         if (!packets.ok()) {
                           return Status::Error("flow_ecn_threshold: " + packets.message());
                         }
                         config_.threshold = static_cast<uint32_t>(*packets);
                         return std::string();
                       }});
}

SWEMU_REGISTER_PROGRAM("flow_ecn", FlowEcnProgram);

}  // namespace swemu
