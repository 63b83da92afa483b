#include "hostlib/plink/autotune.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace swemu {

AggMetrics ModelMetrics(const AggPlan& plan, const std::vector<std::vector<double>>& bw) {
  AggMetrics m;
  m.bytes.assign(plan.nodes, 0);
  m.seconds.assign(plan.nodes, 0);
  m.bandwidth = bw;
  for (const AggTransfer& x : Schedule(plan)) {
    const double b = static_cast<double>(x.bytes);
    const double t = b / bw[x.from][x.to];
    m.bytes[x.from] += b;
    m.bytes[x.to] += b;
    m.seconds[x.from] += t;
    m.seconds[x.to] += t;
  }
  m.iteration_seconds = *std::max_element(m.seconds.begin(), m.seconds.end());
  return m;
}

AggMetrics MeasuredMetrics(const std::vector<AggNodeReport>& reports,
                           const std::vector<std::vector<double>>& prior) {
  const std::size_t n = reports.size();
  AggMetrics m;
  m.bytes.assign(n, 0);
  m.seconds.assign(n, 0);
  m.bandwidth = prior;
  m.bandwidth.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const AggNodeReport& r = reports[i];
    m.bandwidth[i].resize(n, 0);
    for (std::size_t j = 0; j < n && j < r.sent_to.size(); ++j) {
      if (r.sent_to[j] > 0 && r.send_busy_ns[j] > 0) {
        m.bandwidth[i][j] =
            static_cast<double>(r.sent_to[j]) * 1e9 / static_cast<double>(r.send_busy_ns[j]);
      }
    }
  }
  TimeNs start = kNever, finish = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const AggNodeReport& r = reports[i];
    start = std::min(start, r.start_ns);
    finish = std::max(finish, r.finish_ns);
    for (std::size_t j = 0; j < n && j < r.sent_to.size(); ++j) {
      // t(i): what i sent to j at BW(i, j) and received from j at BW(j, i).
      const double out = static_cast<double>(r.sent_to[j]);
      const double in = static_cast<double>(r.received_from[j]);
      m.bytes[i] += out + in;
      if (out > 0 && m.bandwidth[i][j] > 0) m.seconds[i] += out / m.bandwidth[i][j];
      if (in > 0 && m.bandwidth[j][i] > 0) m.seconds[i] += in / m.bandwidth[j][i];
    }
  }
  m.iteration_seconds = n == 0 ? 0 : static_cast<double>(finish - start) / 1e9;
  return m;
}

AggPlan Quicktune(const AggPlan& plan, const std::vector<std::vector<double>>& bw) {
  AggPlan p = plan;
  const uint32_t n = p.nodes;
  std::vector<std::vector<uint32_t>> members(p.groups);
  for (uint32_t i = 0; i < n; ++i) members[p.group_of[i]].push_back(i);
  // Per-node aggregate bandwidth, and each group's bandwidth to the other groups (or, with one
  // group, its members' sum).
  std::vector<double> node_bw(n, 0), group_bw(p.groups, 0);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t j = 0; j < n; ++j) {
      if (i == j) continue;
      node_bw[i] += bw[i][j];
      if (p.groups == 1 || p.group_of[i] != p.group_of[j]) group_bw[p.group_of[i]] += bw[i][j];
    }
  }
  std::vector<uint32_t> order(p.chunk_bytes.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return p.chunk_bytes[a] > p.chunk_bytes[b]; });
  std::vector<uint32_t> gm_group(p.chunk_bytes.size(), 0);
  std::vector<double> gload(p.groups, 0);
  for (uint32_t c : order) {
    uint32_t best = 0;
    for (uint32_t g = 1; g < p.groups; ++g) {
      if ((gload[g] + p.chunk_bytes[c]) / group_bw[g] <
          (gload[best] + p.chunk_bytes[c]) / group_bw[best]) {
        best = g;
      }
    }
    gm_group[c] = best;
    gload[best] += static_cast<double>(p.chunk_bytes[c]);
  }
  // t_i's numerator per node: an LM handles S |G(i)|, a GM S |G| more.
  std::vector<double> load(n, 0);
  for (uint32_t c : order) {
    for (uint32_t g = 0; g < p.groups; ++g) {
      const bool gm = gm_group[c] == g;
      const double work =
          static_cast<double>(p.chunk_bytes[c]) * (members[g].size() + (gm ? p.groups : 0));
      uint32_t best = members[g][0];
      for (uint32_t i : members[g]) {
        if ((load[i] + work) / node_bw[i] < (load[best] + work) / node_bw[best]) best = i;
      }
      load[best] += work;
      p.local_master[c][g] = best;
      if (gm) p.global_master[c] = best;
    }
  }
  return p;
}

