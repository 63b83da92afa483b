#pragma once
// GOAT's asynchronous mode (V-C, Algorithm 2): how many workers K the PS waits for in the next
// epoch, from each worker's history interval p_w (between the PS sending parameters and the
// worker's gradient arriving). The printed algorithm is garbled; this is the reading notes'
// reconstruction of the text:
//   for each K = 1..|W|: p' = p; for M rounds: h = the K-th smallest p'; a worker with p'_w > h
//   missed the epoch and is h closer to arriving (p'_w -= h); every other worker took part and
//   starts again (p'_w = p_w). H = mean of the h; T = psi(K); keep the K with the least T * H.
// A worker exactly at h took part (the paper's "p_w >= h_t" would give it a zero interval).
//   psi(K) = 4 K^2 (F(x0) - F(x*))^2 / (n (eps K - sigma^2)^2)   (Eq. 36)
// needs F(x0) - F(x*), n, eps and sigma^2, none of which the paper gives. Only its shape in K
// matters for the choice: psi(K) = C (K / (K - r))^2 with r = sigma^2 / eps, the gradient noise
// over the target, in workers; psi is infinite for K <= r (no K that small converges). swemu
// takes r as a parameter (default 1) and C = 1.
#include <cstdint>
#include <vector>

#include "hostlib/goat/krgs.h"
#include "pipeline/core/status.h"

namespace swemu {

struct KSearchOptions {
  double noise = 1.0;   // r = sigma^2 / eps, in workers
  uint32_t rounds = 0;  // M; 0: |W| (the paper's suggestion)
};

struct KSearchResult {
  uint32_t k = 0;
  std::vector<double> mean_epoch;  // H for K = 1..|W| (index K - 1)
  std::vector<double> epochs;      // psi(K), infinity where K <= r
  std::vector<double> total;       // psi(K) * H
};

// Fails for no workers, a negative or non-finite interval, or a noise r >= |W| (no K converges).
Result<KSearchResult> ChooseK(const std::vector<double>& intervals, const KSearchOptions& options);

// psi(K) = (K / (K - r))^2, infinity for K <= r.
double GoatPsi(double k, double noise);

// The workers that take part when the PS waits for the K fastest by history (ties by index).
std::vector<uint32_t> FastestWorkers(const std::vector<double>& intervals, uint32_t k);

// K^s per (sub-model, switch): the plan's workers at s for g that are among `participants`
// (Eq. 20's K_t^s, counted per sub-model as a switch needs it: the notes' item 11).
std::vector<std::vector<uint32_t>> AsyncFanIn(const GinaPlan& plan,
                                              const std::vector<uint32_t>& participants);

}  // namespace swemu
