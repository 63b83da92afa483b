#pragma once
// Shared by the ATP host tests: a job on one or two racks, a transport that records frames,
// and gradient/parameter frames built by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hostlib/atp/atp_frame.h"
#include "hostlib/atp/job_config.h"
#include "hostlib/common/endpoint.h"

namespace swemu::atp_test {

inline MacAddr HostMac(uint32_t i) { return MacAddr::FromU64(0x020000000000ull + i); }
inline Ipv4Addr HostIp(uint32_t i) { return MakeIpv4Addr(10, 0, 0, static_cast<uint8_t>(i)); }

// Workers 1..w (rack "r0", or racks by `racks`), PS host 100 on rack `ps_rack`.
inline AtpJobSpec Spec(uint16_t job_id, uint32_t w, uint16_t elements = 64,
                       std::vector<std::string> racks = {}, std::string ps_rack = "r0") {
  AtpJobSpec spec;
  spec.job_id = job_id;
  for (uint32_t i = 0; i < w; ++i) {
    spec.workers.push_back(
        {"w" + std::to_string(i), HostMac(i + 1), HostIp(i + 1), racks.empty() ? "r0" : racks[i]});
  }
  spec.ps = {"ps", HostMac(100), HostIp(100), ps_rack};
  spec.group_ip = MakeIpv4Addr(239, 1, 1, static_cast<uint8_t>(job_id));
  spec.elements = elements;
  return spec;
}

inline AtpJobConfig Job(uint16_t job_id, uint32_t w, uint16_t elements = 64) {
  Result<AtpJobConfig> job = MakeAtpJobConfig(Spec(job_id, w, elements));
  EXPECT_TRUE(job.ok()) << job.message();
  return *job;
}

class RecordingTransport final : public Transport {
 public:
  bool Send(std::span<const uint8_t> frame) noexcept override {
    frames.emplace_back(frame.begin(), frame.end());
    return true;
  }
  const AtpHeader& Header(std::size_t i) const {
    return *HeaderAt<AtpHeader>(frames[i].data() + kAtpHeaderOffset);
  }
  std::vector<std::vector<uint8_t>> frames;
};

// A frame with an ATP header and int32 (or float32 if `flags` has kAtpFlagFloat) elements.
inline std::vector<uint8_t> AtpFrame(const AtpJobConfig& job, AtpFields fields,
                                     const std::vector<double>& values, uint8_t tos = 0) {
  const uint16_t e = job.spec.elements;
  AtpFrameTemplate tmpl(HostMac(1), job.spec.ps.mac, HostIp(1), job.spec.ps.ip, job.spec.udp_port,
                        e, tos);
  std::vector<uint8_t> frame(tmpl.frame_len());
  uint8_t* atp = tmpl.Write(frame.data());
  fields.job_id = job.spec.job_id;
  fields.num_elements = e;
  fields.Encode(atp);
  for (std::size_t i = 0; i < values.size() && i < e; ++i) {
    if (fields.Has(kAtpFlagFloat)) {
      StoreAtpFloat(atp + kAtpHeaderLen, i, static_cast<float>(values[i]));
    } else {
      StoreAtpInt(atp + kAtpHeaderLen, i, static_cast<int32_t>(values[i]));
    }
  }
  return frame;
}

inline const AtpHeader& HeaderOf(const std::vector<uint8_t>& frame) {
  return *HeaderAt<AtpHeader>(frame.data() + kAtpHeaderOffset);
}

}  // namespace swemu::atp_test
