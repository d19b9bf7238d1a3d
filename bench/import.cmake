# Importer benchmark (include()d from bench/CMakeLists.txt): a large trace-event JSON file
# generated from a real trace, validated by lineage-validate (bench/import/run-import-bench.sh).
#   lin-bench-gen-trace-events SOURCE.json[.gz] OUT.json (--copies N | --bytes N[KMG])
pkg_check_modules(LIN_BENCH_YAJL QUIET IMPORTED_TARGET yajl)
pkg_check_modules(LIN_BENCH_ZLIB QUIET IMPORTED_TARGET zlib)
if(LIN_BENCH_YAJL_FOUND AND LIN_BENCH_ZLIB_FOUND)
  add_executable(lin-bench-gen-trace-events ${CMAKE_CURRENT_LIST_DIR}/import/gen_trace_events.c
                 ${PROJECT_SOURCE_DIR}/import/decimal.c)
  target_include_directories(lin-bench-gen-trace-events PRIVATE ${PROJECT_SOURCE_DIR}/join ${PROJECT_SOURCE_DIR}/trace
                             ${PROJECT_SOURCE_DIR}/import ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(lin-bench-gen-trace-events PRIVATE PkgConfig::LIN_BENCH_YAJL PkgConfig::LIN_BENCH_ZLIB)
  # A small run in CI (label cli): three copies of a schema-variant extract join three
  # times as the source does; no timing is checked.
  if(LIN_BUILD_TESTS AND TARGET lineage-validate)
    add_test(NAME import_bench_small COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/import/check-gen.sh
             $<TARGET_FILE:lin-bench-gen-trace-events> $<TARGET_FILE:lineage-validate>
             ${PROJECT_SOURCE_DIR}/tests/import/data/variants ${CMAKE_CURRENT_BINARY_DIR}/import-gen)
    set_tests_properties(import_bench_small PROPERTIES LABELS cli TIMEOUT 300
                         ENVIRONMENT "${LIN_TEST_ENV}")
  endif()
endif()
