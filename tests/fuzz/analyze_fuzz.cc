// libFuzzer target for swemu-analyze's decoders: the frame decoder (Ethernet, VLAN, IPv4, UDP,
// TCP; raw IP; Linux SLL) and every registered protocol (ATP, PCN, DLCP). Input byte 0 picks the
// link type and whether the frame counts as cut by a snap length; the rest is the captured frame.
// Invariants trap (abort) when broken; ASan watches every read.
#include <boost/program_options.hpp>
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <sstream>
#include <string>

#include "tools/analyze/frame_decoder.h"
#include "tools/analyze/protocol_analyzer.h"

namespace swemu {
namespace {
namespace po = boost::program_options;

void Check(bool condition) {
  if (!condition) __builtin_trap();
}

struct Decoders {
  std::vector<std::unique_ptr<ProtocolAnalyzer>> protocols;
  FrameDecoder decoder;

  Decoders() {
    po::options_description options;
    for (const ProtocolEntry& entry : Protocols()) entry.add_options(options);
    po::variables_map vm;
    const char* argv[] = {"fuzz", "--atp-aggregators=4"};  // small: collisions happen
    po::store(po::parse_command_line(2, argv, options), vm);
    for (const ProtocolEntry& entry : Protocols()) {
      protocols.push_back(std::move(*entry.make(vm)));
      if (entry.default_udp_port != 0) {
        decoder.Register(entry.default_udp_port, protocols.back().get());
      }
      if (const uint16_t port = protocols.back()->BothWaysUdpPort(); port != 0) {
        decoder.RegisterBothWays(port, protocols.back().get());
      }
      if (const uint16_t port = protocols.back()->OwnUdpPort(); port != 0) {
        decoder.Register(port, protocols.back().get());
      }
    }
  }
};

constexpr int kLinks[] = {kLinkEthernet, kLinkRaw, kLinkLinuxSll, kLinkRawAlt};

}  // namespace
}  // namespace swemu

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace swemu;
  // Summaries accumulate across inputs, as over a long capture; a fresh set every 4096 inputs
  // keeps memory bounded.
  static auto decoders = std::make_unique<Decoders>();
  static uint64_t inputs = 0;
  if (++inputs % 4096 == 0) decoders = std::make_unique<Decoders>();
  if (size < 1) return 0;
  const int link = kLinks[data[0] & 3];
  const bool snapped = (data[0] & 4) != 0;
  const std::span<const uint8_t> bytes(data + 1, size - 1);
  DecodedFrame frame;
  frame.caplen = static_cast<uint32_t>(bytes.size());
  frame.len = frame.caplen + (snapped ? 1000 : 0);
  decoders->decoder.Decode(link, bytes, frame);
  if (frame.app != nullptr) {
    Check(frame.app >= bytes.data() && frame.app + frame.app_len <= bytes.data() + bytes.size());
  }
  if (frame.protocol != nullptr && frame.malformed.empty()) {
    frame.malformed = frame.protocol->Consume(frame);
    std::ostringstream row;
    frame.protocol->WriteFields(row);
    // One cell per field of its protocol: as many commas as fields - 1.
    std::size_t index = 0;
    while (decoders->protocols[index].get() != frame.protocol) ++index;
    const std::string cells = row.str();
    Check(static_cast<std::size_t>(std::count(cells.begin(), cells.end(), ',')) + 1 ==
          Protocols()[index].fields().size());
  }
  if ((data[0] & 0xF8) == 0xF8) {  // now and then, the summaries over everything so far
    std::ostringstream text;
    JsonWriter json;
    json.BeginObject();
    for (const auto& protocol : decoders->protocols) {
      protocol->WriteText(text);
      protocol->WriteJson(json);
    }
    json.EndObject();
  }
  return 0;
}
