#include "tools/replay/sender.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace swemu::replay {
namespace {

// The last stretch before a deadline is spun, not slept: a sleep wakes up tens of microseconds
// late, and a CPU left idle even for a moment takes in other work (a kernel thread that then
// holds it for a millisecond). So paces of 1000 pps and more spin all the time, as tcpreplay
// does; slower ones sleep until 1 ms before each deadline.
constexpr TimeNs kSpinNs = 1'000'000;
// Receive polls stop this close to a deadline, so a burst of arrivals cannot make a frame late.
constexpr TimeNs kReceiveMarginNs = 20'000;
// Longest nap while receiving, so arrivals are taken while a long gap passes.
constexpr TimeNs kReceiveNapNs = 1'000'000;
constexpr TimeNs kStallNapNs = 20'000;

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

void Nap(TimeNs ns) { std::this_thread::sleep_for(std::chrono::nanoseconds(ns)); }

}  // namespace

TimeNs MonotonicNs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<TimeNs>(now.tv_sec) * 1'000'000'000 + static_cast<TimeNs>(now.tv_nsec);
}

Status Sender::Run() {
  Status status;
  if (source_ != nullptr) status = Send();
  ReceiveUntilQuiet();
  return status;
}

bool Sender::Fill(Status* status) {
  while (pending_.size() < kMaxBurst) {
    if (!held_) {
      SourceFrame frame;
      if (!source_->Next(&frame)) {
        if (!source_->status().ok()) {
          *status = source_->status();
          return false;
        }
        pacer_.EndPass();
        ++passes_done_;
        if (options_.loops != 0 && passes_done_ >= options_.loops) return false;
        if (pacer_.frames() == 0) return false;  // a pass sends nothing: so would every other
        *status = source_->Rewind();
        if (!status->ok()) return false;
        continue;
      }
      held_due_ = pacer_.Next(frame.ts_ns, frame.len);
      if (options_.duration_ns != 0 && held_due_ >= options_.duration_ns) return false;
      held_frame_ = frame;
      held_ = true;
    }
    if (!output_.Stage(held_frame_.data, held_frame_.len)) return true;  // no free buffer yet
    pending_.push_back({held_due_, held_frame_.len});
    held_ = false;
  }
  return true;
}

Status Sender::Send() {
  Status status;
  bool more = true;
  TimeNs no_buffer_since = 0;
  while (!stop_) {
    if (more) more = Fill(&status);
    if (started_ && options_.duration_ns != 0 && MonotonicNs() - start_ >= options_.duration_ns) {
      break;
    }
    if (pending_.empty()) {
      if (!more || !held_) break;
      // Frames remain but no buffer is free: the device still holds them all.
      const TimeNs now = MonotonicNs();
      if (no_buffer_since == 0) no_buffer_since = now;
      Receive();
      if (now - no_buffer_since > StallNs()) {
        ++report_.unsent;
        held_ = false;
        no_buffer_since = 0;
      } else {
        Nap(kStallNapNs);
      }
      continue;
    }
    no_buffer_since = 0;
    SendDue();
  }
  output_.Drop(pending_.size());
  pending_.clear();
  return status;
}

void Sender::SendDue() {
  if (!started_) {
    started_ = true;
    start_ = MonotonicNs();
  }
  WaitUntil(start_ + pending_.front().due);
  if (stop_) return;
  const TimeNs now = MonotonicNs();
  std::size_t n = 1;  // the first frame, and at top speed every other one already due
  while (!one_per_call_ && n < pending_.size() && start_ + pending_[n].due <= now) ++n;
  std::size_t done = 0;
  TimeNs stalled_since = now;
  while (done < n && !stop_) {
    const TimeNs stamp = MonotonicNs();
    const SendResult result = output_.Send(n - done);
    for (std::size_t i = 0; i < result.sent; ++i) Record(pending_[done + i], stamp);
    done += result.sent;
    if (result.failed > 0) {
      report_.failed += result.failed;
      report_.failure = output_.error();
      done += result.failed;
    }
    if (result.sent + result.failed > 0) {
      stalled_since = MonotonicNs();
      continue;
    }
    Receive();  // a peer that loops frames back needs them drained
    const TimeNs stalled = MonotonicNs() - stalled_since;
    if (stalled > StallNs()) {
      output_.Drop(n - done);
      report_.unsent += n - done;
      done = n;
    } else if (stalled > 2 * kStallNapNs) {
      Nap(kStallNapNs);
    } else {
      CpuRelax();
    }
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(done));
}

void Sender::Record(const Pending& frame, TimeNs stamp) {
  const TimeNs sent = stamp > start_ ? stamp - start_ : 0;
  if (report_.packets > 0) {
    const auto intended = static_cast<int64_t>(frame.due - prev_due_);
    const auto actual = static_cast<int64_t>(sent - prev_sent_);
    report_.gap_error.Record(
        static_cast<uint64_t>(actual > intended ? actual - intended : intended - actual));
  }
  report_.lateness.Record(sent > frame.due ? sent - frame.due : 0);
  prev_due_ = frame.due;
  prev_sent_ = sent;
  report_.bytes_before_last = report_.bytes;
  report_.bytes += frame.bytes;
  ++report_.packets;
  report_.last_sent = sent;
  report_.last_due = frame.due;
}

bool Sender::Receive() {
  const uint32_t n = output_.Receive();
  received_ += n;
  return n > 0;
}

void Sender::WaitUntil(TimeNs deadline) {
  for (TimeNs now = MonotonicNs(); now < deadline && !stop_; now = MonotonicNs()) {
    const TimeNs left = deadline - now;
    if (left > kReceiveMarginNs && Receive()) continue;
    if (left > kSpinNs) {
      TimeNs nap = left - kSpinNs;
      if (output_.receives()) nap = std::min(nap, kReceiveNapNs);
      Nap(nap);
    } else {
      CpuRelax();
    }
  }
}

void Sender::ReceiveUntilQuiet() {
  if (!output_.receives() || options_.wait_ns == 0) return;
  TimeNs last = MonotonicNs();
  TimeNs backoff = 1000;
  while (!stop_ && (options_.expect == 0 || received_ < options_.expect)) {
    if (Receive()) {
      last = MonotonicNs();
      backoff = 1000;
      continue;
    }
    if (MonotonicNs() - last >= options_.wait_ns) break;
    Nap(backoff);
    backoff = std::min<TimeNs>(backoff * 2, 200'000);
  }
}

}  // namespace swemu::replay
