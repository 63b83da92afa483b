#include "hostlib/atp/context.h"

#include <algorithm>
#include <string>

#include "hostlib/atp/atp_frame.h"

namespace swemu {

Context::Context(AtpHostConfig host, Transport* transport) : host_(host), transport_(transport) {}

void Context::SetTransport(Transport* transport) {
  transport_ = transport;
  for (auto& w : workers_) w->SetTransport(transport);
  for (auto& s : servers_) s->SetTransport(transport);
}

Status Context::JoinJob(const AtpJobConfig& job, AtpWorkerOptions options) {
  const std::string name = "atp job " + std::to_string(job.spec.job_id);
  if (FindWorker(job.spec.job_id) != nullptr) return Status::Error(name + ": already joined");
  const int index = job.FindWorker(host_.ip);
  if (index < 0) return Status::Error(name + ": " + FormatIpv4(host_.ip) + " is not a worker");
  if (options.lanes == 0 || options.lanes > 255) {
    return Status::Error(name + ": lanes must be 1..255");
  }
  workers_.push_back(
      std::make_unique<AtpWorker>(job, static_cast<uint32_t>(index), transport_, options));
  return Status::Ok();
}

Status Context::ServeJob(const AtpJobConfig& job, AtpPsOptions options) {
  const std::string name = "atp job " + std::to_string(job.spec.job_id);
  if (FindPs(job.spec.job_id) != nullptr) return Status::Error(name + ": already served");
  if (job.spec.ps.ip != host_.ip) {
    return Status::Error(name + ": its ps is " + FormatIpv4(job.spec.ps.ip) + ", not " +
                         FormatIpv4(host_.ip));
  }
  servers_.push_back(std::make_unique<AtpPs>(job, transport_, options));
  return Status::Ok();
}

AllReduceJob* Context::AllReduce(uint16_t job_id, const float* in, float* out, std::size_t n) {
  AtpWorker* worker = FindWorker(job_id);
  if (worker == nullptr) return nullptr;
  AllReduceJob* call = &calls_.emplace_back();
  worker->Submit(call, in, out, n);
  return call;
}

AtpWorker* Context::FindWorker(uint16_t job_id) const noexcept {
  for (const auto& w : workers_) {
    if (w->job_id() == job_id) return w.get();
  }
  return nullptr;
}

AtpPs* Context::FindPs(uint16_t job_id) const noexcept {
  for (const auto& s : servers_) {
    if (s->job_id() == job_id) return s.get();
  }
  return nullptr;
}

const AtpWorkerStats* Context::worker_stats(uint16_t job_id) const {
  const AtpWorker* w = FindWorker(job_id);
  return w == nullptr ? nullptr : &w->stats();
}

const AtpPsStats* Context::ps_stats(uint16_t job_id) const {
  const AtpPs* s = FindPs(job_id);
  return s == nullptr ? nullptr : &s->stats();
}

const AtpWorker* Context::worker(uint16_t job_id) const { return FindWorker(job_id); }

void Context::OnFrame(TimeNs now, std::span<const uint8_t> frame) noexcept {
  ++counters_.frames;
  AtpFrameView view;
  if (!ParseAtpFrame(frame, &view)) {
    ++counters_.not_atp;
    return;
  }
  const AtpHeader& h = *view.header;
  // One parse for every job of this host: the job's worker or PS gets the header.
  if (h.Has(kAtpFlagParam)) {
    AtpWorker* w = FindWorker(h.JobId());
    if (w == nullptr) {
      ++counters_.unknown_job;
    } else if (!AtpFrameOnPort(view, w->udp_port())) {
      ++counters_.not_atp;
    } else {
      w->OnParam(now, h, view.ce);
    }
    return;
  }
  AtpPs* s = FindPs(h.JobId());
  if (s == nullptr) {
    ++counters_.unknown_job;
  } else if (!AtpFrameOnPort(view, s->udp_port())) {
    ++counters_.not_atp;
  } else {
    s->OnGradient(h, view.ce);
  }
}

void Context::OnTimer(TimeNs now) noexcept {
  for (auto& w : workers_) {
    if (w->NextTimer() <= now) w->OnTimer(now);
  }
}

TimeNs Context::NextTimer() const noexcept {
  TimeNs next = kNever;
  for (const auto& w : workers_) next = std::min(next, w->NextTimer());
  return next;
}

void Context::Pump(TimeNs now) noexcept {
  for (auto& w : workers_) w->Pump(now);
}

}  // namespace swemu
