#pragma once
// The receive side of a real-time port (kernel UDP sockets here, a DPDK port in hostlib/dpdk):
// the event loop polls it for bursts of whole Ethernet frames.
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>

namespace swemu {

// A non-owning reference to a callable taking one frame: no allocation, cheap to pass on the
// receive path. The callable must outlive the call it is passed to.
class FrameHandler {
 public:
  template <typename F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, FrameHandler>)
      FrameHandler(F& f)  // NOLINT(google-explicit-constructor)
      : object_(&f),
        call_([](void* o, std::span<const uint8_t> frame) { (*static_cast<F*>(o))(frame); }) {}
  void operator()(std::span<const uint8_t> frame) const { call_(object_, frame); }

 private:
  void* object_;
  void (*call_)(void*, std::span<const uint8_t>);
};

class FrameSource {
 public:
  virtual ~FrameSource() = default;
  // Hands up to `max` received frames to `handler` (each span valid only during its call) and
  // returns how many. Never blocks.
  virtual uint32_t Poll(FrameHandler handler, uint32_t max) noexcept = 0;
};

}  // namespace swemu
