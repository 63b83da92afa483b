#pragma once
// N replicas of one switch wired as real time wires them with [dpdk] workers = N, without DPDK:
// vectors stand in for the shard rings and the test moves packets between replicas. The lcore
// that owns a port (port % N) receives and transmits it; ingress runs on the shard key's lcore.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "pipeline/core/clock.h"
#include "pipeline/core/packet_pool.h"
#include "pipeline/switch/switch.h"
#include "swemu/replica_merge.h"

namespace swemu::testing {

class FakeShardRouter final : public EgressRouter {
 public:
  FakeShardRouter(uint32_t index, uint32_t lcores)
      : index_(index), lcores_(lcores), egress(lcores), recirculate(lcores) {}
  bool IsLocal(PortId port) const noexcept override { return port % lcores_ == index_; }
  bool Forward(Packet* pkt) noexcept override {
    egress[pkt->meta.egress_spec % lcores_].push_back(pkt);
    return true;
  }
  bool IsLocalShard(uint32_t key) const noexcept override { return key % lcores_ == index_; }
  bool Recirculate(Packet* pkt, uint32_t key) noexcept override {
    recirculate[key % lcores_].push_back(pkt);
    return true;
  }

  uint32_t index_;
  uint32_t lcores_;
  std::vector<std::vector<Packet*>> egress;       // by destination lcore
  std::vector<std::vector<Packet*>> recirculate;  // by destination lcore
};

struct Sent {
  PortId port;
  std::vector<uint8_t> bytes;
};

class Replicas {
 public:
  Replicas(const SwitchConfig& config, uint32_t n) : pool_(8192) {
    for (uint32_t i = 0; i < n; ++i) {
      Result<std::unique_ptr<Switch>> sw = Switch::Create(config, pool_, clock_);
      EXPECT_TRUE(sw.ok()) << sw.message();
      if (!sw.ok()) return;
      routers_.push_back(std::make_unique<FakeShardRouter>(i, n));
      (*sw)->SetEgressRouter(routers_.back().get());
      switches_.push_back(std::move(*sw));
    }
  }
  ~Replicas() {
    Move();  // nothing may be left in a "ring"
    switches_.clear();
    EXPECT_EQ(pool_.InUse(), 0u) << "packet buffers leaked";
  }

  uint32_t size() const { return static_cast<uint32_t>(switches_.size()); }
  Switch& sw(uint32_t i) { return *switches_[i]; }
  FakeShardRouter& router(uint32_t i) { return *routers_[i]; }
  HeapPacketPool& pool() { return pool_; }

  // A control line on every replica, as ExecuteEverywhere runs it.
  void Cmd(const std::string& line) {
    for (auto& sw : switches_) {
      Result<std::string> r = sw->commands().Execute(line);
      ASSERT_TRUE(r.ok()) << line << ": " << r.message();
    }
  }
  std::vector<std::string> Answers(const std::string& line) {
    std::vector<std::string> answers;
    for (auto& sw : switches_) {
      Result<std::string> r = sw->commands().Execute(line);
      EXPECT_TRUE(r.ok()) << line << ": " << r.message();
      answers.push_back(r.ok() ? *r : "");
    }
    return answers;
  }

  // The datapath's RX: the port's owner parses the frame for its shard key; the key's lcore
  // runs ingress with the headers parsed there. Returns that lcore.
  uint32_t Receive(PortId port, const std::vector<uint8_t>& frame) {
    Packet* pkt = pool_.FromBytes(frame.data(), static_cast<uint32_t>(frame.size()));
    EXPECT_NE(pkt, nullptr);
    const uint32_t key = sw(port % size()).ShardKeyOf(*pkt, port);
    const uint32_t lcore = pkt->meta.dropped() ? port % size() : key % size();
    sw(lcore).ReceiveParsedBurst(&pkt, 1);
    return lcore;
  }

