# `cmake --install build --prefix P` (docs/probe.md, "Install"):
#   P/bin/          tbgen, tbprobe, tbverify
#   P/lib/          libtbforge.so (C and C++ API)
#   P/include/tbforge/{base,rules,index,storage,probe}/   the API's headers
#   P/lib/pkgconfig/tbforge.pc
#   P/lib/cmake/tbforge/   find_package(tbforge) -> tbforge::tbforge
#   the Python package tbforge (python/CMakeLists.txt says where)
include(CMakePackageConfigHelpers)

foreach(tool tbgen tbprobe tbverify)
  if(TARGET ${tool})
    install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()

if(TARGET tbforge)
  install(TARGETS tbforge EXPORT tbforgeTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  # The headers of the library's parts; the command-line headers (cli.hpp,
  # CLI11) and base's JSON header (nlohmann-json) are the tools' business.
  foreach(part IN LISTS TBF_SHARED_PARTS)
    get_target_property(part_dir ${part} SOURCE_DIR)
    install(DIRECTORY "${part_dir}/include/tbforge"
      DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
      FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp"
      PATTERN "cli.hpp" EXCLUDE
      PATTERN "json.hpp" EXCLUDE)
  endforeach()

  set(tbf_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/tbforge)
  install(EXPORT tbforgeTargets NAMESPACE tbforge:: DESTINATION ${tbf_cmake_dir})
  configure_package_config_file(
    ${PROJECT_SOURCE_DIR}/cmake/tbforge-config.cmake.in
    ${PROJECT_BINARY_DIR}/tbforge-config.cmake
    INSTALL_DESTINATION ${tbf_cmake_dir})
  # 0.x releases make no compatibility promise across minor versions.
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/tbforge-config-version.cmake
    COMPATIBILITY SameMinorVersion)
  install(FILES
    ${PROJECT_BINARY_DIR}/tbforge-config.cmake
    ${PROJECT_BINARY_DIR}/tbforge-config-version.cmake
    DESTINATION ${tbf_cmake_dir})

  # Relocatable: the prefix is found from where the .pc file lies, so the
  # same file is right for any --prefix given at install time.
  file(RELATIVE_PATH tbf_pc_to_prefix
    "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
  string(REGEX REPLACE "/$" "" tbf_pc_to_prefix "${tbf_pc_to_prefix}")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/tbforge.pc.in
    ${PROJECT_BINARY_DIR}/tbforge.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/tbforge.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
