#include "swemu/topology_config.h"

#include <utility>

#include "pipeline/control/command_table.h"
#include "pipeline/control/units.h"
#include "pipeline/engine/partition.h"
#include "pipeline/tm/tm_config.h"
#include "pipeline/wire/address.h"
#include "swemu/ini_file.h"

namespace swemu {
namespace {

// Splits "key=value" attributes after the positional words of a link or host line.
Status ParseAttributes(const std::vector<std::string>& words, std::size_t first, bool allow_rate,
                       uint64_t* rate_bps, TimeNs* delay_ns, double* loss) {
  for (std::size_t i = first; i < words.size(); ++i) {
    const std::string& word = words[i];
    std::size_t eq = word.find('=');
    std::string name = word.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : word.substr(eq + 1);
    if (eq == std::string::npos || value.empty()) {
      return Status::Error("\"" + word + "\" is not name=value");
    }
    if (name == "rate" && allow_rate) {
      Result<uint64_t> rate = ParseRate(value);
      if (!rate.ok()) return Status::Error("rate: " + rate.message());
      *rate_bps = *rate;
    } else if (name == "delay") {
      Result<uint64_t> delay = ParseDuration(value);
      if (!delay.ok()) return Status::Error("delay: " + delay.message());
      *delay_ns = *delay;
    } else if (name == "loss") {
      Result<double> p = ParseProbability(value);
      if (!p.ok()) return Status::Error("loss: " + p.message());
      *loss = *p;
    } else {
      return Status::Error("unknown attribute " + name + " (expected " +
                           (allow_rate ? "rate, delay or loss)" : "delay or loss)"));
    }
  }
  return Status::Ok();
}

Status AddSwitch(const std::vector<std::string>& words, const std::string& file,
                 TopologyConfig& out) {
  if (words.size() != 2 && words.size() != 3) {
    return Status::Error("expected NAME PATH.ini [partition=K]");
  }
  if (words.size() == 3) {
    if (words[2].rfind("partition=", 0) != 0) {
      return Status::Error("\"" + words[2] + "\": expected partition=K");
    }
    Result<uint64_t> k = ParseUint(words[2].substr(10), 0, 255);
    if (!k.ok()) return Status::Error("partition: " + k.message());
    out.partitions.push_back({words[0], static_cast<uint32_t>(*k)});
  }
  Result<LoadedSwitchConfig> loaded = LoadSwitchConfig(ResolveRelative(file, words[1]));
  if (!loaded.ok()) return loaded.status();
  for (const LoadedSwitchConfig& other : out.switches) {
    if (other.config.name == words[0]) return Status::Error("duplicate switch name " + words[0]);
  }
  loaded->config.name = words[0];
  out.switches.push_back(std::move(*loaded));
  return Status::Ok();
}

Status AddLink(const std::vector<std::string>& words, TopologyConfig& out) {
  if (words.size() < 2) return Status::Error("expected A:PORT B:PORT [rate=R] [delay=D] [loss=P]");
  LinkSpec link;
  link.rate_bps = kDefaultPortRateBps;
  SWEMU_RETURN_IF_ERROR(ParseSwitchPort(words[0], &link.a, &link.a_port));
  SWEMU_RETURN_IF_ERROR(ParseSwitchPort(words[1], &link.b, &link.b_port));
  SWEMU_RETURN_IF_ERROR(
      ParseAttributes(words, 2, true, &link.rate_bps, &link.delay_ns, &link.loss));
  out.links.push_back(link);
  return Status::Ok();
}

// A host's addressing attribute (name, ip, mac, gw, gw_mac); false when `name` is not one.
Result<bool> ParseHostAddress(const std::string& name, const std::string& value,
                              TopologyHost& host) {
  if (name == "name") {
    if (value.find_first_of("/ \t") != std::string::npos)
      return Status::Error("name: no / or spaces");
    host.name = value;
  } else if (name == "ip") {
    const std::size_t slash = value.find('/');
    if (slash == std::string::npos || !ParseIpv4(value.substr(0, slash)).ok() ||
        !ParseIpv4Prefix("0.0.0.0" + value.substr(slash)).ok()) {
      return Status::Error("ip: \"" + value + "\" is not A.B.C.D/LEN");
    }
    host.ip = value;
  } else if (name == "mac") {
    if (!ParseMac(value).ok()) return Status::Error("mac: \"" + value + "\" is not a MAC address");
    host.mac = value;
  } else if (name == "gw") {
    if (!ParseIpv4(value).ok()) return Status::Error("gw: \"" + value + "\" is not A.B.C.D");
    host.gateway = value;
  } else if (name == "role") {
    if (value.find_first_of("/ \t") != std::string::npos)
      return Status::Error("role: one word");
    host.role = value;
  } else if (name == "gw_mac") {
    if (!ParseMac(value).ok()) return Status::Error("gw_mac: \"" + value + "\" is not a MAC");
    host.gateway_mac = value;
  } else {
    return false;
  }
  return true;
}

Status AddHost(const std::vector<std::string>& words, TopologyConfig& out) {
  if (words.empty())
    return Status::Error("expected SW:PORT [delay=D] [loss=P] [name=N] [ip=A/L] ...");
  TopologyHost host;
  SWEMU_RETURN_IF_ERROR(ParseSwitchPort(words[0], &host.sw, &host.port));
  std::vector<std::string> link_words{words[0]};
  for (std::size_t i = 1; i < words.size(); ++i) {
    const std::size_t eq = words[i].find('=');
    if (eq == std::string::npos) {
      link_words.push_back(words[i]);
      continue;
    }
    Result<bool> address = ParseHostAddress(words[i].substr(0, eq), words[i].substr(eq + 1), host);
    if (!address.ok()) return address.status();
    if (!*address) link_words.push_back(words[i]);
  }
  uint64_t unused_rate = 0;
  Status link = ParseAttributes(link_words, 1, false, &unused_rate, &host.delay_ns, &host.loss);
  if (!link.ok() && link.message().rfind("unknown attribute", 0) == 0) {
    return Status::Error(link.message().substr(0, link.message().find(" (")) +
                         " (expected delay, loss, name, ip, mac, gw, gw_mac or role)");
  }
  SWEMU_RETURN_IF_ERROR(link);
  if (host.name.empty()) host.name = host.sw + "-p" + std::to_string(host.port);
  if ((!host.gateway.empty() || !host.gateway_mac.empty()) && host.ip.empty()) {
    return Status::Error("gw and gw_mac need ip=");
  }
  for (const TopologyHost& other : out.hosts) {
    if (other.name == host.name) return Status::Error("duplicate host name " + host.name);
  }
  out.hosts.push_back(host);
  return Status::Ok();
}

// "HOST COMMAND...": the command is the rest of the line as written, for sh -c.
Status AddRun(const std::string& value, TopologyConfig& out) {
  const std::size_t start = value.find_first_not_of(" \t");
  const std::size_t space = value.find_first_of(" \t", start);
  const std::size_t command =
      space == std::string::npos ? space : value.find_first_not_of(" \t", space);
  if (start == std::string::npos || command == std::string::npos) {
    return Status::Error("expected HOST COMMAND...");
  }
  const std::string host = value.substr(start, space - start);
  for (const TopologyHost& h : out.hosts) {
    if (h.name == host) {
      out.runs.push_back({host, value.substr(command)});
      return Status::Ok();
    }
  }
  return Status::Error("no host named " + host + " above this line (host = SW:PORT name=" + host +
                       ")");
}

}  // namespace

Status AddSwitchesAndLinks(Engine& engine, const std::vector<LoadedSwitchConfig>& switches,
                           const std::vector<LinkSpec>& links) {
  std::vector<uint32_t> partition_of(switches.size(), 0);
  if (engine.num_partitions() > 1) {
    std::vector<std::string> names;
    for (const LoadedSwitchConfig& sw : switches) names.push_back(sw.config.name);
    Result<std::vector<uint32_t>> parts =
        AssignPartitions(names, links, {}, static_cast<uint32_t>(engine.num_partitions()));
    if (!parts.ok()) return parts.status();
    partition_of = std::move(*parts);
  }
  for (std::size_t i = 0; i < switches.size(); ++i) {
    SwitchConfig config = switches[i].config;
    ApplyLinkRates(links, config);
    SWEMU_RETURN_IF_ERROR(
        engine.AddSwitch(std::move(config), switches[i].startup_script, partition_of[i]));
  }
  for (const LinkSpec& link : links) SWEMU_RETURN_IF_ERROR(engine.AddLink(link));
  return Status::Ok();
}

Status ParseSwitchPort(const std::string& text, std::string* sw, PortId* port) {
  std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return Status::Error("\"" + text + "\" is not SWITCH:PORT");
  }
  Result<uint64_t> number = ParseUint(text.substr(colon + 1), 0, kPortUnset - 1);
  if (!number.ok()) return Status::Error("\"" + text + "\": port " + number.message());
  *sw = text.substr(0, colon);
  *port = static_cast<PortId>(*number);
  return Status::Ok();
}

