// DLCP's simulation, reported (hostlib/dlcp/experiment.h): completion-time statistics per stage,
// the comparison table printed by `swemu-dlcp sim`, and every flow as CSV.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "hostlib/dlcp/experiment.h"
#include "hostlib/workload/model_layers.h"

namespace swemu {

namespace {
const char* Label(const DlcpRunResult& run) { return DlcpSchemeLabel(run.scheme); }

std::vector<TimeNs> StageFcts(const std::vector<DlcpFlowResult>& flows,
                              DlcpRunResult::Stage stage) {
  std::vector<TimeNs> fct;
  for (const DlcpFlowResult& f : flows) {
    if (stage == DlcpRunResult::Stage::kAll || f.pull == (stage == DlcpRunResult::Stage::kPull)) {
      fct.push_back(f.fct_ns);
    }
  }
  return fct;
}

double LayerLossPercent(const std::vector<double>& loss, std::size_t layer) {
  return layer < loss.size() ? loss[layer] * 100 : 0.0;
}

using Baselines = std::vector<const DlcpRunResult*>;

// "(DLCP: share missing when the bound was met; DCTCP, PIAS: share of segments retransmitted)"
std::string LossMeaning(const Baselines& bs) {
  std::string names;
  for (const DlcpRunResult* b : bs) names += (names.empty() ? "" : ", ") + std::string(Label(*b));
  return "(DLCP: share missing when the bound was met; " + names +
         ": share of segments retransmitted)";
}

// "  DCTCP   4.10%" per baseline, for one layer of one stage.
std::string BaselineLayerLoss(const Baselines& bs, bool pull, std::size_t l) {
  std::string out;
  char cell[64];
  for (const DlcpRunResult* b : bs) {
    std::snprintf(cell, sizeof(cell), "  %s %6.2f%%", Label(*b),
                  LayerLossPercent(pull ? b->layer_loss_pull : b->layer_loss, l));
    out += cell;
  }
  return out;
}

// One line per layer, input layer first.
std::string EveryLayersLoss(const DlcpExperimentOptions& o, const DlcpRunResult& d,
                            const Baselines& bs) {
  std::string out = "loss per layer " + LossMeaning(bs) + ", input layer first:\n";
  char cell[64];
  for (std::size_t l = 0; l < d.layer_loss.size(); ++l) {
    std::snprintf(cell, sizeof(cell), "  layer %2zu: %sDLCP %6.2f%%", l, o.pull ? "push " : "",
                  LayerLossPercent(d.layer_loss, l));
    out += cell + BaselineLayerLoss(bs, false, l);
    if (o.pull) {
      std::snprintf(cell, sizeof(cell), " | pull DLCP %6.2f%%",
                    LayerLossPercent(d.layer_loss_pull, l));
      out += cell + BaselineLayerLoss(bs, true, l);
    }
    out += "\n";
  }
  return out;
}

// "mean M%, worst W% (layer L)" over one run's layers in one stage (no layer when none lost).
std::string MeanAndWorst(const std::vector<double>& loss) {
  if (loss.empty()) return "no layers";
  const auto worst = std::max_element(loss.begin(), loss.end());
  double sum = 0;
  for (double x : loss) sum += x;
  char text[96];
  std::snprintf(text, sizeof(text), "mean %.2f%%, worst %.2f%%",
                sum / static_cast<double>(loss.size()) * 100, *worst * 100);
  std::string out = text;
  if (*worst > 0) out += " (layer " + std::to_string(worst - loss.begin()) + ")";
  return out;
}

// Each stage's mean and worst layer, per transport.
std::string LayerLossSummary(const DlcpExperimentOptions& o, const DlcpRunResult& d,
                             const Baselines& bs) {
  std::string out = "loss per layer " + LossMeaning(bs) +
                    ", each stage's mean and worst layer (--verbose: every layer):\n";
  out += "  push: DLCP " + MeanAndWorst(d.layer_loss);
  for (const DlcpRunResult* b : bs) {
    out += "; " + std::string(Label(*b)) + " " + MeanAndWorst(b->layer_loss);
  }
  out += "\n";
  if (o.pull) {
    out += "  pull: DLCP " + MeanAndWorst(d.layer_loss_pull);
    for (const DlcpRunResult* b : bs) {
      out += "; " + std::string(Label(*b)) + " " + MeanAndWorst(b->layer_loss_pull);
    }
    out += "\n";
  }
  return out;
}

// The report's first line: the network, the iteration, the bounds and the baselines' RTOmin.
std::string HeadLine(const DlcpExperimentOptions& o, const DlcpRunResult& d, const Baselines& bs) {
  std::string iteration = "one PS iteration";
  if (d.jobs > 1) {
    const uint32_t each = d.hosts / d.jobs;
    iteration = std::to_string(d.jobs) + " jobs of " + std::to_string(each) +
                (d.hosts % d.jobs == 0 ? "" : " or " + std::to_string(each + 1)) +
                " hosts, one PS iteration each";
  }
  std::string rto_schemes;  // the baselines whose RTO is the minimum RTO (pFabric's is its own)
  for (const DlcpRunResult* b : bs) {
    if (b->scheme == DlcpScheme::kPfabric) continue;
    rto_schemes += (rto_schemes.empty() ? "" : " and ") + std::string(Label(*b));
  }
  char line[512];
  std::snprintf(line, sizeof(line),
                "DLCP in virtual time: %s, %s; %s "
                "of %s / %u (%s, %zu flows); DLCP bound %.0f%% push, %.1f%% pull",
                d.fabric.c_str(),
                o.shared_nic ? "one NIC per host shared by its flows"
                             : "every flow paced alone at its link's rate (no shared NIC)",
                iteration.c_str(), o.model.c_str(), o.scale,
                o.pull ? "push, then pull" : "push only", d.flows.size(), o.loss_bound * 100,
                o.pull_bound * 100);
  std::string out = line;
  if (!rto_schemes.empty()) {
    std::snprintf(line, sizeof(line), "; %s RTOmin %.0f ms", rto_schemes.c_str(),
                  o.min_rto_ns / 1e6);
    out += line;
  }
  return out + "\n";
}

// The paper's "up to" reductions against this baseline (5.2.2 and Fig. 16), mean and tail, for
// InceptionV3 or else ResNet50.
std::pair<const char*, const char*> PaperReductions(DlcpScheme scheme, bool inception) {
  if (inception) {
    switch (scheme) {
      case DlcpScheme::kPias:
        return {"up to -31.8%", "up to -90.0%"};
      case DlcpScheme::kPfabric:
        return {"up to -26.5%", "up to -89.2%"};
      default:
        return {"up to -30.3%", "up to -89.7% (5 ms: -72.7%, 1 ms: -71.8%)"};
    }
  }
  switch (scheme) {
    case DlcpScheme::kPias:
      return {"up to -44.8%", "up to -91.8%"};
    case DlcpScheme::kPfabric:
      return {"up to -35.5%", "up to -88.6%"};
    default:
      return {"up to -43.1%", "up to -91.8% (5 ms: -83.9%, 1 ms: -84.5%)"};
  }
}

// DLCP against one baseline: FCT mean and p99 per stage, and the iteration.
std::string ComparisonTable(const DlcpExperimentOptions& o, const DlcpRunResult& d,
                            const DlcpRunResult& b) {
  using Stage = DlcpRunResult::Stage;
  char line[512];
  auto change = [](double a, double b) { return b == 0 ? 0.0 : (a - b) / b * 100; };
  Result<ModelLayers> model = BundledModel(o.model);
  const bool inception = model.ok() && model->model == "InceptionV3";
  std::snprintf(line, sizeof(line), "%-22s %10s %10s %8s | paper (%s, RTOmin 10 ms)\n",
                "FCT (ms)", Label(b), "DLCP", "change", inception ? "InceptionV3" : "ResNet50");
  std::string out = line;
  const auto [paper_mean, paper_tail] = PaperReductions(b.scheme, inception);
  struct Row {
    const char* name;
    Stage stage;
    bool p99;
    const char* paper;
  };
  const Row rows[] = {{"mean", Stage::kAll, false, paper_mean},
                      {"p99", Stage::kAll, true, paper_tail},
                      {"push mean", Stage::kPush, false, ""},
                      {"push p99", Stage::kPush, true, ""},
                      {"pull mean", Stage::kPull, false, ""},
                      {"pull p99", Stage::kPull, true, ""}};
  for (const Row& r : rows) {
    if (r.stage != Stage::kAll && !o.pull) break;
    const double x = r.p99 ? b.P99FctMs(r.stage) : b.MeanFctMs(r.stage);
    const double y = r.p99 ? d.P99FctMs(r.stage) : d.MeanFctMs(r.stage);
    std::snprintf(line, sizeof(line), "%-22s %10.3f %10.3f %+7.1f%% | %s\n", r.name, x, y,
                  change(y, x), r.paper);
    out += line;
  }
  std::snprintf(line, sizeof(line), "%-22s %10.3f %10.3f %+7.1f%% |\n", "iteration (ms)",
                b.iteration_ns / 1e6, d.iteration_ns / 1e6,
                change(static_cast<double>(d.iteration_ns), static_cast<double>(b.iteration_ns)));
  return out + line;
}

// "; DCTCP 5547" per baseline: what its queues and port buffers dropped.
std::string BaselineDrops(const Baselines& bs, bool dynamic) {
  std::string out;
  for (const DlcpRunResult* b : bs) {
    const uint64_t n = dynamic ? b->dt_drops : b->queue_drops + b->port_drops;
    out += "; " + std::string(Label(*b)) + " " + std::to_string(n);
  }
  return out;
}

}  // namespace

double DlcpRunResult::MeanFctMs(Stage stage) const {
  const std::vector<TimeNs> fct = StageFcts(flows, stage);
  if (fct.empty()) return 0;
  double sum = 0;
  for (TimeNs t : fct) sum += static_cast<double>(t);
  return sum / static_cast<double>(fct.size()) / 1e6;
}

double DlcpRunResult::P99FctMs(Stage stage) const {
  std::vector<TimeNs> fct = StageFcts(flows, stage);
  if (fct.empty()) return 0;
  std::sort(fct.begin(), fct.end());
  const std::size_t i = static_cast<std::size_t>(std::ceil(0.99 * fct.size())) - 1;
  return static_cast<double>(fct[std::min(i, fct.size() - 1)]) / 1e6;
}

std::string DlcpFlowsCsv(const std::vector<const DlcpRunResult*>& runs) {
  std::string out = "transport,stage,layer,from,to,bytes,start_ns,fct_ns,arrived_ns,loss\n";
  char line[256];
  for (const DlcpRunResult* run : runs) {
    for (const DlcpFlowResult& f : run->flows) {
      std::snprintf(line, sizeof(line), "%s,%s,%u,%u,%u,%llu,%lld,%lld,%lld,%.6f\n",
                    run->transport.c_str(), f.pull ? "pull" : "push", f.layer, f.from, f.to,
                    static_cast<unsigned long long>(f.bytes), static_cast<long long>(f.start_ns),
                    static_cast<long long>(f.fct_ns), static_cast<long long>(f.arrived_ns), f.loss);
      out += line;
    }
  }
  return out;
}

std::string DlcpFlowsCsv(const DlcpRunResult& d, const DlcpRunResult& b) {
  return DlcpFlowsCsv({&d, &b});
}

std::string FormatDlcpEngineStats(
    const std::vector<std::pair<const DlcpRunResult*, double>>& runs) {
  std::string out;
  char line[256];
  for (const auto& [run, wall] : runs) {
    const DlcpEngineStats& e = run->engine;
    char cpu[48] = "";
    if (e.cpu_s > 0) std::snprintf(cpu, sizeof(cpu), " (%.1f s CPU)", e.cpu_s);
    std::snprintf(line, sizeof(line),
                  "engine %s: %zu flows, %llu events, %llu packet-hops (%llu from hosts, %llu "
                  "over links), %llu delivered, %.3f s wall%s\n",
                  run->transport.c_str(), run->flows.size(),
                  static_cast<unsigned long long>(e.events),
                  static_cast<unsigned long long>(e.packet_hops()),
                  static_cast<unsigned long long>(e.injected),
                  static_cast<unsigned long long>(e.link_frames),
                  static_cast<unsigned long long>(e.delivered), wall, cpu);
    out += line;
    const bool dlcp = run->scheme == DlcpScheme::kDlcp;
    std::snprintf(line, sizeof(line), "hosts %s: %llu %s (%llu resent), %llu %s\n",
                  run->transport.c_str(), static_cast<unsigned long long>(e.data_packets),
                  dlcp ? "data packets" : "segments", static_cast<unsigned long long>(e.resent),
                  static_cast<unsigned long long>(dlcp ? e.retransmit_requests : e.timeouts),
                  dlcp ? "retransmission requests" : "timeouts");
    out += line;
  }
  return out;
}

std::string FormatDlcpEngineStats(const DlcpRunResult& d, double d_wall_s,
                                  const DlcpRunResult& b, double b_wall_s) {
  return FormatDlcpEngineStats({{&d, d_wall_s}, {&b, b_wall_s}});
}

std::string FormatDlcpComparison(const DlcpExperimentOptions& o, const DlcpRunResult& d,
                                 const Baselines& bs, bool every_layer) {
  std::string out = HeadLine(o, d, bs);
  out += "DLCP thresholds: " +
         (d.thresholds.empty() ? std::string("the dlcp program's defaults") : d.thresholds) + "\n";
  for (const DlcpRunResult* b : bs) {
    if (!b->settings.empty()) out += b->settings + "\n";
  }
  for (const DlcpRunResult* b : bs) out += "\n" + ComparisonTable(o, d, *b);
  char line[256];
  std::snprintf(line, sizeof(line),
                "drops: DLCP %llu selective (Not-ECT above S_i), %llu at capacity",
                static_cast<unsigned long long>(d.red_drops),
                static_cast<unsigned long long>(d.queue_drops));
  out += line + BaselineDrops(bs, false) + "\n";
  if (o.alpha != 0) {
    out += "dynamic-threshold drops: DLCP " + std::to_string(d.dt_drops) + BaselineDrops(bs, true) +
           "\n";
  }
  out += every_layer ? EveryLayersLoss(o, d, bs) : LayerLossSummary(o, d, bs);
  return out;
}

std::string FormatDlcpComparison(const DlcpExperimentOptions& o, const DlcpRunResult& d,
                                 const DlcpRunResult& b, bool every_layer) {
  return FormatDlcpComparison(o, d, Baselines{&b}, every_layer);
}

}  // namespace swemu
