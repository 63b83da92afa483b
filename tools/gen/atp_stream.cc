#include "tools/gen/atp_stream.h"

#include <algorithm>
#include <cstring>
#include <span>

#include "hostlib/atp/quantize.h"

namespace swemu::gen {

std::vector<AtpCall> AtpCallsOfIteration(const ModelLayers& model, uint16_t elements) {
  std::vector<AtpCall> calls;
  for (const LayerPartition& p : PartitionLayers(model)) {
    calls.push_back({p.layer, p.offset, p.count, (p.count + elements - 1) / elements});
  }
  return calls;
}

uint64_t AtpPacketsOf(const std::vector<AtpCall>& calls) {
  uint64_t packets = 0;
  for (const AtpCall& call : calls) packets += call.packets;
  return packets;
}

AtpGradientStream::AtpGradientStream(const AtpStreamConfig& config, uint32_t worker)
    : config_(config),
      worker_(worker),
      setup_(config.job->workers[worker]),
      tmpl_(config.job->spec.workers[worker].mac, config.job->spec.ps.mac,
            config.job->spec.workers[worker].ip, config.job->spec.ps.ip, config.job->spec.udp_port,
            config.job->spec.elements, config.tos),
      scratch_(config.job->spec.elements),
      sent_(std::max<uint32_t>(config.window, 1)) {
  gradients_.seed = config.seed;
  if (config_.calls->empty()) iteration_ = config_.iterations + 1;  // nothing to send
}

TimeNs AtpGradientStream::Due() const {
  if (k_ < sent_.size()) return config_.start_ns;
  return sent_[k_ % sent_.size()] + config_.rtt_ns;  // packet k - window's send time + RTT
}

// The whole layer at once, as swemu-atp fills it: FillGradients' values depend on where the
// span starts, so a partition is cut from the layer, never filled on its own.
void AtpGradientStream::LoadLayer() {
  const uint32_t layer = (*config_.calls)[call_].layer;
  if (!layer_.empty() && loaded_iteration_ == iteration_ && loaded_layer_ == layer) return;
  layer_.assign(config_.model->layers[layer].params, 0.0f);
  FillGradients(gradients_, worker_, iteration_, layer, std::span(layer_));
  loaded_iteration_ = iteration_;
  loaded_layer_ = layer;
}

// The frame AtpWorker::SendPacket builds for a first transmission.
void AtpGradientStream::Next(TimeNs at, std::vector<uint8_t>* frame) {
  LoadLayer();
  const AtpCall& call = (*config_.calls)[call_];
  const uint16_t e = config_.job->spec.elements;
  const uint64_t first = packet_ * e;
  const std::size_t count = std::min<uint64_t>(e, call.count - first);
  const float* in = layer_.data() + call.offset + first;

  frame->resize(tmpl_.frame_len());
  uint8_t* atp = tmpl_.Write(frame->data());
  uint8_t* elements = atp + kAtpHeaderLen;
  const bool fits = QuantizeToInt32(in, count, config_.job->spec.scale, scratch_.data());
  for (std::size_t i = 0; i < count; ++i) {
    if (fits) {
      StoreAtpInt(elements, i, scratch_[i]);
    } else {
      StoreAtpFloat(elements, i, in[i]);
    }
  }
  std::memset(elements + 4 * count, 0, 4 * (e - count));  // the last packet's padding
  AtpFields fields;
  fields.flags = fits ? 0 : kAtpFlagFloat;
  fields.worker_id = setup_.worker_id;
  fields.fan_in0 = setup_.fan_in0;
  fields.fan_in1 = setup_.fan_in1;
  fields.job_id = config_.job->spec.job_id;
  fields.num_elements = e;
  fields.seq = seq_++;
  fields.bitmap = 1u << setup_.worker_id;
  fields.Encode(atp);

  sent_[k_ % sent_.size()] = at;
  ++k_;
  if (++packet_ < call.packets) return;
  packet_ = 0;
  if (++call_ < config_.calls->size()) return;
  call_ = 0;
  ++iteration_;
}

}  // namespace swemu::gen
