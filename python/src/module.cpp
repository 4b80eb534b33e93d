//===- module.cpp - mpt._mpt: the C APIs of the compiler and the runtime --===//
//
// A thin nanobind layer over mpt-c/Compile.h and mptrt.h: plans and tensors
// cross it as bytes, and everything NumPy (dtypes, bf16 and fp8 decoding)
// is Python, in mpt/__init__.py. Checkpoints and the training loop are the
// runtime's training library (mptrt_checkpoint_*, mptrt_trainer_*), the
// same code mpt-train runs. Failures raise RuntimeError
// with the runtime's message; compile returns its status and message for
// mpt.compile to raise mpt.CompileError. The train_step ABI's names (entry
// points, outputs) come from mptrt/TrainStepAbi.h, for mpt/__init__.py.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_PYTHON_NO_COMPILER
#include "mpt-c/Compile.h"
#endif
#include "mptrt.h"
#include "mptrt/TrainStepAbi.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace nb = nanobind;

namespace {

[[noreturn]] void raiseLastError(const std::string &what) {
  throw std::runtime_error(what + ": " + mptrt_last_error());
}

#ifdef MPT_PYTHON_NO_COMPILER
/// A package built against a runtime-only MPT: it loads plans compiled
/// elsewhere, and says so when asked to compile.
const char *const kNoCompiler =
    "this mpt package was built against a runtime-only MPT installation (no "
    "compiler): it loads and trains plans compiled elsewhere (mpt.Plan.load); "
    "build it against a whole MPT to compile";

nb::tuple compileOnnx(const std::string &, bool, const std::string &,
                      const std::string &) {
  return nb::make_tuple(1, nb::str(kNoCompiler));
}

std::string checkOptions(bool, const std::string &) { return kNoCompiler; }
#else
/// (status, plan bytes) on success, (status, message) otherwise.
nb::tuple compileOnnx(const std::string &path, bool train,
                      const std::string &options,
                      const std::string &inputShapes) {
  void *plan = nullptr;
  size_t size = 0;
  char *error = nullptr;
  int status;
  {
    nb::gil_scoped_release release;
    status = mpt_compile_onnx_file(path.c_str(), train ? 1 : 0, options.c_str(),
                                   inputShapes.c_str(), &plan, &size, &error);
  }
  if (status != MPT_COMPILE_OK) {
    std::string message = error ? error : "compile failed";
    mpt_compile_free(error);
    return nb::make_tuple(status, nb::str(message.c_str()));
  }
  nb::bytes bytes(static_cast<const char *>(plan), size);
  mpt_compile_free(plan);
  return nb::make_tuple(status, bytes);
}

/// "" when the compiler accepts the options, else its message.
std::string checkOptions(bool train, const std::string &options) {
  char *error = nullptr;
  if (mpt_check_pipeline_options(train ? 1 : 0, options.c_str(), &error) ==
      MPT_COMPILE_OK)
    return "";
  std::string message = error ? error : "invalid options";
  mpt_compile_free(error);
  return message;
}
#endif

/// The DLPack element type of a plan dtype (mptrt_dtype); false for the
/// fp8 types, which have no code in the DLPack versions PyTorch speaks.
bool dlpackType(int dtype, nb::dlpack::dtype *out) {
  using Code = nb::dlpack::dtype_code;
  auto make = [&](Code code, uint8_t bits) {
    *out = nb::dlpack::dtype{static_cast<uint8_t>(code), bits, 1};
    return true;
  };
  switch (dtype) {
  case MPTRT_F32:
    return make(Code::Float, 32);
  case MPTRT_F16:
    return make(Code::Float, 16);
  case MPTRT_BF16:
    return make(Code::Bfloat, 16);
  case MPTRT_I64:
    return make(Code::Int, 64);
  case MPTRT_I32:
    return make(Code::Int, 32);
  case MPTRT_I1:
    return make(Code::Bool, 8);
  default:
    return false;
  }
}

/// "float64", "bfloat16", ... (DLPack's codes, as PyTorch names them).
std::string dlpackTypeName(nb::dlpack::dtype t) {
  using Code = nb::dlpack::dtype_code;
  const char *kind = nullptr;
  switch (static_cast<Code>(t.code)) {
  case Code::Int:
    kind = "int";
    break;
  case Code::UInt:
    kind = "uint";
    break;
  case Code::Float:
    kind = "float";
    break;
  case Code::Bfloat:
    kind = "bfloat";
    break;
  case Code::Bool:
    return "bool";
  default:
    return "DLPack code " + std::to_string(t.code) + ", " +
           std::to_string(t.bits) + " bits";
  }
  return kind + std::to_string(t.bits);
}

/// One loaded plan (mptrt_model).
class Model {
public:
  Model(nb::bytes plan, const std::string &backend) {
    const char *name = backend.empty() ? nullptr : backend.c_str();
    if (mptrt_model_load_memory(plan.c_str(), plan.size(), name, &model_) !=
        MPTRT_OK)
      raiseLastError("cannot load the plan");
  }
  ~Model() { mptrt_model_free(model_); }
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;

