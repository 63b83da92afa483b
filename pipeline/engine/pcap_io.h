#pragma once
// Reading and writing Ethernet captures with nanosecond timestamps (libpcap). The reader takes
// pcap (micro- or nanosecond) and pcapng; the writer always writes nanosecond pcap so offline
// runs keep the virtual clock's full resolution.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/core/clock.h"
#include "pipeline/core/status.h"

struct pcap;
struct pcap_dumper;

namespace swemu {

struct PcapRecord {
  TimeNs ts_ns = 0;
  uint32_t orig_len = 0;       // length on the wire; bytes.size() is less when snapped
  std::vector<uint8_t> bytes;  // reused between records: no allocation once warmed up
};

// Link types a reader accepts: the switch takes Ethernet only; the analyzer takes any and
// decodes what it knows (raw IPv4, Linux cooked capture).
enum class PcapLinks { kEthernetOnly, kAny };

class PcapReader {
 public:
  static Result<std::unique_ptr<PcapReader>> Open(const std::string& path,
                                                  PcapLinks links = PcapLinks::kEthernetOnly);
  ~PcapReader();
  PcapReader(const PcapReader&) = delete;
  PcapReader& operator=(const PcapReader&) = delete;

  // The next record; false at the end of the file or on an error (then status() is not ok).
  bool Next(PcapRecord* record);
  const Status& status() const { return status_; }
  const std::string& path() const { return path_; }
  uint64_t records_read() const { return records_read_; }
  int link_type() const { return link_type_; }  // libpcap's DLT_* value

 private:
  PcapReader(std::string path, pcap* handle, int link_type)
      : path_(std::move(path)), handle_(handle), link_type_(link_type) {}
  std::string path_;
  pcap* handle_;
  int link_type_;
  Status status_;
  uint64_t records_read_ = 0;
};

// A reader of a FIFO or a pipe reads it once, as it streams (swemu --bench). A tool that reads
// an input twice (checked before the run, then run) refuses anything but a regular file first.
Status CheckRereadablePcap(const std::string& path);

// Reads a whole file once to check it (so a corrupt input is refused before a run starts).
Result<uint64_t> CountPcapRecords(const std::string& path);

class PcapWriter {
 public:
  static constexpr uint32_t kSnapLen = 262144;
  // pcap's seconds are 32-bit unsigned: the last time a record can carry.
  static constexpr TimeNs kPcapLastNs = 4'294'967'295'999'999'999ull;

  static Result<std::unique_ptr<PcapWriter>> Open(const std::string& path);
  ~PcapWriter();
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  void Write(TimeNs ts_ns, const uint8_t* data, uint32_t len) { Write(ts_ns, data, len, len); }
  // A snapped record: `caplen` bytes of a frame that was `orig_len` bytes on the wire.
  void Write(TimeNs ts_ns, const uint8_t* data, uint32_t caplen, uint32_t orig_len);
  // Flushes and closes; reports a write error (disk full) or a record past kPcapLastNs (not
  // written) that Write() could not.
  Status Close();
  const std::string& path() const { return path_; }
  uint64_t records_written() const { return records_written_; }

 private:
  PcapWriter(std::string path, pcap* handle, pcap_dumper* dumper)
      : path_(std::move(path)), handle_(handle), dumper_(dumper) {}
  std::string path_;
  pcap* handle_;
  pcap_dumper* dumper_;
  uint64_t records_written_ = 0;
  uint64_t records_refused_ = 0;
  Status failure_;
};

// Reads every record of a file into memory (tests and small tools).
Result<std::vector<PcapRecord>> ReadPcapFile(const std::string& path);

}  // namespace swemu
