include(GoogleTest)
find_package(GTest CONFIG REQUIRED)

# ditserve_add_gtest(NAME <target> LABEL <unit|integration|e2e>
#                    [TIMEOUT <seconds>] [PROCESSORS <cores a case keeps busy>]
#                    SOURCES <files...> LIBS <targets...>)
# ctest -j N never runs cases whose PROCESSORS add up to more than N (a case
# asking for more than N runs alone). The binaries of each label are listed
# in the global property DITSERVE_GTEST_BINARIES_<label>.
function(ditserve_add_gtest)
  cmake_parse_arguments(ARG "" "NAME;LABEL;TIMEOUT;PROCESSORS" "SOURCES;LIBS"
                        ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  if(DITSERVE_SANITIZE)
    # Instrumented code runs about 2-3 times slower.
    math(EXPR ARG_TIMEOUT "${ARG_TIMEOUT} * 3")
  endif()
  if(NOT ARG_PROCESSORS)
    set(ARG_PROCESSORS 1)
  endif()
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  set_target_properties(${ARG_NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                                               ${CMAKE_BINARY_DIR}/tests)
  target_compile_definitions(${ARG_NAME} PRIVATE
    DITSERVE_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}/tests/data"
    DITSERVE_BIN_DIR="${CMAKE_BINARY_DIR}/bin")
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_LIBS} GTest::gtest
                                            GTest::gmock GTest::gtest_main)
  set_property(GLOBAL APPEND PROPERTY DITSERVE_GTEST_BINARIES_${ARG_LABEL}
                                      ${ARG_NAME})
  # Listing a binary's cases loads LibTorch: under ASan, beside another
  # instrumented binary on two cores, that took more than the default 5 s.
  gtest_discover_tests(${ARG_NAME}
    DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60
    PROPERTIES LABELS ${ARG_LABEL} TIMEOUT ${ARG_TIMEOUT}
               PROCESSORS ${ARG_PROCESSORS})
endfunction()
