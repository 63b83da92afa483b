#include "hostlib/python/dpdk_process.h"

#include <pthread.h>
#include <rte_lcore.h>
#include <sched.h>

#include <mutex>
#include <sstream>
#include <vector>

namespace swemu::python {
namespace {

std::mutex g_mu;
bool g_eal_up = false;
std::string g_user;  // "" when no user holds DPDK

}  // namespace

Result<std::unique_ptr<DpdkHost>> OpenDpdkPort(const std::string& user,
                                               const std::string& file_prefix,
                                               const std::string& devargs, uint32_t memory_mb) {
  std::lock_guard lock(g_mu);
  if (!g_user.empty()) {
    return Status::Error(user + ": DPDK is in use in this process by " + g_user +
                         " (EAL can be initialised once per process and one DPDK host is open "
                         "at a time: run each worker, and the fabric, in a process of its own)");
  }
  if (!g_eal_up) {
    cpu_set_t saved;
    CPU_ZERO(&saved);
    if (pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved) != 0) CPU_SET(0, &saved);
    int lcore = 0;
    while (lcore < CPU_SETSIZE && !CPU_ISSET(lcore, &saved)) ++lcore;
    std::vector<std::string> args = {"-l", std::to_string(lcore), "--no-telemetry", "--file-prefix",
                                     file_prefix};
    for (std::string& arg : DpdkHost::PortEalArgs(devargs, memory_mb)) {
      args.push_back(std::move(arg));
    }
    std::ostringstream notes;
    Status init = DpdkHost::InitEal(args, notes);
    pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
    if (!init.ok()) return Status::Error(user + ": " + init.message());
    g_eal_up = true;
  }
  DpdkHostConfig config;
  config.ports = {devargs};
  Result<std::unique_ptr<DpdkHost>> host = DpdkHost::Open(config);
  if (!host.ok()) return Status::Error(user + ": " + host.message());
  if (!(*host)->link_up(0)) {
    (void)(*host)->Close();
    return Status::Error(user + ": the link of " + devargs +
                         " did not come up (is the switch running?)");
  }
  g_user = user;
  return host;
}

void ReleaseDpdk() {
  std::lock_guard lock(g_mu);
  g_user.clear();
}

void CleanupDpdkAtExit() {
  std::lock_guard lock(g_mu);
  if (!g_eal_up || !g_user.empty()) return;
  DpdkHost::CleanupEal();
  g_eal_up = false;
}

bool RegisterDpdkThread() { return rte_thread_register() == 0; }

void UnregisterDpdkThread() { rte_thread_unregister(); }

}  // namespace swemu::python
