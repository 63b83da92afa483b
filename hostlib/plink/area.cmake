# swemu_hostlib_plink: PLink's ProbeEmbed, AggEngine, Autotune and emulated datacenter.
swemu_hostlib_area(plink DEPS swemu_hostlib_common)
