#include "hostlib/plink/agg_plan.h"

#include <algorithm>
#include <numeric>

namespace swemu {
namespace {

// Chunk indexes, largest first (ties by index): the LPT order.
std::vector<uint32_t> LargestFirst(const std::vector<uint64_t>& bytes) {
  std::vector<uint32_t> order(bytes.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return bytes[a] > bytes[b]; });
  return order;
}

Status CheckChunks(const std::vector<uint64_t>& chunk_bytes) {
  if (chunk_bytes.empty()) return Status::Error("aggregation plan: no chunks");
  for (uint64_t b : chunk_bytes) {
    if (b == 0) return Status::Error("aggregation plan: an empty chunk");
  }
  return Status::Ok();
}

}  // namespace

Status AggPlan::Validate() const {
  if (group_of.size() != nodes)
    return Status::Error("aggregation plan: group_of has the wrong size");
  if (local_master.size() != chunk_bytes.size() || global_master.size() != chunk_bytes.size()) {
    return Status::Error("aggregation plan: masters for the wrong number of chunks");
  }
  for (std::size_t c = 0; c < chunk_bytes.size(); ++c) {
    if (local_master[c].size() != groups) {
      return Status::Error("aggregation plan: chunk " + std::to_string(c) + " lacks local masters");
    }
    bool gm_is_lm = false;
    for (uint32_t g = 0; g < groups; ++g) {
      const uint32_t lm = local_master[c][g];
      if (lm >= nodes || group_of[lm] != g) {
        return Status::Error("aggregation plan: chunk " + std::to_string(c) +
                             "'s local master of group " + std::to_string(g) +
                             " is not in that group");
      }
      gm_is_lm |= lm == global_master[c];
    }
    if (!gm_is_lm) {
      return Status::Error("aggregation plan: chunk " + std::to_string(c) +
                           "'s global master is none of its local masters");
    }
  }
  return Status::Ok();
}

Result<AggPlan> MakeTwoLevelPlan(const std::vector<uint32_t>& group_of,
                                 const std::vector<uint64_t>& chunk_bytes) {
  SWEMU_RETURN_IF_ERROR(CheckChunks(chunk_bytes));
  if (group_of.empty()) return Status::Error("aggregation plan: no nodes");
  AggPlan p;
  p.nodes = static_cast<uint32_t>(group_of.size());
  p.group_of = group_of;
  p.groups = *std::max_element(group_of.begin(), group_of.end()) + 1;
  p.chunk_bytes = chunk_bytes;
  std::vector<std::vector<uint32_t>> members(p.groups);
  for (uint32_t n = 0; n < p.nodes; ++n) members[group_of[n]].push_back(n);
  for (uint32_t g = 0; g < p.groups; ++g) {
    if (members[g].empty()) {
      return Status::Error("aggregation plan: group " + std::to_string(g) + " has no nodes");
    }
  }
  const std::vector<uint32_t> order = LargestFirst(chunk_bytes);
  // Global masters: each group's GM bytes in proportion to its size (LPT on bytes / size).
  std::vector<uint32_t> gm_group(chunk_bytes.size());
  std::vector<double> group_load(p.groups, 0.0);
  for (uint32_t c : order) {
    uint32_t best = 0;
    for (uint32_t g = 1; g < p.groups; ++g) {
      if ((group_load[g] + chunk_bytes[c]) / members[g].size() <
          (group_load[best] + chunk_bytes[c]) / members[best].size()) {
        best = g;
      }
    }
    gm_group[c] = best;
    group_load[best] += static_cast<double>(chunk_bytes[c]);
  }
  // Local masters: within each group, LPT over its members by bytes. A chunk's GM is its LM in
  // the GM's group; GM bytes count twice there (it aggregates at both levels), so the LPT sees
  // them first and spreads them.
  p.local_master.assign(chunk_bytes.size(), std::vector<uint32_t>(p.groups, 0));
  p.global_master.assign(chunk_bytes.size(), 0);
  for (uint32_t g = 0; g < p.groups; ++g) {
    std::vector<uint64_t> load(members[g].size(), 0);
    std::vector<uint32_t> chunks = order;
    std::stable_partition(chunks.begin(), chunks.end(),
                          [&](uint32_t c) { return gm_group[c] == g; });
    for (uint32_t c : chunks) {
      const uint64_t weight = chunk_bytes[c] * (gm_group[c] == g ? 2 : 1);
      const auto m =
          static_cast<uint32_t>(std::min_element(load.begin(), load.end()) - load.begin());
      load[m] += weight;
      p.local_master[c][g] = members[g][m];
      if (gm_group[c] == g) p.global_master[c] = members[g][m];
    }
  }
  SWEMU_RETURN_IF_ERROR(p.Validate());
  return p;
}

