#include "swemu/offline.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "pipeline/core/output_files.h"
#include "pipeline/core/text_file.h"
#include "pipeline/engine/pcap_fixlen.h"
#include "pipeline/engine/pcap_host.h"
#include "pipeline/engine/pcap_io.h"
#include "pipeline/engine/partition.h"
#include "pipeline/engine/telemetry.h"
#include "swemu/bench.h"
#include "swemu/dpdk/realtime.h"
#include "swemu/offline_ranks.h"
#include "swemu/topology_config.h"
#include "swemu/version.h"

namespace swemu {
namespace {

std::string OutPath(const std::string& dir, const std::string& name) {
  return (std::filesystem::path(dir) / name).string();
}

// Single switch: every port is a host port, written to DIR/port<N>.pcap.
Result<RunPlan> SingleSwitchPlan(const CommandLine& cmd) {
  Result<LoadedSwitchConfig> loaded = LoadSwitchConfig(cmd.config);
  if (!loaded.ok()) return loaded.status();
  RunPlan plan;
  plan.seed = loaded->config.seed;
  const SwitchConfig& config = loaded->config;
  for (PortId p = 0; p < config.num_ports; ++p) {
    plan.hosts.push_back(
        {config.name, p, "", OutPath(cmd.out_dir, "port" + std::to_string(p) + ".pcap")});
  }
  for (const InputSpec& in : cmd.inputs) {
    if (!in.sw.empty() && in.sw != config.name) {
      return Status::Error("--in " + in.text + ": unknown switch " + in.sw + " (the switch is " +
                           config.name + ")");
    }
    if (in.port >= config.num_ports) {
      return Status::Error("--in " + in.text + ": port " + std::to_string(in.port) +
                           " out of range (switch " + config.name + " has " +
                           std::to_string(config.num_ports) + " ports)");
    }
    if (!plan.hosts[in.port].in_pcap.empty()) {
      return Status::Error("--in " + in.text + ": port " + std::to_string(in.port) +
                           " already has an input");
    }
    plan.hosts[in.port].in_pcap = in.file;
  }
  plan.switches.push_back(std::move(*loaded));
  return plan;
}

// Topology: the declared host ports, written to DIR/<switch>-port<N>.pcap.
Result<RunPlan> TopologyPlan(const CommandLine& cmd) {
  Result<TopologyConfig> topology = LoadTopology(cmd.topology);
  if (!topology.ok()) return topology.status();
  RunPlan plan;
  plan.topology_path = cmd.topology;
  plan.seed = topology->seed;
  plan.switches = std::move(topology->switches);
  plan.links = std::move(topology->links);
  plan.given_partitions = std::move(topology->partitions);
  for (const TopologyHost& host : topology->hosts) {
    std::string out = OutPath(cmd.out_dir, host.sw + "-port" + std::to_string(host.port) + ".pcap");
    plan.hosts.push_back({host.sw, host.port, "", out, host.delay_ns, host.loss});
  }
  for (const InputSpec& in : cmd.inputs) {
    if (in.sw.empty()) {
      return Status::Error("--in " + in.text + ": name the switch (SW:PORT=FILE) with --topology");
    }
    HostPortSpec* target = nullptr;
    for (HostPortSpec& host : plan.hosts) {
      if (host.sw == in.sw && host.port == in.port) target = &host;
    }
    if (target == nullptr) {
      return Status::Error("--in " + in.text + ": " + in.sw + ":" + std::to_string(in.port) +
                           " is not a host port of " + cmd.topology);
    }
    if (!target->in_pcap.empty()) {
      return Status::Error("--in " + in.text + ": port already has an input");
    }
    target->in_pcap = in.file;
  }
  return plan;
}

Status CheckSource(const CommandLine& cmd) {
  if (cmd.config.empty() && cmd.topology.empty()) {
    return Status::Error("--config or --topology: one of them is required (see --help)");
  }
  if (!cmd.config.empty() && !cmd.topology.empty()) {
    return Status::Error("--config and --topology: give only one of them");
  }
  return Status::Ok();
}

// Default limits of an offline run (--max-virtual-time, --max-events).
constexpr TimeNs kDefaultExtraVirtualNs = 3600ull * 1'000'000'000;
constexpr uint64_t kDefaultBaseEvents = 10'000'000;
constexpr uint64_t kDefaultEventsPerFrame = 1000;  // multicast copies over several hops

struct InputSpan {
  uint64_t frames = 0;
  uint64_t cut_short = 0;  // records with fewer bytes than their wire length (--fixlen)
  TimeNs first_ns = kNever;
  TimeNs last_ns = 0;
};

Status ScanInput(const std::string& path, InputSpan* span) {
  Result<std::unique_ptr<PcapReader>> reader = PcapReader::Open(path);
  if (!reader.ok()) return reader.status();
  PcapRecord record;
  while ((*reader)->Next(&record)) {
    ++span->frames;
    if (record.bytes.size() < record.orig_len) ++span->cut_short;
    span->first_ns = std::min(span->first_ns, record.ts_ns);
    span->last_ns = std::max(span->last_ns, record.ts_ns);
  }
  return (*reader)->status();
}

// Real time reports its own errors and exit status (*exit_status); everything else is a Status.
// --backend: the topology, loaded and checked here, run by the back end main.cc handed in.
Status RunBackend(const CommandLine& cmd, const TopologyBackends& backends, std::ostream& out,
                  std::ostream& err, int* exit_status) {
  auto backend = backends.find(cmd.backend);
  if (backend == backends.end()) {
    return Status::Error("--backend " + cmd.backend + ": not in this build of swemu");
  }
  Result<TopologyConfig> topology = LoadTopology(cmd.topology);
  if (!topology.ok()) return topology.status();
  if (cmd.seed.has_value()) {
    for (LoadedSwitchConfig& sw : topology->switches) sw.config.seed = *cmd.seed;
  }
  *exit_status = backend->second(cmd, *topology, out, err);
  return Status::Ok();
}

Status RunCommand(const CommandLine& cmd, const TopologyBackends& backends, std::ostream& out,
                  std::ostream& err, int* exit_status, RankExchange* ranks) {
  if (cmd.help) {
    out << Usage();
    return Status::Ok();
  }
  if (cmd.version) {
    out << "swemu " << kSwemuVersion << "\n";
    return Status::Ok();
  }
  SWEMU_RETURN_IF_ERROR(CheckSource(cmd));
  if (ranks != nullptr && (!cmd.offline || cmd.show_resources || cmd.bench)) {
    return Status::Error("mpirun -np " + std::to_string(ranks->ranks()) +
                         ": only an --offline run spreads over ranks");
  }
  if (cmd.show_resources) return ShowResources(cmd, out);
  if (cmd.bench) return RunBench(cmd, out);
  if (!cmd.backend.empty()) return RunBackend(cmd, backends, out, err, exit_status);
  if (!cmd.offline) {
    *exit_status = RunRealtime(cmd, out, err);
    return Status::Ok();
  }
  return RunOffline(cmd, out, ranks);
}

}  // namespace

namespace {

// Each switch's partition: the topology's `partition=K`, given for every switch or none, or
// else AssignPartitions'.
Result<std::vector<uint32_t>> PartitionPlan(const RunPlan& plan, uint32_t partitions) {
  std::vector<std::string> names, host_switches;
  for (const LoadedSwitchConfig& sw : plan.switches) names.push_back(sw.config.name);
  for (const HostPortSpec& host : plan.hosts) host_switches.push_back(host.sw);
  const std::string asked = std::to_string(partitions);
  if (plan.given_partitions.empty()) {
    return AssignPartitions(names, plan.links, host_switches, partitions);
  }
  if (plan.given_partitions.size() != names.size()) {
    return Status::Error(asked + ": " + plan.topology_path + " gives a partition to " +
                         std::to_string(plan.given_partitions.size()) + " of its " +
                         std::to_string(names.size()) + " switches: give every switch one, or none");
  }
  std::vector<uint32_t> partition_of(names.size());
  for (const auto& [name, k] : plan.given_partitions) {
    if (k >= partitions) {
      return Status::Error(asked + ": " + plan.topology_path + " puts switch " + name +
                           " in partition " + std::to_string(k) + " (0 to " +
                           std::to_string(partitions - 1) + ")");
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) partition_of[i] = k;
    }
  }
  return partition_of;
}

}  // namespace

