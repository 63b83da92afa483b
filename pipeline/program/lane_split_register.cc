// ProgramBuilder::AddLaneSplitRegister: one register array whose lanes are accounted over
// consecutive stages. On hardware each stage's stateful ALUs own a slice of the lanes (ATP's
// aggregator values, 4 lanes per stage); the emulator keeps all lanes of an index in one
// contiguous block, so a packet's update touches one place in memory instead of one per stage.
#include <algorithm>

#include "pipeline/program/program_builder.h"

namespace swemu {

std::string StageRange::ToString() const {
  auto part = [](Gress gress, int first, int last) {
    return std::string(GressName(gress)) +
           (first == last ? " stage " + std::to_string(first)
                          : " stages " + std::to_string(first) + "-" + std::to_string(last));
  };
  if (first_gress == last_gress) return part(first_gress, first_stage, last_stage);
  // An ingress range that continued into egress: ingress up to its last stage, egress from 0.
  const int last_ingress = first_stage + (stages - last_stage - 1) - 1;
  return part(first_gress, first_stage, last_ingress) + " and " + part(last_gress, 0, last_stage);
}

Result<LaneSplitRegister> ProgramBuilder::AddLaneSplitRegister(Gress gress, int first_stage,
                                                               const RegisterSpec& spec,
                                                               uint16_t lanes_per_stage) {
  const std::string where = "register " + spec.name + ": ";
  if (lanes_per_stage == 0) return Fail(where + "lanes per stage must be at least 1");
  if (Stage(gress, first_stage) == nullptr) {
    return Fail(where + GressName(gress) + " stage " + std::to_string(first_stage) +
                " does not exist");
  }
  const int ingress = static_cast<int>(report_.ingress.size());
  const int egress = static_cast<int>(report_.egress.size());
  const int needed = (spec.lanes + lanes_per_stage - 1) / lanes_per_stage;
  // Stages left from first_stage on: the rest of this gress, plus all of egress after ingress.
  const int available =
      gress == Gress::kIngress ? ingress - first_stage + egress : egress - first_stage;
  if (needed > available) {
    return Fail(where + std::to_string(spec.lanes) + " lanes at " +
                std::to_string(lanes_per_stage) + " per stage need " + std::to_string(needed) +
                " stages from " + GressName(gress) + " stage " + std::to_string(first_stage) +
                ", but only " + std::to_string(available) + " remain");
  }
  Result<std::unique_ptr<RegisterArray>> reg = NewRegister(spec);
  if (!reg.ok()) return reg.status();

  LaneSplitRegister out;
  out.reg = reg->get();
  out.lanes_per_stage = lanes_per_stage;
  out.range.first_gress = gress;
  out.range.first_stage = first_stage;
  out.range.stages = needed;
  const uint64_t cell_bytes = (spec.width_bits + 7u) / 8;
  for (int k = 0; k < needed; ++k) {
    int at = first_stage + k;
    Gress g = gress;
    if (g == Gress::kIngress && at >= ingress) {
      g = Gress::kEgress;
      at -= ingress;
    }
    const int first_lane = k * lanes_per_stage;
    const int lanes = std::min<int>(lanes_per_stage, spec.lanes - first_lane);
    StageUsage* usage = Stage(g, at);
    usage->sram_bytes += uint64_t{spec.size} * static_cast<uint64_t>(lanes) * cell_bytes;
    usage->stateful_alus += static_cast<uint32_t>(lanes);
    usage->items.push_back("register " + spec.name + " lanes " + std::to_string(first_lane) + "-" +
                           std::to_string(first_lane + lanes - 1) + " (" +
                           std::to_string(spec.size) + " x " + std::to_string(lanes) + " x " +
                           std::to_string(spec.width_bits) + " bit; one array of " +
                           std::to_string(spec.lanes) + " lanes)");
    out.range.last_gress = g;
    out.range.last_stage = at;
  }
  register_homes_[out.reg] = out.range.ToString();
  resources_.placements_.push_back(
      {gress, first_stage, register_homes_[out.reg], nullptr, out.reg});
  resources_.registers_.emplace(spec.name, std::move(*reg));
  return out;
}

}  // namespace swemu
