# lineage-validate benchmark (include()d from bench/CMakeLists.txt).
#   lin-bench-validate-gen OUT NRECORDS   writes a large realistic trace
#   lin-bench-validate [NRECORDS [TRACE]]  generates it if needed, times lineage-validate,
#                                          prints SUMMARY bench=validate ...
add_executable(lin-bench-validate-gen ${CMAKE_CURRENT_LIST_DIR}/validate/gen_large.c)
target_link_libraries(lin-bench-validate-gen PRIVATE lineage_trace)
add_executable(lin-bench-validate ${CMAKE_CURRENT_LIST_DIR}/validate/run_bench.c)
target_compile_definitions(lin-bench-validate PRIVATE
  LIN_VALIDATE_BIN="$<TARGET_FILE:lineage-validate>"
  LIN_BENCH_GEN="$<TARGET_FILE:lin-bench-validate-gen>"
  LIN_BENCH_TRACE="${CMAKE_CURRENT_BINARY_DIR}/validate-large.lt")
add_dependencies(lin-bench-validate lineage-validate lin-bench-validate-gen)
