#include "tools/gen/link.h"

#include <memory>

#include "pipeline/engine/pcap_io.h"
#include "tools/gen/gen_common.h"

namespace swemu::gen {

Result<LinkTotals> RunLink(std::span<FrameSource* const> sources, uint64_t rate_bps,
                           PcapWriter& writer, const std::string& name, const std::string& advice) {
  LinkClock link(rate_bps);
  LinkTotals totals;
  std::vector<uint8_t> frame;
  while (true) {
    FrameSource* next = nullptr;
    TimeNs due = 0;
    for (FrameSource* source : sources) {
      if (source->Done()) continue;
      const TimeNs d = source->Due();
      if (next == nullptr || d < due) {
        next = source;
        due = d;
      }
    }
    if (next == nullptr) break;
    const TimeNs at = link.Start(due);
    SWEMU_RETURN_IF_ERROR(
        CheckPcapTime(at, name + "'s frame " + std::to_string(totals.frames + 1), advice));
    next->Next(at, &frame);
    link.Occupy(frame.size());
    writer.Write(at, frame.data(), static_cast<uint32_t>(frame.size()));
    ++totals.frames;
    totals.last_ns = at;
  }
  return totals;
}

Status MergePcaps(const std::vector<std::string>& inputs, const std::string& out,
                  const std::string& out_name) {
  std::vector<std::unique_ptr<PcapReader>> readers;
  std::vector<PcapRecord> heads(inputs.size());
  std::vector<bool> live(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    Result<std::unique_ptr<PcapReader>> reader = PcapReader::Open(inputs[i]);
    if (!reader.ok()) return Status::Error(out_name + ": " + reader.message());
    readers.push_back(std::move(*reader));
    live[i] = readers[i]->Next(&heads[i]);
    SWEMU_RETURN_IF_ERROR(readers[i]->status());
  }
  Result<std::unique_ptr<PcapWriter>> writer = PcapWriter::Open(out);
  if (!writer.ok()) return Status::Error(out_name + ": cannot write (" + writer.message() + ")");
  while (true) {
    std::size_t first = inputs.size();
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (live[i] && (first == inputs.size() || heads[i].ts_ns < heads[first].ts_ns)) first = i;
    }
    if (first == inputs.size()) break;
    const PcapRecord& r = heads[first];
    (*writer)->Write(r.ts_ns, r.bytes.data(), static_cast<uint32_t>(r.bytes.size()), r.orig_len);
    live[first] = readers[first]->Next(&heads[first]);
    SWEMU_RETURN_IF_ERROR(readers[first]->status());
  }
  return (*writer)->Close();
}

}  // namespace swemu::gen
