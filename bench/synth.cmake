# lineage-synth: synthetic handoff workloads on the CUPTI-semantics simulator
# (include()d from bench/CMakeLists.txt). It feeds real CUPTI activity buffers through
# attach mode, so it needs CUPTI's headers and libcupti (no driver, no GPU).
if(NOT LIN_HAVE_CUPTI)
  message(STATUS "lineage-synth: skipped (needs CUPTI headers and libcupti)")
  return()
endif()

add_library(lin_sim STATIC
  ${CMAKE_CURRENT_LIST_DIR}/sim/sim.c
  ${CMAKE_CURRENT_LIST_DIR}/sim/sim_api.c)
target_include_directories(lin_sim PUBLIC ${CMAKE_CURRENT_LIST_DIR}/sim ${PROJECT_SOURCE_DIR}/include
                           ${PROJECT_SOURCE_DIR}/cupti_bind/testlayer
                           ${PROJECT_SOURCE_DIR}/cupti_bind)
target_link_libraries(lin_sim PUBLIC lineage lin_cupti Threads::Threads)

add_executable(lineage-synth
  ${CMAKE_CURRENT_LIST_DIR}/synth/main.c
  ${CMAKE_CURRENT_LIST_DIR}/synth/run.c
  ${CMAKE_CURRENT_LIST_DIR}/synth/owner.c
  ${CMAKE_CURRENT_LIST_DIR}/synth/pool.c
  ${CMAKE_CURRENT_LIST_DIR}/synth/strategy.c
  ${CMAKE_CURRENT_LIST_DIR}/synth/graph.c
  ${CMAKE_CURRENT_LIST_DIR}/synth/truth.c
  ${CMAKE_CURRENT_LIST_DIR}/synth/scen_basic.c
  ${CMAKE_CURRENT_LIST_DIR}/synth/scen_more.c
  ${CMAKE_CURRENT_LIST_DIR}/synth/scen_attr.c)
target_include_directories(lineage-synth PRIVATE ${CMAKE_CURRENT_LIST_DIR}/synth
                           ${PROJECT_SOURCE_DIR}/lineage)
# The test CUPTI layer's object files come first: lineage-synth --cupti layer runs the live
# binding against it (the installed lineage-synth is a simulator: it never uses a real GPU).
target_link_libraries(lineage-synth PRIVATE lineage_cupti_layer lin_sim lineage_trace lineage_otlp lineage
                      lin_cupti Threads::Threads)
install(TARGETS lineage-synth RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The comparison: every scenario x strategy through lineage-validate --expect.
add_custom_target(lineage-compare
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/compare/run-comparison.sh
          --synth $<TARGET_FILE:lineage-synth> --validate $<TARGET_FILE:lineage-validate>
  DEPENDS lineage-synth lineage-validate
  USES_TERMINAL)
