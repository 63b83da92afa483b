# tools/dlcp_netns.sh shortened (real time: netns, veth, a real-time swemu, DLCP hosts over kernel
# UDP): every flow through, front layers first, selective drops, clean exits.
if(TARGET swemu AND TARGET swemu-dlcp AND TARGET swemu-cli)
  add_test(NAME tools_dlcp_netns
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/dlcp_netns_test.sh ${PROJECT_SOURCE_DIR}
                   ${PROJECT_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/dlcp_netns)
  set_tests_properties(tools_dlcp_netns PROPERTIES TIMEOUT 180 ${SWEMU_REALTIME_TESTS})
else()
  add_test(NAME tools_dlcp_netns
           COMMAND ${CMAKE_COMMAND} -E echo "tools_dlcp_netns: a target is missing")
  set_tests_properties(tools_dlcp_netns PROPERTIES FAIL_REGULAR_EXPRESSION "missing")
endif()
