/*===- mptrt.h - C API of the MPT runtime -------------------------*- C -*-===//
 *
 * Load an execution plan (.mptp, docs/plan-format.md), bind parameters and
 * inputs by name, run entry points by name, read outputs.
 *
 *   mptrt_model *m;
 *   if (mptrt_model_load_file("mlp.mptp", NULL, &m) != MPTRT_OK)
 *     fprintf(stderr, "%s\n", mptrt_last_error());
 *   int64_t shape[2] = {8, 784};
 *   mptrt_bind_input(m, "x", MPTRT_F32, shape, 2, x, sizeof(x));
 *   mptrt_run(m, "forward");
 *   mptrt_read_output(m, "logits", logits, sizeof(logits));
 *   mptrt_model_free(m);
 *
 * Every function that can fail returns MPTRT_OK (0) or MPTRT_ERROR and then
 * sets the calling thread's last error message. Bound data is copied; the
 * caller keeps ownership of its buffers. A model is not thread-safe: use one
 * thread at a time per model (different models are independent).
 *
 *===----------------------------------------------------------------------===*/
#ifndef MPTRT_H
#define MPTRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPTRT_OK 0
#define MPTRT_ERROR 1

/* Largest tensor rank a plan may use. */
#define MPTRT_MAX_RANK 8

/* Element types; the values are the plan format's dtype codes. */
typedef enum mptrt_dtype {
  MPTRT_F32 = 1,
  MPTRT_F16 = 2,
  MPTRT_BF16 = 3,
  MPTRT_F8E4M3FN = 4,
  MPTRT_F8E5M2 = 5,
  MPTRT_I64 = 6,
  MPTRT_I32 = 7,
  MPTRT_I1 = 8 /* one byte per element, 0 or 1 */
} mptrt_dtype;

/* The kinds of named tensors. */
typedef enum mptrt_binding_kind {
  MPTRT_INPUT = 0,
  MPTRT_PARAMETER = 1,
  MPTRT_OUTPUT = 2
} mptrt_binding_kind;

typedef struct mptrt_model mptrt_model;

/* The calling thread's most recent error message ("" if none). The pointer
 * stays valid until the next failing call on this thread. */
const char *mptrt_last_error(void);

/* "f32", "bf16", "f8E4M3FN", ...; "invalid" for an unknown value. */
const char *mptrt_dtype_name(mptrt_dtype dtype);
/* Bytes per element; 0 for an unknown value. */
size_t mptrt_dtype_size(mptrt_dtype dtype);

/* Loads, verifies and prepares a plan on `backend`: a name from
 * mptrt_backend_name ("cpu"), or NULL / "auto" for the best backend this
 * host can run. On failure *out is NULL. */
int mptrt_model_load_file(const char *path, const char *backend, mptrt_model **out);
int mptrt_model_load_memory(const void *data, size_t size, const char *backend, mptrt_model **out);
/* The same with flags. Plans carry CRC-32 checksums of their header and
 * sections, checked at load: a corrupt plan fails naming the section.
 * MPTRT_LOAD_SKIP_CHECKSUMS skips that check (the structure is still
 * verified), for speed on large plans. */
#define MPTRT_LOAD_SKIP_CHECKSUMS 1u
int mptrt_model_load_file_ex(const char *path, const char *backend, unsigned flags,
                             mptrt_model **out);
int mptrt_model_load_memory_ex(const void *data, size_t size, const char *backend, unsigned flags,
                               mptrt_model **out);
/* The backends of this build, in registration order; the name is NULL for
 * an index past the end. */
size_t mptrt_backend_count(void);
const char *mptrt_backend_name(size_t index);
/* The backend that `backend` (a name, or NULL / "auto") resolves to on
 * this host, or NULL (see mptrt_last_error) when it cannot run here. */
const char *mptrt_backend_resolve(const char *backend);
/* Sets *available to 1 if this host can run `backend`, else 0. *detail (may
 * be NULL; valid until the next call on this thread) describes the device,
 * or says why it cannot run. Fails for an unknown backend. */
