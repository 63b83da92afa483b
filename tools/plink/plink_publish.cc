// swemu-plink publish: the job file of `swemu-plink node` (hostlib/plink/job_file.h) from a
// topology whose hosts are the training servers: every host a node, in the file's order, with
// its `ip=`, `mac=` and `gw_mac=` (where a node on a DPDK port sends its frames), its group the
// switch it is on (its rack: 2LHA's groups as the paper takes them from the racks). The switches
// run as the topology says (`swemu --topology FILE`, or its .ini files on the swemu server); PLink
// needs nothing of them but IPv4 forwarding between the nodes' addresses.
#include <boost/program_options.hpp>
#include <filesystem>

#include "hostlib/plink/datacenter.h"
#include "hostlib/plink/job_file.h"
#include "pipeline/control/units.h"
#include "pipeline/core/output_files.h"
#include "swemu/topology_routes.h"
#include "tools/option_values.h"
#include "tools/plink/plink_tool.h"

namespace swemu {
namespace po = boost::program_options;
using opt::Check;
using opt::Text;

po::options_description PlinkPublishOptions() {
  po::options_description options("swemu-plink publish options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("topology", po::value<std::string>()->value_name("FILE"), "the network: every host (with ip= and mac=) a node, its group the switch it is on")
      ("out-dir", po::value<std::string>()->default_value("out/plink_job"), "where plink.job goes (made if missing)")
      ("id", po::value<std::string>()->default_value("1"), "the job id, 1-255")
      ("port", po::value<std::string>()->default_value(std::to_string(kPlinkDefaultUdpPort)), "every node's UDP port")
      ("floats", po::value<std::string>()->default_value("262144"), "float32 values each node reduces")
      ("chunk", po::value<std::string>()->default_value("64KB"), "bytes per chunk (whole floats)")
      ("plan", po::value<std::string>()->default_value("2lha"), "2lha (groups: the racks) or flat");
  // clang-format on
  return options;
}

namespace {

// The nodes: every host of the topology, its group its switch.
Status ReadNodes(const po::variables_map& vm, PlinkJob* job) {
  if (!vm.count("topology")) return Status::Error("--topology is required");
  Result<TopologyConfig> topo = PlinkTopology(vm, {});
  if (!topo.ok()) return topo.status();
  const std::string option = "--topology " + Text(vm, "topology");
  Result<TopologyRoutes> routes = TopologyRoutes::Compute(*topo);
  if (!routes.ok()) return Status::Error(option + ": " + routes.message());
  Result<PlinkPlacement> place = PlacePlinkHosts(*topo, *routes, kPlinkJobMaxNodes);
  if (!place.ok()) return Status::Error(option + ": " + place.message());
  for (const TopologyHost& h : topo->hosts) {
    PlinkJobNode node;
    node.name = h.name;
    node.group = h.sw;
    const std::string ip = h.ip.substr(0, h.ip.find('/'));
    Result<Ipv4Addr> addr = ParseIpv4(ip);
    if (h.ip.empty() || !addr.ok()) {
      return Status::Error(option + ": host " + h.name +
                           " has no ip= (every node needs ip=A.B.C.D/LEN, and mac=M)");
    }
    node.ip = *addr;
    if (!h.mac.empty()) {
      Result<MacAddr> mac = ParseMac(h.mac);
      if (!mac.ok()) return Status::Error(option + ": host " + h.name + ": " + mac.message());
      node.mac = *mac;
    }
    if (!h.gateway_mac.empty()) {  // a node on a DPDK port sends through its router
      Result<MacAddr> gw = ParseMac(h.gateway_mac);
      if (!gw.ok()) return Status::Error(option + ": host " + h.name + ": gw_mac: " + gw.message());
      node.gateway_mac = *gw;
    }
    job->nodes.push_back(node);
  }
  return Status::Ok();
}

Status ReadJob(const po::variables_map& vm, PlinkJob* job) {
  SWEMU_RETURN_IF_ERROR(ReadNodes(vm, job));
  uint64_t id = 0, port = 0;
  SWEMU_RETURN_IF_ERROR(opt::CheckUint(vm, "id", 1, 255, &id));
  SWEMU_RETURN_IF_ERROR(opt::CheckUint(vm, "port", 1, 65535, &port));
  SWEMU_RETURN_IF_ERROR(opt::CheckUint(vm, "floats", 1, 16u << 20, &job->floats));
  SWEMU_RETURN_IF_ERROR(Check("chunk", ParseBytes(Text(vm, "chunk")), &job->chunk_bytes));
  job->job_id = static_cast<uint16_t>(id);
  job->udp_port = static_cast<uint16_t>(port);
  const std::string plan = Text(vm, "plan");
  if (plan != "2lha" && plan != "flat") return Status::Error("--plan " + plan + ": 2lha or flat");
  job->flat = plan == "flat";
  if (job->chunk_bytes == 0 || job->chunk_bytes % 4 != 0 ||
      (job->floats * 4 + job->chunk_bytes - 1) / job->chunk_bytes > 65536) {
    return Status::Error("--chunk " + Text(vm, "chunk") +
                         ": whole floats, above 0, at most 65536 chunks of --floats");
  }
  Status valid = job->Validate();  // what is left: the nodes (two with one address)
  if (!valid.ok()) {
    return Status::Error("--topology " + Text(vm, "topology") + ": " + valid.message());
  }
  return Status::Ok();
}

}  // namespace

Status RunPlinkPublish(const po::variables_map& vm, std::ostream& out) {
  PlinkJob job;
  SWEMU_RETURN_IF_ERROR(ReadJob(vm, &job));
  const std::string dir = Text(vm, "out-dir");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    return Status::Error("--out-dir " + dir + ": cannot create it (" + ec.message() + ")");
  }
  const std::string path = dir + "/plink.job";
  SWEMU_RETURN_IF_ERROR(WriteTextFile(
      path,
      "# Written by swemu-plink publish from " + Text(vm, "topology") + "\n" + FormatPlinkJob(job),
      "--out-dir"));
  Result<AggPlan> plan = job.Plan();
  if (!plan.ok()) return plan.status();
  out << path << ": job " << job.job_id << ", " << job.num_nodes() << " nodes in " << plan->groups
      << (job.flat ? " group (flat aggregation)" : " groups (2LHA)") << ", " << job.floats
      << " floats in " << plan->chunk_bytes.size() << " chunks, port " << job.udp_port << "\n"
      << "on each server: swemu-plink node --job plink.job --name NAME\n";
  return Status::Ok();
}

}  // namespace swemu
