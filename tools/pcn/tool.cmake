# PCN's host-side tools: the threshold policy, the experiment in virtual time, and the real-time
# DDL worker and PS (kernel sockets).
swemu_tool(swemu-pcn LIBS swemu_hostlib_pcn swemu_control Boost::program_options)
