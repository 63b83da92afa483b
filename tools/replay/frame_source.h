#pragma once
// The frames swemu-replay sends, one pass through the pcap per --loop. By default the file is
// streamed: each pass reads it again with a new reader, so a pcap of any size needs no more
// memory than one frame. With --preload every frame is read (and fixed, --fixlen) first and the
// passes replay them from memory.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/core/status.h"
#include "pipeline/engine/pcap_fixlen.h"
#include "pipeline/engine/pcap_io.h"

namespace swemu::replay {

struct SourceFrame {
  TimeNs ts_ns = 0;
  const uint8_t* data = nullptr;
  uint32_t len = 0;
};

class FrameSource {
 public:
  // Opens `path` and checks it (its header and link type; with preload, every record, and that
  // no frame is longer than `max_len`, the most the output takes).
  static Result<std::unique_ptr<FrameSource>> Open(const std::string& path, bool preload,
                                                   Fixlen fixlen, uint32_t max_len);

  // The next frame of the current pass (valid until the next call); false at the end of the
  // pass or on a read error (then status() is not ok). Streamed frames longer than max_len are
  // skipped and counted (too_long()).
  bool Next(SourceFrame* frame);
  // Starts the next pass.
  Status Rewind();

  const Status& status() const { return status_; }
  // What --fixlen did to the file's frames (its first pass).
  const FixlenCounts& fixlen_counts() const { return fixlen_counts_; }
  // Streamed frames skipped as longer than max_len, over every pass.
  uint64_t too_long() const { return too_long_; }
  Fixlen fixlen() const { return fixlen_; }

 private:
  struct Stored {
    TimeNs ts_ns;
    std::size_t offset;
    uint32_t len;
  };
  FrameSource(std::string path, Fixlen fixlen, uint32_t max_len)
      : path_(std::move(path)), fixlen_(fixlen), max_len_(max_len) {}
  Status Load(std::unique_ptr<PcapReader> reader);

  std::string path_;
  Fixlen fixlen_;
  uint32_t max_len_;
  Status status_;
  FixlenCounts fixlen_counts_;
  uint64_t too_long_ = 0;
  // Streaming.
  std::unique_ptr<PcapReader> reader_;
  PcapRecord record_;
  uint64_t passes_ = 0;  // passes started before the current one
  // Preloaded: every frame's bytes back to back.
  bool preloaded_ = false;
  std::vector<uint8_t> arena_;
  std::vector<Stored> frames_;
  std::size_t next_ = 0;
};

}  // namespace swemu::replay
