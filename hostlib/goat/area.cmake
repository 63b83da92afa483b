# swemu_hostlib_goat: GOAT's planner (GINA's LP in COIN-OR Clp, KRGS), worker, PS and experiment.
swemu_hostlib_area(goat DEPS swemu_hostlib_common swemu_app PkgConfig::CLP)
