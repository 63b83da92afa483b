#include "pipeline/tables/entry_format.h"

#include <gtest/gtest.h>

#include <sstream>

#include "pipeline/tables/value_text.h"
#include "tests/pipeline/tables/table_test_util.h"

namespace swemu {
namespace {

using table_testing::Fwd;
using table_testing::Key;
using table_testing::MakeSpec;
using table_testing::MustAdd;
using table_testing::MustMake;

using Strings = std::vector<std::string>;

class EntryFormatTest : public ::testing::Test {
 protected:
  std::unique_ptr<MatchTable> mac_ =
      MustMake(MakeSpec("dmac", MatchKind::kExact, {{"dst_mac", 48}}, 16));
  std::unique_ptr<MatchTable> lpm_ =
      MustMake(MakeSpec("ipv4_lpm", MatchKind::kLpm, {{"dst_addr", 32}}, 16));
  std::unique_ptr<MatchTable> acl_ =
      MustMake(MakeSpec("acl", MatchKind::kTernary, {{"ip_src", 32}, {"proto", 8}}, 16));
  std::unique_ptr<MatchTable> flow_ =
      MustMake(MakeSpec("flow", MatchKind::kExact, {{"vlan", 12}, {"tag", 100}}, 16));
};

TEST(ParseValueTest, AcceptsEachNumberForm) {
  EXPECT_EQ(*ParseValue("1234"), Key(1234));
  EXPECT_EQ(*ParseValue("0x1F"), Key(0x1F));
  EXPECT_EQ(*ParseValue("0XaBc"), Key(0xABC));
  EXPECT_EQ(*ParseValue("00:11:22:aa:BB:cc"), Key(0x001122AABBCC));
  EXPECT_EQ(*ParseValue("10.0.0.1"), Key(0x0A000001));
  EXPECT_EQ(*ParseValue("0xffffffffffffffffffffffffffffffff"), LowBitsMask(128));
  EXPECT_EQ(*ParseValue("340282366920938463463374607431768211455"), LowBitsMask(128));
  EXPECT_EQ(*ParseValue("18446744073709551616"), Key(0, 1));
}

TEST(ParseValueTest, NamesEachBadForm) {
  EXPECT_EQ(ParseValue("").message(), "empty value");
  EXPECT_EQ(ParseValue("12a").message(), "bad number");
  EXPECT_EQ(ParseValue("0xfg").message(), "bad hex number");
  EXPECT_EQ(ParseValue("00:11:22:33:44").message(), "bad MAC address");
  EXPECT_EQ(ParseValue("00:11:22:33:44:5x").message(), "bad MAC address");
  EXPECT_EQ(ParseValue("10.0.0.256").message(), "bad IPv4 address");
  EXPECT_EQ(ParseValue("10.0..1").message(), "bad IPv4 address");
  EXPECT_EQ(ParseValue("10.0.0.01").message(), "bad IPv4 address");
  EXPECT_EQ(ParseValue("0:11:22:33:44:55").message(), "bad MAC address");
  EXPECT_EQ(ParseValue("0x1ffffffffffffffffffffffffffffffff").message(),
            "value wider than 128 bits");
  EXPECT_EQ(ParseValue("340282366920938463463374607431768211456").message(),
            "value wider than 128 bits");
}

TEST_F(EntryFormatTest, ParsesAnExactEntry) {
  Result<TableEntry> e = ParseEntry(*mac_, "set_nhop", {"00:00:00:00:00:02"},
                                    {"aa:bb:cc:dd:ee:ff", "3"}, std::nullopt);
  ASSERT_TRUE(e.ok()) << e.message();
  EXPECT_EQ(e->key, Key(2));
  EXPECT_EQ(e->action.action, 2);
  EXPECT_EQ(e->action.num_params, 2);
  EXPECT_EQ(e->action.params[0], 0xAABBCCDDEEFFu);
  EXPECT_EQ(e->action.params[1], 3u);
}

TEST_F(EntryFormatTest, PacksSeveralFieldsIntoTheKey) {
  Result<TableEntry> e = ParseEntry(*flow_, "drop", {"0xabc", "0x1"}, {}, std::nullopt);
  ASSERT_TRUE(e.ok()) << e.message();
  EXPECT_EQ(e->key, ShiftLeft(Key(0xABC), 100) | Key(1));
}

TEST_F(EntryFormatTest, ParsesAnLpmEntry) {
  Result<TableEntry> e = ParseEntry(*lpm_, "fwd", {"10.1.0.0/16"}, {"0x1ff"}, std::nullopt);
  ASSERT_TRUE(e.ok()) << e.message();
  EXPECT_EQ(e->key, Key(0x0A010000));
  EXPECT_EQ(e->prefix_len, 16);
  EXPECT_EQ(e->action, Fwd(511));
}

TEST_F(EntryFormatTest, ParsesATernaryEntryWithPriority) {
  Result<TableEntry> e = ParseEntry(*acl_, "drop", {"10.0.0.0&&&255.0.0.0", "6"}, {}, 12);
  ASSERT_TRUE(e.ok()) << e.message();
  EXPECT_EQ(e->key, Key(0x0A00000006));
  // A bare value in a ternary table matches all of the field's bits.
  EXPECT_EQ(e->mask, Key(0xFF000000FF));
  EXPECT_EQ(e->priority, 12);
}

TEST_F(EntryFormatTest, EachErrorNamesTheProblem) {
  struct Case {
    const MatchTable* table;
    std::string action;
    Strings keys;
    Strings params;
    std::optional<int32_t> priority;
    std::string message;
  };
  const Case cases[] = {
      {lpm_.get(),
       "fwd",
       {"10.0.0.300/24"},
       {"1"},
       std::nullopt,
       "table ipv4_lpm: key 1 \"10.0.0.300/24\": bad IPv4 address"},
      {lpm_.get(),
       "fwd",
       {"10.0.0.0/33"},
       {"1"},
       std::nullopt,
       "table ipv4_lpm: key 1 \"10.0.0.0/33\": prefix length 33 exceeds 32 bits"},
      {lpm_.get(),
       "fwd",
       {"10.0.0.0/x"},
       {"1"},
       std::nullopt,
       "table ipv4_lpm: key 1 \"10.0.0.0/x\": bad prefix length"},
      {mac_.get(),
       "fwd",
       {"00:11:22:33:44"},
       {"1"},
       std::nullopt,
       "table dmac: key 1 \"00:11:22:33:44\": bad MAC address"},
      {mac_.get(),
       "fwd",
       {"0x1000000000000"},
       {"1"},
       std::nullopt,
       "table dmac: key 1 \"0x1000000000000\": value does not fit in 48 bits"},
      {mac_.get(),
       "fwd",
       {"1", "2"},
       {"1"},
       std::nullopt,
       "table dmac: expects 1 key fields, got 2"},
      {mac_.get(),
       "set_nhop",
       {"1"},
       {"1"},
       std::nullopt,
       "table dmac: action set_nhop expects 2 parameters, got 1"},
      {mac_.get(),
       "fwd",
       {"1"},
       {"70000"},
       std::nullopt,
       "table dmac: parameter port: 70000 does not fit in 9 bits"},
      {mac_.get(),
       "fwd",
       {"1"},
       {"seven"},
       std::nullopt,
       "table dmac: parameter port \"seven\": bad number"},
      {mac_.get(), "flood", {"1"}, {}, std::nullopt, "table dmac: no action \"flood\""},
      {mac_.get(), "fwd", {"1"}, {"1"}, 5, "table dmac: only ternary tables take a priority"},
      {acl_.get(),
       "drop",
       {"1&&&1", "1"},
       {},
       std::nullopt,
       "table acl: ternary table needs a priority"},
      {acl_.get(),
       "drop",
       {"1&&&0x1ffffffff", "1"},
       {},
       1,
       "table acl: key 1 \"1&&&0x1ffffffff\": mask: value does not fit in 32 bits"},
      {acl_.get(),
       "drop",
       {"1", "256"},
       {},
       1,
       "table acl: key 2 \"256\": value does not fit in 8 bits"},
  };
  for (const Case& c : cases) {
    Result<TableEntry> e = ParseEntry(*c.table, c.action, c.keys, c.params, c.priority);
    ASSERT_FALSE(e.ok()) << c.message;
    EXPECT_EQ(e.message(), c.message);
  }
}

TEST_F(EntryFormatTest, ParseActionForTheDefault) {
  Result<ActionCall> a = ParseAction(*mac_, "fwd", {"7"});
  ASSERT_TRUE(a.ok()) << a.message();
  EXPECT_EQ(*a, Fwd(7));
  EXPECT_EQ(ParseAction(*mac_, "fwd", {}).message(),
            "table dmac: action fwd expects 1 parameters, got 0");
}

TEST_F(EntryFormatTest, FormatsOneLinePerEntryWithHits) {
  Result<TableEntry> e =
      ParseEntry(*lpm_, "set_nhop", {"10.1.2.0/24"}, {"00:00:00:00:00:01", "5"}, std::nullopt);
  ASSERT_TRUE(e.ok());
  EntryHandle h = MustAdd(*lpm_, *e);
  lpm_->Lookup(Key(0x0A010203));
  EXPECT_EQ(FormatEntry(*lpm_, h, *lpm_->Get(h)),
            "0: 10.1.2.0/24 => set_nhop 00:00:00:00:00:01 5 (hits 1)");

  Result<TableEntry> t =
      ParseEntry(*acl_, "fwd", {"10.0.0.0&&&255.0.0.0", "0x6&&&0xff"}, {"2"}, -3);
  ASSERT_TRUE(t.ok());
  h = MustAdd(*acl_, *t);
  EXPECT_EQ(FormatEntry(*acl_, h, *acl_->Get(h)),
            "0: 10.0.0.0&&&255.0.0.0 0x06&&&0xff priority -3 => fwd 2 (hits 0)");
  EXPECT_EQ(FormatAction(*mac_, mac_->default_action()), "drop");
}

// The dump line's keys and parameters parse back to the same entry.
TEST_F(EntryFormatTest, FormattedEntriesParseBack) {
  Result<TableEntry> e = ParseEntry(*flow_, "set_nhop", {"4095", "0xfffffffffffffffffffffffff"},
                                    {"1", "2"}, std::nullopt);
  ASSERT_TRUE(e.ok()) << e.message();
  EntryHandle h = MustAdd(*flow_, *e);
  std::istringstream line(FormatEntry(*flow_, h, *flow_->Get(h)));
  std::string handle, k1, k2, arrow, action, p1, p2;
  line >> handle >> k1 >> k2 >> arrow >> action >> p1 >> p2;
  EXPECT_EQ(k1, "0xfff");
  Result<TableEntry> back = ParseEntry(*flow_, action, {k1, k2}, {p1, p2}, std::nullopt);
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->key, e->key);
  EXPECT_EQ(back->action, e->action);
}

TEST(ParseValueTest, Ipv6TextAndItsErrors) {
  EXPECT_EQ(*ParseValue("2001:db8::1"), Key(1, 0x20010DB800000000));
  EXPECT_EQ(*ParseValue("::"), Key(0));
  EXPECT_EQ(*ParseValue("::ffff:10.0.0.1"), Key(0xFFFF0A000001));
  EXPECT_EQ(*ParseValue("1:2:3:4:5:6:7:8"), Key(0x0005000600070008, 0x0001000200030004));
  EXPECT_EQ(ParseValue("2001:db8::1::2").message(), "bad IPv6 address");
  EXPECT_EQ(ParseValue("1:2:3:4:5:6:7:g").message(), "bad IPv6 address");
}

TEST_F(EntryFormatTest, Ipv6LpmEntriesRoundTrip) {
  auto lpm6 = MustMake(MakeSpec("ipv6_lpm", MatchKind::kLpm, {{"dst_ip6", 128}}, 16));
  Result<TableEntry> e = ParseEntry(*lpm6, "fwd", {"2001:db8:1::/64"}, {"3"}, std::nullopt);
  ASSERT_TRUE(e.ok()) << e.message();
  EXPECT_EQ(e->key, Key(0, 0x20010DB800010000));
  EXPECT_EQ(e->prefix_len, 64);
  EntryHandle h = MustAdd(*lpm6, *e);
  EXPECT_EQ(FormatEntry(*lpm6, h, *lpm6->Get(h)), "0: 2001:db8:1::/64 => fwd 3 (hits 0)");
  // A bare address is a /128; the dump line's key parses back to the same entry.
  Result<TableEntry> host = ParseEntry(*lpm6, "fwd", {"2001:db8:1::5"}, {"4"}, std::nullopt);
  ASSERT_TRUE(host.ok()) << host.message();
  EXPECT_EQ(host->prefix_len, 128);
  h = MustAdd(*lpm6, *host);
  std::istringstream line(FormatEntry(*lpm6, h, *lpm6->Get(h)));
  std::string handle, key;
  line >> handle >> key;
  EXPECT_EQ(key, "2001:db8:1::5/128");
  Result<TableEntry> back = ParseEntry(*lpm6, "fwd", {key}, {"4"}, std::nullopt);
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->key, host->key);
  EXPECT_EQ(back->prefix_len, 128);
  EXPECT_EQ(ParseEntry(*lpm6, "fwd", {"2001:db8::/129"}, {"1"}, std::nullopt).message(),
            "table ipv6_lpm: key 1 \"2001:db8::/129\": prefix length 129 exceeds 128 bits");
  // Host bits beyond the prefix are cleared on add, as for IPv4.
  Result<TableEntry> wide = ParseEntry(*lpm6, "fwd", {"2001:db8:2:5::7/48"}, {"1"}, std::nullopt);
  h = MustAdd(*lpm6, *wide);
  EXPECT_EQ(FormatEntry(*lpm6, h, *lpm6->Get(h)), "2: 2001:db8:2::/48 => fwd 1 (hits 0)");
}

TEST_F(EntryFormatTest, BareIpv4LpmKeyIsASlash32) {
  Result<TableEntry> e = ParseEntry(*lpm_, "fwd", {"10.0.0.7"}, {"1"}, std::nullopt);
  ASSERT_TRUE(e.ok()) << e.message();
  EXPECT_EQ(e->prefix_len, 32);
}

}  // namespace
}  // namespace swemu
