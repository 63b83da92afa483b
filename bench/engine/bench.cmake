# The engine against ns-3 (bench/engine/README.md): swemu's side always, ns-3's when Debian's
# libns3-dev (3.37) is installed; compare.sh runs both.
add_library(swemu_bench_workload STATIC ${CMAKE_CURRENT_LIST_DIR}/workload.cc)
target_include_directories(swemu_bench_workload PUBLIC ${PROJECT_SOURCE_DIR})
add_executable(swemu_engine_bench ${CMAKE_CURRENT_LIST_DIR}/swemu_side.cc)
target_link_libraries(swemu_engine_bench PRIVATE swemu_bench_workload swemu_hostlib_dlcp
                                                 swemu_hostlib_common swemu_mpi swemu_flags)
# pkg-config: Debian's ns3Config.cmake names a helper binary (raw-sock-creator) that libns3-dev
# does not ship, so find_package(ns3) fails. Only its ns3 libraries are linked: the .pc files
# also name libgsl.so and libsqlite3.so, development links that libns3-dev does not pull in (the
# ns-3 libraries load their runtime libraries themselves).
pkg_check_modules(NS3 QUIET ns3-core ns3-network ns3-internet ns3-point-to-point
                  ns3-applications ns3-traffic-control)
if(NS3_FOUND)
  add_executable(ns3_engine_bench ${CMAKE_CURRENT_LIST_DIR}/ns3_side.cc)
  list(FILTER NS3_LIBRARIES INCLUDE REGEX "^ns3")
  list(REMOVE_DUPLICATES NS3_LIBRARIES)
  target_link_libraries(ns3_engine_bench PRIVATE swemu_bench_workload ${NS3_LIBRARIES})
  # ns-3 3.37's headers are C++17 (singleton.h's constructor template-ids are not C++20).
  set_target_properties(ns3_engine_bench PROPERTIES CXX_STANDARD 17)
else()
  message(STATUS "ns-3 not found: bench/engine builds swemu's side only "
                 "(apt-get install -y --no-install-recommends libns3-dev)")
endif()
