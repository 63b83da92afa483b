#include "pipeline/core/json_writer.h"

#include <gtest/gtest.h>

namespace swemu {
namespace {

TEST(JsonWriterTest, WritesNestedDocumentInOrder) {
  JsonWriter json;
  json.BeginObject().String("name", "sw\"0").Uint("ports", 4);
  json.BeginArray("list").BeginObject().Bool("ok", true).EndObject().EndArray();
  json.BeginObject("empty").EndObject();
  json.EndObject();
  EXPECT_EQ(json.str(),
            "{\n  \"name\": \"sw\\\"0\",\n  \"ports\": 4,\n  \"list\": [\n    {\n      \"ok\": "
            "true\n    }\n  ],\n  \"empty\": {}\n}\n");
}

}  // namespace
}  // namespace swemu
