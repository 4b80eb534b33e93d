//===- ModelParity.cpp - real models' forward pass against references -----===//
//
//   mpt-model-parity [--pipeline=P] [--rtol=R] [--atol=A] [--atol-of-max=M]
//                    [--expect-mismatch]
//                    <fixtures-dir> <model>[:input=d0,d1,...] ...
//
// Compiles each fixture's model.onnx (import, the optional pass pipeline P,
// --lower-to-runtime, plan), runs its forward entry point on the CPU runtime
// with the fixture's input_<name>.npy files, and compares every
// output_<name>.npy recorded with ONNX Runtime when the fixture was
// generated: |got - want| <= A + M * max|want| + R * |want|, by default at
// FP32 tolerance (R = 1e-4, A = 1e-5, M = 0). Prints the largest
// differences. With --expect-mismatch it succeeds only if every output is
// out of tolerance: the negative control of a precision experiment.
//
//===----------------------------------------------------------------------===//
#include "EndToEnd.h"
#include "mpt/Conversion/Passes.h"
#include "mpt/Transforms/Passes.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

using namespace mpt;

namespace {

struct Tolerance {
  double rtol = 1e-4, atol = 1e-5;
  /// Added to atol, times the largest |reference| of each output: a bound
  /// that scales with the output, for low-precision runs.
  double atolOfMax = 0;
};

double maxAbs(const mptrt::tools::FileTensor &t) {
  double m = 0;
  if (t.bytes.size() != static_cast<size_t>(t.numel()) * 4)
    return 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    float v;
    std::memcpy(&v, t.bytes.data() + 4 * i, 4);
    m = std::max(m, std::fabs(double(v)));
  }
  return m;
}

/// Largest absolute difference between two f32 tensors (0 if not f32).
double maxAbsDiff(const e2e::Result &got,
                  const mptrt::tools::FileTensor &want) {
  if (got.dtype != MPTRT_F32 || got.bytes.size() != want.bytes.size())
    return 0;
  double worst = 0;
  for (size_t i = 0; i < got.bytes.size() / 4; ++i) {
    float g, w;
    std::memcpy(&g, got.bytes.data() + 4 * i, 4);
    std::memcpy(&w, want.bytes.data() + 4 * i, 4);
    double d = std::fabs(double(g) - double(w));
    if (std::isnan(d))
      return d;
    worst = std::max(worst, d);
  }
  return worst;
}

/// Files in `dir` named <prefix><name>.npy, by name.
std::map<std::string, std::string> npyFiles(const std::string &dir,
                                            llvm::StringRef prefix) {
  std::map<std::string, std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::StringRef file = llvm::sys::path::filename(it->path());
    if (file.starts_with(prefix) && file.ends_with(".npy"))
      files[file.drop_front(prefix.size()).drop_back(4).str()] = it->path();
  }
  return files;
}

/// Whether every output of the model matched (or, with `expectMismatch`,
/// every output was compared and none matched).
bool checkModel(const std::string &root, llvm::StringRef spec,
                const std::string &pipeline, Tolerance tolerance,
                bool expectMismatch) {
  auto [name, shapes] = spec.split(':');
  std::string dir = root + "/" + name.str();
  OnnxImportOptions options;
  if (!shapes.empty()) {
    std::string error = parseInputShapeBinding(shapes.str(), options);
    if (!error.empty()) {
      llvm::outs() << "FAIL " << name << ": " << error << "\n";
      return false;
    }
  }
  std::vector<uint8_t> plan;
  std::string log;
  e2e::Stage stage =
      e2e::compile(dir + "/model.onnx", options, plan, log, pipeline);
  if (stage != e2e::Stage::Ok) {
    llvm::outs() << "FAIL " << name << ": " << e2e::stageName(stage) << "\n"
                 << log;
    return false;
  }
  std::map<std::string, mptrt::tools::FileTensor> inputs;
  for (const auto &[input, path] : npyFiles(dir, "input_")) {
    std::string error;
    if (!mptrt::tools::readTensorFile(path, &inputs[input], &error)) {
      llvm::outs() << "FAIL " << name << ": " << error << "\n";
      return false;
    }
  }
  std::map<std::string, e2e::Result> outputs;
  stage = e2e::run(plan, "forward", inputs, outputs, log);
  if (stage != e2e::Stage::Ok) {
    llvm::outs() << "FAIL " << name << ": " << log;
    return false;
  }
  auto references = npyFiles(dir, "output_");
  if (references.empty()) {
    llvm::outs() << "FAIL " << name << ": no output_*.npy in " << dir << "\n";
    return false;
  }
  bool allMatch = true, noneMatch = true;
  for (const auto &[output, path] : references) {
    mptrt::tools::FileTensor want;
    std::string error;
    if (!mptrt::tools::readTensorFile(path, &want, &error)) {
      llvm::outs() << "FAIL " << name << ": " << error << "\n";
      return false;
    }
    auto it = outputs.find(output);
    if (it == outputs.end()) {
      llvm::outs() << "FAIL " << name << ": the plan has no output '" << output
                   << "'\n";
      return false;
    }
    double atol = tolerance.atol + tolerance.atolOfMax * maxAbs(want);
    std::string mismatch = e2e::compare(it->second, want, tolerance.rtol, atol);
    llvm::outs() << (mismatch.empty() ? "ok   " : "FAIL ") << name << " "
                 << output << ": max |diff| "
                 << llvm::format("%.3g", maxAbsDiff(it->second, want))
                 << " over " << want.numel() << " values"
                 << (mismatch.empty() ? "" : "; " + mismatch) << "\n";
    allMatch &= mismatch.empty();
    noneMatch &= !mismatch.empty();
  }
  return expectMismatch ? noneMatch : allMatch;
}

} // namespace

int main(int argc, char **argv) {
  mpt::registerConversionPasses();
  mpt::registerMPTPasses();
  std::string pipeline;
  Tolerance tolerance;
  bool expectMismatch = false;
  int first = 1;
  for (; first < argc && llvm::StringRef(argv[first]).starts_with("--");
       ++first) {
    auto [flag, value] = llvm::StringRef(argv[first]).split('=');
    if (flag == "--pipeline")
      pipeline = value.str();
    else if (flag == "--expect-mismatch" && value.empty())
      expectMismatch = true;
    else if (flag == "--rtol" && !value.getAsDouble(tolerance.rtol))
      continue;
    else if (flag == "--atol" && !value.getAsDouble(tolerance.atol))
      continue;
    else if (flag == "--atol-of-max" && !value.getAsDouble(tolerance.atolOfMax))
      continue;
    else {
      llvm::errs() << "unknown or malformed option " << argv[first] << "\n";
      return 2;
    }
  }
  if (argc - first < 2) {
    llvm::errs() << "usage: " << argv[0]
                 << " [--pipeline=P] [--rtol=R] [--atol=A] [--atol-of-max=M] "
                    "<fixtures-dir> "
                    "<model>[:input=d0,d1,...] ...\n";
    return 2;
  }
  int failures = 0;
  for (int i = first + 1; i < argc; ++i)
    failures +=
        !checkModel(argv[first], argv[i], pipeline, tolerance, expectMismatch);
  return failures ? 1 : 0;
}
