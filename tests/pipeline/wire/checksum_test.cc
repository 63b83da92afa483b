#include "pipeline/wire/checksum.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/tcp.h"
#include "pipeline/wire/udp.h"

namespace swemu {
namespace {

// The classic example header (192.168.0.1 -> 192.168.0.199, UDP), checksum 0xb861.
constexpr uint8_t kIpv4Example[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                                      0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};

// A word-at-a-time reference, written the slow obvious way.
uint16_t ReferenceChecksum(const std::vector<uint8_t>& bytes) {
  uint32_t sum = 0;
  for (std::size_t i = 0; i < bytes.size(); i += 2) {
    sum += (uint32_t{bytes[i]} << 8) | (i + 1 < bytes.size() ? bytes[i + 1] : 0);
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  }
  return static_cast<uint16_t>(~sum);
}

TEST(ChecksumTest, Rfc1071Example) {
  const uint8_t data[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
  EXPECT_EQ(OnesComplementSum(data, sizeof(data)), 0xddf2u);
  EXPECT_EQ(InternetChecksum(data, sizeof(data)), 0x220d);
}

TEST(ChecksumTest, Ipv4ExampleHeader) {
  EXPECT_EQ(Ipv4HeaderChecksum(kIpv4Example, 20), 0xb861);
  EXPECT_TRUE(Ipv4HeaderChecksumOk(kIpv4Example, 20));
  uint8_t bad[20];
  std::copy(std::begin(kIpv4Example), std::end(kIpv4Example), bad);
  bad[8] = 0x3f;  // TTL changed, checksum not
  EXPECT_FALSE(Ipv4HeaderChecksumOk(bad, 20));
  EXPECT_EQ(Ipv4HeaderChecksum(bad, 20), 0xb961);
}

TEST(ChecksumTest, Ipv4VerifyAcceptsExactlyTheRightChecksum) {
  std::mt19937 rng(9);
  for (int iter = 0; iter < 5000; ++iter) {
    const std::size_t len = (iter % 2 == 0) ? 20 : 4 * (5 + rng() % 11);  // both code paths
    std::vector<uint8_t> hdr(len);
    for (auto& b : hdr) b = static_cast<uint8_t>(rng());
    const uint16_t right = Ipv4HeaderChecksum(hdr.data(), len);
    StoreBe16(hdr.data() + 10, right);
    ASSERT_TRUE(Ipv4HeaderChecksumOk(hdr.data(), len)) << iter;
    const auto wrong = static_cast<uint16_t>(right + 1 + rng() % 0xFFFE);
    if (right == 0 && wrong == 0xFFFF) continue;  // the one other encoding of zero
    StoreBe16(hdr.data() + 10, wrong);
    ASSERT_FALSE(Ipv4HeaderChecksumOk(hdr.data(), len)) << iter;
  }
  const uint8_t zeros[20] = {};  // sums to 0: the right checksum would be 0xFFFF
  EXPECT_FALSE(Ipv4HeaderChecksumOk(zeros, 20));
  EXPECT_EQ(Ipv4HeaderChecksum(zeros, 20), 0xFFFF);
}

TEST(ChecksumTest, MatchesReferenceForAllLengthsAndChainsOnEvenSplits) {
  std::mt19937 rng(7);
  for (std::size_t len = 0; len < 80; ++len) {
    std::vector<uint8_t> bytes(len);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    EXPECT_EQ(InternetChecksum(bytes.data(), len), ReferenceChecksum(bytes)) << len;
    for (std::size_t split = 0; split <= len; split += 2) {
      const uint32_t first = OnesComplementSum(bytes.data(), split);
      EXPECT_EQ(ChecksumFromSum(OnesComplementSum(bytes.data() + split, len - split, first)),
                ReferenceChecksum(bytes));
    }
  }
}

// Lengths from 64 on take the word-sum bulk path (native byte order, swapped once): random
// bytes and all-ones (every addition carries), odd lengths and odd starting addresses included.
TEST(ChecksumTest, BulkPathMatchesReferenceUpToJumboLengths) {
  std::mt19937 rng(11);
  for (std::size_t len = 60; len < 1600; len += 1 + rng() % 13) {
    for (const bool ones : {false, true}) {
      std::vector<uint8_t> buf(len + 1);
      for (auto& b : buf) b = ones ? 0xFF : static_cast<uint8_t>(rng());
      const std::vector<uint8_t> bytes(buf.begin() + 1, buf.end());  // unaligned start below
      EXPECT_EQ(InternetChecksum(buf.data() + 1, len), ReferenceChecksum(bytes)) << len;
      const std::size_t split = 2 * (rng() % (len / 2 + 1));
      const uint32_t first = OnesComplementSum(bytes.data(), split, 0xFFFF);
      EXPECT_EQ(ChecksumFromSum(OnesComplementSum(bytes.data() + split, len - split, first)),
                ReferenceChecksum(bytes))
          << len << " split " << split;
    }
  }
}

TEST(ChecksumTest, UdpKnownVector) {
  // 192.168.0.1:1234 -> 192.168.0.199:5678, payload "abcd"; 0x9df6 from an independent script.
  std::vector<uint8_t> ip(kIpv4Example, kIpv4Example + 20);
  std::vector<uint8_t> udp = {0x04, 0xd2, 0x16, 0x2e, 0x00, 0x0c, 0x00, 0x00, 'a', 'b', 'c', 'd'};
  EXPECT_EQ(UdpChecksum(ip.data(), udp.data(), udp.size()), 0x9df6);
  HeaderAt<UdpHeader>(udp.data())->SetChecksum(0x9df6);
  EXPECT_TRUE(UdpChecksumOk(ip.data(), udp.data(), udp.size()));
  udp[9] ^= 1;
  EXPECT_FALSE(UdpChecksumOk(ip.data(), udp.data(), udp.size()));
  HeaderAt<UdpHeader>(udp.data())->SetChecksum(0);  // "not computed" always passes
  EXPECT_TRUE(UdpChecksumOk(ip.data(), udp.data(), udp.size()));
}

TEST(ChecksumTest, UdpComputedZeroIsSentAsAllOnes) {
  std::vector<uint8_t> ip(kIpv4Example, kIpv4Example + 20);
  std::vector<uint8_t> udp = {0x04, 0xd2, 0x16, 0x2e, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x00};
  // Choose the 2 payload bytes so the sum is 0xFFFF, i.e. the computed checksum is 0.
  const uint32_t partial = FoldSum(Ipv4PseudoHeaderSum(ip.data(), kIpProtoUdp, 10) +
                                   OnesComplementSum(udp.data(), udp.size()));
  StoreBe16(udp.data() + 8, static_cast<uint16_t>(0xFFFF - partial));
  EXPECT_EQ(UdpChecksum(ip.data(), udp.data(), udp.size()), 0xFFFF);
  HeaderAt<UdpHeader>(udp.data())->SetChecksum(0xFFFF);
  EXPECT_TRUE(UdpChecksumOk(ip.data(), udp.data(), udp.size()));
}

TEST(ChecksumTest, TcpKnownVector) {
  std::vector<uint8_t> ip(kIpv4Example, kIpv4Example + 20);
  std::vector<uint8_t> tcp = {0x04, 0xd2, 0x16, 0x2e, 0, 0, 0, 1,   0,   0,   0,   2,  0x50,
                              0x18, 0xff, 0xff, 0,    0, 0, 0, 'h', 'e', 'l', 'l', 'o'};
  EXPECT_EQ(TcpChecksum(ip.data(), tcp.data(), tcp.size()), 0xced9);
  EXPECT_FALSE(TcpChecksumOk(ip.data(), tcp.data(), tcp.size()));
  HeaderAt<TcpHeader>(tcp.data())->SetChecksum(0xced9);
  EXPECT_TRUE(TcpChecksumOk(ip.data(), tcp.data(), tcp.size()));
}

TEST(ChecksumTest, IncrementalUpdate16EqualsFullRecompute) {
  std::mt19937 rng(42);
  for (int iter = 0; iter < 20000; ++iter) {
    const int ihl = 5 + static_cast<int>(rng() % 11);
    std::vector<uint8_t> hdr(ihl * 4);
    for (auto& b : hdr) b = static_cast<uint8_t>(rng());
    hdr[0] = static_cast<uint8_t>(0x40 | ihl);
    auto* ip = HeaderAt<Ipv4Header>(hdr.data());
    ip->SetHeaderChecksum(Ipv4HeaderChecksum(hdr.data(), hdr.size()));
    std::size_t word = 2 * (rng() % (hdr.size() / 2));
    if (word == 10) word = 8;  // not the checksum itself
    const uint16_t old_word = LoadBe16(hdr.data() + word);
    const uint16_t new_word =
        (iter % 4 == 0) ? static_cast<uint16_t>(old_word - 0x100) : static_cast<uint16_t>(rng());
    StoreBe16(hdr.data() + word, new_word);
    const uint16_t incremental = ChecksumUpdate16(ip->HeaderChecksum(), old_word, new_word);
    ASSERT_EQ(incremental, Ipv4HeaderChecksum(hdr.data(), hdr.size()))
        << "iter " << iter << " word " << word;
  }
}

TEST(ChecksumTest, IncrementalUpdate32EqualsFullRecompute) {
  std::mt19937 rng(43);
  for (int iter = 0; iter < 20000; ++iter) {
    uint8_t hdr[20];
    for (auto& b : hdr) b = static_cast<uint8_t>(rng());
    hdr[0] = 0x45;
    auto* ip = HeaderAt<Ipv4Header>(hdr);
    ip->SetHeaderChecksum(Ipv4HeaderChecksum(hdr, 20));
    const uint32_t old_addr = ip->DstAddr();
    const uint32_t new_addr = static_cast<uint32_t>(rng());
    ip->SetDstAddr(new_addr);
    ASSERT_EQ(ChecksumUpdate32(ip->HeaderChecksum(), old_addr, new_addr),
              Ipv4HeaderChecksum(hdr, 20))
        << "iter " << iter;
  }
}

}  // namespace
}  // namespace swemu
