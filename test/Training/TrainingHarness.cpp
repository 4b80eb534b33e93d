//===- TrainingHarness.cpp - helpers of mpt-training-tests ---------------===//
#include "TrainingHarness.h"

#include "TensorFile.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
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
  std::string pattern = (fs::temp_directory_path() / "mpt-training-XXXXXX").string();
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

int runProcess(const std::vector<std::string> &argv, const std::string &logPath) {
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
  std::ofstream(logPath, std::ios::app) << "\n[killed by signal " << WTERMSIG(status) << "]\n";
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

bool compileTrainingPlan(const std::string &onnx, const std::vector<std::string> &flags,
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
  *message = "mpt-compile failed (status " + std::to_string(rc) + "): " + cmd + "\n" +
             readTextFile(log);
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
  t.bytes.assign(bytes.begin() + begin * rowBytes, bytes.begin() + (begin + count) * rowBytes);
  return t;
}

Tensor Tensor::fromF32(const std::vector<int64_t> &shape, const std::vector<float> &v) {
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

bool Trainer::load(const std::string &plan, std::string *message) {
  if (model_.loadFile(plan))
    return true;
  *message = "loading " + plan + ": " + mptrt::lastError();
  return false;
}

bool Trainer::bind(const std::string &name, const Tensor &t, std::string *message) {
  if (model_.bindInput(name, t.dtype, t.shape, t.bytes.data(), t.bytes.size()))
    return true;
  *message = "binding input '" + name + "': " + mptrt::lastError();
  return false;
}

namespace {
template <typename T>
bool readScalar(const mptrt::Model &m, const std::string &name, T *out, std::string *message) {
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
    *message = "output 'skipped' is " + std::to_string(skipped) + ", not 0 or 1";
    return false;
  }
  out->skipped = skipped != 0;
  return true;
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
    *message = "parameter '" + name + "' is not an f32 parameter: " + mptrt::lastError();
    return false;
  }
  if (!parameterBytes(name, &bytes, message))
    return false;
  out->resize(bytes.size() / sizeof(float));
  std::memcpy(out->data(), bytes.data(), bytes.size());
  return true;
}

bool Trainer::parameterI64(const std::string &name, int64_t *out, std::string *message) const {
  mptrt::TensorInfo info;
  std::vector<uint8_t> bytes;
  if (!model_.info(MPTRT_PARAMETER, name, &info) || info.dtype != MPTRT_I64 ||
      info.numel() != 1) {
    *message = "parameter '" + name + "' is not an i64 scalar: " + mptrt::lastError();
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
std::vector<std::string> Trainer::parameters() const { return bindings(MPTRT_PARAMETER); }
std::vector<std::string> Trainer::outputs() const { return bindings(MPTRT_OUTPUT); }
std::vector<std::string> Trainer::inputs() const { return bindings(MPTRT_INPUT); }

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
