#pragma once
// AggEngine's plan (PLink section 4.2.1): who aggregates which chunk. The gradient buffer is cut
// into chunks (the paper: layer buffers, 16-64 KB pieces, of varying size). In two-level
// hierarchical aggregation (2LHA) each group has, per chunk, one local master (LM) among its
// members, and each chunk has one global master (GM), which is one of its LMs (GM(i,c) = 1 =>
// LM(i,c) = 1). Masters are balanced by chunk bytes: each group holds GMs in proportion to its
// size, and within a group the LMs are spread evenly over the members by bytes (the paper's
// "approximation set partition": largest chunk first to the least loaded, LPT). Flat aggregation
// (FA) is the baseline: one master per chunk among all nodes (a sharded PS).
//
// The schedule of 2LHA runs in four steps, each a set of transfers: (1) every member sends its
// chunk to its group's LM, (2) every LM that is not the GM sends its group's sum to the GM,
// (3) the GM sends the total back to the other LMs, (4) every LM sends it to its members. FA
// runs (1) to the master and (4) back. Table 1: with groups = C racks of N nodes and buffer S,
// 2LHA moves 2(C-1)S across racks and FA 2N(C-1)S; both move 2(NC-1)S in all.
#include <cstdint>
#include <vector>

#include "pipeline/core/status.h"

namespace swemu {

struct AggPlan {
  uint32_t nodes = 0;
  std::vector<uint32_t> group_of;  // per node
  uint32_t groups = 0;
  std::vector<uint64_t> chunk_bytes;
  std::vector<std::vector<uint32_t>> local_master;  // [chunk][group]: a node of that group
  std::vector<uint32_t> global_master;              // [chunk]: one of its local masters
  bool flat = false;                                // FA: one group, the LM is the master
  // One line naming a broken invariant (a master outside its group, a GM that is not an LM).
  Status Validate() const;
};

// 2LHA over the given groups (labels 0..k-1, every group non-empty).
Result<AggPlan> MakeTwoLevelPlan(const std::vector<uint32_t>& group_of,
                                 const std::vector<uint64_t>& chunk_bytes);
// FA: every chunk's master drawn by LPT over all nodes.
Result<AggPlan> MakeFlatPlan(uint32_t nodes, const std::vector<uint64_t>& chunk_bytes);

// Equal chunks of at most chunk_size bytes covering `bytes` (the last one shorter).
std::vector<uint64_t> CutChunks(uint64_t bytes, uint64_t chunk_size);

// One transfer of the schedule: `bytes` of chunk `chunk` from `from` to `to` in `step` (0-3).
struct AggTransfer {
  uint32_t step = 0;
  uint32_t chunk = 0;
  uint32_t from = 0;
  uint32_t to = 0;
  uint64_t bytes = 0;
};
std::vector<AggTransfer> Schedule(const AggPlan& plan);

// Bytes the schedule moves, in all and between nodes of different `rack_of` labels.
struct AggTraffic {
  uint64_t total = 0;
  uint64_t cross_rack = 0;
  std::vector<uint64_t> sent;      // per node
  std::vector<uint64_t> received;  // per node
};
AggTraffic CountTraffic(const AggPlan& plan, const std::vector<uint32_t>& rack_of);

// Runs the schedule on in-memory buffers (float sums in schedule order): out[n] becomes the sum
// of every in[m], chunk by chunk. The reference the packet-level engine is checked against.
Status RunScheduleInMemory(const AggPlan& plan, const std::vector<std::vector<float>>& in,
                           std::vector<std::vector<float>>* out);

}  // namespace swemu