Result<RunPlan> MakeRunPlan(const CommandLine& cmd) {
  SWEMU_RETURN_IF_ERROR(CheckSource(cmd));
  Result<RunPlan> plan = cmd.config.empty() ? TopologyPlan(cmd) : SingleSwitchPlan(cmd);
  if (!plan.ok()) return plan;
  if (cmd.seed.has_value()) {
    plan->seed = *cmd.seed;
    for (LoadedSwitchConfig& sw : plan->switches) sw.config.seed = *cmd.seed;
  }
  if (cmd.partitions != 0) {
    Result<std::vector<uint32_t>> parts = PartitionPlan(*plan, cmd.partitions);
    if (!parts.ok()) return Status::Error("--partitions " + parts.message());
    plan->partitions = cmd.partitions;
    plan->partition_of = std::move(*parts);
  }
  return plan;
}

namespace {

// BuildEngine, with the host ports' inputs fixed as --fixlen says; *pcap_hosts receives the
// hosts (owned by the engine) so their counts can be read after the run.
Result<std::unique_ptr<Engine>> BuildEngineWithFixlen(const RunPlan& plan, Fixlen fixlen,
                                                      std::vector<const PcapHost*>* pcap_hosts,
                                                      RankExchange* ranks = nullptr) {
  auto engine = std::make_unique<Engine>(plan.seed, 65536, plan.partitions, ranks);
  for (std::size_t i = 0; i < plan.switches.size(); ++i) {
    SwitchConfig config = plan.switches[i].config;
    ApplyLinkRates(plan.links, config);
    const uint32_t partition = plan.partition_of.empty() ? 0 : plan.partition_of[i];
    SWEMU_RETURN_IF_ERROR(
        engine->AddSwitch(std::move(config), plan.switches[i].startup_script, partition));
  }
  auto in_topology = [&](const Status& status) {
    return plan.topology_path.empty() ? status
                                      : Status::Error(plan.topology_path + ": " + status.message());
  };
  for (const LinkSpec& link : plan.links) {
    Status added = engine->AddLink(link);
    if (!added.ok()) return in_topology(added);
  }
  for (const HostPortSpec& host : plan.hosts) {
    Status added;
    if (fixlen == Fixlen::kNone || !engine->RunsSwitch(host.sw)) {
      added = engine->AddHostPort(host);  // opens inputs; outputs only when the run starts
    } else {
      // AddHostPort's PcapHost, with the fix: the input opens now, the output at the start.
      std::unique_ptr<PcapReader> input;
      if (!host.in_pcap.empty()) {
        Result<std::unique_ptr<PcapReader>> reader = PcapReader::Open(host.in_pcap);
        if (!reader.ok()) return in_topology(reader.status());
        input = std::move(*reader);
      }
      auto pcap_host = std::make_unique<PcapHost>(std::move(input), host.out_pcap, fixlen);
      if (pcap_hosts != nullptr) pcap_hosts->push_back(pcap_host.get());
      added =
          engine->AttachHost(host.sw, host.port, host.delay_ns, host.loss, std::move(pcap_host));
    }
    if (!added.ok()) return in_topology(added);
  }
  return engine;
}

}  // namespace

