#include "pipeline/mpi/mpi_ranks.h"

#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <cstdio>

namespace swemu {
namespace {

// The launchers' environment: Open MPI's own, then PMIx's and PMI's (other launchers).
long LaunchedSize() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"}) {
    if (const char* value = std::getenv(name)) return std::strtol(value, nullptr, 10);
  }
  return 0;
}

// MPI counts are ints: a window's frames or a report past 2 GiB to one rank ends the job.
int CountOf(std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(INT_MAX)) {
    std::fprintf(stderr, "swemu: more than 2 GiB for one rank in one message\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return static_cast<int>(bytes);
}

}  // namespace

bool MpiRanks::StartedByMpirun() { return LaunchedSize() > 1; }

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

std::vector<std::vector<uint8_t>> MpiRanks::Exchange(
    const std::vector<std::vector<uint8_t>>& to_rank) {
  const int n = static_cast<int>(ranks_);
  std::vector<int> send_counts(n), send_at(n), recv_counts(n), recv_at(n);
  std::vector<uint8_t> send;
  for (int r = 0; r < n; ++r) {
    send_at[r] = CountOf(send.size());
    send_counts[r] = CountOf(to_rank[r].size());
    send.insert(send.end(), to_rank[r].begin(), to_rank[r].end());
  }
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::size_t total = 0;
  for (int r = 0; r < n; ++r) {
    recv_at[r] = CountOf(total);
    total += static_cast<std::size_t>(recv_counts[r]);
  }
  std::vector<uint8_t> recv(total);
  MPI_Alltoallv(send.data(), send_counts.data(), send_at.data(), MPI_BYTE, recv.data(),
                recv_counts.data(), recv_at.data(), MPI_BYTE, MPI_COMM_WORLD);
  std::vector<std::vector<uint8_t>> from_rank(n);
  for (int r = 0; r < n; ++r) {
    from_rank[r].assign(recv.begin() + recv_at[r], recv.begin() + recv_at[r] + recv_counts[r]);
  }
  return from_rank;
}

std::vector<uint64_t> MpiRanks::AllGather(std::span<const uint64_t> words) {
  std::vector<uint64_t> all(words.size() * ranks_);
  MPI_Allgather(words.data(), CountOf(words.size()), MPI_UINT64_T, all.data(),
                CountOf(words.size()), MPI_UINT64_T, MPI_COMM_WORLD);
  return all;
}

}  // namespace swemu
