#include "pipeline/program/program_builder.h"

namespace swemu {

MatchTable* PipelineResources::FindTable(std::string_view name) const {
  auto it = tables_.find(name);
  return it == tables_.end() ? nullptr : it->second.get();
}

RegisterArray* PipelineResources::FindRegister(std::string_view name) const {
  auto it = registers_.find(name);
  return it == registers_.end() ? nullptr : it->second.get();
}

std::vector<MatchTable*> PipelineResources::Tables() const {
  std::vector<MatchTable*> out;
  for (const auto& [name, table] : tables_) out.push_back(table.get());
  return out;
}

std::vector<RegisterArray*> PipelineResources::Registers() const {
  std::vector<RegisterArray*> out;
  for (const auto& [name, reg] : registers_) out.push_back(reg.get());
  return out;
}

ProgramBuilder::ProgramBuilder(std::string program, const PipelineConfig& config,
                               PipelineResources& resources)
    : config_(config), resources_(resources) {
  report_.program = std::move(program);
  report_.budget = config.budget;
  report_.ingress.resize(config.ingress_stages);
  report_.egress.resize(config.egress_stages);
}

StageUsage* ProgramBuilder::Stage(Gress gress, int stage) {
  auto& stages = gress == Gress::kIngress ? report_.ingress : report_.egress;
  if (stage < 0 || static_cast<std::size_t>(stage) >= stages.size()) return nullptr;
  return &stages[stage];
}

Status ProgramBuilder::Fail(std::string error) {
  report_.errors.push_back(error);
  return Status::Error(std::move(error));
}

Result<MatchTable*> ProgramBuilder::AddTable(Gress gress, int stage, const TableSpec& spec) {
  StageUsage* usage = Stage(gress, stage);
  if (usage == nullptr) {
    return Fail(
        "table " + spec.name + ": " + GressName(gress) + " stage " + std::to_string(stage) +
        " does not exist (the pipeline has " +
        std::to_string(gress == Gress::kIngress ? config_.ingress_stages : config_.egress_stages) +
        ")");
  }
  if (resources_.tables_.count(spec.name) != 0) {
    return Fail("table " + spec.name + " is declared twice");
  }
  Result<std::unique_ptr<MatchTable>> table = MakeTable(spec);
  if (!table.ok()) return Fail(table.message());
  MatchTable* raw = table->get();
  usage->sram_bytes += raw->SramBytes();
  usage->tcam_entries += raw->TcamEntries();
  usage->tables += 1;
  usage->items.push_back("table " + spec.name + " (" + std::to_string(spec.size) + " entries)");
  resources_.tables_.emplace(spec.name, std::move(*table));
  resources_.placements_.push_back(
      {gress, stage, std::string(GressName(gress)) + " stage " + std::to_string(stage), raw,
       nullptr});
  return raw;
}

Result<std::unique_ptr<RegisterArray>> ProgramBuilder::NewRegister(const RegisterSpec& spec) {
  if (resources_.registers_.count(spec.name) != 0) {
    return Fail("register " + spec.name + " is declared twice");
  }
  if (next_register_id_ >= kMaxRegisterArrays) {
    return Fail("register " + spec.name + ": more than " + std::to_string(kMaxRegisterArrays) +
                " register arrays");
  }
  Result<std::unique_ptr<RegisterArray>> reg =
      RegisterArray::Create(spec, static_cast<uint8_t>(next_register_id_));
  if (!reg.ok()) return Fail(reg.message());
  ++next_register_id_;
  return reg;
}

Result<RegisterArray*> ProgramBuilder::AddRegister(Gress gress, int stage,
                                                   const RegisterSpec& spec) {
  StageUsage* usage = Stage(gress, stage);
  if (usage == nullptr) {
    return Fail("register " + spec.name + ": " + GressName(gress) + " stage " +
                std::to_string(stage) + " does not exist");
  }
  Result<std::unique_ptr<RegisterArray>> reg = NewRegister(spec);
  if (!reg.ok()) return reg.status();
  RegisterArray* raw = reg->get();
  usage->sram_bytes += raw->SramBytes();
  usage->stateful_alus += raw->Alus();
  usage->items.push_back("register " + spec.name + " (" + std::to_string(spec.size) + " x " +
                         std::to_string(spec.lanes) + " x " + std::to_string(spec.width_bits) +
                         " bit)");
  register_homes_[raw] = std::string(GressName(gress)) + " stage " + std::to_string(stage);
  resources_.placements_.push_back({gress, stage, register_homes_[raw], nullptr, raw});
  resources_.registers_.emplace(spec.name, std::move(*reg));
  return raw;
}

Status ProgramBuilder::AccessRegister(Gress gress, int stage, const RegisterArray* reg) {
  auto it = register_homes_.find(reg);
  if (it == register_homes_.end()) return Fail("access to an undeclared register array");
  return Fail("register " + reg->name() + " is accessed twice in one pass (" + it->second +
              " and " + GressName(gress) + " stage " + std::to_string(stage) +
              "): one read-modify-write per array per pass");
}

void ProgramBuilder::Note(std::string note) { report_.notes.push_back(std::move(note)); }

Status ProgramBuilder::Finish() {
  const StageBudget& b = config_.budget;
  auto check = [&](Gress gress, const std::vector<StageUsage>& stages) {
    for (std::size_t i = 0; i < stages.size(); ++i) {
      const StageUsage& s = stages[i];
      std::string where = std::string(GressName(gress)) + " stage " + std::to_string(i);
      if (s.sram_bytes > b.sram_bytes) {
        report_.errors.push_back(where + ": SRAM " + std::to_string(s.sram_bytes) + " B > " +
                                 std::to_string(b.sram_bytes) + " B");
      }
      if (s.tcam_entries > b.tcam_entries) {
        report_.errors.push_back(where + ": TCAM " + std::to_string(s.tcam_entries) +
                                 " entries > " + std::to_string(b.tcam_entries));
      }
      if (s.tables > b.tables) {
        report_.errors.push_back(where + ": " + std::to_string(s.tables) + " tables > " +
                                 std::to_string(b.tables));
      }
      if (s.stateful_alus > b.stateful_alus) {
        report_.errors.push_back(where + ": " + std::to_string(s.stateful_alus) +
                                 " stateful ALUs > " + std::to_string(b.stateful_alus));
      }
    }
  };
  check(Gress::kIngress, report_.ingress);
  check(Gress::kEgress, report_.egress);
  if (report_.fits()) return Status::Ok();
  std::string message = "program " + report_.program + " does not fit: " + report_.errors[0];
  if (report_.errors.size() > 1) {
    message += " (and " + std::to_string(report_.errors.size() - 1) + " more)";
  }
  return Status::Error(message);
}

}  // namespace swemu
