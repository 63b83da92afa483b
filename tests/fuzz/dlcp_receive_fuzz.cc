// Fuzz target: the DLCP receive buffer fed arbitrary (offset, payload) pairs for a tensor and
// partition size taken from the input. It must never write outside the tensor (ASan), count a
// partition twice, or call the bound met with fewer distinct bytes than required.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "hostlib/dlcp/receive_buffer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size < 6) return 0;
  const uint32_t elements = (uint32_t{data[0]} << 8 | data[1]) % 4096;
  const uint32_t per = 1 + data[2] % 64;
  const double bound = (data[3] % 100) / 100.0;
  swemu::Result<swemu::DlcpReceiveBuffer> b =
      swemu::DlcpReceiveBuffer::Make(uint64_t{elements} * 4, per * 4, bound);
  if (!b.ok()) return 0;
  std::vector<bool> seen(b->partitions(), false);
  uint64_t counted = 0;
  for (std::size_t i = 4; i + 6 <= size;) {
    uint32_t offset;
    std::memcpy(&offset, data + i, 4);
    const uint16_t len = static_cast<uint16_t>((data[i + 4] << 8 | data[i + 5]) % 512);
    i += 6;
    const std::size_t take = std::min<std::size_t>(len, size - i);
    const swemu::DlcpPlace p = b->Place(offset % (uint64_t{elements} * 4 + 64),
                                        std::span<const uint8_t>(data + i, take));
    if (p == swemu::DlcpPlace::kPlaced) {
      const uint64_t k = (offset % (uint64_t{elements} * 4 + 64)) / (per * 4);
      if (seen[k]) __builtin_trap();  // placed twice
      seen[k] = true;
      counted += take;
    }
    i += take;
  }
  if (counted != b->received_bytes()) __builtin_trap();
  if (b->BoundMet() != (counted >= b->required_bytes())) __builtin_trap();
  return 0;
}