int mptrt_backend_probe(const char *backend, int *available, const char **detail);
/* The kernel kinds `backend` (NULL or "auto": the best available) has. A
 * named backend's kinds are known on any host, whether or not it can run
 * there. *kind is valid until the next call on this thread. */
int mptrt_backend_kind_count(const char *backend, size_t *count);
int mptrt_backend_kind_name(const char *backend, size_t index, const char **kind);
/* Sets *has to 1 if `backend` (as above) has a kernel of kind `kind` (a
 * plan kernel kind, e.g. "gemm"), else 0. Fails for an unknown backend. */
int mptrt_backend_has_kernel(const char *backend, const char *kind, int *has);
/* Frees a model; NULL is allowed. */
void mptrt_model_free(mptrt_model *model);
/* The backend that runs the model ("cpu"). */
const char *mptrt_model_backend(const mptrt_model *model);

/* Copies `bytes` bytes of `data` into a parameter or input. The dtype and
 * shape must equal the plan's, and bytes its byte size. Parameters keep
 * their value across runs (and may be updated by runs); a parameter with an
 * initial value in the plan need not be bound. */
int mptrt_bind_parameter(mptrt_model *model, const char *name, mptrt_dtype dtype,
                         const int64_t *shape, size_t rank, const void *data, size_t bytes);
int mptrt_bind_input(mptrt_model *model, const char *name, mptrt_dtype dtype, const int64_t *shape,
                     size_t rank, const void *data, size_t bytes);

/* Like mptrt_bind_input, from memory of the model's device rather than the
 * host's: a CUDA device pointer on the "cuda" backend (any device's:
 * unified addressing finds it; a PyTorch CUDA tensor's data, through
 * DLPack), host memory on "cpu". The copy stays on the device and is
 * complete when the call returns; work still writing `data` on another
 * CUDA stream must have finished before the call. */
int mptrt_bind_input_device(mptrt_model *model, const char *name, mptrt_dtype dtype,
                            const int64_t *shape, size_t rank, const void *data, size_t bytes);

/* Runs an entry point. Every input and parameter it uses must have a value. */
int mptrt_run(mptrt_model *model, const char *entry);

/* Where a checked run first saw an inf or a NaN. The strings are owned by
 * the model. */
typedef struct mptrt_nonfinite {
  int found;          /* 1 if some kernel's result held an inf or a NaN */
  uint32_t kernel;    /* the plan's kernel id */
  uint32_t position;  /* its index in the entry point's kernel list */
  uint32_t result;    /* which of its results (output index) */
  uint64_t element;   /* flat index of the first non-finite element */
  const char *kind;   /* kernel kind ("matmul"); "" when not found */
  const char *origin; /* ONNX node (or compiler-given name); "" if unknown */
  const char *phase;  /* "forward", "backward" or "unknown" */
} mptrt_nonfinite;
/* Runs an entry point like mptrt_run, and after every kernel checks its
 * floating-point results for an inf or a NaN (reading them back to the
 * host), recording the first such kernel in *first. The run completes, so
 * it leaves the same state as mptrt_run; it is slower (one device-to-host
 * copy per kernel result). */
int mptrt_run_checked(mptrt_model *model, const char *entry, mptrt_nonfinite *first);

/* One floating-point kernel result of an observed run, read back to the
 * host and widened to float32. `values` and the strings are valid during
 * the observer's call only. */
typedef struct mptrt_result_view {
  uint32_t kernel;     /* the plan's kernel id */
  uint32_t position;   /* its index in the entry point's kernel list */
  uint32_t result;     /* which of its results (output index) */
  const char *kind;    /* kernel kind ("matmul") */
  const char *origin;  /* ONNX node (or compiler-given name); "" if unknown */
  const char *phase;   /* "forward", "backward" or "unknown" */
  const char *tensor;  /* the result tensor's name; "" for arena temporaries */
  mptrt_dtype dtype;   /* its dtype in the plan */
  const float *values; /* `count` values */
  uint64_t count;
} mptrt_result_view;
typedef void (*mptrt_result_observer)(const mptrt_result_view *view, void *user);
/* Runs an entry point like mptrt_run, handing every floating-point kernel
 * result to `observer` as soon as its kernel has run (the range statistics
 * of mpt-train --collect-ranges). Slower: one device-to-host copy per
 * result. */
