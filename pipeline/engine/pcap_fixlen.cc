#include "pipeline/engine/pcap_fixlen.h"

#include <algorithm>

#include "pipeline/wire/checksum.h"
#include "pipeline/wire/ethernet.h"
#include "pipeline/wire/ipv4.h"
#include "pipeline/wire/tcp.h"
#include "pipeline/wire/udp.h"
#include "pipeline/wire/vlan.h"

namespace swemu {
namespace {

constexpr int kMaxVlanTags = 8;         // more than any real frame carries
constexpr uint32_t kIcmpHeaderLen = 4;  // type, code, checksum

// Offset of the IPv4 header after Ethernet and any VLAN tags within `len` bytes; 0 if none.
uint32_t Ipv4Offset(const uint8_t* frame, uint32_t len) {
  if (len < kEthernetHeaderLen) return 0;
  uint32_t off = kEthernetHeaderLen;
  uint16_t type = LoadBe16(frame + off - 2);
  for (int tags = 0; IsVlanTpid(type); ++tags) {
    if (tags == kMaxVlanTags || off + kVlanTagLen > len) return 0;
    off += kVlanTagLen;
    type = LoadBe16(frame + off - 2);
  }
  return type == kEtherTypeIpv4 ? off : 0;
}

// The L4 lengths and checksums of a whole (unfragmented) datagram of `l4_len` bytes.
void RewriteL4(uint8_t* ip, uint8_t protocol, uint8_t* l4, uint32_t l4_len) {
  if (protocol == kIpProtoUdp && l4_len >= kUdpHeaderLen) {
    auto* udp = HeaderAt<UdpHeader>(l4);
    udp->SetLength(static_cast<uint16_t>(l4_len));
    // 0 means "not computed" (IPv4): keep it so.
    if (udp->Checksum() != 0) udp->SetChecksum(UdpChecksum(ip, l4, l4_len));
  } else if (protocol == kIpProtoTcp && l4_len >= kTcpMinHeaderLen) {
    auto* tcp = HeaderAt<TcpHeader>(l4);
    if (tcp->HeaderLen() >= kTcpMinHeaderLen && tcp->HeaderLen() <= l4_len) {
      tcp->SetChecksum(TcpChecksum(ip, l4, l4_len));
    }
  } else if (protocol == kIpProtoIcmp && l4_len >= kIcmpHeaderLen) {
    StoreBe16(l4 + 2, 0);
    StoreBe16(l4 + 2, InternetChecksum(l4, l4_len));
  }
}

}  // namespace

Result<Fixlen> ParseFixlen(std::string_view text) {
  if (text == "none") return Fixlen::kNone;
  if (text == "pad") return Fixlen::kPad;
  if (text == "trunc") return Fixlen::kTrunc;
  return Status::Error("\"" + std::string(text) + "\" is not pad, trunc or none");
}

const char* FixlenName(Fixlen mode) {
  switch (mode) {
    case Fixlen::kNone:
      return "none";
    case Fixlen::kPad:
      return "pad";
    case Fixlen::kTrunc:
      return "trunc";
  }
  return "none";
}

bool TruncateFrameHeaders(uint8_t* frame, uint32_t len) {
  const uint32_t ip_at = Ipv4Offset(frame, len);
  if (ip_at == 0 || ip_at + kIpv4MinHeaderLen > len) return false;
  uint8_t* ip = frame + ip_at;
  auto* iph = HeaderAt<Ipv4Header>(ip);
  const uint32_t header_len = iph->HeaderLen();
  const uint32_t captured = len - ip_at;
  if (iph->Version() != 4 || header_len < kIpv4MinHeaderLen || header_len > captured) return false;
  if (iph->TotalLength() <= captured) return false;  // the IPv4 packet is whole
  const auto total = static_cast<uint16_t>(std::min<uint32_t>(captured, 0xFFFF));
  iph->SetTotalLength(total);
  iph->SetHeaderChecksum(Ipv4HeaderChecksum(ip, header_len));
  // A fragment's L4 header (in the first piece) covers the whole datagram: leave it alone.
  if (!iph->IsFragment()) {
    RewriteL4(ip, iph->protocol, ip + header_len, total - header_len);
  }
  return true;
}

void FixFrameLength(Fixlen mode, PcapRecord* record, FixlenCounts* counts) {
  ++counts->frames;
  const auto captured = static_cast<uint32_t>(record->bytes.size());
  if (captured >= record->orig_len) return;
  ++counts->cut_short;
  bool fixed = false;
  if (mode == Fixlen::kPad && record->orig_len <= kFixlenMaxPadLen) {
    record->bytes.resize(record->orig_len, 0);
    fixed = true;
  } else if (mode == Fixlen::kTrunc) {
    fixed = TruncateFrameHeaders(record->bytes.data(), captured);
  }
  ++(fixed ? counts->fixed : counts->left_short);
}

std::string FixlenSummary(Fixlen mode, const FixlenCounts& counts) {
  const std::string of = std::to_string(counts.cut_short) + " of " + std::to_string(counts.frames) +
                         " frames cut short (captured < wire length)";
  const std::string left =
      counts.left_short == 0 ? "" : ", " + std::to_string(counts.left_short) + " left as captured";
  switch (mode) {
    case Fixlen::kNone:
      if (counts.cut_short == 0) return "";
      return "fixlen none: " + of + ", sent as captured; --fixlen pad|trunc fixes them";
    case Fixlen::kPad:
      return "fixlen pad: " + of + ", " + std::to_string(counts.fixed) +
             " padded to their wire length" + left;
    case Fixlen::kTrunc:
      return "fixlen trunc: " + of + ", " + std::to_string(counts.fixed) +
             " rewritten to their captured length" + left +
             (counts.left_short == 0 ? "" : " (not IPv4, or nothing to rewrite)");
  }
  return "";
}

}  // namespace swemu
