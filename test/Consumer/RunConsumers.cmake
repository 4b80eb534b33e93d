# Installs the build into a fresh prefix, then configures, builds and runs
# the two consumer projects against it (ctest: install-consumers).
#   cmake -DMPT_BINARY_DIR=... -DCONSUMER_SOURCE_DIR=... -DWORK_DIR=... -P RunConsumers.cmake
foreach(v MPT_BINARY_DIR CONSUMER_SOURCE_DIR WORK_DIR)
  if(NOT ${v})
    message(FATAL_ERROR "RunConsumers.cmake: -D${v}=... is required")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
message(STATUS "installing ${MPT_BINARY_DIR} into ${prefix}")
run(${CMAKE_COMMAND} --install ${MPT_BINARY_DIR} --prefix ${prefix})
# The installed tools run from the prefix (they find the shared libMLIR).
foreach(tool mpt-opt mpt-translate mpt-compile mpt-run mpt-train)
  run(${prefix}/bin/${tool} --help)
endforeach()

foreach(consumer runtime compiler)
  set(build ${WORK_DIR}/${consumer})
  message(STATUS "consumer '${consumer}': configure, build, run")
  run(${CMAKE_COMMAND} -G Ninja -S ${CONSUMER_SOURCE_DIR}/${consumer} -B ${build}
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix})
  run(${CMAKE_COMMAND} --build ${build})
endforeach()

run(${WORK_DIR}/runtime/run-plan)
message(STATUS "run-plan: ${last_output}")
run(${WORK_DIR}/compiler/assign-bf16)
string(FIND "${last_output}" "tensor<8x16xbf16>" at)
if(at EQUAL -1)
  message(FATAL_ERROR "assign-bf16 did not put the matmul in bf16:\n${last_output}")
endif()
message(STATUS "assign-bf16: the matmul's operands are bf16")