Result<std::unique_ptr<Engine>> BuildEngine(const RunPlan& plan) {
  return BuildEngineWithFixlen(plan, Fixlen::kNone, nullptr);
}

Status ShowResources(const CommandLine& cmd, std::ostream& out) {
  Result<RunPlan> plan = MakeRunPlan(cmd);
  if (!plan.ok()) return plan.status();
  Result<std::unique_ptr<Engine>> engine = BuildEngine(*plan);
  if (!engine.ok()) return engine.status();
  for (std::size_t i = 0; i < (*engine)->num_switches(); ++i) {
    Switch& sw = (*engine)->switch_at(i);
    // The control command's answer: the stage report, then the host memory of each table,
    // register array and the TM at the configured sizes, with the startup script's entries.
    Result<std::string> report = sw.commands().Execute("show resources");
    if (!report.ok()) return Status::Error(sw.name() + ": show resources: " + report.message());
    out << "switch " << sw.name() << "\n" << *report;
  }
  return Status::Ok();
}

// --telemetry FILE offline: a path OutputFiles can write, in a directory that exists or is
// --out-dir (which the run makes); a typo in a directory name is not made into a directory.
Status CheckTelemetryPath(const CommandLine& cmd) {
  if (cmd.telemetry.empty()) return Status::Ok();
  SWEMU_RETURN_IF_ERROR(CheckOutputPath(cmd.telemetry, "--telemetry"));
  namespace fs = std::filesystem;
  std::error_code ignored;
  const fs::path parent = fs::path(cmd.telemetry).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ignored) &&
      fs::weakly_canonical(parent, ignored) != fs::weakly_canonical(cmd.out_dir, ignored)) {
    return Status::Error("--telemetry " + cmd.telemetry + ": no directory " + parent.string());
  }
  return Status::Ok();
}

