#include "pipeline/programs/dlcp.h"

#include <cmath>
#include <cstdlib>

#include "pipeline/control/units.h"
#include "pipeline/tm/tm_config.h"

namespace swemu {
namespace {

Result<double> ParseNumber(const std::string& what, const std::string& text, double min,
                           double max) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) {
    return Status::Error(what + " \"" + text + "\": not a number");
  }
  if (v < min || v > max) {
    return Status::Error(what + " " + text + ": must be in [" + std::to_string(min) + ", " +
                         std::to_string(max) + "]");
  }
  return v;
}

// "L1,L2,...,L7": seven queue capacities in packets.
Status ParseCaps(const std::string& text, std::array<uint32_t, kDlcpDataPriorities>* caps) {
  std::array<uint32_t, kDlcpDataPriorities> out{};
  std::size_t i = 0, start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? comma : comma - start);
    if (i == out.size()) return Status::Error("caps \"" + text + "\": more than 7 values");
    Result<uint64_t> v = ParseUint(item, 1, kTmMaxQueueDepthPkts);
    if (!v.ok()) return Status::Error("caps: L_" + std::to_string(i + 1) + ": " + v.message());
    out[i++] = static_cast<uint32_t>(*v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (i != out.size()) {
    return Status::Error("caps \"" + text + "\": " + std::to_string(i) +
                         " values, want 7 (L_1..L_7, front layers first)");
  }
  *caps = out;
  return Status::Ok();
}

}  // namespace

uint32_t DlcpThresholds::S(uint32_t i) const noexcept {
  const double s = std::round(t * (1 + (i - 1) * d));
  return s < 1 ? 1 : static_cast<uint32_t>(s);
}

uint32_t DlcpThresholds::L(uint32_t i) const noexcept {
  return caps[i - 1] != 0 ? caps[i - 1] : 2 * S(i);
}

Status DlcpThresholds::Validate() const {
  if (!(t >= 1) || t > kTmMaxQueueDepthPkts) {
    return Status::Error("T " + std::to_string(t) + ": 1.." + std::to_string(kTmMaxQueueDepthPkts) +
                         " packets");
  }
  if (!(d >= 0) || t * (1 + 6 * d) > kTmMaxQueueDepthPkts) {
    return Status::Error("d " + std::to_string(d) + ": at least 0, with S_7 = T(1 + 6d) within " +
                         std::to_string(kTmMaxQueueDepthPkts) + " packets");
  }
  // An S_i at or above L_i is allowed: the capacity then drops before the threshold acts.
  for (uint32_t i = 1; i <= kDlcpDataPriorities; ++i) {
    if (L(i) > kTmMaxQueueDepthPkts) {
      return Status::Error("L_" + std::to_string(i) + " = " + std::to_string(L(i)) +
                           " packets: at most " + std::to_string(kTmMaxQueueDepthPkts));
    }
  }
  return Status::Ok();
}

Status DlcpProgram::Load(ProgramContext& ctx) {
  const ProgramOptions& opt = ctx.options;
  Result<uint64_t> base = opt.GetUint("dscp_base", kDlcpDefaultDscpBase, 0, 63 - 6);
  Result<uint64_t> control = opt.GetUint("control_dscp", kDlcpDefaultControlDscp, 0, 63);
  Result<std::string> t = opt.GetString("t", "23.25");
  Result<std::string> d = opt.GetString("d", "0.55");
  Result<std::string> caps = opt.GetString("caps", "");
  for (const Status& s : {base.status(), control.status(), t.status(), d.status(), caps.status()}) {
    SWEMU_RETURN_IF_ERROR(s);
  }
  if (*control >= *base && *control <= *base + 6) {
    return Status::Error("control_dscp " + std::to_string(*control) +
                         " falls among the data DSCPs " + std::to_string(*base) + ".." +
                         std::to_string(*base + 6));
  }
  DlcpThresholds th;
  Result<double> tv = ParseNumber("program.t", *t, 1, kTmMaxQueueDepthPkts);
  if (!tv.ok()) return tv.status();
  Result<double> dv = ParseNumber("program.d", *d, 0, kTmMaxQueueDepthPkts);
  if (!dv.ok()) return dv.status();
  th.t = *tv;
  th.d = *dv;
  // The default capacities belong to the default T and d: a T or d of one's own without caps
  // gets L_i = 2 S_i.
  if (opt.Has("t") || opt.Has("d")) th.caps.fill(0);
  if (!caps->empty()) SWEMU_RETURN_IF_ERROR(ParseCaps(*caps, &th.caps));
  SWEMU_RETURN_IF_ERROR(th.Validate());
  dscp_base_ = static_cast<uint8_t>(*base);
  control_dscp_ = static_cast<uint8_t>(*control);
  queue_of_dscp_.fill(-1);
  for (uint32_t tag = 0; tag < kDlcpDataPriorities; ++tag) {
    queue_of_dscp_[dscp_base_ + tag] = static_cast<int8_t>(DlcpQueueOfTag(tag));
  }
  queue_of_dscp_[control_dscp_] = kDlcpControlQueue;
  tm_ = &ctx.tm;
  num_ports_ = ctx.num_ports;
  SWEMU_RETURN_IF_ERROR(l2l3_.Load(ctx));
  SWEMU_RETURN_IF_ERROR(Apply(th));
  ctx.builder.Note("dlcp: DSCP -> queue is a stateless 64-entry match; S_i and L_i are the TM's "
                   "per-queue RED threshold and depth");
  return AddCommands(ctx.commands);
}

