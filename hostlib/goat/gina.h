#pragma once
// GOAT's GINA problem (IV-A, IV-B): where each worker's gradient of each sub-model is
// aggregated, on a programmable switch or at the PS, so that the traffic is least.
//
//   min sum_g b(g) * ( sum_w sum_{s in S+PS} y(s,w,g) D_w(s) + sum_{s in S} x(s,g) D_s(PS) )
//   sum_{s in S+PS} y(s,w,g) = 1        every worker's sub-model goes to one node
//   y(s,w,g) <= x(s,g)                   only to a switch that holds the sub-model
//   sum_g x(s,g) b(g) <= B(s)            within each switch's memory
// The paper prints the last two misprinted ("sum_s y >= x", a sum over s); this is how its text
// and the authors' code read them (docs/papers.md, "GOAT"). Sizes and memory are in aggregator
// slots (one slot holds one fragment: 64 values of 4 bytes), distances in hops.
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/core/status.h"

namespace swemu {

struct GinaProblem {
  std::vector<std::string> switch_names;                // the programmable switches S
  std::vector<uint64_t> memory;                         // B(s), slots
  std::vector<uint32_t> switch_to_ps;                   // D_s(PS), hops
  std::vector<std::string> worker_names;                // W
  std::vector<std::vector<uint32_t>> worker_to_switch;  // D_w(s), [w][s]
  std::vector<uint32_t> worker_to_ps;                   // D_w(PS)
  std::vector<uint64_t> submodels;                      // b(g), slots, each at most max B(s)

  std::size_t num_switches() const { return switch_names.size(); }
  std::size_t num_workers() const { return worker_names.size(); }
  // One line naming what is wrong: sizes that disagree, an empty sub-model, one larger than
  // every switch's memory (split it first), no workers.
  Status Validate() const;
};

// Workers with the same distance to every switch and to the PS: the LP gives all of them the
// same y at some optimum, so it needs one set of y per class, not per worker.
struct WorkerClass {
  std::vector<uint32_t> workers;
};
std::vector<WorkerClass> WorkerClasses(const GinaProblem& problem);

// Sub-models no larger than max_slots: a larger one is cut into equal pieces (the paper: "a
// sub-model larger than the switch memory is split"). Fails for max_slots = 0.
Result<std::vector<uint64_t>> SplitSubmodels(const std::vector<uint64_t>& slots,
                                             uint64_t max_slots);

// Slots for a tensor of `bytes` float32 gradients, 64 values per slot.
inline uint64_t GinaSlotsOfBytes(uint64_t bytes) { return (bytes + 255) / 256; }

// A network as GOAT sees it: nodes (switches, workers, the PS) and links, distances in hops.
struct GinaNode {
  enum class Kind : uint8_t { kSwitch, kWorker, kPs };
  std::string name;
  Kind kind = Kind::kSwitch;
  uint64_t memory = 0;  // a switch's aggregator slots; 0: not programmable
};
struct GinaGraph {
  std::vector<GinaNode> nodes;
  std::vector<std::pair<uint32_t, uint32_t>> links;  // node indexes, full duplex

  uint32_t Add(GinaNode node);
  Status Link(const std::string& a, const std::string& b);
};

// The problem of a graph with exactly one PS: its programmable switches, its workers (in node
// order), hop distances by breadth-first search. Fails naming an unreachable node, a duplicate
// name or a graph without PS or workers.
Result<GinaProblem> BuildGinaProblem(const GinaGraph& graph, std::vector<uint64_t> submodels);

// A leaf-spine: `spines` spines each linked to every leaf, `servers` servers spread evenly over
// the leaves (the PS the first server of the last leaf, every other server a worker), the
// switches named in `programmable` holding `memory` slots each.
GinaGraph LeafSpineGraph(uint32_t spines, uint32_t leaves, uint32_t servers,
                         const std::vector<std::string>& programmable, uint64_t memory);

}  // namespace swemu
