//===- OutputFile.cpp - outputs that replace a file only when complete ---===//
#include "mpt/Driver/OutputFile.h"

#include "llvm/Support/Path.h"

#include <unistd.h>

using namespace mpt::driver;
namespace fs = llvm::sys::fs;

std::unique_ptr<OutputFile> OutputFile::open(llvm::StringRef path,
                                             std::string *error) {
  std::unique_ptr<OutputFile> out(new OutputFile());
  out->path = path.str();
  if (path == "-") {
    out->stream = &llvm::outs();
    return out;
  }
  auto fail = [&](const llvm::Twine &why) {
    *error = ("cannot write '" + path + "': " + why).str();
    return nullptr;
  };
  // A link is written through: its target, existing or not, is what gets
  // replaced (links to links followed, at most 40).
  llvm::SmallString<256> target(path);
  for (int hops = 0; fs::is_symlink_file(target); ++hops) {
    char buffer[4096];
    const ssize_t n = ::readlink(target.c_str(), buffer, sizeof(buffer));
    if (hops == 40 || n <= 0 || n == static_cast<ssize_t>(sizeof(buffer)))
      return fail("it is a symbolic link that does not resolve");
    llvm::StringRef link(buffer, static_cast<size_t>(n));
    llvm::SmallString<256> next;
    if (llvm::sys::path::is_relative(link))
      next = llvm::sys::path::parent_path(target);
    llvm::sys::path::append(next, link);
    target = next;
  }
  out->target = std::string(target);
  fs::file_status status;
  if (!fs::status(target, status) &&
      status.type() != fs::file_type::regular_file) {
    if (status.type() != fs::file_type::character_file)
      return fail("it is not a regular file");
    // /dev/null and its like: written in place, never replaced.
    std::error_code ec;
    out->owned =
        std::make_unique<llvm::raw_fd_ostream>(target, ec, fs::OF_None);
    if (ec)
      return fail(ec.message());
    out->stream = out->owned.get();
    return out;
  }
  llvm::SmallString<256> model(target);
  model += ".tmp-%%%%%%%%";
  llvm::Expected<fs::TempFile> temp = fs::TempFile::create(model);
  if (!temp)
    return fail(llvm::toString(temp.takeError()));
  out->temp.emplace(std::move(*temp));
  out->owned = std::make_unique<llvm::raw_fd_ostream>(out->temp->FD,
                                                      /*shouldClose=*/false);
  out->stream = out->owned.get();
  return out;
}

bool OutputFile::commit(std::string *error) {
  stream->flush();
  if (owned && owned->has_error()) {
    *error = "cannot write '" + path + "': " + owned->error().message();
    owned->clear_error();
    return false;
  }
  if (!temp)
    return true;
  owned.reset();
  if (llvm::Error e = temp->keep(target)) {
    *error = "cannot write '" + path + "': " + llvm::toString(std::move(e));
    return false;
  }
  temp.reset();
  return true;
}

OutputFile::~OutputFile() {
  owned.reset();
  if (temp)
    llvm::consumeError(temp->discard());
}
