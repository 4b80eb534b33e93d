//===- Checkpoint.cpp - write, read and check checkpoints ----------------===//
#include "mptrt/train/Checkpoint.h"

#include "mptrt/ReadFile.h"
#include "mptrt/train/Batches.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>

#include <dirent.h>
#include <fcntl.h>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace mptrt {
namespace train {

namespace {

const char kMagic[8] = {'M', 'P', 'T', 'C', 'K', 'P', 'T', '\0'};
const char kEndMagic[8] = {'M', 'P', 'T', 'C', 'K', 'E', 'N', 'D'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = 24, kTrailerBytes = 12;
constexpr uint32_t kMaxNameBytes = 1 << 20;

void putU32(std::vector<uint8_t> &out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void putU64(std::vector<uint8_t> &out, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
uint64_t getLE(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i)
    v = v << 8 | p[i];
  return v;
}

std::string systemError() { return std::strerror(errno); }

std::string parentDir(const std::string &path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool knownDtype(uint32_t code) { return code >= MPTRT_F32 && code <= MPTRT_I1; }

//===----------------------------------------------------------------------===//
// The test-only fault: MPT_TRAIN_TEST_SAVE_FAULT="K:WHERE:ACTION"
//===----------------------------------------------------------------------===//

/// Where and how the K-th checkpoint write of this process stops. WHERE is
/// a byte count N (once N bytes of the file are written and flushed; 0 is
/// right after the temporary file is created) or "renamed" (after the
/// rename, before the directory's fsync). ACTION is "kill" (SIGKILL, as a
/// crash or `kill -9` would), "pause=MS" (sleep MS milliseconds, through
/// signals, then go on) or "wait" (sleep until a signal is handled, at most
/// a minute, then go on).
struct SaveFault {
  uint64_t save = 0; // 0: no fault
  uint64_t bytes = UINT64_MAX;
  bool afterRename = false;
  bool untilSignal = false; // "wait"
  long pauseMs = -1;        // < 0: kill
};

SaveFault parseSaveFault() {
  SaveFault f;
  const char *text = std::getenv("MPT_TRAIN_TEST_SAVE_FAULT");
  if (!text)
    return f;
  const std::string s = text;
  const size_t a = s.find(':'), b = a == std::string::npos ? a : s.find(':', a + 1);
  if (b == std::string::npos) {
    std::fprintf(stderr, "mpt-train: ignoring MPT_TRAIN_TEST_SAVE_FAULT='%s'\n", text);
    return f;
  }
  const std::string where = s.substr(a + 1, b - a - 1), action = s.substr(b + 1);
  f.afterRename = where == "renamed";
  if (!f.afterRename)
    f.bytes = std::strtoull(where.c_str(), nullptr, 10);
  if (action.rfind("pause=", 0) == 0)
    f.pauseMs = std::strtol(action.c_str() + 6, nullptr, 10);
  f.untilSignal = action == "wait";
  if (f.untilSignal)
    f.pauseMs = 60000;
  f.save = std::strtoull(s.c_str(), nullptr, 10);
  return f;
}

/// Set by setSaveFaultWakeup: a "wait" fault ends once it holds nonzero.
const std::atomic<int> *saveFaultWakeup = nullptr;

const SaveFault &saveFault() {
  static const SaveFault fault = parseSaveFault();
  return fault;
}

void triggerSaveFault(const char *where) {
  const SaveFault &f = saveFault();
  if (f.pauseMs < 0)
    ::raise(SIGKILL);
  std::fprintf(stderr, "mpt-train: test fault: pausing %s in checkpoint write %llu %s\n",
               f.untilSignal ? "until a signal" : (std::to_string(f.pauseMs) + " ms").c_str(),
               static_cast<unsigned long long>(f.save), where);
  if (f.untilSignal) {
    // Polled, not one long sleep: the signal may be handled on another
    // thread, or before the sleep starts, and interrupt no sleep at all.
    const timespec slice = {0, 5 * 1000000};
    for (long waited = 0; waited < f.pauseMs; waited += 5) {
      if (saveFaultWakeup && saveFaultWakeup->load() != 0)
        return;
      ::nanosleep(&slice, nullptr);
    }
    return;
  }
  timespec left = {f.pauseMs / 1000, (f.pauseMs % 1000) * 1000000};
  while (::nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

/// Removes the temporaries `PREFIX<pid>.<n>` in `dir` that a process no
/// longer alive left: one killed between naming its complete temporary and
/// renaming it (a window of two system calls). A live process's file, say
/// another mpt-train saving to the same target, is kept; mkstemp's names
/// (no pid) are never touched.
void removeStaleTemporaries(const std::string &dir, const std::string &prefix) {
  const size_t slash = prefix.rfind('/');
  const std::string stem = prefix.substr(slash + 1);
  DIR *d = ::opendir(dir.c_str());
  if (!d)
    return;
  while (const dirent *e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.compare(0, stem.size(), stem) != 0)
      continue;
    char *end = nullptr;
    const long pid = std::strtol(name.c_str() + stem.size(), &end, 10);
    if (pid <= 0 || end == name.c_str() + stem.size() || *end != '.' ||
        std::strspn(end + 1, "0123456789") != std::strlen(end + 1) || end[1] == '\0')
      continue;
    if (pid != ::getpid() && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      ::unlink((prefix.substr(0, slash + 1) + name).c_str());
  }
  ::closedir(d);
}

} // namespace

void setSaveFaultWakeup(const std::atomic<int> *flag) { saveFaultWakeup = flag; }

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

namespace {

/// What a non-regular file is, for messages.
const char *fileKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISCHR(mode) || S_ISBLK(mode))
    return "a device";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

} // namespace

bool checkpointTarget(const std::string &path, uint64_t steps, std::string *target,
                      std::string *error) {
  std::string p = path;
  const std::string named = "checkpoint path '" + path + "'";
  struct stat st = {};
  for (int hops = 0;; ++hops) {
    if (::lstat(p.c_str(), &st) != 0) {
      if (errno != ENOENT) {
        *error =
            "cannot inspect " + named + (p == path ? "" : " ('" + p + "')") + ": " + systemError();
        return false;
      }
      *target = p; // a new file
      return true;
    }
    if (!S_ISLNK(st.st_mode))
      break;
    if (hops == 40) {
      *error = "cannot resolve " + named + ": too many levels of symbolic links";
      return false;
    }
    std::vector<char> link(4096);
    const ssize_t n = ::readlink(p.c_str(), link.data(), link.size());
    if (n < 0 || static_cast<size_t>(n) >= link.size()) {
      *error = "cannot read the symbolic link '" + p + "' (" + named + ")";
      return false;
    }
    const std::string to(link.data(), static_cast<size_t>(n));
    const size_t slash = p.rfind('/');
    p = to.front() == '/' || slash == std::string::npos ? to : p.substr(0, slash + 1) + to;
  }
  const std::string where = named + (p == path ? "" : " (the symbolic link's target '" + p + "')");
  if (!S_ISREG(st.st_mode)) {
    *error = where + " is " + fileKind(st.st_mode) +
             ": a checkpoint is written only to a regular file or a new path";
    return false;
  }
  if (st.st_size > 0) {
    uint8_t header[kHeaderBytes] = {};
    FILE *f = std::fopen(p.c_str(), "rb");
    const size_t got = f ? std::fread(header, 1, sizeof header, f) : 0;
    if (f)
      std::fclose(f);
    if (!f) {
      *error = "cannot read " + where + " to check what it holds: " + systemError();
      return false;
    }
    if (got < kHeaderBytes || std::memcmp(header, kMagic, 8) != 0) {
      *error = where + " exists and is not a checkpoint: refusing to replace it";
      return false;
    }
    const uint64_t held = getLE(header + 16, 8);
    if (held > steps) {
      *error = where + " holds a checkpoint of " + std::to_string(held) +
               " steps: refusing to replace it with one of " + std::to_string(steps) +
               " steps (the old one is kept)";
      return false;
    }
  }
  *target = p;
  return true;
}

CheckpointWriter::~CheckpointWriter() { discard(); }

void CheckpointWriter::discard() {
  if (file_) {
    std::fclose(file_);
    file_ = nullptr;
  }
  if (named_)
    ::unlink(tempPath_.c_str());
  tempPath_.clear();
  named_ = false;
}

std::string CheckpointWriter::tempLabel() const {
  return named_ ? "'" + tempPath_ + "'"
                : "the unnamed temporary file in '" + parentDir(path_) + "'";
}

bool CheckpointWriter::nameTemporary(std::string *error) {
  const std::string self = "/proc/self/fd/" + std::to_string(::fileno(file_));
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string name =
        tempPrefix_ + std::to_string(::getpid()) + "." + std::to_string(attempt);
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) {
      tempPath_ = name;
      named_ = true;
      return true;
    }
    if (errno != EEXIST)
      break;
  }
  *error = "cannot name " + tempLabel() + " (checkpoint '" + path_ + "'): " + systemError();
  discard();
  return false;
}

bool CheckpointWriter::open(const std::string &path, uint64_t steps, uint32_t count,
                            std::string *error) {
  discard();
  if (!checkpointTarget(path, steps, &path_, error))
    return false;
  // A hidden temporary beside the target, so the rename stays in one file
  // system. Where the kernel, the file system and /proc allow it, it has
  // no name until it is complete (O_TMPFILE; nameTemporary links it), so a
  // crash mid-write leaves nothing; otherwise mkstemp names it at once.
  const std::string dir = parentDir(path_);
  const size_t slash = path_.rfind('/');
  const std::string base = slash == std::string::npos ? path_ : path_.substr(slash + 1);
  tempPrefix_ = (dir == "/" ? "" : dir) + "/." + base + ".tmp.";
  static std::set<std::string> cleaned; // once per target and process
  if (cleaned.insert(tempPrefix_).second)
    removeStaleTemporaries(dir, tempPrefix_);
  int fd = -1;
#ifdef O_TMPFILE
  if (::access("/proc/self/fd", X_OK) == 0)
    fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666); // 0666 & ~umask
#endif
  if (fd < 0) {
    std::string templ = tempPrefix_ + "XXXXXX";
    std::vector<char> buffer(templ.begin(), templ.end());
    buffer.push_back('\0');
    fd = ::mkstemp(buffer.data());
    if (fd < 0) {
      *error = "cannot create a temporary file in '" + dir + "' for checkpoint '" + path_ +
               "': " + systemError();
      return false;
    }
    tempPath_ = buffer.data();
    named_ = true;
    // mkstemp creates 0600; give the checkpoint the usual 0666 & ~umask.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    (void)::fchmod(fd, 0666 & ~mask);
  }
  static uint64_t savesBegun = 0;
  faultArmed_ = saveFault().save == ++savesBegun;
  written_ = 0;
  file_ = ::fdopen(fd, "wb");
  if (!file_) {
    ::close(fd);
    *error = "cannot open " + tempLabel() + ": " + systemError();
    discard();
    return false;
  }
  fileCrc_ = 0;
  expected_ = count;
  added_ = 0;
  std::vector<uint8_t> header(kMagic, kMagic + 8);
  putU32(header, kVersion);
  putU32(header, count);
  putU64(header, steps);
  return write(header.data(), header.size(), error);
}

bool CheckpointWriter::write(const void *data, size_t n, std::string *error) {
  if (!file_) {
    *error = "checkpoint '" + path_ + "': writer is not open";
    return false;
  }
  auto put = [&](const void *p, size_t count) {
    if (count && std::fwrite(p, 1, count, file_) != count) {
      *error = "cannot write " + tempLabel() + " (checkpoint '" + path_ + "'): " + systemError();
      discard();
      return false;
    }
    written_ += count;
    return true;
  };
  // The test fault, if it falls in these bytes: write up to it, flush, stop.
  const SaveFault &fault = saveFault();
  size_t head = n;
  const bool stop =
      faultArmed_ && !fault.afterRename && fault.bytes >= written_ && fault.bytes - written_ <= n;
  if (stop)
    head = static_cast<size_t>(fault.bytes - written_);
  if (!put(data, head))
    return false;
  if (stop) {
    std::fflush(file_);
    faultArmed_ = false;
    triggerSaveFault(("after " + std::to_string(written_) + " bytes").c_str());
  }
  if (!put(static_cast<const uint8_t *>(data) + head, n - head))
    return false;
  fileCrc_ = crc32(fileCrc_, data, n);
  return true;
}

bool CheckpointWriter::add(const std::string &name, const TensorInfo &info, const void *data,
                           size_t bytes, std::string *error) {
  if (added_ >= expected_ || bytes != info.bytes() || name.size() > kMaxNameBytes) {
    *error = "checkpoint '" + path_ + "': bad tensor '" + name + "'";
    discard();
    return false;
  }
  std::vector<uint8_t> head;
  putU32(head, static_cast<uint32_t>(name.size()));
  head.insert(head.end(), name.begin(), name.end());
  putU32(head, static_cast<uint32_t>(info.dtype));
  putU32(head, static_cast<uint32_t>(info.shape.size()));
  for (int64_t d : info.shape)
    putU64(head, static_cast<uint64_t>(d));
  putU64(head, bytes);
  const uint32_t recordCrc = crc32(crc32(0, head.data(), head.size()), data, bytes);
  std::vector<uint8_t> tail;
  putU32(tail, recordCrc);
  if (!write(head.data(), head.size(), error) || !write(data, bytes, error) ||
      !write(tail.data(), tail.size(), error))
    return false;
  ++added_;
  return true;
}

bool CheckpointWriter::commit(std::string *error) {
  if (added_ != expected_) {
    *error = "checkpoint '" + path_ + "': " + std::to_string(added_) + " of " +
             std::to_string(expected_) + " tensors written";
    discard();
    return false;
  }
  std::vector<uint8_t> trailer(kEndMagic, kEndMagic + 8);
  if (!write(trailer.data(), trailer.size(), error))
    return false;
  trailer.clear();
  putU32(trailer, fileCrc_);
  if (!write(trailer.data(), trailer.size(), error))
    return false;
  auto failWith = [&](const std::string &what) {
    *error = what + " " + tempLabel() + " (checkpoint '" + path_ + "'): " + systemError();
    discard();
    return false;
  };
  if (std::fflush(file_) != 0)
    return failWith("cannot write");
  if (::fsync(::fileno(file_)) != 0)
    return failWith("cannot fsync");
  if (!named_ && !nameTemporary(error))
    return false;
  const int closed = std::fclose(file_);
  file_ = nullptr;
  if (closed != 0)
    return failWith("cannot close");
  if (std::rename(tempPath_.c_str(), path_.c_str()) != 0) {
    *error = "cannot rename '" + tempPath_ + "' to '" + path_ + "': " + systemError();
    discard();
    return false;
  }
  tempPath_.clear();
  named_ = false;
  if (faultArmed_ && saveFault().afterRename)
    triggerSaveFault("after the rename");
  // Make the rename itself durable.
  const std::string dir = parentDir(path_);
  const int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dirFd < 0) {
    *error =
        "cannot open directory '" + dir + "' to fsync checkpoint '" + path_ + "': " + systemError();
    return false;
  }
  const int synced = ::fsync(dirFd);
  const std::string syncError = synced != 0 ? systemError() : "";
  ::close(dirFd);
  if (synced != 0) {
    *error = "cannot fsync directory '" + dir + "' (checkpoint '" + path_ + "'): " + syncError;
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

bool readCheckpoint(const std::string &path, Checkpoint *out, std::string *error) {
  std::vector<uint8_t> bytes;
  if (!readRegularFile(path, &bytes, error)) {
    *error = "checkpoint: " + *error;
    return false;
  }
  return parseCheckpoint(bytes, path, out, error);
}

bool parseCheckpoint(const std::vector<uint8_t> &bytes, const std::string &path, Checkpoint *out,
                     std::string *error) {
  auto fail = [&](const std::string &why) {
    *error = "checkpoint '" + path + "': " + why;
    return false;
  };
  const uint8_t *p = bytes.data();
  const size_t size = bytes.size();
  if (size < 8 || std::memcmp(p, kMagic, 8) != 0)
    return fail("not an mpt-train checkpoint (bad magic)");
  if (size < kHeaderBytes)
    return fail("truncated: the file ends inside the header (" + std::to_string(size) + " bytes)");
  const uint32_t version = static_cast<uint32_t>(getLE(p + 8, 4));
  if (version != kVersion)
    return fail("unsupported version " + std::to_string(version) + " (this mpt-train reads " +
                std::to_string(kVersion) + ")");
  const uint32_t count = static_cast<uint32_t>(getLE(p + 12, 4));
  out->steps = getLE(p + 16, 8);
  out->tensors.clear();
  size_t at = kHeaderBytes;
  auto truncated = [&](uint32_t index, const std::string &what) {
    return fail("truncated or corrupt: tensor " + std::to_string(index) + " of " +
                std::to_string(count) + ": the file ends inside its " + what + " (" +
                std::to_string(size) + " bytes)");
  };
  for (uint32_t index = 0; index < count; ++index) {
    const size_t start = at;
    if (size - at < 4)
      return truncated(index, "name length");
    const uint64_t nameLength = getLE(p + at, 4);
    at += 4;
    if (nameLength > kMaxNameBytes)
      return fail("corrupt: tensor " + std::to_string(index) + " has a name of " +
                  std::to_string(nameLength) + " bytes");
    if (size - at < nameLength + 8)
      return truncated(index, "name, dtype or rank");
    CheckpointTensor t;
    t.name.assign(reinterpret_cast<const char *>(p + at), nameLength);
    at += nameLength;
    const std::string label = "tensor " + std::to_string(index) + " ('" + t.name + "')";
    const uint32_t dtype = static_cast<uint32_t>(getLE(p + at, 4));
    const uint32_t rank = static_cast<uint32_t>(getLE(p + at + 4, 4));
    at += 8;
    if (!knownDtype(dtype))
      return fail("corrupt: " + label + " has unknown dtype code " + std::to_string(dtype));
    if (rank > MPTRT_MAX_RANK)
      return fail("corrupt: " + label + " has rank " + std::to_string(rank));
    if (size - at < 8 * uint64_t(rank) + 8)
      return truncated(index, "shape");
    t.info.dtype = static_cast<mptrt_dtype>(dtype);
    uint64_t elements = 1;
    bool overflow = false;
    for (uint32_t d = 0; d < rank; ++d) {
      const int64_t dim = static_cast<int64_t>(getLE(p + at, 8));
      at += 8;
      if (dim < 0 || (dim > 0 && elements > (uint64_t(1) << 48) / uint64_t(dim)))
        overflow = true;
      else
        elements *= uint64_t(dim);
      t.info.shape.push_back(dim);
    }
    const uint64_t dataBytes = getLE(p + at, 8);
    at += 8;
    if (overflow || dataBytes != elements * mptrt_dtype_size(t.info.dtype))
      return fail("corrupt: " + label + " is " + describeType(t.info.dtype, t.info.shape) +
                  " but records " + std::to_string(dataBytes) + " data bytes");
    if (size - at < dataBytes + 4)
      return truncated(index, "data or checksum");
    t.bytes.assign(p + at, p + at + dataBytes);
    at += dataBytes;
    const uint32_t stored = static_cast<uint32_t>(getLE(p + at, 4));
    if (crc32(0, p + start, at - start) != stored)
      return fail("corrupt: " + label + ": checksum mismatch");
    at += 4;
    out->tensors.push_back(std::move(t));
  }
  if (size - at < kTrailerBytes)
    return fail("truncated: the file ends before the end marker (" + std::to_string(size) +
                " bytes)");
  if (std::memcmp(p + at, kEndMagic, 8) != 0)
    return fail("corrupt: no end marker after the " + std::to_string(count) + " tensors");
  if (crc32(0, p, at + 8) != static_cast<uint32_t>(getLE(p + at + 8, 4)))
    return fail("corrupt: file checksum mismatch (every tensor's own checksum matches: the "
                "header, which holds the step count, or the file checksum itself changed)");
  if (size - at != kTrailerBytes)
    return fail("corrupt: " + std::to_string(size - at - kTrailerBytes) +
                " unexpected bytes after the end");
  return true;
}

bool matchCheckpoint(const std::string &path, const Checkpoint &checkpoint,
                     const std::vector<ParameterSpec> &params, const std::string &entry,
                     std::string *error) {
  std::map<std::string, const CheckpointTensor *> byName;
  for (const CheckpointTensor &t : checkpoint.tensors)
    if (!byName.emplace(t.name, &t).second) {
      *error = "checkpoint '" + path + "' holds tensor '" + t.name + "' twice";
      return false;
    }
  for (const ParameterSpec &param : params) {
    auto it = byName.find(param.name);
    if (it == byName.end()) {
      *error = "checkpoint '" + path + "' has no tensor for parameter '" + param.name + "' (" +
               describeType(param.info.dtype, param.info.shape) + ") of entry point '" + entry +
               "': it was written for another plan";
      return false;
    }
    const TensorInfo &saved = it->second->info;
    if (saved.dtype != param.whole.dtype || saved.shape != param.whole.shape) {
      *error = "checkpoint '" + path + "': tensor '" + param.name + "' is " +
               describeType(saved.dtype, saved.shape) + ", the plan's parameter is " +
               describeType(param.whole.dtype, param.whole.shape);
      return false;
    }
    byName.erase(it);
  }
  if (!byName.empty()) {
    *error = "checkpoint '" + path + "' holds tensor '" + byName.begin()->first +
             "', which is not a parameter of entry point '" + entry +
             "': it was written for another plan";
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// A model's parameters
//===----------------------------------------------------------------------===//

bool entryParameters(const Model &model, const std::string &entry, std::vector<ParameterSpec> *out,
                     std::string *error) {
  std::vector<std::string> names;
  if (!model.entryBindings(entry, MPTRT_PARAMETER, &names)) {
    *error = mptrt::lastError();
    return false;
  }
  out->clear();
  for (const std::string &name : names) {
    ParameterSpec p{name, {}, 0, {}};
    if (!model.info(MPTRT_PARAMETER, name, &p.info) ||
        !model.parameterShard(entry, name, &p.shardWorld, &p.whole.shape)) {
      *error = mptrt::lastError();
      return false;
    }
    if (p.shardWorld > 0 && p.info.dtype != MPTRT_F32) {
      *error = "parameter '" + name + "' is sharded optimizer state of " +
               describeType(p.info.dtype, p.info.shape) + "; sharded state is f32";
      return false;
    }
    p.whole.dtype = p.info.dtype;
    if (p.shardWorld == 0)
      p.whole.shape = p.info.shape;
    out->push_back(std::move(p));
  }
  return true;
}

namespace {

/// The process's communicator, for sharded state and the writing rank.
Communicator *checkpointCommunicator(const std::string &path, std::string *error) {
  std::string why;
  Communicator *comm = processCommunicator(&why);
  if (!comm)
    *error = "checkpoint '" + path + "': no communicator for the data-parallel world: " + why;
  return comm;
}

size_t elementsOf(const std::vector<int64_t> &shape) {
  size_t n = 1;
  for (int64_t d : shape)
    n *= static_cast<size_t>(d);
  return n;
}

} // namespace

bool saveCheckpoint(const Model &model, const std::vector<ParameterSpec> &params,
                    const std::string &path, uint64_t steps, std::string *error) {
  Communicator *comm = checkpointCommunicator(path, error);
  if (!comm)
    return false;
  // A rank other than 0 only takes part in the gathers of sharded state.
  if (comm->rank() != 0 && std::none_of(params.begin(), params.end(),
                                        [](const ParameterSpec &p) { return p.shardWorld > 0; }))
    return true;
  // Every rank reads its values and takes part in each gather, in the
  // same order, before rank 0 opens the file: a failure to write there
  // cannot leave the other ranks waiting in a collective.
  std::vector<std::vector<uint8_t>> values(params.size());
  std::vector<float> gathered;
  for (size_t i = 0; i < params.size(); ++i) {
    const ParameterSpec &p = params[i];
    if (!model.readParameter(p.name, &values[i])) {
      *error = "saving checkpoint '" + path + "': " + mptrt::lastError();
      return false;
    }
    if (p.shardWorld == 0)
      continue;
    if (p.shardWorld != comm->size()) {
      *error = "saving checkpoint '" + path + "': parameter '" + p.name + "' is sharded over " +
               std::to_string(p.shardWorld) + " ranks, and this world has " +
               std::to_string(comm->size());
      return false;
    }
    const size_t shard = values[i].size() / sizeof(float);
    gathered.resize(shard * static_cast<size_t>(comm->size()));
    if (!comm->allGather(reinterpret_cast<const float *>(values[i].data()), gathered.data(), shard,
                         error)) {
      *error = "saving checkpoint '" + path + "': gathering '" + p.name + "': " + *error;
      return false;
    }
    const size_t whole = elementsOf(p.whole.shape);
    values[i].resize(whole * sizeof(float));
    std::memcpy(values[i].data(), gathered.data(), whole * sizeof(float));
  }
  if (comm->rank() != 0)
    return true;
  CheckpointWriter writer;
  if (!writer.open(path, steps, static_cast<uint32_t>(params.size()), error))
    return false;
  for (size_t i = 0; i < params.size(); ++i)
    if (!writer.add(params[i].name, params[i].whole, values[i].data(), values[i].size(), error))
      return false;
  return writer.commit(error);
}

bool readCheckpointFor(const std::string &path, const std::vector<ParameterSpec> &params,
                       const std::string &entry, Checkpoint *out, std::string *error) {
  return readCheckpoint(path, out, error) && matchCheckpoint(path, *out, params, entry, error);
}

bool restoreCheckpoint(Model &model, const Checkpoint &checkpoint,
                       const std::vector<ParameterSpec> &params, const std::string &path,
                       std::string *error) {
  std::map<std::string, const ParameterSpec *> byName;
  for (const ParameterSpec &p : params)
    byName.emplace(p.name, &p);
  Communicator *comm = nullptr;
  std::vector<uint8_t> shard;
  for (const CheckpointTensor &t : checkpoint.tensors) {
    auto it = byName.find(t.name);
    const ParameterSpec *p = it == byName.end() ? nullptr : it->second;
    const void *data = t.bytes.data();
    size_t bytes = t.bytes.size();
    TensorInfo info = t.info;
    if (p && p->shardWorld > 0) {
      // This rank's elements [r S, r S + S) of the whole tensor, zero past
      // its end: the layout of the plan's `shard` kernel.
      if (!comm && !(comm = checkpointCommunicator(path, error)))
        return false;
      if (p->shardWorld != comm->size()) {
        *error = "resuming from '" + path + "': parameter '" + p->name + "' is sharded over " +
                 std::to_string(p->shardWorld) + " ranks, and this world has " +
                 std::to_string(comm->size());
        return false;
      }
      const size_t size = elementsOf(p->info.shape) * sizeof(float);
      const size_t begin = std::min(bytes, static_cast<size_t>(comm->rank()) * size);
      const size_t count = std::min(bytes - begin, size);
      shard.assign(size, 0);
      std::memcpy(shard.data(), t.bytes.data() + begin, count);
      data = shard.data();
      bytes = size;
      info = p->info;
    }
    if (!model.bindParameter(t.name, info.dtype, info.shape, data, bytes)) {
      *error = "resuming from '" + path + "': " + mptrt::lastError();
      return false;
    }
  }
  return true;
}

} // namespace train
} // namespace mptrt
