#pragma once
// The ranks of a run that mpirun started (Open MPI): the engine's RankExchange over
// MPI_COMM_WORLD. Every collective fails the whole job if a rank dies (MPI's default error
// handler), so no rank waits for ever on one that is gone.
#include <memory>

#include "pipeline/engine/rank_exchange.h"

namespace swemu {

class MpiRanks final : public RankExchange {
 public:
  // When mpirun started this process as one of several: MPI initialised (finalised again by the
  // destructor). Null otherwise (no mpirun, or -np 1), and MPI is left alone.
  static std::unique_ptr<MpiRanks> Join(int* argc, char*** argv);
  // Whether mpirun (or another MPI launcher) started this process among several.
  static bool StartedByMpirun();
  ~MpiRanks() override;
  MpiRanks(const MpiRanks&) = delete;
  MpiRanks& operator=(const MpiRanks&) = delete;

  uint32_t rank() const override { return rank_; }
  uint32_t ranks() const override { return ranks_; }
  std::vector<std::vector<uint8_t>> Exchange(
      const std::vector<std::vector<uint8_t>>& to_rank) override;
  std::vector<uint64_t> AllGather(std::span<const uint64_t> words) override;

 private:
  MpiRanks(uint32_t rank, uint32_t ranks) : rank_(rank), ranks_(ranks) {}
  uint32_t rank_;
  uint32_t ranks_;
};

}  // namespace swemu
