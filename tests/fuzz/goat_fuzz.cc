// libFuzzer over the `goat` switch program (docs/wire.md, "GOAT"): one switch, GOAT node 1, with
// workers on ports 0-3, the PS on port 4 and a neighbour switch (node 2) behind port 5; a slot
// array of 16 and 8 elements per fragment. Its goat_node entries (kEntries) give job 1 two GOAT
// sub-models (fan-in 2 and 3), an ATP-style shared one (node 0xFFFF), one whose slots run past
// the array, one with fan-in 0 and an explicit not_here; job 2 has a GOAT sub-model whose slots
// overlap job 1's and a shared one whose slots wrap around the array onto them. goat_route sends
// node 2 to port 5 and has an explicit miss for node 3.
//
// The input is one config byte (bits 0-1: queue depth 1024, 64, 8 or 2 packets; bit 2: 1 Gb/s
// ports instead of 10; bit 3: l2l3's ECN marking above 300 B queued) and a sequence of ops (the
// layout is below, at Op): gradients and results of the plan's streams built from a few bytes,
// GOAT frames with every header field from the input, raw and mutated frames, virtual time and a
// full drain. Every input starts from the switch's startup state (Rig: built once per config
// byte, reset before each input), so a crash reproduces from its input alone; time is virtual
// and moves on at every op.
//
// The fuzzer tracks every frame it feeds, parsed by the switch's own parser (Switch::ShardKeyOf
// on a scratch copy): per <job, sub-model, fragment, round> the union of the gradients' bitmaps,
// and whether all of them carried the values a deterministic function of <worker, job,
// sub-model, fragment, round, element> gives (small, so no sum leaves int32) with no overflow
// flag ("clean"). Invariants, checked after each op and at the end (a break traps):
//   - switch: every buffer in use is queued in the TM (none after the final drain), every frame
//     is accounted for (rx + multicast copies == tx + consumed + drops + queued), the IPv4 header
//     checksum of every output frame is right, and so is its UDP checksum (IPv4 fragments'
//     aside: the deparser leaves them) while every frame fed had a right (or no) UDP checksum;
//   - every output GOAT gradient (version 1, type 0, as the switch's parser finds it): 8
//     elements, job != 0, bitmap != 0 and count == popcount(bitmap); its bitmap is a subset of
//     the union of the bitmaps fed for its <job, sub-model, fragment, round>; with
//     kGoatFlagAggregate its node id is 0 or 0xFFFF unless it is a fed header passed on
//     unchanged; of a clean key, it carries no kGoatFlagOverflow and its values are exactly the
//     sum of its bitmap's workers' values;
//   - slots (control plane, RegisterArray::Read): goat_id's key is 0 exactly when its round lane
//     is 0; a held slot's key names a goat_node entry that aggregates or shares it at this very
//     index; its bitmap is not 0 and 1 <= count (bits 0-6) <= popcount(bitmap); below the
//     entry's fan-in unless done (bit 7);
//   - counters only grow; completed <= claimed + aggregated; the switch's consumed packets are
//     exactly claimed + aggregated - completed; duplicates == goat_duplicate drops; released and
//     evicted <= claimed; slots in use (== SlotsInUse()) <= claimed - released.
//
// Seeds (tests/fuzz/seeds/goat_*.bin): aggregation to completion, a retransmission flush, a
// share collision and release, a route by node id, malformed frames.
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "pipeline/core/clock.h"
#include "pipeline/core/packet_pool.h"
#include "pipeline/programs/goat.h"
#include "pipeline/switch/switch.h"
#include "pipeline/wire/checksum.h"
#include "pipeline/wire/frame_builder.h"
#include "pipeline/wire/goat.h"
#include "pipeline/wire/ipv4.h"

