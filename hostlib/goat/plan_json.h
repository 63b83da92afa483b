#pragma once
// A GOAT plan as JSON, for the switches and workers it must reach (the paper's step 1: the plan is
// sent once) and for people reading it:
//   {"switches": [{"name", "memory", "used", "submodels": [{"submodel", "fan_in", "base",
//     "slots"}]}], "workers": [{"name", "nodes": [node per sub-model: a switch name or "ps"]}],
//    "submodels": [slots...], "eq1_slot_hops", "eq4_slot_hops", "ps_slots"}
// Only switches and sub-models with a fan-in appear under "switches".
#include <string>

#include "hostlib/goat/gina.h"
#include "hostlib/goat/krgs.h"

namespace swemu {

std::string GinaPlanJson(const GinaProblem& problem, const GinaPlan& plan);

}  // namespace swemu
