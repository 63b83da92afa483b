#pragma once
// A host that replays a pcap into its port (each record at its timestamp) and records what the
// port sends into another pcap. Either side may be absent. Records cut short by the capture's
// snap length are sent as `fixlen` says (pipeline/engine/pcap_fixlen.h).
#include <memory>
#include <string>

#include "pipeline/engine/engine_host.h"
#include "pipeline/engine/pcap_fixlen.h"
#include "pipeline/engine/pcap_io.h"

namespace swemu {

class PcapHost final : public EngineHost {
 public:
  // `input` may be null (a pure sink); an empty `output_path` discards received frames.
  PcapHost(std::unique_ptr<PcapReader> input, std::string output_path,
           Fixlen fixlen = Fixlen::kNone)
      : input_(std::move(input)), output_path_(std::move(output_path)), fixlen_(fixlen) {}

  Status Start(HostContext& ctx) override;
  void OnFrame(TimeNs now, Packet* pkt) override;
  void OnTimer(TimeNs now, uint64_t cookie) override;
  Status Finish() override;
  // The records sent so far, as --fixlen counts them.
  const FixlenCounts& fixlen_counts() const { return fixlen_counts_; }

 private:
  void ReadAhead();

  std::unique_ptr<PcapReader> input_;
  std::string output_path_;
  Fixlen fixlen_;
  FixlenCounts fixlen_counts_;
  std::unique_ptr<PcapWriter> output_;
  HostContext* ctx_ = nullptr;
  PcapRecord record_;
};

}  // namespace swemu
