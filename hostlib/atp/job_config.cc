#include "hostlib/atp/job_config.h"

#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

namespace swemu {
namespace {

std::string_view Trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

template <typename T>
Result<T> ParseNumber(std::string_view text, T min, T max) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    std::ostringstream os;
    os << "'" << text << "' is not a number in " << min << ".." << max;
    return Status::Error(os.str());
  }
  return value;
}

// "name mac ip rack"
Result<AtpHost> ParseHost(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string name, mac, ip, rack, extra;
  if (!(in >> name >> mac >> ip >> rack) || (in >> extra)) {
    return Status::Error("expected '<name> <mac> <ip> <rack>', got '" + std::string(text) + "'");
  }
  Result<MacAddr> m = mac == "learn" ? Result<MacAddr>(MacAddr{}) : ParseMac(mac);
  if (!m.ok()) return m.status();
  Result<Ipv4Addr> a = ParseIpv4(ip);
  if (!a.ok()) return a.status();
  return AtpHost{name, *m, *a, rack};
}

Status ApplyKey(std::string_view key, std::string_view value, AtpJobSpec* spec) {
  if (key == "worker" || key == "ps") {
    Result<AtpHost> host = ParseHost(value);
    if (!host.ok()) return host.status();
    if (key == "ps") {
      spec->ps = *host;
    } else {
      spec->workers.push_back(*host);
    }
    return Status::Ok();
  }
  if (key == "id") {
    Result<uint16_t> v = ParseNumber<uint16_t>(value, 1, 65535);
    if (v.ok()) spec->job_id = *v;
    return v.status();
  }
  if (key == "elements") {
    Result<uint16_t> v = ParseNumber<uint16_t>(value, 1, kAtpMaxElementsPerMtu);
    if (v.ok()) spec->elements = *v;
    return v.status();
  }
  if (key == "port") {
    Result<uint16_t> v = ParseNumber<uint16_t>(value, 1, 65535);
    if (v.ok()) spec->udp_port = *v;
    return v.status();
  }
  if (key == "scale") {
    Result<double> v = ParseNumber<double>(value, 1.0, 1e18);
    if (v.ok()) spec->scale = *v;
    return v.status();
  }
  if (key == "group") {
    Result<Ipv4Addr> v = ParseIpv4(value);
    if (v.ok()) spec->group_ip = *v;
    return v.status();
  }
  return Status::Error("unknown key '" + std::string(key) + "'");
}

}  // namespace

int AtpJobConfig::FindWorker(Ipv4Addr ip) const {
  for (std::size_t i = 0; i < spec.workers.size(); ++i) {
    if (spec.workers[i].ip == ip) return static_cast<int>(i);
  }
  return -1;
}

Result<AtpJobConfig> MakeAtpJobConfig(const AtpJobSpec& spec) {
  if (spec.job_id == 0) return Status::Error("atp job: id must be 1..65535");
  const std::size_t w = spec.workers.size();
  if (w == 0 || w > kAtpMaxWorkers) {
    return Status::Error("atp job " + std::to_string(spec.job_id) + ": " + std::to_string(w) +
                         " workers, need 1.." + std::to_string(kAtpMaxWorkers));
  }
  if (spec.ps.name.empty() || spec.ps.rack.empty()) {
    return Status::Error("atp job " + std::to_string(spec.job_id) + ": no ps given");
  }
  if ((spec.group_ip >> 28) != 0xE) {
    return Status::Error("atp job " + std::to_string(spec.job_id) + ": group " +
                         FormatIpv4(spec.group_ip) + " is not a multicast address");
  }
  if (spec.elements == 0 || spec.elements > kAtpMaxElementsPerMtu) {
    return Status::Error("atp job: elements must be 1.." + std::to_string(kAtpMaxElementsPerMtu));
  }
  if (!(spec.scale >= 1.0) || !std::isfinite(spec.scale)) {
    return Status::Error("atp job: scale must be a finite number >= 1");
  }
  std::set<std::string> names{spec.ps.name};
  std::set<Ipv4Addr> ips{spec.ps.ip};
  std::map<std::string, uint32_t> per_rack;
  for (const AtpHost& h : spec.workers) {
    if (!names.insert(h.name).second || !ips.insert(h.ip).second) {
      return Status::Error("atp job: host '" + h.name + "' (" + FormatIpv4(h.ip) +
                           ") appears twice");
    }
    if (h.rack.empty()) return Status::Error("atp job: worker '" + h.name + "' has no rack");
    ++per_rack[h.rack];
  }
  AtpJobConfig config;
  config.spec = spec;
  config.full_bitmap = w == 32 ? 0xFFFFFFFFu : (1u << w) - 1;
  config.group_mac = Ipv4MulticastMac(spec.group_ip);
  for (std::size_t i = 0; i < w; ++i) {
    const bool local = spec.workers[i].rack == spec.ps.rack;
    config.workers.push_back({static_cast<uint8_t>(i),
                              static_cast<uint8_t>(local ? w : per_rack[spec.workers[i].rack]),
                              static_cast<uint8_t>(local ? 0 : w)});
  }
  return config;
}

std::string FormatAtpJobSpec(const AtpJobSpec& spec) {
  auto host = [](const AtpHost& h) {
    const std::string mac = h.mac == MacAddr{} ? "learn" : FormatMac(h.mac);
    return h.name + " " + mac + " " + FormatIpv4(h.ip) + " " + h.rack + "\n";
  };
  std::ostringstream out;
  out << "[job]\nid = " << spec.job_id << "\ngroup = " << FormatIpv4(spec.group_ip)
      << "\nelements = " << spec.elements << "\nport = " << spec.udp_port << "\nscale = ";
  out.precision(17);
  out << spec.scale << "\nps = " << host(spec.ps);
  for (const AtpHost& worker : spec.workers) out << "worker = " << host(worker);
  return out.str();
}

Result<AtpJobConfig> ParseAtpJobConfig(std::string_view text) {
  AtpJobSpec spec;
  std::set<std::string> seen;
  bool in_job = false;
  int line_no = 0;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line_no;
    line = Trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    const std::string where = "atp job line " + std::to_string(line_no) + ": ";
    if (line.front() == '[') {
      if (line != "[job]") return Status::Error(where + "unknown section " + std::string(line));
      in_job = true;
      continue;
    }
    if (!in_job) return Status::Error(where + "expected [job] first");
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) return Status::Error(where + "expected 'key = value'");
    const std::string_view key = Trim(line.substr(0, eq));
    if (key != "worker" && !seen.insert(std::string(key)).second) {
      return Status::Error(where + "duplicate key '" + std::string(key) + "'");
    }
    Status applied = ApplyKey(key, Trim(line.substr(eq + 1)), &spec);
    if (!applied.ok()) return Status::Error(where + applied.message());
  }
  if (!in_job) return Status::Error("atp job: no [job] section");
  return MakeAtpJobConfig(spec);
}

}  // namespace swemu
