// libFuzzer over ATP end to end: the `atp` switch program (a rack as in configs/atp_rack.cli,
// with a small aggregator array so <job, seq> pairs collide) between one real worker
// (hostlib AtpWorker) and the parameter server (AtpPs), both behind an ATP Context. The input
// is two config bytes, then a sequence of ops, each one byte and its operands (the layout is
// below, at Op): gradients of the other workers and parameter packets built from fuzz bytes
// (any job, seq, worker id, flags, fan-in, bitmap, element count and values), raw and mutated
// frames into the switch, frames straight to the hosts, AllReduce calls of the real worker,
// virtual time for its timers, and losses. Every input starts from the same state (new hosts,
// the switch back to its startup state), so a crash reproduces from its input alone; time is
// virtual (no wall clock) and moves on at every step.
//
// After each op the network runs until it is quiet (hosts' frames into the switch, the switch's
// frames out to the hosts) and invariants are checked; the fuzzer traps when one breaks:
//   - switch: no buffer leaks, every packet is accounted for (forwarded, consumed or dropped),
//     IPv4 checksums of output frames are right;
//   - atp aggregators: a free one (id 0) holds nothing; a held one holds a <job, seq> that
//     hashes to its index, of an aggregating job, with count = popcount(bitmap) != 0; the
//     number in use is claims minus deallocations, and at most the array;
//   - PS: its counters add up (every gradient classified once, a parameter packet per
//     completion or re-send, send failures are the transport's refusals) and every frame it
//     sends is a parameter packet of its job with the full bitmap;
//   - worker: never completes more elements or calls than were submitted, calls finish in
//     order, windows stay in bounds, its counters match its transport, and every frame it
//     sends is its own gradient of a submitted seq;
//   - Context: every frame delivered is counted once, as a param, a gradient or refused.
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hostlib/atp/atp_frame.h"
#include "hostlib/atp/context.h"
#include "hostlib/atp/job_config.h"
#include "pipeline/core/clock.h"
#include "pipeline/core/packet_pool.h"
#include "pipeline/programs/atp.h"
#include "pipeline/switch/switch.h"
#include "pipeline/wire/atp.h"
#include "pipeline/wire/checksum.h"
#include "pipeline/wire/frame_builder.h"

namespace {

using namespace swemu;  // NOLINT(build/namespaces)

void Check(bool condition) {
  if (!condition) __builtin_trap();
}

constexpr uint16_t kElements = 8;  // per packet, switch and job alike
constexpr PortId kPsPort = 4;
constexpr uint16_t kJob = 1;       // atp_job aggregate
constexpr uint16_t kPlainJob = 2;  // atp_job forward_only (aggregated at the PS only)
constexpr uint16_t kDropJob = 3;   // atp_job drop
constexpr std::size_t kMaxCalls = 8;
constexpr uint64_t kFrameBudget = 4096;       // frames into the switch per input
constexpr int32_t kScale = int32_t{1} << 20;  // kAtpDefaultScale

MacAddr WorkerMac(uint32_t w) { return MacAddr::FromU64(0x020000000000ull + w); }
MacAddr PsMac() { return MacAddr::FromU64(0x020000000010ull); }
Ipv4Addr WorkerIp(uint32_t w) { return MakeIpv4Addr(10, 0, 0, static_cast<uint8_t>(w + 1)); }
Ipv4Addr PsIp() { return MakeIpv4Addr(10, 0, 0, 16); }
Ipv4Addr GroupIp(uint16_t job) { return MakeIpv4Addr(239, 1, 0, static_cast<uint8_t>(job)); }

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
  uint32_t U32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | U8();
    return v;
  }
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

// A host port's transmit side: keeps the frames for the network, refuses some on a loss mask
// (a rotating bit pattern: deterministic).
class HostTransport final : public Transport {
 public:
  bool Send(std::span<const uint8_t> frame) noexcept override {
    ++sends;
    const bool refuse = (loss & 1) != 0;
    loss = std::rotr(loss, 1);
    if (refuse) {
      ++refused;
      return false;
    }
    pending.emplace_back(frame.begin(), frame.end());
    sent.emplace_back(frame.begin(), frame.end());
    return true;
  }
  uint8_t loss = 0;
  uint64_t sends = 0;
  uint64_t refused = 0;
  std::vector<std::vector<uint8_t>> pending;  // not yet into the switch
  std::vector<std::vector<uint8_t>> sent;     // not yet checked
};

