# swemu_hostlib_dlcp: DLCP's host, Appendix B's solver and the simulation.
swemu_hostlib_area(dlcp DEPS swemu_hostlib_common swemu_hostlib_workload)
