// Switch::CountersJson: every counter a researcher asks for, in one deterministic document.
#include "pipeline/core/json_writer.h"
#include "pipeline/switch/switch.h"

namespace swemu {

std::string Switch::CountersJson() const {
  JsonWriter json;
  json.BeginObject();
  json.String("switch", config_.name).String("program", config_.program);
  json.BeginArray("ports");
  for (std::size_t p = 0; p < counters_.ports.size(); ++p) {
    const PortCounters& c = counters_.ports[p];
    json.BeginObject()
        .Uint("port", p)
        .Uint("rx_packets", c.rx_packets)
        .Uint("rx_bytes", c.rx_bytes)
        .Uint("tx_packets", c.tx_packets)
        .Uint("tx_bytes", c.tx_bytes);
    json.BeginArray("queues");
    for (int q = 0; q < kQueuesPerPort; ++q) {
      const QueueCounters& qc = tm_->queue_counters(static_cast<PortId>(p), q);
      json.BeginObject()
          .Uint("queue", q)
          .Uint("enqueued", qc.enqueued)
          .Uint("dequeued", qc.dequeued)
          .Uint("marked", qc.marked)
          .Uint("dropped", qc.dropped)
          .Uint("max_depth_pkts", qc.max_depth_pkts)
          .Uint("max_depth_bytes", qc.max_depth_bytes)
          .EndObject();
    }
    json.EndArray().EndObject();
  }
  json.EndArray();
  json.BeginObject("drops");
  for (std::size_t i = 1; i < kDropReasonCount; ++i) {
    uint64_t count = Drops(static_cast<DropReason>(i));
    if (count != 0) json.Uint(DropReasonName(static_cast<DropReason>(i)), count);
  }
  json.EndObject();
  const ProgramCounters& pc = counters_.program;
  json.BeginObject("program")
      .Uint("ingress_packets", pc.ingress_packets)
      .Uint("egress_packets", pc.egress_packets)
      .Uint("to_tm", pc.to_tm)
      .Uint("consumed", pc.consumed)
      .Uint("recirculated", pc.recirculated)
      .Uint("multicast_copies", MulticastCopies())
      .Uint("queued", tm_->TotalQueued())
      .EndObject();
  if (cpu_->attached()) {  // only a program with a control plane has these
    const CpuCounters& cc = cpu_->counters();
    json.BeginObject("cpu")
        .Uint("packet_in", cc.packet_in)
        .Uint("packet_out", cc.packet_out)
        .Uint("to_ingress", cc.to_ingress)
        .Uint("created", cc.created)
        .Uint("freed", cc.freed)
        .Uint("dropped", cc.dropped)
        .Uint("held", cc.held())
        .EndObject();
  }
  if (digests_ != nullptr) {  // only a program whose data plane sends digests has these
    const DigestCounters& dc = digests_->counters();
    json.BeginObject("digests")
        .Uint("emitted", dc.emitted)
        .Uint("deduplicated", dc.deduplicated)
        .Uint("dropped_by_limit", dc.dropped_by_limit)
        .Uint("delivered", dc.delivered)
        .EndObject();
    json.BeginObject("control_plane");
    program_->WriteControlPlaneCounters(json);
    json.EndObject();
  }
  json.BeginObject("tables");
  for (const MatchTable* table : resources_.Tables()) {
    json.BeginObject(table->spec().name)
        .Uint("entries", table->entries())
        .Uint("hits", table->hits())
        .Uint("misses", table->misses())
        .EndObject();
  }
  json.EndObject();
  json.EndObject();
  return json.str();
}

}  // namespace swemu
