#include "pipeline/tables/entry_format.h"

#include "pipeline/tables/value_text.h"

namespace swemu {
namespace {

std::string Where(const MatchTable& table) { return "table " + table.name() + ": "; }

Status KeyError(const MatchTable& table, std::size_t i, const std::string& text,
                const std::string& problem) {
  return Status::Error(Where(table) + "key " + std::to_string(i + 1) + " \"" + text +
                       "\": " + problem);
}

// Parses VALUE into a field of `bits`; on error returns the problem alone.
Result<MatchKey> ParseField(std::string_view text, unsigned bits) {
  Result<MatchKey> value = ParseValue(text);
  if (!value.ok()) return value;
  if (!FitsBits(*value, bits)) {
    return Status::Error("value does not fit in " + std::to_string(bits) + " bits");
  }
  return value;
}

// Parses one key field; sets *value, *mask (field-aligned) and, for LPM, *prefix_len.
Status ParseKeyField(const MatchTable& table, std::size_t i, const std::string& text,
                     MatchKey* value, MatchKey* mask, uint8_t* prefix_len) {
  const unsigned bits = table.spec().fields[i].bits;
  std::string_view v = text;
  *mask = LowBitsMask(bits);
  if (table.kind() == MatchKind::kLpm) {
    // A bare VALUE is the whole width: /32 for an IPv4 address, /128 for IPv6.
    const std::size_t slash = v.find('/');
    *prefix_len = static_cast<uint8_t>(bits);
    if (slash != std::string_view::npos) {
      std::string_view len_text = v.substr(slash + 1);
      if (len_text.empty() || len_text.size() > 3 ||
          len_text.find_first_not_of("0123456789") != std::string_view::npos) {
        return KeyError(table, i, text, "bad prefix length");
      }
      unsigned len = 0;
      for (char c : len_text) len = len * 10 + static_cast<unsigned>(c - '0');
      if (len > bits) {
        return KeyError(
            table, i, text,
            "prefix length " + std::to_string(len) + " exceeds " + std::to_string(bits) + " bits");
      }
      *prefix_len = static_cast<uint8_t>(len);
      v = v.substr(0, slash);
    }
  } else if (table.kind() == MatchKind::kTernary) {
    std::size_t amp = v.find("&&&");
    if (amp != std::string_view::npos) {
      Result<MatchKey> m = ParseField(v.substr(amp + 3), bits);
      if (!m.ok()) return KeyError(table, i, text, "mask: " + m.message());
      *mask = *m;
      v = v.substr(0, amp);
    }
  }
  Result<MatchKey> parsed = ParseField(v, bits);
  if (!parsed.ok()) return KeyError(table, i, text, parsed.message());
  *value = *parsed;
  return Status::Ok();
}

ValueStyle KeyStyle(const MatchTable& table, std::size_t i) {
  const KeyField& f = table.spec().fields[i];
  return StyleFor(f.name, f.bits, table.kind() == MatchKind::kLpm, ValueStyle::kHex);
}

}  // namespace

Result<ActionCall> ParseAction(const MatchTable& table, std::string_view action,
                               const std::vector<std::string>& params) {
  std::optional<uint16_t> index = table.ActionIndex(action);
  if (!index) return Status::Error(Where(table) + "no action \"" + std::string(action) + "\"");
  const ActionSpec& spec = table.spec().actions[*index];
  if (params.size() != spec.params.size()) {
    return Status::Error(Where(table) + "action " + spec.name + " expects " +
                         std::to_string(spec.params.size()) + " parameters, got " +
                         std::to_string(params.size()));
  }
  ActionCall call;
  call.action = *index;
  call.num_params = static_cast<uint8_t>(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    const ActionParam& p = spec.params[i];
    Result<MatchKey> v = ParseValue(params[i]);
    if (!v.ok()) {
      return Status::Error(Where(table) + "parameter " + p.name + " \"" + params[i] +
                           "\": " + v.message());
    }
    if (!FitsBits(*v, p.bits)) {
      return Status::Error(Where(table) + "parameter " + p.name + ": " + params[i] +
                           " does not fit in " + std::to_string(p.bits) + " bits");
    }
    call.params[i] = v->w[0];
  }
  return call;
}

Result<TableEntry> ParseEntry(const MatchTable& table, std::string_view action,
                              const std::vector<std::string>& keys,
                              const std::vector<std::string>& params,
                              std::optional<int32_t> priority) {
  const TableSpec& spec = table.spec();
  if (keys.size() != spec.fields.size()) {
    return Status::Error(Where(table) + "expects " + std::to_string(spec.fields.size()) +
                         " key fields, got " + std::to_string(keys.size()));
  }
  TableEntry entry;
  const std::vector<unsigned> shifts = FieldShifts(spec);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    MatchKey value, mask;
    SWEMU_RETURN_IF_ERROR(ParseKeyField(table, i, keys[i], &value, &mask, &entry.prefix_len));
    entry.key = entry.key | ShiftLeft(value, shifts[i]);
    entry.mask = entry.mask | ShiftLeft(mask, shifts[i]);
  }
  if (table.kind() == MatchKind::kTernary) {
    if (!priority) return Status::Error(Where(table) + "ternary table needs a priority");
    entry.priority = *priority;
  } else if (priority) {
    return Status::Error(Where(table) + "only ternary tables take a priority");
  }
  Result<ActionCall> call = ParseAction(table, action, params);
  if (!call.ok()) return call.status();
  entry.action = *call;
  return entry;
}

std::string FormatAction(const MatchTable& table, const ActionCall& action) {
  if (action.action >= table.spec().actions.size()) return "<bad action>";
  const ActionSpec& spec = table.spec().actions[action.action];
  std::string out = spec.name;
  for (std::size_t i = 0; i < spec.params.size() && i < action.num_params; ++i) {
    const ActionParam& p = spec.params[i];
    ValueStyle style =
        StyleFor(p.name, p.bits, false, p.bits <= 16 ? ValueStyle::kDecimal : ValueStyle::kHex);
    out += ' ';
    out += FormatValue(MatchKey{{action.params[i], 0}}, p.bits, style);
  }
  return out;
}

std::string FormatEntry(const MatchTable& table, EntryHandle handle, const TableEntry& entry) {
  const TableSpec& spec = table.spec();
  const std::vector<unsigned> shifts = FieldShifts(spec);
  std::string out = std::to_string(handle) + ":";
  for (std::size_t i = 0; i < spec.fields.size(); ++i) {
    const unsigned bits = spec.fields[i].bits;
    const MatchKey field_mask = LowBitsMask(bits);
    MatchKey value = ShiftRight(entry.key, shifts[i]) & field_mask;
    ValueStyle style = KeyStyle(table, i);
    out += ' ';
    out += FormatValue(value, bits, style);
    if (table.kind() == MatchKind::kLpm) {
      out += '/';
      out += std::to_string(entry.prefix_len);
    } else if (table.kind() == MatchKind::kTernary) {
      out += "&&&";
      out += FormatValue(ShiftRight(entry.mask, shifts[i]) & field_mask, bits, style);
    }
  }
  if (table.kind() == MatchKind::kTernary)
    out.append(" priority ").append(std::to_string(entry.priority));
  out.append(" => ").append(FormatAction(table, entry.action));
  out.append(" (hits ").append(std::to_string(table.EntryHits(handle))).append(")");
  return out;
}

}  // namespace swemu
