#include "pipeline/switch/switch.h"

#include <algorithm>

#include "pipeline/switch/switch_commands.h"

namespace swemu {

Status SwitchConfig::Validate() const {
  if (name.empty()) return Status::Error("switch.name: must not be empty");
  if (num_ports == 0 || num_ports > 1024) {
    return Status::Error("switch.ports: " + std::to_string(num_ports) + " is not in [1, 1024]");
  }
  if (pipeline.ingress_stages == 0 || pipeline.ingress_stages > 64) {
    return Status::Error("switch.ingress_stages: must be in [1, 64]");
  }
  if (pipeline.egress_stages > 64) return Status::Error("switch.egress_stages: must be <= 64");
  if (parser.parse_depth < 14) return Status::Error("switch.parse_depth: must be >= 14 bytes");
  SWEMU_RETURN_IF_ERROR(ValidateRouterInterfaces(interfaces, num_ports));
  TmConfig tm_config = tm;
  tm_config.num_ports = num_ports;
  return tm_config.Validate();
}

Switch::Switch(SwitchConfig config, PacketPool& pool, const Clock& clock)
    : config_(std::move(config)),
      pool_(pool),
      clock_(clock),
      parser_(config_.parser),
      deparser_(config_.deparser) {
  counters_.ports.resize(config_.num_ports);
}

Switch::~Switch() { FreeQueued(); }

Result<std::unique_ptr<Switch>> Switch::Create(SwitchConfig config, PacketPool& pool,
                                               const Clock& clock) {
  config.tm.num_ports = config.num_ports;
  SWEMU_RETURN_IF_ERROR(config.Validate());
  std::unique_ptr<Switch> sw(new Switch(std::move(config), pool, clock));
  SWEMU_RETURN_IF_ERROR(sw->Load());
  return sw;
}

Status Switch::Load() {
  Result<std::unique_ptr<TrafficManager>> tm = TrafficManager::Create(config_.tm, pool_);
  if (!tm.ok()) return tm.status();
  tm_ = std::move(*tm);
  Result<std::unique_ptr<Program>> program = MakeProgram(config_.program);
  if (!program.ok()) return program.status();
  program_ = std::move(*program);
  cpu_ = std::make_unique<CpuPath>(*this, config_.cpu);
  ProgramBuilder builder(config_.program, config_.pipeline, resources_);
  ProgramContext ctx{builder,           config_.program_options, parser_,
                     *tm_,              commands_,               config_.num_ports,
                     config_.seed,      *cpu_,                   config_.interfaces};
  Status loaded = program_->Load(ctx);
  Status fits = builder.Finish();
  report_ = builder.report();
  if (!loaded.ok()) return Status::Error("program " + config_.program + ": " + loaded.message());
  SWEMU_RETURN_IF_ERROR(config_.program_options.CheckAllUsed(config_.program));
  SWEMU_RETURN_IF_ERROR(fits);
  parse_ = program_->NeedsParser();
  user_words_ = program_->UserMetadataWords();  // Packet::ResetState clamps it
  has_registers_ = !resources_.Registers().empty();
  profile_ = std::make_unique<StageProfile>(resources_);
  digests_ = program_->digest_channel();
  return AddSwitchCommands(*this, commands_);
}

void Switch::ServiceDigests(TimeNs now) {
  if (digests_->NextDue() <= now) {
    std::vector<DigestRecord> due = digests_->Drain(now);
    program_->OnDigests(due, now);
  }
  program_->OnControlTime(now);
}

void Switch::Drop(Packet* pkt) noexcept {
  counters_.CountDrop(pkt->meta.drop_reason);
  pool_.Free(pkt);
}

void Switch::ReceiveBurst(Packet** pkts, uint32_t n, PortId ingress_port) noexcept {
  CycleScope timed_call(profile_->switch_call(PipeElement::kReceiveCall), n);
  const TimeNs now = clock_.NowNs();
  if (ingress_port >= config_.num_ports) {
    for (uint32_t i = 0; i < n; ++i) {
      pkts[i]->meta.MarkDrop(DropReason::kIngressPortDown);
      Drop(pkts[i]);
    }
    return;
  }
  uint64_t rx_bytes = 0;  // in a local: ResetState's stores may alias a counter in memory
  {
    CycleScope timed(profile_->element(PipeElement::kPassStart), n);
    for (uint32_t i = 0; i < n; ++i) {
      StartPass(*pkts[i], ingress_port, now);
      rx_bytes += pkts[i]->len;
    }
  }
  ReceiveStarted(pkts, n, ingress_port, rx_bytes);
}

void Switch::ReceiveStarted(Packet** pkts, uint32_t n, PortId ingress_port,
                            uint64_t bytes) noexcept {
  PortCounters& port = counters_.ports[ingress_port];
  port.rx_packets += n;
  port.rx_bytes += bytes;
  for (uint32_t done = 0; done < n; done += kMaxBurst) {
    Ingress(pkts + done, std::min(kMaxBurst, n - done));
  }
}

void Switch::ReceiveParsedBurst(Packet** pkts, uint32_t n) noexcept {
  const TimeNs now = clock_.NowNs();
  for (uint32_t i = 0; i < n; ++i) {
    Packet* pkt = pkts[i];
    pkt->meta.ingress_ts = now;
    PortCounters& port = counters_.ports[pkt->meta.ingress_port];  // ShardKeyOf checked it
    ++port.rx_packets;
    port.rx_bytes += pkt->len;
  }
  for (uint32_t done = 0; done < n; done += kMaxBurst) {
    Ingress(pkts + done, std::min(kMaxBurst, n - done), true);
  }
}

void Switch::ReceiveRecirculated(Packet** pkts, uint32_t n) noexcept {
  const TimeNs now = clock_.NowNs();
  for (uint32_t i = 0; i < n; ++i) pkts[i]->meta.ingress_ts = now;
  for (uint32_t done = 0; done < n; done += kMaxBurst) {
    Ingress(pkts + done, std::min(kMaxBurst, n - done), true);
  }
}

void Switch::Ingress(Packet** pkts, uint32_t n, bool parsed_before) noexcept {
  counters_.program.ingress_packets += n;
  Packet* parsed[kMaxBurst];
  // A program without a parser (wire) takes the burst as it came: no pass to filter it.
  Packet** batch = pkts;
  uint32_t m = n;
  if (parse_ || parsed_before) {
    CycleScope timed(profile_->element(PipeElement::kParser), n);
    batch = parsed;
    m = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const bool ok = parsed_before ? !pkts[i]->meta.dropped() : parser_.Parse(*pkts[i]);
      if (ok) {
        parsed[m++] = pkts[i];
      } else {
        Drop(pkts[i]);
      }
    }
  }
  {
    profile_->EnterPass(Gress::kIngress);
    CycleScope timed(profile_->element(PipeElement::kIngressProgram), m);
    program_->IngressBurst(batch, m);
  }
  CycleCounter* const enqueue_cycles = profile_->element(PipeElement::kTmEnqueue);
  // The same pass notes whether what goes to the TM is one run (unicast, one port and queue),
  // as a burst from one port to one port is: the TM then takes it without looking for runs.
  // Counters add up in locals (in memory, the packets' stores may alias them).
  // The run test folds into one word: any bit left in `off_run` (a multicast group, another
  // port or queue than the burst's first packet's) makes the burst more than one run. (When the
  // first packet does not go to the TM, a run of the others may count as several: it then
  // takes EnqueueBurst, correct and a little slower.)
  EgressRouter* const router = router_;
  uint32_t queued = 0;
  uint32_t to_tm = 0;
  uint64_t bytes = 0;
  const uint32_t run_key = m != 0 ? TrafficManager::RunKey(batch[0]->meta) : 0;
  uint32_t off_run = 0;
  {
    CycleScope timed(enqueue_cycles, m);
    for (uint32_t i = 0; i < m; ++i) {
      Packet* pkt = batch[i];
      if (!ForTm(pkt)) continue;
      ++to_tm;
      if (router != nullptr && RouteAway(pkt)) continue;
      off_run |= (TrafficManager::RunKey(pkt->meta) ^ run_key) | pkt->meta.mcast_grp;
      bytes += pkt->len;
      parsed[queued++] = pkt;
    }
  }
  const bool one_run = off_run == 0;
  counters_.program.to_tm += to_tm;
  if (queued == 0) return;
  // One TM call per burst, at the burst's arrival time (one clock read per burst).
  const TimeNs now = parsed[0]->meta.ingress_ts;
  if (one_run) {
    // Cut-through runs egress and the deparser here, which time themselves.
    if (sink_ != nullptr && CutThrough(parsed, queued, bytes, now)) return;
    CycleScope timed(enqueue_cycles, 0);
    tm_->EnqueueRun(parsed, queued, bytes, now);
  } else {
    CycleScope timed(enqueue_cycles, 0);
    tm_->EnqueueBurst(parsed, queued, now);
  }
}

