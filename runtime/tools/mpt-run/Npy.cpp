//===- Npy.cpp - read and write .npy files -------------------------------===//
//
// A .npy file is the magic "\x93NUMPY", a major and minor version byte, the
// header length (u16 for version 1, u32 for versions 2 and 3), and a header
// that is a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a newline; the elements follow.
//
//===----------------------------------------------------------------------===//
#include "TensorFile.h"

#include <cctype>
#include <cstring>
#include <map>
#include <utility>

namespace mptrt {
namespace tools {

namespace {

const char kMagic[] = "\x93NUMPY";

/// A value in the header dict: a string, a bool or a tuple of ints.
struct HeaderValue {
  enum Kind { String, Bool, Tuple } kind = String;
  std::string s;
  bool b = false;
  std::vector<int64_t> ints;
};

/// Parses the restricted Python literal grammar of .npy headers.
class HeaderParser {
public:
  explicit HeaderParser(const std::string &text) : text(text) {}

  bool parse(std::map<std::string, HeaderValue> *out, std::string *error) {
    skipSpace();
    if (!eat('{'))
      return fail(error, "header is not a dict");
    while (true) {
      skipSpace();
      if (eat('}'))
        break;
      std::string key;
      if (!parseString(&key))
        return fail(error, "expected a quoted key");
      skipSpace();
      if (!eat(':'))
        return fail(error, "expected ':' after '" + key + "'");
      skipSpace();
      HeaderValue value;
      if (!parseValue(&value))
        return fail(error,
                    "unsupported value for '" + key + "' (structured dtypes are not supported)");
      (*out)[key] = value;
      skipSpace();
      if (eat(','))
        continue;
      skipSpace();
      if (!eat('}'))
        return fail(error, "expected ',' or '}'");
      break;
    }
    return true;
  }

private:
  static bool fail(std::string *error, const std::string &m) {
    *error = "malformed .npy header: " + m;
    return false;
  }
  void skipSpace() {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }
  bool eat(char c) {
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool eatWord(const char *w) {
    size_t n = std::strlen(w);
    if (text.compare(pos, n, w) == 0) {
      pos += n;
      return true;
    }
    return false;
  }
  bool parseString(std::string *s) {
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return false;
    const char quote = text[pos++];
    size_t end = text.find(quote, pos);
    if (end == std::string::npos)
      return false;
    *s = text.substr(pos, end - pos);
    pos = end + 1;
    return true;
  }
  bool parseValue(HeaderValue *v) {
    if (parseString(&v->s)) {
      v->kind = HeaderValue::String;
      return true;
    }
    if (eatWord("True")) {
      v->kind = HeaderValue::Bool;
      v->b = true;
      return true;
    }
    if (eatWord("False")) {
      v->kind = HeaderValue::Bool;
      v->b = false;
      return true;
    }
    if (!eat('('))
      return false;
    v->kind = HeaderValue::Tuple;
    while (true) {
      skipSpace();
      if (eat(')'))
        return true;
      size_t start = pos;
      while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])))
        ++pos;
      if (pos == start || pos - start > 15)
        return false; // not a (reasonable) non-negative integer
      v->ints.push_back(std::stoll(text.substr(start, pos - start)));
      // Python 2 wrote 3L.
      eat('L');
      skipSpace();
      if (eat(','))
        continue;
      skipSpace();
      if (!eat(')'))
        return false;
      return true;
    }
  }

  const std::string &text;
  size_t pos = 0;
};

/// What the bytes of a descr can be bound as.
bool descrTypes(const std::string &descr, std::vector<mptrt_dtype> *types, size_t *size) {
  // Byte order: '<' little, '|' not applicable, '=' native (little here).
  if (descr.size() < 3 || (descr[0] != '<' && descr[0] != '|' && descr[0] != '='))
    return false;
  const std::string t = descr.substr(1);
  if (t == "f4") {
    *types = {MPTRT_F32};
    *size = 4;
    return true;
  }
  if (t == "f2") {
    *types = {MPTRT_F16};
    *size = 2;
    return true;
  }
  if (t == "i8") {
    *types = {MPTRT_I64};
    *size = 8;
    return true;
  }
  if (t == "i4") {
    *types = {MPTRT_I32};
    *size = 4;
    return true;
  }
  if (t == "b1") {
    *types = {MPTRT_I1};
    *size = 1;
    return true;
  }
  if (t == "u1") {
    *types = {MPTRT_I1, MPTRT_F8E4M3FN, MPTRT_F8E5M2};
    *size = 1;
    return true;
  }
  if (t == "V1") {
    *types = {MPTRT_F8E4M3FN, MPTRT_F8E5M2};
    *size = 1;
    return true;
  }
  if (t == "V2" || t == "u2") {
    *types = {MPTRT_BF16, MPTRT_F16};
    *size = 2;
    return true;
  }
  return false;
}

} // namespace

