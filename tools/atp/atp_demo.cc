#include "tools/atp/atp_demo.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include "hostlib/atp/context.h"
#include "hostlib/dpdk/dpdk_host.h"
#include "hostlib/dpdk/host_runner.h"
#include "hostlib/testbed/atp_job_file.h"
#include "hostlib/testbed/demo_layout.h"
#include "hostlib/testbed/processes_plan.h"
#include "hostlib/testbed/swemu_process.h"
#include "hostlib/testbed/testbed_run.h"
#include "pipeline/core/output_files.h"
#include "pipeline/core/text_file.h"
#include "swemu/dpdk/eal.h"
#include "swemu/topology_config.h"

namespace swemu {
namespace {

// The two jobs of the demo: job 1 aggregated in the switches, job 2 forwarded to the PS.
Result<AtpJobConfig> MakeJob(const DemoLayout& layout, const DemoJob& job, uint32_t elements) {
  return MakeAtpJobConfig(layout.JobSpec(job, elements));
}

// Starts one swemu process that runs every rack on lcore 0 (rack 0 from --config, rack 1 from
// --also-switch: one loop serves both, so the racks need one core together, beside the hosts'
// lcore 1, and may busy-poll it); the racks' link is a pair of rings in that process.
Status StartSwitches(const DemoOptions& options, const DemoLayout& layout, const std::string& dir,
                     std::vector<std::unique_ptr<SwemuProcess>>& switches) {
  const std::string binary =
      options.swemu_binary.empty() ? SelfDirectory() + "/../swemu/swemu" : options.swemu_binary;
  std::vector<std::string> args, ready;
  for (uint32_t rack = 0; rack < layout.racks(); ++rack) {
    const std::string base = dir + "/rack" + std::to_string(rack);
    SWEMU_RETURN_IF_ERROR(WriteTextFile(base + ".cli", layout.SwitchCli(rack)));
    Result<std::string> ini = layout.SwitchIni(rack, base + ".cli", options.elements,
                                               options.aggregators, options.link_rate);
    if (!ini.ok()) return ini.status();
    SWEMU_RETURN_IF_ERROR(WriteTextFile(base + ".ini", *ini));
    ready.push_back(layout.ControlSocket(rack));
    for (uint16_t port = 0; port < layout.RackPorts(rack); ++port) {
      if (layout.racks() > 1 && port == layout.LinkPort(rack)) continue;  // the racks' link
      std::filesystem::remove(layout.VhostSocket(rack, port));
      ready.push_back(layout.VhostSocket(rack, port));
    }
    std::filesystem::remove(layout.ControlSocket(rack));
    if (rack == 0) {
      args = {"--config", base + ".ini", "--control-socket", layout.ControlSocket(rack)};
    } else {
      args.insert(args.end(), {"--also-switch", base + ".ini=" + layout.ControlSocket(rack)});
    }
  }
  if (options.busy_poll) args.push_back("--busy-poll");
  for (const std::string& eal :
       WithDpdkLog({"--", "-l", "0", "--no-huge", "-m", "256"}, options.verbose)) {
    args.push_back(eal);
  }
  auto sw = std::make_unique<SwemuProcess>();
  SWEMU_RETURN_IF_ERROR(sw->Start(binary, args, dir + "/swemu.log"));
  SWEMU_RETURN_IF_ERROR(sw->WaitForPaths(ready, std::chrono::seconds(20)));
  switches.push_back(std::move(sw));
  return Status::Ok();
}

// SWEMU_ATP_DEBUG: the host runner's and every host's counters.
void PrintDebug(const HostRunner& runner, DpdkHost& dpdk,
                const std::vector<std::unique_ptr<Context>>& contexts, std::ostream& out) {
  const HostRunnerStats& r = runner.stats();
  out << "host runner: rounds " << r.rounds << " idle " << r.idle_rounds << " frames " << r.frames
      << " timers " << r.timers << " held " << r.timers_held << " stalls " << r.stalls
      << " lost_ms " << r.lost_ns / 1'000'000 << " peer_stalls " << r.peer_stalls
      << " peer_lost_ms " << r.peer_lost_ns / 1'000'000 << " busy_ms " << r.busy_ns / 1'000'000
      << " wall_ms " << r.wall_ns / 1'000'000 << "\n";
  for (uint32_t i = 0; i < contexts.size(); ++i) {
    out << "host " << i << ": " << dpdk.port(i).counters().ToString();
    if (i + 1 < contexts.size()) {
      const AtpWorkerStats& w = *contexts[i]->worker_stats(1);
      out << " | sent " << w.packets_sent << " retx " << w.retransmissions << " fast "
          << w.fast_retransmits << " timeouts " << w.timeouts << " spurious_to "
          << w.spurious_timeouts << " spurious_fast " << w.spurious_fast << " loss_halvings "
          << w.loss_halvings << " dup_params " << w.duplicate_params << " stale " << w.stale_params
          << " window " << w.window_bytes << " srtt_us " << w.srtt_ns / 1000 << " samples "
          << w.rtt_samples;
    } else {
      const AtpPsStats& p = *contexts[i]->ps_stats(1);
      out << " | grads " << p.gradients << " full " << p.full << " partial " << p.partials
          << " orig " << p.originals << " dups " << p.duplicates << " overlap "
          << p.partial_overlaps << " slot_busy " << p.slot_busy << " hist_miss " << p.history_misses
          << " resends " << p.param_resends;
    }
    out << '\n';
  }
}

// What the hosts' half of the demo needs from the switches' half.
struct DemoNetwork {
  std::string description;                          // the switches, for the header line
  std::vector<SwemuProcess*> switches;              // per switch: the process that runs it
  std::vector<SwemuProcess*> processes;             // each swemu process once
  std::vector<std::string> names, control_sockets;  // per switch
  std::vector<DemoHost> hosts;                      // workers in id order, then the PS
  std::vector<std::string> host_devargs;            // per host
  AtpJobConfig aggregate, plain;
  std::string prefix;  // of EAL file prefixes
  // The switches busy-poll a core each: their CPU share is then a contention signal. Switches
  // that share the cores back off when idle instead (two racks, a topology of several).
  bool switches_poll = false;
};

// Runs the hosts on one lcore of this process over virtio_user, and the workload; closes the
// hosts' ports. The switches keep running.
Result<std::vector<PassResult>> RunDemoHosts(const DemoOptions& options, const DemoNetwork& net,
                                             std::ostream& out, bool* bad_input) {
  SWEMU_RETURN_IF_ERROR(
      DpdkHost::InitEal(WithDpdkLog({"-l", "1", "--no-pci", "--no-huge", "-m", "1024",
                                     "--file-prefix", net.prefix + "-hosts"},
                                    options.verbose),
                        out));
  DpdkHostConfig host_config;
  host_config.mbufs = 32767;
  host_config.mbuf_cache = 256;
  host_config.ports = net.host_devargs;
  auto dpdk = DpdkHost::Open(host_config);
  if (!dpdk.ok()) return dpdk.status();
  HostRunnerOptions runner_options;
  runner_options.busy_poll = options.busy_poll;
  // Contention: the hosts' lost CPU time, and each swemu's CPU time where it busy-polls one core
  // (its main thread runs the datapath; a switch that backs off when idle is not starved when it
  // sleeps). A swemu that lost its CPU also holds the hosts' timers: its answers are late, not
  // lost.
  const bool switch_polls = options.busy_poll && net.switches_poll;
  if (switch_polls) {
    for (const SwemuProcess* sw : net.processes) runner_options.busy_peers.push_back(sw->pid());
  }
  HostRunner runner(runner_options);
  for (const std::string& why : runner.unwatched_peers()) {
    out << "swemu-atp demo: not watching swemu's CPU (" << why
        << "); a stalled swemu may time packets out\n";
  }
  std::vector<std::unique_ptr<Context>> contexts;
  for (uint32_t i = 0; i < net.hosts.size(); ++i) {
    const DemoHost& host = net.hosts[i];
    auto ctx = std::make_unique<Context>(AtpHostConfig{host.mac, host.ip}, &(*dpdk)->port(i));
    if (host.ps) {
      AtpPsOptions ps_options;
      ps_options.history =
          PsHistoryFor(options.workload.model, static_cast<uint16_t>(net.aggregate.spec.elements));
      SWEMU_RETURN_IF_ERROR(ctx->ServeJob(net.aggregate, ps_options));
      SWEMU_RETURN_IF_ERROR(ctx->ServeJob(net.plain, ps_options));
    } else {
      SWEMU_RETURN_IF_ERROR(ctx->JoinJob(net.aggregate, options.worker));
      SWEMU_RETURN_IF_ERROR(ctx->JoinJob(net.plain, options.worker));
    }
    runner.Add(*ctx, (*dpdk)->port(i));
    contexts.push_back(std::move(ctx));
  }
  std::vector<Context*> workers;
  for (uint32_t w = 0; w + 1 < contexts.size(); ++w) workers.push_back(contexts[w].get());

  *bad_input = false;
  WorkloadDriver driver;
  driver.now_ns = [&runner] { return runner.NowNs(); };
  driver.load = [&runner, &net, switch_polls] {
    LoadSample sample;
    sample.wall_ns = runner.NowNs();
    sample.host_lost_ns = runner.stats().lost_ns;
    if (switch_polls) {
      for (const SwemuProcess* sw : net.processes) sample.switch_cpu_ns.push_back(sw->CpuNs());
    }
    return sample;
  };
  driver.run_until = [&runner, &options](const std::function<bool()>& done) {
    return runner.RunUntil(done, static_cast<TimeNs>(options.timeout_s * 1e9),
                           [] { return std::string("all-reduce calls still running"); });
  };

  out << "swemu-atp demo: " << options.workload.model.model << " ("
      << options.workload.model.layers.size() << " layers, " << options.workload.model.TotalParams()
      << " parameters), " << workers.size() << " workers and a PS over virtio_user, "
      << net.description << "\n";
  if (!net.switches_poll && net.processes.size() > 1) {
    out << "swemu-atp demo: the " << net.processes.size()
        << " switches share the cores with the hosts, so they back off when idle: a packet "
           "that finds one asleep waits until it wakes (10-200 us asked per sleep, more on a busy "
           "VM), at each hop; expect far less goodput than one rack, which busy-polls\n";
  }
  AtpWorkload workload(options.workload, workers, contexts.back().get(), net.aggregate.spec.job_id,
                       net.plain.spec.job_id, net.aggregate.spec.scale);
  auto passes = workload.Run(driver, out);
  for (std::size_t s = 0; s < net.switches.size(); ++s) {
    auto stats = net.switches[s]->Command(net.control_sockets[s], "show atp");
    out << net.names[s] << " aggregators: " << (stats.ok() ? *stats : stats.status().message())
        << '\n';
  }
  if (getenv("SWEMU_ATP_DEBUG") != nullptr) PrintDebug(runner, **dpdk, contexts, out);
  Status closed = (*dpdk)->Close();
  if (!passes.ok()) return passes.status();
  SWEMU_RETURN_IF_ERROR(closed);
  return passes;
}

void PrintRatio(const std::vector<PassResult>& passes, const std::string& bottleneck,
                std::size_t workers, std::ostream& out) {
  double aggregate_s = 0, plain_s = 0;
  for (const PassResult& pass : passes)
    (pass.mode == "at-PS" ? plain_s : aggregate_s) += pass.seconds;
  if (aggregate_s <= 0) return;
  out << "speed ratio in-network / at-PS: " << plain_s / aggregate_s << "x\n"
      << "  (what it depends on: the PS sits behind one " << bottleneck
      << " link. At the PS, that link carries every worker's packets; in-network, one "
         "aggregate per packet, as each worker's own link does. So the ratio is about the "
      << workers
      << " workers when both passes run at line rate, above it only when the at-PS pass "
         "also lost time to retransmissions; it says nothing about the protocol's speed on a "
         "contended host)\n";
}

}  // namespace

namespace {

// --out-dir, created, as an absolute path (sockets and configs name it).
Result<std::string> MakeOutDir(const std::string& out_dir) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) return Status::Error("cannot create " + out_dir + ": " + ec.message());
  return std::filesystem::absolute(out_dir).string();
}

