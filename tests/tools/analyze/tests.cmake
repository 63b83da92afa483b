# tools/plot_run.py (swemu-analyze --plot): a run shorter than one bin drawn over its bin and as
# a point, each column's own range from 0, and the queue panel's note telling a run without
# telemetry from one whose queues stayed empty; then the same through swemu-analyze on pcaps.
if(TARGET swemu-analyze AND TARGET swemu-gen)
  add_test(NAME tools_plot_run
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/plot_run_test.py
                   --tmp ${CMAKE_CURRENT_BINARY_DIR}/plot_run
                   --gen $<TARGET_FILE:swemu-gen> --analyze $<TARGET_FILE:swemu-analyze>)
else()
  add_test(NAME tools_plot_run
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/plot_run_test.py
                   --tmp ${CMAKE_CURRENT_BINARY_DIR}/plot_run)
endif()
set_tests_properties(tools_plot_run PROPERTIES TIMEOUT 300)
