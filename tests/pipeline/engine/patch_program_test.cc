// PatchProgram, the engine tests' dataplane program, and a check that it behaves as documented.
#include <gtest/gtest.h>

#include "pipeline/program/program.h"
#include "tests/pipeline/engine/engine_test_util.h"

namespace swemu::engine_test {
namespace {

// Port p forwards to p ^ 1 in the queue named by the destination MAC's 5th byte, except for the
// special last bytes in engine_test_util.h.
class PatchProgram final : public Program {
 public:
  std::string_view name() const noexcept override { return "engine_test_patch"; }
  Status Load(ProgramContext&) override { return Status::Ok(); }
  void Ingress(Packet& pkt) noexcept override {
    const uint8_t* dst = pkt.data + pkt.hdr.eth;
    pkt.meta.queue_id = dst[4] & 7;
    switch (dst[5]) {
      case kToMulticast:
        pkt.meta.mcast_grp = 1;
        break;
      case kConsume:
        pkt.meta.consumed = true;
        break;
      case kToPort2:
        pkt.meta.egress_spec = 2;
        break;
      case kToPort9:
        pkt.meta.egress_spec = 9;
        break;
      default:
        pkt.meta.egress_spec = pkt.meta.ingress_port ^ 1;
    }
  }
};
SWEMU_REGISTER_PROGRAM("engine_test_patch", PatchProgram);

TEST(PatchProgramTest, ForwardsToTheNeighbourPort) {
  Engine engine(1, 64);
  ASSERT_TRUE(engine.AddSwitch(PatchSwitch("sw", 0), "").ok());
  Switch& sw = *engine.FindSwitch("sw");
  std::vector<uint8_t> frame = Frame();
  sw.Receive(engine.pool().FromBytes(frame.data(), 100), 3);
  Packet* out = sw.Transmit(2);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(std::vector<uint8_t>(out->data, out->data + out->len), frame);
  engine.pool().Free(out);
}

}  // namespace
}  // namespace swemu::engine_test
