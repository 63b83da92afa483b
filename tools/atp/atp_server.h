#pragma once
// swemu-atp's commands for real servers behind a swemu switch (docs/cli.md, "swemu-atp"):
//   publish  the switch's files and the job file, from a hosts list (atp_publish.h);
//   worker   one worker of the published job on this machine, over kernel UDP sockets;
//   ps       the job's parameter server on this machine, over kernel UDP sockets.
// Parameter packets reach the workers as IP multicast to the job's group, which each worker's
// socket joins; a host takes its rank by owning the rank's IP (docs/wire.md, "ATP on servers").
namespace swemu {

// argv[1] is the command; returns the exit status (2: bad input, one line on stderr).
int RunAtpServerCommand(int argc, char** argv);

}  // namespace swemu
