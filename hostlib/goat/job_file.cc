#include "hostlib/goat/job_file.h"

#include <set>
#include <sstream>
#include <vector>

#include "hostlib/common/job_text.h"
#include "pipeline/control/units.h"

namespace swemu {
namespace {

std::string Join(const auto& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

std::string Host(const GoatHostAddr& h) {
  return h.name + " " + FormatMac(h.mac) + " " + FormatIpv4(h.ip);
}

Result<std::vector<uint64_t>> List(const std::string& text, uint64_t max) {
  std::vector<uint64_t> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    Result<uint64_t> v = ParseUint(item, 0, max);
    if (!v.ok()) return v.status();
    out.push_back(*v);
  }
  if (out.empty()) return Status::Error("an empty list");
  return out;
}

Result<GoatHostAddr> ParseHost(std::istringstream& in) {
  GoatHostAddr h;
  std::string mac, ip;
  if (!(in >> h.name >> mac >> ip)) return Status::Error("expected NAME MAC IP");
  Result<MacAddr> m = ParseMac(mac);
  if (!m.ok()) return m.status();
  Result<Ipv4Addr> a = ParseIpv4(ip);
  if (!a.ok()) return a.status();
  h.mac = *m;
  h.ip = *a;
  return h;
}

}  // namespace

std::string FormatGoatJob(const GoatJob& job) {
  std::ostringstream out;
  out << "[job]\nid = " << job.job_id << "\nelements = " << job.elements
      << "\nport = " << job.udp_port << "\nk = " << job.k << "\nfragments = " << Join(job.fragments)
      << "\nps = " << Host(job.ps) << "\n";
  for (std::size_t w = 0; w < job.workers.size(); ++w) {
    out << "worker = " << Host(job.workers[w]) << " " << Join(job.node[w]) << "\n";
  }
  return out.str();
}

Result<GoatJob> ParseGoatJob(std::string_view text) {
  GoatJob job;
  job.workers.clear();
  auto apply = [&](const std::string& key, const std::string& value) -> Status {
    if (key == "id" || key == "elements" || key == "port" || key == "k") {
      Result<uint64_t> v =
          ParseUint(value, key == "k" ? 0 : 1, key == "k" ? kGoatMaxWorkers : 65535);
      if (!v.ok()) return Status::Error(key + ": " + v.message());
      if (key == "id") job.job_id = static_cast<uint16_t>(*v);
      if (key == "elements") job.elements = static_cast<uint16_t>(*v);
      if (key == "port") job.udp_port = static_cast<uint16_t>(*v);
      if (key == "k") job.k = static_cast<uint32_t>(*v);
    } else if (key == "fragments") {
      Result<std::vector<uint64_t>> f = List(value, UINT32_MAX);
      if (!f.ok()) return Status::Error("fragments: " + f.message());
      job.fragments.assign(f->begin(), f->end());
    } else if (key == "ps" || key == "worker") {
      std::istringstream in(value);
      Result<GoatHostAddr> h = ParseHost(in);
      if (!h.ok()) return Status::Error(key + ": " + h.message());
      if (key == "ps") {
        job.ps = *h;
        return Status::Ok();
      }
      std::string nodes, rest;
      if (!(in >> nodes) || (in >> rest)) {
        return Status::Error("worker: expected NAME MAC IP NODE,NODE,...");
      }
      Result<std::vector<uint64_t>> n = List(nodes, 65535);
      if (!n.ok()) return Status::Error("worker nodes: " + n.message());
      job.workers.push_back(*h);
      job.node.emplace_back(n->begin(), n->end());
    } else {
      return Status::Error("unknown key " + key);
    }
    return Status::Ok();
  };
  std::set<std::string> seen;
  SWEMU_RETURN_IF_ERROR(ForEachJobKey(text, "goat job", {"worker"}, apply, &seen));
  for (const char* key : {"id", "fragments", "ps"}) {
    if (!seen.count(key)) return Status::Error(std::string("goat job: no ") + key);
  }
  SWEMU_RETURN_IF_ERROR(job.Validate());
  return job;
}

}  // namespace swemu
