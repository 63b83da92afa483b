#include "hostlib/plink/datacenter.h"

#include <algorithm>
#include <string>

#include "hostlib/common/engine_transport.h"
#include "pipeline/core/hash.h"
#include "pipeline/engine/engine.h"
#include "pipeline/engine/rng.h"

namespace swemu {

EmulatedDatacenter::~EmulatedDatacenter() = default;

Result<std::unique_ptr<EmulatedDatacenter>> EmulatedDatacenter::Create(const DatacenterSpec& spec) {
  const auto levels = static_cast<uint32_t>(spec.fanout.size());
  if (levels == 0 || spec.per_rack == 0) return Status::Error("datacenter: needs racks and hosts");
  for (uint32_t f : spec.fanout) {
    if (f == 0 || f > 64) return Status::Error("datacenter: fanout must be 1..64");
  }
  if (spec.tier_delay_ns.size() != levels + 1) {
    return Status::Error("datacenter: one delay per tier (" + std::to_string(levels + 1) + ")");
  }
  std::vector<uint32_t> count(levels + 1, 1);  // switches per level; level 0 is the core
  for (uint32_t l = 1; l <= levels; ++l) count[l] = count[l - 1] * spec.fanout[l - 1];
  const uint32_t racks = count[levels];
  const uint32_t hosts = racks * spec.per_rack;
  if (hosts > 4096) return Status::Error("datacenter: at most 4096 hosts");
  auto name = [](uint32_t l, uint32_t i) {
    return l == 0 ? std::string("core") : "l" + std::to_string(l) + "s" + std::to_string(i);
  };
  // A host's ancestor at level l, and the child of (l, i) a host sits under.
  auto ancestor = [&](uint32_t host, uint32_t l) {
    uint32_t id = host / spec.per_rack;
    for (uint32_t k = levels; k > l; --k) id /= spec.fanout[k - 1];
    return id;
  };
  auto dc = std::unique_ptr<EmulatedDatacenter>(new EmulatedDatacenter());
  dc->engine_ = std::make_unique<Engine>(spec.seed, 1 << 16);
  auto mac = [](uint32_t h) { return MacAddr::FromU64(0x020000000200ULL + h); };
  for (uint32_t l = 0; l <= levels; ++l) {
    for (uint32_t i = 0; i < count[l]; ++i) {
      const uint32_t down = l == levels ? spec.per_rack : spec.fanout[l];
      SwitchConfig config;
      config.name = name(l, i);
      config.num_ports = static_cast<uint16_t>(down + (l == 0 ? 0 : 1));
      config.program = "l2l3";
      config.tm.port_rate_bps = spec.link_rate_bps;
      SWEMU_RETURN_IF_ERROR(dc->engine_->AddSwitch(config, ""));
      std::string script;
      for (uint32_t h = 0; h < hosts; ++h) {
        uint32_t port = down;  // the uplink
        if (ancestor(h, l) == i) {
          port = l == levels ? h % spec.per_rack : ancestor(h, l + 1) % spec.fanout[l];
        }
        script +=
            "table_add dmac forward " + FormatMac(mac(h)) + " => " + std::to_string(port) + "\n";
      }
      SWEMU_RETURN_IF_ERROR(
          dc->engine_->FindSwitch(config.name)->commands().RunText(script, config.name));
    }
  }
  for (uint32_t l = 1; l <= levels; ++l) {
    const uint32_t up = l == levels ? spec.per_rack : spec.fanout[l];
    for (uint32_t i = 0; i < count[l]; ++i) {
      SWEMU_RETURN_IF_ERROR(dc->engine_->AddLink(
          {name(l, i), static_cast<PortId>(up), name(l - 1, i / spec.fanout[l - 1]),
           static_cast<PortId>(i % spec.fanout[l - 1]), spec.link_rate_bps,
           spec.tier_delay_ns[l - 1], 0}));
    }
  }
  std::vector<PlinkNodeAddr> addrs;
  for (uint32_t h = 0; h < hosts; ++h) {
    addrs.push_back({mac(h), MakeIpv4Addr(10, 2, static_cast<uint8_t>((h + 1) >> 8),
                                          static_cast<uint8_t>((h + 1) & 0xFF))});
  }
  SplitMix64 rng(HashPair(spec.seed, 0x504c494e));  // "PLIN"
  for (uint32_t h = 0; h < hosts; ++h) {
    NodeLocation loc;
    for (uint32_t l = 1; l <= levels; ++l) loc.push_back(ancestor(h, l));
    loc.push_back(h);
    dc->where_.push_back(loc);
    Result<EngineTransport*> t = EngineTransport::Attach(
        *dc->engine_, name(levels, h / spec.per_rack), static_cast<PortId>(h % spec.per_rack),
        spec.tier_delay_ns[levels], 0);
    if (!t.ok()) return t.status();
    ProberOptions po = spec.prober;
    po.host_delay_ns =
        static_cast<TimeNs>(rng.NextUnit() * static_cast<double>(spec.host_delay_max_ns));
    po.jitter_mean_ns = spec.jitter_mean_ns;
    po.seed = rng.Next();
    dc->probers_.push_back(std::make_unique<PlinkProber>(static_cast<uint16_t>(h), addrs, *t, po));
    (*t)->SetEndpoint(dc->probers_.back().get());
    dc->transports_.push_back(*t);
  }
  return dc;
}

void EmulatedDatacenter::TakeDown(uint32_t host) {
  if (host < probers_.size()) probers_[host]->Leave();
}

Result<DistanceMatrix> EmulatedDatacenter::ProbeDistances(uint32_t* unanswered_pairs) {
  const uint32_t n = hosts();
  for (const auto& pairs : CircleRounds(n)) {
    const TimeNs now = engine_->Now();
    for (const auto& [a, b] : pairs) {
      probers_[a]->Probe(static_cast<uint16_t>(b), round_, now);
      transports_[a]->Wake();
    }
    ++round_;
    SWEMU_RETURN_IF_ERROR(engine_->Run(now + 1'000'000'000, [&] {
      return std::all_of(probers_.begin(), probers_.end(), [](const auto& p) { return p->idle(); });
    }));
  }
  DistanceMatrix m(n);
  double largest = 0;
  std::vector<bool> heard(n, false);
  for (uint32_t a = 0; a < n; ++a) {
    for (uint32_t b = a + 1; b < n; ++b) {
      const double d = std::min(probers_[a]->min_rtt_ns()[b], probers_[b]->min_rtt_ns()[a]);
      if (std::isfinite(d)) {
        m.at(a, b) = m.at(b, a) = d / 1000.0;  // microseconds
        largest = std::max(largest, d / 1000.0);
        heard[a] = heard[b] = true;
      } else {
        m.at(a, b) = m.at(b, a) = -1;
      }
    }
  }
  uint32_t missing = 0;
  for (uint32_t a = 0; a < n; ++a) {
    if (!heard[a] && n > 1) {
      return Status::Error("probes: no reply between node " + std::to_string(a) +
                           " and any other node (is it down?)");
    }
    for (uint32_t b = a + 1; b < n; ++b) {
      if (m.at(a, b) < 0) {
        m.at(a, b) = m.at(b, a) = largest;
        ++missing;
      }
    }
  }
  if (unanswered_pairs != nullptr) *unanswered_pairs = missing;
  return m;
}

}  // namespace swemu