bool Switch::ForTm(Packet* pkt) noexcept {
  Metadata& meta = pkt->meta;
  // kCpuPort and kPortUnset are the two highest port ids: one compare keeps both off this path.
  if (meta.Unusual() == 0 && meta.egress_spec < kCpuPort) [[likely]]
    return true;
  if (meta.dropped()) [[unlikely]] {
    Drop(pkt);
  } else if (meta.egress_spec == kCpuPort && meta.mcast_grp == 0 && !meta.consumed) {
    DropReason refused = DropReason::kNone;
    if (!cpu_->Enqueue(pkt, &refused)) {
      meta.MarkDrop(refused);
      Drop(pkt);
    }
  } else if (meta.consumed) [[unlikely]] {
    ++counters_.program.consumed;
    pool_.Free(pkt);
  } else if (meta.mcast_grp == 0 && meta.egress_spec == kPortUnset) [[unlikely]] {
    meta.MarkDrop(DropReason::kNoEgressPort);
    Drop(pkt);
  } else {
    return true;
  }
  return false;
}

bool Switch::RouteAway(Packet* pkt) noexcept {
  Metadata& meta = pkt->meta;
  if (meta.mcast_grp != 0) {
    if (tm_->McCopies(meta.mcast_grp).empty()) return false;  // the TM drops it, as unsharded
    ReplicateAway(pkt);
    return true;
  }
  if (meta.egress_spec >= config_.num_ports || router_->IsLocal(meta.egress_spec)) return false;
  if (!router_->Forward(pkt)) {
    meta.MarkDrop(DropReason::kShardRingFull);
    Drop(pkt);
  }
  return true;
}

