// swemu-analyze's per-frame cost: decoding a frame's headers and its ATP header, and the flow
// table's accounting, ns per frame (what bounds how fast a large capture is read, beside
// libpcap's own reading).
#include <benchmark/benchmark.h>

#include <boost/program_options.hpp>

#include "pipeline/wire/atp.h"
#include "pipeline/wire/frame_builder.h"
#include "tools/analyze/flow_table.h"
#include "tools/analyze/frame_decoder.h"
#include "tools/analyze/protocol_analyzer.h"

namespace swemu {
namespace {
namespace po = boost::program_options;

std::unique_ptr<ProtocolAnalyzer> MakeAtp() {
  po::options_description options;
  Protocols()[0].add_options(options);
  po::variables_map vm;
  const char* argv[] = {"bench"};
  po::store(po::parse_command_line(1, argv, options), vm);
  return std::move(*Protocols()[0].make(vm));
}

// 4 workers' gradients for consecutive seqs, as the switch sees them.
std::vector<std::vector<uint8_t>> AtpFrames(std::size_t seqs) {
  std::vector<std::vector<uint8_t>> frames;
  for (uint32_t seq = 0; seq < seqs; ++seq) {
    for (uint8_t w = 0; w < 4; ++w) {
      std::vector<uint8_t> payload(AtpPayloadLen(64));
      AtpFields{0, w, 4, 0, 1, 64, seq, 1u << w}.Encode(payload.data());
      frames.push_back(FrameBuilder()
                           .Eth(MacAddr::FromU64(0x020000000010), MacAddr::FromU64(0x020000000000 + w))
                           .Ipv4(MakeIpv4Addr(10, 0, 0, w), MakeIpv4Addr(10, 0, 0, 16))
                           .Tos(kEcnEct0)
                           .Udp(9000, 9000)
                           .Payload(payload)
                           .Build());
    }
  }
  return frames;
}

void BM_DecodeAtpFrame(benchmark::State& state) {
  auto atp = MakeAtp();
  FrameDecoder decoder;
  decoder.Register(kAtpDefaultUdpPort, atp.get());
  FlowTable flows;
  const auto frames = AtpFrames(4096);
  std::size_t i = 0;
  const bool account = state.range(0) != 0;
  for (auto _ : state) {
    const std::vector<uint8_t>& bytes = frames[i++ % frames.size()];
    DecodedFrame f;
    f.caplen = f.len = static_cast<uint32_t>(bytes.size());
    decoder.Decode(kLinkEthernet, bytes, f);
    if (account) {
      if (f.protocol != nullptr) f.malformed = f.protocol->Consume(f);
      flows.Add(f, i / 64);
    }
    benchmark::DoNotOptimize(f);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
// 0: headers only; 1: with the ATP per-seq and the per-flow accounting.
BENCHMARK(BM_DecodeAtpFrame)->Arg(0)->Arg(1);

}  // namespace
}  // namespace swemu
