# swemu_hostlib_common: Transport/Clock interfaces, event loop, kernel UDP sockets, the
# virtual-time engine as a transport; no DPDK (hostlib/CMakeLists.txt, swemu_hostlib_area).
swemu_hostlib_area(common DEPS swemu_pipeline Threads::Threads)