namespace {

constexpr int kMaxIncludeDepth = 8;

struct LoadState {
  TopologyConfig out;
  bool seed_seen = false;
};

Status LoadEntries(const std::string& path, int depth, LoadState& state);

Status AddSeed(const std::string& value, LoadState& state) {
  Result<uint64_t> seed = ParseUint(value);
  if (state.seed_seen) return Status::Error("given twice");
  state.seed_seen = true;
  if (!seed.ok()) return seed.status();
  state.out.seed = *seed;
  return Status::Ok();
}

// One line of `path`; an `include` loads the named file here, as if its lines were written here.
Status AddEntry(const IniEntry& entry, const std::string& path, int depth, LoadState& state) {
  const std::vector<std::string> words = CommandTable::Tokenize(entry.value);
  if (entry.key == "topology.switch") return AddSwitch(words, path, state.out);
  if (entry.key == "topology.link") return AddLink(words, state.out);
  if (entry.key == "topology.host") return AddHost(words, state.out);
  if (entry.key == "topology.run") return AddRun(entry.value, state.out);
  if (entry.key == "topology.seed") return AddSeed(entry.value, state);
  if (entry.key == "topology.include") {
    if (words.size() != 1) return Status::Error("expected PATH.topo");
    if (depth >= kMaxIncludeDepth) return Status::Error("includes nested too deep (a cycle?)");
    return LoadEntries(ResolveRelative(path, words[0]), depth + 1, state);
  }
  return Status::Error("unknown key (expected topology.switch, link, host, run, include or seed)");
}

Status LoadEntries(const std::string& path, int depth, LoadState& state) {
  Result<std::vector<IniEntry>> entries = ReadIniFile(path, "topology");
  if (!entries.ok()) return entries.status();
  for (const IniEntry& entry : *entries) {
    Status status = AddEntry(entry, path, depth, state);
    if (!status.ok() && entry.key == "topology.include" &&
        status.message().rfind("expected", 0) != 0 && status.message().rfind("includes", 0) != 0) {
      return status;  // the included file's own line already names it
    }
    if (!status.ok()) {
      return Status::Error(path + ": " + entry.key + " \"" + entry.value +
                           "\": " + status.message());
    }
  }
  return Status::Ok();
}

}  // namespace

Result<TopologyConfig> LoadTopology(const std::string& path) {
  LoadState state;
  state.out.path = path;
  SWEMU_RETURN_IF_ERROR(LoadEntries(path, 0, state));
  if (state.out.switches.empty()) {
    return Status::Error(path + ": no switch (add switch = NAME PATH.ini)");
  }
  return std::move(state.out);
}

}  // namespace swemu
