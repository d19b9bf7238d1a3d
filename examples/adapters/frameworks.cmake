# frameworks.cmake - finds the frameworks the adapters wrap; each one is optional.
# Included by examples/adapters, tests/adapters and bench/adapters.cmake (imported targets
# are directory-scoped, so each includer finds them again). Sets, in the caller's scope:
#   LIN_ADAPTER_UV  / target PkgConfig::UV   libuv  (Debian libuv1-dev)
#   LIN_ADAPTER_TBB / target TBB::tbb        oneTBB (Debian libtbb-dev)
#   LIN_ADAPTER_OMP / target OpenMP::OpenMP_CXX  (gcc's libgomp)
# OpenMP is off in ThreadSanitizer builds: libgomp is not built with TSan, so TSan cannot
# see its barriers and task hand-offs and reports races that are not there.
# LIN_ADAPTER_TBB_RUN is off in ThreadSanitizer builds for the same reason (Debian's libtbb
# is not TSan-instrumented: its lazy arena set-up and its task hand-off through its own
# atomics are reported as races); the oneTBB adapter is still compiled there.
set(LIN_ADAPTER_UV OFF)
set(LIN_ADAPTER_TBB OFF)
set(LIN_ADAPTER_OMP OFF)

pkg_check_modules(UV QUIET IMPORTED_TARGET libuv>=1.30)
if(UV_FOUND)
  set(LIN_ADAPTER_UV ON)
endif()

find_package(TBB QUIET CONFIG)
set(LIN_ADAPTER_TBB_RUN OFF)
if(TBB_FOUND)
  set(LIN_ADAPTER_TBB ON)
  if(NOT "thread" IN_LIST LIN_SANITIZE)
    set(LIN_ADAPTER_TBB_RUN ON)
  endif()
endif()

if("thread" IN_LIST LIN_SANITIZE)
  set(_lin_omp_why "skipped under ThreadSanitizer (libgomp is not TSan-instrumented)")
else()
  find_package(OpenMP QUIET COMPONENTS CXX)
  if(OpenMP_CXX_FOUND)
    set(LIN_ADAPTER_OMP ON)
  else()
    set(_lin_omp_why "OpenMP not found")
  endif()
endif()

get_property(_lin_reported GLOBAL PROPERTY LIN_ADAPTERS_REPORTED)
if(NOT _lin_reported)
  set_property(GLOBAL PROPERTY LIN_ADAPTERS_REPORTED ON)
  foreach(_a UV TBB OMP)
    if(LIN_ADAPTER_${_a})
      message(STATUS "lineage adapters: ${_a} adapter enabled")
      if(_a STREQUAL "TBB" AND NOT LIN_ADAPTER_TBB_RUN)
        message(STATUS "lineage adapters: TBB test and example not run under ThreadSanitizer (libtbb is not TSan-instrumented)")
      endif()
    elseif(_a STREQUAL "OMP")
      message(STATUS "lineage adapters: OpenMP adapter ${_lin_omp_why}")
    else()
      message(STATUS "lineage adapters: ${_a} not found; its adapter, example, test and bench are skipped")
    endif()
  endforeach()
endif()

# The flags lineage.hpp and the adapters are held to.
set(LIN_CXX_STRICT -std=c++17 -Wall -Wextra -Wshadow -Wpedantic -Werror)
