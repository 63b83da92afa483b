#include "hostlib/goat/gina.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>

namespace swemu {

Status GinaProblem::Validate() const {
  const std::size_t s = switch_names.size();
  if (memory.size() != s || switch_to_ps.size() != s) {
    return Status::Error("GINA: memory and switch distances must have one value per switch");
  }
  if (worker_names.empty()) return Status::Error("GINA: no workers");
  if (worker_to_switch.size() != worker_names.size() || worker_to_ps.size() != worker_names.size()) {
    return Status::Error("GINA: distances must have one row per worker");
  }
  for (std::size_t w = 0; w < worker_to_switch.size(); ++w) {
    if (worker_to_switch[w].size() != s) {
      return Status::Error("GINA: worker " + worker_names[w] + ": one distance per switch");
    }
  }
  if (submodels.empty()) return Status::Error("GINA: no sub-models");
  const uint64_t largest = memory.empty() ? 0 : *std::max_element(memory.begin(), memory.end());
  for (std::size_t g = 0; g < submodels.size(); ++g) {
    if (submodels[g] == 0) return Status::Error("GINA: sub-model " + std::to_string(g) + " is empty");
    if (s != 0 && submodels[g] > largest) {
      return Status::Error("GINA: sub-model " + std::to_string(g) + " (" +
                           std::to_string(submodels[g]) + " slots) is larger than every switch's "
                           "memory (" + std::to_string(largest) + "): split it");
    }
  }
  return Status::Ok();
}

std::vector<WorkerClass> WorkerClasses(const GinaProblem& p) {
  std::map<std::vector<uint32_t>, std::size_t> index;
  std::vector<WorkerClass> classes;
  for (uint32_t w = 0; w < p.num_workers(); ++w) {
    std::vector<uint32_t> key = p.worker_to_switch[w];
    key.push_back(p.worker_to_ps[w]);
    auto [it, fresh] = index.emplace(std::move(key), classes.size());
    if (fresh) classes.emplace_back();
    classes[it->second].workers.push_back(w);
  }
  return classes;
}

Result<std::vector<uint64_t>> SplitSubmodels(const std::vector<uint64_t>& slots, uint64_t max_slots) {
  if (max_slots == 0) return Status::Error("GINA: no switch memory to split sub-models for");
  std::vector<uint64_t> out;
  for (uint64_t b : slots) {
    const uint64_t pieces = std::max<uint64_t>(1, (b + max_slots - 1) / max_slots);
    for (uint64_t k = 0; k < pieces; ++k) out.push_back(b / pieces + (k < b % pieces ? 1 : 0));
  }
  return out;
}

uint32_t GinaGraph::Add(GinaNode node) {
  nodes.push_back(std::move(node));
  return static_cast<uint32_t>(nodes.size() - 1);
}

Status GinaGraph::Link(const std::string& a, const std::string& b) {
  auto find = [&](const std::string& name) -> int64_t {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i].name == name) return static_cast<int64_t>(i);
    }
    return -1;
  };
  const int64_t i = find(a), j = find(b);
  if (i < 0 || j < 0) return Status::Error("GINA link " + a + " - " + b + ": unknown node " + (i < 0 ? a : b));
  links.emplace_back(static_cast<uint32_t>(i), static_cast<uint32_t>(j));
  return Status::Ok();
}

namespace {

constexpr uint32_t kUnreached = std::numeric_limits<uint32_t>::max();

std::vector<uint32_t> Hops(const std::vector<std::vector<uint32_t>>& adj, uint32_t from) {
  std::vector<uint32_t> d(adj.size(), kUnreached);
  std::deque<uint32_t> queue{from};
  d[from] = 0;
  while (!queue.empty()) {
    const uint32_t n = queue.front();
    queue.pop_front();
    for (uint32_t m : adj[n]) {
      if (d[m] == kUnreached) {
        d[m] = d[n] + 1;
        queue.push_back(m);
      }
    }
  }
  return d;
}

}  // namespace

