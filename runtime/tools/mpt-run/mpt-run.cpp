//===- mpt-run.cpp - run one entry point of an MPT plan ------------------===//
//
//   mpt-run model.mptp --entry forward --input x=x.npy [--param w=w.pb]
//           [--output-dir out/] [--device auto|cpu] [--warmup N] [--repeat N]
//   mpt-run --list-devices
//
// Binds each --input and --param (a .npy or ONNX TensorProto .pb file whose
// dtype and shape must match the plan's), runs the entry point --warmup
// times untimed and then --repeat times timed, writes one <output name>.npy
// per output of the last run into the output directory (characters other
// than letters, digits, '.', '_' and '-' in the name become '_'), and prints
// the wall time (min, median and mean per run when --repeat > 1) and the
// peak arena bytes. Parameters not given keep the initial values embedded
// in the plan. Exit status: 0 on success, 1 if something fails, 2 for a
// usage error.
//
//===----------------------------------------------------------------------===//
#include "TensorFile.h"
#include "ToolArgs.h"
#include "mptrt.hpp"
#include "mptrt/Numerics.h"
#include "mptrt/train/Batches.h"

#include <algorithm>
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
using mptrt::train::describeType;
using mptrt::train::joinNames;
using mptrt::train::shapeText;

namespace {

const char kUsage[] =
    "usage: mpt-run PLAN.mptp [--entry NAME] [--input NAME=FILE]... [--param NAME=FILE]...\n"
    "               [--output-dir DIR] [--device auto|NAME] [--warmup N] [--repeat N]\n"
    "               [--no-checksums]\n"
    "       mpt-run --list-devices\n"
    "FILE is a .npy or an ONNX TensorProto .pb; its dtype and shape must match the plan.\n"
    "--entry may be omitted when the plan has one entry point; --output-dir defaults to '.'.\n"
    "--warmup N runs the entry point N times untimed first (default 0); --repeat N then\n"
    "runs it N times timed (default 1) and, for N > 1, prints the min, median and mean\n"
    "wall time per run. Outputs are those of the last run.\n"
    "--list prints each entry point's inputs, parameters, outputs and arena size, and\n"
    "runs nothing. --print also prints each output's values (the first 64, in C order).\n"
    "--device picks the backend (--backend is the same option): auto (the default) takes\n"
    "the best one this host can run. --list-devices prints the backends of this build,\n"
    "whether this host can run each, and their kernel kinds, and runs nothing.\n"
    "--no-checksums skips the plan's CRC-32 checks at load (faster for large plans;\n"
    "the structure is still verified).\n";

int usage(const std::string &message) {
  std::fprintf(stderr, "mpt-run: %s\n%s", message.c_str(), kUsage);
  return 2;
}

int fail(const std::string &message) {
  std::fprintf(stderr, "mpt-run: error: %s\n", message.c_str());
  return 1;
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

/// The median of `v` (the mean of the two middle values for an even count).
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
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
  // The file's type and shape are checked against the plan's from its
  // header, before its data are read.
  auto fits = [&](const FileTensor &header, std::string *why) {
    bool dtypeOk = false;
    for (mptrt_dtype d : header.compatible)
      dtypeOk = dtypeOk || d == info.dtype;
    if (dtypeOk && header.shape == info.shape)
      return true;
    *why = std::string(what) + " '" + name + "' holds " + header.typeName + " " +
           shapeText(header.shape) + ", the plan expects " + describeType(info.dtype, info.shape);
    return false;
  };
  FileTensor tensor;
  std::string error;
  if (!mptrt::tools::readTensorFile(file, &tensor, &error, fits))
    return fail(error);
  if (info.dtype == MPTRT_I1)
    for (uint8_t &b : tensor.bytes)
      b = b != 0;
  const bool ok =
      kind == MPTRT_INPUT
          ? model.bindInput(name, info.dtype, info.shape, tensor.bytes.data(), tensor.bytes.size())
          : model.bindParameter(name, info.dtype, info.shape, tensor.bytes.data(),
                                tensor.bytes.size());
  return ok ? 0 : fail(mptrt::lastError());
}

/// Prints up to 64 values of an output, as `  [v0, v1, ...]`.
void printValues(const TensorInfo &info, const std::vector<uint8_t> &bytes) {
  namespace num = mptrt::numerics;
  const int64_t n = info.numel(), shown = std::min<int64_t>(n, 64);
  std::string line = "  [";
  for (int64_t i = 0; i < shown; ++i) {
    const uint8_t *p = bytes.data() + i * mptrt_dtype_size(info.dtype);
    char text[64];
    uint16_t h;
    float f;
    int64_t l;
    int32_t w;
    switch (info.dtype) {
    case MPTRT_F32:
      std::memcpy(&f, p, 4);
      break;
    case MPTRT_F16:
      std::memcpy(&h, p, 2);
      f = num::f16ToF32(h);
      break;
    case MPTRT_BF16:
      std::memcpy(&h, p, 2);
      f = num::bf16ToF32(h);
      break;
    case MPTRT_F8E4M3FN:
      f = num::f8E4M3FNToF32(*p);
      break;
    case MPTRT_F8E5M2:
      f = num::f8E5M2ToF32(*p);
      break;
    default:
      break;
    }
    switch (info.dtype) {
    case MPTRT_I64:
      std::memcpy(&l, p, 8);
      std::snprintf(text, sizeof(text), "%lld", (long long)l);
      break;
    case MPTRT_I32:
      std::memcpy(&w, p, 4);
      std::snprintf(text, sizeof(text), "%d", w);
      break;
    case MPTRT_I1:
      std::snprintf(text, sizeof(text), "%s", *p ? "true" : "false");
      break;
    default:
      std::snprintf(text, sizeof(text), "%.9g", f);
      break;
    }
    line += (i ? ", " : "") + std::string(text);
  }
  line += shown < n ? ", ...]" : "]";
  std::printf("%s\n", line.c_str());
}

/// Prints what each entry point binds, in plan order.
int listPlan(const Model &model, const std::vector<std::string> &entries) {
  const std::pair<mptrt_binding_kind, const char *> kinds[] = {
      {MPTRT_INPUT, "input"}, {MPTRT_PARAMETER, "param"}, {MPTRT_OUTPUT, "output"}};
  for (const std::string &entry : entries) {
    uint64_t arena = 0;
    if (mptrt_entry_arena_bytes(model.handle(), entry.c_str(), &arena) != MPTRT_OK)
      return fail(mptrt::lastError());
    std::printf("entry point '%s': arena %llu bytes\n", entry.c_str(),
                static_cast<unsigned long long>(arena));
    for (const auto &[kind, label] : kinds) {
      std::vector<std::string> names;
      std::vector<mptrt::abi::OutputRole> roles;
      if (!model.entryBindings(entry, kind, &names) ||
          (kind == MPTRT_OUTPUT && !model.entryOutputRoles(entry, &roles)))
        return fail(mptrt::lastError());
      for (size_t i = 0; i < names.size(); ++i) {
        TensorInfo info;
        if (!model.info(kind, names[i], &info))
          return fail(mptrt::lastError());
        std::string role;
        if (i < roles.size() && roles[i] != mptrt::abi::OutputRole::None)
          role = std::string(" (role ") + mptrt::abi::roleName(roles[i]) + ")";
        std::printf("  %-6s %s: %s%s\n", label, names[i].c_str(),
                    describeType(info.dtype, info.shape).c_str(), role.c_str());
      }
    }
  }
  return 0;
}

/// --list-devices: every backend of this build, whether this host can run
/// it (and why not), and how many kernel kinds it has.
int listDevices() {
  for (size_t i = 0; i < mptrt_backend_count(); ++i) {
    const char *name = mptrt_backend_name(i);
    int available = 0;
    const char *detail = "";
    if (mptrt_backend_probe(name, &available, &detail) != MPTRT_OK)
      return fail(mptrt::lastError());
    std::string line =
        std::string(name) + (available ? "  available  " : "  unavailable  ") + detail;
    size_t kinds = 0;
    if (available && mptrt_backend_kind_count(name, &kinds) == MPTRT_OK)
      line += "  (" + std::to_string(kinds) + " kernel kinds)";
    std::printf("%s\n", line.c_str());
  }
  const char *chosen = mptrt_backend_resolve("auto");
  if (!chosen)
    return fail(mptrt::lastError());
  std::printf("auto -> %s\n", chosen);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string planPath, entry, outputDir = ".", backend;
  int warmup = 0, repeat = 1;
  bool list = false, print = false;
  unsigned loadFlags = 0;
  std::vector<std::pair<std::string, std::string>> inputs, params;
  mptrt::tools::ArgWalker args(argc, argv);
  while (args.next()) {
    const std::string &arg = args.arg();
    bool ok = true;
    if (arg == "--entry")
      ok = args.value(&entry);
    else if (arg == "--input")
      ok = args.binding(&inputs);
    else if (arg == "--param")
      ok = args.binding(&params);
    else if (arg == "--output-dir")
      ok = args.value(&outputDir);
    else if (arg == "--backend" || arg == "--device")
      ok = args.value(&backend);
    else if (arg == "--list-devices")
      return listDevices();
    else if (arg == "--no-checksums")
      loadFlags |= MPTRT_LOAD_SKIP_CHECKSUMS;
    else if (arg == "--warmup" || arg == "--repeat") {
      uint64_t n = 0;
      std::string error;
      if (!args.number(arg == "--repeat" ? 1 : 0, 1000000000, &n, &error))
        return usage(error);
      (arg == "--repeat" ? repeat : warmup) = static_cast<int>(n);
    } else if (arg == "--list")
      list = true;
    else if (arg == "--print")
      print = true;
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
  if (!model.loadFile(planPath, backend.empty() ? nullptr : backend.c_str(), loadFlags))
    return fail(mptrt::lastError());
  const std::vector<std::string> entries = model.entryPoints();
  if (list)
    return listPlan(model, entries);
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
                  describeType(info.dtype, info.shape) + ")");
    }

  for (int i = 0; i < warmup; ++i)
    if (!model.run(entry))
      return fail(mptrt::lastError());
  std::vector<double> ms;
  ms.reserve(repeat);
  for (int i = 0; i < repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (!model.run(entry))
      return fail(mptrt::lastError());
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }

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
    std::printf("output %s: %s -> %s\n", name.c_str(), describeType(info.dtype, info.shape).c_str(),
                path.c_str());
    if (print)
      printValues(info, bytes);
  }
  const auto peak = static_cast<unsigned long long>(model.peakArenaBytes());
  if (repeat == 1) {
    std::printf("entry point '%s': wall time %.3f ms, peak arena %llu bytes\n", entry.c_str(),
                ms[0], peak);
  } else {
    double sum = 0;
    for (double t : ms)
      sum += t;
    std::printf("entry point '%s': wall time min %.4f ms, median %.4f ms, mean %.4f ms over %d "
                "runs (%d warmup), peak arena %llu bytes\n",
                entry.c_str(), *std::min_element(ms.begin(), ms.end()), median(ms), sum / repeat,
                repeat, warmup, peak);
  }
  return 0;
}
