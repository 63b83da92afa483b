// swemu: the emulated PISA switch. Everything lives in swemu_app; main() only catches what
// escaped (no library throws on purpose) so even that ends with one line and status 2.
#include <csignal>
#include <exception>
#include <iostream>

#include "pipeline/core/interrupt.h"
#include "swemu/offline.h"

int main(int argc, char** argv) {
  // A vhost-user or virtio_user peer that goes away must not kill the switch with SIGPIPE; the
  // write fails with EPIPE instead and the port is handled as down.
  std::signal(SIGPIPE, SIG_IGN);
  // Offline runs remove their staging files after a signal; real time installs its own stop.
  swemu::InstallInterruptCleanup("swemu");
  try {
    return swemu::SwemuMain(argc, argv, std::cout, std::cerr);
  } catch (const std::exception& e) {
    std::cerr << "swemu: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "swemu: unknown exception\n";
  }
  return 2;
}
