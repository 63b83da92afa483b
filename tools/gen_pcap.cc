// swemu-gen: writes a pcap of UDP or TCP flows (chosen MACs, IPs, ports, sizes, count, rate and
// seed) with nanosecond timestamps, for replay through swemu. Frames come from the same
// FrameBuilder the tests use, so every header is the one wire definition.
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "pipeline/control/units.h"
#include "pipeline/engine/pcap_io.h"
#include "pipeline/engine/rng.h"
#include "pipeline/wire/frame_builder.h"
#include "tools/tool_main.h"

namespace swemu {
namespace {
namespace po = boost::program_options;

constexpr uint32_t kWireOverheadBytes = 24;  // preamble + SFD + IFG + FCS, as the TM counts

struct GenSpec {
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

po::options_description Options() {
  po::options_description options("swemu-gen options", 100);
  // clang-format off
  options.add_options()
      ("help,h", "print this help and exit")
      ("out,o", po::value<std::string>()->value_name("FILE"), "pcap to write (required)")
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
      ("rate", po::value<std::string>()->default_value("1G"),
       "offered load in bits/s on the wire (frame + 24 B preamble, IFG, FCS)")
      ("start", po::value<std::string>()->default_value("1s"), "timestamp of the first packet")
      ("poisson", "exponential gaps (same mean) instead of constant ones")
      ("seed", po::value<std::string>()->default_value("1"), "seed for sizes and gaps")
      ("tos", po::value<std::string>()->default_value("0"), "IPv4 TOS byte (DSCP << 2 | ECN)")
      ("ttl", po::value<std::string>()->default_value("64"), "IPv4 TTL");
  // clang-format on
  return options;
}

template <typename T>
Status Check(const std::string& option, Result<T> result, T* out) {
  if (!result.ok()) return Status::Error("--" + option + ": " + result.message());
  *out = *result;
  return Status::Ok();
}

Status ParseSize(const std::string& text, GenSpec& spec) {
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

Status FillSpec(const po::variables_map& vm, GenSpec& spec) {
  auto str = [&](const char* name) { return vm[name].as<std::string>(); };
  if (!vm.count("out")) return Status::Error("--out: required");
  spec.out = str("out");
  SWEMU_RETURN_IF_ERROR(Check("count", ParseUint(str("count"), 1, 100'000'000), &spec.count));
  const std::string proto = str("proto");
  if (proto != "udp" && proto != "tcp") return Status::Error("--proto " + proto + ": not udp/tcp");
  spec.tcp = proto == "tcp";
  SWEMU_RETURN_IF_ERROR(Check("src-mac", ParseMac(str("src-mac")), &spec.src_mac));
  SWEMU_RETURN_IF_ERROR(Check("src-ip", ParseIpv4(str("src-ip")), &spec.src_ip));
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
  SWEMU_RETURN_IF_ERROR(Check("src-port", ParseUint(str("src-port"), 0, 65535), &value));
  spec.src_port = static_cast<uint16_t>(value);
  SWEMU_RETURN_IF_ERROR(Check("dst-port", ParseUint(str("dst-port"), 0, 65535), &value));
  spec.dst_port = static_cast<uint16_t>(value);
  SWEMU_RETURN_IF_ERROR(Check("flows", ParseUint(str("flows"), 1, 65536), &value));
  spec.flows = static_cast<uint32_t>(value);
  if (spec.src_port + spec.flows - 1 > 65535) {
    return Status::Error("--flows: src-port + flows - 1 exceeds 65535");
  }
  SWEMU_RETURN_IF_ERROR(ParseSize(str("size"), spec));
  SWEMU_RETURN_IF_ERROR(Check("rate", ParseRate(str("rate")), &spec.rate_bps));
  if (spec.rate_bps == 0) return Status::Error("--rate: must be > 0");
  SWEMU_RETURN_IF_ERROR(Check("start", ParseDuration(str("start")), &spec.start_ns));
  spec.poisson = vm.count("poisson") != 0;
  SWEMU_RETURN_IF_ERROR(Check("seed", ParseUint(str("seed")), &spec.seed));
  SWEMU_RETURN_IF_ERROR(Check("tos", ParseUint(str("tos"), 0, 255), &value));
  spec.tos = static_cast<uint8_t>(value);
  SWEMU_RETURN_IF_ERROR(Check("ttl", ParseUint(str("ttl"), 0, 255), &value));
  spec.ttl = static_cast<uint8_t>(value);
  return Status::Ok();
}

// Packet i goes to destination i % D, flow (i / D) % flows: every flow sees a steady share.
std::vector<uint8_t> MakeFrame(const GenSpec& spec, uint64_t i, uint32_t size) {
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
    const uint64_t nth = i / (destinations * spec.flows);  // packets this flow sent before
    frame.Tcp(src_port, spec.dst_port, kTcpAck, static_cast<uint32_t>(nth * (size - headers)));
  } else {
    frame.Udp(src_port, spec.dst_port);
  }
  frame.Payload(size - headers);
  return frame.Build();
}

Status GenerateInto(const GenSpec& spec, const std::string& path);

// Writes into a file beside the output and renames it into place once complete, so a run that
// fails (a time past what pcap holds, a full disk) leaves an earlier output as it was.
Status Generate(const GenSpec& spec) {
  const std::string temp = spec.out + ".tmp-" + std::to_string(getpid());
  Status written = GenerateInto(spec, temp);
  if (written.ok() && std::rename(temp.c_str(), spec.out.c_str()) != 0) {
    written = Status::Error(spec.out + ": " + std::strerror(errno));
  }
  if (!written.ok()) std::remove(temp.c_str());
  return written;
}

Status GenerateInto(const GenSpec& spec, const std::string& path) {
  Result<std::unique_ptr<PcapWriter>> writer = PcapWriter::Open(path);
  if (!writer.ok()) return Status::Error(spec.out + ": cannot write (" + writer.message() + ")");
  SplitMix64 rng(spec.seed);
  TimeNs now = spec.start_ns;
  uint64_t remainder = 0;  // of the constant gap, in 1/rate ns, so long runs do not drift
  for (uint64_t i = 0; i < spec.count; ++i) {
    uint32_t size = spec.min_size;
    if (spec.max_size > spec.min_size) {
      size += static_cast<uint32_t>(rng.Next() % (spec.max_size - spec.min_size + 1));
    }
    std::vector<uint8_t> frame = MakeFrame(spec, i, size);
    if (now > PcapWriter::kPcapLastNs) {
      return Status::Error("packet " + std::to_string(i + 1) + " would be at " +
                           std::to_string(now / 1'000'000'000) +
                           " s, past the last time a pcap file can hold (4294967295 s): lower "
                           "--count or --start, or raise --rate");
    }
    (*writer)->Write(now, frame.data(), static_cast<uint32_t>(frame.size()));
    const uint64_t bits = (uint64_t{size} + kWireOverheadBytes) * 8;
    if (spec.poisson) {
      const double mean_ns = static_cast<double>(bits) * 1e9 / static_cast<double>(spec.rate_bps);
      now += static_cast<TimeNs>(std::llround(-std::log(1.0 - rng.NextUnit()) * mean_ns));
    } else {
      const uint64_t total = remainder + bits * 1'000'000'000ull;
      now += total / spec.rate_bps;
      remainder = total % spec.rate_bps;
    }
  }
  return (*writer)->Close();
}

int Main(int argc, char** argv) {
  po::variables_map vm;
  try {
    // No positional arguments: a stray word is an error, not ignored.
    po::store(po::command_line_parser(argc, argv)
                  .options(Options())
                  .positional(po::positional_options_description())
                  .run(),
              vm);
  } catch (const po::error& e) {
    std::cerr << "swemu-gen: " << e.what() << "\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << "usage: swemu-gen --out FILE [options]\n\n"
              << Options()
              << "\nexamples:\n"
                 "  swemu-gen -o h0.pcap -n 1000 --dst-ip 10.0.1.2 --dst-mac 00:00:00:00:01:02 "
                 "--rate 1G\n"
                 "  swemu-gen -o mix.pcap -n 10000 --size 64-1500 --flows 8 --poisson --seed 3\n";
    return 0;
  }
  GenSpec spec;
  Status status = FillSpec(vm, spec);
  if (status.ok()) status = Generate(spec);
  if (!status.ok()) {
    std::cerr << "swemu-gen: " << status.message() << "\n";
    return 2;
  }
  return 0;
}

}  // namespace
}  // namespace swemu

int main(int argc, char** argv) {
  return swemu::RunToolMain("swemu-gen", [&] { return swemu::Main(argc, argv); });
}
