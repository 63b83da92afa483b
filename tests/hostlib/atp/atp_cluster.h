#pragma once
// A rack in the virtual-time engine for the end-to-end tests: one switch, W worker Contexts on
// ports 0..W-1 and a PS Context on port W, each attached through an EngineTransport.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "hostlib/atp/context.h"
#include "hostlib/common/engine_transport.h"
#include "pipeline/engine/engine.h"
#include "tests/hostlib/atp/atp_test_util.h"

namespace swemu::atp_test {

struct ClusterOptions {
  uint32_t workers = 4;
  std::string program = "l2l3";
  double host_loss = 0;
  uint64_t seed = 1;
  std::vector<uint16_t> jobs = {1};
  std::string extra_script;  // appended to the switch's startup script
  uint16_t elements = 64;
  AtpWorkerOptions worker_options;
};

class Cluster {
 public:
  explicit Cluster(const ClusterOptions& o) : o_(o), engine_(o.seed, 1 << 16) {
    std::string script;
    const PortId ps_port = static_cast<PortId>(o.workers);
    std::string members;
    for (uint32_t w = 0; w < o.workers; ++w) {
      script +=
          "table_add dmac forward " + FormatMac(HostMac(w + 1)) + " => " + std::to_string(w) + "\n";
      members += " " + std::to_string(w);
    }
    script += "table_add dmac forward " + FormatMac(HostMac(100)) + " => " +
              std::to_string(ps_port) + "\n";
    for (std::size_t j = 0; j < o.jobs.size(); ++j) {
      Result<AtpJobConfig> job = MakeAtpJobConfig(Spec(o.jobs[j], o.workers, o.elements));
      EXPECT_TRUE(job.ok()) << job.message();
      jobs_.push_back(*job);
      const std::string grp = std::to_string(j + 1);
      script += "mc_mgrp_create " + grp + "\nmc_node_create " + std::to_string(j) + members +
                "\nmc_node_associate " + grp + " " + std::to_string(j) +
                "\ntable_add dmac multicast " + FormatMac(job->group_mac) + " => " + grp + "\n";
      if (o.program == "atp") {
        script += "table_add atp_job aggregate " + std::to_string(o.jobs[j]) + " => " + grp + "\n";
      }
    }
    SwitchConfig config;
    config.name = "tor";
    config.num_ports = static_cast<uint16_t>(o.workers + 1);
    config.program = o.program;
    if (o.program == "atp") config.program_options.Set("elements", std::to_string(o.elements));
    config.tm.port_rate_bps = 10'000'000'000ull;
    Status added = engine_.AddSwitch(config, "");
    EXPECT_TRUE(added.ok()) << added.message();
    const std::string lines = script + o.extra_script;
    for (std::size_t at = 0; at < lines.size();) {
      const std::size_t nl = lines.find('\n', at);
      const std::string line = lines.substr(at, nl - at);
      Result<std::string> done = engine_.FindSwitch("tor")->commands().Execute(line);
      EXPECT_TRUE(done.ok()) << line << ": " << done.message();
      at = nl + 1;
    }
    for (uint32_t h = 0; h <= o.workers; ++h) {
      const uint32_t id = h == o.workers ? 100 : h + 1;
      Result<EngineTransport*> t =
          EngineTransport::Attach(engine_, "tor", static_cast<PortId>(h), 1000, o.host_loss);
      EXPECT_TRUE(t.ok()) << t.message();
      contexts_.push_back(std::make_unique<Context>(AtpHostConfig{HostMac(id), HostIp(id)}, *t));
      (*t)->SetEndpoint(contexts_.back().get());
      transports_.push_back(*t);
    }
    for (const AtpJobConfig& job : jobs_) {
      EXPECT_TRUE(ps().ServeJob(job).ok());
      for (uint32_t w = 0; w < o.workers; ++w) {
        Status joined = worker(w).JoinJob(job, o.worker_options);
        EXPECT_TRUE(joined.ok()) << joined.message();
      }
    }
  }

  Context& worker(uint32_t w) { return *contexts_[w]; }
  Context& ps() { return *contexts_.back(); }
  Engine& engine() { return engine_; }
  const AtpJobConfig& job(std::size_t j) const { return jobs_[j]; }

 private:
  ClusterOptions o_;
  Engine engine_;
  std::vector<AtpJobConfig> jobs_;
  std::vector<std::unique_ptr<Context>> contexts_;
  std::vector<EngineTransport*> transports_;
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