namespace {

using namespace swemu;  // NOLINT(build/namespaces)

void Check(bool condition) {
  if (!condition) __builtin_trap();
}

constexpr uint16_t kElements = 8;
constexpr uint32_t kSlots = 16;
constexpr uint16_t kNumPorts = 6;
constexpr PortId kPsPort = 4;
constexpr PortId kNeighbourPort = 5;
constexpr uint64_t kFrameBudget = 2048;  // frames into the switch per input

MacAddr WorkerMac(uint32_t w) { return MacAddr::FromU64(0x020000000000ull + w); }
MacAddr PsMac() { return MacAddr::FromU64(0x020000000010ull); }
MacAddr NeighbourMac() { return MacAddr::FromU64(0x020000000020ull); }
MacAddr UnknownMac() { return MacAddr::FromU64(0x020000000099ull); }
Ipv4Addr WorkerIp(uint32_t w) { return MakeIpv4Addr(10, 0, 0, static_cast<uint8_t>(w + 1)); }
Ipv4Addr PsIp() { return MakeIpv4Addr(10, 0, 0, 16); }

// The plan as this switch holds it: one goat_node entry per <job, sub-model> (so a slot key
// names its entry), node id 1 for GOAT, 0xFFFF for sharing.
struct Entry {
  uint16_t job;
  uint16_t node;
  uint16_t submodel;
  const char* action;
  uint32_t base;
  uint32_t size;
  uint32_t fan_in;
};
constexpr Entry kEntries[] = {
    {1, 1, 0, "aggregate", 0, 4, 2},
    {1, 1, 1, "aggregate", 4, 4, 3},
    {1, kGoatNodeAny, 2, "share", 8, 8, 2},
    {1, 1, 3, "aggregate", 14, 4, 2},  // slots 14..17 of 16: never aggregates
    {1, 1, 4, "aggregate", 0, 2, 0},   // fan-in 0: never aggregates
    {1, 1, 5, "not_here", 0, 0, 0},
    {2, 1, 0, "aggregate", 2, 4, 2},          // slots 2..5: over job 1's sub-models 0, 1
    {2, kGoatNodeAny, 1, "share", 12, 8, 3},  // slots 12..15, 0..3 (wraps)
};
constexpr bool Aggregates(const Entry& e) { return std::string_view(e.action) != "not_here"; }

// The streams ops kWorker, kResult and kMutated pick from (3 bits): <job, node id, sub-model>.
struct Stream {
  uint16_t job;
  uint16_t node;
  uint16_t submodel;
};
constexpr Stream kStreams[8] = {
    {1, 1, 0}, {1, 1, 1}, {1, kGoatNodeAny, 2}, {1, 1, 3},
    {1, 1, 4}, {2, 1, 0}, {2, kGoatNodeAny, 1}, {1, 2, 0},  // the last: routed to node 2
};

// The slot a held key must be in, by its entry (docs/wire.md "What the switch does", 2. and 3.);
// -1 if its entry never aggregates that fragment.
int64_t SlotOf(const Entry& e, uint32_t fragment) {
  if (e.size == 0 || e.fan_in == 0 || e.fan_in > kGoatMaxWorkers) return -1;
  if (std::string_view(e.action) == "share") {
    if (e.size > kSlots || e.base >= kSlots) return -1;
    return (e.base + fragment % e.size) % kSlots;
  }
  if (uint64_t{e.base} + e.size > kSlots || fragment >= e.size) return -1;
  return e.base + fragment;
}

uint64_t Mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Worker w's value of element e in a fragment: in [-2^24, 2^24), so 64 of them fit int32.
int32_t WorkerValue(uint32_t w, uint16_t job, uint16_t submodel, uint32_t fragment, uint32_t round,
                    uint32_t e) {
  const uint64_t x = Mix(GoatSlotKey(job, submodel, fragment) ^
                         Mix((uint64_t{round} << 16) ^ (uint64_t{w} << 8) ^ e));
  return static_cast<int32_t>(x & 0x1FFFFFF) - 0x1000000;
}

int32_t CleanValue(uint64_t bitmap, uint16_t job, uint16_t submodel, uint32_t fragment,
                   uint32_t round, uint32_t e) {
  int64_t sum = 0;
  for (uint32_t w = 0; w < 64; ++w) {
    if ((bitmap >> w) & 1) sum += WorkerValue(w, job, submodel, fragment, round, e);
  }
  return static_cast<int32_t>(sum);
}

// The fuzz input, read front to back; zeros once it runs out.
class Input {
 public:
  Input(const uint8_t* data, std::size_t size) : p_(data), n_(size) {}
  bool empty() const { return n_ == 0; }
  uint8_t U8() {
    if (n_ == 0) return 0;
    --n_;
    return *p_++;
  }
  // Big-endian; one byte after the other (the operands of | have no order).
  uint64_t Be(int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = (v << 8) | U8();
    return v;
  }
  uint16_t U16() { return static_cast<uint16_t>(Be(2)); }
  uint32_t U32() { return static_cast<uint32_t>(Be(4)); }
  uint64_t U64() { return Be(8); }
  std::vector<uint8_t> Take(std::size_t k) {
    k = std::min(k, n_);
    std::vector<uint8_t> out(p_, p_ + k);
    p_ += k;
    n_ -= k;
    return out;
  }