DemoNetwork NewDemoNetwork() {
  DemoNetwork net;
  net.prefix = "swemu-atp-" + std::to_string(getpid());
  return net;
}

// The job's hosts, workers in id order then the PS, each on a host port of the topology
// (LoadAtpTopologyJob checked).
void PlaceJobHosts(const AtpJobFile& job, const std::string& dir, DemoNetwork& net) {
  std::vector<JobPlacement> places = job.workers;
  places.push_back(job.ps);
  std::vector<AtpHost> hosts = job.aggregate.spec.workers;
  hosts.push_back(job.aggregate.spec.ps);
  for (std::size_t i = 0; i < places.size(); ++i) {
    net.hosts.push_back(
        {hosts[i].name, 0, places[i].port, hosts[i].mac, hosts[i].ip, i + 1 == places.size()});
    net.host_devargs.push_back(
        ProcessesHostDevargs(dir, places[i].sw, places[i].port, static_cast<uint32_t>(i)));
  }
}

// swemu-atp demo --topology T --job J: the switches of T as swemu processes (the processes back
// end), the hosts of J in this process; the same files `swemu-atp sim` runs in virtual time.
Status RunAtpDemoOnTopology(const DemoOptions& options, std::ostream& out, bool* bad_input) {
  Result<TopologyConfig> loaded = LoadTopology(options.topology);
  if (!loaded.ok()) return Status::Error("--topology " + loaded.message());
  auto files = LoadAtpTopologyJob(std::move(*loaded), options.job);
  if (!files.ok()) return files.status();
  const TopologyConfig* topo = &files->topology;
  const AtpJobFile* job = &files->job;
  auto made = MakeOutDir(options.out_dir);
  if (!made.ok()) return made.status();
  const std::string& dir = *made;
  DemoNetwork net = NewDemoNetwork();
  net.aggregate = job->aggregate;
  net.plain = job->plain;
  PlaceJobHosts(*job, dir, net);
  Result<TestbedPlan> plan = PlanProcessesTestbed(*topo, dir, getpid());
  if (!plan.ok()) return plan.status();
  TestbedOptions testbed;
  testbed.swemu_binary =
      options.swemu_binary.empty() ? SelfDirectory() + "/../swemu/swemu" : options.swemu_binary;
  testbed.out_dir = dir;
  // One switch polls its own core beside the hosts'; several share the cores and back off.
  testbed.busy_poll = options.busy_poll && plan->switches.size() == 1;
  net.switches_poll = testbed.busy_poll;
  TestbedRunner runner(*plan, testbed);
  SWEMU_RETURN_IF_ERROR(runner.Build());
  SWEMU_RETURN_IF_ERROR(runner.StartSwitches());
  for (std::size_t s = 0; s < runner.switches().size(); ++s) {
    net.switches.push_back(runner.switches()[s].get());
    net.processes.push_back(runner.switches()[s].get());
    net.names.push_back(plan->switches[s].name);
    net.control_sockets.push_back(plan->switches[s].control_socket);
  }
  net.description = std::to_string(plan->switches.size()) + " swemu process" +
                    (plan->switches.size() > 1 ? "es" : "") + " of " + options.topology +
                    " (vhost-user), job " + options.job;
  auto passes = RunDemoHosts(options, net, out, bad_input);
  SWEMU_RETURN_IF_ERROR(runner.Teardown());
  if (!passes.ok()) return passes.status();
  PrintRatio(*passes, "host", net.hosts.size() - 1, out);
  out << "switch configs and logs: " << dir << "\n";
  return Status::Ok();
}

}  // namespace

