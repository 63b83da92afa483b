# swemu_hostlib_workload: model layer sizes (compiled in by hostlib/CMakeLists.txt), synthetic
# gradients.
swemu_hostlib_area(workload DEPS swemu_core)
