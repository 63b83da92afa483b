#include "pipeline/engine/partition.h"

#include <algorithm>
#include <numeric>

namespace swemu {
namespace {

uint32_t IndexOf(const std::vector<std::string>& names, const std::string& name) {
  const auto at = std::find(names.begin(), names.end(), name);
  return static_cast<uint32_t>(at - names.begin());
}

// The groups of switches joined by links without delay, as the group's lowest switch index.
std::vector<uint32_t> ZeroDelayGroups(const std::vector<std::string>& switches,
                                      const std::vector<LinkSpec>& links,
                                      std::string* joining_link) {
  std::vector<uint32_t> root(switches.size());
  std::iota(root.begin(), root.end(), 0u);
  auto find = [&](uint32_t x) {
    while (root[x] != x) x = root[x] = root[root[x]];
    return x;
  };
  for (const LinkSpec& link : links) {
    const uint32_t a = IndexOf(switches, link.a), b = IndexOf(switches, link.b);
    if (link.delay_ns != 0 || a >= switches.size() || b >= switches.size()) continue;
    const uint32_t ra = find(a), rb = find(b);
    if (ra == rb) continue;
    root[std::max(ra, rb)] = std::min(ra, rb);
    if (joining_link->empty()) {
      *joining_link = link.a + ":" + std::to_string(link.a_port) + " - " + link.b + ":" +
                      std::to_string(link.b_port);
    }
  }
  std::vector<uint32_t> group(switches.size());
  for (uint32_t i = 0; i < switches.size(); ++i) group[i] = find(i);
  return group;
}

}  // namespace

Result<std::vector<uint32_t>> AssignPartitions(const std::vector<std::string>& switches,
                                               const std::vector<LinkSpec>& links,
                                               const std::vector<std::string>& host_switches,
                                               uint32_t partitions) {
  const std::string asked = std::to_string(partitions) + " partitions";
  if (partitions == 0) return Status::Error("0 partitions: at least 1");
  if (partitions > switches.size()) {
    return Status::Error(asked + " for " + std::to_string(switches.size()) +
                         (switches.size() == 1 ? " switch" : " switches") +
                         ": at most one partition per switch");
  }
  std::vector<uint64_t> weight(switches.size(), 1);
  for (const std::string& sw : host_switches) {
    if (const uint32_t i = IndexOf(switches, sw); i < switches.size()) ++weight[i];
  }
  for (const LinkSpec& link : links) {
    for (const std::string* end : {&link.a, &link.b}) {
      if (const uint32_t i = IndexOf(switches, *end); i < switches.size()) ++weight[i];
    }
  }
  std::string joining_link;
  const std::vector<uint32_t> group = ZeroDelayGroups(switches, links, &joining_link);
  std::vector<uint64_t> group_weight(switches.size(), 0);
  std::vector<uint32_t> roots;
  for (uint32_t i = 0; i < switches.size(); ++i) {
    if (group[i] == i) roots.push_back(i);
    group_weight[group[i]] += weight[i];
  }
  if (roots.size() < partitions) {
    return Status::Error(asked + ": links without delay (" + joining_link + ") leave " +
                         std::to_string(roots.size()) +
                         " groups of switches that may run apart (a link between partitions "
                         "needs a delay)");
  }
  std::stable_sort(roots.begin(), roots.end(),
                   [&](uint32_t a, uint32_t b) { return group_weight[a] > group_weight[b]; });
  std::vector<uint64_t> load(partitions, 0);
  std::vector<uint32_t> partition_of_group(switches.size(), 0);
  for (uint32_t root : roots) {
    const auto lightest = static_cast<uint32_t>(std::min_element(load.begin(), load.end()) -
                                                load.begin());
    partition_of_group[root] = lightest;
    load[lightest] += group_weight[root];
  }
  std::vector<uint32_t> partition_of(switches.size());
  for (uint32_t i = 0; i < switches.size(); ++i) partition_of[i] = partition_of_group[group[i]];
  return partition_of;
}

}  // namespace swemu
