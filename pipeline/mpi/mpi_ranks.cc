#include "pipeline/mpi/mpi_ranks.h"

#include <mpi.h>

#include <climits>
#include <cstdio>

namespace swemu {
namespace {

constexpr int kExchangeTag = 39;  // the frames of a window (Exchange)

// MPI counts are ints: a window's frames or a report past 2 GiB to one rank ends the job.
int CountOf(std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(INT_MAX)) {
    std::fprintf(stderr, "swemu: more than 2 GiB for one rank in one message\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return static_cast<int>(bytes);
}

}  // namespace

bool MpiRanks::StartedByMpirun() { return LaunchedByMpirun().ranks > 1; }

std::unique_ptr<MpiRanks> MpiRanks::Join(int* argc, char*** argv) {
  if (!StartedByMpirun()) return nullptr;
  MPI_Init(argc, argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return std::unique_ptr<MpiRanks>(
      new MpiRanks(static_cast<uint32_t>(rank), static_cast<uint32_t>(size)));
}

// Every rank is done before any finalises (and leaves: mpirun stops the others once one has
// ended with an error).
MpiRanks::~MpiRanks() {
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
}

// The counts first (one all-to-all), then each buffer straight from the sender's vector into
// the receiver's, point to point: no gathering into one buffer and splitting again.
std::vector<std::vector<uint8_t>> MpiRanks::Exchange(
    const std::vector<std::vector<uint8_t>>& to_rank) {
  const int n = static_cast<int>(ranks_);
  const int self = static_cast<int>(rank_);
  std::vector<int> send_counts(n), recv_counts(n);
  for (int r = 0; r < n; ++r) send_counts[r] = CountOf(to_rank[r].size());
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<std::vector<uint8_t>> from_rank(n);
  std::vector<MPI_Request> requests;
  requests.reserve(2 * static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    if (r == self) {
      from_rank[r] = to_rank[r];
      continue;
    }
    if (recv_counts[r] != 0) {
      from_rank[r].resize(static_cast<std::size_t>(recv_counts[r]));
      requests.emplace_back();
      MPI_Irecv(from_rank[r].data(), recv_counts[r], MPI_BYTE, r, kExchangeTag, MPI_COMM_WORLD,
                &requests.back());
    }
    if (send_counts[r] != 0) {
      requests.emplace_back();
      MPI_Isend(to_rank[r].data(), send_counts[r], MPI_BYTE, r, kExchangeTag, MPI_COMM_WORLD,
                &requests.back());
    }
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  return from_rank;
}

std::vector<uint64_t> MpiRanks::AllGather(std::span<const uint64_t> words) {
  std::vector<uint64_t> all(words.size() * ranks_);
  MPI_Allgather(words.data(), CountOf(words.size()), MPI_UINT64_T, all.data(),
                CountOf(words.size()), MPI_UINT64_T, MPI_COMM_WORLD);
  return all;
}

}  // namespace swemu
