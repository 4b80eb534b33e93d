//===- Params.cpp - initial parameters from .safetensors and .npz --------===//
#include "mptrt/train/Params.h"

#include "TensorFile.h" // mpt-run's .npy reader, compiled into mptrt
#include "mptrt/Crc32.h"
#include "mptrt/Numerics.h"
#include "mptrt/ReadFile.h"
#include "mptrt/TrainStepAbi.h"
#include "mptrt/train.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <set>

namespace mptrt {
namespace train {

namespace {

uint64_t readLE(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

//===--- safetensors' JSON header -----------------------------------------===//

/// A JSON value of the header: only what safetensors headers hold (objects,
/// arrays, strings, non-negative integers; metadata values are strings).
struct Json {
  enum Kind { Object, Array, String, Number } kind = Object;
  std::string text;                                  // String
  uint64_t number = 0;                               // Number
  std::vector<std::pair<std::string, Json>> members; // Object, in order
  std::vector<Json> items;                           // Array
};

class JsonParser {
public:
  explicit JsonParser(const std::string &text) : text_(text) {}

  bool parseDocument(Json *out, std::string *error) {
    if (!value(out, 0))
      return fail(error);
    skipSpace();
    if (pos_ != text_.size()) {
      why_ = "text after the header's object";
      return fail(error);
    }
    if (out->kind != Json::Object) {
      why_ = "the header is not a JSON object";
      return fail(error);
    }
    return true;
  }

private:
  /// Records why the header is bad; false.
  bool bad(const std::string &why) {
    why_ = why;
    return false;
  }
  bool fail(std::string *error) {
    *error = "bad header at byte " + std::to_string(pos_) + ": " + why_;
    return false;
  }
  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\t'))
      ++pos_;
  }
  bool eat(char c) {
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool value(Json *out, int depth) {
    if (depth > 8)
      return bad("nested too deeply");
    skipSpace();
    if (pos_ >= text_.size())
      return bad("the header ends early");
    const char c = text_[pos_];
    if (c == '{') {
      ++pos_;
      out->kind = Json::Object;
      if (eat('}'))
        return true;
      do {
        std::string key;
        skipSpace();
        if (!string(&key))
          return false;
        for (const auto &member : out->members)
          if (member.first == key)
            return bad("the name '" + key + "' appears twice");
        if (!eat(':'))
          return bad("expected ':' after \"" + key + "\"");
        Json member;
        if (!value(&member, depth + 1))
          return false;
        out->members.emplace_back(std::move(key), std::move(member));
      } while (eat(','));
      if (!eat('}'))
        return bad("expected ',' or '}'");
      return true;
    }
    if (c == '[') {
      ++pos_;
      out->kind = Json::Array;
      if (eat(']'))
        return true;
      do {
        Json item;
        if (!value(&item, depth + 1))
          return false;
        out->items.push_back(std::move(item));
      } while (eat(','));
      if (!eat(']'))
        return bad("expected ',' or ']'");
      return true;
    }
    if (c == '"') {
      out->kind = Json::String;
      return string(&out->text);
    }
    if (c >= '0' && c <= '9') {
      out->kind = Json::Number;
      if (c == '0' && pos_ + 1 < text_.size() &&
          std::isdigit(static_cast<unsigned char>(text_[pos_ + 1])))
        return bad("a number with a leading zero");
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        const uint64_t digit = uint64_t(text_[pos_] - '0');
        if (out->number > (UINT64_MAX - digit) / 10)
          return bad("a number too large");
        out->number = out->number * 10 + digit;
        ++pos_;
      }
      if (pos_ < text_.size() && (text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E'))
        return bad("a number that is not a whole number");
      return true;
    }
    return bad("unexpected character (only objects, arrays, strings and whole numbers are read)");
  }
  void appendUtf8(uint32_t cp, std::string *out) {
    if (cp < 0x80) {
      out->push_back(char(cp));
    } else if (cp < 0x800) {
      out->push_back(char(0xC0 | (cp >> 6)));
      out->push_back(char(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(char(0xE0 | (cp >> 12)));
      out->push_back(char(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(char(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(char(0xF0 | (cp >> 18)));
      out->push_back(char(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(char(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(char(0x80 | (cp & 0x3F)));
    }
  }
  bool hex4(uint32_t *out) {
    if (text_.size() - pos_ < 4)
      return bad("a \\u escape ends early");
    *out = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = text_[pos_++];
      const int v = h >= '0' && h <= '9'   ? h - '0'
                    : h >= 'a' && h <= 'f' ? h - 'a' + 10
                    : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                           : -1;
      if (v < 0)
        return bad("a bad \\u escape");
      *out = *out * 16 + uint32_t(v);
    }
    return true;
  }
  bool string(std::string *out) {
    if (pos_ >= text_.size() || text_[pos_] != '"')
      return bad("expected a string");
    ++pos_;
    while (pos_ < text_.size()) {
      const char c = text_[pos_++];
      if (c == '"')
        return true;
      if (static_cast<unsigned char>(c) < 0x20)
        return bad("a control character in a string");
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= text_.size())
        break;
      const char e = text_[pos_++];
      // The one-character escapes, and what each stands for.
      static const char kEscapes[] = "\"\\/bfnrt", kMeanings[] = "\"\\/\b\f\n\r\t";
      if (const char *at = e ? std::strchr(kEscapes, e) : nullptr) {
        out->push_back(kMeanings[at - kEscapes]);
        continue;
      }
      if (e != 'u')
        return bad(std::string("a bad escape '\\") + e + "'");
      uint32_t cp;
      if (!hex4(&cp))
        return false;
      if (cp >= 0xD800 && cp < 0xDC00) { // a surrogate pair
        uint32_t low;
        if (text_.compare(pos_, 2, "\\u") != 0 || (pos_ += 2, !hex4(&low)) || low < 0xDC00 ||
            low >= 0xE000)
          return bad("an unpaired surrogate");
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
      } else if (cp >= 0xDC00 && cp < 0xE000)
        return bad("an unpaired surrogate");
      appendUtf8(cp, out);
    }
    return bad("a string does not end");
  }

  const std::string &text_;
  size_t pos_ = 0;
  std::string why_;
};

/// A safetensors dtype: its element size, the plan dtypes its bytes are,
/// and its float type.
struct SafetensorsType {
  const char *name;
  size_t size;
  std::vector<mptrt_dtype> exact;
  ParamsFloat floating;
};

const SafetensorsType *safetensorsType(const std::string &name) {
  static const SafetensorsType kTypes[] = {
      {"F64", 8, {}, ParamsFloat::F64},
      {"F32", 4, {MPTRT_F32}, ParamsFloat::F32},
      {"F16", 2, {MPTRT_F16}, ParamsFloat::F16},
      {"BF16", 2, {MPTRT_BF16}, ParamsFloat::BF16},
      {"F8_E4M3", 1, {MPTRT_F8E4M3FN}, ParamsFloat::None},
      {"F8_E5M2", 1, {MPTRT_F8E5M2}, ParamsFloat::None},
      {"I64", 8, {MPTRT_I64}, ParamsFloat::None},
      {"I32", 4, {MPTRT_I32}, ParamsFloat::None},
      {"BOOL", 1, {MPTRT_I1}, ParamsFloat::None},
  };
  for (const SafetensorsType &t : kTypes)
    if (name == t.name)
      return &t;
  return nullptr;
}

/// Element count of `shape`, false when it overflows 2^62 / `size`.
bool elementBytes(const std::vector<int64_t> &shape, size_t size, uint64_t *out) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d != 0 && n > (uint64_t{1} << 62) / size / uint64_t(d)))
      return false;
    n *= uint64_t(d);
  }
  *out = n * size;
  return true;
}

//===--- .npz: a zip of .npy files ----------------------------------------===//

constexpr uint32_t kLocalHeader = 0x04034b50, kCentralHeader = 0x02014b50,
                   kEndOfCentral = 0x06054b50, kZip64EndOfCentral = 0x06064b50,
                   kZip64Locator = 0x07064b50;

/// Reads the Zip64 extended information extra field (id 1) of a central
/// header: the 64-bit values of the fields that hold 0xFFFFFFFF, in order.
bool zip64Extra(const uint8_t *extra, size_t length, std::vector<uint64_t *> fields) {
  size_t at = 0;
  while (at + 4 <= length) {
    const uint16_t id = uint16_t(readLE(extra + at, 2)), size = uint16_t(readLE(extra + at + 2, 2));
    if (at + 4 + size > length)
      return false;
    if (id == 1) {
      size_t in = 0;
      for (uint64_t *f : fields) {
        if (*f != 0xFFFFFFFFu)
          continue;
        if (in + 8 > size)
          return false;
        *f = readLE(extra + at + 4 + in, 8);
        in += 8;
      }
      return true;
    }
    at += 4 + size;
  }
  for (uint64_t *f : fields)
    if (*f == 0xFFFFFFFFu)
      return false;
  return true;
}

//===--- float conversions ------------------------------------------------===//

/// `d` rounded to f32 with round-to-odd, so that a second rounding to bf16
/// or f16 (at least 2 fewer mantissa bits) is the correctly rounded one.
float roundToOddF32(double d) {
  float f = static_cast<float>(d);
  if (std::isfinite(f) && static_cast<double>(f) != d && (numerics::bitsOfF32(f) & 1u) == 0)
    f = std::nextafter(f, d > static_cast<double>(f) ? INFINITY : -INFINITY);
  return f;
}

std::string describeTensor(const ParamsTensor &t) { return t.typeName + " " + shapeText(t.shape); }

} // namespace

bool parseSafetensors(const std::vector<uint8_t> &bytes, const std::string &path, ParamsFile *out,
                      std::string *error) {
  const std::string where = "parameters file '" + path + "' (safetensors): ";
  out->path = path;
  out->tensors.clear();
  if (bytes.size() < 8) {
    *error = where + "truncated: " + std::to_string(bytes.size()) +
             " bytes, fewer than the 8 of the header length";
    return false;
  }
  const uint64_t headerLength = readLE(bytes.data(), 8);
  if (headerLength > bytes.size() - 8) {
    *error = where + "truncated or not a safetensors file: the header length " +
             std::to_string(headerLength) + " exceeds the " + std::to_string(bytes.size() - 8) +
             " bytes that follow it";
    return false;
  }
  const std::string header(reinterpret_cast<const char *>(bytes.data() + 8), headerLength);
  Json root;
  std::string why;
  if (!JsonParser(header).parseDocument(&root, &why)) {
    *error = where + why;
    return false;
  }
  const uint64_t bufferStart = 8 + headerLength, bufferBytes = bytes.size() - bufferStart;
  struct Span {
    uint64_t begin, end;
    size_t tensor;
  };
  std::vector<Span> spans;
  for (const auto &[name, entry] : root.members) {
    if (name == "__metadata__") {
      bool strings = entry.kind == Json::Object;
      for (const auto &m : entry.members)
        strings = strings && m.second.kind == Json::String;
      if (!strings) {
        *error = where + "__metadata__ is not an object of strings";
        return false;
      }
      continue;
    }
    const std::string tensorWhere = where + "tensor '" + name + "': ";
    const Json *dtype = nullptr, *shape = nullptr, *offsets = nullptr;
    if (entry.kind != Json::Object) {
      *error = tensorWhere + "not an object";
      return false;
    }
    for (const auto &[key, value] : entry.members) {
      if (key == "dtype")
        dtype = &value;
      else if (key == "shape")
        shape = &value;
      else if (key == "data_offsets")
        offsets = &value;
      else {
        *error = tensorWhere + "unknown key '" + key + "'";
        return false;
      }
    }
    if (!dtype || !shape || !offsets || dtype->kind != Json::String || shape->kind != Json::Array ||
        offsets->kind != Json::Array || offsets->items.size() != 2) {
      *error = tensorWhere + "needs \"dtype\" (a string), \"shape\" (an array) and "
                             "\"data_offsets\" ([begin, end])";
      return false;
    }
    const SafetensorsType *type = safetensorsType(dtype->text);
    if (!type) {
      *error = tensorWhere + "unsupported dtype '" + dtype->text +
               "' (supported: F64 F32 F16 BF16 F8_E4M3 F8_E5M2 I64 I32 BOOL)";
      return false;
    }
    ParamsTensor t;
    t.name = name;
    t.typeName = type->name;
    t.exact = type->exact;
    t.floating = type->floating;
    for (const Json &d : shape->items) {
      if (d.kind != Json::Number || d.number > (uint64_t{1} << 62)) {
        *error = tensorWhere + "a shape entry is not a whole number";
        return false;
      }
      t.shape.push_back(int64_t(d.number));
    }
    if (offsets->items[0].kind != Json::Number || offsets->items[1].kind != Json::Number) {
      *error = tensorWhere + "data_offsets are not whole numbers";
      return false;
    }
    const uint64_t begin = offsets->items[0].number, end = offsets->items[1].number;
    uint64_t need;
    if (!elementBytes(t.shape, type->size, &need)) {
      *error = tensorWhere + "the shape " + shapeText(t.shape) + " is too large";
      return false;
    }
    if (begin > end || end > bufferBytes) {
      *error = tensorWhere + "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
               "] lie outside the " + std::to_string(bufferBytes) +
               "-byte data buffer (truncated file?)";
      return false;
    }
    if (end - begin != need) {
      *error = tensorWhere + describeTensor(t) + " needs " + std::to_string(need) +
               " bytes, data_offsets give " + std::to_string(end - begin);
      return false;
    }
    t.bytes.assign(bytes.begin() + std::ptrdiff_t(bufferStart + begin),
                   bytes.begin() + std::ptrdiff_t(bufferStart + end));
    spans.push_back({begin, end, out->tensors.size()});
    out->tensors.push_back(std::move(t));
  }
  // The tensors tile the buffer: no hole, no overlap, nothing after.
  std::sort(spans.begin(), spans.end(), [](const Span &a, const Span &b) {
    return a.begin < b.begin || (a.begin == b.begin && a.end < b.end);
  });
  uint64_t at = 0;
  for (const Span &s : spans) {
    if (s.begin != at) {
      *error = where + "tensor '" + out->tensors[s.tensor].name + "' " +
               (s.begin < at ? "overlaps the tensor before it" : "leaves a hole before it") +
               " in the data buffer (data_offsets begin at " + std::to_string(s.begin) +
               ", the previous tensor ends at " + std::to_string(at) + ")";
      return false;
    }
    at = s.end;
  }
  if (at != bufferBytes) {
    *error = where + std::to_string(bufferBytes - at) +
             " bytes after the last tensor's data (the buffer has " + std::to_string(bufferBytes) +
             " bytes, the tensors " + std::to_string(at) + ")";
    return false;
  }
  return true;
}

bool parseNpz(const std::vector<uint8_t> &bytes, const std::string &path, ParamsFile *out,
              std::string *error) {
  const std::string where = "parameters file '" + path + "' (npz): ";
  out->path = path;
  out->tensors.clear();
  const uint8_t *p = bytes.data();
  const size_t size = bytes.size();
  // The end of central directory record: 22 bytes and a comment of at most
  // 65535, at the end of the file.
  size_t eocd = SIZE_MAX;
  for (size_t back = 22; back <= size && back <= 22 + 65535; ++back)
    if (readLE(p + size - back, 4) == kEndOfCentral &&
        22 + readLE(p + size - back + 20, 2) == back) {
      eocd = size - back;
      break;
    }
  if (eocd == SIZE_MAX) {
    *error = where + "truncated or not a zip archive: no end of central directory record";
    return false;
  }
  uint64_t entries = readLE(p + eocd + 10, 2), cdSize = readLE(p + eocd + 12, 4),
           cdOffset = readLE(p + eocd + 16, 4);
  if (readLE(p + eocd + 4, 4) != 0) {
    *error = where + "multi-disk zip archives are not supported";
    return false;
  }
  if (entries == 0xFFFF || cdSize == 0xFFFFFFFFu || cdOffset == 0xFFFFFFFFu) {
    // Zip64: the locator just before the record points at the Zip64 record.
    if (eocd < 20 || readLE(p + eocd - 20, 4) != kZip64Locator) {
      *error = where + "truncated: the Zip64 end of central directory locator is missing";
      return false;
    }
    const uint64_t at = readLE(p + eocd - 20 + 8, 8);
    if (at > size || size - at < 56 || readLE(p + at, 4) != kZip64EndOfCentral) {
      *error = where + "truncated or corrupt: bad Zip64 end of central directory record";
      return false;
    }
    entries = readLE(p + at + 32, 8);
    cdSize = readLE(p + at + 40, 8);
    cdOffset = readLE(p + at + 48, 8);
  }
  if (cdOffset > size || cdSize > size - cdOffset) {
    *error = where + "truncated or corrupt: the central directory lies outside the file";
    return false;
  }
  std::set<std::string> names;
  uint64_t at = cdOffset;
  for (uint64_t i = 0; i < entries; ++i) {
    if (cdOffset + cdSize - at < 46 || readLE(p + at, 4) != kCentralHeader) {
      *error = where + "corrupt central directory at entry " + std::to_string(i);
      return false;
    }
    const uint16_t flags = uint16_t(readLE(p + at + 8, 2)),
                   method = uint16_t(readLE(p + at + 10, 2));
    const uint32_t crc = uint32_t(readLE(p + at + 16, 4));
    uint64_t compressed = readLE(p + at + 20, 4), uncompressed = readLE(p + at + 24, 4);
    const uint64_t nameLength = readLE(p + at + 28, 2), extraLength = readLE(p + at + 30, 2),
                   commentLength = readLE(p + at + 32, 2);
    uint64_t local = readLE(p + at + 42, 4);
    if (cdOffset + cdSize - at - 46 < nameLength + extraLength + commentLength) {
      *error = where + "corrupt central directory at entry " + std::to_string(i);
      return false;
    }
    const std::string entry(reinterpret_cast<const char *>(p + at + 46), nameLength);
    const std::string entryWhere = where + "entry '" + entry + "': ";
    if (!zip64Extra(p + at + 46 + nameLength, extraLength, {&uncompressed, &compressed, &local})) {
      *error = entryWhere + "bad Zip64 extra field";
      return false;
    }
    at += 46 + nameLength + extraLength + commentLength;
    if (flags & 1) {
      *error = entryWhere + "encrypted entries are not supported";
      return false;
    }
    if (method != 0) {
      *error = entryWhere + "compressed (zip method " + std::to_string(method) +
               (method == 8 ? ", deflate" : "") +
               "); only stored entries are read: write the file with numpy.savez, not "
               "numpy.savez_compressed";
      return false;
    }
    if (compressed != uncompressed) {
      *error = entryWhere + "a stored entry whose sizes differ";
      return false;
    }
    if (entry.size() < 5 || entry.compare(entry.size() - 4, 4, ".npy") != 0) {
      *error = entryWhere + "not a .npy file (an .npz holds NAME.npy entries)";
      return false;
    }
    if (local > size || size - local < 30 || readLE(p + local, 4) != kLocalHeader) {
      *error = entryWhere + "truncated or corrupt: bad local header";
      return false;
    }
    const uint64_t data = local + 30 + readLE(p + local + 26, 2) + readLE(p + local + 28, 2);
    if (data > size || size - data < compressed) {
      *error = entryWhere + "truncated: its " + std::to_string(compressed) +
               " bytes run past the end of the file";
      return false;
    }
    if (mptrt::crc32(0, p + data, compressed) != crc) {
      *error = entryWhere + "corrupt: CRC-32 mismatch";
      return false;
    }
    ParamsTensor t;
    t.name = entry.substr(0, entry.size() - 4);
    if (!names.insert(t.name).second) {
      *error = entryWhere + "appears twice";
      return false;
    }
    tools::FileTensor npy;
    std::string why;
    if (!tools::parseNpy(std::vector<uint8_t>(p + data, p + data + compressed), &npy, &why)) {
      *error = entryWhere + why;
      return false;
    }
    t.typeName = npy.typeName;
    t.exact = npy.compatible;
    t.floating = npy.typeName == "'<f4'" || npy.typeName == "'=f4'"   ? ParamsFloat::F32
                 : npy.typeName == "'<f2'" || npy.typeName == "'=f2'" ? ParamsFloat::F16
                                                                      : ParamsFloat::None;
    t.shape = std::move(npy.shape);
    t.bytes = std::move(npy.bytes);
    out->tensors.push_back(std::move(t));
  }
  return true;
}

bool readParamsFile(const std::string &path, ParamsFile *out, std::string *error) {
  std::vector<uint8_t> bytes;
  if (!readRegularFile(path, &bytes, error)) {
    *error = "parameters file: " + *error;
    return false;
  }
  if (bytes.size() >= 4 && readLE(bytes.data(), 4) == kLocalHeader)
    return parseNpz(bytes, path, out, error);
  if (bytes.size() >= 4 && readLE(bytes.data(), 4) == kEndOfCentral) {
    *error = "parameters file '" + path + "' (npz): an empty zip archive (no tensors)";
    return false;
  }
  return parseSafetensors(bytes, path, out, error);
}

bool convertParamsTensor(const ParamsTensor &tensor, mptrt_dtype to, std::vector<uint8_t> *out,
                         std::string *why) {
  if (std::find(tensor.exact.begin(), tensor.exact.end(), to) != tensor.exact.end()) {
    *out = tensor.bytes;
    return true;
  }
  const bool floatTarget = to == MPTRT_F32 || to == MPTRT_F16 || to == MPTRT_BF16;
  if (!floatTarget || tensor.floating == ParamsFloat::None) {
    *why = floatTarget ? "only f64, f32, f16 and bf16 tensors are converted to a float parameter"
           : to == MPTRT_I64 || to == MPTRT_I32 || to == MPTRT_I1
               ? "an integer or boolean parameter takes only its own element type"
               : "an fp8 parameter takes only its own element type";
    return false;
  }
  const size_t inSize = tensor.floating == ParamsFloat::F64   ? 8
                        : tensor.floating == ParamsFloat::F32 ? 4
                                                              : 2;
  const size_t outSize = mptrt_dtype_size(to), n = tensor.bytes.size() / inSize;
  out->assign(n * outSize, 0);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t *in = tensor.bytes.data() + i * inSize;
    float f;
    switch (tensor.floating) {
    case ParamsFloat::F64: {
      double d;
      std::memcpy(&d, in, 8);
      f = to == MPTRT_F32 ? static_cast<float>(d) : roundToOddF32(d);
      break;
    }
    case ParamsFloat::F32:
      std::memcpy(&f, in, 4);
      break;
    case ParamsFloat::F16:
      f = numerics::f16ToF32(uint16_t(readLE(in, 2)));
      break;
    default: // BF16
      f = numerics::bf16ToF32(uint16_t(readLE(in, 2)));
      break;
    }
    uint8_t *o = out->data() + i * outSize;
    if (to == MPTRT_F32) {
      std::memcpy(o, &f, 4);
    } else {
      const uint16_t h = to == MPTRT_BF16 ? numerics::f32ToBf16(f) : numerics::f32ToF16(f);
      o[0] = uint8_t(h);
      o[1] = uint8_t(h >> 8);
    }
  }
  return true;
}

bool isTrainingState(const std::string &name) {
  for (const char *exact : {abi::kTrainSeed, abi::kTrainStep, abi::kOptimizerStep,
                            abi::kLossScaleScale, abi::kLossScaleGrowthTracker})
    if (name == exact)
      return true;
  for (const char *suffix : {abi::kExpAvgSuffix, abi::kExpAvgSqSuffix, abi::kMomentumBufferSuffix,
                             abi::kFP8ScaleSuffix, abi::kAmaxHistorySuffix}) {
    const size_t n = std::strlen(suffix);
    if (name.size() > n && name.compare(name.size() - n, n, suffix) == 0)
      return true;
  }
  return false;
}

bool loadParams(Trainer &trainer, const ParamsFile &file,
                const std::vector<std::string> &setElsewhere, std::string *error) {
  const std::string where = "parameters file '" + file.path + "': ";
  const std::set<std::string> elsewhere(setElsewhere.begin(), setElsewhere.end());
  std::map<std::string, const ParameterSpec *> byName;
  for (const ParameterSpec &p : trainer.parameters())
    byName[p.name] = &p;
  // Check every tensor before binding any.
  std::vector<std::pair<const ParameterSpec *, std::vector<uint8_t>>> bindings;
  std::set<std::string> given;
  for (const ParamsTensor &t : file.tensors) {
    const auto it = byName.find(t.name);
    if (it == byName.end()) {
      *error = where + "tensor '" + t.name + "' (" + describeTensor(t) +
               ") names no parameter of entry point '" + trainer.entry() + "'";
      return false;
    }
    given.insert(t.name);
    if (elsewhere.count(t.name))
      continue;
    const TensorInfo &info = it->second->info;
    const std::string mismatch = where + "tensor '" + t.name + "' is " + describeTensor(t) +
                                 ", the plan's parameter is " +
                                 describeType(info.dtype, info.shape);
    if (t.shape != info.shape) {
      *error = mismatch + ": the shapes differ";
      return false;
    }
    std::vector<uint8_t> bytes;
    std::string why;
    if (!convertParamsTensor(t, info.dtype, &bytes, &why)) {
      *error = mismatch + ": " + why;
      return false;
    }
    bindings.emplace_back(it->second, std::move(bytes));
  }
  std::vector<std::string> missing;
  for (const ParameterSpec &p : trainer.parameters())
    if (!given.count(p.name) && !elsewhere.count(p.name) && !isTrainingState(p.name))
      missing.push_back(p.name);
  if (!missing.empty()) {
    const ParameterSpec &first = *byName[missing[0]];
    std::string message = where + "no tensor '" + missing[0] + "' for the plan's parameter (" +
                          describeType(first.info.dtype, first.info.shape) + ")";
    if (missing.size() > 1) {
      std::vector<std::string> more(missing.begin() + 1,
                                    missing.begin() +
                                        std::ptrdiff_t(std::min<size_t>(missing.size(), 9)));
      message += ", nor for " + std::to_string(missing.size() - 1) + " more: " + joinNames(more) +
                 (missing.size() > 9 ? ", ..." : "");
    }
    *error = message + " (every model parameter needs one; the file has " +
             std::to_string(file.tensors.size()) + " tensors)";
    return false;
  }
  for (auto &[spec, bytes] : bindings)
    if (!trainer.setParameter(
            spec->name,
            Array::of(spec->info.dtype, spec->info.shape, bytes.data(), bytes.size(), file.path),
            error))
      return false;
  return true;
}

} // namespace train
} // namespace mptrt