Status RunAtpDemo(const DemoOptions& options, std::ostream& out, bool* bad_input) {
  *bad_input = true;
  if (!options.topology.empty()) return RunAtpDemoOnTopology(options, out, bad_input);
  if (options.workers < 1 || options.workers > kAtpMaxWorkers) {
    return Status::Error("--workers must be 1.." + std::to_string(kAtpMaxWorkers));
  }
  if (options.racks != 1 && options.racks != 2) return Status::Error("--racks must be 1 or 2");
  if (options.racks == 2 && options.workers < 2) return Status::Error("--racks 2 needs 2 workers");
  auto made = MakeOutDir(options.out_dir);
  if (!made.ok()) return made.status();
  const std::string& dir = *made;
  DemoNetwork net = NewDemoNetwork();
  DemoLayout layout(options.workers, options.racks, dir, net.prefix);
  // sockaddr_un holds 107 characters.
  if (layout.VhostSocket(1, 99).size() > 107) {
    return Status::Error("--out-dir " + dir +
                         " is too long for Unix socket paths; choose a shorter one");
  }
  auto aggregate = MakeJob(layout, layout.jobs()[0], options.elements);
  if (!aggregate.ok()) return aggregate.status();
  auto plain = MakeJob(layout, layout.jobs()[1], options.elements);
  if (!plain.ok()) return plain.status();
  net.aggregate = *aggregate;
  net.plain = *plain;

  std::vector<std::unique_ptr<SwemuProcess>> switches;
  SWEMU_RETURN_IF_ERROR(StartSwitches(options, layout, dir, switches));
  net.processes.push_back(switches.front().get());
  for (uint32_t rack = 0; rack < layout.racks(); ++rack) {
    net.switches.push_back(switches.front().get());
    net.names.push_back("rack" + std::to_string(rack));
    net.control_sockets.push_back(layout.ControlSocket(rack));
  }
  net.hosts = layout.hosts();
  for (uint32_t i = 0; i < layout.hosts().size(); ++i) {
    net.host_devargs.push_back(layout.HostDevargs(layout.hosts()[i], i));
  }
  net.switches_poll = options.busy_poll;  // one process, one lcore, whatever the racks
  net.description = std::to_string(options.racks) + " rack" + (options.racks > 1 ? "s" : "") +
                    " of swemu" + (options.racks > 1 ? " in one process" : "") + " (atp, " +
                    std::to_string(options.elements) + " elements per packet, " +
                    std::to_string(options.aggregators) + " aggregators, links shaped to " +
                    options.link_rate + "bps)";
  auto passes = RunDemoHosts(options, net, out, bad_input);
  auto exit_status = switches.front()->Stop(std::chrono::seconds(10));
  if (!exit_status.ok()) return exit_status.status();
  if (*exit_status != 0) {
    return Status::Error("swemu exited with status " + std::to_string(*exit_status) +
                         " (log: " + switches.front()->log_path() + ")");
  }
  if (!passes.ok()) return passes.status();
  PrintRatio(*passes, options.link_rate + "bps", options.workers, out);
  out << "switch configs, scripts and logs: " << dir << "\n";
  return Status::Ok();
}

}  // namespace swemu