  std::string backend() const { return mptrt_model_backend(model_); }

  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (size_t i = 0, e = mptrt_entry_count(model_); i < e; ++i)
      names.emplace_back(mptrt_entry_name(model_, i));
    return names;
  }

  /// The names an entry point binds of `kind` (mptrt_binding_kind).
  std::vector<std::string> names(const std::string &entry, int kind) const {
    size_t count = 0;
    auto k = static_cast<mptrt_binding_kind>(kind);
    if (mptrt_entry_binding_count(model_, entry.c_str(), k, &count) != MPTRT_OK)
      raiseLastError("entry point '" + entry + "'");
    std::vector<std::string> names;
    for (size_t i = 0; i < count; ++i) {
      const char *name = nullptr;
      if (mptrt_entry_binding_name(model_, entry.c_str(), k, i, &name) !=
          MPTRT_OK)
        raiseLastError("entry point '" + entry + "'");
      names.emplace_back(name);
    }
    return names;
  }

  /// The roles of an entry point's outputs, in names(entry, OUTPUT) order,
  /// by name (mptrt::abi::roleName: "loss", ..., "gradient", "none").
  std::vector<std::string> roles(const std::string &entry) const {
    size_t count = 0;
    if (mptrt_entry_binding_count(model_, entry.c_str(), MPTRT_OUTPUT,
                                  &count) != MPTRT_OK)
      raiseLastError("entry point '" + entry + "'");
    std::vector<std::string> roles;
    for (size_t i = 0; i < count; ++i) {
      mptrt_output_role role;
      if (mptrt_entry_output_role(model_, entry.c_str(), i, &role) != MPTRT_OK)
        raiseLastError("entry point '" + entry + "'");
      roles.emplace_back(
          mptrt::abi::roleName(static_cast<mptrt::abi::OutputRole>(role)));
    }
    return roles;
  }

  /// (dtype code, shape) of a named tensor.
  std::tuple<int, std::vector<int64_t>> info(int kind,
                                             const std::string &name) const {
    mptrt_dtype dtype;
    size_t rank = 0;
    int64_t shape[MPTRT_MAX_RANK];
    if (mptrt_tensor_info(model_, static_cast<mptrt_binding_kind>(kind),
                          name.c_str(), &dtype, &rank, shape) != MPTRT_OK)
      raiseLastError("tensor '" + name + "'");
    return {static_cast<int>(dtype), std::vector<int64_t>(shape, shape + rank)};
  }

  /// Binds an input (kind MPTRT_INPUT) or a parameter from a C-contiguous
  /// array holding the plan's bytes.
  void bind(int kind, const std::string &name, int dtype,
            const std::vector<int64_t> &shape,
            nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu> data) {
    const size_t bytes = data.nbytes();
    auto d = static_cast<mptrt_dtype>(dtype);
    int rc = kind == MPTRT_PARAMETER
                 ? mptrt_bind_parameter(model_, name.c_str(), d, shape.data(),
                                        shape.size(), data.data(), bytes)
                 : mptrt_bind_input(model_, name.c_str(), d, shape.data(),
                                    shape.size(), data.data(), bytes);
    if (rc != MPTRT_OK)
      raiseLastError("cannot bind '" + name + "'");
  }

