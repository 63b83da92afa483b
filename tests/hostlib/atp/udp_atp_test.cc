// Worker and PS Contexts in one process over kernel UDP sockets on loopback (no switch): the
// PS's parameter packets to the group are replicated to the workers in software.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "hostlib/atp/context.h"
#include "hostlib/common/event_loop.h"
#include "hostlib/common/udp_socket_transport.h"
#include "tests/hostlib/atp/atp_cluster.h"

namespace swemu::atp_test {
namespace {

Ipv4Addr Loopback(uint8_t host) { return MakeIpv4Addr(127, 0, 0, host); }

TEST(UdpAtpTest, AllReduceOverLoopbackSockets) {
  constexpr uint32_t kWorkers = 3;
  constexpr std::size_t kN = 4000;
  // The whole of 127/8 is loopback: each host gets its own address and the job's one port.
  Result<std::unique_ptr<UdpSocketTransport>> ps_socket =
      UdpSocketTransport::Open({Loopback(100), 0, 0, HostMac(100)});
  ASSERT_TRUE(ps_socket.ok()) << ps_socket.message();
  const uint16_t port = (*ps_socket)->local_port();
  AtpJobSpec spec = Spec(7, kWorkers);
  spec.udp_port = port;
  spec.ps.ip = Loopback(100);
  for (uint32_t w = 0; w < kWorkers; ++w)
    spec.workers[w].ip = Loopback(static_cast<uint8_t>(w + 1));
  Result<AtpJobConfig> job = MakeAtpJobConfig(spec);
  ASSERT_TRUE(job.ok()) << job.message();

  EventLoop loop;
  Context ps({HostMac(100), Loopback(100)}, ps_socket->get());
  ASSERT_TRUE(ps.ServeJob(*job).ok());
  std::vector<std::unique_ptr<UdpSocketTransport>> sockets;
  std::vector<std::unique_ptr<Context>> workers;
  std::vector<std::vector<float>> in(kWorkers), out(kWorkers, std::vector<float>(kN));
  std::vector<AllReduceJob*> calls;
  for (uint32_t w = 0; w < kWorkers; ++w) {
    const Ipv4Addr ip = spec.workers[w].ip;
    Result<std::unique_ptr<UdpSocketTransport>> s =
        UdpSocketTransport::Open({ip, port, 0, HostMac(w + 1)});
    ASSERT_TRUE(s.ok()) << s.message();
    (*ps_socket)->AddGroupMember(spec.group_ip, ip, port);
    sockets.push_back(std::move(*s));
    workers.push_back(
        std::make_unique<Context>(AtpHostConfig{HostMac(w + 1), ip}, sockets.back().get()));
    ASSERT_TRUE(workers.back()->JoinJob(*job).ok());
    in[w] = Gradient(w, kN);
    calls.push_back(workers.back()->AllReduce(7, in[w].data(), out[w].data(), kN));
  }
  loop.Add(ps_socket->get(), &ps);
  for (uint32_t w = 0; w < kWorkers; ++w) loop.Add(sockets[w].get(), workers[w].get());
  const bool done = loop.RunUntil(
      [&] {
        for (AllReduceJob* c : calls) {
          if (!c->done()) return false;
        }
        return true;
      },
      20'000'000'000ull);
  ASSERT_TRUE(done);
  ExpectSumWithinBound(in, out[0], job->spec.scale);
  for (uint32_t w = 1; w < kWorkers; ++w) EXPECT_EQ(out[w], out[0]);
  EXPECT_EQ(ps.ps_stats(7)->completed, (kN + 63) / 64);
  EXPECT_EQ(ps.counters().not_atp, 0u);
}

}  // namespace
}  // namespace swemu::atp_test
