# ATP's goodput over DPDK ports needs ATP's hosts beside the DPDK transport.
swemu_bench_dir(hostlib/dpdk "swemu_hostlib_dpdk;swemu_hostlib_atp")
