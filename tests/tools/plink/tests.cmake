# tools/plink/plink_figure8.py --quick (virtual time, swemu-plink experiment): every reduction's
# sums are exact (the tool checks), the figure is written, and ProbeEmbed 2LHA's mean latency is
# below Balanced Random 2LHA's and FA's (the script checks these itself and exits 1 otherwise).
if(TARGET swemu-plink)
  add_test(NAME tools_plink_figure8_quick
           COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/tools/plink/plink_figure8.py --quick
                   --swemu-plink $<TARGET_FILE:swemu-plink>
                   --plot ${CMAKE_CURRENT_BINARY_DIR}/plink_figure8_quick.png
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(tools_plink_figure8_quick PROPERTIES TIMEOUT 300)
else()
  add_test(NAME tools_plink_figure8_quick
           COMMAND ${CMAKE_COMMAND} -E echo "tools_plink_figure8_quick: the swemu-plink target is missing")
  set_tests_properties(tools_plink_figure8_quick PROPERTIES FAIL_REGULAR_EXPRESSION "missing")
endif()