AtpJobConfig MakeJob(uint16_t job_id, uint32_t workers, bool ps_apart) {
  AtpJobSpec spec;
  spec.job_id = job_id;
  for (uint32_t w = 0; w < workers; ++w) {
    spec.workers.push_back({"w" + std::to_string(w), WorkerMac(w), WorkerIp(w), "r0"});
  }
  // PS on another rack: the workers' fan_in1 is W (a second aggregation level).
  spec.ps = {"ps", PsMac(), PsIp(), ps_apart ? "r1" : "r0"};
  spec.group_ip = GroupIp(job_id);
  spec.elements = kElements;
  Result<AtpJobConfig> job = MakeAtpJobConfig(spec);
  Check(job.ok());
  return *job;
}

struct Call {
  AllReduceJob* job = nullptr;
  std::vector<float> in;
  std::vector<float> out;
};

// The switch of a rack as configs/atp_rack.cli sets it up, with jobs 2 (forward_only) and 3
// (drop) beside job 1. Building one (its tables above all) costs more than most inputs, so
// there is one per switch configuration, kept across inputs and reset at the start of each:
// every register cleared, counters zeroed, queue settings from the input, and the clock moved
// on a second (every port idle), so an input runs the same whatever ran before it.
struct Rack {
  VirtualClock clock{1};
  HeapPacketPool pool{512, 2048};
  std::unique_ptr<Switch> sw;
  AtpProgram* atp = nullptr;
  RegisterArray* reg_id = nullptr;
  RegisterArray* reg_bitmap = nullptr;
  RegisterArray* reg_count = nullptr;
  RegisterArray* reg_value = nullptr;
  RegisterArray* reg_overflow = nullptr;
  uint32_t aggregators = 0;

  Rack(uint32_t num_aggregators, bool ecn, uint64_t port_rate_bps) : aggregators(num_aggregators) {
    SwitchConfig config;
    config.num_ports = 5;
    config.program = "atp";
    config.program_options.Set("elements", std::to_string(kElements));
    config.program_options.Set("aggregators", std::to_string(aggregators));
    config.program_options.Set("ecn", ecn ? "true" : "false");
    config.program_options.Set("jobs", "16");  // small tables: quicker to build
    config.program_options.Set("dmac_size", "64");
    config.program_options.Set("lpm_size", "16");
    config.program_options.Set("nexthop_size", "16");
    config.program_options.Set("ecmp_groups", "16");
    config.tm.port_rate_bps = port_rate_bps;
    Result<std::unique_ptr<Switch>> created = Switch::Create(config, pool, clock);
    Check(created.ok());
    sw = std::move(*created);
    atp = static_cast<AtpProgram*>(&sw->program());
    // The rack's own startup script, then what the fuzzer adds: job 2 plain, job 3 dropped.
    Check(sw->commands().RunScript(SWEMU_SOURCE_DIR "/configs/atp_rack.cli").ok());
    for (const char* line :
         {"table_add dmac multicast 01:00:5e:01:00:02 => 1",
          "table_add atp_job forward_only 2 => 1", "table_add atp_job drop 3 =>"}) {
      Check(sw->commands().Execute(line).ok());
    }
    PipelineResources& res = sw->resources();
    reg_id = res.FindRegister("atp_id");
    reg_bitmap = res.FindRegister("atp_bitmap");
    reg_count = res.FindRegister("atp_count");
    reg_value = res.FindRegister("atp_value");
    reg_overflow = res.FindRegister("atp_overflow");
    Check(reg_id && reg_bitmap && reg_count && reg_value && reg_overflow);
  }

  void Reset(bool low_ecn, bool shallow) {
    Check(pool.InUse() == 0 && sw->tm().TotalQueued() == 0);
    for (RegisterArray* reg : sw->resources().Registers()) reg->Reset();
    sw->ResetCounters();
    atp->ResetCounters();
    Check(sw->commands()
              .Execute(low_ecn ? "set_ecn_threshold all all 300" : "set_ecn_threshold all all 0")
              .ok());
    Check(sw->commands().Execute(shallow ? "set_queue_depth 8" : "set_queue_depth 1024").ok());
    clock.Advance(1'000'000'000);
  }
};

// c1 bits 0-1: aggregators; bit 4: the program's ECN marking off; bit 5: 1 Gb/s ports.
Rack& RackFor(uint8_t c1) {
  static constexpr uint32_t kAggregators[] = {64, 16, 4, 1};
  static std::array<std::unique_ptr<Rack>, 16> racks;
  std::unique_ptr<Rack>& rack = racks[(c1 & 3u) | ((c1 >> 2) & 0xcu)];
  if (!rack) {
    rack = std::make_unique<Rack>(kAggregators[c1 & 3], (c1 & 0x10) == 0,
                                  (c1 & 0x20) ? 1'000'000'000 : 10'000'000'000);
  }
  return *rack;
}

struct World {
  Rack& rack;
  VirtualClock& clock;
  HeapPacketPool& pool;
  Switch* sw;
  AtpProgram* atp;
  uint32_t aggregators;

