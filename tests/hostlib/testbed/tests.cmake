# The testbed's back ends start swemu processes and network namespaces.
swemu_test_dir(hostlib/testbed swemu_hostlib_testbed ${SWEMU_REALTIME_TESTS})
if(TARGET hostlib_testbed_tests)
  add_dependencies(hostlib_testbed_tests swemu)
endif()
