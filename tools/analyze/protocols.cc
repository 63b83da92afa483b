// The one place swemu-analyze's protocols are registered. A new swemu program header adds a
// file beside atp_analyzer.cc and one line here. Also the helpers the protocols' files share.
#include <utility>

#include "pipeline/control/units.h"
#include "pipeline/wire/atp.h"
#include "tools/analyze/protocol_analyzer.h"

namespace swemu {

std::vector<std::string> AtpFieldNames();
void AddAtpOptions(boost::program_options::options_description& options);
Result<std::unique_ptr<ProtocolAnalyzer>> MakeAtpAnalyzer(
    const boost::program_options::variables_map& vm);
std::vector<std::string> PcnFieldNames();
void AddPcnOptions(boost::program_options::options_description& options);
Result<std::unique_ptr<ProtocolAnalyzer>> MakePcnAnalyzer(
    const boost::program_options::variables_map& vm);
std::vector<std::string> DlcpFieldNames();
void AddDlcpOptions(boost::program_options::options_description& options);
Result<std::unique_ptr<ProtocolAnalyzer>> MakeDlcpAnalyzer(
    const boost::program_options::variables_map& vm);
std::vector<std::string> GoatFieldNames();
void AddGoatOptions(boost::program_options::options_description& options);
Result<std::unique_ptr<ProtocolAnalyzer>> MakeGoatAnalyzer(
    const boost::program_options::variables_map& vm);
std::vector<std::string> PlinkFieldNames();
void AddPlinkOptions(boost::program_options::options_description& options);
Result<std::unique_ptr<ProtocolAnalyzer>> MakePlinkAnalyzer(
    const boost::program_options::variables_map& vm);

std::span<const ProtocolEntry> Protocols() {
  static const ProtocolEntry kProtocols[] = {
      {"atp", kAtpDefaultUdpPort, AtpFieldNames, AddAtpOptions, MakeAtpAnalyzer},
      // PCN is read on datagrams to and from --pcn-port (BothWaysUdpPort), not on --udp-port.
      {"pcn", 0, PcnFieldNames, AddPcnOptions, MakePcnAnalyzer},
      // DLCP is read on datagrams to --dlcp-port (OwnUdpPort), not on --udp-port.
      {"dlcp", 0, DlcpFieldNames, AddDlcpOptions, MakeDlcpAnalyzer},
      // GOAT is read on datagrams to --goat-port (OwnUdpPort), not on --udp-port.
      {"goat", 0, GoatFieldNames, AddGoatOptions, MakeGoatAnalyzer},
      // PLink is read on datagrams to --plink-port (OwnUdpPort), not on --udp-port.
      {"plink", 0, PlinkFieldNames, AddPlinkOptions, MakePlinkAnalyzer},
  };
  return kProtocols;
}

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
