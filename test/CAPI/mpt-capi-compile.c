/*===- mpt-capi-compile.c - the compiler's C API from the command line ---===//
 *
 *   mpt-capi-compile MODEL.onnx TRAIN "PIPELINE OPTIONS"
 *
 * Calls mpt_compile_onnx_file as a C embedder does and prints the error
 * message, if any, prefixed with "mpt-capi-compile: "; exits with the
 * call's status. The lit test Pipelines/option-checks.test runs it beside
 * mpt-compile and mpt-opt to show the three front ends reject the same
 * option sets with the same message.
 *
 *===----------------------------------------------------------------------===*/
#include "mpt-c/Compile.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s MODEL.onnx TRAIN \"PIPELINE OPTIONS\"\n",
            argv[0]);
    return 2;
  }
  void *plan = NULL;
  size_t size = 0;
  char *error = NULL;
  int status = mpt_compile_onnx_file(argv[1], atoi(argv[2]), argv[3], NULL,
                                     &plan, &size, &error);
  if (status != MPT_COMPILE_OK)
    fprintf(stderr, "mpt-capi-compile: %s\n", error ? error : "(no message)");
  else
    printf("mpt-capi-compile: %zu bytes of plan\n", size);
  mpt_compile_free(error);
  mpt_compile_free(plan);
  return status;
}
