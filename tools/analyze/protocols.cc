// The registry of swemu-analyze's protocols (each protocol's file registers itself with
// SWEMU_REGISTER_PROTOCOL), and the helpers the protocols' files share.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "pipeline/control/units.h"
#include "tools/analyze/protocol_analyzer.h"

namespace swemu {
namespace {

// Filled before main() by the protocols' static registrars, read-only afterwards.
std::vector<ProtocolEntry>& Registry() {
  static std::vector<ProtocolEntry> registry;
  return registry;
}

}  // namespace

bool RegisterProtocol(const ProtocolEntry& entry) {
  std::vector<ProtocolEntry>& registry = Registry();
  for (const ProtocolEntry& known : registry) {
    if (known.name == entry.name) {
      std::fprintf(stderr, "swemu-analyze: protocol \"%.*s\" is registered twice\n",
                   static_cast<int>(entry.name.size()), entry.name.data());
      std::abort();
    }
  }
  auto before = [](const ProtocolEntry& a, const ProtocolEntry& b) {
    return a.order != b.order ? a.order < b.order : a.name < b.name;
  };
  registry.insert(std::upper_bound(registry.begin(), registry.end(), entry, before), entry);
  return true;
}

std::span<const ProtocolEntry> Protocols() { return Registry(); }

void AddUdpPortOption(boost::program_options::options_description& options, const char* name,
                      uint16_t default_port, const char* help) {
  options.add_options()(name,
                        boost::program_options::value<std::string>()
                            ->default_value(std::to_string(default_port))
                            ->value_name("N"),
                        help);
}

Result<uint16_t> UdpPortOption(const boost::program_options::variables_map& vm,
                               const std::string& name) {
  Result<uint64_t> port = ParseUint(vm[name].as<std::string>(), 1, 65535);
  if (!port.ok()) return Status::Error("--" + name + ": " + port.message());
  return static_cast<uint16_t>(*port);
}

bool HeaderTruncated(const DecodedFrame& frame, std::size_t header_len) {
  return frame.app_len < header_len && !(frame.snapped() && frame.l4_payload_len >= header_len);
}

bool HeaderTally::empty() const {
  if (snapped_ > 0) return false;
  for (uint64_t n : malformed_) {
    if (n > 0) return false;
  }
  return true;
}

void HeaderTally::WriteText(std::ostream& out) const {
  if (snapped_ > 0) out << ", " << snapped_ << " header(s) cut by the capture (not counted)";
  const char* sep = "; malformed ";
  for (std::size_t r = 0; r < reasons_.size(); ++r) {
    if (malformed_[r] > 0) out << std::exchange(sep, " ") << reasons_[r] << " " << malformed_[r];
  }
}

void HeaderTally::WriteJson(JsonWriter& json) const {
  json.Uint("snapped_headers", snapped_);
  json.BeginObject("malformed");
  for (std::size_t r = 0; r < reasons_.size(); ++r) json.Uint(reasons_[r], malformed_[r]);
  json.EndObject();
}

}  // namespace swemu