  uint32_t workers = 4;  // W
  uint32_t me = 0;       // the real worker's id (and switch port)
  AtpJobConfig job;
  AtpJobConfig plain_job;
  HostTransport ps_tx;
  HostTransport worker_tx;
  std::unique_ptr<Context> ps;
  std::unique_ptr<Context> worker;
  AtpWorkerOptions worker_options;
  uint8_t link_loss = 0;  // switch -> host losses, a rotating mask

  // Frames waiting for the switch, per ingress port (delivered as one burst per port).
  std::array<std::vector<std::vector<uint8_t>>, 5> to_switch;
  uint64_t into_switch = 0;         // frames the switch received
  uint64_t checked = ~uint64_t{0};  // into_switch when the aggregators were last checked
  uint64_t ps_frames = 0;           // frames delivered to each Context
  uint64_t worker_frames = 0;

  std::array<Call, kMaxCalls> calls;
  std::size_t num_calls = 0;
  uint32_t next_seq = 0;  // the worker's: every submitted call's packets, in order

  // c0 bits 0-1: W - 1; bits 2-3: the real worker (mod W); bit 4: the PS on another rack (a
  // second aggregation level, fan_in1 = W); bit 5: ECN threshold 300 B; bit 6: 8-packet
  // queues; bit 7: 2 sender lanes. c1: RackFor's bits; bits 2-3: initial window; 6-7: chunk.
  World(uint8_t c0, uint8_t c1)
      : rack(RackFor(c1)),
        clock(rack.clock),
        pool(rack.pool),
        sw(rack.sw.get()),
        atp(rack.atp),
        aggregators(rack.aggregators) {
    rack.Reset((c0 & 0x20) != 0, (c0 & 0x40) != 0);
    workers = (c0 & 3u) + 1;
    me = ((c0 >> 2) & 3u) % workers;
    const bool ps_apart = (c0 & 0x10) != 0;
    static constexpr uint32_t kWindows[] = {50, 8, 2, 1};
    static constexpr uint32_t kChunks[] = {64, 4, 1, 2};
    job = MakeJob(kJob, workers, ps_apart);
    plain_job = MakeJob(kPlainJob, workers, ps_apart);
    ps = std::make_unique<Context>(AtpHostConfig{PsMac(), PsIp()}, &ps_tx);
    // Few slots and a short history: seqs far apart share a slot, old ones fall out.
    Check(ps->ServeJob(job, {16, 64}).ok());
    Check(ps->ServeJob(plain_job, {16, 64}).ok());
    worker = std::make_unique<Context>(AtpHostConfig{WorkerMac(me), WorkerIp(me)}, &worker_tx);
    worker_options.lanes = (c0 & 0x80) ? 2 : 1;
    worker_options.initial_window_packets = kWindows[(c1 >> 2) & 3];
    worker_options.chunk_packets = kChunks[c1 >> 6];
    Check(worker->JoinJob(job, worker_options).ok());
  }

  TimeNs now() const { return clock.NowNs(); }

  // The first seq of the worker's oldest call not done (where its traffic is now).
  uint32_t BaseSeq() const {
    for (std::size_t i = 0; i < num_calls; ++i) {
      if (!calls[i].job->done()) return calls[i].job->first_seq();
    }
    return next_seq;
  }