Result<GinaProblem> BuildGinaProblem(const GinaGraph& graph, std::vector<uint64_t> submodels) {
  std::map<std::string, int> names;
  int64_t ps = -1;
  std::vector<uint32_t> switches, workers;
  for (uint32_t i = 0; i < graph.nodes.size(); ++i) {
    const GinaNode& n = graph.nodes[i];
    if (!names.emplace(n.name, 0).second) return Status::Error("GINA: node " + n.name + " twice");
    if (n.kind == GinaNode::Kind::kPs) {
      if (ps >= 0) return Status::Error("GINA: more than one PS (" + n.name + ")");
      ps = i;
    } else if (n.kind == GinaNode::Kind::kWorker) {
      workers.push_back(i);
    } else if (n.memory > 0) {
      switches.push_back(i);
    }
  }
  if (ps < 0) return Status::Error("GINA: no PS");
  std::vector<std::vector<uint32_t>> adj(graph.nodes.size());
  for (auto [a, b] : graph.links) {
    if (a >= adj.size() || b >= adj.size()) return Status::Error("GINA: a link to no node");
    adj[a].push_back(b);
    adj[b].push_back(a);
  }
  GinaProblem p;
  const std::vector<uint32_t> from_ps = Hops(adj, static_cast<uint32_t>(ps));
  auto reach = [&](uint32_t d, uint32_t node) -> Status {
    if (d == kUnreached) return Status::Error("GINA: " + graph.nodes[node].name + " cannot reach the PS");
    return Status::Ok();
  };
  for (uint32_t s : switches) {
    SWEMU_RETURN_IF_ERROR(reach(from_ps[s], s));
    p.switch_names.push_back(graph.nodes[s].name);
    p.memory.push_back(graph.nodes[s].memory);
    p.switch_to_ps.push_back(from_ps[s]);
  }
  for (uint32_t w : workers) {
    SWEMU_RETURN_IF_ERROR(reach(from_ps[w], w));
    const std::vector<uint32_t> d = Hops(adj, w);
    p.worker_names.push_back(graph.nodes[w].name);
    p.worker_to_ps.push_back(from_ps[w]);
    std::vector<uint32_t> row;
    for (uint32_t s : switches) row.push_back(d[s]);
    p.worker_to_switch.push_back(std::move(row));
  }
  p.submodels = std::move(submodels);
  SWEMU_RETURN_IF_ERROR(p.Validate());
  return p;
}

GinaGraph LeafSpineGraph(uint32_t spines, uint32_t leaves, uint32_t servers,
                         const std::vector<std::string>& programmable, uint64_t memory) {
  GinaGraph g;
  auto memory_of = [&](const std::string& name) {
    return std::find(programmable.begin(), programmable.end(), name) != programmable.end() ? memory : 0;
  };
  for (uint32_t s = 0; s < spines; ++s) {
    const std::string name = "spine" + std::to_string(s);
    g.Add({name, GinaNode::Kind::kSwitch, memory_of(name)});
  }
  for (uint32_t l = 0; l < leaves; ++l) {
    const std::string name = "leaf" + std::to_string(l);
    const uint32_t leaf = g.Add({name, GinaNode::Kind::kSwitch, memory_of(name)});
    for (uint32_t s = 0; s < spines; ++s) g.links.emplace_back(leaf, s);
  }
  const uint32_t ps_leaf = leaves - 1;
  bool ps_placed = false;
  for (uint32_t h = 0; h < servers; ++h) {
    const uint32_t leaf = h % leaves;
    const bool ps = !ps_placed && leaf == ps_leaf;
    ps_placed |= ps;
    const uint32_t n = g.Add({ps ? "ps" : "w" + std::to_string(h),
                              ps ? GinaNode::Kind::kPs : GinaNode::Kind::kWorker, 0});
    g.links.emplace_back(n, spines + leaf);
  }
  return g;
}

}  // namespace swemu
