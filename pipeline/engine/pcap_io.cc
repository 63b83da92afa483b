#include "pipeline/engine/pcap_io.h"

#include <pcap/pcap.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace swemu {
namespace {

constexpr TimeNs kNsPerSec = 1'000'000'000;
// Seconds a read timestamp may have: room is left above it for a run's delays (kNever / 4).
constexpr uint64_t kMaxPcapReadSec = (kNever / 4) / kNsPerSec;

// libpcap's messages sometimes start with the path already; never say it twice.
std::string WithPath(const std::string& path, const std::string& message) {
  if (message.rfind(path + ":", 0) == 0) return message;
  return path + ": " + message;
}

// A classic pcap file's header names a snaplen, and libpcap cuts every record to it, even one
// whose caplen says more was captured (tshark reads such a record whole). The stream handed to
// libpcap reads the file with that field zeroed, which libpcap takes as the largest snaplen of
// the link type: every record is read as long as its caplen says.
class WholeRecords {
 public:
  static FILE* Open(FILE* file) {
    auto* self = new WholeRecords(file);
    self->head_len_ = std::fread(self->head_, 1, sizeof self->head_, file);
    uint32_t magic = 0;
    if (self->head_len_ == sizeof self->head_) std::memcpy(&magic, self->head_, sizeof magic);
    for (uint32_t classic : {0xa1b2c3d4u, 0xd4c3b2a1u, 0xa1b23c4du, 0x4d3cb2a1u}) {
      if (magic == classic) std::memset(self->head_ + kSnaplenOffset, 0, 4);
    }
    FILE* stream = fopencookie(self, "r", {&Read, nullptr, nullptr, &Close});
    if (stream == nullptr) Close(self);
    return stream;
  }

 private:
  static constexpr std::size_t kSnaplenOffset = 16;
  explicit WholeRecords(FILE* file) : file_(file) {}
  static ssize_t Read(void* cookie, char* buffer, size_t size) {
    auto* self = static_cast<WholeRecords*>(cookie);
    if (self->served_ < self->head_len_) {
      const std::size_t n = std::min(size, self->head_len_ - self->served_);
      std::memcpy(buffer, self->head_ + self->served_, n);
      self->served_ += n;
      return static_cast<ssize_t>(n);
    }
    const std::size_t n = std::fread(buffer, 1, size, self->file_);
    return n == 0 && std::ferror(self->file_) ? -1 : static_cast<ssize_t>(n);
  }
  static int Close(void* cookie) {
    auto* self = static_cast<WholeRecords*>(cookie);
    const int rc = std::fclose(self->file_);
    delete self;
    return rc;
  }
  FILE* file_;
  unsigned char head_[24] = {};
  std::size_t head_len_ = 0;
  std::size_t served_ = 0;
};

}  // namespace

