//===- TrainingHarness.cpp - helpers of mpt-training-tests ---------------===//
#include "TrainingHarness.h"

#include "TensorFile.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace mpt {
namespace training_test {

std::string fixturePath(const std::string &rel) {
  return std::string(MPT_TRAINING_FIXTURES_DIR) + "/" + rel;
}

TempDir::TempDir() {
  std::string pattern =
      (fs::temp_directory_path() / "mpt-training-XXXXXX").string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data()))
    std::abort();
  path_ = buf.data();
}

TempDir::~TempDir() {
  if (std::getenv("MPT_KEEP_TEST_DIRS"))
    return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

ScopedEnv::ScopedEnv(const std::string &name, const std::string &value)
    : name_(name) {
  if (const char *old = std::getenv(name.c_str())) {
    hadOld_ = true;
    old_ = old;
  }
  setenv(name.c_str(), value.c_str(), 1);
}

ScopedEnv::~ScopedEnv() {
  if (hadOld_)
    setenv(name_.c_str(), old_.c_str(), 1);
  else
    unsetenv(name_.c_str());
}

bool runTrainer(const TempDir &dir, const std::vector<std::string> &base,
                const std::vector<std::string> &extra, const std::string &log) {
  std::vector<std::string> argv = base;
  argv.insert(argv.end(), extra.begin(), extra.end());
  const int rc = runProcess(argv, dir.file(log));
  EXPECT_EQ(rc, 0) << readTextFile(dir.file(log));
  return rc == 0;
}

int runProcess(const std::vector<std::string> &argv,
               const std::string &logPath) {
  std::vector<char *> args;
  for (const std::string &a : argv)
    args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    int fd = open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    execv(args[0], args.data());
    std::fprintf(stderr, "execv %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return -1;
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  std::ofstream(logPath, std::ios::app)
      << "\n[killed by signal " << WTERMSIG(status) << "]\n";
  return -1;
}

std::string readTextFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<uint8_t> readBinaryFile(const std::string &path) {
  std::string s = readTextFile(path);
  return std::vector<uint8_t>(s.begin(), s.end());
}

bool compileTrainingPlan(const std::string &onnx,
                         const std::vector<std::string> &flags,
                         const std::string &plan, std::string *message) {
  std::vector<std::string> argv = {MPT_COMPILE_PATH, onnx, "--train"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("-o");
  argv.push_back(plan);
  const std::string log = plan + ".compile.log";
  const int rc = runProcess(argv, log);
  if (rc == 0)
    return true;
  std::string cmd;
  for (const std::string &a : argv)
    cmd += (cmd.empty() ? "" : " ") + a;
  *message = "mpt-compile failed (status " + std::to_string(rc) + "): " + cmd +
             "\n" + readTextFile(log);
  return false;
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::vector<float> Tensor::f32() const {
  std::vector<float> v(bytes.size() / sizeof(float));
  if (dtype == MPTRT_F32)
    std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  else
    v.clear();
  return v;
}

Tensor Tensor::rows(int64_t begin, int64_t count) const {
  Tensor t;
  t.dtype = dtype;
  t.shape = shape;
  t.shape[0] = count;
  const size_t rowBytes = shape[0] ? bytes.size() / size_t(shape[0]) : 0;
  t.bytes.assign(bytes.begin() + begin * rowBytes,
                 bytes.begin() + (begin + count) * rowBytes);
  return t;
}

Tensor Tensor::fromF32(const std::vector<int64_t> &shape,
                       const std::vector<float> &v) {
  Tensor t;
  t.dtype = MPTRT_F32;
  t.shape = shape;
  t.bytes.resize(v.size() * sizeof(float));
  std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
  return t;
}

bool loadNpy(const std::string &path, Tensor *out, std::string *message) {
  mptrt::tools::FileTensor ft;
  if (!mptrt::tools::readTensorFile(path, &ft, message))
    return false;
  if (ft.typeName == "'<f4'")
    out->dtype = MPTRT_F32;
  else if (ft.typeName == "'<i8'")
    out->dtype = MPTRT_I64;
  else if (ft.typeName == "'<i4'")
    out->dtype = MPTRT_I32;
  else {
    *message = path + ": unexpected .npy type " + ft.typeName;
    return false;
  }
  out->shape = ft.shape;
  out->bytes = std::move(ft.bytes);
  return true;
}

std::string parityFixtureRoot() {
  const char *env = std::getenv("MPT_PARITY_FIXTURES");
  return env && *env ? std::string(env) : std::string(MPT_PARITY_FIXTURES_DIR);
}

std::string parityFixturePath(const std::string &rel) {
  return parityFixtureRoot() + "/" + rel;
}

namespace {
/// The value of `key` in a .npy header dict ("'descr': '<f8', ..."), up to
/// the next top-level comma (a tuple counts as one value).
std::string npyHeaderValue(const std::string &header, const std::string &key) {
  const size_t k = header.find("'" + key + "'");
  if (k == std::string::npos)
    return "";
  size_t i = header.find(':', k);
  if (i == std::string::npos)
    return "";
  ++i;
  while (i < header.size() && header[i] == ' ')
    ++i;
  size_t j = i;
  int depth = 0;
  for (; j < header.size(); ++j) {
    if (header[j] == '(')
      ++depth;
    else if (header[j] == ')')
      --depth;
    else if ((header[j] == ',' || header[j] == '}') && depth == 0)
      break;
  }
  return header.substr(i, j - i);
}
} // namespace

bool loadNpyF64(const std::string &path, std::vector<int64_t> *shape,
                std::vector<double> *values, std::string *message) {
  const std::vector<uint8_t> file = readBinaryFile(path);
  auto fail = [&](const std::string &why) {
    *message = path + ": " + why;
    return false;
  };
  static const char kMagic[] = "\x93NUMPY";
  if (file.size() < 10 || std::memcmp(file.data(), kMagic, 6) != 0)
    return fail("not a .npy file (or unreadable)");
  const int major = file[6];
  size_t headerLen = 0, offset = 0;
  if (major == 1) {
    headerLen = size_t(file[8]) | size_t(file[9]) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (file.size() < 12)
      return fail("truncated header");
    headerLen = size_t(file[8]) | size_t(file[9]) << 8 |
                size_t(file[10]) << 16 | size_t(file[11]) << 24;
    offset = 12;
  } else {
    return fail("unsupported .npy version " + std::to_string(major));
  }
  if (offset + headerLen > file.size())
    return fail("truncated header");
  const std::string header(file.begin() + offset,
                           file.begin() + offset + headerLen);
  const std::string descr = npyHeaderValue(header, "descr");
  if (npyHeaderValue(header, "fortran_order") != "False")
    return fail("only C-order arrays are supported");
  size_t elementSize = 0;
  if (descr == "'<f8'")
    elementSize = 8;
  else if (descr == "'<f4'")
    elementSize = 4;
  else
    return fail("expected a '<f8' or '<f4' array, got descr " + descr);
  std::string dims = npyHeaderValue(header, "shape");
  if (dims.size() < 2 || dims.front() != '(' || dims.back() != ')')
    return fail("malformed shape " + dims);
  shape->clear();
  int64_t numel = 1;
  std::stringstream ss(dims.substr(1, dims.size() - 2));
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.find_first_not_of(' ') == std::string::npos)
      continue;
    shape->push_back(std::stoll(item));
    numel *= shape->back();
  }
  const size_t data = offset + headerLen;
  if (file.size() - data != size_t(numel) * elementSize)
    return fail("data size " + std::to_string(file.size() - data) +
                " does not match shape " + dims);
  values->resize(size_t(numel));
  for (int64_t i = 0; i < numel; ++i) {
    if (elementSize == 8) {
      std::memcpy(&(*values)[i], file.data() + data + 8 * i, 8);
    } else {
      float f;
      std::memcpy(&f, file.data() + data + 4 * i, 4);
      (*values)[i] = f;
    }
  }
  return true;
}

double worstScaledError(const std::vector<float> &got,
                        const std::vector<float> &want) {
  if (got.size() != want.size())
    return INFINITY;
  double maxAbs = 0, worst = 0;
  for (float v : want)
    maxAbs = std::max(maxAbs, double(std::fabs(v)));
  for (size_t i = 0; i < want.size(); ++i) {
    const double scale = std::max(double(std::fabs(want[i])), 0.1 * maxAbs);
    const double err = std::fabs(double(got[i]) - double(want[i]));
    const double ratio = scale > 0 ? err / scale : (err == 0 ? 0 : INFINITY);
    worst = std::max(worst, std::isnan(ratio) ? INFINITY : ratio);
  }
  return worst;
}

double relativeL2(const std::vector<double> &got,
                  const std::vector<double> &ref) {
  double d = 0, n = 0;
  for (size_t i = 0; i < ref.size() && i < got.size(); ++i) {
    d += (got[i] - ref[i]) * (got[i] - ref[i]);
    n += ref[i] * ref[i];
  }
  if (got.size() != ref.size())
    return INFINITY;
  return n > 0 ? std::sqrt(d / n) : std::sqrt(d);
}

bool Trainer::load(const std::string &plan, std::string *message) {
  if (model_.loadFile(plan))
    return true;
  *message = "loading " + plan + ": " + mptrt::lastError();
  return false;
}

bool Trainer::bind(const std::string &name, const Tensor &t,
                   std::string *message) {
  if (model_.bindInput(name, t.dtype, t.shape, t.bytes.data(), t.bytes.size()))
    return true;
  *message = "binding input '" + name + "': " + mptrt::lastError();
  return false;
}

namespace {
template <typename T>
bool readScalar(const mptrt::Model &m, const std::string &name, T *out,
                std::string *message) {
  std::vector<uint8_t> bytes;
  if (!m.readOutput(name, &bytes) || bytes.size() != sizeof(T)) {
    *message = "reading output '" + name + "': " + mptrt::lastError() + " (" +
               std::to_string(bytes.size()) + " bytes)";
    return false;
  }
  std::memcpy(out, bytes.data(), sizeof(T));
  return true;
}
} // namespace

bool Trainer::step(StepOutputs *out, std::string *message) {
  if (!model_.run("train_step")) {
    *message = "running train_step: " + mptrt::lastError();
    return false;
  }
  uint8_t skipped = 0;
  if (!readScalar(model_, "loss", &out->loss, message) ||
      !readScalar(model_, "skipped", &skipped, message) ||
      !readScalar(model_, "grad_norm", &out->gradNorm, message) ||
      !readScalar(model_, "loss_scale", &out->lossScale, message) ||
      !readScalar(model_, "lr", &out->lr, message))
    return false;
  if (skipped > 1) {
    *message =
        "output 'skipped' is " + std::to_string(skipped) + ", not 0 or 1";
    return false;
  }
  out->skipped = skipped != 0;
  return true;
}

bool Trainer::evaluate(float *loss, std::string *message) {
  if (!model_.run("eval_step")) {
    *message = "running eval_step: " + mptrt::lastError();
    return false;
  }
  return readScalar(model_, "loss", loss, message);
}

bool Trainer::outputF32(const std::string &name, std::vector<float> *out,
                        std::string *message) const {
  mptrt::TensorInfo info;
  if (!model_.info(MPTRT_OUTPUT, name, &info) || info.dtype != MPTRT_F32 ||
      !model_.readOutput(name, out)) {
    *message = "reading f32 output '" + name + "': " + mptrt::lastError();
    return false;
  }
  return true;
}

bool Trainer::parameterBytes(const std::string &name, std::vector<uint8_t> *out,
                             std::string *message) const {
  if (model_.readParameter(name, out))
    return true;
  *message = "reading parameter '" + name + "': " + mptrt::lastError();
  return false;
}

bool Trainer::parameterF32(const std::string &name, std::vector<float> *out,
                           std::string *message) const {
  mptrt::TensorInfo info;
  std::vector<uint8_t> bytes;
  if (!model_.info(MPTRT_PARAMETER, name, &info) || info.dtype != MPTRT_F32) {
    *message = "parameter '" + name +
               "' is not an f32 parameter: " + mptrt::lastError();
    return false;
  }
  if (!parameterBytes(name, &bytes, message))
    return false;
  out->resize(bytes.size() / sizeof(float));
  std::memcpy(out->data(), bytes.data(), bytes.size());
  return true;
}

bool Trainer::parameterI64(const std::string &name, int64_t *out,
                           std::string *message) const {
  mptrt::TensorInfo info;
  std::vector<uint8_t> bytes;
  if (!model_.info(MPTRT_PARAMETER, name, &info) || info.dtype != MPTRT_I64 ||
      info.numel() != 1) {
    *message =
        "parameter '" + name + "' is not an i64 scalar: " + mptrt::lastError();
    return false;
  }
  if (!parameterBytes(name, &bytes, message))
    return false;
  std::memcpy(out, bytes.data(), sizeof(int64_t));
  return true;
}

std::vector<std::string> Trainer::bindings(mptrt_binding_kind kind) const {
  std::vector<std::string> names;
  if (!model_.entryBindings("train_step", kind, &names))
    names.clear();
  return names;
}
std::vector<std::string> Trainer::parameters() const {
  return bindings(MPTRT_PARAMETER);
}
std::vector<std::string> Trainer::outputs() const {
  return bindings(MPTRT_OUTPUT);
}
std::vector<std::string> Trainer::inputs() const {
  return bindings(MPTRT_INPUT);
}

bool Trainer::snapshot(std::map<std::string, std::vector<uint8_t>> *out,
                       std::string *message) const {
  out->clear();
  for (const std::string &p : parameters())
    if (!parameterBytes(p, &(*out)[p], message))
      return false;
  if (out->empty()) {
    *message = "train_step binds no parameters";
    return false;
  }
  return true;
}

std::vector<std::string> gradientParameters(const Trainer &t) {
  std::vector<std::string> names;
  for (const std::string &o : t.outputs())
    if (o.rfind("grad.", 0) == 0)
      names.push_back(o.substr(5));
  return names;
}

double mean(const std::vector<double> &v, size_t begin, size_t end) {
  double s = 0;
  for (size_t i = begin; i < end; ++i)
    s += v[i];
  return end > begin ? s / double(end - begin) : 0.0;
}

double zeroFraction(const std::vector<float> &v) {
  size_t zeros = 0;
  for (float x : v)
    zeros += x == 0.0f;
  return v.empty() ? 0.0 : double(zeros) / double(v.size());
}

} // namespace training_test
} // namespace mpt
