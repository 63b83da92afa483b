#pragma once
// One ATP worker's gradient packets, built as hostlib's AtpWorker builds them (AtpFrameTemplate,
// QuantizeToInt32, AtpFields) from FillGradients' values, in seq order, window-limited: packet k
// may go only once packet k - window has been out for one RTT (its parameter packet is back).
#include <cstdint>
#include <vector>

#include "hostlib/atp/atp_frame.h"
#include "hostlib/atp/job_config.h"
#include "hostlib/workload/model_layers.h"
#include "hostlib/workload/synthetic_gradients.h"
#include "tools/gen/link.h"

namespace swemu::gen {

// One AllReduce call of an iteration: a layer, or a partition of a large one.
struct AtpCall {
  uint32_t layer = 0;
  uint64_t offset = 0;  // first element within the layer
  uint64_t count = 0;   // elements
  uint64_t packets = 0;
};

// The calls of one iteration, in submission order (PartitionLayers), with their packets.
std::vector<AtpCall> AtpCallsOfIteration(const ModelLayers& model, uint16_t elements);
uint64_t AtpPacketsOf(const std::vector<AtpCall>& calls);

struct AtpStreamConfig {
  const AtpJobConfig* job = nullptr;
  const ModelLayers* model = nullptr;
  const std::vector<AtpCall>* calls = nullptr;
  uint32_t iterations = 1;
  uint32_t window = 64;
  TimeNs start_ns = 0;
  TimeNs rtt_ns = 0;
  uint64_t seed = 1;
  uint8_t tos = 0;
};

class AtpGradientStream final : public FrameSource {
 public:
  AtpGradientStream(const AtpStreamConfig& config, uint32_t worker);

  bool Done() const override { return iteration_ > config_.iterations; }
  TimeNs Due() const override;
  void Next(TimeNs at, std::vector<uint8_t>* frame) override;

 private:
  void LoadLayer();

  AtpStreamConfig config_;
  uint32_t worker_;
  AtpWorkerSetup setup_;
  AtpFrameTemplate tmpl_;
  GradientSource gradients_;
  // Position: iteration (1-based, as swemu-atp counts them), call, packet within the call.
  uint32_t iteration_ = 1;
  std::size_t call_ = 0;
  uint64_t packet_ = 0;
  uint32_t seq_ = 0;          // AtpWorker numbers a job's packets 0, 1, ... over all its calls
  std::vector<float> layer_;  // the current (iteration, layer)'s gradients
  uint32_t loaded_iteration_ = 0;
  uint32_t loaded_layer_ = 0;
  std::vector<int32_t> scratch_;
  std::vector<TimeNs> sent_;  // send times of the last `window` packets, by k % window
  uint64_t k_ = 0;            // packets sent
};

}  // namespace swemu::gen
