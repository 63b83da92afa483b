#pragma once
// Where a switch's cycles go, element by element (`swemu --bench`, `show runtime`): the parser,
// each stage that holds a table or register array (named as `show resources` places them), the
// program's own work between those stages, the TM's enqueue and dequeue and the deparser. The
// tables and arrays time their own lookups and read-modify-writes; the switch times the rest.
// Off (no counter reachable, one never-taken branch per element) until Enable(true).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/core/cycles.h"
#include "pipeline/program/program_builder.h"

namespace swemu {

// The elements the switch itself times, in pipeline order.
enum class PipeElement : uint8_t {
  kPassStart,  // metadata reset and rx counts (offline; in real time the datapath's rx does it)
  kParser,
  kIngressProgram,  // the program's ingress, its stages included
  kTmEnqueue,
  kTmDequeue,
  kEgressProgram,  // the program's egress, its stages included
  kDeparser,       // the deparser and the egress pass's drops and tx accounting
  // Whole calls into the switch (Switch::ReceiveBurst, TransmitBurst), timed only with
  // TimeSwitchCalls: what they spend outside the elements above is the switch's own glue.
  kReceiveCall,
  kTransmitCall,
  kCount,
};

class StageProfile {
 public:
  // One counter per stage of `resources` that holds a table or an array; `resources` must
  // outlive the profile.
  explicit StageProfile(const PipelineResources& resources);
  ~StageProfile();
  StageProfile(const StageProfile&) = delete;
  StageProfile& operator=(const StageProfile&) = delete;

  // Points every table and array at its stage's counter (on) or at nothing (off).
  void Enable(bool on) noexcept;
  bool enabled() const noexcept { return enabled_; }
  // The switch enters a program's ingress or egress: what the stages spend from here on is
  // charged to that pass (a program may run an egress stage's array in its ingress pass, as
  // atp does with the stages after its lanes).
  void EnterPass(Gress pass) noexcept {
    if (enabled_ && pass != pass_) Point(pass);
  }
  // The counter of an element the switch times; nullptr while off.
  CycleCounter* element(PipeElement e) noexcept {
    return enabled_ ? &elements_[static_cast<std::size_t>(e)] : nullptr;
  }
  // Also time whole receive and transmit calls (swemu --bench, which drives the switch through
  // exactly those two calls), so that the switch's glue around the elements gets its rows.
  void TimeSwitchCalls(bool on) noexcept { switch_calls_ = on; }
  CycleCounter* switch_call(PipeElement e) noexcept {
    return enabled_ && switch_calls_ ? &elements_[static_cast<std::size_t>(e)] : nullptr;
  }
  void Reset() noexcept;
  // Adds another profile of the same program's counters (a replica on another lcore).
  void Add(const StageProfile& other) noexcept;

  struct Row {
    std::string name;    // "parser", "ingress stage 1: register atp_id", ...
    bool stage = false;  // a stage of tables or arrays (printed indented under its program)
    double cycles = 0;   // with the timing overhead subtracted
    uint64_t calls = 0;
    uint64_t packets = 0;  // packets the timed calls covered
  };
  // The rows in pipeline order: pass start, parser, ingress stages, ingress program logic (what the
  // program's ingress spent outside its stages), TM enqueue, TM dequeue, egress stages, egress
  // program logic, deparser. `overhead` (MeasureScopeOverhead) is taken off every timed call,
  // and what a stage's timing added to its program's time is taken off the program's.
  std::vector<Row> Rows(const ScopeOverhead& overhead) const;
  // The rows as text: ns per packet of `packets` (those that entered the pipeline), Mpps at
  // that cost alone, the share of the sum and ns per timed call.
  static std::string Format(const std::vector<Row>& rows, uint64_t packets, double cycles_per_ns,
                            const std::string& indent);

 private:
  void Point(Gress pass) noexcept;

  struct Stage {
    std::string name;
    Gress gress = Gress::kIngress;
    int stage = 0;
    CycleCounter counter[2];  // by the pass that ran the stage (Gress)
    std::vector<MatchTable*> tables;
    std::vector<RegisterArray*> registers;
  };
  std::vector<Stage> stages_;  // sorted by gress, then stage; never resized after construction
  std::array<CycleCounter, static_cast<std::size_t>(PipeElement::kCount)> elements_{};
  bool enabled_ = false;
  bool switch_calls_ = false;
  Gress pass_ = Gress::kIngress;
};

}  // namespace swemu
