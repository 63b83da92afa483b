#include "hostlib/goat/goat_job.h"

#include <numeric>

namespace swemu {

uint64_t GoatJob::full_bitmap() const {
  const uint32_t n = num_workers();
  return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
}

uint64_t GoatJob::total_fragments() const {
  return std::accumulate(fragments.begin(), fragments.end(), uint64_t{0});
}

uint64_t GoatJob::first_fragment(uint32_t g) const {
  return std::accumulate(fragments.begin(), fragments.begin() + g, uint64_t{0});
}

uint16_t GoatJob::result_node(uint32_t g) const {
  for (const std::vector<uint16_t>& row : node) {
    if (g < row.size() && row[g] == kGoatNodeAny) return kGoatNodeAny;
  }
  return kGoatNodePs;
}

Status GoatJob::Validate() const {
  if (job_id == 0) return Status::Error("goat job: job id 0 is reserved");
  if (elements == 0) return Status::Error("goat job: elements must be at least 1");
  if (workers.empty() || workers.size() > kGoatMaxWorkers) {
    return Status::Error("goat job: " + std::to_string(workers.size()) + " workers (1.." +
                         std::to_string(kGoatMaxWorkers) + ")");
  }
  if (k > workers.size()) {
    return Status::Error("goat job: K = " + std::to_string(k) + " exceeds the " +
                         std::to_string(workers.size()) + " workers");
  }
  if (fragments.empty()) return Status::Error("goat job: no sub-models");
  for (std::size_t g = 0; g < fragments.size(); ++g) {
    if (fragments[g] == 0) {
      return Status::Error("goat job: sub-model " + std::to_string(g) + " has no fragments");
    }
  }
  if (node.size() != workers.size()) {
    return Status::Error("goat job: the plan gives nodes for " + std::to_string(node.size()) +
                         " workers, the job has " + std::to_string(workers.size()));
  }
  for (std::size_t w = 0; w < node.size(); ++w) {
    if (node[w].size() != fragments.size()) {
      return Status::Error("goat job: worker " + std::to_string(w) + " has nodes for " +
                           std::to_string(node[w].size()) + " sub-models, the job has " +
                           std::to_string(fragments.size()));
    }
  }
  return Status::Ok();
}

std::vector<GoatFragmentRef> GoatFragmentTable(const GoatJob& job) {
  std::vector<GoatFragmentRef> table;
  table.reserve(job.total_fragments());
  for (uint32_t g = 0; g < job.num_submodels(); ++g) {
    for (uint32_t f = 0; f < job.fragments[g]; ++f) table.push_back({g, f});
  }
  return table;
}

}  // namespace swemu
