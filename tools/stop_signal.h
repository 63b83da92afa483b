#pragma once
// SIGINT and SIGTERM (and SIGHUP and SIGQUIT, treated like SIGTERM) as a request to stop, for
// tools that run until told (real-time hosts): the run ends cleanly and says it was stopped.
#include <signal.h>

#include <atomic>

namespace swemu {

inline std::atomic<bool> g_stop_requested{false};

// Installs the handlers (no SA_RESTART: a blocked poll returns at once).
inline void CatchStopSignals() {
  struct sigaction sa {};
  sa.sa_handler = [](int) { g_stop_requested = true; };
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaction(sig, &sa, nullptr);
}

}  // namespace swemu