 private:
  const uint8_t* p_;
  std::size_t n_;
};

// <job, sub-model, fragment, round>
using Key = std::tuple<uint16_t, uint16_t, uint32_t, uint32_t>;
struct Fed {
  uint64_t bits = 0;  // union of the fed gradients' bitmaps
  bool clean = true;  // every one carried its bitmap's clean values, no overflow flag
};

// Buffers for the switch, and a second pool for the fuzzer's own parses, shared by every input
// (HeapPacketPool's buffers are large to allocate); each input ends with every buffer back.
HeapPacketPool& SwitchPool() {
  static HeapPacketPool pool{256, 2048};
  return pool;
}
HeapPacketPool& ScratchPool() {
  static HeapPacketPool pool{2, 2048};
  return pool;
}

// The switch of one config byte (queue depth, port rate) with its startup entries. Building one
// costs far more than most inputs (and libFuzzer's bookkeeping of the features its construction
// covers, on every run, cost more still: about 100 inputs a second), so there is one per config,
// built on first use and put back to its startup state at the start of each input: every
// register cleared, the switch's and the program's counters zeroed, no packet queued (each input
// ends drained), the clock on a second (every port idle). An input runs the same whatever ran
// before it.
struct Rig {
  VirtualClock clock{1'000'000};
  std::unique_ptr<Switch> sw;
  GoatProgram* goat = nullptr;
  RegisterArray* reg_id = nullptr;
  RegisterArray* reg_bitmap = nullptr;
  RegisterArray* reg_count = nullptr;

  explicit Rig(uint8_t config) {
    SwitchConfig c;
    c.num_ports = kNumPorts;
    c.program = "goat";
    c.program_options.Set("elements", std::to_string(kElements));
    c.program_options.Set("slots", std::to_string(kSlots));
    c.program_options.Set("entries", "64");  // small tables: quicker to build
    c.program_options.Set("dmac_size", "64");
    c.program_options.Set("lpm_size", "16");
    c.program_options.Set("nexthop_size", "16");
    c.program_options.Set("ecmp_groups", "16");
    c.tm.port_rate_bps = (config & 4) ? 1'000'000'000 : 10'000'000'000;
    Result<std::unique_ptr<Switch>> created = Switch::Create(c, SwitchPool(), clock);
    Check(created.ok());
    sw = std::move(*created);
    goat = static_cast<GoatProgram*>(&sw->program());
    std::vector<std::string> setup = {
        "table_add dmac forward 02:00:00:00:00:10 => 4",
        "table_add dmac forward 02:00:00:00:00:20 => 5",
        "table_add dmac multicast ff:ff:ff:ff:ff:ff => 1",
        "mc_mgrp_create 1",
        "mc_node_create 0 0 1 2 3 4",
        "mc_node_associate 1 0",
        "table_add goat_route forward 2 => 5",
        "table_add goat_route miss 3 =>",
    };
    for (uint32_t w = 0; w < 4; ++w) {
      setup.push_back("table_add dmac forward 02:00:00:00:00:0" + std::to_string(w) + " => " +
                      std::to_string(w));
    }
    for (const Entry& e : kEntries) {
      std::string line = std::string("table_add goat_node ") + e.action + " " +
                         std::to_string(e.job) + " " + std::to_string(e.node) + " " +
                         std::to_string(e.submodel) + " =>";
      if (Aggregates(e)) {
        line += " " + std::to_string(e.base) + " " + std::to_string(e.size) + " " +
                std::to_string(e.fan_in);
      }
      setup.push_back(line);
    }
    static constexpr uint32_t kDepths[] = {1024, 64, 8, 2};
    setup.push_back("set_queue_depth " + std::to_string(kDepths[config & 3]));
    if (config & 8) setup.push_back("set_ecn_threshold all all 300");  // l2l3's CE marking
    for (const std::string& line : setup) Check(sw->commands().Execute(line).ok());
    PipelineResources& res = sw->resources();
    reg_id = res.FindRegister("goat_id");
    reg_bitmap = res.FindRegister("goat_bitmap");
    reg_count = res.FindRegister("goat_count");
    Check(reg_id && reg_bitmap && reg_count);
  }

  void Reset() {
    Check(SwitchPool().InUse() == 0 && sw->tm().TotalQueued() == 0);
    for (RegisterArray* reg : sw->resources().Registers()) reg->Reset();
    sw->ResetCounters();
    goat->ResetCounters();
    clock.Advance(1'000'000'000);
  }
};

// Config byte bits 0-1: queue depth; bit 2: 1 Gb/s ports; bit 3: ECN threshold 300 B.
Rig& RigFor(uint8_t config) {
  static std::array<std::unique_ptr<Rig>, 16> rigs;
  std::unique_ptr<Rig>& rig = rigs[config & 15];
  if (!rig) rig = std::make_unique<Rig>(config);
  rig->Reset();
  return *rig;
}

struct World {
  Rig& rig;
  VirtualClock& clock;
  HeapPacketPool& pool = SwitchPool();
  HeapPacketPool& scratch = ScratchPool();
  Switch* sw;
  GoatProgram* goat;
  RegisterArray* reg_id;
  RegisterArray* reg_bitmap;
  RegisterArray* reg_count;

