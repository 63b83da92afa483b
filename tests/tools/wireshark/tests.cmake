# Tests of tools/wireshark/swemu.lua, the Wireshark dissector of swemu's headers. Both run tshark
# (Debian package tshark) and fail with a message saying so when it is missing: they never skip.
set(SWEMU_DISSECTOR_LUA ${PROJECT_SOURCE_DIR}/tools/wireshark/swemu.lua)
find_program(SWEMU_TSHARK tshark)
if(NOT SWEMU_TSHARK)
  message(WARNING "swemu: tshark not found; the tools_dissector* tests will fail "
                  "(apt-get install tshark)")
endif()

# Every ATP field of hand-made packets (all flags, extremes, truncations, other ports, the
# udp_port preference) as tshark decodes them with the script.
add_test(NAME tools_dissector
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/dissector_test.py
                 ${SWEMU_DISSECTOR_LUA} ${CMAKE_CURRENT_BINARY_DIR}/dissector)
set_tests_properties(tools_dissector PROPERTIES TIMEOUT 300
                     FIXTURES_SETUP swemu_dissector_cases)

# The dissector and swemu-analyze agree, cell by cell, on an ATP pcap from swemu-gen.
if(TARGET swemu-analyze AND TARGET swemu-gen)
  add_test(NAME tools_dissector_vs_analyzer
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/dissector_vs_analyzer.py
                   --lua ${SWEMU_DISSECTOR_LUA}
                   --gen $<TARGET_FILE:swemu-gen>
                   --analyze $<TARGET_FILE:swemu-analyze>
                   --tmp ${CMAKE_CURRENT_BINARY_DIR}/dissector_vs_analyzer)
  # The same on tools_dissector's edge cases (cut headers and elements, snap lengths, versions,
  # other ports, an empty datagram, random bytes), where both tools must agree too.
  add_test(NAME tools_dissector_vs_analyzer_edges
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/dissector_vs_analyzer.py
                   --lua ${SWEMU_DISSECTOR_LUA}
                   --pcap ${CMAKE_CURRENT_BINARY_DIR}/dissector/atp_cases.pcap
                   --analyze $<TARGET_FILE:swemu-analyze>
                   --tmp ${CMAKE_CURRENT_BINARY_DIR}/dissector_vs_analyzer_edges)
  set_tests_properties(tools_dissector_vs_analyzer_edges PROPERTIES TIMEOUT 300
                       FIXTURES_REQUIRED swemu_dissector_cases)
else()
  # Not a silent skip: the test is there and says what is missing.
  add_test(NAME tools_dissector_vs_analyzer
           COMMAND ${CMAKE_COMMAND} -E echo
                   "tools_dissector_vs_analyzer: the swemu-analyze or swemu-gen target is missing")
  set_tests_properties(tools_dissector_vs_analyzer PROPERTIES FAIL_REGULAR_EXPRESSION "missing")
endif()
set_tests_properties(tools_dissector_vs_analyzer PROPERTIES TIMEOUT 600)

# swemu_round_trip_test(proto): tools_<proto>_round_trip runs <proto>_round_trip.py (on
# round_trip_lib.py): the protocol's frames, encoded by the test, read back by the dissector and by
# swemu-analyze --packets (and its summary, the --<proto>-port option). Its pcap is the fixture of
# tools_dissector_vs_analyzer_<proto>: the same pcap through both tools cell by cell.
function(swemu_round_trip_test proto)
  set(name tools_${proto}_round_trip)
  if(NOT TARGET swemu-analyze)
    # Not a silent skip: the test is there and says what is missing.
    add_test(NAME ${name}
             COMMAND ${CMAKE_COMMAND} -E echo "${name}: the swemu-analyze target is missing")
    set_tests_properties(${name} PROPERTIES FAIL_REGULAR_EXPRESSION "missing")
    return()
  endif()
  set(tmp ${CMAKE_CURRENT_BINARY_DIR}/${proto}_round_trip)
  add_test(NAME ${name}
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/${proto}_round_trip.py
                   --lua ${SWEMU_DISSECTOR_LUA} --analyze $<TARGET_FILE:swemu-analyze> --tmp ${tmp})
  set_tests_properties(${name} PROPERTIES TIMEOUT 300 FIXTURES_SETUP swemu_${proto}_cases)
  add_test(NAME tools_dissector_vs_analyzer_${proto}
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/dissector_vs_analyzer.py
                   --lua ${SWEMU_DISSECTOR_LUA} --pcap ${tmp}/${proto}_cases.pcap
                   --analyze $<TARGET_FILE:swemu-analyze>
                   --tmp ${CMAKE_CURRENT_BINARY_DIR}/dissector_vs_analyzer_${proto})
  set_tests_properties(tools_dissector_vs_analyzer_${proto} PROPERTIES TIMEOUT 300
                       FIXTURES_REQUIRED swemu_${proto}_cases)
endfunction()

# Every <proto>_round_trip.py here, found by glob (what each encodes and checks: its docstring),
# so a new protocol's round trip needs no line in this file.
file(GLOB SWEMU_ROUND_TRIP_SCRIPTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*_round_trip.py)
foreach(script ${SWEMU_ROUND_TRIP_SCRIPTS})
  get_filename_component(script_name ${script} NAME_WE)
  string(REGEX REPLACE "_round_trip$" "" proto ${script_name})
  swemu_round_trip_test(${proto})
endforeach()