Status CheckRereadablePcap(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Status::Error(path + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return Status::Error(path + ": is a directory");
  if (!S_ISREG(st.st_mode)) {
    return Status::Error(path + ": not a regular file (a pcap is read more than once: save " +
                         "the capture or pipe to a file first)");
  }
  return Status::Ok();
}

Result<std::unique_ptr<PcapReader>> PcapReader::Open(const std::string& path, PcapLinks links) {
  FILE* file = std::fopen(path.c_str(), "rbe");
  if (file == nullptr) return Status::Error(path + ": " + std::strerror(errno));
  FILE* stream = WholeRecords::Open(file);
  if (stream == nullptr) return Status::Error(path + ": " + std::strerror(errno));
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  pcap* handle =
      pcap_fopen_offline_with_tstamp_precision(stream, PCAP_TSTAMP_PRECISION_NANO, errbuf);
  if (handle == nullptr) {
    std::fclose(stream);
    return Status::Error(WithPath(path, errbuf));
  }
  int link_type = pcap_datalink(handle);
  if (links == PcapLinks::kEthernetOnly && link_type != DLT_EN10MB) {
    const char* name = pcap_datalink_val_to_name(link_type);
    pcap_close(handle);
    return Status::Error(path + ": link type " + (name ? name : std::to_string(link_type)) +
                         " is not Ethernet (EN10MB)");
  }
  return std::unique_ptr<PcapReader>(new PcapReader(path, handle, link_type));
}

PcapReader::~PcapReader() { pcap_close(handle_); }

bool PcapReader::Next(PcapRecord* record) {
  if (!status_.ok()) return false;
  pcap_pkthdr* header = nullptr;
  const u_char* data = nullptr;
  int rc = pcap_next_ex(handle_, &header, &data);
  if (rc == PCAP_ERROR_BREAK) return false;  // end of file
  if (rc != 1) {
    status_ = Status::Error(WithPath(
        path_, "record " + std::to_string(records_read_ + 1) + ": " + pcap_geterr(handle_)));
    return false;
  }
  // pcap's seconds field is unsigned 32-bit, but libpcap reads it as signed: a time from 2^31 s
  // on comes back negative. pcapng's 64-bit times come back as they are, up to what TimeNs holds.
  int64_t sec = header->ts.tv_sec;
  if (sec < 0) sec += int64_t{1} << 32;
  if (sec < 0 || static_cast<uint64_t>(sec) > kMaxPcapReadSec) {
    status_ = Status::Error(WithPath(path_, "record " + std::to_string(records_read_ + 1) +
                                                ": timestamp " + std::to_string(sec) +
                                                " s is out of range"));
    return false;
  }
  // libpcap has scaled the fraction field to nanoseconds (and may have wrapped it).
  if (header->ts.tv_usec < 0 || header->ts.tv_usec >= static_cast<long>(kNsPerSec)) {
    status_ = Status::Error(WithPath(
        path_, "record " + std::to_string(records_read_ + 1) +
                   ": the timestamp's fraction of a second is a second or more (its field is "
                   "out of range)"));
    return false;
  }
  // With nanosecond precision libpcap stores nanoseconds in tv_usec.
  record->ts_ns = static_cast<TimeNs>(sec) * kNsPerSec + static_cast<TimeNs>(header->ts.tv_usec);
  record->orig_len = header->len;
  record->bytes.assign(data, data + header->caplen);
  ++records_read_;
  return true;
}

Result<uint64_t> CountPcapRecords(const std::string& path) {
  Result<std::unique_ptr<PcapReader>> reader = PcapReader::Open(path);
  if (!reader.ok()) return reader.status();
  PcapRecord record;
  while ((*reader)->Next(&record)) {
  }
  if (!(*reader)->status().ok()) return (*reader)->status();
  return (*reader)->records_read();
}

Result<std::vector<PcapRecord>> ReadPcapFile(const std::string& path) {
  Result<std::unique_ptr<PcapReader>> reader = PcapReader::Open(path);
  if (!reader.ok()) return reader.status();
  std::vector<PcapRecord> records;
  PcapRecord record;
  while ((*reader)->Next(&record)) records.push_back(record);
  if (!(*reader)->status().ok()) return (*reader)->status();
  return records;
}

Result<std::unique_ptr<PcapWriter>> PcapWriter::Open(const std::string& path) {
  pcap* handle =
      pcap_open_dead_with_tstamp_precision(DLT_EN10MB, kSnapLen, PCAP_TSTAMP_PRECISION_NANO);
  if (handle == nullptr) return Status::Error(path + ": cannot create a pcap handle");
  pcap_dumper* dumper = pcap_dump_open(handle, path.c_str());
  if (dumper == nullptr) {
    std::string message = WithPath(path, pcap_geterr(handle));
    pcap_close(handle);
    return Status::Error(message);
  }
  return std::unique_ptr<PcapWriter>(new PcapWriter(path, handle, dumper));
}

PcapWriter::~PcapWriter() {
  if (dumper_ != nullptr) pcap_dump_close(dumper_);
  pcap_close(handle_);
}

void PcapWriter::Write(TimeNs ts_ns, const uint8_t* data, uint32_t caplen, uint32_t orig_len) {
  if (ts_ns > kPcapLastNs) {
    // The format cannot hold it: refuse rather than wrap the seconds (Close() reports it).
    if (failure_.ok()) {
      failure_ =
          Status::Error(path_ + ": record " + std::to_string(records_written_ + 1) + " is at " +
                        std::to_string(ts_ns / kNsPerSec) +
                        " s, past the last time a pcap file can hold (4294967295.999999999 s)");
    }
    ++records_refused_;
    return;
  }
  pcap_pkthdr header = {};
  header.ts.tv_sec = static_cast<time_t>(ts_ns / kNsPerSec);
  header.ts.tv_usec = static_cast<suseconds_t>(ts_ns % kNsPerSec);
  header.len = orig_len;
  header.caplen = caplen < kSnapLen ? caplen : kSnapLen;
  pcap_dump(reinterpret_cast<u_char*>(dumper_), &header, data);
  ++records_written_;
}

Status PcapWriter::Close() {
  if (dumper_ == nullptr) return failure_;
  bool failed = pcap_dump_flush(dumper_) != 0 || std::ferror(pcap_dump_file(dumper_)) != 0;
  pcap_dump_close(dumper_);
  dumper_ = nullptr;
  if (failed) return Status::Error(path_ + ": write failed");
  return failure_;
}

}  // namespace swemu
