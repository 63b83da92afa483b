#include "tools/replay/frame_source.h"

namespace swemu::replay {

Result<std::unique_ptr<FrameSource>> FrameSource::Open(const std::string& path, bool preload,
                                                       Fixlen fixlen, uint32_t max_len) {
  Result<std::unique_ptr<PcapReader>> reader = PcapReader::Open(path);
  if (!reader.ok()) return reader.status();
  std::unique_ptr<FrameSource> source(new FrameSource(path, fixlen, max_len));
  if (preload) {
    SWEMU_RETURN_IF_ERROR(source->Load(std::move(*reader)));
  } else {
    source->reader_ = std::move(*reader);
  }
  return source;
}

Status FrameSource::Load(std::unique_ptr<PcapReader> reader) {
  preloaded_ = true;
  PcapRecord record;
  while (reader->Next(&record)) {
    FixFrameLength(fixlen_, &record, &fixlen_counts_);
    if (record.bytes.size() > max_len_) {
      return Status::Error(path_ + ": frame " + std::to_string(reader->records_read()) + " has " +
                           std::to_string(record.bytes.size()) + " bytes, more than the " +
                           std::to_string(max_len_) + " the output takes");
    }
    frames_.push_back({record.ts_ns, arena_.size(), static_cast<uint32_t>(record.bytes.size())});
    arena_.insert(arena_.end(), record.bytes.begin(), record.bytes.end());
  }
  return reader->status();
}

bool FrameSource::Next(SourceFrame* frame) {
  if (preloaded_) {
    if (next_ == frames_.size()) return false;
    const Stored& stored = frames_[next_++];
    *frame = {stored.ts_ns, arena_.data() + stored.offset, stored.len};
    return true;
  }
  if (reader_ == nullptr || !status_.ok()) return false;
  while (reader_->Next(&record_)) {
    FixlenCounts again;  // the counts describe the file: its first pass
    FixFrameLength(fixlen_, &record_, passes_ == 0 ? &fixlen_counts_ : &again);
    if (record_.bytes.size() > max_len_) {
      ++too_long_;
      continue;
    }
    *frame = {record_.ts_ns, record_.bytes.data(), static_cast<uint32_t>(record_.bytes.size())};
    return true;
  }
  status_ = reader_->status();
  reader_.reset();
  return false;
}

Status FrameSource::Rewind() {
  if (preloaded_) {
    next_ = 0;
    return Status::Ok();
  }
  Result<std::unique_ptr<PcapReader>> reader = PcapReader::Open(path_);
  if (!reader.ok()) return status_ = reader.status();
  reader_ = std::move(*reader);
  ++passes_;
  return Status::Ok();
}

}  // namespace swemu::replay
