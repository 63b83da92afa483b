#pragma once
// swemu-plink's commands (tools/plink/plink_main.cc dispatches them; docs/cli.md has every option):
//   probe       ProbeEmbed on an emulated datacenter in the virtual-time engine (plink_probe.cc).
//   experiment  Figure 8's reduction latencies on an emulated cloud (plink_experiment.cc).
//   demo        ProbeEmbed and AggEngine in real time over swemu processes, or kernel UDP
//               (plink_demo.cc).
//   publish     the job file of `node` from a topology's hosts (plink_publish.cc).
//   node        one node of a job on this machine, over kernel UDP sockets (plink_node.cc).
#include <boost/program_options.hpp>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

#include "pipeline/core/status.h"
#include "swemu/topology_config.h"

namespace swemu {

boost::program_options::options_description PlinkProbeOptions();
Status RunPlinkProbe(const boost::program_options::variables_map& vm, std::ostream& out);
boost::program_options::options_description PlinkDemoOptions();
Status RunPlinkDemo(const boost::program_options::variables_map& vm, std::ostream& out);
boost::program_options::options_description PlinkPublishOptions();
Status RunPlinkPublish(const boost::program_options::variables_map& vm, std::ostream& out);
boost::program_options::options_description PlinkNodeOptions();
// Bad input (exit 2) returns a message starting with the option at fault ("--job ...").
Status RunPlinkNode(const boost::program_options::variables_map& vm, std::ostream& out);
boost::program_options::options_description PlinkExperimentOptions();
Status RunPlinkExperiment(const boost::program_options::variables_map& vm, std::ostream& out);

// A comma-separated list of counts (1..64), durations, or rates (above 0); errors name --option.
enum class PlinkListKind { kCounts, kDurations, kRates };
Result<std::vector<uint64_t>> PlinkList(const std::string& option, const std::string& text,
                                        PlinkListKind kind);

// The datacenter of --topology FILE, for a command whose tree options (`shape`) it replaces:
// one of them beside it is refused, then the file is loaded and its ports checked, before
// anything runs. Every error is one line naming --topology.
Result<TopologyConfig> PlinkTopology(const boost::program_options::variables_map& vm,
                                     std::initializer_list<const char*> shape);

}  // namespace swemu
