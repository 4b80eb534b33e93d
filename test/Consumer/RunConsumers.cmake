# Installs the build into a fresh prefix, then configures, builds and runs
# the two consumer projects against it, then checks what the package file
# loads for each set of components, in this install and in the two halves
# an install can have alone (ctest: install-consumers).
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

# The package file's components. PROBE_NAME configures components/ with
# COMPONENTS (comma-separated) and expects the probe's line to contain EXPECTED.
function(probe probe_name components expected)
  set(build ${WORK_DIR}/probe-${probe_name})
  file(REMOVE_RECURSE ${build})
  run(${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR}/components -B ${build}
      -DCMAKE_PREFIX_PATH=${prefix} "-DMPT_COMPONENTS=${components}")
  string(REGEX MATCH "probe: [^\n]*" line "${last_output}")
  if(NOT line STREQUAL "probe: ${expected}")
    message(FATAL_ERROR "find_package(MPT COMPONENTS ${components}) in ${probe_name}:\n"
                        "  got      ${line}\n  expected probe: ${expected}")
  endif()
  message(STATUS "${probe_name} [${components}]: ${expected}")
endfunction()

set(both "MPT::mptrt;MPT::MPTTransforms")
probe(full "" "found=1 targets=[${both}] why=[]")
probe(full "Runtime,Compiler" "found=1 targets=[${both}] why=[]")
probe(full "Compiler" "found=1 targets=[MPT::MPTTransforms] why=[]")
probe(full "Runtime" "found=1 targets=[MPT::mptrt] why=[]")

# A compiler-only install (MPT_BUILD_RUNTIME=OFF) lacks the runtime's
# targets file, a runtime-only one (runtime/ built alone) the compiler's.
set(cmakedir ${prefix}/lib/cmake/MPT)
function(hide half)
  file(GLOB files ${cmakedir}/MPT${half}Targets*.cmake)
  file(MAKE_DIRECTORY ${WORK_DIR}/hidden-${half})
  file(COPY ${files} DESTINATION ${WORK_DIR}/hidden-${half})
  file(REMOVE ${files})
endfunction()
function(restore half)
  file(GLOB files ${WORK_DIR}/hidden-${half}/*.cmake)
  file(COPY ${files} DESTINATION ${cmakedir})
endfunction()

hide(Runtime)
set(only "this MPT installation has only the compiler (built with MPT_BUILD_RUNTIME=OFF)")
probe(compiler-only "" "found=1 targets=[MPT::MPTTransforms] why=[]")
probe(compiler-only "Compiler" "found=1 targets=[MPT::MPTTransforms] why=[]")
probe(compiler-only "Runtime" "found=0 targets=[] why=[${only}]")
probe(compiler-only "Runtime,Compiler" "found=0 targets=[MPT::MPTTransforms] why=[${only}]")
restore(Runtime)

hide(Compiler)
set(only "this MPT installation has only the runtime (built from runtime/ alone)")
probe(runtime-only "" "found=1 targets=[MPT::mptrt] why=[]")
probe(runtime-only "Runtime" "found=1 targets=[MPT::mptrt] why=[]")
probe(runtime-only "Compiler" "found=0 targets=[] why=[${only}]")
restore(Compiler)
