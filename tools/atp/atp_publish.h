#pragma once
// `swemu-atp publish`: an ATP job for real servers behind one swemu switch (their top-of-rack),
// from a hosts list. It writes the switch's config (switch.ini), its startup script
// (switch.cli: the demo's script, hostlib/testbed/demo_layout.h, plus flooding for ARP and for
// hosts whose MAC is `learn`) and the job file every host reads (job: hostlib/atp/job_config.h's
// format, each host placed as SWITCH:PORT as in hostlib/testbed/atp_job_file.h).
//
// Hosts list (hostlib/testbed/hosts_list.h), workers in rank order, one ps, PORT alone (one
// switch).
#include <boost/program_options.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "hostlib/atp/job_config.h"
#include "hostlib/testbed/demo_layout.h"
#include "hostlib/testbed/hosts_list.h"
#include "pipeline/core/status.h"
#include "swemu/switch_config.h"

namespace swemu {

using AtpListedHost = ListedHost;  // hostlib/testbed/hosts_list.h

struct AtpHostsList {
  std::vector<AtpListedHost> workers;  // in rank order
  AtpListedHost ps;
};

// Errors: "hosts line N: problem", or what the whole list lacks.
Result<AtpHostsList> ParseAtpHostsList(std::string_view text);

struct AtpPublishOptions {
  std::string switch_name = "tor";
  uint16_t job_id = 1;  // job_id + 1: the same workers without in-network aggregation
  Ipv4Addr group_ip = (239u << 24) | (1u << 16) | 1;  // group_ip + 1: the plain job's
  uint16_t elements = kAtpDefaultElements;
  uint16_t udp_port = kAtpDefaultUdpPort;
  uint32_t aggregators = kAtpDefaultAggregators;
  uint64_t link_rate_bps = 0;  // every port's shaping; 0: unshaped
  std::vector<std::pair<PortId, std::string>> port_devargs;
};

// The published job: the hosts placed on the switch (rack "SWITCH:PORT"), both job ids.
Result<AtpJobSpec> MakePublishedJob(const AtpHostsList& hosts, const AtpPublishOptions& options);
// The switch's startup script and config (its script at `cli_path`).
std::string PublishedSwitchScript(const AtpHostsList& hosts, const AtpPublishOptions& options);
LoadedSwitchConfig PublishedSwitchConfig(const AtpHostsList& hosts,
                                         const AtpPublishOptions& options,
                                         const std::string& cli_path);

boost::program_options::options_description AtpPublishOptionsDescription();
// Reads the options and the hosts list, then writes DIR/switch.ini, switch.cli and job. Bad input
// returns an error before anything is written.
Status RunAtpPublish(const boost::program_options::variables_map& vm, std::ostream& out,
                     const std::string& command);

}  // namespace swemu