int mptrt_run_observed(mptrt_model *model, const char *entry, mptrt_result_observer observer,
                       void *user);
/* Runs an entry point like mptrt_run, timing each kernel (docs/runtime.md,
 * "Profiling a run"): ms[i] gets the milliseconds of the kernel at position
 * i of the entry point's kernel list (mptrt_entry_kernel), measured by the
 * backend between kernels (the host's wall clock on the CPU, CUDA events on
 * the stream on a GPU). `count` must be mptrt_entry_kernel_count. A
 * profiled run is never recorded into a CUDA graph nor replayed from one,
 * so it measures each kernel as launched alone; it allocates only on the
 * first profiled run of a larger entry point. */
int mptrt_run_profiled(mptrt_model *model, const char *entry, double *ms, size_t count);
/* Copies an output computed by the last successful run that produced it,
 * or a parameter's current value; `bytes` must equal its byte size. */
int mptrt_read_output(const mptrt_model *model, const char *name, void *dst, size_t bytes);
int mptrt_read_parameter(const mptrt_model *model, const char *name, void *dst, size_t bytes);
/* Like mptrt_read_output, into memory of the model's device (as
 * mptrt_bind_input_device's); complete when the call returns. */
int mptrt_read_output_device(const mptrt_model *model, const char *name, void *dst, size_t bytes);

/* The dtype and shape of a named tensor; `shape` has room for
 * MPTRT_MAX_RANK values. Any of dtype, rank, shape may be NULL. */
int mptrt_tensor_info(const mptrt_model *model, mptrt_binding_kind kind, const char *name,
                      mptrt_dtype *dtype, size_t *rank, int64_t *shape);

/* Entry points and the names they bind. Names are owned by the model. */
size_t mptrt_entry_count(const mptrt_model *model);
const char *mptrt_entry_name(const mptrt_model *model, size_t index);
int mptrt_entry_binding_count(const mptrt_model *model, const char *entry, mptrt_binding_kind kind,
                              size_t *count);
int mptrt_entry_binding_name(const mptrt_model *model, const char *entry, mptrt_binding_kind kind,
                             size_t index, const char **name);
/* What an entry point's output is in the train-step ABI (docs/training.md);
 * the values are the plan's role codes (docs/plan-format.md). A consumer
 * finds train_step's loss, skipped flag, gradient norm, loss scale and
 * learning rate by these roles, not by their names. */
typedef enum mptrt_output_role {
  MPTRT_ROLE_NONE = 0,       /* no role: any other output */
  MPTRT_ROLE_LOSS = 1,       /* f32, one value: the loss, unscaled */
  MPTRT_ROLE_SKIPPED = 2,    /* i1, one value: the update was skipped */
  MPTRT_ROLE_GRAD_NORM = 3,  /* f32, one value: the gradients' global L2 norm */
  MPTRT_ROLE_LOSS_SCALE = 4, /* f32, one value: the loss scale the step used */
  MPTRT_ROLE_LR = 5,         /* f32, one value: the learning rate the step used */
  MPTRT_ROLE_GRADIENT = 6    /* a parameter's gradient (emit-gradients) */
} mptrt_output_role;
/* The role of output `index` of an entry point (the order of
 * mptrt_entry_binding_name with MPTRT_OUTPUT). */
int mptrt_entry_output_role(const mptrt_model *model, const char *entry, size_t index,
                            mptrt_output_role *role);
/* The name of the entry point's output with role `role`, one of
 * MPTRT_ROLE_LOSS to MPTRT_ROLE_LR (an entry point has each at most once);
 * NULL when it has none. The name is owned by the model. */