bool parseNpyHeader(const uint8_t *prefix, size_t prefixSize, uint64_t fileSize, FileTensor *out,
                    uint64_t *dataOffset, uint64_t *needed, std::string *error) {
  *needed = 0;
  if (prefixSize < 10 || std::memcmp(prefix, kMagic, 6) != 0) {
    *error = "not a .npy file (bad magic)";
    return false;
  }
  const uint8_t major = prefix[6];
  uint64_t headerLen, headerStart;
  if (major == 1) {
    headerLen = prefix[8] | (uint64_t(prefix[9]) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (prefixSize < 12) {
      *error = "truncated .npy header";
      return false;
    }
    headerLen = prefix[8] | (uint64_t(prefix[9]) << 8) | (uint64_t(prefix[10]) << 16) |
                (uint64_t(prefix[11]) << 24);
    headerStart = 12;
  } else {
    *error = "unsupported .npy format version " + std::to_string(major);
    return false;
  }
  if (headerLen > fileSize - headerStart) {
    *error = "truncated .npy header";
    return false;
  }
  if (headerLen > kMaxNpyHeaderBytes) {
    *error = ".npy header of " + std::to_string(headerLen) + " bytes (numpy writes a few " +
             "hundred; the limit is " + std::to_string(kMaxNpyHeaderBytes) + ")";
    return false;
  }
  if (headerStart + headerLen > prefixSize) {
    *needed = headerStart + headerLen;
    *error = "the .npy header needs " + std::to_string(*needed) + " bytes";
    return false;
  }
  const std::string header(reinterpret_cast<const char *>(prefix + headerStart), headerLen);
  std::map<std::string, HeaderValue> dict;
  if (!HeaderParser(header).parse(&dict, error))
    return false;
  auto descr = dict.find("descr"), fortran = dict.find("fortran_order"), shape = dict.find("shape");
  if (descr == dict.end() || shape == dict.end() || fortran == dict.end() ||
      descr->second.kind != HeaderValue::String || shape->second.kind != HeaderValue::Tuple ||
      fortran->second.kind != HeaderValue::Bool) {
    *error = "malformed .npy header: needs 'descr', 'fortran_order' and 'shape'";
    return false;
  }
  if (fortran->second.b) {
    *error = "Fortran-order .npy arrays are not supported (save a C-contiguous array)";
    return false;
  }
  size_t elementSize;
  if (!descrTypes(descr->second.s, &out->compatible, &elementSize)) {
    *error = "unsupported .npy dtype '" + descr->second.s +
             "' (supported: <f4 <f2 <i8 <i4 |b1 |u1, and <V2 / <u2 for bf16, |V1 for fp8; "
             "little-endian only)";
    return false;
  }
  out->typeName = "'" + descr->second.s + "'";
  out->shape = shape->second.ints;
  uint64_t count = 1;
  for (int64_t d : out->shape) {
    if (d != 0 && count > (uint64_t{1} << 46) / uint64_t(d)) {
      *error = ".npy shape is too large";
      return false;
    }
    count *= uint64_t(d);
  }
  const uint64_t dataBytes = count * elementSize;
  const uint64_t available = fileSize - headerStart - headerLen;
  if (available != dataBytes) {
    *error = ".npy data has " + std::to_string(available) +
             " bytes, the header's shape and "
             "dtype need " +
             std::to_string(dataBytes);
    return false;
  }
  *dataOffset = headerStart + headerLen;
  return true;
}

bool parseNpy(std::vector<uint8_t> file, FileTensor *out, std::string *error) {
  uint64_t offset, needed;
  if (!parseNpyHeader(file.data(), file.size(), file.size(), out, &offset, &needed, error))
    return false;
  file.erase(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(offset));
  out->bytes = std::move(file);
  return true;
}

const char *npyDescr(mptrt_dtype dtype) {
  switch (dtype) {
  case MPTRT_F32:
    return "<f4";
  case MPTRT_F16:
    return "<f2";
  case MPTRT_BF16:
    return "<V2";
  case MPTRT_F8E4M3FN:
  case MPTRT_F8E5M2:
    return "|V1";
  case MPTRT_I64:
    return "<i8";
  case MPTRT_I32:
    return "<i4";
  case MPTRT_I1:
    return "|b1";
  }
  return "|V1";
}

std::vector<uint8_t> encodeNpy(mptrt_dtype dtype, const std::vector<int64_t> &shape,
                               const void *data, size_t bytes) {
  std::string shapeText = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    shapeText += std::to_string(shape[i]) + (shape.size() == 1      ? ","
                                             : i + 1 < shape.size() ? ", "
                                                                    : "");
  shapeText += ")";
  std::string header = std::string("{'descr': '") + npyDescr(dtype) +
                       "', 'fortran_order': False, 'shape': " + shapeText + ", }";
  // Pad with spaces so that the data starts at a multiple of 64, then '\n'.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out(kMagic, kMagic + 6);
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<uint8_t>(header.size() & 0xFF));
  out.push_back(static_cast<uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  const uint8_t *p = static_cast<const uint8_t *>(data);
  out.insert(out.end(), p, p + bytes);
  return out;
}

} // namespace tools
} // namespace mptrt
