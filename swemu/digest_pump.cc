#include "swemu/digest_pump.h"

#include <algorithm>
#include <chrono>

namespace swemu {

DigestPump::DigestPump(DigestPumpHooks hooks, TimeNs period_ns, TimeNs tick_ns)
    : hooks_(std::move(hooks)), period_ns_(period_ns), tick_ns_(tick_ns) {}

void DigestPump::Start() { thread_ = std::thread([this] { Run(); }); }

void DigestPump::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::vector<std::string> DigestPump::DeliverLines(const std::vector<DigestRecord>& records,
                                                  TimeNs now) {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < records.size(); i += kRecordsPerLine) {
    std::string line = "digest_deliver " + std::to_string(now);
    for (std::size_t j = i; j < std::min(records.size(), i + kRecordsPerLine); ++j) {
      line += " " + std::to_string(records[j].time);
      for (uint64_t word : records[j].words) line += " " + std::to_string(word);
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

bool DigestPump::RunOnce() {
  std::vector<DigestRecord> records;
  for (uint32_t i = 0; i < hooks_.replicas; ++i) {
    if (!hooks_.drain(i, &records)) return false;
  }
  // By time, then by content: the same records give the same lines whichever lcore sent them.
  std::sort(records.begin(), records.end(), [](const DigestRecord& a, const DigestRecord& b) {
    return a.time != b.time ? a.time < b.time : a.words < b.words;
  });
  const TimeNs now = hooks_.now();
  for (const std::string& line : DeliverLines(records, now)) {
    if (!hooks_.execute(line).ok()) return false;
  }
  if (now >= next_tick_) {
    next_tick_ = now + tick_ns_;
    if (!hooks_.execute("control_time " + std::to_string(now)).ok()) return false;
  }
  return true;
}

void DigestPump::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    lock.unlock();
    const bool alive = RunOnce();
    lock.lock();
    if (!alive) return;
    wake_.wait_for(lock, std::chrono::nanoseconds(period_ns_), [this] { return stop_; });
  }
}

}  // namespace swemu
