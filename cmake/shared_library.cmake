# libtbforge: the probe stack (base, rules, index, storage, probe) as one
# shared library for programs outside the tree and for the Python module
# (docs/probe.md, "Install").
#
# The in-tree static libraries stay as they are: the tools and the generator
# link them without position-independent code. The shared library compiles
# the same sources a second time with -fPIC, so nothing the generator runs or
# stores changes. Its sources are read from the static targets, so a file
# added to one of those folders is in the shared library too.
#
# Only the API is exported (cmake/libtbforge.map): the C functions tbf_* and
# the C++ namespace tbf. The C++ standard library's instantiations,
# nlohmann-json and the RocksDB glue stay internal.

set(TBF_SHARED_PARTS tbf_base tbf_rules tbf_index tbf_storage tbf_probe)

include(${CMAKE_CURRENT_LIST_DIR}/library_sources.cmake)
set(tbf_shared_sources "")
set(tbf_shared_private_includes "")
foreach(part IN LISTS TBF_SHARED_PARTS)
  get_target_property(part_options ${part} COMPILE_OPTIONS)
  # The command-line front ends (CLI11 option parsing, tbprobe's run_cli)
  # belong to the tools, not to the API.
  tbf_library_sources(${part} part_sources)
  foreach(source IN LISTS part_sources)
    list(APPEND tbf_shared_sources "${source}")
    # A part's own compile options (e.g. index's -Werror=switch) stay on its sources.
    if(part_options)
      set_property(SOURCE "${source}" APPEND PROPERTY COMPILE_OPTIONS ${part_options})
    endif()
  endforeach()
  get_target_property(part_includes ${part} INCLUDE_DIRECTORIES)
  list(APPEND tbf_shared_private_includes ${part_includes})
endforeach()

add_library(tbforge SHARED ${tbf_shared_sources})
add_library(tbforge::tbforge ALIAS tbforge)
set_target_properties(tbforge PROPERTIES
  OUTPUT_NAME tbforge
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}
  POSITION_INDEPENDENT_CODE ON
  EXPORT_NAME tbforge
  LINK_DEPENDS "${PROJECT_SOURCE_DIR}/cmake/libtbforge.map")
# The public include folders of the parts, from the source tree when built
# here, from <prefix>/include when installed.
foreach(part IN LISTS TBF_SHARED_PARTS)
  get_target_property(part_dir ${part} SOURCE_DIR)
  target_include_directories(tbforge PUBLIC "$<BUILD_INTERFACE:${part_dir}/include>")
endforeach()
target_include_directories(tbforge
  PUBLIC "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>"
  PRIVATE ${tbf_shared_private_includes})
# Internal calls bind inside the library (no interposition through the PLT),
# as they do in the static build.
target_compile_options(tbforge PRIVATE -fno-semantic-interposition)
target_link_options(tbforge PRIVATE
  "-Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/libtbforge.map"
  -Wl,--no-undefined)
target_link_libraries(tbforge PRIVATE
  tbf::options nlohmann_json::nlohmann_json
  PkgConfig::ROCKSDB PkgConfig::LZ4 PkgConfig::ZSTD OpenMP::OpenMP_CXX)
