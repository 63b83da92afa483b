#include "tools/gen/background.h"

#include <algorithm>
#include <vector>

#include "pipeline/control/units.h"
#include "pipeline/wire/byte_order.h"
#include "pipeline/wire/frame_builder.h"

namespace swemu::gen {
namespace {

// Linux's: MSS 1460, SACK permitted, timestamps, window scale 7 (20 option bytes, a 74-byte
// frame); later segments carry the timestamps alone (12 bytes, so MSS 1448 fills 1514 bytes).
// TSecr is 0: nothing of the PS's is echoed.
std::vector<uint8_t> TcpOptionBytes(bool syn, uint32_t tsval) {
  std::vector<uint8_t> options =
      syn ? std::vector<uint8_t>{2, 4, 0x05, 0xb4, 4, 2, 8, 10} : std::vector<uint8_t>{1, 1, 8, 10};
  options.resize(options.size() + 8, 0);
  StoreBe32(options.data() + options.size() - 8, tsval);
  if (syn) options.insert(options.end(), {1, 3, 3, 7});
  return options;
}

}  // namespace

po::options_description BackgroundOptions() {
  po::options_description options("background flows (with --workload atp)", 100);
  // clang-format off
  options.add_options()
      ("background-flows", po::value<std::string>()->default_value("0"),
       "TCP-like flows per worker link, worker -> PS, ports 40000+i -> 5001")
      ("background-rate", po::value<std::string>()->default_value("100M"),
       "each background flow's pacing rate (frame + 24 B on the wire)")
      ("background-bytes", po::value<std::string>()->default_value("1M"),
       "payload bytes per background flow (MSS 1448)")
      ("background-ecn", "background flows send ECT(0) (default: Not-ECT)");
  // clang-format on
  return options;
}

Status FillBackgroundSpec(const po::variables_map& vm, BackgroundSpec& spec) {
  uint64_t value = 0;
  SWEMU_RETURN_IF_ERROR(
      CheckUint(vm, "background-flows", 0, 65535 - kBackgroundFirstPort + 1, &value));
  spec.flows = static_cast<uint32_t>(value);
  SWEMU_RETURN_IF_ERROR(
      Check("background-rate", ParseRate(Text(vm, "background-rate")), &spec.rate_bps));
  if (spec.rate_bps == 0) return Status::Error("--background-rate: must be > 0");
  SWEMU_RETURN_IF_ERROR(
      Check("background-bytes", ParseBytes(Text(vm, "background-bytes")), &spec.bytes));
  if (spec.bytes == 0 || spec.bytes >= (uint64_t{1} << 32)) {
    return Status::Error(
        "--background-bytes: must be 1 byte to 4 GiB - 1 (one TCP sequence space)");
  }
  spec.ecn = vm.count("background-ecn") != 0;
  return Status::Ok();
}

BackgroundFlow::BackgroundFlow(const BackgroundSpec& spec, uint32_t index,
                               const BackgroundEnds& ends, TimeNs start_ns, TimeNs rtt_ns)
    : spec_(spec),
      src_port_(static_cast<uint16_t>(kBackgroundFirstPort + index)),
      ends_(ends),
      rtt_ns_(rtt_ns),
      pacer_(spec.rate_bps),
      due_(start_ns) {}

// Sequence numbers from an initial sequence number of 0: the SYN takes 0, data starts at 1, the
// FIN takes 1 + bytes; ACKs acknowledge the PS's SYN (its ISN 0, so 1). TSval: microseconds.
void BackgroundFlow::Next(TimeNs at, std::vector<uint8_t>* frame) {
  const auto tsval = static_cast<uint32_t>(at / 1000);
  FrameBuilder b;
  b.Eth(ends_.dst_mac, ends_.src_mac).Ipv4(ends_.src_ip, ends_.dst_ip);
  b.Tos(spec_.ecn ? 0b10 : 0).Identification(ip_id_++);
  switch (phase_) {
    case Phase::kSyn: {
      b.Tcp(src_port_, kBackgroundDstPort, kTcpSyn, 0, 0).TcpOptions(TcpOptionBytes(true, tsval));
      *frame = b.Build();
      due_ = at + rtt_ns_;  // the SYN-ACK comes back one RTT later
      phase_ = Phase::kData;
      return;
    }
    case Phase::kData: {
      const uint64_t len = std::min<uint64_t>(kBackgroundMss, spec_.bytes - sent_bytes_);
      b.Tcp(src_port_, kBackgroundDstPort, kTcpAck, static_cast<uint32_t>(1 + sent_bytes_), 1)
          .TcpOptions(TcpOptionBytes(false, tsval))
          .Payload(len);
      sent_bytes_ += len;
      if (sent_bytes_ == spec_.bytes) phase_ = Phase::kFin;
      break;
    }
    case Phase::kFin: {
      b.Tcp(src_port_, kBackgroundDstPort, kTcpFin | kTcpAck,
            static_cast<uint32_t>(1 + spec_.bytes), 1)
          .TcpOptions(TcpOptionBytes(false, tsval));
      phase_ = Phase::kDone;
      break;
    }
    case Phase::kDone:
      return;
  }
  *frame = b.Build();
  due_ = at + pacer_.Gap(frame->size());  // paced from when the frame went, as fq pacing does
}

}  // namespace swemu::gen