// As the TM replicates (clones of the untouched original, the original last), but each copy
// goes to its port's owner as a unicast packet, so the owner's TM queues it.
void Switch::ReplicateAway(Packet* pkt) noexcept {
  const std::span<const McCopy> copies = tm_->McCopies(pkt->meta.mcast_grp);
  counters_.program.multicast_copies += copies.size() - 1;
  for (std::size_t i = 0; i < copies.size(); ++i) {
    Packet* copy = i + 1 == copies.size() ? pkt : pool_.Clone(*pkt);
    if (copy == nullptr) [[unlikely]] {
      counters_.CountDrop(DropReason::kMulticastCloneFailed);
      continue;
    }
    Metadata& meta = copy->meta;
    meta.mcast_grp = 0;
    meta.egress_spec = copies[i].port;
    meta.egress_rid = copies[i].rid;
    if (router_->IsLocal(copies[i].port)) {
      tm_->Enqueue(copy, meta.ingress_ts);
    } else if (!router_->Forward(copy)) {
      meta.MarkDrop(DropReason::kShardRingFull);
      Drop(copy);
    }
  }
}

void Switch::RecirculateAway(Packet* pkt) noexcept {
  if (parse_ && !parser_.Parse(*pkt)) {
    ++counters_.program.ingress_packets;  // as Ingress counts a packet it cannot parse
    Drop(pkt);
    return;
  }
  const uint32_t key = program_->ShardKey(*pkt);
  if (router_->IsLocalShard(key)) {
    Ingress(&pkt, 1, true);
  } else if (!router_->Recirculate(pkt, key)) {
    pkt->meta.MarkDrop(DropReason::kShardRingFull);
    Drop(pkt);
  }
}

uint32_t Switch::ShardKeyOf(Packet& pkt, PortId ingress_port) noexcept {
  pkt.ResetState(user_words_);
  pkt.meta.ingress_port = ingress_port;
  // A packet the parser refused is dropped where it arrived (Scatter): any key will do.
  if (parse_ && !parser_.Parse(pkt)) return 0;
  return program_->ShardKey(pkt);
}

bool Switch::CutThrough(Packet** pkts, uint32_t n, uint64_t bytes, TimeNs now) noexcept {
  const PortId port = pkts[0]->meta.egress_spec;
  if (port >= config_.num_ports || !sink_->Ready(port) || !tm_->PassThrough(pkts, n, bytes, now)) {
    return false;
  }
  const uint32_t k = Egress(port, pkts, n, now);
  if (k != 0) sink_->Send(port, pkts, k);
  return true;
}