  const AtpWorkerSetup& Setup(uint32_t w) const { return job.workers[w % workers]; }
};

// ---- Frames built from fuzz bytes.

struct AtpSpec {
  AtpFields f;
  std::vector<uint32_t> values;  // raw element bits, f.num_elements of them (or fewer)
  MacAddr dst = PsMac();
  MacAddr src = WorkerMac(0);
  Ipv4Addr src_ip = WorkerIp(0);
  Ipv4Addr dst_ip = PsIp();
  uint8_t tos = 0b10;  // ECT(0), as the worker sends
  uint16_t udp_port = kAtpDefaultUdpPort;
  bool udp_checksum = true;
};

std::vector<uint8_t> BuildFrame(const AtpSpec& s) {
  std::vector<uint8_t> payload(kAtpHeaderLen + 4 * s.values.size());
  s.f.Encode(payload.data());
  for (std::size_t i = 0; i < s.values.size(); ++i) {
    StoreAtpInt(payload.data() + kAtpHeaderLen, i, static_cast<int32_t>(s.values[i]));
  }
  FrameBuilder b;
  b.Eth(s.dst, s.src).Ipv4(s.src_ip, s.dst_ip).Tos(s.tos).Udp(s.udp_port, s.udp_port);
  if (!s.udp_checksum) b.NoUdpChecksum();
  return b.Payload(payload).Build();
}

// Element values from one mode byte: small, near INT32_MAX / INT32_MIN (overflow), or raw.
std::vector<uint32_t> Values(Input& in, uint8_t mode, std::size_t n) {
  std::vector<uint32_t> v(n);
  const uint32_t low = mode & 0x3fu;
  for (std::size_t i = 0; i < n; ++i) {
    switch (mode >> 6) {
      case 0:  // -32 .. 31 (scaled), varying by element
        v[i] = static_cast<uint32_t>((static_cast<int32_t>(low) - 32 + static_cast<int32_t>(i)) *
                                     kScale);
        break;
      case 1:
        v[i] = 0x7fffffffu - low;
        break;
      case 2:
        v[i] = 0x80000000u + low;
        break;
      default:
        v[i] = in.U32();
    }
  }
  return v;
}

// A gradient of worker `worker` (mod W) as its host sends it: own bit, edge 0, its fan-ins.
AtpSpec PeerGradient(const World& w, uint32_t worker, uint32_t seq) {
  AtpSpec s;
  const AtpWorkerSetup& setup = w.Setup(worker);
  s.f.worker_id = setup.worker_id;
  s.f.fan_in0 = setup.fan_in0;
  s.f.fan_in1 = setup.fan_in1;
  s.f.job_id = kJob;
  s.f.num_elements = kElements;
  s.f.seq = seq;
  s.f.bitmap = uint32_t{1} << setup.worker_id;
  s.src = WorkerMac(setup.worker_id);
  s.src_ip = WorkerIp(setup.worker_id);
  s.udp_checksum = false;  // as AtpFrameTemplate
  return s;
}

uint16_t JobOf(uint8_t sel) {
  switch (sel) {
    case 0:
      return kJob;
    case 1:
      return kPlainJob;
    case 2:
      return kDropJob;
    case 3:
      return 0;  // invalid
    default:
      return sel;  // unknown to the switch and the hosts
  }
}

// Op kCustom's operands: every header field from the input.
//   [worker_id][seq: 4 B][flags][fan_in0][fan_in1][job sel][bitmap: 4 B][elements][value mode]
//   (+ 4 B per element, at most 64, if value mode >= 0xc0) [tos][port]
// elements: 0 = the switch's count, n = n - 1. job sel: 0 job 1, 1 job 2, 2 job 3, 3 job 0,
// else that id. port: bits 0-6 % 5 the ingress port; bit 7 to the job's group MAC.
AtpSpec CustomAtp(Input& in, PortId* port) {
  AtpSpec s;
  s.f.worker_id = in.U8();
  s.f.seq = in.U32();
  s.f.flags = in.U8() & 0x3f;
  s.f.fan_in0 = in.U8();
  s.f.fan_in1 = in.U8();
  s.f.job_id = JobOf(in.U8());
  s.f.bitmap = in.U32();
  const uint8_t e = in.U8();
  s.f.num_elements = e == 0 ? kElements : static_cast<uint16_t>(e - 1);
  const uint8_t mode = in.U8();
  s.values = Values(in, mode, std::min<std::size_t>(s.f.num_elements, 64));
  s.tos = in.U8();
  const uint8_t p = in.U8();
  *port = static_cast<PortId>((p & 0x7f) % 5);
  if ((p & 0x80) != 0) {
    s.dst = Ipv4MulticastMac(GroupIp(s.f.job_id & 0xff));
    s.dst_ip = GroupIp(s.f.job_id & 0xff);
  }
  s.src = WorkerMac(s.f.worker_id & 3);
  return s;
}

// A parameter packet as the PS sends it. Operands: [seq offset][job sel][flags][value mode].
// job sel: bit 0-1: 0 job 1 to its group, 1 job 1 unicast to worker (sel >> 2) % 4, 2 job 2 to
// its group, 3 job (sel >> 2) to job 1's group.
AtpSpec ParamPacket(World& w, Input& in) {
  AtpSpec s;
  s.f.seq = w.BaseSeq() + in.U8();
  const uint8_t sel = in.U8();
  s.f.flags = static_cast<uint8_t>(kAtpFlagParam | kAtpFlagFloat | (in.U8() & 0x1e));
  s.f.job_id = kJob;
  s.f.bitmap = w.job.full_bitmap;
  s.f.num_elements = kElements;
  s.dst = w.job.group_mac;
  s.dst_ip = GroupIp(kJob);
  switch (sel & 3) {
    case 1:
      s.dst = WorkerMac((sel >> 2) % 4);
      s.dst_ip = WorkerIp((sel >> 2) % 4);
      break;
    case 2:
      s.f.job_id = kPlainJob;
      s.dst = w.plain_job.group_mac;
      s.dst_ip = GroupIp(kPlainJob);
      break;
    case 3:
      s.f.job_id = JobOf(sel >> 2);
      break;
    default:
      break;
  }
  s.src = PsMac();
  s.src_ip = PsIp();
  s.tos = 0;
  s.udp_checksum = false;
  s.values = Values(in, in.U8(), kElements);
  return s;
}

// ---- The network.

bool Ipv4ChecksumOk(const Packet& pkt) {
  if (!pkt.hdr.has_ipv4()) return true;
  const uint8_t* ip = pkt.data + pkt.hdr.ipv4;
  return Ipv4HeaderChecksumOk(ip, (ip[0] & 0xfu) * 4u);
}

void ToSwitch(World& w, PortId port, std::vector<uint8_t> frame) {
  w.to_switch[port].push_back(std::move(frame));
}

void DeliverToPs(World& w, std::span<const uint8_t> frame) {
  ++w.ps_frames;
  w.ps->OnFrame(w.now(), frame);
  w.ps->Pump(w.now());
}

void DeliverToWorker(World& w, std::span<const uint8_t> frame) {
  ++w.worker_frames;
  w.worker->OnFrame(w.now(), frame);
  w.worker->Pump(w.now());
}

// Hosts' frames and the queued inputs into the switch, one burst per port. False if none.
bool FeedSwitch(World& w) {
  for (const auto& frame : w.worker_tx.pending) w.to_switch[w.me].push_back(frame);
  for (const auto& frame : w.ps_tx.pending) w.to_switch[kPsPort].push_back(frame);
  w.worker_tx.pending.clear();
  w.ps_tx.pending.clear();
  bool any = false;
  for (PortId port = 0; port < w.to_switch.size(); ++port) {
    std::vector<Packet*> burst;
    for (const auto& frame : w.to_switch[port]) {
      if (w.into_switch + burst.size() >= kFrameBudget) break;  // the rest is lost on the link
      Packet* pkt = w.pool.FromBytes(frame.data(), static_cast<uint32_t>(frame.size()));
      if (pkt != nullptr) burst.push_back(pkt);  // nullptr: longer than the buffers
    }
    w.to_switch[port].clear();
    if (burst.empty()) continue;
    any = true;
    w.into_switch += burst.size();
    w.sw->ReceiveBurst(burst.data(), static_cast<uint32_t>(burst.size()), port);
  }
  return any;
}

// Everything the switch has queued, in time order, to the hosts on its ports.
bool DrainSwitch(World& w) {
  bool any = false;
  for (;;) {
    TimeNs next = kNever;
    PortId port = 0;
    for (PortId p = 0; p < w.sw->num_ports(); ++p) {
      const TimeNs t = w.sw->NextTransmitTime(p);
      if (t < next) {
        next = t;
        port = p;
      }
    }
    if (next == kNever) return any;
    if (next > w.clock.NowNs()) w.clock.Set(next);
    while (Packet* out = w.sw->Transmit(port)) {
      any = true;
      Check(Ipv4ChecksumOk(*out));
      const bool lost = (w.link_loss & 1) != 0;
      w.link_loss = std::rotr(w.link_loss, 1);
      // A copy: the hosts' replies may need pool buffers before this one is freed.
      const std::vector<uint8_t> frame(out->data, out->data + out->len);
      w.pool.Free(out);
      if (lost) continue;
      if (port == kPsPort) {
        DeliverToPs(w, frame);
      } else if (port == w.me) {
        DeliverToWorker(w, frame);
      }
    }
  }
}

void RunNetwork(World& w) {
  for (;;) {
    const bool fed = FeedSwitch(w);
    const bool drained = DrainSwitch(w);
    if (!fed && !drained && w.worker_tx.pending.empty() && w.ps_tx.pending.empty()) return;
  }
}

// The worker's timers up to `until` (a bounded number of rounds).
void RunTimers(World& w, TimeNs until) {
  for (int round = 0; round < 32; ++round) {
    const TimeNs next = w.worker->NextTimer();
    if (next > until) break;
    if (next > w.now()) w.clock.Set(next);
    w.worker->OnTimer(w.now());
    w.worker->Pump(w.now());
    RunNetwork(w);
  }
  if (until > w.now()) w.clock.Set(until);
}

void Submit(World& w, uint8_t n, uint8_t mode) {
  if (w.num_calls == kMaxCalls) return;
  Call& call = w.calls[w.num_calls];
  call.in.resize(n);
  call.out.assign(n, -1.0f);
  for (std::size_t i = 0; i < n; ++i) {
    switch (mode & 3) {
      case 0:
        call.in[i] = static_cast<float>(static_cast<int>(i % 7) - 3) + 0.5f;
        break;
      case 1:  // does not fit int32 at the scale: the float (overflow) path
        call.in[i] = 1e10f;
        break;
      case 2:  // one packet in two on the float path
        call.in[i] = (i / kElements) % 2 == 0 ? 1.0f : -3e9f;
        break;
      default:
        call.in[i] = static_cast<float>(mode >> 2);
    }
  }
  call.job = w.worker->AllReduce(kJob, call.in.data(), call.out.data(), n);
  Check(call.job != nullptr);
  Check(call.job->first_seq() == w.next_seq);
  Check(call.job->packets() == (n + kElements - 1) / kElements);
  w.next_seq += call.job->packets();
  ++w.num_calls;
  w.worker->Pump(w.now());
}

// ---- Invariants.

void CheckSwitch(World& w) {
  const Switch& sw = *w.sw;
  Check(w.pool.InUse() == 0);
  Check(sw.tm().TotalQueued() == 0);
  uint64_t rx = 0;
  uint64_t tx = 0;
  for (const PortCounters& p : sw.counters().ports) {
    rx += p.rx_packets;
    tx += p.tx_packets;
  }
  Check(rx == w.into_switch);
  Check(rx + sw.MulticastCopies() == tx + sw.counters().program.consumed + sw.TotalDrops());
}

uint64_t Cell(RegisterArray* reg, uint32_t index, uint16_t lane = 0) {
  Result<uint64_t> v = reg->Read(index, lane);
  Check(v.ok());
  return *v;
}

// The value lanes of free aggregators only when `values` (the reads are the fuzzer's hot spot).
void CheckAggregators(World& w, bool values) {
  if (!values && w.checked == w.into_switch) return;  // no packet since: nothing changed
  w.checked = w.into_switch;
  uint32_t used = 0;
  for (uint32_t i = 0; i < w.aggregators; ++i) {
    const uint64_t id = Cell(w.rack.reg_id, i);
    const uint64_t bitmap = Cell(w.rack.reg_bitmap, i);
    const uint64_t count = Cell(w.rack.reg_count, i);
    const uint64_t overflow = Cell(w.rack.reg_overflow, i);
    if (id == 0) {  // free: all fields 0 (Fig. 4 (10))
      Check(bitmap == 0 && count == 0 && overflow == 0);
      for (uint16_t e = 0; values && e < kElements; ++e) Check(Cell(w.rack.reg_value, i, e) == 0);
      continue;
    }
    ++used;
    const auto job = static_cast<uint16_t>(id >> 32);
    const auto seq = static_cast<uint32_t>(id);
    Check(job == kJob);  // the only job the table aggregates
    Check(AtpAggregatorIndex(job, seq, w.aggregators) == i);
    Check(bitmap != 0 && (count & 0x7f) == static_cast<uint64_t>(std::popcount(bitmap)));
  }
  const AtpCounters& c = w.atp->counters();
  Check(used <= w.atp->aggregators());
  if (values) Check(used == w.atp->AggregatorsInUse());  // the same scan, through the program
  Check(c.claimed >= c.param_dealloc + c.resend_dealloc);
  Check(used == c.claimed - c.param_dealloc - c.resend_dealloc);
  Check(c.completed <= c.claimed + c.aggregated);
}

void CheckPs(World& w) {
  uint64_t gradients = 0;
  uint64_t bad = 0;
  uint64_t params_sent = 0;
  uint64_t failures = 0;
  for (const AtpJobConfig* job : {&w.job, &w.plain_job}) {
    const AtpPsStats& s = *w.ps->ps_stats(job->spec.job_id);
    Check(s.gradients == s.originals + s.partials + s.full);
    Check(s.float_packets <= s.gradients);
    // Each gradient has one fate; completing it is one of them.
    Check(s.duplicates + s.partial_overlaps + s.overflow_ignored + s.slot_busy + s.history_misses +
              s.param_resends + s.completed <=
          s.gradients);
    Check(s.completed_by_switch <= s.completed);
    Check(s.elements_by_switch + s.elements_at_ps == s.completed * kElements);
    Check(s.params_sent == s.completed + s.param_resends);
    gradients += s.gradients;
    bad += s.bad_packets;
    params_sent += s.params_sent;
    failures += s.send_failures;
  }
  Check(params_sent == w.ps_tx.sends);
  Check(failures == w.ps_tx.refused);
  const AtpContextCounters& c = w.ps->counters();
  Check(c.frames == w.ps_frames);
  Check(c.frames == gradients + bad + c.not_atp + c.unknown_job);
  for (const auto& frame : w.ps_tx.sent) {
    AtpFrameView view;
    Check(ParseAtpFrame(frame, &view));
    const AtpHeader& h = *view.header;
    Check(h.Has(kAtpFlagParam) && h.Has(kAtpFlagFloat));
    Check(h.JobId() == kJob || h.JobId() == kPlainJob);
    // Flagged only for a seq whose overflowed aggregate the PS ignored (redone from originals).
    if (h.Has(kAtpFlagOverflow)) Check(w.ps->ps_stats(h.JobId())->overflow_ignored > 0);
    Check(h.Bitmap() == w.job.full_bitmap && h.NumElements() == kElements);
    Check(frame.size() == AtpFrameLen(kElements));
  }
  w.ps_tx.sent.clear();
}

void CheckWorker(World& w) {
  const AtpWorkerStats& s = *w.worker->worker_stats(kJob);
  uint64_t submitted = 0;
  uint64_t done_elements = 0;
  uint64_t nonempty = 0;
  for (std::size_t i = 0; i < w.num_calls; ++i) {
    const AllReduceJob& call = *w.calls[i].job;
    submitted += call.size();
    if (call.size() == 0) {
      Check(call.done());
      continue;
    }
    // Calls finish in order: exactly the first calls_completed non-empty ones are done.
    Check(call.done() == (nonempty < s.calls_completed));
    ++nonempty;
    if (call.done()) {
      done_elements += call.size();
      Check(call.finish_ns() >= call.start_ns());
    }
  }
  Check(s.calls_completed <= nonempty);
  Check(done_elements <= s.elements_completed && s.elements_completed <= submitted);
  Check(s.packets_sent == w.worker_tx.sends);
  Check(s.send_failures == w.worker_tx.refused);
  Check(s.retransmissions <= s.packets_sent && s.float_packets <= s.packets_sent);
  // A fast retransmit resends UNA; a timeout resends UNA at least.
  Check(s.fast_retransmits + s.timeouts <= s.retransmissions);
  Check(s.duplicate_params + s.stale_params <= s.params_received);
  Check(s.rtt_samples <= s.params_received);
  const AtpWorker& worker = *w.worker->worker(kJob);
  const uint64_t frame_len = worker.frame_len();
  Check(frame_len == AtpFrameLen(kElements));
  for (uint32_t l = 0; l < worker.lanes(); ++l) {
    Check(worker.window_bytes(l) >= frame_len);
    Check(worker.window_bytes(l) <= uint64_t{w.worker_options.max_window_packets} * frame_len);
  }
  const AtpContextCounters& c = w.worker->counters();
  Check(c.frames == w.worker_frames);
  Check(c.frames == s.params_received + c.not_atp + c.unknown_job);
  const AtpWorkerSetup& setup = w.Setup(w.me);
  for (const auto& frame : w.worker_tx.sent) {
    AtpFrameView view;
    Check(ParseAtpFrame(frame, &view));
    const AtpHeader& h = *view.header;
    Check(!h.Has(kAtpFlagParam) && !h.Has(kAtpFlagEdge) && !h.Has(kAtpFlagOverflow));
    Check(h.JobId() == kJob && h.NumElements() == kElements);
    Check(h.worker_id == w.me && h.Bitmap() == (uint32_t{1} << w.me));
    Check(h.fan_in0 == setup.fan_in0 && h.fan_in1 == setup.fan_in1);
    Check(h.Seq() < w.next_seq);
  }
  w.worker_tx.sent.clear();
}

void CheckAll(World& w, bool values) {
  CheckSwitch(w);
  CheckAggregators(w, values);
  CheckPs(w);
  CheckWorker(w);
}

// ---- Ops. Each is one byte: bits 0-6 pick the op (mod kOps); bit 7 set defers the network
// (the op's frames wait, and the next op's join them in one burst per port). "base" is the
// first seq of the worker's oldest call not done; a value mode is Values's (bits 7-6: 0 small,
// 1 near INT32_MAX, 2 near INT32_MIN, 3 raw: 4 B per element follow the mode byte).
enum Op : uint8_t {
  kPeer,      // [worker][seq offset][value mode]: worker (bits 0-1, mod W)'s gradient of seq
              // base + offset; worker bit 7: resend flag, bit 6: float flag, bit 5: IP CE
  kCustom,    // CustomAtp's operands: any header into the switch
  kParam,     // ParamPacket's operands: a parameter packet into the switch from the PS's port
  kRaw,       // [port][len] + len bytes: a raw frame into the switch
  kMutated,   // [worker][seq offset][n] + (n & 7) x [offset][xor]: a kPeer frame, bytes flipped
  kToHost,    // [target] + CustomAtp's operands (target bit 1 clear) or [len] + len raw bytes:
              // straight to the worker (target bit 0) or the PS
  kToWorker,  // ParamPacket's operands: a parameter packet straight to the worker
  kTime,      // [delta]: virtual time on by (delta + 1) x 32 us, the worker's timers run
  kSubmit,    // [n][mode]: the worker's next AllReduce call (at most kMaxCalls) of n floats;
              // mode bits 0-1: small, 1e10 (float path), alternating, all = mode >> 2
  kLoss,      // [ps mask][worker mask][link mask]: rotating loss patterns (bit set = lost)
  kOps,
};

void RunOp(World& w, Input& in, uint8_t op) {
  switch (op) {
    case kPeer: {
      const uint8_t b = in.U8();
      AtpSpec s = PeerGradient(w, b & 3u, w.BaseSeq() + in.U8());
      if (b & 0x80) s.f.flags |= kAtpFlagResend;
      if (b & 0x40) s.f.flags |= kAtpFlagFloat;
      if (b & 0x20) s.tos = 0b11;
      s.values = Values(in, in.U8(), kElements);
      ToSwitch(w, static_cast<PortId>(s.f.worker_id % 4), BuildFrame(s));
      break;
    }
    case kCustom: {
      PortId port = 0;
      const AtpSpec s = CustomAtp(in, &port);
      ToSwitch(w, port, BuildFrame(s));
      break;
    }
    case kParam:
      ToSwitch(w, kPsPort, BuildFrame(ParamPacket(w, in)));
      break;
    case kRaw: {
      const PortId port = static_cast<PortId>(in.U8() % 5);
      ToSwitch(w, port, in.Take(in.U8()));
      break;
    }
    case kMutated: {
      const uint8_t b = in.U8();
      AtpSpec s = PeerGradient(w, b & 3u, w.BaseSeq() + in.U8());
      s.values = Values(in, 0x21, kElements);
      std::vector<uint8_t> frame = BuildFrame(s);
      const uint8_t n = in.U8() & 7;
      for (uint8_t i = 0; i < n; ++i) {
        const uint8_t at = in.U8();
        frame[at % frame.size()] ^= in.U8();
      }
      ToSwitch(w, static_cast<PortId>(b % 4), std::move(frame));
      break;
    }
    case kToHost: {
      const uint8_t target = in.U8();
      std::vector<uint8_t> frame;
      if (target & 2) {
        frame = in.Take(in.U8());
      } else {
        PortId ignored = 0;
        frame = BuildFrame(CustomAtp(in, &ignored));
      }
      if (target & 1) {
        DeliverToWorker(w, frame);
      } else {
        DeliverToPs(w, frame);
      }
      break;
    }
    case kToWorker:
      DeliverToWorker(w, BuildFrame(ParamPacket(w, in)));
      break;
    case kTime:
      RunTimers(w, w.now() + (TimeNs{in.U8()} + 1) * 32'000);
      break;
    case kSubmit: {
      const uint8_t n = in.U8();
      Submit(w, n, in.U8());
      break;
    }
    case kLoss:
      w.ps_tx.loss = in.U8();
      w.worker_tx.loss = in.U8();
      w.link_loss = in.U8();
      break;
    default:
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  Input in(data, size);
  const uint8_t c0 = in.U8();
  const uint8_t c1 = in.U8();
  World w(c0, c1);
  w.worker->Pump(w.now());
  while (!in.empty()) {
    const uint8_t op = in.U8();
    w.clock.Advance(1000);  // virtual time moves on every step
    RunOp(w, in, static_cast<uint8_t>((op & 0x7f) % kOps));
    if ((op & 0x80) != 0 && !in.empty()) continue;
    w.worker->Pump(w.now());
    RunNetwork(w);
    CheckAll(w, false);
  }
  RunNetwork(w);
  CheckAll(w, true);
  return 0;
}
