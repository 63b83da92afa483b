#include "pipeline/engine/pcap_io.h"

#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace swemu {
namespace {

std::string TempPath(const std::string& name) {
  return testing::TempDir() + "pcap_io_test_" + name;
}

std::vector<uint8_t> Bytes(std::size_t n, uint8_t seed) {
  std::vector<uint8_t> bytes(n);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(seed + i * 7);
  return bytes;
}

void WriteRaw(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

std::vector<uint8_t> ReadRaw(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(PcapIoTest, RoundTripKeepsNanosecondTimestampsAndBytes) {
  const std::string path = TempPath("round_trip.pcap");
  const std::vector<std::pair<TimeNs, std::vector<uint8_t>>> records = {
      {1'700'000'000'123'456'789ull, Bytes(60, 1)},
      {1'700'000'000'123'456'790ull, Bytes(1514, 2)},
      {1'700'000'001'000'000'001ull, Bytes(9000, 3)},
  };
  {
    Result<std::unique_ptr<PcapWriter>> writer = PcapWriter::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.message();
    for (const auto& [ts, bytes] : records) {
      (*writer)->Write(ts, bytes.data(), static_cast<uint32_t>(bytes.size()));
    }
    EXPECT_EQ((*writer)->records_written(), 3u);
    ASSERT_TRUE((*writer)->Close().ok());
  }
  Result<std::vector<PcapRecord>> read = ReadPcapFile(path);
  ASSERT_TRUE(read.ok()) << read.message();
  ASSERT_EQ(read->size(), records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ((*read)[i].ts_ns, records[i].first) << i;
    EXPECT_EQ((*read)[i].bytes, records[i].second) << i;
    EXPECT_EQ((*read)[i].orig_len, records[i].second.size()) << i;
  }
}

TEST(PcapIoTest, MicrosecondPcapIsScaledToNanoseconds) {
  const std::string path = TempPath("micro.pcap");
  pcap_t* handle = pcap_open_dead(DLT_EN10MB, 65535);
  pcap_dumper_t* dumper = pcap_dump_open(handle, path.c_str());
  ASSERT_NE(dumper, nullptr);
  std::vector<uint8_t> frame = Bytes(64, 9);
  pcap_pkthdr header = {};
  header.ts.tv_sec = 12;
  header.ts.tv_usec = 345678;
  header.caplen = header.len = 64;
  pcap_dump(reinterpret_cast<u_char*>(dumper), &header, frame.data());
  pcap_dump_close(dumper);
  pcap_close(handle);

  Result<std::vector<PcapRecord>> read = ReadPcapFile(path);
  ASSERT_TRUE(read.ok()) << read.message();
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ((*read)[0].ts_ns, 12'345'678'000ull);
  EXPECT_EQ((*read)[0].bytes, frame);
}

// A minimal pcapng: section header, one Ethernet interface (microsecond resolution), one
// enhanced packet block.
TEST(PcapIoTest, ReadsPcapng) {
  std::vector<uint8_t> file;
  auto u32 = [&](std::initializer_list<uint32_t> values) {
    for (uint32_t v : values) {
      for (int i = 0; i < 4; ++i) file.push_back(static_cast<uint8_t>(v >> (8 * i)));
    }
  };
  // Section header block; section length -1 (unknown).
  u32({0x0A0D0D0A, 28, 0x1A2B3C4D, 0x00000001, 0xFFFFFFFF, 0xFFFFFFFF, 28});
  // Interface description block: link type 1 (Ethernet), snap length 65535.
  u32({1, 20, 0x00000001, 65535, 20});
  // Enhanced packet block: interface 0, timestamp in microseconds, 62 bytes padded to 64.
  const std::vector<uint8_t> frame = Bytes(62, 5);
  const uint64_t ts_us = 5'000'000'123ull;
  u32({6, 32 + 64, 0, static_cast<uint32_t>(ts_us >> 32), static_cast<uint32_t>(ts_us), 62, 62});
  file.insert(file.end(), frame.begin(), frame.end());
  file.push_back(0);
  file.push_back(0);
  u32({32 + 64});
  const std::string path = TempPath("file.pcapng");
  WriteRaw(path, file);

  Result<std::vector<PcapRecord>> read = ReadPcapFile(path);
  ASSERT_TRUE(read.ok()) << read.message();
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ((*read)[0].ts_ns, ts_us * 1000);
  EXPECT_EQ((*read)[0].bytes, frame);
}

// A record longer than the file header's snaplen is read as long as its caplen says, as tshark
// does (libpcap alone cut it to 64 bytes; the frame then dropped as ipv4_bad_total_length).
TEST(PcapIoTest, ARecordLongerThanTheSnaplenIsReadWhole) {
  const std::string path = TempPath("short_snaplen.pcap");
  pcap_t* handle = pcap_open_dead(DLT_EN10MB, 64);
  pcap_dumper_t* dumper = pcap_dump_open(handle, path.c_str());
  ASSERT_NE(dumper, nullptr);
  const std::vector<uint8_t> frame = Bytes(542, 4);
  pcap_pkthdr header = {};
  header.caplen = header.len = 542;
  pcap_dump(reinterpret_cast<u_char*>(dumper), &header, frame.data());
  pcap_dump_close(dumper);
  pcap_close(handle);
  ASSERT_EQ(ReadRaw(path)[16], 64);  // the file says snaplen 64
  Result<std::vector<PcapRecord>> read = ReadPcapFile(path);
  ASSERT_TRUE(read.ok()) << read.message();
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ((*read)[0].bytes, frame);
}

// Inputs that are read twice (checked, then run): a FIFO or a pipe is one line at once, not a
// hang (swemu --bench reads a FIFO once, as it streams).
TEST(PcapIoTest, AFifoIsRefusedAtOnceWhereInputsAreReadTwice) {
  const std::string path = TempPath("input.fifo");
  std::remove(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  const Status refused = CheckRereadablePcap(path);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.message(), path + ": not a regular file (a pcap is read more than once: save "
                                      "the capture or pipe to a file first)");
  WriteRaw(TempPath("regular.pcap"), Bytes(24, 0));
  EXPECT_TRUE(CheckRereadablePcap(TempPath("regular.pcap")).ok());
  std::remove(path.c_str());
}

TEST(PcapIoTest, MissingFileIsAnErrorNamingIt) {
  Result<std::unique_ptr<PcapReader>> reader = PcapReader::Open("/nonexistent/x.pcap");
  ASSERT_FALSE(reader.ok());
  EXPECT_NE(reader.message().find("/nonexistent/x.pcap"), std::string::npos);
  EXPECT_EQ(reader.message().find('\n'), std::string::npos);
}

TEST(PcapIoTest, GarbageFileIsAnError) {
  const std::string path = TempPath("garbage.pcap");
  WriteRaw(path, Bytes(100, 77));
  Result<std::unique_ptr<PcapReader>> reader = PcapReader::Open(path);
  ASSERT_FALSE(reader.ok());
  EXPECT_NE(reader.message().find(path), std::string::npos);
}

TEST(PcapIoTest, TruncatedRecordIsAnErrorAfterTheGoodRecords) {
  const std::string path = TempPath("truncated.pcap");
  {
    auto writer = PcapWriter::Open(path);
    ASSERT_TRUE(writer.ok());
    std::vector<uint8_t> frame = Bytes(100, 1);
    for (int i = 0; i < 3; ++i) (*writer)->Write(1000 + i, frame.data(), 100);
    ASSERT_TRUE((*writer)->Close().ok());
  }
  std::vector<uint8_t> bytes = ReadRaw(path);
  bytes.resize(bytes.size() - 30);  // cut into the last record's data
  WriteRaw(path, bytes);

  Result<std::unique_ptr<PcapReader>> reader = PcapReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.message();
  PcapRecord record;
  EXPECT_TRUE((*reader)->Next(&record));
  EXPECT_TRUE((*reader)->Next(&record));
  EXPECT_FALSE((*reader)->Next(&record));
  ASSERT_FALSE((*reader)->status().ok());
  EXPECT_NE((*reader)->status().message().find(path + ": record 3"), std::string::npos)
      << (*reader)->status().message();
  EXPECT_FALSE((*reader)->Next(&record));  // stays failed

  Result<uint64_t> count = CountPcapRecords(path);
  EXPECT_FALSE(count.ok());
}

TEST(PcapIoTest, CountPcapRecordsCountsAGoodFile) {
  const std::string path = TempPath("count.pcap");
  {
    auto writer = PcapWriter::Open(path);
    ASSERT_TRUE(writer.ok());
    std::vector<uint8_t> frame = Bytes(60, 1);
    for (int i = 0; i < 7; ++i) (*writer)->Write(i, frame.data(), 60);
    ASSERT_TRUE((*writer)->Close().ok());
  }
  Result<uint64_t> count = CountPcapRecords(path);
  ASSERT_TRUE(count.ok()) << count.message();
  EXPECT_EQ(*count, 7u);
}

TEST(PcapIoTest, NonEthernetLinkTypeIsRefused) {
  const std::string path = TempPath("raw_ip.pcap");
  pcap_t* handle = pcap_open_dead(DLT_RAW, 65535);
  pcap_dumper_t* dumper = pcap_dump_open(handle, path.c_str());
  ASSERT_NE(dumper, nullptr);
  pcap_dump_close(dumper);
  pcap_close(handle);
  Result<std::unique_ptr<PcapReader>> reader = PcapReader::Open(path);
  ASSERT_FALSE(reader.ok());
  EXPECT_NE(reader.message().find("not Ethernet"), std::string::npos) << reader.message();
}

TEST(PcapIoTest, WriterToAMissingDirectoryIsAnError) {
  Result<std::unique_ptr<PcapWriter>> writer = PcapWriter::Open("/nonexistent/dir/out.pcap");
  ASSERT_FALSE(writer.ok());
  EXPECT_NE(writer.message().find("/nonexistent/dir/out.pcap"), std::string::npos);
}

// pcap's seconds are an unsigned 32-bit field; libpcap hands times from 2^31 s on back as
// negative seconds, which once wrapped the virtual clock (3000000000 s read as 4266874889 s).
// The whole range reads back as written, to the last nanosecond pcap can hold.
TEST(PcapIoTest, TimestampsFromTwoToThe31SecondsOnReadBackExactly) {
  const std::string path = TempPath("late.pcap");
  const std::vector<TimeNs> times = {2'147'483'648'000'000'000ull, 3'000'000'000'000'000'001ull,
                                     PcapWriter::kPcapLastNs};
  {
    Result<std::unique_ptr<PcapWriter>> writer = PcapWriter::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.message();
    const std::vector<uint8_t> frame = Bytes(60, 9);
    for (TimeNs t : times) (*writer)->Write(t, frame.data(), 60);
    ASSERT_TRUE((*writer)->Close().ok());
  }
  Result<std::vector<PcapRecord>> read = ReadPcapFile(path);
  ASSERT_TRUE(read.ok()) << read.message();
  ASSERT_EQ(read->size(), times.size());
  for (std::size_t i = 0; i < times.size(); ++i) EXPECT_EQ((*read)[i].ts_ns, times[i]) << i;
}

TEST(PcapIoTest, WriterRefusesATimePastWhatPcapHoldsInsteadOfWrappingIt) {
  const std::string path = TempPath("too_late.pcap");
  Result<std::unique_ptr<PcapWriter>> writer = PcapWriter::Open(path);
  ASSERT_TRUE(writer.ok()) << writer.message();
  const std::vector<uint8_t> frame = Bytes(60, 9);
  (*writer)->Write(1'000'000'000, frame.data(), 60);
  (*writer)->Write(PcapWriter::kPcapLastNs + 1, frame.data(), 60);
  EXPECT_EQ((*writer)->records_written(), 1u);
  Status closed = (*writer)->Close();
  ASSERT_FALSE(closed.ok());
  EXPECT_NE(closed.message().find("past the last time a pcap file can hold"), std::string::npos)
      << closed.message();
  EXPECT_NE(closed.message().find("4294967296 s"), std::string::npos) << closed.message();
}

}  // namespace
}  // namespace swemu