Status DlcpProgram::Apply(const DlcpThresholds& th) {
  SWEMU_RETURN_IF_ERROR(th.Validate());
  for (PortId p = 0; p < num_ports_; ++p) {
    for (uint32_t i = 1; i <= kDlcpDataPriorities; ++i) {
      const int q = DlcpQueueOfTag(i - 1);
      SWEMU_RETURN_IF_ERROR(tm_->SetRedThresholdChecked(p, q, th.S(i)));
      SWEMU_RETURN_IF_ERROR(tm_->SetQueueDepth(p, q, th.L(i)));
    }
    SWEMU_RETURN_IF_ERROR(tm_->SetRedThresholdChecked(p, kDlcpControlQueue, 0));
  }
  thresholds_ = th;
  return Status::Ok();
}

void DlcpProgram::Ingress(Packet& pkt) noexcept {
  Packet* one = &pkt;
  IngressBurst(&one, 1);
}

void DlcpProgram::IngressBurst(Packet** pkts, uint32_t n) noexcept {
  l2l3_.IngressBurst(pkts, n);
  for (uint32_t i = 0; i < n; ++i) {
    Packet& pkt = *pkts[i];
    if (!pkt.hdr.has_ipv4()) continue;
    const int8_t q = queue_of_dscp_[pkt.data[pkt.hdr.ipv4 + 1] >> 2];
    if (q >= 0) pkt.meta.queue_id = static_cast<uint8_t>(q);
  }
}

std::string DlcpProgram::Show() const {
  std::string out = "dlcp: data DSCP " + std::to_string(dscp_base_) + ".." +
                    std::to_string(dscp_base_ + 6) + " (tag 0..6 -> queue 6..0), control DSCP " +
                    std::to_string(control_dscp_) + " -> queue 7\nT " +
                    std::to_string(thresholds_.t) + ", d " + std::to_string(thresholds_.d) + "\n";
  for (uint32_t i = 1; i <= kDlcpDataPriorities; ++i) {
    out += "priority " + std::to_string(i) + " (tag " + std::to_string(i - 1) + ", queue " +
           std::to_string(DlcpQueueOfTag(i - 1)) + "): S " + std::to_string(thresholds_.S(i)) +
           " L " + std::to_string(thresholds_.L(i)) + " packets\n";
  }
  return out;
}

Status DlcpProgram::AddCommands(CommandTable& commands) {
  SWEMU_RETURN_IF_ERROR(commands.Add({"show dlcp", "", "DLCP classes and per-queue S_i and L_i",
                                      0, 0, [this](CommandArgs) -> Result<std::string> {
                                        return Show();
                                      }}));
  return commands.Add(
      {"dlcp_thresholds", "<T> <d> [L1,...,L7]",
       "set every port's data queues to S_i = T(1 + (i-1)d) and L_i (default 2 S_i)", 2, 3,
       [this](CommandArgs args) -> Result<std::string> {
         DlcpThresholds th;
         Result<double> t = ParseNumber("T", args[0], 1, kTmMaxQueueDepthPkts);
         if (!t.ok()) return t.status();
         Result<double> d = ParseNumber("d", args[1], 0, kTmMaxQueueDepthPkts);
         if (!d.ok()) return d.status();
         th.t = *t;
         th.d = *d;
         th.caps.fill(0);  // L_i = 2 S_i unless given
         if (args.size() == 3) SWEMU_RETURN_IF_ERROR(ParseCaps(args[2], &th.caps));
         SWEMU_RETURN_IF_ERROR(th.Validate());  // before anything changes
         SWEMU_RETURN_IF_ERROR(Apply(th));
         return std::string();
       }});
}

SWEMU_REGISTER_PROGRAM("dlcp", DlcpProgram);

}  // namespace swemu
