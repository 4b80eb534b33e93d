//===- FuzzReplayMain.cpp - run saved inputs through a fuzz target -------===//
//
// A main() for a libFuzzer target built without libFuzzer: each argument is
// a file, or a directory whose regular files (recursively, in sorted order,
// except *.md notes) are each passed once to LLVMFuzzerTestOneInput. The normal test suite uses
// it to replay the crashes fuzzing found (regression inputs) and the seed
// corpora, so a fixed crash stays fixed without clang or libFuzzer.
//
// Exits 0 after the last input; a crash, a sanitizer report or a hang
// fails the test that runs it. Prints each input's path before running it
// (with --verbose) and the number of inputs at the end.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace fs = std::filesystem;

int main(int argc, char **argv) {
  bool verbose = false;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--verbose") == 0) {
      verbose = true;
      continue;
    }
    std::error_code ec;
    fs::path p(argv[i]);
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> found;
      for (const auto &e : fs::recursive_directory_iterator(p, ec))
        if (e.is_regular_file() && e.path().extension() != ".md")
          found.push_back(e.path());
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      std::fprintf(stderr, "%s: '%s' is neither a file nor a directory\n", argv[0], argv[i]);
      return 2;
    }
  }
  for (const fs::path &p : files) {
    if (verbose)
      std::fprintf(stderr, "running %s\n", p.c_str());
    std::ifstream in(p, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    if (!in.eof() && in.fail()) {
      std::fprintf(stderr, "%s: cannot read '%s'\n", argv[0], p.c_str());
      return 2;
    }
    // A copy of exactly the input's size, so a read past the end is caught
    // by a sanitizer as it is under libFuzzer.
    std::unique_ptr<uint8_t[]> copy(new uint8_t[bytes.size()]);
    std::copy(bytes.begin(), bytes.end(), copy.get());
    LLVMFuzzerTestOneInput(copy.get(), bytes.size());
  }
  std::printf("%zu inputs ran without a crash\n", files.size());
  return 0;
}
