# Builds a small database with tbgen (KQvK and PvP with their sub-tables)
# in DB, then runs the C program CHECK on it. Variables: TBGEN, CHECK, DB.
file(REMOVE_RECURSE "${DB}")
execute_process(
  COMMAND ${TBGEN} gen --variant antichess --db ${DB} --threads 2 --quiet KQvK PvP
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tbgen failed (${rc}):\n${out}${err}")
endif()
execute_process(
  COMMAND ${CHECK} ${DB}
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
file(REMOVE_RECURSE "${DB}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${CHECK} failed (${rc}):\n${out}${err}")
endif()
