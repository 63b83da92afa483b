// The engine's side of a run spread over ranks (engine.h, "Ranks"): the frames that cross to
// another rank's partition after each window, the agreement on the next window, and the reports
// of the whole network once a run ends.
#include <algorithm>
#include <chrono>

#include "pipeline/engine/engine.h"
#include "pipeline/engine/host_slot.h"

namespace swemu {
namespace {

using WallClock = std::chrono::steady_clock;

double SecondsSince(WallClock::time_point start) {
  return std::chrono::duration<double>(WallClock::now() - start).count();
}

}  // namespace

// A frame for another rank: its partition, the event, the packet's parse state and metadata,
// then its bytes. The sender frees it at once.
void Engine::SendAcrossRanks() {
  const WallClock::time_point start = WallClock::now();
  const uint32_t sent = parity_ ^ 1;  // the window that just ran
  std::vector<std::vector<uint8_t>> to_rank(ranks_->ranks());
  for (uint32_t k : local_parts_) {
    Partition& part = *parts_[k];
    part.outbox_first[sent] = kNever;
    for (uint32_t to = 0; to < parts_.size(); ++to) {
      std::vector<Event>& box = part.outbox[sent][to];
      if (parts_[to]->local) {
        for (const Event& event : box) {
          part.outbox_first[sent] = std::min(part.outbox_first[sent], event.time);
        }
        continue;
      }
      WireWriter out(to_rank[to % ranks_->ranks()]);
      for (const Event& event : box) {
        out.Value(to);
        out.Value(event.time);
        out.Value(event.seq);
        out.Value(event.node);
        out.Value(event.port);
        out.Value(event.kind);
        out.Value(event.pkt->len);
        out.Value(event.pkt->hdr);
        out.Value(event.pkt->meta);
        out.Bytes(event.pkt->data, event.pkt->len);
        part.pool.Free(event.pkt);
      }
      box.clear();
    }
  }
  for (uint32_t r = 0; r < to_rank.size(); ++r) {
    if (r == ranks_->rank() || to_rank[r].empty()) continue;
    ++window_stats_.rank_messages;
    window_stats_.rank_bytes += to_rank[r].size();
  }
  const std::vector<std::vector<uint8_t>> from_rank = ranks_->Exchange(to_rank);
  for (const std::vector<uint8_t>& frames : from_rank) TakeFromRank(frames);
  window_stats_.rank_sync_s += SecondsSince(start);
}

// Straight into the agendas: a frame sent in a window arrives no sooner than its end.
void Engine::TakeFromRank(std::span<const uint8_t> frames) {
  WireReader in(frames);
  while (!in.done()) {
    const auto to = in.Value<uint32_t>();
    Event event;
    event.time = in.Value<TimeNs>();
    event.seq = in.Value<uint64_t>();
    event.node = in.Value<uint32_t>();
    event.port = in.Value<PortId>();
    event.kind = in.Value<EventKind>();
    const auto len = in.Value<uint32_t>();
    const auto hdr = in.Value<ParsedHeaders>();
    const auto meta = in.Value<Metadata>();
    std::span<const uint8_t> bytes = in.Bytes(len);
    if (!in.ok() || to >= parts_.size() || !parts_[to]->local) {
      Partition& first = *parts_[local_parts_[0]];
      if (first.failure.ok()) {
        first.failure = Status::Error("internal error: a malformed frame from another rank");
      }
      return;
    }
    Partition& part = *parts_[to];
    Packet* pkt = part.pool.FromBytes(bytes.data(), len);
    if (pkt == nullptr) {
      const DropReason reason =
          len > part.pool.MaxFrame() ? DropReason::kFrameTooLong : DropReason::kPoolExhausted;
      ++part.counters.drops[static_cast<std::size_t>(reason)];
      continue;
    }
    pkt->hdr = hdr;
    pkt->meta = meta;
    event.pkt = pkt;
    ++part.counters.in_flight;
    ++part.crossings;
    part.events.PushKeyed(event);
  }
}

// The earliest event due on any rank, whether any failed, and the counts the limits read.
Engine::WindowTerms Engine::AgreeOnWindow(WindowTerms mine) {
  const WallClock::time_point start = WallClock::now();
  const uint64_t words[] = {mine.next, mine.failed, mine.events, mine.due};
  const std::vector<uint64_t> all = ranks_->AllGather(words);
  WindowTerms agreed;
  for (std::size_t at = 0; at + 4 <= all.size(); at += 4) {
    agreed.next = std::min<TimeNs>(agreed.next, all[at]);
    agreed.failed += all[at + 1];
    agreed.events += all[at + 2];
    agreed.due += all[at + 3];
  }
  window_stats_.rank_sync_s += SecondsSince(start);
  return agreed;
}

Status Engine::AgreedFailure(const Status& mine) {
  Status agreed = AgreeStatus(*ranks_, mine);
  return agreed.ok() ? Status::Error("internal error: a rank failed without saying why") : agreed;
}

// This rank's part of the reports: its clock and counts, then each switch it runs and each of
// its hosts, by index.
void Engine::WriteReport(WireWriter& out) const {
  TimeNs now = 0;
  uint64_t events = 0, stale = 0, in_use = 0;
  EngineCounters counts;
  for (uint32_t k : local_parts_) {
    const Partition& part = *parts_[k];
    now = std::max(now, part.clock.NowNs());
    events += part.events_processed;
    stale += part.stale_services;
    in_use += part.pool.InUse();
    counts.Add(part.counters);
  }
  out.Value(now);
  out.Value(events);
  out.Value(stale);
  out.Value(in_use);
  out.Value(counts);
  for (uint32_t i = 0; i < switches_.size(); ++i) {
    const SwitchSlot& slot = switches_[i];
    if (!Runs(slot)) continue;
    out.Value(i);
    out.Text(slot.sw->CountersJson());
    out.Text(SwitchSummary(slot));
    out.Value(SwitchTally(slot));
    for (const Attachment& end : slot.ports) {
      out.Value(end.sent);
      out.Value(end.lost);
    }
  }
  out.Value(~uint32_t{0});
  for (const auto& host : hosts_) {
    if (!Runs(switches_[host->sw_])) continue;
    out.Value(host->index_);
    out.Value(host->sent_);
    out.Value(host->received_);
    out.Value(host->lost_);
  }
}

// Another rank's part: its switches' and hosts' counts go where this rank keeps them.
void Engine::ReadReport(WireReader& in) {
  const auto now = in.Value<TimeNs>();
  if (now > Now()) SetClocks(now);
  remote_events_ += in.Value<uint64_t>();
  remote_stale_ += in.Value<uint64_t>();
  remote_in_use_ += in.Value<uint64_t>();
  remote_counters_.Add(in.Value<EngineCounters>());
  for (auto i = in.Value<uint32_t>(); in.ok() && i < switches_.size(); i = in.Value<uint32_t>()) {
    RemoteSwitch& remote = remote_[i];
    remote.counters_json = in.Text();
    remote.summary = in.Text();
    remote.tally = in.Value<Tally>();
    for (Attachment& end : switches_[i].ports) {
      end.sent = in.Value<uint64_t>();
      end.lost = in.Value<uint64_t>();
    }
  }
  while (in.ok() && !in.done()) {
    const auto index = in.Value<uint32_t>();
    if (index >= hosts_.size()) break;
    HostSlot& host = *hosts_[index];
    host.sent_ = in.Value<uint64_t>();
    host.received_ = in.Value<uint64_t>();
    host.lost_ = in.Value<uint64_t>();
  }
}

void Engine::GatherRanks() {
  const WallClock::time_point start = WallClock::now();
  std::vector<uint8_t> mine;
  WireWriter out(mine);
  WriteReport(out);
  const std::vector<std::vector<uint8_t>> all =
      ranks_->Exchange(std::vector<std::vector<uint8_t>>(ranks_->ranks(), mine));
  remote_.assign(switches_.size(), RemoteSwitch{});
  remote_counters_ = EngineCounters{};
  remote_events_ = remote_stale_ = remote_in_use_ = 0;
  for (uint32_t r = 0; r < all.size(); ++r) {
    if (r == ranks_->rank()) continue;
    WireReader in(all[r]);
    ReadReport(in);
  }
  window_stats_.rank_sync_s += SecondsSince(start);
}

}  // namespace swemu
