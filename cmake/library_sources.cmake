# tbf_library_sources(<target> <out_var>): the sources of one of the
# project's libraries as absolute paths, without its command-line front ends
# (the sources whose file name contains "cli": CLI11 option parsing and the
# tools' run_cli). For the targets that compile a library's sources a second
# time and never run a tool: libtbforge (cmake/shared_library.cmake) and the
# fuzz build (tests/fuzz/CMakeLists.txt).
function(tbf_library_sources target out_var)
  get_target_property(dir ${target} SOURCE_DIR)
  get_target_property(sources ${target} SOURCES)
  set(kept "")
  foreach(source IN LISTS sources)
    cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY "${dir}" NORMALIZE)
    cmake_path(GET source FILENAME name)
    if(NOT name MATCHES "cli")
      list(APPEND kept "${source}")
    endif()
  endforeach()
  set(${out_var} "${kept}" PARENT_SCOPE)
endfunction()
