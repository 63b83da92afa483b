# PLink's tools: ProbeEmbed, AggEngine and Autotune on emulated datacenters, and the real-time
# demo (swemu per switch as child processes, from hostlib/testbed; hosts over DPDK).
swemu_tool(swemu-plink LIBS swemu_hostlib_plink swemu_hostlib_testbed swemu_hostlib_dpdk swemu_app
                            swemu_control Boost::program_options)
