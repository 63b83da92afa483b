#include "hostlib/goat/plan_json.h"

#include <cstdio>

namespace swemu {
namespace {

// Names come from our own graph builders or a topology; escape what JSON needs anyway.
std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string GinaPlanJson(const GinaProblem& p, const GinaPlan& plan) {
  std::string out = "{\n  \"switches\": [";
  for (std::size_t s = 0; s < p.num_switches(); ++s) {
    out += std::string(s ? "," : "") + "\n    {\"name\": " + Quoted(p.switch_names[s]) +
           ", \"memory\": " + std::to_string(p.memory[s]) +
           ", \"used\": " + std::to_string(plan.used[s]) + ", \"submodels\": [";
    bool first = true;
    for (std::size_t g = 0; g < p.submodels.size(); ++g) {
      if (plan.fan_in[g][s] == 0) continue;
      out += std::string(first ? "" : ", ") + "{\"submodel\": " + std::to_string(g) +
             ", \"fan_in\": " + std::to_string(plan.fan_in[g][s]) +
             ", \"base\": " + std::to_string(plan.base[g][s]) +
             ", \"slots\": " + std::to_string(p.submodels[g]) + "}";
      first = false;
    }
    out += "]}";
  }
  out += "\n  ],\n  \"workers\": [";
  for (std::size_t w = 0; w < p.num_workers(); ++w) {
    out += std::string(w ? "," : "") + "\n    {\"name\": " + Quoted(p.worker_names[w]) +
           ", \"nodes\": [";
    for (std::size_t g = 0; g < p.submodels.size(); ++g) {
      const int32_t n = plan.node[g][w];
      out += std::string(g ? ", " : "") + (n == kGinaPs ? "\"ps\"" : Quoted(p.switch_names[n]));
    }
    out += "]}";
  }
  out += "\n  ],\n  \"submodels\": [";
  for (std::size_t g = 0; g < p.submodels.size(); ++g) {
    out += std::string(g ? ", " : "") + std::to_string(p.submodels[g]);
  }
  char tail[256];
  std::snprintf(tail, sizeof(tail),
                "],\n  \"eq1_slot_hops\": %.17g,\n  \"eq4_slot_hops\": %.17g,\n  \"ps_slots\": %llu\n}\n",
                GinaPlanEq1(p, plan), GinaPlanEq4(p, plan),
                static_cast<unsigned long long>(GinaPlanPsSlots(p, plan)));
  return out + tail;
}

}  // namespace swemu
