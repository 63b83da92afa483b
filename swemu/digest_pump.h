#pragma once
// Real time's control plane for digests (pipeline/program/digest.h): a thread that, every
// period, drains each replica's digest channel on its own lcore (through its mailbox), orders
// the records by time and hands them to every replica with `digest_deliver` (the command path
// every table change takes, so all replicas apply the same records in the same order), and
// tells them the time with `control_time` (aging). Started only for a program with a channel.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/core/status.h"
#include "pipeline/program/digest.h"

namespace swemu {

struct DigestPumpHooks {
  uint32_t replicas = 1;
  // Runs `drain` on replica i's lcore, which appends its channel's records; false once the
  // replica stopped.
  std::function<bool(uint32_t i, std::vector<DigestRecord>* out)> drain;
  // One command line on every replica (ExecuteEverywhere).
  std::function<Result<std::string>(const std::string& line)> execute;
  std::function<TimeNs()> now;  // the switch's clock
};

class DigestPump {
 public:
  static constexpr uint32_t kRecordsPerLine = 32;

  DigestPump(DigestPumpHooks hooks, TimeNs period_ns, TimeNs tick_ns);
  ~DigestPump() { Stop(); }
  DigestPump(const DigestPump&) = delete;
  DigestPump& operator=(const DigestPump&) = delete;

  void Start();
  void Stop();
  // One round: drain, deliver, and tell the time when a tick is due. False once a replica
  // stopped. Public for tests.
  bool RunOnce();

  // The `digest_deliver` lines of `records` (sorted by time), kRecordsPerLine at most each.
  static std::vector<std::string> DeliverLines(const std::vector<DigestRecord>& records,
                                               TimeNs now);

 private:
  void Run();

  DigestPumpHooks hooks_;
  TimeNs period_ns_;
  TimeNs tick_ns_;
  TimeNs next_tick_ = 0;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace swemu