uint32_t Autotune::Step(AggPlan& plan, const AggMetrics& m,
                        const std::vector<std::vector<double>>& bw) {
  const double last = last_iteration_;
  last_iteration_ = m.iteration_seconds;
  if (last > 0 && std::abs(m.iteration_seconds - last) / last > options_.trigger) {
    const AggPlan before = plan;
    plan = Quicktune(plan, bw);
    ++quicktunes_;
    last_blamed_ = -1;
    streak_ = 0;
    uint32_t moved = 0;
    for (std::size_t c = 0; c < plan.chunk_bytes.size(); ++c) {
      for (uint32_t g = 0; g < plan.groups; ++g) {
        moved += plan.local_master[c][g] != before.local_master[c][g] ? 1 : 0;
      }
    }
    return moved;
  }
  return Finetune(plan, m);
}

uint32_t Autotune::Finetune(AggPlan& plan, const AggMetrics& m) {
  const uint32_t n = plan.nodes;
  const auto [lo, hi] = std::minmax_element(m.bytes.begin(), m.bytes.end());
  const double mean_t = std::accumulate(m.seconds.begin(), m.seconds.end(), 0.0) / n;
  const double max_t = *std::max_element(m.seconds.begin(), m.seconds.end());
  // Balanced: loads within `balanced` and no node's time far above the mean.
  if (*lo > 0 && *hi / *lo < options_.balanced && max_t <= options_.epsilon * mean_t) {
    last_blamed_ = -1;
    streak_ = 0;
    return 0;
  }
  std::vector<double> blame(n);
  for (uint32_t i = 0; i < n; ++i) {
    const double l = *hi > *lo ? (m.bytes[i] - *lo) / (*hi - *lo) : 0.0;  // all equal: 0
    const double t = mean_t > 0 ? m.seconds[i] / mean_t : 0.0;
    blame[i] = options_.beta * l + options_.gamma * t;
  }
  const auto most =
      static_cast<uint32_t>(std::max_element(blame.begin(), blame.end()) - blame.begin());
  if (blame[most] <= 0) return 0;
  streak_ = static_cast<int32_t>(most) == last_blamed_ ? streak_ + 1 : 0;
  last_blamed_ = static_cast<int32_t>(most);
  const uint32_t moves = 1u << std::min<uint32_t>(streak_, 10);
  uint32_t moved = 0;
  for (uint32_t k = 0; k < moves; ++k) {
    // The least blamed node that can take a master of `most`: a GM can go to any node (it
    // becomes that node's group's LM too); an LM only within its group.
    bool done = false;
    std::vector<uint32_t> by_blame(n);
    std::iota(by_blame.begin(), by_blame.end(), 0u);
    std::sort(by_blame.begin(), by_blame.end(),
              [&](uint32_t a, uint32_t b) { return blame[a] < blame[b]; });
    for (uint32_t to : by_blame) {
      if (to == most || blame[most] <= options_.epsilon * blame[to]) break;
      for (std::size_t c = 0; c < plan.chunk_bytes.size() && !done; ++c) {
        if (plan.global_master[c] == most) {
          plan.global_master[c] = to;
          plan.local_master[c][plan.group_of[to]] = to;
          done = true;
        }
      }
      for (std::size_t c = 0; c < plan.chunk_bytes.size() && !done; ++c) {
        const uint32_t g = plan.group_of[most];
        if (plan.group_of[to] == g && plan.local_master[c][g] == most &&
            plan.global_master[c] != most) {
          plan.local_master[c][g] = to;
          done = true;
        }
      }
      if (done) break;
    }
    if (!done) break;
    ++moved;
  }
  return moved;
}

}  // namespace swemu
