# Checks shared by the command-line scripts (cmake -P): run a tool expecting
# an exit code, keeping its stdout and stderr in `out` and `err`; match text.
function(run_tool expected_code)
  execute_process(COMMAND ${ARGN} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code)
  if(NOT code EQUAL expected_code)
    message(FATAL_ERROR "${ARGN}: exit ${code}, expected ${expected_code}\n${out}${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

function(expect text pattern)
  if(NOT text MATCHES "${pattern}")
    message(FATAL_ERROR "expected to match '${pattern}':\n${text}")
  endif()
endfunction()
