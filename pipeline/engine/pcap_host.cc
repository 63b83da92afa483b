#include "pipeline/engine/pcap_host.h"

namespace swemu {

Status PcapHost::Start(HostContext& ctx) {
  ctx_ = &ctx;
  if (!output_path_.empty()) {
    Result<std::unique_ptr<PcapWriter>> writer = PcapWriter::Open(output_path_);
    if (!writer.ok()) return writer.status();
    output_ = std::move(*writer);
  }
  ReadAhead();
  return Status::Ok();
}

void PcapHost::ReadAhead() {
  if (input_ == nullptr) return;
  if (input_->Next(&record_)) {
    ctx_->ScheduleTimer(record_.ts_ns, 0);
  } else if (!input_->status().ok()) {
    ctx_->Fail(input_->status());
  }
}

void PcapHost::OnTimer(TimeNs /*now*/, uint64_t /*cookie*/) {
  FixFrameLength(fixlen_, &record_, &fixlen_counts_);
  ctx_->SendFrame(record_.bytes.data(), static_cast<uint32_t>(record_.bytes.size()));
  ReadAhead();
}

void PcapHost::OnFrame(TimeNs now, Packet* pkt) {
  if (output_ != nullptr) output_->Write(now, pkt->data, pkt->len);
  ctx_->pool().Free(pkt);
}

Status PcapHost::Finish() {
  if (output_ == nullptr) return Status::Ok();
  return output_->Close();
}

}  // namespace swemu