  /// Binds an input from a C-contiguous DLPack array (a PyTorch tensor) in
  /// the memory of the model's device: a CUDA array on "cuda", which then
  /// never leaves the GPU; host memory on "cpu". Its element type must be
  /// the plan's `dtype` (no conversion here), its shape the plan's.
  void bindDevice(const std::string &name, int dtype,
                  nb::ndarray<nb::ro, nb::c_contig> data) {
    checkDeviceArray("input '" + name + "'", dtype, data.device_type(),
                     data.dtype());
    std::vector<int64_t> shape(data.ndim());
    for (size_t i = 0; i < data.ndim(); ++i)
      shape[i] = data.shape(i);
    if (mptrt_bind_input_device(
            model_, name.c_str(), static_cast<mptrt_dtype>(dtype), shape.data(),
            shape.size(), data.data(), data.nbytes()) != MPTRT_OK)
      raiseLastError("cannot bind '" + name + "'");
  }

  /// Copies an output into a C-contiguous DLPack array of the model's
  /// device (bindDevice's rules), of the output's dtype and byte size.
  void readDevice(const std::string &name, int dtype,
                  nb::ndarray<nb::c_contig> out) {
    checkDeviceArray("output '" + name + "'", dtype, out.device_type(),
                     out.dtype());
    if (mptrt_read_output_device(model_, name.c_str(), out.data(),
                                 out.nbytes()) != MPTRT_OK)
      raiseLastError("cannot read '" + name + "'");
  }

  void run(const std::string &entry) {
    int rc;
    {
      nb::gil_scoped_release release;
      rc = mptrt_run(model_, entry.c_str());
    }
    if (rc != MPTRT_OK)
      raiseLastError("running '" + entry + "' failed");
  }

  /// The bytes of an output (kind MPTRT_OUTPUT) or a parameter.
  nb::bytes read(int kind, const std::string &name) const {
    const auto [dtype, shape] = info(kind, name);
    size_t bytes = mptrt_dtype_size(static_cast<mptrt_dtype>(dtype));
    for (int64_t d : shape)
      bytes *= static_cast<size_t>(d);
    std::string buffer(bytes, '\0');
    int rc =
        kind == MPTRT_PARAMETER
            ? mptrt_read_parameter(model_, name.c_str(), buffer.data(), bytes)
            : mptrt_read_output(model_, name.c_str(), buffer.data(), bytes);
    if (rc != MPTRT_OK)
      raiseLastError("cannot read '" + name + "'");
    return nb::bytes(buffer.data(), buffer.size());
  }

  /// Writes every parameter of `entry` and `steps` to a checkpoint.
  void saveCheckpoint(const std::string &entry, const std::string &path,
                      uint64_t steps) const {
    if (mptrt_checkpoint_save(model_, entry.c_str(), path.c_str(), steps) !=
        MPTRT_OK)
      throw std::runtime_error(mptrt_last_error());
  }

  /// Restores every parameter of `entry` from a checkpoint; its step count.
  uint64_t loadCheckpoint(const std::string &entry, const std::string &path) {
    uint64_t steps = 0;
    if (mptrt_checkpoint_load(model_, entry.c_str(), path.c_str(), &steps) !=
        MPTRT_OK)
      throw std::runtime_error(mptrt_last_error());
    return steps;
  }

