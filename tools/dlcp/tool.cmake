# DLCP's host-side tools: Appendix B's thresholds, the simulation, and the real-time incast
# (swemu as a child process, as swemu-atp's demo runs it: hostlib/testbed).
swemu_tool(swemu-dlcp LIBS swemu_hostlib_dlcp swemu_hostlib_testbed swemu_hostlib_dpdk swemu_app
                           Boost::program_options)
