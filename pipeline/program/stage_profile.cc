#include "pipeline/program/stage_profile.h"

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <tuple>

namespace swemu {

StageProfile::StageProfile(const PipelineResources& resources) {
  // One stage per placement string; a stage that holds several things lists them all.
  std::map<std::tuple<Gress, int, std::string>, Stage> by_stage;
  for (const ResourcePlacement& p : resources.Placements()) {
    Stage& s = by_stage[{p.gress, p.stage, p.where}];
    const std::string item =
        p.table != nullptr ? "table " + p.table->name() : "register " + p.reg->name();
    s.name = s.name.empty() ? p.where + ": " + item : s.name + ", " + item;
    s.gress = p.gress;
    s.stage = p.stage;
    if (p.table != nullptr) s.tables.push_back(p.table);
    if (p.reg != nullptr) s.registers.push_back(p.reg);
  }
  for (auto& [key, stage] : by_stage) stages_.push_back(std::move(stage));
}

StageProfile::~StageProfile() { Enable(false); }

void StageProfile::Enable(bool on) noexcept {
  enabled_ = on;
  Point(Gress::kIngress);
}

void StageProfile::Point(Gress pass) noexcept {
  pass_ = pass;
  for (Stage& s : stages_) {
    CycleCounter* counter = enabled_ ? &s.counter[static_cast<int>(pass)] : nullptr;
    for (MatchTable* t : s.tables) t->SetCycleCounter(counter);
    for (RegisterArray* r : s.registers) r->SetCycleCounter(counter);
  }
}

void StageProfile::Reset() noexcept {
  for (Stage& s : stages_) s.counter[0] = s.counter[1] = CycleCounter{};
  elements_.fill(CycleCounter{});
}

void StageProfile::Add(const StageProfile& other) noexcept {
  for (std::size_t i = 0; i < stages_.size() && i < other.stages_.size(); ++i) {
    for (int pass = 0; pass < 2; ++pass)
      stages_[i].counter[pass].Add(other.stages_[i].counter[pass]);
  }
  for (std::size_t i = 0; i < elements_.size(); ++i) elements_[i].Add(other.elements_[i]);
}

std::vector<StageProfile::Row> StageProfile::Rows(const ScopeOverhead& overhead) const {
  auto net = [&](const CycleCounter& c) {
    return std::max(0.0,
                    static_cast<double>(c.cycles) - static_cast<double>(c.calls) * overhead.inside);
  };
  auto element = [&](PipeElement e, const char* name) {
    const CycleCounter& c = elements_[static_cast<std::size_t>(e)];
    return Row{name, false, net(c), c.calls, c.packets};
  };
  std::vector<Row> rows;
  const Row start = element(PipeElement::kPassStart, "pass start (metadata reset, rx counts)");
  if (start.calls != 0) rows.push_back(start);
  rows.push_back(element(PipeElement::kParser, "parser"));
  for (const Gress pass : {Gress::kIngress, Gress::kEgress}) {
    const bool ingress = pass == Gress::kIngress;
    Row logic = element(ingress ? PipeElement::kIngressProgram : PipeElement::kEgressProgram,
                        ingress ? "ingress program logic (outside its stages)"
                                : "egress program logic (outside its stages)");
    for (const Stage& s : stages_) {
      const CycleCounter& c = s.counter[static_cast<int>(pass)];
      // A stage is listed under the pass that ran it, or its own gress if it never ran.
      if (c.calls == 0 && (s.gress != pass || s.counter[1 - static_cast<int>(pass)].calls != 0)) {
        continue;
      }
      const Row stage{s.name, true, net(c), c.calls, c.packets};
      // What the program's own timer saw of this stage: its work and each call's whole cost.
      logic.cycles -= stage.cycles + static_cast<double>(stage.calls) * overhead.whole;
      rows.push_back(stage);
    }
    logic.cycles = std::max(0.0, logic.cycles);
    rows.push_back(logic);
    if (ingress) {
      rows.push_back(element(PipeElement::kTmEnqueue, "tm enqueue"));
      rows.push_back(element(PipeElement::kTmDequeue, "tm dequeue"));
    }
  }
  rows.push_back(element(PipeElement::kDeparser, "deparser (and egress drops, tx counts)"));
  // A whole call less what its own timer saw of the elements inside it.
  auto glue = [&](PipeElement call, std::initializer_list<PipeElement> inside, const char* name) {
    Row row = element(call, name);
    if (row.calls == 0) return;
    for (PipeElement e : inside) {
      const CycleCounter& c = elements_[static_cast<std::size_t>(e)];
      row.cycles -= net(c) + static_cast<double>(c.calls) * overhead.whole;
    }
    row.cycles = std::max(0.0, row.cycles);
    rows.push_back(row);
  };
  glue(PipeElement::kReceiveCall,
       {PipeElement::kPassStart, PipeElement::kParser, PipeElement::kIngressProgram,
        PipeElement::kTmEnqueue},
       "switch receive call (outside the elements)");
  glue(PipeElement::kTransmitCall,
       {PipeElement::kTmDequeue, PipeElement::kEgressProgram, PipeElement::kDeparser},
       "switch transmit call (outside the elements)");
  return rows;
}

std::string StageProfile::Format(const std::vector<Row>& rows, uint64_t packets,
                                 double cycles_per_ns, const std::string& indent) {
  double sum = 0;
  for (const Row& r : rows) sum += r.cycles;
  int width = 8;
  for (const Row& r : rows) width = std::max(width, static_cast<int>(r.name.size()) + 2);
  std::string out;
  char line[512];
  std::snprintf(line, sizeof(line), "%s%-*s %9s %8s %6s %9s %9s\n", indent.c_str(), width,
                "element", "ns/packet", "Mpps", "share", "ns/call", "calls/pkt");
  out += line;
  const double pkts = packets == 0 ? 1.0 : static_cast<double>(packets);
  for (const Row& r : rows) {
    const double ns = r.cycles / cycles_per_ns / pkts;
    char mpps[16] = "-";
    if (ns >= 0.1) std::snprintf(mpps, sizeof(mpps), "%.1f", 1000.0 / ns);  // else too fast to tell
    const std::string name = (r.stage ? "  " : "") + r.name;
    std::snprintf(line, sizeof(line), "%s%-*s %9.1f %8s %5.1f%% %9.1f %9.2f\n", indent.c_str(),
                  width, name.c_str(), ns, mpps, sum > 0 ? 100.0 * r.cycles / sum : 0.0,
                  r.calls == 0 ? 0.0 : r.cycles / cycles_per_ns / static_cast<double>(r.calls),
                  static_cast<double>(r.calls) / pkts);
    out += line;
  }
  return out;
}

}  // namespace swemu
