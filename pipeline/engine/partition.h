#pragma once
// Which partition each switch of a network runs in (Engine's partitions): hosts go with their
// switch; switches joined by a link without delay stay together, as such a link leaves no
// lookahead between them. The groups that remain go, heaviest first, each to the partition
// with the least weight so far (a switch weighs 1 + its hosts + its links' ends), ties to the
// lowest partition: balanced by hosts and links, and the same for the same network every time.
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/core/status.h"
#include "pipeline/engine/engine.h"

namespace swemu {

// partition_of[i] for switches[i]; host_switches names each host's switch. Refused: no
// partition, more partitions than switches, or than groups of switches that may run apart.
Result<std::vector<uint32_t>> AssignPartitions(const std::vector<std::string>& switches,
                                               const std::vector<LinkSpec>& links,
                                               const std::vector<std::string>& host_switches,
                                               uint32_t partitions);

}  // namespace swemu
