# tools/goat/goat_experiment.py --quick (virtual time, swemu-goat sim): every run completes with no
# mismatches, the figure is written, and GOAT's PS traffic at 35 workers is below atp-style's and
# ps-only's (the script checks these itself and exits 1 otherwise).
if(TARGET swemu-goat)
  add_test(NAME tools_goat_experiment_quick
           COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/tools/goat/goat_experiment.py --quick
                   --swemu-goat $<TARGET_FILE:swemu-goat>
                   --out-dir ${CMAKE_CURRENT_BINARY_DIR}/goat_experiment_quick
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(tools_goat_experiment_quick PROPERTIES TIMEOUT 600)
else()
  add_test(NAME tools_goat_experiment_quick
           COMMAND ${CMAKE_COMMAND} -E echo
                   "tools_goat_experiment_quick: the swemu-goat target is missing")
  set_tests_properties(tools_goat_experiment_quick PROPERTIES FAIL_REGULAR_EXPRESSION "missing")
endif()