int mptrt_entry_output_with_role(const mptrt_model *model, const char *entry,
                                 mptrt_output_role role, const char **name);
/* The kernels an entry point runs, in order. The strings are owned by the
 * model. */
typedef struct mptrt_kernel_info {
  uint32_t kernel;    /* the plan's kernel id */
  const char *kind;   /* kernel kind ("matmul") */
  const char *origin; /* ONNX node (or compiler-given name); "" if unknown */
  const char *phase;  /* "forward", "backward" or "unknown" */
} mptrt_kernel_info;
int mptrt_entry_kernel_count(const mptrt_model *model, const char *entry, size_t *count);
int mptrt_entry_kernel(const mptrt_model *model, const char *entry, size_t position,
                       mptrt_kernel_info *info);
/* Whether parameter `name` of entry point `entry` is this rank's shard of
 * sharded optimizer state (--shard-optimizer-state, docs/distributed.md):
 * an optimizer moment that an sgd_update or adamw_update kernel updates
 * beside a `shard` kernel's result. Then *world_size is the number of ranks
 * the plan shards over and rank/shape the whole tensor's (shape has room
 * for MPTRT_MAX_RANK values); otherwise *world_size is 0. */
int mptrt_parameter_shard(const mptrt_model *model, const char *entry, const char *name,
                          int64_t *world_size, size_t *rank, int64_t *shape);
/* The arena size the plan gives an entry point. */
int mptrt_entry_arena_bytes(const mptrt_model *model, const char *entry, uint64_t *bytes);

/* Bytes of arena memory allocated so far: the sum over the entry points
 * that have run (each keeps its arena). This is the model's peak. */
uint64_t mptrt_peak_arena_bytes(const mptrt_model *model);
/* Bytes of the kernels' scratch workspace, allocated once at load: the
 * largest any kernel of the plan asks for (0 if none does). */
uint64_t mptrt_workspace_bytes(const mptrt_model *model);

/*===--- Training (mptrt/train.hpp; docs/embedding.md, "Training") -------===*
 *
 * The training loop mpt-train runs, for other languages (the Python package
 * uses it): checkpoints, and a trainer that feeds a train_step entry point
 * its batches, runs it, reads its outputs by role and reruns a skipped step
 * with a finite check. */

/* Checkpoints: every parameter of entry point `entry` (weights, optimizer
 * and loss-scaler state, step counters) and a step count, in the one
 * checkpoint format (docs/mpt-train.md, "Checkpoints"), written
 * atomically. mptrt_checkpoint_load checks every checksum and that the file
 * holds exactly the entry's parameters, with their dtypes and shapes,
 * before it binds any; `*steps` (may be NULL) gets the step count. */
int mptrt_checkpoint_save(const mptrt_model *model, const char *entry, const char *path,
                          uint64_t steps);
int mptrt_checkpoint_load(mptrt_model *model, const char *entry, const char *path, uint64_t *steps);

typedef struct mptrt_trainer mptrt_trainer;

/* When a step runs with a finite check after every kernel (mpt-train's
 * --check-finite): never, on a rerun of a skipped step, or every step. */
typedef enum mptrt_check_finite {
  MPTRT_CHECK_FINITE_OFF = 0,
  MPTRT_CHECK_FINITE_ON_SKIP = 1,
  MPTRT_CHECK_FINITE_EVERY_KERNEL = 2
} mptrt_check_finite;

/* A trainer of entry point `entry` (NULL: "train_step") of `model`, which
 * the caller keeps alive until mptrt_trainer_free and may bind and run
 * between steps (each step binds every input again). */
int mptrt_trainer_create(mptrt_model *model, const char *entry, mptrt_check_finite check,
                         mptrt_trainer **out);
void mptrt_trainer_free(mptrt_trainer *trainer);

