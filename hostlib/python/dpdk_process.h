#pragma once
// DPDK in a Python process. EAL can be initialised once per process (DPDK refuses a second
// rte_eal_init), and one DpdkHost is open at a time (its mbuf pool has a fixed name): so a
// process holds at most one DPDK user at a time, an AtpFabric's parameter server or a Worker.
// EAL stays up for later users of the same process and is cleaned up at exit.
//
// EAL's arguments: one lcore (the first CPU the calling thread may run on), --no-telemetry, the
// user's --file-prefix and, for a virtual device (devargs net_*), --no-pci --no-huge -m
// <memory_mb> (a NIC's PCI address: the PCI bus and hugepages, as swemu-atp worker --port
// takes them). EAL is initialised by the first user's port only. rte_eal_init pins the
// calling thread (Python's) to that lcore; its CPU affinity is restored afterwards, so the
// interpreter and the threads it starts later keep every CPU they had.
#include <cstdint>
#include <memory>
#include <string>

#include "hostlib/dpdk/dpdk_host.h"
#include "pipeline/core/status.h"

namespace swemu::python {

// Opens one port (virtio_user, net_af_packet, a NIC) for `user` ("the AtpFabric's parameter
// server", "worker 2"), initialising EAL first if this process has not. Errors: another user
// holds DPDK in this process, EAL, the port.
Result<std::unique_ptr<DpdkHost>> OpenDpdkPort(const std::string& user,
                                               const std::string& file_prefix,
                                               const std::string& devargs, uint32_t memory_mb);
// After the user's DpdkHost::Close: the next user may open a port.
void ReleaseDpdk();
// At interpreter exit, once every user is closed: rte_eal_cleanup and its runtime directory.
void CleanupDpdkAtExit();

// The calling thread as an EAL lcore (mempool caches), for a loop thread; false when EAL has
// no free lcore (the thread still works, without a cache). UnregisterDpdkThread before it ends.
bool RegisterDpdkThread();
void UnregisterDpdkThread();

}  // namespace swemu::python
