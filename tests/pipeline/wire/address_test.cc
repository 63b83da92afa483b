#include "pipeline/wire/address.h"

#include <gtest/gtest.h>

namespace swemu {
namespace {

TEST(AddressTest, MacParseFormatRoundTrip) {
  auto mac = ParseMac("00:1B:21:aa:Bc:ff");
  ASSERT_TRUE(mac.ok()) << mac.message();
  EXPECT_EQ(mac->ToU64(), 0x001B21AABCFFULL);
  EXPECT_EQ(FormatMac(*mac), "00:1b:21:aa:bc:ff");
  EXPECT_EQ(MacAddr::FromU64(0x001B21AABCFFULL), *mac);
  EXPECT_FALSE(mac->IsMulticast());
  EXPECT_TRUE(kBroadcastMac.IsBroadcast());
  EXPECT_TRUE(ParseMac("01:00:5e:00:00:01")->IsMulticast());
}

TEST(AddressTest, Ipv4MulticastMacKeepsTheGroupsLow23Bits) {
  EXPECT_EQ(Ipv4MulticastMac(*ParseIpv4("239.1.0.1")), *ParseMac("01:00:5e:01:00:01"));
  EXPECT_EQ(Ipv4MulticastMac(*ParseIpv4("224.129.2.3")), *ParseMac("01:00:5e:01:02:03"));
}

TEST(AddressTest, MacRejectsBadText) {
  for (const char* bad :
       {"", "00:11:22:33:44", "00:11:22:33:44:55:66", "00-11-22-33-44-55",
        "0:11:22:33:44:55:", "00:11:22:33:44:5g", "001122334455", " 00:11:22:33:44:55"}) {
    auto mac = ParseMac(bad);
    EXPECT_FALSE(mac.ok()) << bad;
    EXPECT_NE(mac.message().find("bad MAC address"), std::string::npos) << mac.message();
  }
}

TEST(AddressTest, Ipv4ParseFormatRoundTrip) {
  auto addr = ParseIpv4("10.0.255.1");
  ASSERT_TRUE(addr.ok()) << addr.message();
  EXPECT_EQ(*addr, MakeIpv4Addr(10, 0, 255, 1));
  EXPECT_EQ(*addr, 0x0A00FF01u);
  EXPECT_EQ(FormatIpv4(*addr), "10.0.255.1");
  EXPECT_EQ(*ParseIpv4("0.0.0.0"), 0u);
  EXPECT_EQ(*ParseIpv4("255.255.255.255"), 0xFFFFFFFFu);
}

TEST(AddressTest, Ipv4RejectsBadText) {
  EXPECT_NE(ParseIpv4("256.0.0.1").message().find("out of range"), std::string::npos);
  EXPECT_NE(ParseIpv4("10.01.0.1").message().find("leading zero"), std::string::npos);
  EXPECT_NE(ParseIpv4("10.0.0.1x").message().find("after the fourth"), std::string::npos);
  for (const char* bad : {"", "10.0.0", "10.0.0.", "10..0.1", "1000.0.0.1", "a.b.c.d", "10.0.0.1.5",
                          "-1.0.0.0", " 10.0.0.1"}) {
    EXPECT_FALSE(ParseIpv4(bad).ok()) << bad;
  }
}

TEST(AddressTest, PrefixParseFormatAndContains) {
  auto prefix = ParseIpv4Prefix("10.1.0.0/16");
  ASSERT_TRUE(prefix.ok()) << prefix.message();
  EXPECT_EQ(prefix->addr, MakeIpv4Addr(10, 1, 0, 0));
  EXPECT_EQ(prefix->len, 16);
  EXPECT_EQ(prefix->Mask(), 0xFFFF0000u);
  EXPECT_TRUE(prefix->Contains(MakeIpv4Addr(10, 1, 200, 3)));
  EXPECT_FALSE(prefix->Contains(MakeIpv4Addr(10, 2, 0, 0)));
  EXPECT_EQ(FormatIpv4Prefix(*prefix), "10.1.0.0/16");
  EXPECT_EQ(ParseIpv4Prefix("0.0.0.0/0")->Mask(), 0u);
  EXPECT_EQ(*ParseIpv4Prefix("10.0.0.7"), (Ipv4Prefix{MakeIpv4Addr(10, 0, 0, 7), 32}));
}

TEST(AddressTest, PrefixRejectsBadText) {
  EXPECT_NE(ParseIpv4Prefix("10.0.0.1/24").message().find("host bits"), std::string::npos);
  EXPECT_NE(ParseIpv4Prefix("10.0.0.0/33").message().find("0..32"), std::string::npos);
  for (const char* bad : {"10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/08", "10.0.0.0/2x", "10.0.0.0/123",
                          "10.0.0/8", "/8"}) {
    EXPECT_FALSE(ParseIpv4Prefix(bad).ok()) << bad;
  }
}

TEST(AddressTest, Ipv6ParseFormatRoundTrip) {
  const Ipv6Addr a = *ParseIpv6("2001:db8:1::1");
  EXPECT_EQ(a.hi, 0x20010DB800010000ULL);
  EXPECT_EQ(a.lo, 1u);
  EXPECT_EQ(FormatIpv6(a), "2001:db8:1::1");
  EXPECT_EQ(FormatIpv6(*ParseIpv6("2001:DB8:0:0:0:0:0:A")), "2001:db8::a");  // RFC 5952
  EXPECT_EQ(*ParseIpv6("::ffff:10.0.0.1"), Ipv6Addr::MappedIpv4(MakeIpv4Addr(10, 0, 0, 1)));
  EXPECT_TRUE(Ipv6Addr::MappedIpv4(7).IsMappedIpv4());
  EXPECT_FALSE(a.IsMappedIpv4());
  uint8_t bytes[16];
  a.ToBytes(bytes);
  EXPECT_EQ(bytes[0], 0x20);
  EXPECT_EQ(bytes[15], 1);
  EXPECT_EQ(Ipv6Addr::FromBytes(bytes), a);
}

TEST(AddressTest, Ipv6RejectsBadText) {
  for (const char* bad : {"", "1::2::3", "2001:db8::g", "12345::", "10.0.0.1", ":::"}) {
    EXPECT_FALSE(ParseIpv6(bad).ok()) << bad;
  }
}

TEST(AddressTest, Ipv6PrefixParseFormatAndContains) {
  const Ipv6Prefix p = *ParseIpv6Prefix("2001:db8:1::/64");
  EXPECT_EQ(p.len, 64);
  EXPECT_EQ(FormatIpv6Prefix(p), "2001:db8:1::/64");
  EXPECT_TRUE(p.Contains(*ParseIpv6("2001:db8:1::ffff:1")));
  EXPECT_FALSE(p.Contains(*ParseIpv6("2001:db8:2::1")));
  EXPECT_EQ(ParseIpv6Prefix("2001:db8::1")->len, 128);
  EXPECT_TRUE(
      ParseIpv6Prefix("2001:db8:0:0:8000::/65")->Contains(*ParseIpv6("2001:db8::8000:0:0:1")));
  EXPECT_NE(ParseIpv6Prefix("2001:db8::1/64").message().find("host bits"), std::string::npos);
  for (const char* bad : {"2001:db8::/129", "2001:db8::/", "2001:db8::/064", "2001:db8::/1a"}) {
    EXPECT_FALSE(ParseIpv6Prefix(bad).ok()) << bad;
  }
}

TEST(AddressTest, Ipv6LinkLocalSolicitedNodeAndMulticastMac) {
  // RFC 4291 appendix A: 00:11:22:33:44:55 -> fe80::211:22ff:fe33:4455.
  EXPECT_EQ(FormatIpv6(LinkLocalIpv6(0x001122334455ULL)), "fe80::211:22ff:fe33:4455");
  EXPECT_EQ(FormatIpv6(SolicitedNodeIpv6(*ParseIpv6("2001:db8::12:3456"))), "ff02::1:ff12:3456");
  EXPECT_EQ(FormatMac(Ipv6MulticastMac(*ParseIpv6("ff02::1:ff12:3456"))), "33:33:ff:12:34:56");
}

}  // namespace
}  // namespace swemu
