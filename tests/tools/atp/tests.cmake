# tools/atp/atp_figure7a.py --quick (virtual time, swemu-atp sim): loss on one worker's link,
# congestion control off; ATP keeps at least half its lossless goodput at 1% and beats the
# timeout-only baseline at every loss rate (the script checks and exits 1 otherwise).
if(TARGET swemu-atp)
  add_test(NAME tools_atp_figure7a_quick
           COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/tools/atp/atp_figure7a.py --quick
                   --swemu-atp $<TARGET_FILE:swemu-atp>
                   --csv ${CMAKE_CURRENT_BINARY_DIR}/atp_figure7a_quick.csv
                   --plot ${CMAKE_CURRENT_BINARY_DIR}/atp_figure7a_quick.png
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(tools_atp_figure7a_quick PROPERTIES TIMEOUT 300)
else()
  add_test(NAME tools_atp_figure7a_quick
           COMMAND ${CMAKE_COMMAND} -E echo "tools_atp_figure7a_quick: the swemu-atp target is missing")
  set_tests_properties(tools_atp_figure7a_quick PROPERTIES FAIL_REGULAR_EXPRESSION "missing")
endif()