Result<AggPlan> MakeFlatPlan(uint32_t nodes, const std::vector<uint64_t>& chunk_bytes) {
  SWEMU_RETURN_IF_ERROR(CheckChunks(chunk_bytes));
  if (nodes == 0) return Status::Error("aggregation plan: no nodes");
  AggPlan p;
  p.nodes = nodes;
  p.group_of.assign(nodes, 0);
  p.groups = 1;
  p.flat = true;
  p.chunk_bytes = chunk_bytes;
  p.local_master.assign(chunk_bytes.size(), std::vector<uint32_t>(1, 0));
  p.global_master.assign(chunk_bytes.size(), 0);
  std::vector<uint64_t> load(nodes, 0);
  for (uint32_t c : LargestFirst(chunk_bytes)) {
    const auto m = static_cast<uint32_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[m] += chunk_bytes[c];
    p.local_master[c][0] = p.global_master[c] = m;
  }
  return p;
}

std::vector<uint64_t> CutChunks(uint64_t bytes, uint64_t chunk_size) {
  std::vector<uint64_t> out;
  if (chunk_size == 0) return out;
  for (uint64_t at = 0; at < bytes; at += chunk_size)
    out.push_back(std::min(chunk_size, bytes - at));
  return out;
}

std::vector<AggTransfer> Schedule(const AggPlan& p) {
  std::vector<AggTransfer> out;
  for (uint32_t c = 0; c < p.chunk_bytes.size(); ++c) {
    const uint64_t b = p.chunk_bytes[c];
    const uint32_t gm = p.global_master[c];
    for (uint32_t n = 0; n < p.nodes; ++n) {
      const uint32_t lm = p.local_master[c][p.group_of[n]];
      if (n != lm) out.push_back({0, c, n, lm, b});
    }
    for (uint32_t g = 0; g < p.groups; ++g) {
      if (p.local_master[c][g] != gm) out.push_back({1, c, p.local_master[c][g], gm, b});
    }
    for (uint32_t g = 0; g < p.groups; ++g) {
      if (p.local_master[c][g] != gm) out.push_back({2, c, gm, p.local_master[c][g], b});
    }
    for (uint32_t n = 0; n < p.nodes; ++n) {
      const uint32_t lm = p.local_master[c][p.group_of[n]];
      if (n != lm) out.push_back({3, c, lm, n, b});
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const AggTransfer& a, const AggTransfer& b) { return a.step < b.step; });
  return out;
}

AggTraffic CountTraffic(const AggPlan& plan, const std::vector<uint32_t>& rack_of) {
  AggTraffic t;
  t.sent.assign(plan.nodes, 0);
  t.received.assign(plan.nodes, 0);
  for (const AggTransfer& x : Schedule(plan)) {
    t.total += x.bytes;
    if (x.from < rack_of.size() && x.to < rack_of.size() && rack_of[x.from] != rack_of[x.to]) {
      t.cross_rack += x.bytes;
    }
    t.sent[x.from] += x.bytes;
    t.received[x.to] += x.bytes;
  }
  return t;
}

Status RunScheduleInMemory(const AggPlan& plan, const std::vector<std::vector<float>>& in,
                           std::vector<std::vector<float>>* out) {
  const uint64_t total =
      std::accumulate(plan.chunk_bytes.begin(), plan.chunk_bytes.end(), uint64_t{0});
  if (in.size() != plan.nodes) return Status::Error("aggregation: one input per node");
  for (const auto& v : in) {
    if (v.size() * 4 != total) return Status::Error("aggregation: inputs must cover every chunk");
  }
  std::vector<uint64_t> first(plan.chunk_bytes.size(), 0);
  for (std::size_t c = 1; c < first.size(); ++c) {
    if (plan.chunk_bytes[c - 1] % 4 != 0)
      return Status::Error("aggregation: chunks of whole floats");
    first[c] = first[c - 1] + plan.chunk_bytes[c - 1] / 4;
  }
  *out = in;
  for (const AggTransfer& x : Schedule(plan)) {
    float* to = (*out)[x.to].data() + first[x.chunk];
    const float* from = (*out)[x.from].data() + first[x.chunk];
    for (uint64_t i = 0; i < x.bytes / 4; ++i) to[i] = x.step < 2 ? to[i] + from[i] : from[i];
  }
  return Status::Ok();
}

}  // namespace swemu
