#include "pipeline/program/resources.h"

#include <cstdio>
#include <sstream>

namespace swemu {

const char* GressName(Gress gress) { return gress == Gress::kIngress ? "ingress" : "egress"; }

namespace {

void FormatGress(std::ostringstream& out, const char* name, const std::vector<StageUsage>& stages,
                 const StageBudget& budget) {
  StageUsage total;
  int used_stages = 0;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const StageUsage& s = stages[i];
    if (s.empty()) continue;
    ++used_stages;
    char line[200];
    std::snprintf(line, sizeof(line),
                  "  %-7s stage %2zu  sram %8llu/%llu B  tcam %5llu/%llu  tables %2u/%u  "
                  "alus %2u/%u\n",
                  name, i, static_cast<unsigned long long>(s.sram_bytes),
                  static_cast<unsigned long long>(budget.sram_bytes),
                  static_cast<unsigned long long>(s.tcam_entries),
                  static_cast<unsigned long long>(budget.tcam_entries), s.tables, budget.tables,
                  s.stateful_alus, budget.stateful_alus);
    out << line;
    for (const std::string& item : s.items) out << "      " << item << '\n';
    total.sram_bytes += s.sram_bytes;
    total.tcam_entries += s.tcam_entries;
    total.tables += s.tables;
    total.stateful_alus += s.stateful_alus;
  }
  out << "  " << name << " total: stages " << used_stages << "/" << stages.size() << ", sram "
      << total.sram_bytes << "/" << budget.sram_bytes * stages.size() << " B, tcam "
      << total.tcam_entries << "/" << budget.tcam_entries * stages.size() << ", tables "
      << total.tables << ", alus " << total.stateful_alus << "/"
      << budget.stateful_alus * stages.size() << '\n';
}

}  // namespace

std::string ResourceReport::Format() const {
  std::ostringstream out;
  out << "program " << program << ": " << (fits() ? "fits" : "does NOT fit") << '\n';
  FormatGress(out, "ingress", ingress, budget);
  FormatGress(out, "egress", egress, budget);
  for (const std::string& note : notes) out << "  note: " << note << '\n';
  for (const std::string& error : errors) out << "  error: " << error << '\n';
  return out.str();
}

}  // namespace swemu
