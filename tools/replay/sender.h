#pragma once
// swemu-replay's send loop: frames from the source are staged ahead, each is handed to the
// output at its deadline (measured from the first frame's hand-over on the monotonic clock), and
// every hand-over is timed, so the run reports how well it kept the schedule. While it waits it
// receives what the output brings in; after sending, it receives until the line is quiet.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/core/clock.h"
#include "pipeline/core/status.h"
#include "tools/replay/frame_source.h"
#include "tools/common/ns_histogram.h"
#include "tools/replay/output.h"
#include "tools/replay/pacer.h"

namespace swemu::replay {

struct SenderOptions {
  uint64_t loops = 1;              // passes through the pcap; 0: until --duration or a signal
  TimeNs duration_ns = 0;          // stop sending this long after the first frame; 0: no limit
  TimeNs wait_ns = 1'000'000'000;  // after sending, receive until nothing came this long; 0: stop
  uint64_t expect = 0;             // stop receiving after this many frames; 0: until quiet
};

// What the send loop did. Times are nanoseconds after the first frame's hand-over; gaps and
// lateness per frame, as handed to the device (a burst's frames share its hand-over time).
// A device that takes no frame this long while frames wait loses them (--wait, at least this).
inline constexpr TimeNs kMinStallNs = 100'000'000;

struct SendReport {
  uint64_t packets = 0;
  uint64_t bytes = 0;
  uint64_t bytes_before_last = 0;  // rates count the frames before the last one over the span
  TimeNs last_sent = 0;            // the span: first to last hand-over
  TimeNs last_due = 0;             // the scheduled span
  NsHistogram<6> gap_error;          // |actual gap - intended gap| between consecutive frames
  NsHistogram<6> lateness;           // hand-over time - deadline
  uint64_t unsent = 0;             // the device took nothing for StallNs(): dropped
  uint64_t failed = 0;             // the device refused them (error)
  std::string failure;             // why, for the last refused one
};

// Monotonic nanoseconds (CLOCK_MONOTONIC).
TimeNs MonotonicNs();

class Sender {
 public:
  // `source` may be null (nothing to send, only receive).
  Sender(const SenderOptions& options, const PaceSpec& pace, FrameSource* source,
         ReplayOutput& output, const std::atomic<bool>& stop)
      : options_(options),
        pacer_(pace),
        one_per_call_(pace.pace != Pace::kTopSpeed),
        source_(source),
        output_(output),
        stop_(stop) {}

  // Sends, then receives until quiet. An error is the source's (a corrupt record while
  // streaming); the report holds what was sent until then.
  Status Run();
  const SendReport& report() const { return report_; }
  uint64_t received() const { return received_; }

 private:
  struct Pending {
    TimeNs due;
    uint32_t bytes;
  };
  Status Send();
  // Reads and stages frames until kMaxBurst are pending or the source is done; false when no
  // more frames will come (end, --duration, an error in *status).
  bool Fill(Status* status);
  void SendDue();
  void Record(const Pending& frame, TimeNs sent);
  void WaitUntil(TimeNs deadline);
  void ReceiveUntilQuiet();
  bool Receive();
  TimeNs StallNs() const { return std::max(options_.wait_ns, kMinStallNs); }

  SenderOptions options_;
  Pacer pacer_;
  // Paced (not --topspeed): one frame per call even when several are due (the sender fell
  // behind), so the copy of the next frame falls between two sends instead of a batch's copy
  // between two batches: gaps stay even, as the schedule asks, at the cost of some rate.
  bool one_per_call_;
  FrameSource* source_;
  ReplayOutput& output_;
  const std::atomic<bool>& stop_;
  std::vector<Pending> pending_;  // staged in the output, in order
  bool held_ = false;             // a frame read but not yet staged (no free buffer)
  SourceFrame held_frame_;
  TimeNs held_due_ = 0;
  uint64_t passes_done_ = 0;
  bool started_ = false;
  TimeNs start_ = 0;  // monotonic time of the first hand-over
  TimeNs prev_due_ = 0;
  TimeNs prev_sent_ = 0;
  SendReport report_;
  uint64_t received_ = 0;
};

}  // namespace swemu::replay
