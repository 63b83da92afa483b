#pragma once
// EAL can be initialised once per process: eal_environment_test.cc does it for every test of
// this binary (a gtest Environment), on lcore 1 with --no-huge -m 256 and a file prefix of this
// process. Tests assert EalStatus().ok() first.
#include "pipeline/core/status.h"

namespace swemu::testing {

const Status& EalStatus();

}  // namespace swemu::testing
