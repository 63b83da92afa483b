// The one place swemu-analyze's protocols are registered. A new swemu program header adds a
// file beside atp_analyzer.cc and one line here.
#include "tools/analyze/protocol_analyzer.h"
#include "pipeline/wire/atp.h"

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

std::span<const ProtocolEntry> Protocols() {
  static const ProtocolEntry kProtocols[] = {
      {"atp", kAtpDefaultUdpPort, AtpFieldNames, AddAtpOptions, MakeAtpAnalyzer},
      // PCN is read on datagrams to and from --pcn-port (BothWaysUdpPort), not on --udp-port.
      {"pcn", 0, PcnFieldNames, AddPcnOptions, MakePcnAnalyzer},
      // DLCP is read on datagrams to --dlcp-port (OwnUdpPort), not on --udp-port.
      {"dlcp", 0, DlcpFieldNames, AddDlcpOptions, MakeDlcpAnalyzer},
      // GOAT is read on datagrams to --goat-port (OwnUdpPort), not on --udp-port.
      {"goat", 0, GoatFieldNames, AddGoatOptions, MakeGoatAnalyzer},
  };
  return kProtocols;
}

}  // namespace swemu
