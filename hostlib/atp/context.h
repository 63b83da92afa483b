#pragma once
// The ATP host API, in the spirit of SwitchML's: one Context per host, an Endpoint driven by
// the engine (co-simulation) or an EventLoop (real time), sending through a Transport. A host
// may be a worker of several jobs and the PS of several jobs at once; received frames go to
// the job by id, to its worker (parameter packets) or its PS (gradients).
//
//   Context ctx({mac, ip}, transport);
//   ctx.JoinJob(job);                          // this host is one of job's workers (by IP)
//   AllReduceJob* r = ctx.AllReduce(job.spec.job_id, grads, sums, n);
//   r->Wait(loop, timeout);                    // or run the engine until r->done()
//   ps_ctx.ServeJob(job);                      // on the PS host
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <vector>

#include "hostlib/atp/job_config.h"
#include "hostlib/atp/ps.h"
#include "hostlib/atp/worker.h"
#include "hostlib/common/endpoint.h"

namespace swemu {

struct AtpHostConfig {
  MacAddr mac;
  Ipv4Addr ip = 0;
};

struct AtpContextCounters {
  uint64_t frames = 0;
  uint64_t not_atp = 0;      // not Ethernet/IPv4/UDP/ATP, or on no job's port
  uint64_t unknown_job = 0;  // ATP for a job this host neither works for nor serves
};

class Context final : public Endpoint {
 public:
  // `transport` may be null now and set before the first send (SetTransport).
  Context(AtpHostConfig host, Transport* transport);
  void SetTransport(Transport* transport);

  // This host (found by its IP in job's worker list) becomes one of the job's workers.
  Status JoinJob(const AtpJobConfig& job, AtpWorkerOptions options = {});
  // This host becomes the job's PS.
  Status ServeJob(const AtpJobConfig& job, AtpPsOptions options = {});

  // Sums `in` over the job's workers into `out` (n floats each; both must stay valid until
  // done). Calls of one job run in order. nullptr when this host is not a worker of the job.
  // The handle lives as long as the Context.
  AllReduceJob* AllReduce(uint16_t job_id, const float* in, float* out, std::size_t n);

  const AtpWorkerStats* worker_stats(uint16_t job_id) const;
  const AtpPsStats* ps_stats(uint16_t job_id) const;
  const AtpWorker* worker(uint16_t job_id) const;
  const AtpContextCounters& counters() const { return counters_; }

  // Endpoint
  void OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept override;
  void OnTimer(TimeNs now) noexcept override;
  TimeNs NextTimer() const noexcept override;
  void Pump(TimeNs now) noexcept override;

 private:
  AtpWorker* FindWorker(uint16_t job_id) const noexcept;
  AtpPs* FindPs(uint16_t job_id) const noexcept;

  AtpHostConfig host_;
  Transport* transport_;
  std::vector<std::unique_ptr<AtpWorker>> workers_;
  std::vector<std::unique_ptr<AtpPs>> servers_;
  std::deque<AllReduceJob> calls_;  // stable addresses
  AtpContextCounters counters_;
};

}  // namespace swemu