  mptrt_model *handle() const { return model_; }

private:
  void checkDeviceArray(const std::string &what, int dtype, int32_t deviceType,
                        nb::dlpack::dtype given) const {
    const bool cuda = backend() == "cuda";
    const int32_t expected =
        cuda ? nb::device::cuda::value : nb::device::cpu::value;
    if (deviceType != expected)
      throw nb::value_error(
          (what + ": the array is in " +
           (deviceType == nb::device::cuda::value ? "CUDA"
                                                  : "another device's") +
           " memory, but the plan runs on '" + backend() +
           "' (bind a host array instead)")
              .c_str());
    nb::dlpack::dtype wanted;
    if (!dlpackType(dtype, &wanted))
      throw nb::type_error((what + ": the plan's " +
                            mptrt_dtype_name(static_cast<mptrt_dtype>(dtype)) +
                            " has no DLPack type; bind a host array")
                               .c_str());
    if (given != wanted)
      throw nb::type_error((what + ": the array's element type (" +
                            dlpackTypeName(given) + ") is not the plan's " +
                            mptrt_dtype_name(static_cast<mptrt_dtype>(dtype)))
                               .c_str());
  }

  mptrt_model *model_ = nullptr;
};

/// The runtime's training loop over a Model (mptrt_trainer).
class Trainer {
public:
  Trainer(Model &model, const std::string &entry, int checkFinite) {
    if (mptrt_trainer_create(model.handle(), entry.c_str(),
                             static_cast<mptrt_check_finite>(checkFinite),
                             &trainer_) != MPTRT_OK)
      throw std::runtime_error(mptrt_last_error());
  }
  ~Trainer() { mptrt_trainer_free(trainer_); }
  Trainer(const Trainer &) = delete;
  Trainer &operator=(const Trainer &) = delete;

  /// The data of an input (or, with eval, of the evaluation entry's).
  void setData(const std::string &name, int dtype,
               const std::vector<int64_t> &shape,
               nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu> data,
               bool eval) {
    auto d = static_cast<mptrt_dtype>(dtype);
    int rc =
        eval ? mptrt_trainer_set_eval_data(trainer_, name.c_str(), d,
                                           shape.data(), shape.size(),
                                           data.data(), data.nbytes())
             : mptrt_trainer_set_data(trainer_, name.c_str(), d, shape.data(),
                                      shape.size(), data.data(), data.nbytes());
    check(rc);
  }
  void setEvalEntry(const std::string &entry) {
    check(mptrt_trainer_set_eval_entry(trainer_, entry.c_str()));
  }
  void setSeed(uint64_t seed) { check(mptrt_trainer_set_seed(trainer_, seed)); }
  /// Starting parameters from a .safetensors or .npz file (mpt-train
  /// --params).
  void loadParams(const std::string &path) {
    check(mptrt_trainer_load_params(trainer_, path.c_str()));
  }
  uint64_t steps() const { return mptrt_trainer_steps(trainer_); }
  void setSteps(uint64_t steps) { mptrt_trainer_set_steps(trainer_, steps); }

  /// Runs the next step; its metrics as a dict (absent values left out)
  /// and the metrics line under "json".
  nb::dict step() {
    mptrt_step_metrics m;
    int rc;
    {
      nb::gil_scoped_release release;
      rc = mptrt_trainer_step(trainer_, &m);
    }
    check(rc);
    nb::dict d;
    d["step"] = m.step;
    auto put = [&](const char *key, uint32_t bit, double v) {
      if (m.present & bit)
        d[key] = v;
    };
    put("loss", MPTRT_METRIC_LOSS, m.loss);
    put("grad_norm", MPTRT_METRIC_GRAD_NORM, m.grad_norm);
    put("scale", MPTRT_METRIC_LOSS_SCALE, m.loss_scale);
    put("lr", MPTRT_METRIC_LR, m.lr);
    put("fp8_scale_min", MPTRT_METRIC_FP8_SCALE, m.fp8_scale_min);
    put("fp8_scale_max", MPTRT_METRIC_FP8_SCALE, m.fp8_scale_max);
    if (m.present & MPTRT_METRIC_SKIPPED)
      d["skipped"] = m.skipped != 0;
    d["time_ms"] = m.time_ms;
    if (m.present & MPTRT_METRIC_NONFINITE_CHECK) {
      const mptrt_nonfinite &f = m.first_nonfinite;
      d["first_nonfinite"] =
          f.found ? nb::object(nb::make_tuple(f.origin, f.kind, f.phase,
                                              f.result, f.kernel))
                  : nb::none();
    }
    d["json"] = std::string(mptrt_trainer_metrics_json(trainer_));
    return d;
  }

