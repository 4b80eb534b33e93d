//===- TrainingHarness.h - helpers of mpt-training-tests ----------*- C++
//-*-===//
//
// What every training test needs: a scratch directory, the real mpt-compile
// (and mpt-train) run as subprocesses, .npy fixtures, and a Trainer that
// loads a compiled training plan and runs its `train_step` entry point
// (docs/training.md) through the runtime's C++ API.
//
// Functions report failure by return value and a message; the tests turn
// that into a GoogleTest failure with the message attached.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_TEST_TRAINING_TRAININGHARNESS_H
#define MPT_TEST_TRAINING_TRAININGHARNESS_H

#include "mptrt.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mpt {
namespace training_test {

/// test/fixtures/training/<rel>.
std::string fixturePath(const std::string &rel);

/// A fresh directory under the system temp dir, removed (with everything in
/// it) on destruction unless MPT_KEEP_TEST_DIRS is set in the environment.
class TempDir {
public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::string &path() const { return path_; }
  std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

/// Sets an environment variable for its scope (and for the subprocesses
/// started in it), restoring the old value, or its absence, after. The
/// runtime reads MPTRT_CPU_NUMERICS when a model is loaded, so a
/// ScopedEnv("MPTRT_CPU_NUMERICS", "fast") around Trainer::load picks the
/// CPU's numerics mode for that model (docs/runtime.md).
class ScopedEnv {
public:
  ScopedEnv(const std::string &name, const std::string &value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  std::string name_, old_;
  bool hadOld_ = false;
};

/// Runs argv[0] with the arguments (no shell), stdout and stderr both going
/// to `logPath`. Returns the exit status, or -1 when it did not exit
/// normally (the log then says why).
int runProcess(const std::vector<std::string> &argv,
               const std::string &logPath);

/// Runs mpt-train with `base` and then `extra` as its arguments, its output
/// in `dir`/`log`. A nonzero exit is a test failure that shows the log;
/// returns whether it exited 0.
bool runTrainer(const TempDir &dir, const std::vector<std::string> &base,
                const std::vector<std::string> &extra, const std::string &log);

/// The whole contents of a file ("" if it cannot be read).
std::string readTextFile(const std::string &path);
std::vector<uint8_t> readBinaryFile(const std::string &path);

/// Runs `mpt-compile <onnx> --train <flags...> -o <plan>`. False with the
/// command line and its output in *message when it fails.
bool compileTrainingPlan(const std::string &onnx,
                         const std::vector<std::string> &flags,
                         const std::string &plan, std::string *message);

/// A host tensor (C order, little-endian elements).
struct Tensor {
  mptrt_dtype dtype = MPTRT_F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  int64_t numel() const;
  /// The elements as floats (dtype must be f32).
  std::vector<float> f32() const;
  /// `count` consecutive rows starting at row `begin` (axis 0).
  Tensor rows(int64_t begin, int64_t count) const;
  static Tensor fromF32(const std::vector<int64_t> &shape,
                        const std::vector<float> &v);
};

/// Reads a .npy file: '<f4' as f32, '<i8' as i64, '<i4' as i32.
bool loadNpy(const std::string &path, Tensor *out, std::string *message);

/// Reads a float .npy file ('<f8', or '<f4' widened) as doubles, for the
/// float64 references of test/fixtures/parity (the runtime has no f64
/// tensors, so this reader is the harness's own; version 1-3 headers, C
/// order only).
bool loadNpyF64(const std::string &path, std::vector<int64_t> *shape,
                std::vector<double> *values, std::string *message);

/// The parity fixture root: $MPT_PARITY_FIXTURES when set and non-empty
/// (e.g. the large fixtures of scripts/parity-large.sh), else the committed
/// test/fixtures/parity.
std::string parityFixtureRoot();

/// parityFixtureRoot()/<rel>.
std::string parityFixturePath(const std::string &rel);

/// max_i |got_i - want_i| / max(|want_i|, 0.1 max|want|): an elementwise
/// relative error whose floor is a tenth of the tensor's scale (infinite on
/// a size mismatch or a NaN).
double worstScaledError(const std::vector<float> &got,
                        const std::vector<float> &want);

/// ||got - ref||_2 / ||ref||_2 (||got - ref||_2 when ref is all zeros).
double relativeL2(const std::vector<double> &got,
                  const std::vector<double> &ref);

/// The outputs of one train_step run that every training plan has.
struct StepOutputs {
  float loss = 0;
  bool skipped = false;
  float gradNorm = 0;
  float lossScale = 0;
  float lr = 0;
};

/// A loaded training plan.
class Trainer {
public:
  /// Loads the plan; false with the runtime's message.
  bool load(const std::string &plan, std::string *message);

  /// Binds an input (copies it).
  bool bind(const std::string &name, const Tensor &t, std::string *message);

  /// Runs train_step once and reads the five standard outputs.
  bool step(StepOutputs *out, std::string *message);

  /// Runs eval_step once (the inputs bound) and reads its loss.
  bool evaluate(float *loss, std::string *message);
  /// An f32 output of the last run (e.g. "grad.fc1.weight").
  bool outputF32(const std::string &name, std::vector<float> *out,
                 std::string *message) const;
  /// A parameter's current value.
  bool parameterBytes(const std::string &name, std::vector<uint8_t> *out,
                      std::string *message) const;
  bool parameterF32(const std::string &name, std::vector<float> *out,
                    std::string *message) const;
  bool parameterI64(const std::string &name, int64_t *out,
                    std::string *message) const;

  /// Names train_step binds (parameters, outputs, inputs).
  std::vector<std::string> parameters() const;
  std::vector<std::string> outputs() const;
  std::vector<std::string> inputs() const;

  /// Every parameter's bytes, by name (a snapshot of the whole training state).
  bool snapshot(std::map<std::string, std::vector<uint8_t>> *out,
                std::string *message) const;

  mptrt::Model &model() { return model_; }
  const mptrt::Model &model() const { return model_; }

private:
  std::vector<std::string> bindings(mptrt_binding_kind kind) const;
  mptrt::Model model_;
};

/// The trainable parameters of a plan: names of the `grad.<p>` outputs with
/// the prefix removed (plans compiled with --emit-gradients=true).
std::vector<std::string> gradientParameters(const Trainer &t);

/// Mean of v[begin, end).
double mean(const std::vector<double> &v, size_t begin, size_t end);

/// Fraction of elements exactly equal to zero (+0 or -0).
double zeroFraction(const std::vector<float> &v);

} // namespace training_test
} // namespace mpt

#endif // MPT_TEST_TRAINING_TRAININGHARNESS_H
