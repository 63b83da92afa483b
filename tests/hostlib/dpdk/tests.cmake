# Links PCN's and DLCP's hosts too: they run over DPDK ports against swemu's programs, which
# the end-to-end tests start as a subprocess.
swemu_test_dir(hostlib/dpdk "swemu_hostlib_dpdk;swemu_hostlib_pcn;swemu_hostlib_dlcp" ${SWEMU_REALTIME_TESTS})
if(TARGET hostlib_dpdk_tests)
  add_dependencies(hostlib_dpdk_tests swemu)
endif()
