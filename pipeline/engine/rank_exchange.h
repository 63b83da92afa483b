#pragma once
// What a partitioned engine needs from the other processes ("ranks") of a run spread over
// several (pipeline/mpi/ has the Open MPI one): every rank runs the same program on the same
// network, owns the partitions k with k % ranks == rank, and calls these at the same points in
// the same order (they are collective).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "pipeline/core/status.h"

namespace swemu {

// Which process of how many an MPI launcher started this one as, from the environment it sets
// (Open MPI's mpirun, else PMIx or PMI launchers): {0, 1} when none did. No MPI call.
struct LaunchedRank {
  uint32_t rank = 0;
  uint32_t ranks = 1;
};
inline LaunchedRank LaunchedByMpirun() {
  auto read = [](std::initializer_list<const char*> names, uint32_t fallback) {
    for (const char* name : names) {
      if (const char* value = std::getenv(name)) {
        return static_cast<uint32_t>(std::strtoul(value, nullptr, 10));
      }
    }
    return fallback;
  };
  LaunchedRank launched;
  launched.ranks = read({"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"}, 1);
  launched.rank = read({"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}, 0);
  if (launched.ranks == 0) launched.ranks = 1;
  return launched;
}

class RankExchange {
 public:
  virtual ~RankExchange() = default;
  virtual uint32_t rank() const = 0;
  virtual uint32_t ranks() const = 0;
  // Sends to_rank[r] to every rank r (this one's own is handed back); returns what each rank
  // sent to this one, by rank.
  virtual std::vector<std::vector<uint8_t>> Exchange(
      const std::vector<std::vector<uint8_t>>& to_rank) = 0;
  // Every rank's `words` (the same count on each), rank 0's first.
  virtual std::vector<uint64_t> AllGather(std::span<const uint64_t> words) = 0;
};

// Bytes for another rank: every rank is the same build on the same kind of machine, so plain
// values go as they are in memory.
class WireWriter {
 public:
  explicit WireWriter(std::vector<uint8_t>& out) : out_(out) {}
  void Bytes(const void* data, std::size_t len) {
    const auto* bytes = static_cast<const uint8_t*>(data);
    out_.insert(out_.end(), bytes, bytes + len);
  }
  template <typename T>
  void Value(const T& value) {
    Bytes(&value, sizeof value);
  }
  void Text(const std::string& text) {
    Value<uint64_t>(text.size());
    Bytes(text.data(), text.size());
  }

 private:
  std::vector<uint8_t>& out_;
};

// Reads what a WireWriter wrote; past the end it reads zeros and ok() turns false.
class WireReader {
 public:
  explicit WireReader(std::span<const uint8_t> in) : in_(in) {}
  bool done() const { return at_ >= in_.size(); }
  bool ok() const { return ok_; }
  std::span<const uint8_t> Bytes(std::size_t len) {
    if (len > in_.size() - at_) {
      ok_ = false;
      at_ = in_.size();
      return {};
    }
    std::span<const uint8_t> bytes = in_.subspan(at_, len);
    at_ += len;
    return bytes;
  }
  template <typename T>
  T Value() {
    T value{};
    std::span<const uint8_t> bytes = Bytes(sizeof value);
    if (!bytes.empty()) std::memcpy(&value, bytes.data(), sizeof value);
    return value;
  }
  std::string Text() {
    std::span<const uint8_t> bytes = Bytes(Value<uint64_t>());
    return std::string(bytes.begin(), bytes.end());
  }

 private:
  std::span<const uint8_t> in_;
  std::size_t at_ = 0;
  bool ok_ = true;
};

// Every rank's `text`, by rank (through Exchange).
inline std::vector<std::string> AllGatherText(RankExchange& ranks, const std::string& text) {
  std::vector<std::vector<uint8_t>> out(ranks.ranks(), std::vector<uint8_t>(text.begin(), text.end()));
  std::vector<std::string> all;
  for (const std::vector<uint8_t>& in : ranks.Exchange(out)) all.emplace_back(in.begin(), in.end());
  return all;
}

// Returns once every rank has called it.
inline void WaitForAll(RankExchange& ranks) {
  const uint64_t word = 0;
  ranks.AllGather({&word, 1});
}

// Each of `words` summed over the ranks (every rank passes as many), in place.
inline void SumOverRanks(RankExchange& ranks, std::span<uint64_t> words) {
  const std::vector<uint64_t> all = ranks.AllGather(words);
  std::fill(words.begin(), words.end(), 0);
  for (std::size_t i = 0; i < all.size(); ++i) words[i % words.size()] += all[i];
}

// Every rank ends a step the same way: OK when all succeeded, else the first failing rank's
// error (by rank) on all of them.
inline Status AgreeStatus(RankExchange& ranks, const Status& mine) {
  bool failed = false;
  std::string first;
  for (const std::string& message : AllGatherText(ranks, mine.ok() ? "" : mine.message())) {
    if (message.empty() || failed) continue;
    failed = true;
    first = message;
  }
  return failed ? Status::Error(first) : Status::Ok();
}

}  // namespace swemu
