#include "tools/atp/atp_publish.h"

#include <filesystem>
#include <set>
#include <sstream>

#include "pipeline/control/units.h"
#include "pipeline/core/output_files.h"
#include "pipeline/core/text_file.h"
#include "pipeline/tm/tm_config.h"
#include "hostlib/testbed/hosts_list.h"
#include "swemu/switch_config_writer.h"
#include "tools/option_values.h"

namespace swemu {
namespace po = boost::program_options;
namespace {

constexpr uint16_t kFloodGroup = 2;  // broadcast (ARP) and hosts whose MAC is `learn`

std::vector<AtpListedHost> AllHosts(const AtpHostsList& hosts) {
  std::vector<AtpListedHost> all = hosts.workers;
  all.push_back(hosts.ps);
  return all;
}

}  // namespace

Result<AtpHostsList> ParseAtpHostsList(std::string_view text) {
  Result<std::vector<ListedHost>> hosts = ParseListedHosts(text);
  if (!hosts.ok()) return hosts.status();
  AtpHostsList list;
  bool have_ps = false;
  for (const ListedHost& host : *hosts) {
    if (!host.sw.empty()) {
      return Status::Error("hosts: " + host.name + ": one switch: PORT, not " + host.sw + ":" +
                           std::to_string(host.port));
    }
    if (host.ps && have_ps) return Status::Error("hosts: " + host.name + ": a second ps (one PS per job)");
    if (host.ps) {
      list.ps = host;
      have_ps = true;
    } else {
      list.workers.push_back(host);
    }
  }
  if (!have_ps) return Status::Error("hosts: no ps line (NAME ps IP MAC PORT)");
  if (list.workers.empty() || list.workers.size() > kAtpMaxWorkers) {
    return Status::Error("hosts: " + std::to_string(list.workers.size()) + " workers, need 1.." +
                         std::to_string(kAtpMaxWorkers));
  }
  SWEMU_RETURN_IF_ERROR(CheckListedHostsUnique(AllHosts(list)));
  return list;
}

Result<AtpJobSpec> MakePublishedJob(const AtpHostsList& hosts, const AtpPublishOptions& options) {
  auto host = [&](const AtpListedHost& h) {
    return AtpHost{h.name, h.mac.value_or(MacAddr{}), h.ip,
                   options.switch_name + ":" + std::to_string(h.port)};
  };
  AtpJobSpec spec;
  spec.job_id = options.job_id;
  spec.group_ip = options.group_ip;
  spec.elements = options.elements;
  spec.udp_port = options.udp_port;
  spec.ps = host(hosts.ps);
  for (const AtpListedHost& w : hosts.workers) spec.workers.push_back(host(w));
  Result<AtpJobConfig> checked = MakeAtpJobConfig(spec);
  if (!checked.ok()) return checked.status();
  return spec;
}

std::string PublishedSwitchScript(const AtpHostsList& hosts, const AtpPublishOptions& options) {
  std::vector<std::pair<MacAddr, uint16_t>> dmac;
  std::vector<uint16_t> workers, all;
  bool learn = false;
  for (const AtpListedHost& h : AllHosts(hosts)) {
    if (h.mac) dmac.emplace_back(*h.mac, h.port);
    learn = learn || !h.mac;
    all.push_back(h.port);
  }
  for (const AtpListedHost& w : hosts.workers) workers.push_back(w.port);
  const std::vector<DemoJob> jobs = {
      {options.job_id, options.group_ip, true},
      {static_cast<uint16_t>(options.job_id + 1), options.group_ip + 1, false}};
  std::ostringstream cli;
  cli << AtpSwitchScript(dmac, workers, jobs);
  // Broadcasts (ARP) reach every host; so does a frame for an unknown MAC when a host's is
  // `learn` (the switch has no MAC learning: such a host gets it by flooding).
  cli << "mc_mgrp_create " << kFloodGroup << "\nmc_node_create 1";
  for (const uint16_t port : all) cli << ' ' << port;
  cli << "\nmc_node_associate " << kFloodGroup << " 1\n"
      << "table_add dmac multicast ff:ff:ff:ff:ff:ff => " << kFloodGroup << "\n";
  if (learn) cli << "table_set_default dmac multicast " << kFloodGroup << "\n";
  return cli.str();
}

LoadedSwitchConfig PublishedSwitchConfig(const AtpHostsList& hosts,
                                         const AtpPublishOptions& options,
                                         const std::string& cli_path) {
  uint16_t ports = 0;
  for (const AtpListedHost& h : AllHosts(hosts)) ports = std::max<uint16_t>(ports, h.port + 1);
  for (const auto& [port, devargs] : options.port_devargs) {
    ports = std::max<uint16_t>(ports, static_cast<uint16_t>(port + 1));
  }
  LoadedSwitchConfig ini;
  ini.config.name = options.switch_name;
  ini.config.num_ports = ports;
  ini.config.program = "atp";
  ini.startup_script = cli_path;
  ini.config.program_options.Set("aggregators", std::to_string(options.aggregators));
  ini.config.program_options.Set("elements", std::to_string(options.elements));
  if (options.udp_port != kAtpDefaultUdpPort) {
    ini.config.program_options.Set("udp_port", std::to_string(options.udp_port));
  }
  ini.config.tm.port_rate_bps = options.link_rate_bps;
  ini.config.tm.queue.depth_pkts = 4096;
  ini.config.tm.queue.ecn_threshold_bytes = 64 << 10;
  ini.port_devargs = options.port_devargs;
  return ini;
}

po::options_description AtpPublishOptionsDescription() {
  po::options_description options("swemu-atp publish options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("hosts", po::value<std::string>()->required(), "the hosts list: NAME ROLE IP MAC PORT per line")
      ("out-dir", po::value<std::string>()->default_value("out/atp_publish"), "where switch.ini, switch.cli and job go (created)")
      ("switch", po::value<std::string>()->default_value("tor"), "the switch's name")
      ("job-id", po::value<std::string>()->default_value("1"), "the job's id (id + 1: the same workers, aggregated at the PS)")
      ("group", po::value<std::string>()->default_value("239.1.1.1"), "the multicast group of parameter packets (group + 1: the at-PS job's)")
      ("elements", po::value<std::string>()->default_value(std::to_string(kAtpDefaultElements)), "int32 elements per packet")
      ("udp-port", po::value<std::string>()->default_value(std::to_string(kAtpDefaultUdpPort)), "the ATP UDP port")
      ("aggregators", po::value<std::string>()->default_value(std::to_string(kAtpDefaultAggregators)), "aggregators in the switch")
      ("link-rate", po::value<std::string>()->default_value("0"), "every switch port's shaping rate (0: unshaped)")
      ("port-devargs", po::value<std::vector<std::string>>(), "N=DEVARGS: switch port N's DPDK device (repeat; e.g. 0=0000:3b:00.0)");
  // clang-format on
  return options;
}

namespace {

Status ReadPublishOptions(const po::variables_map& vm, AtpPublishOptions* o) {
  using opt::Text;
  o->switch_name = Text(vm, "switch");
  if (o->switch_name.empty() || o->switch_name.find_first_of(" \t:#=") != std::string::npos) {
    return Status::Error("--switch '" + o->switch_name + "': one word without ':', '#' or '='");
  }
  SWEMU_RETURN_IF_ERROR(ReadUintOption(vm, "job-id", 1, 65534, &o->job_id));
  SWEMU_RETURN_IF_ERROR(ReadUintOption(vm, "elements", 1, kAtpMaxElementsPerMtu, &o->elements));
  SWEMU_RETURN_IF_ERROR(ReadUintOption(vm, "udp-port", 1, 65535, &o->udp_port));
  SWEMU_RETURN_IF_ERROR(ReadUintOption(vm, "aggregators", 1, 1u << 22, &o->aggregators));
  Result<Ipv4Addr> group = ParseIpv4(Text(vm, "group"));
  if (!group.ok()) return Status::Error("--group: " + group.message());
  if ((*group >> 28) != 0xE || ((*group + 1) >> 28) != 0xE) {
    return Status::Error("--group " + Text(vm, "group") +
                         ": not a multicast address (224.0.0.0/4, and the next one too)");
  }
  o->group_ip = *group;
  SWEMU_RETURN_IF_ERROR(
      opt::Check("link-rate", ParseRate(Text(vm, "link-rate")), &o->link_rate_bps));
  if (vm.count("port-devargs")) {
    for (const std::string& item : vm["port-devargs"].as<std::vector<std::string>>()) {
      const std::size_t eq = item.find('=');
      Result<uint64_t> port = ParseUint(item.substr(0, eq), 0, kTmMaxPorts - 1);
      if (eq == std::string::npos || !port.ok() || eq + 1 == item.size()) {
        return Status::Error("--port-devargs '" + item + "': expected N=DEVARGS");
      }
      o->port_devargs.emplace_back(static_cast<PortId>(*port), item.substr(eq + 1));
    }
  }
  return Status::Ok();
}

}  // namespace

Status RunAtpPublish(const po::variables_map& vm, std::ostream& out, const std::string& command) {
  AtpPublishOptions options;
  SWEMU_RETURN_IF_ERROR(ReadPublishOptions(vm, &options));
  const std::string hosts_path = opt::Text(vm, "hosts");
  Result<std::string> text = ReadTextFile(hosts_path, "--hosts");
  if (!text.ok()) return text.status();
  Result<AtpHostsList> hosts = ParseAtpHostsList(*text);
  if (!hosts.ok()) return Status::Error(hosts_path + ": " + hosts.message());
  Result<AtpJobSpec> job = MakePublishedJob(*hosts, options);
  if (!job.ok()) return Status::Error(hosts_path + ": " + job.message());
  const std::string dir = opt::Text(vm, "out-dir");
  SWEMU_RETURN_IF_ERROR(CheckOutputDirectory(dir, "--out-dir"));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string header = "# Generated by " + command + "\n";
  const LoadedSwitchConfig ini = PublishedSwitchConfig(*hosts, options, dir + "/switch.cli");
  SwitchConfigFormat format;
  format.header = header + "# The switch of ATP job " + std::to_string(options.job_id) +
                  " (its hosts: job). Run: swemu --config switch.ini\n";
  format.cli_relative_to = dir;
  SWEMU_RETURN_IF_ERROR(WriteSwitchConfig(ini, dir + "/switch.ini", format));
  SWEMU_RETURN_IF_ERROR(
      WriteTextFile(dir + "/switch.cli", header + PublishedSwitchScript(*hosts, options)));
  SWEMU_RETURN_IF_ERROR(WriteTextFile(
      dir + "/job", header + "# Every host of the job reads this file (swemu-atp worker, ps).\n" +
                        FormatAtpJobSpec(*job)));
  out << "ATP job " << options.job_id << " on switch " << options.switch_name << ": "
      << hosts->workers.size() << " workers, PS " << hosts->ps.name << ", group "
      << FormatIpv4(options.group_ip) << ", " << options.elements << " elements per packet\n";
  for (const char* file : {"switch.ini", "switch.cli", "job"}) {
    out << "wrote " << dir << "/" << file << "\n";
  }
  return Status::Ok();
}

}  // namespace swemu
