#include "hostlib/plink/job_file.h"

#include <map>
#include <set>
#include <sstream>

#include "hostlib/common/job_text.h"
#include "pipeline/control/units.h"

namespace swemu {
namespace {

constexpr std::string_view kGatewayKey = "gw_mac=";

Result<PlinkJobNode> ParseNode(const std::string& value) {
  std::istringstream in(value);
  PlinkJobNode node;
  std::string mac, ip, gateway, rest;
  if (!(in >> node.name >> mac >> ip >> node.group) || ((in >> gateway) && (in >> rest))) {
    return Status::Error("node: expected NAME MAC IP GROUP [gw_mac=M]");
  }
  Result<MacAddr> m = mac == "learn" ? Result<MacAddr>(MacAddr{}) : ParseMac(mac);
  if (!m.ok()) return Status::Error("node " + node.name + ": " + m.message());
  Result<Ipv4Addr> a = ParseIpv4(ip);
  if (!a.ok()) return Status::Error("node " + node.name + ": " + a.message());
  node.mac = *m;
  node.ip = *a;
  if (!gateway.empty()) {
    if (gateway.rfind(kGatewayKey, 0) != 0) {
      return Status::Error("node " + node.name + ": " + gateway + ": expected gw_mac=M");
    }
    Result<MacAddr> g = ParseMac(gateway.substr(kGatewayKey.size()));
    if (!g.ok()) return Status::Error("node " + node.name + ": gw_mac: " + g.message());
    node.gateway_mac = *g;
  }
  return node;
}

}  // namespace

int PlinkJob::Find(const std::string& name) const {
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::vector<uint32_t> PlinkJob::GroupLabels() const {
  std::map<std::string, uint32_t> label;
  std::vector<uint32_t> out;
  for (const PlinkJobNode& n : nodes) {
    out.push_back(label.emplace(n.group, static_cast<uint32_t>(label.size())).first->second);
  }
  return out;
}

std::vector<PlinkNodeAddr> PlinkJob::Addresses() const {
  std::vector<PlinkNodeAddr> out;
  for (const PlinkJobNode& n : nodes) out.push_back({n.mac, n.ip});
  return out;
}

std::vector<PlinkNodeAddr> PlinkJob::FrameAddresses(uint32_t me) const {
  std::vector<PlinkNodeAddr> out = Addresses();
  const MacAddr gateway = nodes[me].gateway_mac;
  if (gateway == MacAddr{}) return out;
  for (uint32_t i = 0; i < out.size(); ++i) {
    if (i != me) out[i].mac = gateway;
  }
  return out;
}

Result<AggPlan> PlinkJob::Plan() const {
  const std::vector<uint64_t> chunks = CutChunks(floats * 4, chunk_bytes);
  return flat ? MakeFlatPlan(num_nodes(), chunks) : MakeTwoLevelPlan(GroupLabels(), chunks);
}

Status PlinkJob::Validate() const {
  if (nodes.size() < 2 || nodes.size() > kPlinkJobMaxNodes) {
    return Status::Error("plink job: 2 to " + std::to_string(kPlinkJobMaxNodes) + " nodes, not " +
                         std::to_string(nodes.size()));
  }
  if (job_id == 0 || job_id > 255) return Status::Error("plink job: id 1 to 255");
  if (floats == 0 || floats > (16u << 20)) {
    return Status::Error("plink job: floats 1 to 16777216, not " + std::to_string(floats));
  }
  if (chunk_bytes == 0 || chunk_bytes % 4 != 0) {
    return Status::Error("plink job: chunk " + std::to_string(chunk_bytes) +
                         ": whole floats, above 0");
  }
  if ((floats * 4 + chunk_bytes - 1) / chunk_bytes > 65536) {
    return Status::Error("plink job: at most 65536 chunks");
  }
  std::set<std::string> names;
  std::set<Ipv4Addr> ips;
  for (const PlinkJobNode& n : nodes) {
    if (!names.insert(n.name).second) return Status::Error("plink job: node " + n.name + " twice");
    if (!ips.insert(n.ip).second) {
      return Status::Error("plink job: node " + n.name + ": address " + FormatIpv4(n.ip) +
                           " twice");
    }
  }
  return Status::Ok();
}

std::string FormatPlinkJob(const PlinkJob& job) {
  std::ostringstream out;
  out << "[job]\nid = " << job.job_id << "\nport = " << job.udp_port << "\nfloats = " << job.floats
      << "\nchunk = " << job.chunk_bytes << "\nplan = " << (job.flat ? "flat" : "2lha") << "\n";
  for (const PlinkJobNode& n : job.nodes) {
    out << "node = " << n.name << " " << (n.mac == MacAddr{} ? "learn" : FormatMac(n.mac)) << " "
        << FormatIpv4(n.ip) << " " << n.group;
    if (n.gateway_mac != MacAddr{}) out << " " << kGatewayKey << FormatMac(n.gateway_mac);
    out << "\n";
  }
  return out.str();
}

Result<PlinkJob> ParsePlinkJob(std::string_view text) {
  PlinkJob job;
  auto apply = [&](const std::string& key, const std::string& value) -> Status {
    if (key == "id" || key == "port" || key == "floats") {
      Result<uint64_t> v = ParseUint(value, 1, key == "floats" ? UINT32_MAX : 65535);
      if (!v.ok()) return Status::Error(key + ": " + v.message());
      if (key == "id") job.job_id = static_cast<uint16_t>(*v);
      if (key == "port") job.udp_port = static_cast<uint16_t>(*v);
      if (key == "floats") job.floats = *v;
    } else if (key == "chunk") {
      Result<uint64_t> v = ParseBytes(value);
      if (!v.ok()) return Status::Error("chunk: " + v.message());
      job.chunk_bytes = *v;
    } else if (key == "plan") {
      if (value != "2lha" && value != "flat") return Status::Error("plan: 2lha or flat");
      job.flat = value == "flat";
    } else if (key == "node") {
      Result<PlinkJobNode> n = ParseNode(value);
      if (!n.ok()) return n.status();
      job.nodes.push_back(*n);
    } else {
      return Status::Error("unknown key " + key);
    }
    return Status::Ok();
  };
  std::set<std::string> seen;
  SWEMU_RETURN_IF_ERROR(ForEachJobKey(text, "plink job", {"node"}, apply, &seen));
  for (const char* key : {"id", "floats"}) {
    if (!seen.count(key)) return Status::Error(std::string("plink job: no ") + key);
  }
  SWEMU_RETURN_IF_ERROR(job.Validate());
  return job;
}

}  // namespace swemu