  // Delivers what the "rings" hold until they are empty; how many packets moved.
  std::size_t Move() {
    std::size_t moved = 0;
    for (bool again = true; again;) {
      again = false;
      for (uint32_t from = 0; from < size(); ++from) {
        for (uint32_t to = 0; to < size(); ++to) {
          std::vector<Packet*> recirculated;
          std::vector<Packet*> queued;
          recirculated.swap(router(from).recirculate[to]);
          queued.swap(router(from).egress[to]);
          if (!recirculated.empty()) {
            sw(to).ReceiveRecirculated(recirculated.data(),
                                       static_cast<uint32_t>(recirculated.size()));
          }
          for (Packet* pkt : queued) sw(to).EnqueueFromPeer(pkt);
          moved += recirculated.size() + queued.size();
          again = again || !recirculated.empty() || !queued.empty();
        }
      }
    }
    return moved;
  }

  // Every port transmitted by its owner (unshaped ports: no clock needed) until all is empty.
  std::vector<Sent> Drain() {
    std::vector<Sent> out;
    for (bool again = true; again;) {
      again = Move() != 0;
      for (PortId p = 0; p < sw(0).num_ports(); ++p) {
        while (Packet* pkt = sw(p % size()).Transmit(p)) {
          out.push_back({p, std::vector<uint8_t>(pkt->data, pkt->data + pkt->len)});
          pool_.Free(pkt);
          again = true;
        }
      }
      again = again || Move() != 0;
    }
    return out;
  }

 private:
  VirtualClock clock_;
  HeapPacketPool pool_;
  std::vector<std::unique_ptr<FakeShardRouter>> routers_;
  std::vector<std::unique_ptr<Switch>> switches_;
};

// One unsharded switch beside N replicas, given the same commands and frames: what the merged
// answers of the replicas must equal.
class ReplicasAndReference {
 public:
  ReplicasAndReference(const SwitchConfig& config, uint32_t n) : pool_(4096), replicas_(config, n) {
    Result<std::unique_ptr<Switch>> sw = Switch::Create(config, pool_, clock_);
    EXPECT_TRUE(sw.ok()) << sw.message();
    if (sw.ok()) reference_ = std::move(*sw);
  }
  ~ReplicasAndReference() {
    reference_.reset();
    EXPECT_EQ(pool_.InUse(), 0u) << "packet buffers leaked";
  }

  Switch& reference() { return *reference_; }
  Replicas& replicas() { return replicas_; }

  void Cmd(const std::string& line) {
    EXPECT_TRUE(reference_->commands().Execute(line).ok()) << line;
    replicas_.Cmd(line);
  }
  void Send(PortId port, const std::vector<uint8_t>& frame) {
    reference_->Receive(pool_.FromBytes(frame.data(), static_cast<uint32_t>(frame.size())), port);
    replicas_.Receive(port, frame);
  }
  // Every port of the reference transmitted until empty; how many frames left.
  std::size_t DrainReference() {
    std::size_t n = 0;
    for (PortId p = 0; p < reference_->num_ports(); ++p) {
      while (Packet* pkt = reference_->Transmit(p)) {
        pool_.Free(pkt);
        ++n;
      }
    }
    return n;
  }
  // `line`'s answers of the replicas, merged as real time merges them, equal the reference's.
  void ExpectMergedEqualsReference(const std::string& line) {
    Result<std::string> whole = reference_->commands().Execute(line);
    ASSERT_TRUE(whole.ok()) << whole.message();
    const std::vector<std::string> answers = replicas_.Answers(line);
    EXPECT_NE(answers[0], answers[1]) << line << ": each replica holds a part";
    EXPECT_EQ(MergeAnswers(replicas_.sw(0).commands(), line, answers), *whole) << line;
  }

 private:
  VirtualClock clock_;
  HeapPacketPool pool_;
  std::unique_ptr<Switch> reference_;
  Replicas replicas_;
};

}  // namespace swemu::testing
