# tools/pcn_experiment.sh shortened (real time: netns, veth, a real-time swemu, iperf3, kernel
# TCP): both runs complete, bad options end with one line, an interrupt cleans up.
if(TARGET swemu AND TARGET swemu-pcn AND TARGET swemu-cli)
  add_test(NAME tools_pcn_experiment
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/pcn_experiment_test.sh ${PROJECT_SOURCE_DIR}
                   ${PROJECT_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/pcn_experiment)
  set_tests_properties(tools_pcn_experiment PROPERTIES TIMEOUT 300 ${SWEMU_REALTIME_TESTS})
else()
  add_test(NAME tools_pcn_experiment
           COMMAND ${CMAKE_COMMAND} -E echo "tools_pcn_experiment: a target is missing")
  set_tests_properties(tools_pcn_experiment PROPERTIES FAIL_REGULAR_EXPRESSION "missing")
endif()

# tools/pcn/pcn_report.py --plot: a bare file name is written beside the two runs of one
# swemu-pcn sim, not into the current directory; a path is taken as given.
if(TARGET swemu-pcn)
  add_test(NAME tools_pcn_report_plot
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/pcn_report_plot_test.py
                   --pcn $<TARGET_FILE:swemu-pcn> --tmp ${CMAKE_CURRENT_BINARY_DIR}/pcn_report_plot)
  set_tests_properties(tools_pcn_report_plot PROPERTIES TIMEOUT 300)
else()
  add_test(NAME tools_pcn_report_plot
           COMMAND ${CMAKE_COMMAND} -E echo "tools_pcn_report_plot: the swemu-pcn target is missing")
  set_tests_properties(tools_pcn_report_plot PROPERTIES FAIL_REGULAR_EXPRESSION "missing")
endif()
