#include "hostlib/python/worker_spec.h"

#include <charconv>
#include <set>
#include <sstream>
#include <vector>

namespace swemu::python {
namespace {

std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  while (true) {
    const std::size_t at = text.find(sep);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

Result<uint32_t> ParseUint(std::string_view text, uint32_t min, uint32_t max) {
  uint32_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max) {
    return Status::Error("'" + std::string(text) + "' is not a number in " + std::to_string(min) +
                         ".." + std::to_string(max));
  }
  return v;
}

std::string HostLine(const AtpHost& host) {
  return host.name + ' ' + FormatMac(host.mac) + ' ' + FormatIpv4(host.ip) + ' ' + host.rack;
}

}  // namespace

std::string FormatWorkerSpec(const WorkerSpec& spec) {
  std::string text = std::string(kWorkerSpecMagic) + ";transport=" + spec.transport +
                     (spec.workers > 0 ? ";workers=" + std::to_string(spec.workers) : "") +
                     ";job=" + spec.job_file;
  if (spec.transport == "dpdk") text += ";dir=" + spec.socket_dir + ";prefix=" + spec.file_prefix;
  if (spec.rank >= 0) text += ";rank=" + std::to_string(spec.rank);
  for (std::size_t i = 0; i < spec.ports.size(); ++i) {
    text +=
        (i == 0 ? ";ports=" : ",") + spec.ports[i].sw + ":" + std::to_string(spec.ports[i].port);
  }
  if (!spec.port.empty()) text += ";port=" + spec.port;
  return text;
}

Result<WorkerSpec> ParseWorkerSpec(std::string_view text) {
  const std::string quoted = "'" + std::string(text.substr(0, 200)) + "'";
  auto bad = [&quoted](const std::string& why) {
    return Status::Error("bad worker spec " + quoted + ": " + why +
                         " (pass what AtpFabric.worker_spec() returned)");
  };
  const std::vector<std::string_view> parts = Split(text, ';');
  if (parts.front() != kWorkerSpecMagic) {
    return bad("it does not start with '" + std::string(kWorkerSpecMagic) + ";'");
  }
  WorkerSpec spec;
  std::set<std::string_view> seen;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::size_t eq = parts[i].find('=');
    if (eq == std::string_view::npos)
      return bad("'" + std::string(parts[i]) + "' is not key=value");
    const std::string_view key = parts[i].substr(0, eq);
    const std::string_view value = parts[i].substr(eq + 1);
    if (!seen.insert(key).second) return bad(std::string(key) + "= appears twice");
    if (key == "transport") {
      if (value != "dpdk" && value != "udp" && value != "net") {
        return bad("transport must be dpdk, udp or net");
      }
      spec.transport = value;
    } else if (key == "workers") {
      Result<uint32_t> v = ParseUint(value, 1, kAtpMaxWorkers);
      if (!v.ok()) return bad("workers: " + v.message());
      spec.workers = *v;
    } else if (key == "job") {
      spec.job_file = value;
    } else if (key == "dir") {
      spec.socket_dir = value;
    } else if (key == "prefix") {
      spec.file_prefix = value;
    } else if (key == "rank") {
      Result<uint32_t> v = ParseUint(value, 0, kAtpMaxWorkers - 1);
      if (!v.ok()) return bad("rank: " + v.message());
      spec.rank = static_cast<int>(*v);
    } else if (key == "ports") {
      for (std::string_view at : Split(value, ',')) {
        const std::size_t colon = at.rfind(':');
        Result<uint32_t> port = colon == std::string_view::npos || colon == 0
                                    ? Result<uint32_t>(Status::Error("no SWITCH:PORT"))
                                    : ParseUint(at.substr(colon + 1), 0, 0xFFFF);
        if (!port.ok()) return bad("ports: '" + std::string(at) + "' is not SWITCH:PORT");
        spec.ports.push_back({std::string(at.substr(0, colon)), static_cast<uint16_t>(*port)});
      }
    } else if (key == "port") {
      if (value.empty())
        return bad("port= is empty (DPDK devargs, e.g. net_af_packet0,iface=eth0)");
      spec.port = value;
    } else {
      return bad("unknown key '" + std::string(key) + "'");
    }
  }
  for (const char* key : {"transport", "workers", "job"}) {
    if (key == std::string_view("workers") && spec.transport == "net") continue;
    if (!seen.contains(key)) return bad(std::string("no ") + key + "=");
  }
  if (spec.job_file.empty()) return bad("job= is empty");
  if (spec.transport == "dpdk" && (spec.socket_dir.empty() || spec.file_prefix.empty())) {
    return bad("transport=dpdk needs dir= and prefix=");
  }
  if (!spec.port.empty() && spec.transport != "net") {
    return bad("port= goes with transport=net (a published job)");
  }
  if (!spec.ports.empty() && spec.ports.size() != spec.workers) {
    return bad("ports= names " + std::to_string(spec.ports.size()) + " ports for " +
               std::to_string(spec.workers) + " workers");
  }
  if (spec.workers > 0 && spec.rank >= static_cast<int>(spec.workers)) {
    return bad("rank " + std::to_string(spec.rank) +
               " is not below workers=" + std::to_string(spec.workers));
  }
  return spec;
}

std::string FormatAtpJobText(const AtpJobSpec& spec) {
  std::ostringstream out;
  out << "# Written by swemu's Python module (AtpFabric): hostlib/atp/job_config.h's format.\n"
      << "[job]\nid = " << spec.job_id << "\ngroup = " << FormatIpv4(spec.group_ip)
      << "\nelements = " << spec.elements << "\nport = " << spec.udp_port << "\nscale = ";
  out.precision(17);
  out << spec.scale << "\nps = " << HostLine(spec.ps) << '\n';
  for (const AtpHost& worker : spec.workers) out << "worker = " << HostLine(worker) << '\n';
  return out.str();
}

}  // namespace swemu::python
