#pragma once
// The hosts list every system's publish reads (`swemu-atp publish --hosts`, `swemu-goat publish
// --hosts`): real servers' addresses and where they attach, one host a line ('#' starts a
// comment):
//   NAME ROLE IP MAC PORT          ROLE worker or ps, MAC aa:bb:.. or learn
//   NAME ROLE IP MAC SWITCH:PORT   the same on a network of several switches
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/core/status.h"
#include "pipeline/wire/address.h"

namespace swemu {

struct ListedHost {
  std::string name;
  bool ps = false;  // ROLE ps (else worker)
  Ipv4Addr ip = 0;
  std::optional<MacAddr> mac;  // none: learn
  std::string sw;              // empty: PORT alone (one switch)
  uint16_t port = 0;           // switch port
};

// One line. Errors name the host ("NAME: problem") or the expected shape.
Result<ListedHost> ParseListedHost(const std::string& line);
// Every line in order; errors "hosts line N: problem".
Result<std::vector<ListedHost>> ParseListedHosts(std::string_view text);
// Each name, IP, MAC and switch port at most once; errors "hosts: ...".
Status CheckListedHostsUnique(const std::vector<ListedHost>& hosts);

}  // namespace swemu
