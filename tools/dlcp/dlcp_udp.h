#pragma once
// `swemu-dlcp send` and `swemu-dlcp recv`: DLCP's hosts (hostlib/dlcp/host.h) over kernel UDP
// sockets, for machines without DPDK or hosts in network namespaces behind a swemu switch. Each
// parses its own options (argv[0] is the subcommand) and returns the exit status: 0 every
// tensor through, 1 a run that failed (timed out, stopped), 2 bad input (one line on stderr).
namespace swemu {

int RunDlcpSendCommand(int argc, char** argv);
int RunDlcpRecvCommand(int argc, char** argv);

}  // namespace swemu
