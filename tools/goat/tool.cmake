# GOAT's control plane: the planner (GINA's LP in Clp, KRGS).
# Its tools: the planner, the virtual-time runs, publishing, and the real-time demo (swemu per
# switch as child processes, from hostlib/testbed; hosts over DPDK).
swemu_tool(swemu-goat LIBS swemu_hostlib_goat swemu_hostlib_testbed swemu_hostlib_workload
                           swemu_hostlib_dpdk swemu_app Boost::program_options)
