#include "pipeline/tables/table_spec.h"

#include <gtest/gtest.h>

#include "tests/pipeline/tables/table_test_util.h"

namespace swemu {
namespace {

using table_testing::MakeSpec;

TEST(TableSpecTest, ValidSpecPasses) {
  Status s = ValidateSpec(MakeSpec("t", MatchKind::kExact, {{"dst", 48}}, 16));
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(TableSpecTest, RejectsEachBrokenRule) {
  struct Case {
    void (*breakit)(TableSpec&);
    const char* message;
  };
  const Case cases[] = {
      {[](TableSpec& s) { s.name = ""; }, "a table has no name"},
      {[](TableSpec& s) { s.fields.clear(); }, "table t: has no key fields"},
      {[](TableSpec& s) { s.fields[0].bits = 0; }, "key field dst has 0 bits"},
      {[](TableSpec& s) {
         s.fields.push_back({"dst", 8});
       },
       "key field dst is declared twice"},
      {[](TableSpec& s) {
         s.fields = {{"a", 100}, {"b", 29}};
       },
       "key is 129 bits wide"},
      {[](TableSpec& s) { s.size = 0; }, "size must be at least 1"},
      {[](TableSpec& s) { s.actions.clear(); }, "has no actions"},
      {[](TableSpec& s) { s.default_action = "nope"; }, "default action \"nope\" is not one"},
      {[](TableSpec& s) { s.default_params = {1}; }, "default action drop expects 0 parameters"},
      {[](TableSpec& s) { s.actions[1].params[0].bits = 65; }, "parameter port must be 1..64"},
      {[](TableSpec& s) {
         s.actions[1].params.resize(5, {"x", 8});
       },
       "has 5 parameters"},
      {[](TableSpec& s) { s.actions[1].name = "drop"; }, "action drop is declared twice"},
      {[](TableSpec& s) { s.size = kMaxTableSize + 1; }, "exceeds the limit"},
  };
  for (const Case& c : cases) {
    TableSpec spec = MakeSpec("t", MatchKind::kExact, {{"dst", 48}}, 16);
    c.breakit(spec);
    Status s = ValidateSpec(spec);
    EXPECT_FALSE(s.ok()) << c.message;
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s.message();
  }
}

TEST(TableSpecTest, LpmNeedsOneFieldOfAtMost128Bits) {
  EXPECT_TRUE(ValidateSpec(MakeSpec("r", MatchKind::kLpm, {{"dst", 32}}, 8)).ok());
  EXPECT_TRUE(ValidateSpec(MakeSpec("r", MatchKind::kLpm, {{"dst", 33}}, 8)).ok());
  EXPECT_TRUE(ValidateSpec(MakeSpec("r", MatchKind::kLpm, {{"dst_ip6", 128}}, 8)).ok());
  Status two = ValidateSpec(MakeSpec("r", MatchKind::kLpm, {{"a", 8}, {"b", 8}}, 8));
  EXPECT_NE(two.message().find("exactly one key field of at most 128 bits"), std::string::npos);
}

TEST(TableSpecTest, DefaultParamsMustFit) {
  TableSpec spec = MakeSpec("t", MatchKind::kExact, {{"dst", 48}}, 16);
  spec.default_action = "fwd";
  spec.default_params = {512};
  Status s = ValidateSpec(spec);
  EXPECT_NE(s.message().find("default parameter port: 512 does not fit in 9 bits"),
            std::string::npos)
      << s.message();
}

TEST(KeyPackerTest, FirstFieldIsMostSignificant) {
  // A 5-tuple: src 32, dst 32, sport 16, dport 16, proto 8 = 104 bits.
  MatchKey k = KeyPacker()
                   .Push(0x0A000001, 32)
                   .Push(0x0A000002, 32)
                   .Push(0x1234, 16)
                   .Push(0x5678, 16)
                   .Push(17, 8)
                   .key();
  EXPECT_EQ(k.w[0], 0x0000'0212'3456'7811ULL);
  EXPECT_EQ(k.w[1], 0x0A'0000'010AULL);
  // Checked field by field: proto in bits 0..7, dport 8..23, sport 24..39, dst 40..71, src 72..103.
  EXPECT_EQ(k.w[0] & 0xFF, 17u);
  EXPECT_EQ((k.w[0] >> 8) & 0xFFFF, 0x5678u);
  EXPECT_EQ((k.w[0] >> 24) & 0xFFFF, 0x1234u);
  EXPECT_EQ(ShiftRight(k, 40).w[0] & 0xFFFFFFFF, 0x0A000002u);
  EXPECT_EQ(ShiftRight(k, 72).w[0], 0x0A000001u);
}

TEST(KeyPackerTest, TruncatesValuesToFieldWidth) {
  MatchKey k = KeyPacker().Push(0x1FF, 8).Push(0xABC, 4).key();
  EXPECT_EQ(k.w[0], 0xFFCu);  // 0x1FF -> 0xFF, 0xABC -> 0xC
  EXPECT_EQ(k.w[1], 0u);
}

TEST(KeyPackerTest, FieldShiftsMatchPacking) {
  TableSpec spec = MakeSpec("t", MatchKind::kExact, {{"a", 8}, {"b", 64}, {"c", 4}}, 1);
  EXPECT_EQ(FieldShifts(spec), (std::vector<unsigned>{68, 4, 0}));
  MatchKey k = KeyPacker().Push(0xAB, 8).Push(~0ULL, 64).Push(0x5, 4).key();
  EXPECT_EQ(ShiftRight(k, 68).w[0], 0xABu);
  EXPECT_EQ(k.w[0] & 0xF, 0x5u);
}

TEST(MatchKeyTest, ShiftsAndMasksAcrossTheWordBoundary) {
  EXPECT_EQ(LowBitsMask(0), (MatchKey{{0, 0}}));
  EXPECT_EQ(LowBitsMask(64), (MatchKey{{~0ULL, 0}}));
  EXPECT_EQ(LowBitsMask(65), (MatchKey{{~0ULL, 1}}));
  EXPECT_EQ(LowBitsMask(128), (MatchKey{{~0ULL, ~0ULL}}));
  EXPECT_EQ(ShiftLeft(MatchKey{{1ULL << 63, 0}}, 1), (MatchKey{{0, 1}}));
  EXPECT_EQ(ShiftLeft(MatchKey{{1, 0}}, 100), (MatchKey{{0, 1ULL << 36}}));
  EXPECT_EQ(ShiftRight(MatchKey{{0, 1}}, 1), (MatchKey{{1ULL << 63, 0}}));
  EXPECT_EQ(ShiftRight(MatchKey{{0, 1ULL << 36}}, 100), (MatchKey{{1, 0}}));
}

}  // namespace
}  // namespace swemu
