#pragma once
// A rack (or two) in the virtual-time engine for the end-to-end tests.
//   One rack: switch "tor", W worker Contexts on ports 0..W-1 and a PS Context on port W.
//   Two racks (rack_b_workers > 0): switch "rack_a" with `workers` workers on ports 0.., the PS
//   next and the link to rack_b after it; switch "rack_b" with rack_b_workers workers on ports
//   0.. and the link after them. Worker ids: rack_a's workers first, then rack_b's.
// Every host attaches through an EngineTransport.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "hostlib/atp/context.h"
#include "hostlib/common/engine_transport.h"
#include "pipeline/engine/engine.h"
#include "pipeline/programs/atp.h"
#include "tests/hostlib/atp/atp_test_util.h"

namespace swemu::atp_test {

struct ClusterOptions {
  uint32_t workers = 4;  // per job on rack_a (the only rack unless rack_b_workers > 0)
  std::string program = "l2l3";
  double host_loss = 0;     // every host link, unless overridden below
  double worker_loss = -1;  // >= 0: the workers' host links
  double ps_loss = -1;      // >= 0: the PS's host link
  uint64_t seed = 1;
  std::vector<uint16_t> jobs = {1};
  std::string extra_script;  // appended to the (first) switch's startup script
  uint16_t elements = 64;
  AtpWorkerOptions worker_options;
  uint32_t aggregators = 0;          // atp program option; 0: the program's default
  uint64_t ecn_threshold_bytes = 0;  // > 0: every switch queue marks CE from this depth
  // Each job gets its own `workers` hosts (job j: hosts j*workers+1 ..), all on one rack.
  bool separate_hosts = false;
  // The two-rack variant.
  uint32_t rack_b_workers = 0;
  std::string rack_b_program;    // empty: `program`
  bool rack_b_under_ps = false;  // spec puts rack_b's workers on the PS's rack (no ATP there)
  double link_loss = 0;
  TimeNs link_delay_ns = 2000;
  // One job: each host is its AtpWorker or the AtpPs as an Endpoint of its own on its port
  // (bare_worker, bare_ps, BareAllReduce), not a Context.
  bool bare_endpoints = false;
};

class Cluster {
 public:
  explicit Cluster(const ClusterOptions& o) : o_(o), engine_(o.seed, 1 << 16) {
    const bool two = o.rack_b_workers > 0;
    const uint32_t jobs = static_cast<uint32_t>(o.jobs.size());
    const uint32_t hosts = o.separate_hosts ? o.workers * jobs : o.workers + o.rack_b_workers;
    for (uint32_t h = 0; h < hosts; ++h) {
      const uint32_t rack = h < (o.separate_hosts ? hosts : o.workers) ? 0 : 1;
      host_rack_.push_back(rack);
      host_port_.push_back(static_cast<PortId>(rack == 0 ? h : h - o.workers));
    }
    const uint32_t rack_a_hosts = two ? o.workers : hosts;
    ps_port_ = static_cast<PortId>(rack_a_hosts);
    names_ = two ? std::vector<std::string>{"rack_a", "rack_b"} : std::vector<std::string>{"tor"};
    const std::vector<std::string> programs = {
        o.program, o.rack_b_program.empty() ? o.program : o.rack_b_program};
    const std::vector<PortId> link_port = {static_cast<PortId>(ps_port_ + 1),
                                           static_cast<PortId>(o.rack_b_workers)};

    // Jobs first: the switches' multicast groups follow their members.
    for (uint32_t j = 0; j < jobs; ++j) {
      AtpJobSpec spec;
      spec.job_id = o.jobs[j];
      for (uint32_t h : JobHosts(j)) {
        const bool local = host_rack_[h] == 0 || o.rack_b_under_ps;
        spec.workers.push_back(
            {"w" + std::to_string(h), HostMac(h + 1), HostIp(h + 1), local ? "r0" : "r1"});
      }
      spec.ps = {"ps", HostMac(100), HostIp(100), "r0"};
      spec.group_ip = MakeIpv4Addr(239, 1, 1, static_cast<uint8_t>(o.jobs[j]));
      spec.elements = o.elements;
      Result<AtpJobConfig> job = MakeAtpJobConfig(spec);
      EXPECT_TRUE(job.ok()) << job.message();
      jobs_.push_back(*job);
    }

    for (uint32_t r = 0; r < names_.size(); ++r) {
      std::string script;
      for (uint32_t h = 0; h < hosts; ++h) {
        const PortId port = host_rack_[h] == r ? host_port_[h] : link_port[r];
        script += "table_add dmac forward " + FormatMac(HostMac(h + 1)) + " => " +
                  std::to_string(port) + "\n";
      }
      script += "table_add dmac forward " + FormatMac(HostMac(100)) + " => " +
                std::to_string(r == 0 ? ps_port_ : link_port[r]) + "\n";
      uint32_t handle = 0;
      for (uint32_t j = 0; j < jobs; ++j) {
        std::string members;
        bool remote = false;
        for (uint32_t h : JobHosts(j)) {
          if (host_rack_[h] == r) members += " " + std::to_string(host_port_[h]);
          remote |= host_rack_[h] != r;
        }
        if (r == 0 && remote) members += " " + std::to_string(link_port[0]);
        if (members.empty()) continue;
        const std::string grp = std::to_string(j + 1);
        script += "mc_mgrp_create " + grp + "\nmc_node_create " + std::to_string(j) + members +
                  "\nmc_node_associate " + grp + " " + std::to_string(handle++) +
                  "\ntable_add dmac multicast " + FormatMac(jobs_[j].group_mac) + " => " + grp +
                  "\n";
        if (programs[r] == "atp") {
          script +=
              "table_add atp_job aggregate " + std::to_string(o.jobs[j]) + " => " + grp + "\n";
        }
      }
      if (o.ecn_threshold_bytes != 0) {
        script += "set_ecn_threshold all all " + std::to_string(o.ecn_threshold_bytes) + "\n";
      }
      if (r == 0) script += o.extra_script;

      SwitchConfig config;
      config.name = names_[r];
      config.num_ports =
          static_cast<uint16_t>(r == 0 ? ps_port_ + 1 + (two ? 1 : 0) : o.rack_b_workers + 1);
      config.program = programs[r];
      if (programs[r] == "atp") {
        config.program_options.Set("elements", std::to_string(o.elements));
        if (o.aggregators != 0) {
          config.program_options.Set("aggregators", std::to_string(o.aggregators));
        }
      }
      config.tm.port_rate_bps = 10'000'000'000ull;
      Status added = engine_.AddSwitch(config, "");
      EXPECT_TRUE(added.ok()) << added.message();
      for (std::size_t at = 0; at < script.size();) {
        const std::size_t nl = script.find('\n', at);
        const std::string line = script.substr(at, nl - at);
        Result<std::string> done = engine_.FindSwitch(names_[r])->commands().Execute(line);
        EXPECT_TRUE(done.ok()) << names_[r] << ": " << line << ": " << done.message();
        at = nl + 1;
      }
    }
    if (two) {
      LinkSpec link{"rack_a",          link_port[0],    "rack_b",   link_port[1],
                    10'000'000'000ull, o.link_delay_ns, o.link_loss};
      Status linked = engine_.AddLink(link);
      EXPECT_TRUE(linked.ok()) << linked.message();
    }

    const double worker_loss = o.worker_loss >= 0 ? o.worker_loss : o.host_loss;
    const double ps_loss = o.ps_loss >= 0 ? o.ps_loss : o.host_loss;
    for (uint32_t h = 0; h <= hosts; ++h) {
      const bool ps = h == hosts;
      const uint32_t id = ps ? 100 : h + 1;
      Result<EngineTransport*> t =
          EngineTransport::Attach(engine_, names_[ps ? 0 : host_rack_[h]],
                                  ps ? ps_port_ : host_port_[h], 1000, ps ? ps_loss : worker_loss);
      EXPECT_TRUE(t.ok()) << t.message();
      transports_.push_back(*t);
      if (o.bare_endpoints) {
        if (ps) {
          bare_ps_ = std::make_unique<AtpPs>(jobs_[0], *t);
          (*t)->SetEndpoint(bare_ps_.get());
        } else {
          bare_workers_.push_back(std::make_unique<AtpWorker>(jobs_[0], h, *t, o.worker_options));
          (*t)->SetEndpoint(bare_workers_.back().get());
        }
        continue;
      }
      contexts_.push_back(std::make_unique<Context>(AtpHostConfig{HostMac(id), HostIp(id)}, *t));
      (*t)->SetEndpoint(contexts_.back().get());
    }
    for (uint32_t j = 0; j < jobs && !o.bare_endpoints; ++j) {
      EXPECT_TRUE(ps().ServeJob(jobs_[j]).ok());
      for (uint32_t h : JobHosts(j)) {
        Status joined = worker(h).JoinJob(jobs_[j], o.worker_options);
        EXPECT_TRUE(joined.ok()) << joined.message();
      }
    }
  }

  // Worker hosts by index (0 .. num_hosts()-1), the PS, the engine.
  Context& worker(uint32_t h) { return *contexts_[h]; }
  Context& ps() { return *contexts_.back(); }
  Engine& engine() { return engine_; }
  // bare_endpoints: worker h and the PS, and worker h's AllReduce (the handle lives as long as
  // the cluster).
  AtpWorker& bare_worker(uint32_t h) { return *bare_workers_[h]; }
  AtpPs& bare_ps() { return *bare_ps_; }
  AllReduceJob* BareAllReduce(uint32_t h, const float* in, float* out, std::size_t n) {
    AllReduceJob* call = &bare_calls_.emplace_back();
    bare_workers_[h]->Submit(call, in, out, n);
    return call;
  }
  const AtpJobConfig& job(std::size_t j) const { return jobs_[j]; }
  uint32_t num_hosts() const { return static_cast<uint32_t>(contexts_.size() - 1); }
  // The worker hosts of job j (index into o.jobs), in worker-id order.
  std::vector<uint32_t> JobHosts(uint32_t j) const {
    std::vector<uint32_t> out;
    const uint32_t n = static_cast<uint32_t>(host_rack_.size());
    const uint32_t first = o_.separate_hosts ? j * o_.workers : 0;
    const uint32_t count = o_.separate_hosts ? o_.workers : n;
    for (uint32_t h = first; h < first + count; ++h) out.push_back(h);
    return out;
  }
  // The host stops: its transport delivers nothing to it and fires none of its timers.
  void Kill(uint32_t h) { transports_[h]->SetEndpoint(nullptr); }
  EngineTransport& transport(uint32_t h) { return *transports_[h]; }

  std::size_t num_switches() const { return names_.size(); }
  Switch& sw(std::size_t r) { return *engine_.FindSwitch(names_[r]); }
  // The switch's ATP program, or null when it runs another one.
  AtpProgram* atp(std::size_t r) { return dynamic_cast<AtpProgram*>(&sw(r).program()); }
  std::string Command(std::size_t r, const std::string& line) {
    Result<std::string> out = sw(r).commands().Execute(line);
    EXPECT_TRUE(out.ok()) << line << ": " << out.message();
    return out.ok() ? *out : std::string();
  }
  // Over every ATP switch.
  uint32_t AggregatorsInUse() {
    uint32_t in_use = 0;
    for (std::size_t r = 0; r < num_switches(); ++r) {
      if (atp(r) != nullptr) in_use += atp(r)->AggregatorsInUse();
    }
    return in_use;
  }

 private:
  ClusterOptions o_;
  Engine engine_;
  std::vector<uint32_t> host_rack_;
  std::vector<PortId> host_port_;
  PortId ps_port_ = 0;
  std::vector<std::string> names_;
  std::vector<AtpJobConfig> jobs_;
  std::vector<std::unique_ptr<Context>> contexts_;
  std::vector<EngineTransport*> transports_;
  std::vector<std::unique_ptr<AtpWorker>> bare_workers_;
  std::unique_ptr<AtpPs> bare_ps_;
  std::deque<AllReduceJob> bare_calls_;  // stable addresses
};

// Worker w's gradient: small values with many significant bits, so quantization rounds.
inline std::vector<float> Gradient(uint32_t w, std::size_t n, uint32_t salt = 0) {
  std::mt19937 rng(1000 * salt + w);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> g(n);
  for (float& x : g) x = dist(rng);
  return g;
}

// |out - exact sum| within W * 0.5 / scale, plus half an ulp for the float32 result.
inline void ExpectSumWithinBound(const std::vector<std::vector<float>>& inputs,
                                 const std::vector<float>& out, double scale) {
  const double bound = AtpSumErrorBound(static_cast<uint32_t>(inputs.size()), scale);
  for (std::size_t i = 0; i < out.size(); ++i) {
    double exact = 0;
    for (const auto& in : inputs) exact += in[i];
    ASSERT_LE(std::abs(out[i] - exact), bound + std::abs(exact) * 0x1p-24) << "element " << i;
  }
}

}  // namespace swemu::atp_test
