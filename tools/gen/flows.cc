#include "tools/gen/flows.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/control/units.h"
#include "pipeline/engine/pcap_io.h"
#include "pipeline/engine/rng.h"
#include "pipeline/wire/frame_builder.h"

namespace swemu::gen {
namespace {

struct FlowsSpec {
  std::string out;
  uint64_t count = 100;
  bool tcp = false;
  MacAddr src_mac;
  Ipv4Addr src_ip = 0;
  std::vector<MacAddr> dst_macs;
  std::vector<Ipv4Addr> dst_ips;
  uint16_t src_port = 10000;
  uint16_t dst_port = 5000;
  uint32_t flows = 1;
  uint32_t min_size = 128;
  uint32_t max_size = 128;
  uint64_t rate_bps = 1'000'000'000;
  TimeNs start_ns = 1'000'000'000;
  bool poisson = false;
  uint64_t seed = 1;
  uint8_t tos = 0;
  uint8_t ttl = 64;
};

Status ParseSize(const std::string& text, FlowsSpec& spec) {
  std::size_t dash = text.find('-');
  const uint64_t kMax = 9216;
  Result<uint64_t> lo = ParseUint(text.substr(0, dash), 1, kMax);
  Result<uint64_t> hi = dash == std::string::npos ? lo : ParseUint(text.substr(dash + 1), 1, kMax);
  if (!lo.ok() || !hi.ok() || *lo > *hi) {
    return Status::Error("--size " + text + ": expected N or MIN-MAX with 1 <= MIN <= MAX <= 9216");
  }
  spec.min_size = static_cast<uint32_t>(*lo);
  spec.max_size = static_cast<uint32_t>(*hi);
  const uint32_t headers = 14 + 20 + (spec.tcp ? 20 : 8);
  if (spec.min_size < headers) {
    return Status::Error("--size " + text + ": smaller than the " + std::to_string(headers) +
                         "-byte headers");
  }
  return Status::Ok();
}

Status FillSpec(const po::variables_map& vm, FlowsSpec& spec) {
  spec.out = Text(vm, "out");
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "count", 1, 100'000'000, &spec.count));
  const std::string proto = Text(vm, "proto");
  if (proto != "udp" && proto != "tcp") return Status::Error("--proto " + proto + ": not udp/tcp");
  spec.tcp = proto == "tcp";
  SWEMU_RETURN_IF_ERROR(Check("src-mac", ParseMac(Text(vm, "src-mac")), &spec.src_mac));
  SWEMU_RETURN_IF_ERROR(Check("src-ip", ParseIpv4(Text(vm, "src-ip")), &spec.src_ip));
  std::vector<std::string> macs = {"00:00:00:00:00:02"}, ips = {"10.0.0.2"};
  if (vm.count("dst-mac")) macs = vm["dst-mac"].as<std::vector<std::string>>();
  if (vm.count("dst-ip")) ips = vm["dst-ip"].as<std::vector<std::string>>();
  for (const std::string& text : macs) {
    SWEMU_RETURN_IF_ERROR(Check("dst-mac", ParseMac(text), &spec.dst_macs.emplace_back()));
  }
  for (const std::string& text : ips) {
    SWEMU_RETURN_IF_ERROR(Check("dst-ip", ParseIpv4(text), &spec.dst_ips.emplace_back()));
  }
  if (spec.dst_macs.size() != 1 && spec.dst_macs.size() != spec.dst_ips.size()) {
    return Status::Error("--dst-mac: give one, or one per --dst-ip (" +
                         std::to_string(spec.dst_ips.size()) + ")");
  }
  uint64_t value = 0;
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "src-port", 0, 65535, &value));
  spec.src_port = static_cast<uint16_t>(value);
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "dst-port", 0, 65535, &value));
  spec.dst_port = static_cast<uint16_t>(value);
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "flows", 1, 65536, &value));
  spec.flows = static_cast<uint32_t>(value);
  if (spec.src_port + spec.flows - 1 > 65535) {
    return Status::Error("--flows: src-port + flows - 1 exceeds 65535");
  }
  SWEMU_RETURN_IF_ERROR(ParseSize(Text(vm, "size"), spec));
  SWEMU_RETURN_IF_ERROR(Check("rate", ParseRate(Text(vm, "rate")), &spec.rate_bps));
  if (spec.rate_bps == 0) return Status::Error("--rate: must be > 0");
  SWEMU_RETURN_IF_ERROR(Check("start", ParseDurationOption(Text(vm, "start")), &spec.start_ns));
  spec.poisson = vm.count("poisson") != 0;
  SWEMU_RETURN_IF_ERROR(Check("seed", ParseUint(Text(vm, "seed")), &spec.seed));
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "tos", 0, 255, &value));
  spec.tos = static_cast<uint8_t>(value);
  SWEMU_RETURN_IF_ERROR(CheckUint(vm, "ttl", 0, 255, &value));
  spec.ttl = static_cast<uint8_t>(value);
  return Status::Ok();
}

