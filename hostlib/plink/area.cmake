# swemu_hostlib_plink: PLink's ProbeEmbed, AggEngine, Autotune and emulated datacenter (built
# from a topology: swemu_app's topology files and routes).
swemu_hostlib_area(plink DEPS swemu_hostlib_common swemu_app)