  std::array<std::vector<std::vector<uint8_t>>, kNumPorts> pending;  // the next burst per port
  uint64_t sent = 0;                                                 // frames into the switch
  std::map<Key, Fed> fed;
  std::set<std::array<uint8_t, kGoatHeaderLen>> fed_aggregates;  // headers with the flag
  bool udp_sums_right = true;  // every frame fed had a right (or no) UDP checksum
  GoatCounters last{};

  explicit World(uint8_t config)
      : rig(RigFor(config)),
        clock(rig.clock),
        sw(rig.sw.get()),
        goat(rig.goat),
        reg_id(rig.reg_id),
        reg_bitmap(rig.reg_bitmap),
        reg_count(rig.reg_count) {
    Check(scratch.InUse() == 0);
  }
};

// ---- Frames.

struct GoatSpec {
  GoatFields f;
  bool raw_ver_type = false;  // ver_type below written over the header's
  uint8_t ver_type = 0;
  std::vector<int32_t> values;
  std::size_t extra = 0;  // zero bytes after the elements
  MacAddr dst = PsMac();
  MacAddr src = WorkerMac(0);
  Ipv4Addr src_ip = WorkerIp(0);
  Ipv4Addr dst_ip = PsIp();
  bool udp_checksum = true;
  bool vlan = false;
  bool ip_options = false;
  uint16_t ip_fragment = 0;  // IPv4 flags and fragment offset
  uint8_t tos = 0;
};

std::vector<uint8_t> BuildFrame(const GoatSpec& s) {
  std::vector<uint8_t> payload(kGoatHeaderLen + 4 * s.values.size() + s.extra);
  s.f.Encode(payload.data());
  if (s.raw_ver_type) payload[0] = s.ver_type;
  for (std::size_t i = 0; i < s.values.size(); ++i) {
    StoreBe32(payload.data() + kGoatHeaderLen + 4 * i, static_cast<uint32_t>(s.values[i]));
  }
  FrameBuilder b;
  b.Eth(s.dst, s.src);
  if (s.vlan) b.Vlan(100);
  b.Ipv4(s.src_ip, s.dst_ip).Tos(s.tos).FlagsFragmentOffset(s.ip_fragment);
  if (s.ip_options) {
    static constexpr uint8_t kNops[] = {1, 1, 1, 0};  // NOP NOP NOP EOL
    b.Ipv4Options(kNops);
  }
  b.Udp(kGoatDefaultUdpPort, kGoatDefaultUdpPort);
  if (!s.udp_checksum) b.NoUdpChecksum();
  return b.Payload(payload).Build();
}

std::vector<int32_t> CleanValues(const GoatFields& f) {
  std::vector<int32_t> v(kElements);
  for (uint32_t e = 0; e < kElements; ++e) {
    v[e] = CleanValue(f.bitmap, f.job_id, f.submodel, f.fragment, f.round, e);
  }
  return v;
}

// A stream's gradient (or result) as hosts send them: count = popcount, clean values.
GoatSpec StreamFrame(uint8_t stream, uint32_t fragment, uint32_t round, uint64_t bitmap,
                     GoatType type) {
  const Stream& st = kStreams[stream & 7];
  GoatSpec s;
  s.f.type = type;
  s.f.job_id = st.job;
  s.f.node_id = st.node;
  s.f.submodel = st.submodel;
  s.f.fragment = fragment;
  s.f.round = round;
  s.f.num_elements = kElements;
  s.f.bitmap = bitmap;
  s.f.count = static_cast<uint16_t>(std::popcount(bitmap));
  s.values = CleanValues(s.f);
  s.udp_checksum = false;  // as the hosts send them
  return s;
}

uint16_t JobOf(uint8_t sel) {
  switch (sel & 3) {
    case 0:
    case 1:
      return 1;
    case 2:
      return 2;
    default:
      return sel >> 2;  // 0 (invalid) .. 63, mostly unknown to goat_node
  }
}

// Op kCustom's operands, each field from the input:
//   [port][ver_type][flags][job][node][sub-model][fragment][round][bitmap][shape][values]
// port: bits 0-2 the ingress port (mod 6); bits 3-5 the destination MAC: 0, 1, 6, 7 the PS,
//   2 worker (port & 3), 3 the neighbour, 4 broadcast (multicast group 1), 5 unknown (dropped);
//   bit 6: UDP checksum 0; bit 7: a VLAN tag.
// ver_type: bit 7 set: bits 0-6 as the header's ver_type (version 0-7, any type); else version
//   1 and type bit 0 (0 gradient, 1 result), and bit 1: IPv4 options (4 B), bit 2: IPv4 MF
//   (a first fragment), bit 3: TOS ECT(0), bit 4: DF.
// flags: the header's flags byte as is.
// job: JobOf. node: mod 8: 0, 1, 2, 7 (unknown), 0xFFFF, 3 (goat_route miss), 1, or 7: a U16
//   follows. sub-model: bits 0-2: that id, 7: a U16 follows.
// fragment: bit 7 set: a U32 follows; else bits 0-5. round: bit 7 set: a U32 follows; else
//   bits 0-4.
// bitmap: bits 7-6: 0 one worker (bit (b & 63)); 1 the low 6 bits as a mask (0 possible); 2 a
//   U64 follows; 3 ~0 >> (b & 63).
// shape: bit 0: count = popcount + 1 + (shape >> 5); bit 1: num_elements = shape >> 4;
//   bit 2: (shape >> 4) & 7 elements in the frame only; bit 3: 4 * (shape >> 4) bytes more.
// values: bits 7-6: 0 clean; 1 INT32_MAX - (v & 31) (bit 5: INT32_MIN + (v & 31)); 2 a U32
//   follows per element; 3 clean with element (v & 7) off by 1 + ((v >> 3) & 7).
GoatSpec CustomFrame(Input& in, PortId* port) {
  GoatSpec s;
  const uint8_t p = in.U8();
  *port = static_cast<PortId>((p & 7) % kNumPorts);
  switch ((p >> 3) & 7) {
    case 2:
      s.dst = WorkerMac(p & 3);
      s.dst_ip = WorkerIp(p & 3);
      break;
    case 3:
      s.dst = NeighbourMac();
      break;
    case 4:
      s.dst = kBroadcastMac;
      break;
    case 5:
      s.dst = UnknownMac();
      break;
    default:
      break;
  }
  s.udp_checksum = (p & 0x40) == 0;
  s.vlan = (p & 0x80) != 0;
  s.src = *port < 4 ? WorkerMac(*port) : *port == kPsPort ? PsMac() : NeighbourMac();
  const uint8_t vt = in.U8();
  if (vt & 0x80) {
    s.raw_ver_type = true;
    s.ver_type = vt & 0x7F;
  } else {
    s.f.type = static_cast<GoatType>(vt & 1);
    s.ip_options = (vt & 2) != 0;
    s.ip_fragment =
        static_cast<uint16_t>(((vt & 4) ? kIpv4FlagMf : 0) | ((vt & 16) ? kIpv4FlagDf : 0));
    s.tos = (vt & 8) ? 0b10 : 0;
  }
  s.f.flags = in.U8();
  s.f.job_id = JobOf(in.U8());
  static constexpr uint16_t kNodes[] = {0, 1, 2, 7, kGoatNodeAny, 3, 1};
  const uint8_t node = in.U8() & 7;
  s.f.node_id = node == 7 ? in.U16() : kNodes[node];
  const uint8_t sm = in.U8() & 7;
  s.f.submodel = sm == 7 ? in.U16() : sm;
  const uint8_t frag = in.U8();
  s.f.fragment = (frag & 0x80) ? in.U32() : frag & 0x3F;
  const uint8_t round = in.U8();
  s.f.round = (round & 0x80) ? in.U32() : round & 0x1F;
  const uint8_t bm = in.U8();
  switch (bm >> 6) {
    case 0:
      s.f.bitmap = uint64_t{1} << (bm & 63);
      break;
    case 1:
      s.f.bitmap = bm & 0x3F;
      break;
    case 2:
      s.f.bitmap = in.U64();
      break;
    default:
      s.f.bitmap = ~uint64_t{0} >> (bm & 63);
  }
  const uint8_t shape = in.U8();
  s.f.count = static_cast<uint16_t>(std::popcount(s.f.bitmap));
  if (shape & 1) s.f.count = static_cast<uint16_t>(s.f.count + 1 + (shape >> 5));
  s.f.num_elements = (shape & 2) ? shape >> 4 : kElements;
  s.values = CleanValues(s.f);
  if (shape & 4) s.values.resize((shape >> 4) & 7);
  if (shape & 8) s.extra = 4u * (shape >> 4);
  const uint8_t v = in.U8();
  for (std::size_t e = 0; e < s.values.size(); ++e) {
    switch (v >> 6) {
      case 1:
        s.values[e] = (v & 0x20) ? INT32_MIN + (v & 31) : INT32_MAX - (v & 31);
        break;
      case 2:
        s.values[e] = static_cast<int32_t>(in.U32());
        break;
      case 3:
        if (e == (v & 7u)) s.values[e] += 1 + ((v >> 3) & 7);
        break;
      default:
        break;
    }
  }
  return s;
}

// ---- The switch.

// The switch's own parse of a frame (its parser, on a scratch copy): calls f(packet) with
// hdr filled in. Frames longer than a buffer are never fed.
template <typename F>
void Parsed(World& w, const uint8_t* frame, uint32_t len, PortId port, F&& f) {
  Packet* copy = w.scratch.FromBytes(frame, len);
  Check(copy != nullptr);
  w.sw->ShardKeyOf(*copy, port);
  f(*copy);
  w.scratch.Free(copy);
}

const GoatHeader* GoatOf(const Packet& pkt) {
  if (pkt.hdr.app_id != GoatProgram::kAppId) return nullptr;
  Check(pkt.hdr.app + kGoatHeaderLen <= pkt.len);  // the parser's promise
  return HeaderAt<GoatHeader>(pkt.data + pkt.hdr.app);
}

bool IsGradient(const GoatHeader& h) {
  return h.Version() == kGoatVersion && h.Type() == GoatType::kGradient;
}

Key KeyOf(const GoatHeader& h) { return {h.JobId(), h.Submodel(), h.Fragment(), h.Round()}; }

// Are the elements after h the clean values of its bitmap?
bool CleanElements(const Packet& pkt, const GoatHeader& h) {
  if (h.NumElements() != kElements || pkt.hdr.app + GoatPayloadLen(kElements) > pkt.len) {
    return false;
  }
  for (uint32_t e = 0; e < kElements; ++e) {
    const auto v = static_cast<int32_t>(LoadBe32(h.Elements() + 4 * e));
    if (v != CleanValue(h.Bitmap(), h.JobId(), h.Submodel(), h.Fragment(), h.Round(), e)) {
      return false;
    }
  }
  return true;
}

// The UDP checksum is right (or 0); false also when the UDP length runs past the frame.
bool UdpSumRight(const Packet& pkt) {
  if (!pkt.hdr.has_ipv4() || !pkt.hdr.has_udp()) return true;
  const uint16_t udp_len = LoadBe16(pkt.data + pkt.hdr.udp + 4);
  if (pkt.hdr.udp + uint32_t{udp_len} > pkt.len || udp_len < 8) return false;
  return UdpChecksumOk(pkt.data + pkt.hdr.ipv4, pkt.data + pkt.hdr.udp, udp_len);
}

bool IsIpv4Fragment(const Packet& pkt) {
  return pkt.hdr.has_ipv4() && HeaderAt<Ipv4Header>(pkt.data + pkt.hdr.ipv4)->IsFragment();
}

void Record(World& w, const std::vector<uint8_t>& frame, PortId port) {
  Parsed(w, frame.data(), static_cast<uint32_t>(frame.size()), port, [&](const Packet& pkt) {
    if (!UdpSumRight(pkt)) w.udp_sums_right = false;
    const GoatHeader* h = GoatOf(pkt);
    if (h == nullptr || !IsGradient(*h)) return;
    Fed& fed = w.fed[KeyOf(*h)];
    fed.bits |= h->Bitmap();
    if (h->Has(kGoatFlagOverflow) || !CleanElements(pkt, *h)) fed.clean = false;
    if (h->Has(kGoatFlagAggregate)) {
      std::array<uint8_t, kGoatHeaderLen> bytes;
      std::memcpy(bytes.data(), h, kGoatHeaderLen);
      w.fed_aggregates.insert(bytes);
    }
  });
}

void CheckOutput(World& w, Packet& out, PortId port) {
  if (out.hdr.has_ipv4()) {
    const uint8_t* ip = out.data + out.hdr.ipv4;
    Check(Ipv4HeaderChecksumOk(ip, (ip[0] & 0xfu) * 4u));
  }
  Parsed(w, out.data, out.len, port, [&](const Packet& pkt) {
    // The deparser leaves an IPv4 fragment's L4 checksum as it is (it covers bytes not in the
    // packet); the program forwards fragments untouched.
    if (w.udp_sums_right && !IsIpv4Fragment(pkt)) Check(UdpSumRight(pkt));
    // The first piece of a fragmented datagram is not GOAT's in the switch: l2l3 forwards it
    // unvalidated and untouched.
    if (IsIpv4Fragment(pkt)) return;
    const GoatHeader* h = GoatOf(pkt);
    if (h == nullptr || !IsGradient(*h)) return;
    const uint64_t bits = h->Bitmap();
    // Only validated gradients pass the switch.
    Check(h->JobId() != 0 && h->NumElements() == kElements);
    Check(bits != 0 && h->Count() == std::popcount(bits));
    const auto it = w.fed.find(KeyOf(*h));
    Check(it != w.fed.end());
    Check((bits & ~it->second.bits) == 0);  // no worker that was never fed
    if (h->Has(kGoatFlagAggregate) && h->NodeId() != kGoatNodePs && h->NodeId() != kGoatNodeAny) {
      std::array<uint8_t, kGoatHeaderLen> bytes;
      std::memcpy(bytes.data(), h, kGoatHeaderLen);
      Check(w.fed_aggregates.count(bytes) != 0);  // passed on as it came
    }
    if (it->second.clean) {
      Check(!h->Has(kGoatFlagOverflow));
      Check(CleanElements(pkt, *h));
    }
  });
}

// Frames waiting for the switch go in, one burst per port.
void Feed(World& w) {
  for (PortId port = 0; port < kNumPorts; ++port) {
    std::vector<Packet*> burst;
    for (const std::vector<uint8_t>& frame : w.pending[port]) {
      if (w.sent + burst.size() >= kFrameBudget) break;
      Packet* pkt = w.pool.FromBytes(frame.data(), static_cast<uint32_t>(frame.size()));
      if (pkt == nullptr) continue;  // the pool is exhausted: lost on the link
      Record(w, frame, port);
      burst.push_back(pkt);
    }
    w.pending[port].clear();
    if (burst.empty()) continue;
    w.sent += burst.size();
    w.sw->ReceiveBurst(burst.data(), static_cast<uint32_t>(burst.size()), port);
  }
}

// What every port may send by now.
void TransmitDue(World& w) {
  for (PortId port = 0; port < kNumPorts; ++port) {
    while (Packet* out = w.sw->Transmit(port)) {
      CheckOutput(w, *out, port);
      w.pool.Free(out);
    }
  }
}

// Everything queued, in time order.
void Drain(World& w) {
  for (;;) {
    TimeNs next = kNever;
    for (PortId p = 0; p < kNumPorts; ++p) next = std::min(next, w.sw->NextTransmitTime(p));
    if (next == kNever) return;
    if (next > w.clock.NowNs()) w.clock.Set(next);
    TransmitDue(w);
  }
}

// ---- Invariants.

uint64_t Cell(RegisterArray* reg, uint32_t index, uint16_t lane = 0) {
  Result<uint64_t> v = reg->Read(index, lane);
  Check(v.ok());
  return *v;
}

void CheckSwitch(World& w) {
  const Switch& sw = *w.sw;
  uint64_t rx = 0;
  uint64_t tx = 0;
  for (const PortCounters& p : sw.counters().ports) {
    rx += p.rx_packets;
    tx += p.tx_packets;
  }
  Check(rx == w.sent);
  const uint64_t queued = sw.tm().TotalQueued();
  Check(w.pool.InUse() == queued);
  Check(rx + sw.MulticastCopies() ==
        tx + sw.counters().program.consumed + sw.TotalDrops() + queued);
}

void CheckSlots(World& w) {
  uint32_t used = 0;
  for (uint32_t i = 0; i < kSlots; ++i) {
    const uint64_t key = Cell(w.reg_id, i, 0);
    const uint64_t round = Cell(w.reg_id, i, 1);
    Check((key == 0) == (round == 0));
    if (key == 0) continue;  // empty or released (a release clears goat_id only)
    ++used;
    const auto job = static_cast<uint16_t>(key >> 48);
    const auto submodel = static_cast<uint16_t>(key >> 32);
    const auto fragment = static_cast<uint32_t>(key);
    const Entry* entry = nullptr;
    for (const Entry& e : kEntries) {
      if (e.job == job && e.submodel == submodel && Aggregates(e)) entry = &e;
    }
    Check(entry != nullptr);
    Check(SlotOf(*entry, fragment) == int64_t{i});
    const uint64_t bitmap = Cell(w.reg_bitmap, i);
    const uint64_t count = Cell(w.reg_count, i);
    const uint64_t workers = count & 0x7F;
    Check(count <= 0xFF);
    Check(bitmap != 0 && workers >= 1 && workers <= static_cast<uint64_t>(std::popcount(bitmap)));
    if ((count & 0x80) == 0) Check(workers < entry->fan_in);
  }
  Check(used == w.goat->SlotsInUse());
  const GoatCounters& c = w.goat->counters();
  Check(c.released <= c.claimed && c.evicted <= c.claimed);
  Check(used <= c.claimed - c.released);
}

void CheckCounters(World& w) {
  constexpr std::size_t kN = sizeof(GoatCounters) / sizeof(uint64_t);
  static_assert(sizeof(GoatCounters) == kN * sizeof(uint64_t));
  const GoatCounters& c = w.goat->counters();
  std::array<uint64_t, kN> now{};
  std::array<uint64_t, kN> before{};
  std::memcpy(now.data(), &c, sizeof(c));
  std::memcpy(before.data(), &w.last, sizeof(c));
  for (std::size_t i = 0; i < kN; ++i) Check(now[i] >= before[i]);
  w.last = c;
  Check(c.completed <= c.claimed + c.aggregated);
  // Claims and adds below the fan-in are consumed, and nothing else is.
  Check(w.sw->counters().program.consumed == c.claimed + c.aggregated - c.completed);
  Check(w.sw->Drops(GoatDrop::kDuplicate) == c.duplicates);
}

void CheckAll(World& w) {
  CheckSwitch(w);
  CheckSlots(w);
  CheckCounters(w);
}

// ---- Ops. Each is one byte: bits 0-6 pick the op (mod kOps); bit 7 set defers the switch (the
// op's frames wait, and the next op's join them in one burst per port).
enum Op : uint8_t {
  kWorker,   // [a][b]: stream a bits 0-2 (kStreams), worker a bits 3-5 (bit w, from port w % 4);
             // a bit 6: kGoatFlagResend; a bit 7: workers w and w + 1, from the neighbour's
             // port; b bits 0-3: fragment, bits 4-7: round. Clean values, to the PS.
  kResult,   // [a][b]: the PS's result (bitmap 0xF, clean values) of stream a bits 0-2 to worker
             // a bits 4-5, from port 4; a bit 3: node id 0 (else the stream's); b as kWorker's.
  kCustom,   // CustomFrame's operands: any header into any port
  kRaw,      // [port][len] + len bytes: a raw frame into port (mod 6)
  kMutated,  // [a][b][n] + (n & 7) x [offset][xor]: a kWorker frame, bytes flipped
  kTime,     // [d]: virtual time on by (d + 1) x 256 ns; ports send what is due
  kDrain,    // every queue drained (time moves on as far as it takes)
  kOps,
};

GoatSpec WorkerFrame(uint8_t a, uint8_t b, PortId* port) {
  const uint32_t worker = (a >> 3) & 7;
  const uint64_t bits = (a & 0x80) ? uint64_t{3} << worker : uint64_t{1} << worker;
  GoatSpec s = StreamFrame(a & 7, b & 0xF, b >> 4, bits, GoatType::kGradient);
  if (a & 0x40) s.f.flags |= kGoatFlagResend;
  s.src = WorkerMac(worker & 3);
  s.src_ip = WorkerIp(worker & 3);
  *port = (a & 0x80) ? kNeighbourPort : static_cast<PortId>(worker & 3);
  return s;
}

void RunOp(World& w, Input& in, uint8_t op) {
  switch (op) {
    case kWorker: {
      const uint8_t a = in.U8();
      const uint8_t b = in.U8();
      PortId port = 0;
      const GoatSpec s = WorkerFrame(a, b, &port);
      w.pending[port].push_back(BuildFrame(s));
      break;
    }
    case kResult: {
      const uint8_t a = in.U8();
      const uint8_t b = in.U8();
      GoatSpec s = StreamFrame(a & 7, b & 0xF, b >> 4, 0xF, GoatType::kResult);
      if (a & 8) s.f.node_id = kGoatNodePs;
      s.values = CleanValues(s.f);
      const uint32_t worker = (a >> 4) & 3;
      s.dst = WorkerMac(worker);
      s.dst_ip = WorkerIp(worker);
      s.src = PsMac();
      s.src_ip = PsIp();
      w.pending[kPsPort].push_back(BuildFrame(s));
      break;
    }
    case kCustom: {
      PortId port = 0;
      const GoatSpec s = CustomFrame(in, &port);
      w.pending[port].push_back(BuildFrame(s));
      break;
    }
    case kRaw: {
      const auto port = static_cast<PortId>(in.U8() % kNumPorts);
      w.pending[port].push_back(in.Take(in.U8()));
      break;
    }
    case kMutated: {
      const uint8_t a = in.U8();
      const uint8_t b = in.U8();
      PortId port = 0;
      std::vector<uint8_t> frame = BuildFrame(WorkerFrame(a, b, &port));
      const uint8_t n = in.U8() & 7;
      for (uint8_t i = 0; i < n; ++i) {
        const uint8_t at = in.U8();
        frame[at % frame.size()] ^= in.U8();
      }
      w.pending[port].push_back(std::move(frame));
      break;
    }
    case kTime:
      w.clock.Advance((TimeNs{in.U8()} + 1) * 256);
      break;
    case kDrain:
      Feed(w);
      Drain(w);
      break;
    default:
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  Input in(data, size);
  World w(in.U8());
  CheckAll(w);
  while (!in.empty()) {
    const uint8_t op = in.U8();
    RunOp(w, in, static_cast<uint8_t>((op & 0x7f) % kOps));
    if ((op & 0x80) != 0 && !in.empty()) continue;
    Feed(w);
    w.clock.Advance(64);  // virtual time moves on at every step
    TransmitDue(w);
    CheckAll(w);
  }
  Feed(w);
  Drain(w);
  CheckAll(w);
  Check(w.pool.InUse() == 0 && w.sw->tm().TotalQueued() == 0);
  return 0;
}