// Packet i goes to destination i % D, flow (i / D) % flows: every flow sees a steady share.
// tcp_seq: per flow (destination * flows + flow), the next TCP sequence number; a segment's
// payload advances it, so sizes drawn at random still give each flow contiguous bytes.
std::vector<uint8_t> MakeFrame(const FlowsSpec& spec, uint64_t i, uint32_t size,
                               std::vector<uint32_t>& tcp_seq) {
  const std::size_t destinations = spec.dst_ips.size();
  const std::size_t dst = i % destinations;
  const auto flow = static_cast<uint16_t>((i / destinations) % spec.flows);
  const MacAddr& dst_mac = spec.dst_macs.size() == 1 ? spec.dst_macs[0] : spec.dst_macs[dst];
  FrameBuilder frame;
  frame.Eth(dst_mac, spec.src_mac).Ipv4(spec.src_ip, spec.dst_ips[dst]).Tos(spec.tos).Ttl(spec.ttl);
  frame.Identification(static_cast<uint16_t>(i));
  const uint16_t src_port = static_cast<uint16_t>(spec.src_port + flow);
  const uint32_t headers = 14 + 20 + (spec.tcp ? 20 : 8);
  if (spec.tcp) {
    uint32_t& seq = tcp_seq[dst * spec.flows + flow];
    frame.Tcp(src_port, spec.dst_port, kTcpAck, seq);
    seq += size - headers;
  } else {
    frame.Udp(src_port, spec.dst_port);
  }
  frame.Payload(size - headers);
  return frame.Build();
}

Status GenerateInto(const FlowsSpec& spec, const std::string& path) {
  Result<std::unique_ptr<PcapWriter>> writer = PcapWriter::Open(path);
  if (!writer.ok()) return Status::Error(spec.out + ": cannot write (" + writer.message() + ")");
  SplitMix64 rng(spec.seed);
  TimeNs now = spec.start_ns;
  Pacer pacer(spec.rate_bps);
  std::vector<uint32_t> tcp_seq(spec.dst_ips.size() * spec.flows, 0);
  for (uint64_t i = 0; i < spec.count; ++i) {
    uint32_t size = spec.min_size;
    if (spec.max_size > spec.min_size) {
      size += static_cast<uint32_t>(rng.Next() % (spec.max_size - spec.min_size + 1));
    }
    std::vector<uint8_t> frame = MakeFrame(spec, i, size, tcp_seq);
    SWEMU_RETURN_IF_ERROR(CheckPcapTime(now, "packet " + std::to_string(i + 1),
                                        "lower --count or --start, or raise --rate"));
    (*writer)->Write(now, frame.data(), static_cast<uint32_t>(frame.size()));
    if (spec.poisson) {
      const double mean_ns =
          static_cast<double>(WireBits(size)) * 1e9 / static_cast<double>(spec.rate_bps);
      now += static_cast<TimeNs>(std::llround(-std::log(1.0 - rng.NextUnit()) * mean_ns));
    } else {
      now += pacer.Gap(size);
    }
  }
  return (*writer)->Close();
}

}  // namespace

po::options_description FlowsOptions() {
  po::options_description options("--workload flows (the default)", 100);
  // clang-format off
  options.add_options()
      ("count,n", po::value<std::string>()->default_value("100"), "packets")
      ("proto", po::value<std::string>()->default_value("udp"), "udp or tcp")
      ("src-mac", po::value<std::string>()->default_value("00:00:00:00:00:01"), "source MAC")
      ("dst-mac", po::value<std::vector<std::string>>()->value_name("MAC"),
       "destination MAC; repeat once per --dst-ip, or give one for all (default 00:00:00:00:00:02)")
      ("src-ip", po::value<std::string>()->default_value("10.0.0.1"), "source IPv4")
      ("dst-ip", po::value<std::vector<std::string>>()->value_name("IP"),
       "destination IPv4, repeatable: packets go round robin (default 10.0.0.2)")
      ("src-port", po::value<std::string>()->default_value("10000"), "first source port")
      ("dst-port", po::value<std::string>()->default_value("5000"), "destination port")
      ("flows", po::value<std::string>()->default_value("1"),
       "flows per destination (source ports src-port, src-port+1, ...)")
      ("size", po::value<std::string>()->default_value("128"),
       "frame bytes without FCS: N, or MIN-MAX drawn uniformly from the seed")
      ("poisson", "exponential gaps (same mean) instead of constant ones")
      ("tos", po::value<std::string>()->default_value("0"), "IPv4 TOS byte (DSCP << 2 | ECN)")
      ("ttl", po::value<std::string>()->default_value("64"), "IPv4 TTL");
  // clang-format on
  return options;
}

// Writes into a file beside the output and renames it into place once complete, so a run that
// fails (a time past what pcap holds, a full disk) leaves an earlier output as it was.
Status RunFlows(const po::variables_map& vm) {
  FlowsSpec spec;
  SWEMU_RETURN_IF_ERROR(FillSpec(vm, spec));
  OutputFiles files;
  SWEMU_RETURN_IF_ERROR(GenerateInto(spec, files.Aside(spec.out)));
  return files.Commit();
}

}  // namespace swemu::gen
