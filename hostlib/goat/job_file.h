#pragma once
// A GOAT job as text: what a published plan tells each host (III-D step 1: the aggregation node
// of every worker's sub-model). Written by `swemu-goat publish`, read by the hosts.
//
//   [job]
//   id = 1
//   elements = 64              # int32 values per fragment
//   port = 9100                # UDP port
//   k = 0                      # asynchronous: the PS completes from K workers (0: all)
//   fragments = 40,40,40       # per sub-model
//   ps = ps 02:00:00:00:01:08 10.1.0.8
//   worker = w1 02:00:00:00:01:00 10.1.0.0 1,2,0   # name mac ip, node id per sub-model
//
// '#' starts a comment; `worker` repeats (in worker-id order), every other key appears once.
#include <string>
#include <string_view>

#include "hostlib/goat/goat_job.h"

namespace swemu {

std::string FormatGoatJob(const GoatJob& job);
// Errors name the line and the problem; the job is validated (GoatJob::Validate).
Result<GoatJob> ParseGoatJob(std::string_view text);

}  // namespace swemu
