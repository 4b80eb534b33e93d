//===- EndToEnd.cpp - compile an ONNX model and run it on the CPU runtime -===//
#include "EndToEnd.h"

#include "mpt/Driver/Compile.h"
#include "mpt/Target/Plan/PlanEmitter.h"

#include "mptrt.hpp"
#include "mptrt/Numerics.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace mlir;

namespace mpt::e2e {

const char *stageName(Stage stage) {
  switch (stage) {
  case Stage::Ok:
    return "ok";
  case Stage::Unsupported:
    return "unsupported";
  case Stage::ImportFailed:
    return "import failed";
  case Stage::LoweringFailed:
    return "lowering failed";
  case Stage::RunFailed:
    return "run failed";
  }
  return "?";
}

Stage compile(const std::string &path, const OnnxImportOptions &options,
              std::vector<uint8_t> &plan, std::string &log,
              const std::string &pipeline) {
  std::unique_ptr<MLIRContext> context = driver::createContext();
  llvm::raw_string_ostream os(log);
  ScopedDiagnosticHandler handler(context.get(), [&](Diagnostic &d) {
    os << d.getLocation() << ": " << d << "\n";
    return success();
  });
  TrainingPipelineOptions pipelineOptions;
  driver::CompileRequest request;
  request.inputPath = path;
  request.alwaysOnnx = true;
  request.options = &pipelineOptions;
  request.import = options;
  request.extraPasses = pipeline;
  PassManager pm(context.get());
  llvm::SourceMgr sourceMgr;
  driver::CompileResult compiled = driver::compile(request, pm, sourceMgr);
  if (compiled.status == driver::Status::Unsupported)
    return Stage::Unsupported;
  if (compiled.status != driver::Status::Ok) {
    os << compiled.error << "\n";
    return compiled.imported ? Stage::LoweringFailed : Stage::ImportFailed;
  }
  auto bytes = emitPlan(*compiled.module);
  if (failed(bytes))
    return Stage::LoweringFailed;
  plan = std::move(*bytes);
  // MPT_DUMP_PLANS_DIR: keep every plan, named after its model and pipeline,
  // so that two compilers' plans can be compared byte for byte.
  if (const char *dir = std::getenv("MPT_DUMP_PLANS_DIR")) {
    std::string name = path + "@" + pipeline;
    for (char &c : name)
      if (c == '/' || c == ' ' || c == '{' || c == '}' || c == '=')
        c = '_';
    std::ofstream(std::string(dir) + "/" + name + ".mptp", std::ios::binary)
        .write(reinterpret_cast<const char *>(plan.data()),
               static_cast<std::streamsize>(plan.size()));
  }
  return Stage::Ok;
}

Stage run(const std::vector<uint8_t> &plan, const std::string &entry,
          const std::map<std::string, mptrt::tools::FileTensor> &inputs,
          std::map<std::string, Result> &outputs, std::string &log) {
  mptrt::Model model;
  if (!model.loadMemory(plan.data(), plan.size())) {
    log += "load: " + mptrt::lastError() + "\n";
    return Stage::RunFailed;
  }
  for (const auto &[name, tensor] : inputs) {
    mptrt::TensorInfo info;
    if (!model.info(MPTRT_INPUT, name, &info)) {
      log += "no input '" + name + "' in the plan\n";
      return Stage::RunFailed;
    }
    if (!model.bindInput(name, info.dtype, tensor.shape, tensor.bytes.data(),
                         tensor.bytes.size())) {
      log += "bind " + name + ": " + mptrt::lastError() + "\n";
      return Stage::RunFailed;
    }
  }
  if (!model.run(entry)) {
    log += "run: " + mptrt::lastError() + "\n";
    return Stage::RunFailed;
  }
  std::vector<std::string> names;
  if (!model.entryBindings(entry, MPTRT_OUTPUT, &names))
    return Stage::RunFailed;
  for (const std::string &name : names) {
    mptrt::TensorInfo info;
    Result result;
    if (!model.info(MPTRT_OUTPUT, name, &info) ||
        !model.readOutput(name, &result.bytes)) {
      log += "read " + name + ": " + mptrt::lastError() + "\n";
      return Stage::RunFailed;
    }
    result.dtype = info.dtype;
    result.shape = info.shape;
    outputs[name] = std::move(result);
  }
  return Stage::Ok;
}

namespace {

/// Element `i` of a float tensor as a double.
double floatAt(mptrt_dtype dtype, const uint8_t *data, int64_t i) {
  namespace num = mptrt::numerics;
  switch (dtype) {
  case MPTRT_F32: {
    float v;
    std::memcpy(&v, data + 4 * i, 4);
    return v;
  }
  case MPTRT_F16: {
    uint16_t v;
    std::memcpy(&v, data + 2 * i, 2);
    return num::f16ToF32(v);
  }
  case MPTRT_BF16: {
    uint16_t v;
    std::memcpy(&v, data + 2 * i, 2);
    return num::bf16ToF32(v);
  }
  case MPTRT_F8E4M3FN:
    return num::f8E4M3FNToF32(data[i]);
  case MPTRT_F8E5M2:
    return num::f8E5M2ToF32(data[i]);
  default:
    return 0;
  }
}

int64_t intAt(mptrt_dtype dtype, const uint8_t *data, int64_t i) {
  switch (dtype) {
  case MPTRT_I64: {
    int64_t v;
    std::memcpy(&v, data + 8 * i, 8);
    return v;
  }
  case MPTRT_I32: {
    int32_t v;
    std::memcpy(&v, data + 4 * i, 4);
    return v;
  }
  default:
    return data[i];
  }
}

bool isFloat(mptrt_dtype d) {
  return d == MPTRT_F32 || d == MPTRT_F16 || d == MPTRT_BF16 ||
         d == MPTRT_F8E4M3FN || d == MPTRT_F8E5M2;
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

} // namespace

std::string compare(const Result &got, const mptrt::tools::FileTensor &want,
                    double rtol, double atol) {
  if (got.shape != want.shape)
    return "shape " + shapeString(got.shape) + ", expected " +
           shapeString(want.shape);
  bool compatible = false;
  for (mptrt_dtype d : want.compatible)
    compatible |= d == got.dtype;
  if (!compatible)
    return std::string("element type ") + mptrt_dtype_name(got.dtype) +
           ", expected " + want.typeName;
  int64_t n = want.numel();
  for (int64_t i = 0; i < n; ++i) {
    std::ostringstream why;
    if (isFloat(got.dtype)) {
      double g = floatAt(got.dtype, got.bytes.data(), i);
      double w = floatAt(got.dtype, want.bytes.data(), i);
      bool ok =
          (std::isnan(g) && std::isnan(w)) ||
          (std::isinf(w) ? g == w
                         : std::fabs(g - w) <= atol + rtol * std::fabs(w));
      if (ok)
        continue;
      why.precision(9);
      why << "element " << i << ": " << g << ", expected " << w;
    } else {
      int64_t g = intAt(got.dtype, got.bytes.data(), i);
      int64_t w = intAt(got.dtype, want.bytes.data(), i);
      if (g == w)
        continue;
      why << "element " << i << ": " << g << ", expected " << w;
    }
    return why.str();
  }
  return "";
}

} // namespace mpt::e2e
