#include "swemu/dpdk/pcap_recorder.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <filesystem>
#include <string>

#include "pipeline/control/units.h"

namespace swemu {
namespace {

// A thread started by the lcore inherits its pinning to the lcore's CPU, where it would only run
// when the lcore sleeps: move the writer to the other CPUs (all of them if there are no others).
void AvoidCallersCpus(std::thread& thread) {
  cpu_set_t own;
  if (sched_getaffinity(0, sizeof(own), &own) != 0) return;
  cpu_set_t others;
  CPU_ZERO(&others);
  const long cpus = std::min<long>(sysconf(_SC_NPROCESSORS_CONF), CPU_SETSIZE);
  for (long cpu = 0; cpu < cpus; ++cpu) {
    if (!CPU_ISSET(cpu, &own)) CPU_SET(cpu, &others);
  }
  if (CPU_COUNT(&others) == 0 ||
      pthread_setaffinity_np(thread.native_handle(), sizeof(others), &others) != 0) {
    for (long cpu = 0; cpu < cpus; ++cpu) CPU_SET(cpu, &others);
    pthread_setaffinity_np(thread.native_handle(), sizeof(others), &others);
  }
}

// pcap's file header and per-record header.
constexpr uint64_t kFileHeaderBytes = 24;
constexpr uint64_t kRecordHeaderBytes = 16;

// One line on stderr from the writer thread, in one write.
void Say(const std::string& line) { (void)!write(STDERR_FILENO, line.data(), line.size()); }

}  // namespace

Result<std::unique_ptr<PcapRecorder>> PcapRecorder::Start(const std::string& dir,
                                                          const std::vector<PortId>& ports,
                                                          uint16_t num_ports, uint32_t snaplen,
                                                          uint32_t lcores, uint64_t max_bytes) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return Status::Error("--pcap-dir: cannot create " + dir + ": " + error.message());
  std::unique_ptr<PcapRecorder> rec(new PcapRecorder());
  rec->dir_ = dir;
  rec->snaplen_ = snaplen;
  rec->max_bytes_ = max_bytes;
  rec->bytes_ = kFileHeaderBytes * 2 * ports.size();
  rec->recorded_.assign(num_ports, false);
  rec->writers_.resize(std::size_t{num_ports} * 2);
  for (PortId port : ports) {
    rec->recorded_[port] = true;
    for (int direction : {kRx, kTx}) {
      const std::string path =
          dir + "/port" + std::to_string(port) + (direction == kRx ? "-rx.pcap" : "-tx.pcap");
      Result<std::unique_ptr<PcapWriter>> writer = PcapWriter::Open(path);
      if (!writer.ok()) return Status::Error("--pcap-dir: " + writer.message());
      rec->writers_[std::size_t{port} * 2 + direction] = std::move(*writer);
    }
  }
  // Slots are cache-line multiples; as many as the lcores' share of kMaxRingBytes holds, at
  // most kMaxSlots per ring.
  const std::size_t stride = (sizeof(SlotHeader) + snaplen + 63) / 64 * 64;
  const uint64_t slots =
      std::bit_floor(std::clamp<uint64_t>(kMaxRingBytes / lcores / stride, 64, kMaxSlots));
  for (uint32_t i = 0; i < lcores; ++i)
    rec->rings_.push_back(std::make_unique<PcapRing>(slots, stride));
  rec->writer_ = std::thread([r = rec.get()] { r->WriterLoop(); });
  AvoidCallersCpus(rec->writer_);
  return rec;
}

PcapRecorder::~PcapRecorder() { (void)Stop(); }

uint64_t PcapRecorder::dropped() const {
  uint64_t dropped = 0;
  for (const auto& ring : rings_) dropped += ring->dropped();
  return dropped;
}

bool PcapRecorder::Admit(uint32_t caplen) {
  const uint64_t record = kRecordHeaderBytes + caplen;
  if (capped_ != 0 || (max_bytes_ != 0 && bytes_ + record > max_bytes_)) {
    if (capped_++ == 0) {
      Say("swemu: --pcap-dir: " + dir_ + " reached --pcap-max-bytes (" +
          FormatSi(static_cast<double>(bytes_), "B") + "); recording stopped\n");
    }
    return false;
  }
  bytes_ += record;
  if (!warned_ && max_bytes_ == 0 && bytes_ >= kWarnBytes) {
    warned_ = true;
    Say("swemu: --pcap-dir: " + dir_ + " holds " + FormatSi(static_cast<double>(bytes_), "B") +
        " already and grows; --pcap-max-bytes caps it\n");
  }
  return true;
}

uint64_t PcapRecorder::Drain(PcapRing& ring) {
  const uint64_t head = ring.head_.load(std::memory_order_acquire);
  uint64_t tail = ring.tail_.load(std::memory_order_relaxed);
  const uint64_t n = head - tail;
  for (; tail != head; ++tail) {
    const uint8_t* slot = ring.ring_.get() + (tail & ring.mask_) * ring.stride_;
    const auto* header = reinterpret_cast<const SlotHeader*>(slot);
    PcapWriter* writer = writers_[header->file].get();
    if (writer != nullptr && Admit(header->caplen)) {
      writer->Write(header->ts_ns, slot + sizeof(SlotHeader), header->caplen, header->orig_len);
      ++recorded_count_;
    }
    // Free slots as we go, so the lcore gets room back during a long drain.
    if ((tail & 63) == 63) ring.tail_.store(tail + 1, std::memory_order_release);
  }
  ring.tail_.store(tail, std::memory_order_release);
  return n;
}

uint64_t PcapRecorder::Drain() {
  uint64_t n = 0;
  for (auto& ring : rings_) n += Drain(*ring);
  return n;
}

void PcapRecorder::WriterLoop() {
  while (!stop_.load(std::memory_order_acquire)) {
    if (Drain() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  Drain();  // what the lcores published before they stopped
}

Status PcapRecorder::Stop() {
  if (stopped_) return Status::Ok();
  stopped_ = true;
  stop_.store(true, std::memory_order_release);
  if (writer_.joinable()) writer_.join();
  Status first;
  for (std::unique_ptr<PcapWriter>& writer : writers_) {
    if (writer == nullptr) continue;
    Status closed = writer->Close();
    if (first.ok() && !closed.ok()) first = closed;
  }
  return first;
}

}  // namespace swemu
