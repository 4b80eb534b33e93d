//===- mpt-run.cpp - run one entry point of an MPT plan ------------------===//
//
//   mpt-run model.mptp --entry forward --input x=x.npy [--param w=w.pb]
//           [--output-dir out/] [--backend cpu]
//
// Binds each --input and --param (a .npy or ONNX TensorProto .pb file whose
// dtype and shape must match the plan's), runs the entry point, writes one
// <output name>.npy per output into the output directory (characters other
// than letters, digits, '.', '_' and '-' in the name become '_'), and prints
// the run's wall time and the peak arena bytes. Parameters not given keep
// the initial values embedded in the plan. Exit status: 0 on success, 1 if
// something fails, 2 for a usage error.
//
//===----------------------------------------------------------------------===//
#include "TensorFile.h"
#include "mptrt.hpp"

#include <cctype>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

using mptrt::Model;
using mptrt::TensorInfo;
using mptrt::tools::FileTensor;

namespace {

const char kUsage[] =
    "usage: mpt-run PLAN.mptp [--entry NAME] [--input NAME=FILE]... [--param NAME=FILE]...\n"
    "               [--output-dir DIR] [--backend cpu]\n"
    "FILE is a .npy or an ONNX TensorProto .pb; its dtype and shape must match the plan.\n"
    "--entry may be omitted when the plan has one entry point; --output-dir defaults to '.'.\n";

int usage(const std::string &message) {
  std::fprintf(stderr, "mpt-run: %s\n%s", message.c_str(), kUsage);
  return 2;
}

int fail(const std::string &message) {
  std::fprintf(stderr, "mpt-run: error: %s\n", message.c_str());
  return 1;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string describe(mptrt_dtype dtype, const std::vector<int64_t> &shape) {
  return std::string(mptrt_dtype_name(dtype)) + " " + shapeText(shape);
}

std::string joinNames(const std::vector<std::string> &names) {
  std::string s;
  for (const std::string &n : names)
    s += (s.empty() ? "'" : ", '") + n + "'";
  return s.empty() ? "none" : s;
}

/// A file name for an output: unsafe characters become '_'.
std::string fileNameFor(const std::string &name) {
  std::string s = name;
  for (char &c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
      c = '_';
  if (s.empty() || s == "." || s == "..")
    s = "_" + s;
  return s;
}

/// Reads `file` and binds it to the input or parameter `name`.
int bindFile(Model &model, const std::string &entry, mptrt_binding_kind kind,
             const std::string &name, const std::string &file) {
  const char *what = kind == MPTRT_INPUT ? "input" : "parameter";
  std::vector<std::string> names;
  if (!model.entryBindings(entry, kind, &names))
    return fail(mptrt::lastError());
  bool listed = false;
  for (const std::string &n : names)
    listed = listed || n == name;
  TensorInfo info;
  if (!listed || !model.info(kind, name, &info))
    return fail(std::string("entry point '") + entry + "' has no " + what + " named '" + name +
                "' (its " + what + "s: " + joinNames(names) + ")");
  FileTensor tensor;
  std::string error;
  if (!mptrt::tools::readTensorFile(file, &tensor, &error))
    return fail(error);
  bool dtypeOk = false;
  for (mptrt_dtype d : tensor.compatible)
    dtypeOk = dtypeOk || d == info.dtype;
  if (!dtypeOk || tensor.shape != info.shape)
    return fail(std::string(what) + " '" + name + "': " + file + " holds " + tensor.typeName +
                " " + shapeText(tensor.shape) + ", the plan expects " +
                describe(info.dtype, info.shape));
  if (info.dtype == MPTRT_I1)
    for (uint8_t &b : tensor.bytes)
      b = b != 0;
  const bool ok = kind == MPTRT_INPUT
                      ? model.bindInput(name, info.dtype, info.shape, tensor.bytes.data(),
                                        tensor.bytes.size())
                      : model.bindParameter(name, info.dtype, info.shape, tensor.bytes.data(),
                                            tensor.bytes.size());
  return ok ? 0 : fail(mptrt::lastError());
}

} // namespace

int main(int argc, char **argv) {
  std::string planPath, entry, outputDir = ".", backend;
  std::vector<std::pair<std::string, std::string>> inputs, params;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string *out) {
      if (i + 1 >= argc)
        return false;
      *out = argv[++i];
      return true;
    };
    auto binding = [&](std::vector<std::pair<std::string, std::string>> *list) {
      std::string v;
      if (!value(&v))
        return false;
      const size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
        return false;
      list->push_back({v.substr(0, eq), v.substr(eq + 1)});
      return true;
    };
    bool ok = true;
    if (arg == "--entry")
      ok = value(&entry);
    else if (arg == "--input")
      ok = binding(&inputs);
    else if (arg == "--param")
      ok = binding(&params);
    else if (arg == "--output-dir")
      ok = value(&outputDir);
    else if (arg == "--backend")
      ok = value(&backend);
    else if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg.rfind("--", 0) == 0)
      return usage("unknown option '" + arg + "'");
    else if (planPath.empty())
      planPath = arg;
    else
      return usage("more than one plan given ('" + planPath + "', '" + arg + "')");
    if (!ok)
      return usage("option '" + arg + "' needs " +
                   (arg == "--input" || arg == "--param" ? "NAME=FILE" : "a value"));
  }
  if (planPath.empty())
    return usage("no plan given");

  Model model;
  if (!model.loadFile(planPath, backend.empty() ? nullptr : backend.c_str()))
    return fail(mptrt::lastError());
  const std::vector<std::string> entries = model.entryPoints();
  if (entry.empty()) {
    if (entries.size() != 1)
      return usage("the plan has " + std::to_string(entries.size()) +
                   " entry points; choose one with --entry (" + joinNames(entries) + ")");
    entry = entries[0];
  }
  std::vector<std::string> inputNames, outputNames;
  if (!model.entryBindings(entry, MPTRT_INPUT, &inputNames) ||
      !model.entryBindings(entry, MPTRT_OUTPUT, &outputNames))
    return fail(mptrt::lastError());

  std::set<std::string> boundInputs;
  for (const auto &[name, file] : params)
    if (int rc = bindFile(model, entry, MPTRT_PARAMETER, name, file))
      return rc;
  for (const auto &[name, file] : inputs) {
    if (int rc = bindFile(model, entry, MPTRT_INPUT, name, file))
      return rc;
    boundInputs.insert(name);
  }
  for (const std::string &name : inputNames)
    if (!boundInputs.count(name)) {
      TensorInfo info;
      (void)model.info(MPTRT_INPUT, name, &info);
      return fail("entry point '" + entry + "' needs --input " + name + "=FILE (" +
                  describe(info.dtype, info.shape) + ")");
    }

  const auto start = std::chrono::steady_clock::now();
  if (!model.run(entry))
    return fail(mptrt::lastError());
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  std::error_code ec;
  std::filesystem::create_directories(outputDir, ec);
  if (ec)
    return fail("cannot create output directory '" + outputDir + "': " + ec.message());
  std::set<std::string> written;
  for (const std::string &name : outputNames) {
    TensorInfo info;
    std::vector<uint8_t> bytes;
    if (!model.info(MPTRT_OUTPUT, name, &info) || !model.readOutput(name, &bytes))
      return fail(mptrt::lastError());
    const std::string file = fileNameFor(name) + ".npy";
    if (!written.insert(file).second)
      return fail("outputs '" + name + "' and another output both map to file '" + file + "'");
    const std::string path = (std::filesystem::path(outputDir) / file).string();
    const std::vector<uint8_t> npy =
        mptrt::tools::encodeNpy(info.dtype, info.shape, bytes.data(), bytes.size());
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char *>(npy.data()), npy.size());
    if (!out)
      return fail("cannot write '" + path + "'");
    std::printf("output %s: %s -> %s\n", name.c_str(), describe(info.dtype, info.shape).c_str(),
                path.c_str());
  }
  std::printf("entry point '%s': wall time %.3f ms, peak arena %llu bytes\n", entry.c_str(), ms,
              static_cast<unsigned long long>(model.peakArenaBytes()));
  return 0;
}
