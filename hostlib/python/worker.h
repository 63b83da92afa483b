#pragma once
// swemu.Worker's C++ side: one ATP worker of an AtpFabric's job in this process, on a DPDK
// virtio_user port to the fabric's swemu (its own EAL, dpdk_process.h) or a kernel UDP socket on
// loopback. A loop thread (loop_thread.h) drives the worker's Context all the time, so calls
// progress while Python computes; Submit queues a call there and Wait blocks until it is done.
//
// Calls sum float32 buffers in place over the job's workers, in submission order (the job's
// seqs run on across calls, so every worker must make the same calls in the same order). A call
// is split into AllReduce calls of at most kChunkPackets packets, so the PS's history of
// parameter packets (AtpPsOptions::history) always covers the current and the previous one.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hostlib/atp/context.h"
#include "hostlib/python/loop_thread.h"
#include "hostlib/python/worker_spec.h"
#include "pipeline/core/status.h"

namespace swemu {
class DpdkHost;
class UdpSocketTransport;
}  // namespace swemu

namespace swemu::python {

inline constexpr uint32_t kChunkPackets = 16384;

using Counters = std::vector<std::pair<std::string, uint64_t>>;

// The counters of a host's port (DPDK) or socket (kernel UDP), whichever it has, appended to c.
void AppendTransportCounters(DpdkHost* dpdk, UdpSocketTransport* udp, Counters* c);

struct WorkerOptions {
  uint32_t lanes = 2;
  bool busy_poll = false;
  uint32_t dpdk_memory_mb = 128;
};

// One call as Python sees it.
struct CallState {
  // Set at Submit, then read-only.
  std::size_t n = 0;
  uint32_t packets = 0;
  // Elements the switch cannot add as int32 at the job's scale: NaN or inf (they reach the sum
  // as they are), and finite ones past int32 (their packets take the float path to the PS).
  uint64_t nonfinite = 0;
  uint64_t past_int32 = 0;
  uint64_t elements_before = 0;  // elements of the calls submitted before this one
  std::chrono::steady_clock::time_point submitted;
  // Loop thread only.
  std::vector<AllReduceJob*> chunks;
  // Under the loop thread's mutex.
  bool done = false;
  bool abandoned = false;  // the worker closed first: the buffer was left half-written
  double seconds = 0;      // submission to completion
  // Packets whose int32 sum overflowed in a switch (kAtpFlagOverflow), redone at the PS.
  uint64_t switch_overflows = 0;
};

// The file that says a Worker of `rank` joined the job since the fabric's last start or reset
// (next to the job file; AtpFabric removes them).
std::string JoinedMarker(const std::string& job_file, uint32_t rank);

class FabricWorker {
 public:
  static Result<std::unique_ptr<FabricWorker>> Open(const WorkerSpec& spec, uint32_t rank,
                                                    const WorkerOptions& options);
  ~FabricWorker();
  FabricWorker(const FabricWorker&) = delete;
  FabricWorker& operator=(const FabricWorker&) = delete;

  // Queues data[0, n) to be summed in place; the buffer must stay valid and untouched until
  // the call is done or the worker closed.
  Result<std::shared_ptr<CallState>> Submit(float* data, std::size_t n);
  // Blocks up to `timeout` (no lock held by the caller); true when done or abandoned.
  bool WaitFor(const CallState& call, std::chrono::nanoseconds timeout);
  bool Done(const CallState& call);
  // What a call that did not complete within timeout_s was waiting for, for the error.
  std::string Unfinished(const CallState& call, double timeout_s);
  Result<Counters> Stats();
  // Stops the loop and closes the port; calls still running are abandoned. Idempotent.
  Status Close();

  uint32_t rank() const { return rank_; }
  uint32_t workers() const { return job_.num_workers(); }
  const AtpJobConfig& job() const { return job_; }
  const std::string& transport() const { return transport_; }
  bool closed() const { return closed_; }

 private:
  FabricWorker() = default;
  // Open, once the rank's marker is made.
  static Result<std::unique_ptr<FabricWorker>> OpenJoined(const WorkerSpec& spec, uint32_t rank,
                                                          const WorkerOptions& options,
                                                          const AtpJobConfig& job);
  Status StartLoop();
  void Tick();                                        // loop thread: completes calls
  Counters Snapshot() const;                          // loop thread
  std::string Describe(const CallState& call) const;  // loop thread

  std::string transport_;
  uint32_t rank_ = 0;
  AtpJobConfig job_;
  WorkerOptions options_;
  std::unique_ptr<DpdkHost> dpdk_;
  std::unique_ptr<UdpSocketTransport> udp_;
  std::unique_ptr<Context> ctx_;
  LoopThread loop_;
  std::vector<std::shared_ptr<CallState>> running_;  // loop thread only, in order
  uint64_t submitted_elements_ = 0;                  // Python thread
  uint64_t submitted_packets_ = 0;                   // the job's seqs used so far (at most 2^32)
  std::atomic<uint64_t> calls_submitted_{0};         // Python thread writes, loop thread reads
  uint64_t calls_completed_ = 0;                     // loop thread
  std::atomic<uint64_t> calls_empty_{0};             // done at Submit
  bool dpdk_registered_ = false;
  bool closed_ = false;
  std::string close_error_;
};

}  // namespace swemu::python