uint32_t Switch::TransmitBurst(PortId port, Packet** out, uint32_t max) noexcept {
  if (port >= config_.num_ports) return 0;
  CycleScope timed_call(profile_->switch_call(PipeElement::kTransmitCall), 0);
  const TimeNs now = clock_.NowNs();
  uint32_t n = 0;
  // Packets the egress drops, consumes or recirculates leave gaps: dequeue again to fill them.
  while (n < max) {
    uint32_t k;
    {
      CycleScope timed(profile_->element(PipeElement::kTmDequeue), 0);
      k = tm_->DequeueBurst(port, now, out + n, max - n);
    }
    if (k == 0) break;
    n += Egress(port, out + n, k, now);
  }
  return n;
}

uint32_t Switch::Egress(PortId port, Packet** pkts, uint32_t k, TimeNs now) noexcept {
  counters_.program.egress_packets += k;
  // Egress is a new pass over its own stages (only registers read the mask).
  if (has_registers_) {
    for (uint32_t i = 0; i < k; ++i) pkts[i]->meta.register_access_mask = 0;
  }
  {
    profile_->EnterPass(Gress::kEgress);
    CycleScope timed(profile_->element(PipeElement::kEgressProgram), k);
    program_->EgressBurst(pkts, k);
  }
  CycleScope timed(profile_->element(PipeElement::kDeparser), k);
  uint32_t n = 0;  // n <= i: compacting never overwrites an unread packet
  uint64_t tx_bytes = 0;
  for (uint32_t i = 0; i < k; ++i) {
    Packet* pkt = pkts[i];
    // The usual packet (nothing to drop, count, consume or recirculate, no checksum to redo)
    // leaves as it is; any other goes field by field.
    if ((pkt->meta.Unusual() == 0 && Deparser::Untouched(*pkt)) || AfterEgress(pkt, port, now)) {
      pkts[n++] = pkt;
      tx_bytes += pkt->len;
    }
  }
  PortCounters& counters = counters_.ports[port];
  counters.tx_packets += n;
  counters.tx_bytes += tx_bytes;
  return n;
}

bool Switch::AfterEgress(Packet* pkt, PortId port, TimeNs now) noexcept {
  Metadata& meta = pkt->meta;
  if (meta.dropped()) {
    Drop(pkt);
    return false;
  }
  if (meta.ecn_marked) tm_->CountMarked(port, meta.queue_id);
  if (meta.consumed) [[unlikely]] {
    ++counters_.program.consumed;
    pool_.Free(pkt);
    return false;
  }
  if (meta.recirculate) [[unlikely]] {
    Recirculate(pkt, now);
    return false;
  }
  deparser_.Deparse(*pkt);
  return true;
}

void Switch::Recirculate(Packet* pkt, TimeNs now) noexcept {
  Metadata& meta = pkt->meta;
  const uint8_t count = meta.recirculate_count;
  if (count >= config_.pipeline.max_recirculations) {
    meta.MarkDrop(DropReason::kRecirculationLimit);
    Drop(pkt);
    return;
  }
  const PortId ingress_port = meta.ingress_port;
  pkt->ResetState(user_words_);
  pkt->meta.ingress_port = ingress_port;
  pkt->meta.ingress_ts = now;
  pkt->meta.recirculate_count = static_cast<uint8_t>(count + 1);
  ++counters_.program.recirculated;
  if (router_ != nullptr) {
    RecirculateAway(pkt);
  } else {
    Ingress(&pkt, 1);
  }
}

TimeNs Switch::NextTransmitTime(PortId port) const noexcept {
  if (port >= config_.num_ports) return kNever;
  return tm_->NextDequeueTime(port, clock_.NowNs());
}

uint64_t Switch::Drops(DropReason reason) const {
  return counters_.pipeline_drops[static_cast<std::size_t>(reason)] + tm_->drops(reason);
}

uint64_t Switch::TotalDrops() const {
  uint64_t total = 0;
  for (std::size_t i = 0; i < kDropReasonCount; ++i) total += Drops(static_cast<DropReason>(i));
  return total;
}

void Switch::ResetCounters() {
  for (std::size_t i = 0; i < kDropReasonCount; ++i) {
    retired_.drops[i] += Drops(static_cast<DropReason>(i));
  }
  retired_.consumed += counters_.program.consumed;
  retired_.copies += MulticastCopies();
  ++retired_.resets;
  std::size_t ports = counters_.ports.size();
  counters_ = SwitchCounters();
  counters_.ports.resize(ports);
  tm_->ResetCounters();
  for (MatchTable* table : resources_.Tables()) table->ResetCounters();
  cpu_->ResetCounters();
}

void Switch::FreeQueued() {
  if (tm_) tm_->FreeAll();
  if (cpu_) cpu_->FreeAll();
}

}  // namespace swemu
