# GOAT's engine tests run ATP's hosts beside GOAT's (Figure 2's comparison).
swemu_test_dir(hostlib/goat "swemu_hostlib_goat;swemu_hostlib_atp")
