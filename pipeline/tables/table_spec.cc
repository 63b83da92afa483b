#include "pipeline/tables/table_spec.h"

#include <set>

namespace swemu {
namespace {

bool Fits(uint64_t value, unsigned bits) { return bits >= 64 || (value >> bits) == 0; }

Status CheckActions(const TableSpec& spec, const std::string& where) {
  if (spec.actions.empty()) return Status::Error(where + "has no actions");
  if (spec.actions.size() > 0xFFFF) return Status::Error(where + "has more than 65535 actions");
  std::set<std::string> names;
  const ActionSpec* default_action = nullptr;
  for (const ActionSpec& action : spec.actions) {
    if (action.name.empty()) return Status::Error(where + "an action has no name");
    if (!names.insert(action.name).second) {
      return Status::Error(where + "action " + action.name + " is declared twice");
    }
    if (action.params.size() > kMaxActionParams) {
      return Status::Error(where + "action " + action.name + " has " +
                           std::to_string(action.params.size()) + " parameters, the limit is " +
                           std::to_string(kMaxActionParams));
    }
    for (const ActionParam& param : action.params) {
      if (param.name.empty()) {
        return Status::Error(where + "action " + action.name + ": a parameter has no name");
      }
      if (param.bits == 0 || param.bits > kMaxParamBits) {
        return Status::Error(where + "action " + action.name + ": parameter " + param.name +
                             " must be 1..64 bits wide, not " + std::to_string(param.bits));
      }
    }
    if (action.name == spec.default_action) default_action = &action;
  }
  if (default_action == nullptr) {
    return Status::Error(where + "default action \"" + spec.default_action +
                         "\" is not one of its actions");
  }
  if (spec.default_params.size() != default_action->params.size()) {
    return Status::Error(where + "default action " + spec.default_action + " expects " +
                         std::to_string(default_action->params.size()) + " parameters, got " +
                         std::to_string(spec.default_params.size()));
  }
  for (std::size_t i = 0; i < spec.default_params.size(); ++i) {
    const ActionParam& param = default_action->params[i];
    if (!Fits(spec.default_params[i], param.bits)) {
      return Status::Error(where + "default parameter " + param.name + ": " +
                           std::to_string(spec.default_params[i]) + " does not fit in " +
                           std::to_string(param.bits) + " bits");
    }
  }
  return Status::Ok();
}

}  // namespace

unsigned KeyBits(const TableSpec& spec) {
  unsigned bits = 0;
  for (const KeyField& field : spec.fields) bits += field.bits;
  return bits;
}

std::vector<unsigned> FieldShifts(const TableSpec& spec) {
  std::vector<unsigned> shifts(spec.fields.size());
  unsigned shift = 0;
  for (std::size_t i = spec.fields.size(); i-- > 0;) {
    shifts[i] = shift;
    shift += spec.fields[i].bits;
  }
  return shifts;
}

Status ValidateSpec(const TableSpec& spec) {
  if (spec.name.empty()) return Status::Error("a table has no name");
  const std::string where = "table " + spec.name + ": ";
  if (spec.fields.empty()) return Status::Error(where + "has no key fields");
  std::set<std::string> names;
  for (const KeyField& field : spec.fields) {
    if (field.name.empty()) return Status::Error(where + "a key field has no name");
    if (!names.insert(field.name).second) {
      return Status::Error(where + "key field " + field.name + " is declared twice");
    }
    if (field.bits == 0) return Status::Error(where + "key field " + field.name + " has 0 bits");
  }
  unsigned bits = KeyBits(spec);
  if (bits > kMaxKeyBits) {
    return Status::Error(where + "key is " + std::to_string(bits) + " bits wide, the limit is " +
                         std::to_string(kMaxKeyBits));
  }
  if (spec.kind == MatchKind::kLpm && (spec.fields.size() != 1 || bits > kMaxLpmKeyBits)) {
    return Status::Error(where + "an LPM table needs exactly one key field of at most " +
                         std::to_string(kMaxLpmKeyBits) + " bits");
  }
  if (spec.size == 0) return Status::Error(where + "size must be at least 1");
  if (spec.size > kMaxTableSize) {
    return Status::Error(where + "size " + std::to_string(spec.size) + " exceeds the limit of " +
                         std::to_string(kMaxTableSize) + " entries");
  }
  return CheckActions(spec, where);
}

}  // namespace swemu
