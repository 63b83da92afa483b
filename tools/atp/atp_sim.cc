#include "tools/atp/atp_sim.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include "hostlib/atp/context.h"
#include "hostlib/common/engine_transport.h"
#include "hostlib/testbed/atp_job_file.h"
#include "pipeline/core/output_files.h"
#include "swemu/topology_config.h"

namespace swemu {

Status RunAtpSim(const SimOptions& options, std::ostream& out, bool* bad_input) {
  *bad_input = true;
  Result<TopologyConfig> loaded = LoadTopology(options.topology);
  if (!loaded.ok()) return Status::Error("--topology " + loaded.message());
  auto files = LoadAtpTopologyJob(std::move(*loaded), options.job);
  if (!files.ok()) return files.status();
  const TopologyConfig* topo = &files->topology;
  const AtpJobFile* job = &files->job;

  Engine engine(topo->seed);
  SWEMU_RETURN_IF_ERROR(AddSwitchesAndLinks(engine, topo->switches, topo->links));

  // Hosts: workers in id order, then the PS, each on a `host =` port (LoadAtpTopologyJob).
  std::vector<JobPlacement> places = job->workers;
  places.push_back(job->ps);
  if (options.lossy_worker >= static_cast<int>(places.size()) - 1) {
    return Status::Error("--lossy-worker " + std::to_string(options.lossy_worker) + ": " +
                         options.job + " has " + std::to_string(places.size() - 1) + " workers");
  }
  std::vector<AtpHost> hosts = job->aggregate.spec.workers;
  hosts.push_back(job->aggregate.spec.ps);
  std::vector<std::unique_ptr<Context>> contexts;
  std::vector<EngineTransport*> transports;
  for (std::size_t i = 0; i < places.size(); ++i) {
    const TopologyHost* host = FindJobHost(*topo, places[i]);
    const bool overridden = options.host_loss >= 0 && (options.lossy_worker < 0 ||
                                                       static_cast<int>(i) == options.lossy_worker);
    const double loss = overridden ? options.host_loss : host->loss;
    auto transport = EngineTransport::Attach(engine, host->sw, host->port, host->delay_ns, loss);
    if (!transport.ok()) return transport.status();
    auto ctx = std::make_unique<Context>(AtpHostConfig{hosts[i].mac, hosts[i].ip}, *transport);
    (*transport)->SetEndpoint(ctx.get());
    transports.push_back(*transport);
    contexts.push_back(std::move(ctx));
  }
  std::vector<Context*> workers;
  for (std::size_t w = 0; w + 1 < contexts.size(); ++w) {
    SWEMU_RETURN_IF_ERROR(contexts[w]->JoinJob(job->aggregate, options.worker));
    SWEMU_RETURN_IF_ERROR(contexts[w]->JoinJob(job->plain, options.worker));
    workers.push_back(contexts[w].get());
  }
  Context* ps = contexts.back().get();
  AtpPsOptions ps_options;
  ps_options.history = PsHistoryFor(options.workload.model, job->aggregate.spec.elements);
  SWEMU_RETURN_IF_ERROR(ps->ServeJob(job->aggregate, ps_options));
  SWEMU_RETURN_IF_ERROR(ps->ServeJob(job->plain, ps_options));

  *bad_input = false;
  WorkloadDriver driver;
  driver.now_ns = [&engine] { return engine.Now(); };
  driver.wake = [&transports] {
    for (EngineTransport* t : transports) t->Wake();
  };
  // Runs in slices of virtual time so a job that cannot finish (its hosts retransmitting for
  // ever) ends with an error instead of running without end.
  driver.run_until = [&engine](const std::function<bool()>& done) -> Status {
    constexpr TimeNs kSlice = 10'000'000;       // 10 ms
    constexpr TimeNs kBudget = 60'000'000'000;  // 60 s of virtual time per pass
    const TimeNs start = engine.Now();
    for (;;) {
      SWEMU_RETURN_IF_ERROR(engine.Run(engine.Now() + kSlice, done));
      if (done()) return Status::Ok();
      if (engine.idle()) {
        return Status::Error("the engine ran out of events before the job completed");
      }
      if (engine.Now() - start > kBudget) {
        return Status::Error("the job did not complete within 60 s of virtual time");
      }
    }
  };

  out << "swemu-atp: " << options.workload.model.model << " ("
      << options.workload.model.layers.size() << " layers, " << options.workload.model.TotalParams()
      << " parameters), " << workers.size() << " workers, topology " << options.topology
      << ", virtual time\n";
  AtpWorkload workload(options.workload, workers, ps, job->aggregate.spec.job_id,
                       job->plain.spec.job_id, job->aggregate.spec.scale);
  auto passes = workload.Run(driver, out);
  if (!passes.ok()) return passes.status();

  for (const LoadedSwitchConfig& sw : topo->switches) {
    if (sw.config.program != "atp") continue;
    auto stats = engine.FindSwitch(sw.config.name)->commands().Execute("show atp");
    out << sw.config.name << ": " << (stats.ok() ? *stats : stats.status().message()) << '\n';
  }
  double aggregate_s = 0, plain_s = 0;
  for (const PassResult& pass : *passes)
    (pass.mode == "at-PS" ? plain_s : aggregate_s) += pass.seconds;
  if (aggregate_s > 0 && plain_s > 0)
    out << "speed ratio in-network / at-PS: " << plain_s / aggregate_s << "x\n";
  SWEMU_RETURN_IF_ERROR(engine.CheckConservation());
  if (!options.out_dir.empty()) {
    *bad_input = true;  // an output that cannot be written (a full disk) is the user's to fix
    SWEMU_RETURN_IF_ERROR(
        WriteTextFile(options.out_dir + "/counters.json", engine.CountersJson() + "\n"));
  }
  return Status::Ok();
}

}  // namespace swemu
