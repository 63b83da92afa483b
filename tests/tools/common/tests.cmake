# tools/common/progress.py (the long scripts' progress line with the time left) on a fake terminal
# and a plain stream; then plink_figure8.py --quick with stderr on a pseudo terminal (the line
# reaches [3/3]) and on a pipe (stderr stays empty).
if(TARGET swemu-plink)
  add_test(NAME tools_progress
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/progress_test.py
                   --swemu-plink $<TARGET_FILE:swemu-plink>
                   --tmp ${CMAKE_CURRENT_BINARY_DIR}/progress)
else()
  add_test(NAME tools_progress
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/progress_test.py)
endif()
set_tests_properties(tools_progress PROPERTIES TIMEOUT 300)
