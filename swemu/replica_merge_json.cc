// MergeCountersJson: `show counters` of every replica as one document. Reads the JSON that
// JsonWriter writes (objects, arrays, strings, numbers, literals) and writes it back with
// JsonWriter, so the merged document looks like one replica's.
#include <algorithm>
#include <cctype>
#include <optional>

#include "pipeline/core/drop_reason.h"
#include "pipeline/core/json_writer.h"
#include "swemu/replica_merge.h"

namespace swemu {
namespace {

struct Member;

struct Json {
  enum Kind { kRaw, kString, kObject, kArray } kind = kRaw;
  std::string text;           // kRaw: the literal; kString: unescaped
  std::vector<Member> items;  // kObject: members; kArray: values, no key
};

// Not std::pair: a pair of an incomplete Json cannot be a vector's element type.
struct Member {
  std::string first;
  Json second;
};

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  std::optional<Json> Document() {
    std::optional<Json> value = Value();
    Space();
    if (!value || pos_ != text_.size()) return std::nullopt;
    return value;
  }

 private:
  void Space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Eat(char c) {
    Space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  std::optional<std::string> String() {
    if (!Eat('"')) return std::nullopt;
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c == '\\' && pos_ < text_.size()) {
        const char e = text_[pos_++];
        if (e == 'n')
          c = '\n';
        else if (e == 't')
          c = '\t';
        else if (e == 'u' && pos_ + 4 <= text_.size()) {
          c = static_cast<char>(std::stoi(std::string(text_.substr(pos_, 4)), nullptr, 16));
          pos_ += 4;
        } else {
          c = e;
        }
      }
      out += c;
    }
    if (pos_ == text_.size()) return std::nullopt;
    ++pos_;
    return out;
  }

  std::optional<Json> Value() {
    Space();
    if (pos_ == text_.size()) return std::nullopt;
    Json value;
    const char c = text_[pos_];
    if (c == '"') {
      std::optional<std::string> s = String();
      if (!s) return std::nullopt;
      value.kind = Json::kString;
      value.text = *s;
    } else if (c == '{' || c == '[') {
      ++pos_;
      value.kind = c == '{' ? Json::kObject : Json::kArray;
      const char close = c == '{' ? '}' : ']';
      if (Eat(close)) return value;
      do {
        std::string key;
        if (value.kind == Json::kObject) {
          std::optional<std::string> k = String();
          if (!k || !Eat(':')) return std::nullopt;
          key = *k;
        }
        std::optional<Json> item = Value();
        if (!item) return std::nullopt;
        value.items.push_back(Member{std::move(key), std::move(*item)});
      } while (Eat(','));
      if (!Eat(close)) return std::nullopt;
    } else {
      const std::size_t start = pos_;
      while (pos_ < text_.size() &&
             std::string_view(",}] \n\t\r").find(text_[pos_]) == std::string_view::npos) {
        ++pos_;
      }
      value.text = std::string(text_.substr(start, pos_ - start));
      if (value.text.empty()) return std::nullopt;
    }
    return value;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

bool IsCount(const std::string& text) {
  return !text.empty() && text.size() <= 19 &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

void Merge(Json& into, const Json& from, const std::string& key) {
  if (into.kind != from.kind) return;
  // Every replica's control plane applies the same records: its counters are one replica's.
  if (key == "control_plane") return;
  if (into.kind == Json::kRaw) {
    if (!IsCount(into.text) || !IsCount(from.text)) return;
    if (key == "port" || key == "queue" || key == "entries") return;
    const uint64_t a = std::stoull(into.text);
    const uint64_t b = std::stoull(from.text);
    into.text = std::to_string(key.starts_with("max_depth") ? std::max(a, b) : a + b);
    return;
  }
  if (into.kind == Json::kArray) {
    for (std::size_t i = 0; i < from.items.size(); ++i) {
      if (i < into.items.size()) {
        Merge(into.items[i].second, from.items[i].second, key);
      } else {
        into.items.push_back(from.items[i]);
      }
    }
    return;
  }
  if (into.kind != Json::kObject) return;
  for (std::size_t i = 0; i < from.items.size(); ++i) {
    const std::string& name = from.items[i].first;  // not a structured binding: the lambda
    const Json& value = from.items[i].second;       // below captures them
    // The same member at the same place, else by name and kind ("program" is a name and an
    // object), else a member only this replica has.
    auto it = into.items.begin() + static_cast<std::ptrdiff_t>(std::min(i, into.items.size()));
    if (it == into.items.end() || it->first != name || it->second.kind != value.kind) {
      it = std::find_if(into.items.begin(), into.items.end(), [&](const auto& item) {
        return item.first == name && item.second.kind == value.kind;
      });
    }
    if (it == into.items.end()) {
      into.items.push_back(Member{name, value});
    } else {
      Merge(it->second, value, name);
    }
  }
  if (key == "drops") {  // reasons only one replica counted: back in DropReason order
    auto rank = [](const std::string& name) {
      for (std::size_t i = 0; i < kDropReasonCount; ++i) {
        if (DropReasonName(static_cast<DropReason>(i)) == name) return i;
      }
      return kDropReasonCount;
    };
    std::stable_sort(into.items.begin(), into.items.end(), [&rank](const auto& a, const auto& b) {
      return rank(a.first) < rank(b.first);
    });
  }
}

void Write(JsonWriter& out, const std::string& key, const Json& value) {
  switch (value.kind) {
    case Json::kRaw:
      out.Raw(key, value.text);
      return;
    case Json::kString:
      out.String(key, value.text);
      return;
    case Json::kObject:
    case Json::kArray:
      if (value.kind == Json::kObject) {
        out.BeginObject(key);
      } else {
        out.BeginArray(key);
      }
      for (const auto& [name, item] : value.items) Write(out, name, item);
      if (value.kind == Json::kObject) {
        out.EndObject();
      } else {
        out.EndArray();
      }
      return;
  }
}

}  // namespace

std::string MergeCountersJson(const std::vector<std::string>& documents) {
  std::optional<Json> merged;
  for (const std::string& document : documents) {
    std::optional<Json> parsed = Reader(document).Document();
    if (!parsed) return std::string();
    if (!merged) {
      merged = std::move(parsed);
    } else {
      Merge(*merged, *parsed, "");
    }
  }
  if (!merged) return std::string();
  JsonWriter out;
  Write(out, "", *merged);
  return out.str();
}

}  // namespace swemu
