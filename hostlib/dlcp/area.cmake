# swemu_hostlib_dlcp: DLCP's host, Appendix B's solver and the simulation.
# The simulation's network is a topology description: swemu_app's files and routes.
swemu_hostlib_area(dlcp DEPS swemu_hostlib_common swemu_hostlib_workload swemu_app)
