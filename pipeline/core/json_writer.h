#pragma once
// A tiny streaming JSON writer for counters and reports (slow path). Keys are emitted in the
// order written, so output is deterministic.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace swemu {

class JsonWriter {
 public:
  JsonWriter& BeginObject(std::string_view key = {});
  JsonWriter& EndObject();
  JsonWriter& BeginArray(std::string_view key = {});
  JsonWriter& EndArray();
  JsonWriter& Uint(std::string_view key, uint64_t value);
  JsonWriter& Int(std::string_view key, int64_t value);
  JsonWriter& Double(std::string_view key, double value);
  JsonWriter& Bool(std::string_view key, bool value);
  JsonWriter& String(std::string_view key, std::string_view value);
  // Raw JSON text (e.g. a nested document produced by another writer).
  JsonWriter& Raw(std::string_view key, std::string_view json);

  const std::string& str() const { return out_; }

  static std::string Escape(std::string_view text);

 private:
  void Key(std::string_view key);
  void Indent();
  std::string out_;
  std::vector<bool> first_;  // per open container: nothing written yet
};

}  // namespace swemu
