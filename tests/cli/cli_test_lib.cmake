# The helpers of the CLI end-to-end scripts: run(RC ARGS...) runs batchfit-cli (${CLI}) and fails unless it exits
# RC, leaving OUT and ERR; expect(TEXT OUT|ERR) fails unless TEXT is in it.
function(run expect_rc)
  execute_process(COMMAND ${CLI} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL expect_rc)
    message(FATAL_ERROR "batchfit-cli ${ARGN}: exit ${rc}, expected ${expect_rc}\nstdout: ${out}\nstderr: ${err}")
  endif()
  set(OUT "${out}" PARENT_SCOPE)
  set(ERR "${err}" PARENT_SCOPE)
endfunction()
function(expect text where)
  string(FIND "${${where}}" "${text}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "expected '${text}' in ${where}:\n${${where}}")
  endif()
endfunction()