/* The training data of input `input`: an array of shape [N, ...] for an
 * input of shape [B, ...], cut into floor(N / B) batches; step s (0-based)
 * uses batch s mod floor(N / B). Every input needs data, with as many
 * batches as the others. The bytes are copied. */
int mptrt_trainer_set_data(mptrt_trainer *trainer, const char *input, mptrt_dtype dtype,
                           const int64_t *shape, size_t rank, const void *data, size_t bytes);
/* Random data instead (mpt-train --synthetic, --synthetic-int-range). */
int mptrt_trainer_set_synthetic(mptrt_trainer *trainer, uint64_t seed, int64_t int_range);
/* Seeds training-mode dropout: the plan's train.seed parameter, if any. */
int mptrt_trainer_set_seed(mptrt_trainer *trainer, uint64_t seed);

/* Steps run so far; the next step is this + 1 and uses its batch. A
 * checkpoint carries it. */
uint64_t mptrt_trainer_steps(const mptrt_trainer *trainer);
void mptrt_trainer_set_steps(mptrt_trainer *trainer, uint64_t steps);

/* Which fields of mptrt_step_metrics hold a value. */
#define MPTRT_METRIC_LOSS 0x1u
#define MPTRT_METRIC_SKIPPED 0x2u
#define MPTRT_METRIC_GRAD_NORM 0x4u
#define MPTRT_METRIC_LOSS_SCALE 0x8u
#define MPTRT_METRIC_LR 0x10u
#define MPTRT_METRIC_FP8_SCALE 0x20u       /* fp8_scale_min and _max */
#define MPTRT_METRIC_VAL_LOSS 0x40u        /* val_loss and eval_ms */
#define MPTRT_METRIC_NONFINITE_CHECK 0x80u /* first_nonfinite and check_ms */

/* What one step reported. The strings in first_nonfinite are owned by the
 * trainer and valid until its next step. */
typedef struct mptrt_step_metrics {
  uint64_t step;    /* 1-based, counting the steps of earlier runs */
  uint32_t present; /* MPTRT_METRIC_* bits */
  double loss, grad_norm, loss_scale, lr;
  int skipped;
  double fp8_scale_min, fp8_scale_max;
  double val_loss;
  double time_ms, eval_ms, check_ms;
  mptrt_nonfinite first_nonfinite; /* found == 0: the check saw none */
} mptrt_step_metrics;

/* Runs the next step; `*out` (may be NULL) gets what it reported. */
int mptrt_trainer_step(mptrt_trainer *trainer, mptrt_step_metrics *out);
/* The last step's metrics line, exactly as mpt-train's --metrics file has
 * it, without the newline ("" before the first step). Valid until the
 * trainer's next step or evaluation. */
const char *mptrt_trainer_metrics_json(const mptrt_trainer *trainer);

/* Validation: the entry that computes the loss in inference mode (NULL:
 * "eval_step"), its data per input (cut into batches as above), and the
 * mean loss over every batch. Evaluating adds val_loss to the last step's
 * metrics (and its line). */
int mptrt_trainer_set_eval_entry(mptrt_trainer *trainer, const char *entry);
int mptrt_trainer_set_eval_data(mptrt_trainer *trainer, const char *input, mptrt_dtype dtype,
                                const int64_t *shape, size_t rank, const void *data, size_t bytes);
int mptrt_trainer_evaluate(mptrt_trainer *trainer, double *loss);

/* Checkpoints of the trainer's entry with its step count; resuming sets
 * the step count from the file. */
int mptrt_trainer_save(const mptrt_trainer *trainer, const char *path);
int mptrt_trainer_resume(mptrt_trainer *trainer, const char *path);

/* Starting parameters from a .safetensors or .npz file (mpt-train --params;
 * mptrt/train/Params.h): every tensor names a parameter of the trainer's
 * entry, every model parameter (not training state) has one, shapes equal,
 * float tensors converted to a float parameter's type. Nothing is bound
 * unless every tensor fits. */
int mptrt_trainer_load_params(mptrt_trainer *trainer, const char *path);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MPTRT_H */
