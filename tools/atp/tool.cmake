# ATP's end hosts driving a job through swemu: the real-time demo (the README's main job) and the
# same job in virtual time.
swemu_tool(swemu-atp LIBS swemu_hostlib_testbed swemu_hostlib_atp swemu_hostlib_dpdk
                          swemu_hostlib_workload swemu_app Boost::program_options)
