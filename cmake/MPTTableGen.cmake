# mpt_tablegen(ofn backend-args...): runs our own tools/mpt-tblgen at build
# time, as mlir_tablegen runs mlir-tblgen: on ${LLVM_TARGET_DEFINITIONS},
# with the directory's include paths, writing ${ofn} in the current binary
# directory and adding it to TABLEGEN_OUTPUT (for add_public_tablegen_target).
# The output is rewritten when the .td files it reads or mpt-tblgen change.
set(MPT_TABLEGEN_EXE $<TARGET_FILE:mpt-tblgen>)
set(MPT_TABLEGEN_TARGET mpt-tblgen)

function(mpt_tablegen ofn)
  tablegen(MPT ${ofn} ${ARGN})
  set(TABLEGEN_OUTPUT ${TABLEGEN_OUTPUT} ${CMAKE_CURRENT_BINARY_DIR}/${ofn}
      PARENT_SCOPE)
endfunction()
