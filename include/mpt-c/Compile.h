/*===- Compile.h - C API of the MPT compiler ----------------------*- C -*-===//
 *
 * One call from an ONNX file to a runtime plan (the bytes mptrt loads),
 * for embedders that cannot use the C++ API (the Python package):
 *
 *   void *plan; size_t size; char *error;
 *   if (mpt_compile_onnx_file("model.onnx", 1,
 *                             "precision=bf16 optimizer=adamw lr=3e-4",
 *                             NULL, &plan, &size, &error) != MPT_COMPILE_OK) {
 *     fprintf(stderr, "%s\n", error);
 *     mpt_compile_free(error);
 *   }
 *   ... mptrt_model_load_memory(plan, size, NULL, &model) ...
 *   mpt_compile_free(plan);
 *
 * It runs what `mpt-compile` runs: the ONNX importer, then
 * mpt::buildTrainingPipeline (train != 0) or mpt::buildInferencePipeline,
 * then the plan emitter. The pipeline options are the pass-pipeline string
 * `mpt-opt --mpt-training-pipeline="..."` takes (docs/pipelines.md).
 *
 *===----------------------------------------------------------------------===*/
#ifndef MPT_C_COMPILE_H
#define MPT_C_COMPILE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MPT_CAPI_EXPORT __attribute__((visibility("default")))
#else
#define MPT_CAPI_EXPORT
#endif

/* Results, as mpt-compile's exit codes. */
#define MPT_COMPILE_OK 0
/* The file, the options or the graph is broken, or the lowering failed. */
#define MPT_COMPILE_ERROR 1
/* The model uses ops or features MPT does not support (each is listed). */
#define MPT_COMPILE_UNSUPPORTED 2

/* Compiles the ONNX model at `onnx_path` (.onnx, or .onnxtext text syntax).
 *
 * `pipeline_options` (NULL or "" for the defaults): space-separated
 * `name=value` pipeline options, e.g. "precision=bf16 lr=3e-4
 * loss-kind=cross_entropy"; training options need `train` != 0.
 * `input_shapes` (NULL or ""): static shapes of graph inputs as
 * "name=d0,d1,...", several separated by ';' (mpt-compile --input-shape).
 *
 * On success *plan holds the plan's bytes (*plan_size of them; free with
 * mpt_compile_free) and *error is NULL. Otherwise *plan is NULL and *error
 * is a message (free with mpt_compile_free) holding every diagnostic, each
 * with its location: the file and the ONNX node where the compiler knows
 * them. `error` may be NULL. The call holds no state between calls; calls
 * from different threads are independent. */
MPT_CAPI_EXPORT int mpt_compile_onnx_file(const char *onnx_path, int train,
                                          const char *pipeline_options,
                                          const char *input_shapes, void **plan,
                                          size_t *plan_size, char **error);

/* Checks `pipeline_options` as mpt_compile_onnx_file would, without a
 * model: each value is parsed (an enum option names its allowed values in
 * the message) and the driver's checks of which options go together run.
 * MPT_COMPILE_OK, or MPT_COMPILE_ERROR with *error the message (free with
 * mpt_compile_free; `error` may be NULL). Front ends that take options long
 * before they compile (Python's mpt.torch) ask here instead of keeping
 * lists of values. */
MPT_CAPI_EXPORT int mpt_check_pipeline_options(int train,
                                               const char *pipeline_options,
                                               char **error);

/* Frees a plan or a message from mpt_compile_onnx_file; NULL is allowed. */
MPT_CAPI_EXPORT void mpt_compile_free(void *p);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MPT_C_COMPILE_H */
