#pragma once
// What a program declares at load: its tables and register arrays, each placed in one stage,
// and its register accesses. Names are resolved here once; the fast path holds plain pointers.
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/core/status.h"
#include "pipeline/program/resources.h"
#include "pipeline/registers/register_array.h"
#include "pipeline/tables/match_table.h"

namespace swemu {

struct PipelineConfig {
  uint16_t ingress_stages = 12;
  uint16_t egress_stages = 12;
  StageBudget budget;
  uint8_t max_recirculations = 4;
};

// Consecutive stages from `first` to `last`; an ingress range may continue into the egress
// stages (first_gress ingress, last_gress egress).
struct StageRange {
  Gress first_gress = Gress::kIngress;
  int first_stage = 0;
  Gress last_gress = Gress::kIngress;
  int last_stage = 0;
  int stages = 0;
  std::string ToString() const;  // "ingress stages 4-11 and egress stages 0-7"
};

// A register array whose lanes are split over consecutive stages (see AddLaneSplitRegister).
struct LaneSplitRegister {
  RegisterArray* reg = nullptr;
  StageRange range;
  uint16_t lanes_per_stage = 0;
};

// Where a table or register array of the program lives (one of table and reg is set).
struct ResourcePlacement {
  Gress gress = Gress::kIngress;
  int stage = 0;      // the first stage of a lane-split array
  std::string where;  // "ingress stage 3", or a lane-split array's StageRange
  MatchTable* table = nullptr;
  RegisterArray* reg = nullptr;
};

// The tables and registers of the loaded program, by name, for the control plane.
class PipelineResources {
 public:
  MatchTable* FindTable(std::string_view name) const;
  RegisterArray* FindRegister(std::string_view name) const;
  std::vector<MatchTable*> Tables() const;
  std::vector<RegisterArray*> Registers() const;
  // Every table and array in the order the program declared them.
  const std::vector<ResourcePlacement>& Placements() const { return placements_; }

 private:
  friend class ProgramBuilder;
  std::vector<ResourcePlacement> placements_;
  std::map<std::string, std::unique_ptr<MatchTable>, std::less<>> tables_;
  std::map<std::string, std::unique_ptr<RegisterArray>, std::less<>> registers_;
};

class ProgramBuilder {
 public:
  static constexpr int kMaxRegisterArrays = 64;  // bits of Metadata::register_access_mask

  ProgramBuilder(std::string program, const PipelineConfig& config, PipelineResources& resources);

  // Creates a table in a stage. Errors (bad spec, duplicate name, stage out of range) are also
  // recorded in the report, so a program may declare everything and check Finish() once.
  Result<MatchTable*> AddTable(Gress gress, int stage, const TableSpec& spec);
  // Creates a register array whose one read-modify-write per pass happens in this stage.
  Result<RegisterArray*> AddRegister(Gress gress, int stage, const RegisterSpec& spec);
  // Creates ONE array (index-major: an index's lanes are consecutive cells) whose lanes are
  // split over consecutive stages, lanes_per_stage in each (one stateful ALU per lane), from
  // `first_stage` of `gress` on; an ingress array continues into egress stage 0 and on when the
  // ingress stages run out. Each stage is charged its slice's ALUs and SRAM in the report. The
  // array still allows one read-modify-write per packet pass, and that one access covers all
  // lanes: every stage's ALUs update their slice of the same index in the same pass.
  Result<LaneSplitRegister> AddLaneSplitRegister(Gress gress, int first_stage,
                                                 const RegisterSpec& spec,
                                                 uint16_t lanes_per_stage);
  // Declares a further access to an existing array: always an error, since an array allows one
  // read-modify-write per packet pass (hardware places it in one stage's stateful ALU).
  Status AccessRegister(Gress gress, int stage, const RegisterArray* reg);
  // Stateless ALU work (hashing, header rewrites) does not consume a budgeted resource, but a
  // program may note it for the report.
  void Note(std::string note);

  // Checks the budget of every stage; the error lists each overflow. The report is kept.
  Status Finish();
  const ResourceReport& report() const { return report_; }

 private:
  StageUsage* Stage(Gress gress, int stage);
  Status Fail(std::string error);
  // Checks the name and the id budget and creates the array (not yet placed in a stage).
  Result<std::unique_ptr<RegisterArray>> NewRegister(const RegisterSpec& spec);

  const PipelineConfig& config_;
  PipelineResources& resources_;
  ResourceReport report_;
  std::map<const RegisterArray*, std::string> register_homes_;
  int next_register_id_ = 0;
};

}  // namespace swemu
