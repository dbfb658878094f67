# tbf_library_sources(<target> <out_var> [FRONT_ENDS]): the sources of one
# of the project's libraries as absolute paths, without its command-line
# front ends (the sources whose file name contains "cli": CLI11 option
# parsing and the tools' run_cli), or with FRONT_ENDS those alone. Without
# them: for the targets that compile a library's sources a second time and
# never run a tool, libtbforge (cmake/shared_library.cmake) and the fuzz
# build (tests/fuzz/CMakeLists.txt).
function(tbf_library_sources target out_var)
  cmake_parse_arguments(ARG "FRONT_ENDS" "" "" ${ARGN})
  get_target_property(dir ${target} SOURCE_DIR)
  get_target_property(sources ${target} SOURCES)
  set(kept "")
  foreach(source IN LISTS sources)
    cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY "${dir}" NORMALIZE)
    cmake_path(GET source FILENAME name)
    if(name MATCHES "cli")
      set(front_end TRUE)
    else()
      set(front_end FALSE)
    endif()
    if(front_end STREQUAL ARG_FRONT_ENDS)
      list(APPEND kept "${source}")
    endif()
  endforeach()
  set(${out_var} "${kept}" PARENT_SCOPE)
endfunction()

# tbf_optimize_front_ends_lightly(<target>...): the command-line front ends
# of these libraries at -O1 in optimized builds. They parse options and
# print results, nothing hot, and CLI11 is header-only: at -O3 these few
# files were a fifth of the build's compile time (gcc, gen/src/cli.cpp
# 22.6 s at -O3, 16.5 s at -O1). The last -O on the command line wins.
function(tbf_optimize_front_ends_lightly)
  foreach(target IN LISTS ARGN)
    tbf_library_sources(${target} front_ends FRONT_ENDS)
    get_target_property(dir ${target} SOURCE_DIR)
    set_property(SOURCE ${front_ends} DIRECTORY "${dir}" APPEND PROPERTY COMPILE_OPTIONS
      "$<$<CONFIG:Release,RelWithDebInfo,MinSizeRel>:-O1>")
  endforeach()
endfunction()
