# Runs EXE with ARGS (a CMake list) and checks the exit code, stdout and
# stderr against EXPECT_RC, EXPECT_OUT and EXPECT_ERR (regular expressions).
execute_process(
  COMMAND ${EXE} ${ARGS}
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
set(problems "")
if(NOT rc STREQUAL EXPECT_RC)
  string(APPEND problems "exit code ${rc}, expected ${EXPECT_RC}\n")
endif()
if(NOT out MATCHES "${EXPECT_OUT}")
  string(APPEND problems "stdout does not match '${EXPECT_OUT}'\n")
endif()
if(NOT err MATCHES "${EXPECT_ERR}")
  string(APPEND problems "stderr does not match '${EXPECT_ERR}'\n")
endif()
if(problems)
  message(FATAL_ERROR "${EXE} ${ARGS}\n${problems}--- stdout:\n${out}--- stderr:\n${err}")
endif()