  double evaluate() {
    double loss = NAN;
    int rc;
    {
      nb::gil_scoped_release release;
      rc = mptrt_trainer_evaluate(trainer_, &loss);
    }
    check(rc);
    return loss;
  }
  std::string metricsJson() const {
    return mptrt_trainer_metrics_json(trainer_);
  }

private:
  static void check(int rc) {
    if (rc != MPTRT_OK)
      throw std::runtime_error(mptrt_last_error());
  }
  mptrt_trainer *trainer_ = nullptr;
};

} // namespace

NB_MODULE(_mpt, m) {
  m.doc() = "MPT's compiler and runtime C APIs (use the mpt package)";
  m.attr("INPUT") = static_cast<int>(MPTRT_INPUT);
  m.attr("PARAMETER") = static_cast<int>(MPTRT_PARAMETER);
  m.attr("OUTPUT") = static_cast<int>(MPTRT_OUTPUT);
  // The train_step ABI (mptrt/TrainStepAbi.h): the entry points, and the
  // names of train_step's one-value output roles in mptrt::abi::OutputRole
  // order (loss, skipped, grad_norm, loss scale, lr), as Model.roles gives
  // them.
  namespace abi = mptrt::abi;
  m.attr("TRAIN_ENTRY") = abi::kTrainEntry;
  m.attr("EVAL_ENTRY") = abi::kEvalEntry;
  nb::list outputs;
  for (abi::OutputRole role : abi::kOutputRoles)
    outputs.append(abi::roleName(role));
  m.attr("ABI_OUTPUTS") = nb::tuple(outputs);
  m.def("check_options", &checkOptions, nb::arg("train"), nb::arg("options"));
  m.def("compile_onnx", &compileOnnx, nb::arg("path"), nb::arg("train"),
        nb::arg("options"), nb::arg("input_shapes"));
  m.def("backends", []() {
    std::vector<std::string> names;
    for (size_t i = 0, e = mptrt_backend_count(); i < e; ++i)
      names.emplace_back(mptrt_backend_name(i));
    return names;
  });
  nb::class_<Model>(m, "Model")
      .def(nb::init<nb::bytes, const std::string &>(), nb::arg("plan"),
           nb::arg("backend"))
      .def("backend", &Model::backend)
      .def("entries", &Model::entries)
      .def("names", &Model::names)
      .def("roles", &Model::roles)
      .def("info", &Model::info)
      .def("bind", &Model::bind)
      .def("bind_device", &Model::bindDevice)
      .def("read_device", &Model::readDevice)
      .def("run", &Model::run)
      .def("read", &Model::read)
      .def("save_checkpoint", &Model::saveCheckpoint)
      .def("load_checkpoint", &Model::loadCheckpoint);
  m.attr("CHECK_FINITE") = nb::make_tuple("off", "on-skip", "every-kernel");
  // The model outlives its trainer (keep_alive: the trainer holds it).
  nb::class_<Trainer>(m, "Trainer")
      .def(nb::init<Model &, const std::string &, int>(), nb::arg("model"),
           nb::arg("entry"), nb::arg("check_finite"), nb::keep_alive<1, 2>())
      .def("set_data", &Trainer::setData)
      .def("set_eval_entry", &Trainer::setEvalEntry)
      .def("set_seed", &Trainer::setSeed)
      .def("load_params", &Trainer::loadParams)
      .def("steps", &Trainer::steps)
      .def("set_steps", &Trainer::setSteps)
      .def("step", &Trainer::step)
      .def("evaluate", &Trainer::evaluate)
      .def("metrics_json", &Trainer::metricsJson);
}
