#include "hostlib/testbed/atp_job_file.h"

#include "pipeline/core/text_file.h"

namespace swemu {
namespace {

Result<JobPlacement> ParsePlacement(const std::string& text, const std::string& host,
                                    const std::map<std::string, std::string>& programs) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return Status::Error("host " + host + ": expected SWITCH:PORT, got '" + text + "'");
  }
  JobPlacement at;
  at.sw = text.substr(0, colon);
  const std::string port = text.substr(colon + 1);
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoul(port) > 0xFFFF) {
    return Status::Error("host " + host + ": bad port in '" + text + "'");
  }
  at.port = static_cast<PortId>(std::stoul(port));
  if (programs.count(at.sw) == 0) {
    return Status::Error("host " + host + ": no switch named '" + at.sw + "' in the topology");
  }
  return at;
}

}  // namespace

Result<AtpJobFile> LoadAtpJobFile(const std::string& path,
                                  const std::map<std::string, std::string>& programs) {
  Result<std::string> text = ReadTextFile(path, "job file");
  if (!text.ok()) return text.status();
  auto parsed = ParseAtpJobConfig(*text);
  if (!parsed.ok()) return Status::Error(path + ": " + parsed.status().message());

  AtpJobFile file;
  AtpJobSpec spec = parsed->spec;
  auto ps = ParsePlacement(spec.ps.rack, spec.ps.name, programs);
  if (!ps.ok()) return Status::Error(path + ": " + ps.status().message());
  file.ps = *ps;
  spec.ps.rack = ps->sw;
  for (AtpHost& worker : spec.workers) {
    auto at = ParsePlacement(worker.rack, worker.name, programs);
    if (!at.ok()) return Status::Error(path + ": " + at.status().message());
    file.workers.push_back(*at);
    // A worker behind a switch without ATP meets its first aggregation at the PS's switch.
    worker.rack = programs.at(at->sw) == "atp" ? at->sw : spec.ps.rack;
  }
  auto aggregate = MakeAtpJobConfig(spec);
  if (!aggregate.ok()) return Status::Error(path + ": " + aggregate.status().message());
  if (spec.job_id == 0xFFFF)
    return Status::Error(path + ": job id 65535 leaves no id for the plain job");
  spec.job_id = static_cast<uint16_t>(spec.job_id + 1);
  spec.group_ip += 1;
  auto plain = MakeAtpJobConfig(spec);
  if (!plain.ok()) return Status::Error(path + ": " + plain.status().message());
  file.aggregate = *aggregate;
  file.plain = *plain;
  return file;
}

Result<AtpJobFile> LoadPublishedAtpJob(const std::string& path) {
  Result<std::string> text = ReadTextFile(path, "job file");
  if (!text.ok()) return text.status();
  Result<AtpJobConfig> job = ParseAtpJobConfig(*text);
  if (!job.ok()) return Status::Error(path + ": " + job.message());
  std::map<std::string, std::string> programs;
  std::vector<AtpHost> hosts = job->spec.workers;
  hosts.push_back(job->spec.ps);
  for (const AtpHost& h : hosts) programs[h.rack.substr(0, h.rack.rfind(':'))] = "atp";
  return LoadAtpJobFile(path, programs);
}

Result<AtpTopologyJob> LoadAtpTopologyJob(const std::string& topology_path,
                                          const std::string& job_path) {
  auto topology = LoadTopology(topology_path);
  if (!topology.ok()) return topology.status();
  return LoadAtpTopologyJob(std::move(*topology), job_path);
}

Result<AtpTopologyJob> LoadAtpTopologyJob(TopologyConfig topology, const std::string& job_path) {
  std::map<std::string, std::string> programs;
  for (const LoadedSwitchConfig& sw : topology.switches) {
    programs[sw.config.name] = sw.config.program;
  }
  auto job = LoadAtpJobFile(job_path, programs);
  if (!job.ok()) return job.status();
  std::vector<JobPlacement> places = job->workers;
  places.push_back(job->ps);
  std::vector<AtpHost> hosts = job->aggregate.spec.workers;
  hosts.push_back(job->aggregate.spec.ps);
  for (std::size_t i = 0; i < places.size(); ++i) {
    if (FindJobHost(topology, places[i]) == nullptr) {
      return Status::Error(job_path + ": host " + hosts[i].name + " is on " + places[i].sw + ":" +
                           std::to_string(places[i].port) + ", which is not a host port of " +
                           topology.path);
    }
  }
  return AtpTopologyJob{std::move(topology), std::move(*job)};
}

const TopologyHost* FindJobHost(const TopologyConfig& topology, const JobPlacement& at) {
  for (const TopologyHost& host : topology.hosts) {
    if (host.sw == at.sw && host.port == at.port) return &host;
  }
  return nullptr;
}

}  // namespace swemu
