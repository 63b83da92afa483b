#include "hostlib/goat/plan_json.h"

#include "pipeline/core/json_writer.h"

namespace swemu {

std::string GinaPlanJson(const GinaProblem& p, const GinaPlan& plan) {
  JsonWriter j;
  j.BeginObject().BeginArray("switches");
  for (std::size_t s = 0; s < p.num_switches(); ++s) {
    j.BeginObject()
        .String("name", p.switch_names[s])
        .Uint("memory", p.memory[s])
        .Uint("used", plan.used[s])
        .BeginArray("submodels");
    for (std::size_t g = 0; g < p.submodels.size(); ++g) {
      if (plan.fan_in[g][s] == 0) continue;
      j.BeginObject()
          .Uint("submodel", g)
          .Uint("fan_in", plan.fan_in[g][s])
          .Uint("base", plan.base[g][s])
          .Uint("slots", p.submodels[g])
          .EndObject();
    }
    j.EndArray().EndObject();
  }
  j.EndArray().BeginArray("workers");
  for (std::size_t w = 0; w < p.num_workers(); ++w) {
    j.BeginObject().String("name", p.worker_names[w]).BeginArray("nodes");
    for (std::size_t g = 0; g < p.submodels.size(); ++g) {
      const int32_t n = plan.node[g][w];
      j.String({}, n == kGinaPs ? std::string("ps") : p.switch_names[n]);
    }
    j.EndArray().EndObject();
  }
  j.EndArray().BeginArray("submodels");
  for (uint64_t b : p.submodels) j.Uint({}, b);
  j.EndArray()
      .Double("eq1_slot_hops", GinaPlanEq1(p, plan))
      .Double("eq4_slot_hops", GinaPlanEq4(p, plan))
      .Uint("ps_slots", GinaPlanPsSlots(p, plan))
      .EndObject();
  return j.str() + "\n";
}

}  // namespace swemu
