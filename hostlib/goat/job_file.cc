#include "hostlib/goat/job_file.h"

#include <set>
#include <sstream>
#include <vector>

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
  std::set<std::string> seen;
  std::istringstream lines{std::string(text)};
  std::string line;
  int number = 0;
  bool section = false;
  while (std::getline(lines, line)) {
    ++number;
    const std::string where = "goat job line " + std::to_string(number) + ": ";
    if (const std::size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string first;
    if (!(words >> first)) continue;
    if (first == "[job]") {
      section = true;
      continue;
    }
    if (!section) return Status::Error(where + "expected [job] first");
    std::string eq;
    if (!(words >> eq) || eq != "=") return Status::Error(where + "expected KEY = VALUE");
    if (first != "worker" && !seen.insert(first).second) {
      return Status::Error(where + first + " given twice");
    }
    std::string value;
    std::getline(words >> std::ws, value);
    while (!value.empty() &&
           (value.back() == ' ' || value.back() == '\t' || value.back() == '\r')) {
      value.pop_back();
    }
    auto number_of = [&](uint64_t min, uint64_t max) -> Result<uint64_t> {
      Result<uint64_t> v = ParseUint(value, min, max);
      if (!v.ok()) return Status::Error(where + first + ": " + v.message());
      return v;
    };
    if (first == "id" || first == "elements" || first == "port" || first == "k") {
      Result<uint64_t> v = number_of(first == "k" ? 0 : 1, first == "k" ? kGoatMaxWorkers : 65535);
      if (!v.ok()) return v.status();
      if (first == "id") job.job_id = static_cast<uint16_t>(*v);
      if (first == "elements") job.elements = static_cast<uint16_t>(*v);
      if (first == "port") job.udp_port = static_cast<uint16_t>(*v);
      if (first == "k") job.k = static_cast<uint32_t>(*v);
    } else if (first == "fragments") {
      Result<std::vector<uint64_t>> f = List(value, UINT32_MAX);
      if (!f.ok()) return Status::Error(where + "fragments: " + f.message());
      job.fragments.assign(f->begin(), f->end());
    } else if (first == "ps" || first == "worker") {
      std::istringstream in(value);
      Result<GoatHostAddr> h = ParseHost(in);
      if (!h.ok()) return Status::Error(where + first + ": " + h.message());
      if (first == "ps") {
        job.ps = *h;
        continue;
      }
      std::string nodes, rest;
      if (!(in >> nodes) || (in >> rest)) {
        return Status::Error(where + "worker: expected NAME MAC IP NODE,NODE,...");
      }
      Result<std::vector<uint64_t>> n = List(nodes, 65535);
      if (!n.ok()) return Status::Error(where + "worker nodes: " + n.message());
      job.workers.push_back(*h);
      job.node.emplace_back(n->begin(), n->end());
    } else {
      return Status::Error(where + "unknown key " + first);
    }
  }
  for (const char* key : {"id", "fragments", "ps"}) {
    if (!seen.count(key)) return Status::Error(std::string("goat job: no ") + key);
  }
  SWEMU_RETURN_IF_ERROR(job.Validate());
  return job;
}

}  // namespace swemu
