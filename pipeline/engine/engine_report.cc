// Engine reports: counters.json, the per-port summary for humans, and the conservation check.
#include <cstdio>

#include "pipeline/core/json_writer.h"
#include "pipeline/engine/engine.h"
#include "pipeline/engine/host_slot.h"

namespace swemu {
namespace {

std::string StripNewline(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

void AppendDrops(std::string* out, const std::array<uint64_t, kDropReasonCount>& drops) {
  bool any = false;
  for (std::size_t i = 1; i < kDropReasonCount; ++i) {
    if (drops[i] == 0) continue;
    *out += any ? ", " : " ";
    *out +=
        std::string(DropReasonName(static_cast<DropReason>(i))) + " " + std::to_string(drops[i]);
    any = true;
  }
  if (!any) *out += " none";
  *out += '\n';
}

}  // namespace

std::string Engine::Describe(const Attachment& attachment) const {
  switch (attachment.kind) {
    case AttachKind::kLink:
      return "link " + switches_[attachment.peer].sw->name() + ":" +
             std::to_string(attachment.peer_port);
    case AttachKind::kHost:
      return "host";
    case AttachKind::kNone:
      break;
  }
  return "-";
}

std::string Engine::CountersJson() const {
  const EngineCounters totals = counters();
  JsonWriter json;
  json.BeginObject();
  json.BeginObject("switches");
  for (std::size_t i = 0; i < switches_.size(); ++i) {
    const SwitchSlot& slot = switches_[i];
    json.Raw(slot.sw->name(),
             StripNewline(Runs(slot) ? slot.sw->CountersJson() : remote_[i].counters_json));
  }
  json.EndObject();
  json.BeginObject("engine")
      .Uint("time_ns", Now())
      .Uint("injected", totals.injected)
      .Uint("delivered", totals.delivered)
      .Uint("link_frames", totals.link_frames)
      .Uint("in_flight", totals.in_flight);
  json.BeginObject("drops");
  for (std::size_t i = 1; i < kDropReasonCount; ++i) {
    if (totals.drops[i] != 0) {
      json.Uint(DropReasonName(static_cast<DropReason>(i)), totals.drops[i]);
    }
  }
  json.EndObject();
  json.BeginArray("hosts");
  for (const auto& host : hosts_) {
    // Loss both ways: on the host's way to the switch, and on the switch port's way to it.
    const uint64_t lost_to_host = switches_[host->sw_].ports[host->port_].lost;
    json.BeginObject()
        .String("switch", switches_[host->sw_].sw->name())
        .Uint("port", host->port_)
        .Uint("sent", host->sent_)
        .Uint("received", host->received_)
        .Uint("lost", host->lost_ + lost_to_host)
        .Uint("lost_sent", host->lost_)
        .Uint("lost_to_host", lost_to_host)
        .EndObject();
  }
  json.EndArray();
  json.BeginArray("links");
  for (const SwitchSlot& slot : switches_) {
    for (PortId p = 0; p < slot.ports.size(); ++p) {
      const Attachment& end = slot.ports[p];
      if (end.kind != AttachKind::kLink) continue;
      json.BeginObject()
          .String("from", slot.sw->name() + ":" + std::to_string(p))
          .String("to", switches_[end.peer].sw->name() + ":" + std::to_string(end.peer_port))
          .Uint("sent", end.sent)
          .Uint("lost", end.lost)
          .EndObject();
    }
  }
  json.EndArray();
  json.EndObject();
  json.EndObject();
  return json.str();
}

std::string Engine::SwitchSummary(const SwitchSlot& slot) const {
  std::string out;
  char line[160];
  const Switch& sw = *slot.sw;
  out += "switch " + sw.name() + " (program " + sw.config().program + ", " +
         std::to_string(sw.num_ports()) + " ports)\n";
  std::snprintf(line, sizeof(line), "  %4s  %-16s %10s %12s %10s %12s %10s\n", "port", "attached",
                "rx_pkts", "rx_bytes", "tx_pkts", "tx_bytes", "ecn_marked");
  out += line;
  for (PortId p = 0; p < sw.num_ports(); ++p) {
    const PortCounters& c = sw.counters().ports[p];
    uint64_t marked = 0;
    for (int q = 0; q < kQueuesPerPort; ++q) marked += sw.tm().queue_counters(p, q).marked;
    std::snprintf(
        line, sizeof(line), "  %4u  %-16s %10llu %12llu %10llu %12llu %10llu\n", unsigned{p},
        Describe(slot.ports[p]).c_str(), static_cast<unsigned long long>(c.rx_packets),
        static_cast<unsigned long long>(c.rx_bytes), static_cast<unsigned long long>(c.tx_packets),
        static_cast<unsigned long long>(c.tx_bytes), static_cast<unsigned long long>(marked));
    out += line;
  }
  std::array<uint64_t, kDropReasonCount> drops = {};
  for (std::size_t i = 0; i < kDropReasonCount; ++i) {
    drops[i] = sw.Drops(static_cast<DropReason>(i));
  }
  out += "  drops:";
  AppendDrops(&out, drops);
  out += "  consumed " + std::to_string(sw.counters().program.consumed) + ", queued " +
         std::to_string(sw.tm().TotalQueued()) + "\n";
  return out;
}

std::string Engine::PortSummary() const {
  const EngineCounters totals = counters();
  std::string out;
  for (std::size_t i = 0; i < switches_.size(); ++i) {
    out += Runs(switches_[i]) ? SwitchSummary(switches_[i]) : remote_[i].summary;
  }
  out += "engine: injected " + std::to_string(totals.injected) + ", delivered " +
         std::to_string(totals.delivered) + ", link frames " +
         std::to_string(totals.link_frames) + ", in flight " +
         std::to_string(totals.in_flight) + "\n  drops:";
  AppendDrops(&out, totals.drops);
  return out;
}

Engine::Tally Engine::SwitchTally(const SwitchSlot& slot) const {
  const Switch& sw = *slot.sw;
  const CpuCounters& cpu = sw.cpu().counters();
  Tally tally;
  tally.copies = sw.tm().multicast_copies();
  tally.consumed = sw.counters().program.consumed;
  tally.dropped = sw.TotalDrops();
  tally.queued = sw.tm().TotalQueued();
  tally.cpu_created = cpu.created;
  tally.cpu_freed = cpu.freed;
  tally.cpu_held = cpu.held();
  return tally;
}

Status Engine::CheckConservation() const {
  const EngineCounters totals = counters();
  uint64_t in_use = remote_in_use_;
  for (const auto& part : parts_) in_use += part->local ? part->pool.InUse() : 0;
  uint64_t copies = 0;
  uint64_t consumed = 0;
  uint64_t dropped = totals.TotalDrops();
  uint64_t queued = 0;
  uint64_t cpu_created = 0;  // the control planes' packets: made, freed, held now
  uint64_t cpu_freed = 0;
  uint64_t cpu_held = 0;
  for (std::size_t i = 0; i < switches_.size(); ++i) {
    const Tally tally = Runs(switches_[i]) ? SwitchTally(switches_[i]) : remote_[i].tally;
    copies += tally.copies;
    consumed += tally.consumed;
    dropped += tally.dropped;
    queued += tally.queued;
    cpu_created += tally.cpu_created;
    cpu_freed += tally.cpu_freed;
    cpu_held += tally.cpu_held;
  }
  queued += cpu_held;
  const uint64_t in = totals.injected + copies + cpu_created;
  const uint64_t out =
      totals.delivered + consumed + dropped + queued + totals.in_flight + cpu_freed;
  if (in != out) {
    return Status::Error("conservation: injected " + std::to_string(totals.injected) +
                         " + multicast copies " + std::to_string(copies) +
                         " + control-plane packets " + std::to_string(cpu_created) +
                         " != delivered " +
                         std::to_string(totals.delivered) + " + consumed " +
                         std::to_string(consumed) + " + dropped " + std::to_string(dropped) +
                         " + queued (control plane too) " + std::to_string(queued) +
                         " + freed by a control plane " + std::to_string(cpu_freed) +
                         " + in flight " + std::to_string(totals.in_flight));
  }
  const uint64_t held = queued + totals.in_flight;
  if (in_use != held) {
    return Status::Error("conservation: the pools hold " + std::to_string(in_use) +
                         " packets but " + std::to_string(held) + " are queued or in flight");
  }
  return Status::Ok();
}

}  // namespace swemu