// Inputs are read twice (checked, then run): each must be a regular file.
Status CheckInputsAreFiles(const RunPlan& plan) {
  for (const HostPortSpec& host : plan.hosts) {
    if (host.in_pcap.empty()) continue;
    SWEMU_RETURN_IF_ERROR(CheckRereadablePcap(host.in_pcap));
  }
  return Status::Ok();
}

namespace {

// RunOffline, its outputs staged in `staged`.
Status RunOfflineStaged(const CommandLine& given, std::ostream& out, RankExchange* ranks,
                        OutputFiles& staged) {
  CommandLine cmd = given;
  if (ranks != nullptr) SWEMU_RETURN_IF_ERROR(PartitionsForRanks(*ranks, cmd));
  if (cmd.out_dir.empty()) return Status::Error("--out-dir: required with --offline");
  SWEMU_RETURN_IF_ERROR(CheckOutputDirectory(cmd.out_dir, "--out-dir"));
  SWEMU_RETURN_IF_ERROR(CheckTelemetryPath(cmd));
  Result<RunPlan> plan = MakeRunPlan(cmd);
  if (!plan.ok()) return plan.status();
  // Read every input once, so a corrupt file is refused before any output exists; the frames
  // and their time span also size the run's default limits.
  SWEMU_RETURN_IF_ERROR(CheckInputsAreFiles(*plan));
  InputSpan span;
  for (const HostPortSpec& host : plan->hosts) {
    if (host.in_pcap.empty()) continue;
    SWEMU_RETURN_IF_ERROR(ScanInput(host.in_pcap, &span));
  }
  // The run writes into a staging directory inside DIR; only a run that succeeded moves its
  // files into place, so a failure (or a signal) leaves an earlier run's outputs as they were.
  // With ranks, each rank writes its own switches' host ports, rank 0 counters.json, and no
  // rank moves a file into place before all have written theirs. Rank 0 stages first, so that
  // it is the one that makes --out-dir (and removes it again after a failure: RunOffline).
  const bool first_rank = ranks == nullptr || ranks->rank() == 0;
  auto stage = [&]() -> Status {
    for (HostPortSpec& host : plan->hosts) {
      if (host.out_pcap.empty() || !RunsHere(*plan, host.sw, ranks)) continue;
      const std::filesystem::path final_path(host.out_pcap);
      Result<std::string> aside =
          staged.Staged(final_path.parent_path().string(), final_path.filename().string());
      if (!aside.ok()) return Status::Error("--out-dir " + aside.message());
      host.out_pcap = *aside;
    }
    return Status::Ok();
  };
  if (!first_rank) WaitForAll(*ranks);  // after rank 0's staging
  Status prepared = stage();
  Result<std::string> counters = std::string();
  if (prepared.ok() && first_rank) counters = staged.Staged(cmd.out_dir, "counters.json");
  if (!counters.ok()) prepared = Status::Error("--out-dir " + counters.message());
  if (first_rank && ranks != nullptr) WaitForAll(*ranks);
  const bool telemetry_here = !cmd.telemetry.empty() && first_rank;  // rank 0 writes it all
  const std::string telemetry_path = telemetry_here ? staged.Aside(cmd.telemetry) : "";
  std::vector<const PcapHost*> pcap_hosts;
  Result<std::unique_ptr<Engine>> built = Status::Error("not built");
  if (prepared.ok()) {
    built = BuildEngineWithFixlen(*plan, cmd.fixlen, &pcap_hosts, ranks);
    if (!built.ok()) prepared = built.status();
  }
  SWEMU_RETURN_IF_ERROR(Agreed(ranks, prepared));
  Engine& engine = **built;
  EngineLimits limits;
  limits.max_virtual_ns = cmd.max_virtual_ns.value_or(
      span.frames == 0 ? kDefaultExtraVirtualNs
                       : span.last_ns - span.first_ns + kDefaultExtraVirtualNs);
  limits.max_events =
      cmd.max_events.value_or(kDefaultBaseEvents + kDefaultEventsPerFrame * span.frames);
  engine.SetLimits(limits);
  std::unique_ptr<TelemetryWriter> telemetry;
  RankTelemetry rank_telemetry;
  if (!cmd.telemetry.empty()) {
    if (telemetry_here) {
      Result<std::unique_ptr<TelemetryWriter>> opened = TelemetryWriter::Open(telemetry_path);
      if (!opened.ok()) prepared = opened.status();
      else telemetry = std::move(*opened);
    }
    SWEMU_RETURN_IF_ERROR(Agreed(ranks, prepared));
    std::vector<QueueSnapshot> queues;
    engine.SetSampler(
        cmd.telemetry_period_ns != 0 ? cmd.telemetry_period_ns : kDefaultTelemetryPeriodNs,
        [&engine, &telemetry, &rank_telemetry, ranks, queues](TimeNs now) mutable {
          for (std::size_t i = 0; i < engine.num_switches(); ++i) {
            if (!engine.RunsSwitchAt(i)) continue;  // another rank's
            queues.clear();
            SnapshotQueues(engine.switch_at(i).tm(), queues);
            if (ranks == nullptr) {
              telemetry->Write(now, engine.switch_at(i).name(), queues);
            } else {
              rank_telemetry.Add(now, static_cast<uint32_t>(i), engine.switch_at(i).name(),
                                 queues);
            }
          }
        });
  }
  Status ran = Agreed(ranks, staged.Unstaged(engine.Run()));
  if (!ran.ok()) {
    return Status::Error(ran.message() +
                         (engine.limit_reached()
                              ? "; no output was written (raise --max-events or "
                                "--max-virtual-time if the run is meant to be this long)"
                              : ""));
  }
  if (ranks != nullptr && !cmd.telemetry.empty()) rank_telemetry.WriteAll(*ranks, telemetry.get());
  Status written = Status::Ok();
  if (first_rank) written = staged.Unstaged(WriteTextFile(*counters, engine.CountersJson()));
  if (written.ok() && telemetry != nullptr) written = staged.Unstaged(telemetry->Close());
  SWEMU_RETURN_IF_ERROR(Agreed(ranks, written));
  Status conserved = engine.CheckConservation();
  if (!conserved.ok()) return Status::Error("internal error: " + conserved.message());
  SWEMU_RETURN_IF_ERROR(staged.Commit());
  if (!cmd.quiet) out << engine.PortSummary();
  FixlenCounts fixlen;
  for (const PcapHost* host : pcap_hosts) fixlen.Add(host->fixlen_counts());
  fixlen = SumOverRanks(ranks, fixlen);
  if (cmd.fixlen == Fixlen::kNone) {
    fixlen.frames = span.frames;
    fixlen.cut_short = fixlen.left_short = span.cut_short;
  }
  const std::string fixlen_line = FixlenSummary(cmd.fixlen, fixlen);
  if (!cmd.quiet && !fixlen_line.empty()) out << fixlen_line << "\n";
  return Status::Ok();
}

}  // namespace

Status RunOffline(const CommandLine& cmd, std::ostream& out, RankExchange* ranks) {
  auto staged = std::make_unique<OutputFiles>();
  Status status = RunOfflineStaged(cmd, out, ranks, *staged);
  if (ranks != nullptr) {
    // After a failure rank 0 removes the --out-dir it made, which it can only once the others'
    // staging directories in it are gone.
    if (ranks->rank() != 0) staged.reset();
    WaitForAll(*ranks);
  }
  return status;
}

int SwemuMain(int argc, const char* const argv[], std::ostream& out, std::ostream& err,
              const TopologyBackends& backends, RankExchange* ranks) {
  Result<CommandLine> cmd = ParseCommandLine(argc, argv);
  int exit_status = 0;
  // Ranks: every rank runs, rank 0 alone speaks (the errors are agreed, so it has them all).
  std::ostringstream quiet;
  const bool speaks = ranks == nullptr || ranks->rank() == 0;
  std::ostream& told = speaks ? out : quiet;
  Status status =
      cmd.ok() ? RunCommand(*cmd, backends, told, err, &exit_status, ranks) : cmd.status();
  if (status.ok()) return exit_status;
  if (speaks) err << "swemu: " << status.message() << "\n";
  return 2;
}

}  // namespace swemu
