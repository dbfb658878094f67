# tbgen gen --memory/--work as a user runs it: bad sizes and missing options
# are usage errors (exit 2), so is an uncapped table larger than the machine;
# a capped run builds out-of-core, says so in its JSON lines and removes its
# work directory. Then --blocks-per-record, --pair-coding and --pair-tolerance.
function(run_tbgen args expected_code)
  execute_process(COMMAND ${TBGEN} ${args} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code)
  if(NOT code EQUAL expected_code)
    message(FATAL_ERROR "tbgen ${args}: exit ${code}, expected ${expected_code}\n${out}${err}")
  endif()
  set(last_stdout "${out}" PARENT_SCOPE)
  set(last_stderr "${err}" PARENT_SCOPE)
endfunction()

# KvP built into an empty ${db} with the options `extra` (a list ending in
# ";" or empty) is stored in storage format `format`, as tbprobe reports it.
function(expect_kvp_format extra format)
  file(REMOVE_RECURSE ${db})
  run_tbgen("gen;--variant;antichess;--db;${db};--quiet;${extra}KvP" 0)
  execute_process(COMMAND ${TBPROBE} info --db ${db} --json OUTPUT_VARIABLE info RESULT_VARIABLE code)
  if(NOT code EQUAL 0 OR NOT info MATCHES "\"table\":\"KvP\",[^\n]*\"format\":${format},")
    message(FATAL_ERROR "KvP built with '${extra}' is not format ${format}:\n${info}")
  endif()
endfunction()

set(db ${WORK}/memory_cli_db)
set(work ${WORK}/memory_cli_work)
file(REMOVE_RECURSE ${db} ${work})

foreach(bad "4X" "0" "" "1.5G" "-1")
  run_tbgen("gen;--variant;antichess;--db;${db};--memory;${bad};--work;${work};KvP" 2)
  if(NOT last_stderr MATCHES "^tbgen: error: ")
    message(FATAL_ERROR "--memory '${bad}': unexpected error text: ${last_stderr}")
  endif()
endforeach()
run_tbgen("gen;--variant;antichess;--db;${db};--memory;1M;KvP" 2)
if(NOT last_stderr MATCHES "--memory needs --work")
  message(FATAL_ERROR "unexpected error text: ${last_stderr}")
endif()
run_tbgen("gen;--variant;antichess;--db;${db};--work;${work};KvP" 2)

# Without a cap, a table larger than the machine (KQRvKBN needs about 75 GiB
# in RAM) is refused at once, before any sub-table is built.
run_tbgen("gen;--variant;antichess;--db;${db};KQRvKBN" 2)
if(NOT last_stderr MATCHES "^tbgen: error: antichess/KQRvKBN needs about [0-9.]+ GiB in RAM, more than this machine's [0-9.]+ GiB: give --memory and --work")
  message(FATAL_ERROR "unexpected error text: ${last_stderr}")
endif()

run_tbgen("gen;--variant;antichess;--db;${db};--memory;4K;--work;${work};--json;KvP" 0)
if(NOT last_stdout MATCHES "\"table\":\"antichess/KvP\",[^\n]*\"out_of_core\":true,[^\n]*\"chunks\":[2-9]")
  message(FATAL_ERROR "KvP was not built out-of-core:\n${last_stdout}")
endif()
if(NOT last_stdout MATCHES "\"crossing_fraction\":0\\.[0-9]")
  message(FATAL_ERROR "no crossing fraction:\n${last_stdout}")
endif()
file(GLOB left ${work}/*)
if(left)
  message(FATAL_ERROR "work directory not cleaned: ${left}")
endif()

# Without a cap the table is built in RAM and reports where its time went.
file(REMOVE_RECURSE ${db})
run_tbgen("gen;--variant;antichess;--db;${db};--json;KvP" 0)
if(NOT last_stdout MATCHES "\"table\":\"antichess/KvP\",\"built\":true,[^\n]*\"out_of_core\":false,\"phases\":{\"initial\":[0-9.e-]+,\"levels\":[0-9.e-]+,\"renumber\":[0-9.e-]+,\"store\":[0-9.e-]+}")
  message(FATAL_ERROR "no phase times for an in-RAM build:\n${last_stdout}")
endif()

# --blocks-per-record: blocks stored together in one record (storage format
# 4, 8 by default); 1 writes format 2, anything but a power of two up to 256
# is a usage error. tbprobe info reports each table's format.
foreach(bad "3" "0" "512" "x")
  run_tbgen("gen;--variant;antichess;--db;${db};--blocks-per-record;${bad};KvP" 2)
  if(NOT last_stderr MATCHES "^tbgen: error: bad --blocks-per-record")
    message(FATAL_ERROR "--blocks-per-record '${bad}': unexpected error text: ${last_stderr}")
  endif()
endforeach()
expect_kvp_format("--blocks-per-record;1;" 2)
expect_kvp_format("" 5)

# --pair-coding: off, auto or always; pair codes need records of several
# blocks. KvP pair-coded is format 6.
foreach(bad "x" "ALWAYS")
  run_tbgen("gen;--variant;antichess;--db;${db};--pair-coding;${bad};KvP" 2)
  if(NOT last_stderr MATCHES "^tbgen: error: bad --pair-coding")
    message(FATAL_ERROR "--pair-coding '${bad}': unexpected error text: ${last_stderr}")
  endif()
endforeach()
run_tbgen("gen;--variant;antichess;--db;${db};--pair-coding;always;--blocks-per-record;1;KvP" 2)
if(NOT last_stderr MATCHES "more than one block a record")
  message(FATAL_ERROR "--pair-coding with one block a record: unexpected error text: ${last_stderr}")
endif()
expect_kvp_format("--pair-coding;always;" 6)

# --pair-tolerance: a percentage for --pair-coding auto only. KvP's pair
# code is about 1.8 times its zstd frames (638 and 1,137 B at this build):
# zstd at the default 10 %, pair-coded at 100 %.
foreach(bad "x" "-5" "1001")
  run_tbgen("gen;--variant;antichess;--db;${db};--pair-coding;auto;--pair-tolerance;${bad};KvP" 2)
endforeach()
run_tbgen("gen;--variant;antichess;--db;${db};--pair-coding;always;--pair-tolerance;20;KvP" 2)
if(NOT last_stderr MATCHES "only used with --pair-coding auto")
  message(FATAL_ERROR "--pair-tolerance without auto: unexpected error text: ${last_stderr}")
endif()
expect_kvp_format("--pair-coding;auto;" 5)
expect_kvp_format("--pair-coding;auto;--pair-tolerance;100;" 6)
