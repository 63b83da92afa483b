#pragma once
// One GOAT training job as its hosts see it: who the workers and the PS are, how the model is
// split into sub-models (fragments of `elements` int32 values each), and, from the plan, each
// worker's aggregation node for each sub-model (III-D steps 1-2: the per-fragment node ids a
// worker writes into its headers). `k` > 0 is the asynchronous mode: the PS completes a fragment
// from the first k workers' gradients (Algorithm 2's K; late ones are discarded, as K-SGD).
//
// A worker's gradient is one int32 vector: sub-model g's fragments, in order, then g + 1's;
// fragment f of sub-model g holds elements [Offset(g) + f * elements, ... + elements), the last
// one of the vector zero-padded.
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/core/status.h"
#include "pipeline/wire/address.h"
#include "pipeline/wire/goat.h"

namespace swemu {

struct GoatHostAddr {
  std::string name;
  MacAddr mac;
  Ipv4Addr ip = 0;
};

struct GoatJob {
  uint16_t job_id = 1;
  uint16_t udp_port = kGoatDefaultUdpPort;
  uint16_t elements = kGoatDefaultElements;
  std::vector<GoatHostAddr> workers;  // worker w has bitmap bit w
  GoatHostAddr ps;
  std::vector<uint32_t> fragments;          // per sub-model
  std::vector<std::vector<uint16_t>> node;  // node[w][g]: kGoatNodePs, a switch id, or Any
  uint32_t k = 0;                           // 0: every worker (synchronous)

  uint32_t num_workers() const { return static_cast<uint32_t>(workers.size()); }
  uint32_t num_submodels() const { return static_cast<uint32_t>(fragments.size()); }
  uint64_t full_bitmap() const;
  uint32_t target() const { return k == 0 ? num_workers() : k; }
  // Fragments over all sub-models, and the first global fragment of sub-model g.
  uint64_t total_fragments() const;
  uint64_t first_fragment(uint32_t g) const;
  // int32 values in a worker's gradient vector (total_fragments * elements).
  uint64_t total_elements() const { return total_fragments() * elements; }
  // The node id results of sub-model g carry: Any when any worker shares (so switches release
  // their slots as the result passes back), else the PS.
  uint16_t result_node(uint32_t g) const;
  // One line naming the problem: no workers, more than 64, k > workers, a sub-model without
  // fragments, a node table of the wrong shape, job id 0, elements 0.
  Status Validate() const;
};

// Where a worker's global fragment index lands: sub-model and fragment within it.
struct GoatFragmentRef {
  uint32_t submodel = 0;
  uint32_t fragment = 0;
};

// A table from global fragment index to (sub-model, fragment), built once per job.
std::vector<GoatFragmentRef> GoatFragmentTable(const GoatJob& job);

}  // namespace swemu
