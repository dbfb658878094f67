# The installed prefix as users outside the tree see it (docs/probe.md,
# "Install"): `cmake --install` of the build tree into a scratch prefix, then
#   - the installed tbgen builds a table and the installed tbprobe reads it;
#   - a C program built with `pkg-config --cflags --libs tbforge` alone,
#   - a CMake project using find_package(tbforge) (the C++ API),
#   - and the installed Python package (when built)
# each probe positions and must print exactly what tbprobe --json says.
# Also: libtbforge exports the API's symbols and nothing else.
# Variables: BUILD_DIR, WORK, SOURCE_DIR, LIBDIR, CC, CXX, GENERATOR,
# PYTHON and PYTHON_DIR (empty without the Python module).
include(${SOURCE_DIR}/../support/cli_script.cmake)

file(REMOVE_RECURSE "${WORK}")
set(prefix "${WORK}/prefix")
run_tool(0 ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

foreach(file
    bin/tbgen bin/tbprobe bin/tbverify
    ${LIBDIR}/libtbforge.so
    include/tbforge/probe/tbforge.h include/tbforge/probe/tablebase.hpp
    include/tbforge/rules/fen.hpp include/tbforge/base/status.hpp
    ${LIBDIR}/pkgconfig/tbforge.pc ${LIBDIR}/cmake/tbforge/tbforge-config.cmake)
  if(NOT EXISTS "${prefix}/${file}")
    message(FATAL_ERROR "not installed: ${file}")
  endif()
endforeach()
if(EXISTS "${prefix}/include/tbforge/probe/cli.hpp")
  message(FATAL_ERROR "the tools' cli.hpp is installed as API")
endif()

# Exported: the C functions tbf_* and the C++ namespace tbf (with its type
# information); nothing of RocksDB, nlohmann-json or the standard library.
run_tool(0 nm -D --defined-only -C ${prefix}/${LIBDIR}/libtbforge.so)
string(REPLACE "\n" ";" symbols "${out}")
set(exported 0)
foreach(line IN LISTS symbols)
  if(line STREQUAL "")
    continue()
  endif()
  string(REGEX REPLACE "^[0-9a-f]+ [A-Za-z] " "" name "${line}")
  if(NOT name MATCHES "^(tbf_|tbf::|(typeinfo|typeinfo name|vtable|guard variable) for tbf::|TBF_)")
    message(FATAL_ERROR "libtbforge exports a symbol outside the API: ${line}")
  endif()
  math(EXPR exported "${exported} + 1")
endforeach()
foreach(needed tbf_open tbf_probe_fen "tbf::probe::Tablebase::open(")
  string(FIND "${out}" "${needed}" at)
  if(at LESS 0)
    message(FATAL_ERROR "libtbforge does not export ${needed}")
  endif()
endforeach()

# A table built and read by the installed tools.
set(db "${WORK}/tables.db")
run_tool(0 ${prefix}/bin/tbgen gen --variant antichess --db ${db} --quiet KQvK)
set(fens
  "8/8/8/8/8/8/8/KQ3k2 b - - 0 1"
  "8/8/8/8/8/8/8/KQ3k2 w - - 0 1"
  "3k4/8/8/8/8/8/8/K2Q4 w - - 0 1"
  "8/8/3q4/8/8/8/8/5K1k b - - 0 1"
  "8/8/8/8/8/8/8/KQ6 b - - 0 1")
list(JOIN fens "\n" stdin)
file(WRITE "${WORK}/fens.txt" "${stdin}\n")
execute_process(COMMAND ${prefix}/bin/tbprobe --db ${db} --variant antichess --fen - --json
  INPUT_FILE "${WORK}/fens.txt" OUTPUT_VARIABLE json RESULT_VARIABLE code)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "tbprobe --json failed (${code}):\n${json}")
endif()
string(STRIP "${json}" json)
string(REPLACE "\n" ";" json_lines "${json}")
set(expected "")
foreach(line IN LISTS json_lines)
  string(JSON category GET "${line}" category)
  string(JSON dtc GET "${line}" dtc)
  string(JSON moves LENGTH "${line}" moves)
  set(best "-")
  if(moves GREATER 0)
    string(JSON best GET "${line}" moves 0 uci)
  endif()
  string(APPEND expected "${category} ${dtc} ${moves} ${best}\n")
endforeach()
# Not a vacuous comparison: the first position is Black's win in 2 by f1e1.
expect("${expected}" "^win 2 5 f1e1\n")

function(expect_probe_output what)
  if(NOT out STREQUAL expected)
    message(FATAL_ERROR "${what} printed\n${out}tbprobe --json says\n${expected}")
  endif()
endfunction()

# C, with pkg-config only. pkg-config adds no run path: the program gets
# one from the .pc file's libdir.
set(pkg ${CMAKE_COMMAND} -E env "PKG_CONFIG_PATH=${prefix}/${LIBDIR}/pkgconfig" pkg-config)
run_tool(0 ${pkg} --cflags --libs tbforge)
separate_arguments(flags UNIX_COMMAND "${out}")
run_tool(0 ${pkg} --variable=libdir tbforge)
string(STRIP "${out}" libdir)
run_tool(0 ${CC} -std=c11 -Wall -Wextra -Wpedantic -Werror ${SOURCE_DIR}/probe_c.c
  -o ${WORK}/probe_c ${flags} -Wl,-rpath,${libdir})
run_tool(0 ${WORK}/probe_c ${db} ${fens})
expect_probe_output("the C program (pkg-config)")

# C++, with find_package(tbforge).
run_tool(0 ${CMAKE_COMMAND} -S ${SOURCE_DIR}/consumer -B ${WORK}/consumer -G ${GENERATOR}
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${prefix})
run_tool(0 ${CMAKE_COMMAND} --build ${WORK}/consumer)
run_tool(0 ${WORK}/consumer/probe_cpp ${db} ${fens})
expect_probe_output("the C++ program (find_package)")

# Python, the installed package (its RPATH finds the installed library).
if(PYTHON)
  set(script [=[
import sys, tbforge
assert tbforge.__file__.startswith(sys.argv[1]), tbforge.__file__
with tbforge.open_tablebase(sys.argv[2]) as tb:
    for fen in sys.argv[3:]:
        r = tb.probe(fen)
        print(r.value.category, r.value.dtc, len(r.moves), r.best_move or "-")
]=])
  run_tool(0 ${CMAKE_COMMAND} -E env "PYTHONPATH=${prefix}/${PYTHON_DIR}"
    ${PYTHON} -c "${script}" ${prefix} ${db} ${fens})
  expect_probe_output("the installed Python package")
endif()
message(STATUS "install test: ${exported} exported symbols, C, C++ and Python agree with tbprobe")
