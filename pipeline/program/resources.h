#pragma once
// The stage budget of the emulated ASIC and the resource report a program gets at load time,
// in the spirit of a P4 compiler's resource summary. Budgets follow Tofino-1 orders of magnitude
// (per MAU stage: 80 SRAM blocks of 128 Kb, 24 TCAM blocks of 512 entries, 16 logical tables,
// 4 stateful ALUs); a program that exceeds them is refused, naming the stage and the resource.
#include <cstdint>
#include <string>
#include <vector>

namespace swemu {

enum class Gress : uint8_t { kIngress, kEgress };
const char* GressName(Gress gress);

struct StageBudget {
  uint64_t sram_bytes = 80 * 16 * 1024;  // 80 blocks x 128 Kb
  uint64_t tcam_entries = 24 * 512;      // 24 blocks x 512 entries
  uint32_t tables = 16;                  // logical match tables
  uint32_t stateful_alus = 4;            // register read-modify-write units
};

struct StageUsage {
  uint64_t sram_bytes = 0;
  uint64_t tcam_entries = 0;
  uint32_t tables = 0;
  uint32_t stateful_alus = 0;
  std::vector<std::string> items;  // what lives here, e.g. "table ipv4_lpm", "register bitmap"
  bool empty() const { return items.empty(); }
};

struct ResourceReport {
  std::string program;
  StageBudget budget;
  std::vector<StageUsage> ingress;
  std::vector<StageUsage> egress;
  std::vector<std::string> notes;   // how the program differs from real hardware, if it does
  std::vector<std::string> errors;  // empty when the program fits

  bool fits() const { return errors.empty(); }
  // Human-readable table: per used stage, each resource as used/available, then totals.
  std::string Format() const;
};

}  // namespace swemu
