# ptxgen's CMake package file as pip installs it (next to the headers in the Python
# package): find_package(ptxgen CONFIG) with ptxgen_DIR=$(ptxgen --cmake-dir) defines the
# INTERFACE target ptxgen::ptxgen (the generated headers on the include path, C++17).
# In a source checkout (an editable install) this file is cmake/pip/ and the headers are
# generated/include; installed, it is ptxgen/cmake/ and they are ptxgen/include.
if(EXISTS "${CMAKE_CURRENT_LIST_DIR}/../include/ptxgen/ptxgen.hpp")
  get_filename_component(_ptxgen_include "${CMAKE_CURRENT_LIST_DIR}/../include" ABSOLUTE)
else()
  get_filename_component(_ptxgen_include "${CMAKE_CURRENT_LIST_DIR}/../../generated/include"
                         ABSOLUTE)
endif()
if(NOT EXISTS "${_ptxgen_include}/ptxgen/ptxgen.hpp")
  set(ptxgen_FOUND FALSE)
  set(ptxgen_NOT_FOUND_MESSAGE "no ptxgen/ptxgen.hpp next to ${CMAKE_CURRENT_LIST_FILE}")
  return()
endif()
if(NOT TARGET ptxgen::ptxgen)
  add_library(ptxgen::ptxgen INTERFACE IMPORTED)
  set_target_properties(ptxgen::ptxgen PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${_ptxgen_include}"
    INTERFACE_COMPILE_FEATURES cxx_std_17)
endif()
set(ptxgen_INCLUDE_DIR "${_ptxgen_include}")
unset(_ptxgen_include)
