# Whole command-line job: build tables with tbgen, probe them with tbprobe,
# list them, and check output shapes and exit codes as a script would.
include(${CMAKE_CURRENT_LIST_DIR}/../support/cli_script.cmake)

set(db "${WORK}/e2e.db")
file(REMOVE_RECURSE "${db}")

# Index report.
run_tool(0 ${TBGEN} index --variant antichess QvR --json)
expect("${out}" "^{\"variant\":\"antichess\",\"table\":\"QvR\",\"slots\":[0-9]+,\"valid\":\\[[0-9]+,[0-9]+\\]}")

# Generate: KRvK and all it converts into; a second run rebuilds nothing.
run_tool(0 ${TBGEN} gen --variant antichess --db ${db} KRvK --json)
expect("${out}" "\"table\":\"antichess/KRvK\",\"built\":true")
expect("${out}" "\"summary\":{\"tables\":[0-9]+,\"built\":[1-9]")
run_tool(0 ${TBGEN} gen --variant antichess --db ${db} KRvK --json)
expect("${out}" "\"summary\":{\"tables\":[0-9]+,\"built\":0,")

# Probe as JSON: a colour-flipped material, moves sorted best first.
run_tool(0 ${TBPROBE} --db ${db} --variant antichess --fen "8/8/8/8/8/8/8/Kr6 b - - 0 1" --json)
expect("${out}" "^{\"fen\":\"8/8/8/8/8/8/8/Kr6 b - - 0 1\",\"category\":\"loss\",\"dtc\":1,")
# The rook must capture the king: only captures are legal, and losing all units wins.
expect("${out}" "\"moves\":\\[{\"uci\":\"b1a1\",\"category\":\"win\",\"dtc\":0,\"conversion\":true}\\]")

# Batch mode: a bad line in the middle is reported and the run goes on.
file(WRITE "${WORK}/fens.txt" "8/8/8/8/8/3K4/8/6r1 w - - 0 1\nnot a fen\n8/8/8/8/8/8/8/KR5k w - - 0 1\n")
execute_process(COMMAND ${TBPROBE} --db ${db} --variant antichess --fen - --json
  INPUT_FILE "${WORK}/fens.txt" OUTPUT_VARIABLE out RESULT_VARIABLE code)
if(NOT code EQUAL 2)
  message(FATAL_ERROR "batch with a bad line: exit ${code}, expected 2\n${out}")
endif()
string(REGEX MATCHALL "[^\n]+" lines "${out}")
list(LENGTH lines n)
if(NOT n EQUAL 3)
  message(FATAL_ERROR "batch printed ${n} lines, expected 3:\n${out}")
endif()
list(GET lines 1 bad)
expect("${bad}" "^{\"fen\":\"not a fen\",\"error\":\"bad FEN: ")

# Missing table: exit 3 naming it. Bad FEN: exit 2.
run_tool(3 ${TBPROBE} --db ${db} --variant antichess --fen "8/8/8/8/8/8/8/KQ5k w - - 0 1")
expect("${err}" "missing table antichess/KQvK")
run_tool(2 ${TBPROBE} --db ${db} --variant antichess --fen "8/8/8/8/8/8/8/KX5k w - - 0 1")
run_tool(3 ${TBPROBE} --db "${WORK}/no-such.db" --variant antichess --fen "8/8/8/8/8/8/8/KR5k w - - 0 1")

# Info lists every table with the documented fields.
run_tool(0 ${TBPROBE} info --db ${db} --json)
expect("${out}" "{\"variant\":\"antichess\",\"table\":\"KRvK\",\"slots\":[0-9]+,\"bytes\":[0-9]+,\"checksum\":\"[0-9a-f]+\"")
file(REMOVE_RECURSE "${db}")
