//===- TensorFile.h - .npy and ONNX TensorProto files -------------*- C++ -*-===//
//
// Readers for the tensor files mpt-run accepts and a writer for .npy:
//
//   .npy (format versions 1, 2 and 3): little-endian, C order. Element
//   types: '<f4' f32, '<f2' f16, '<i8' i64, '<i4' i32, '|b1' i1; raw types
//   for the formats numpy lacks, as ml_dtypes writes them: '<V2' (or '<u2')
//   holds bf16 or f16 bit patterns and '|V1' (or '|u1') holds fp8 bit
//   patterns; '|u1' also serves for i1 (0 / 1). A raw file takes its meaning
//   from the plan tensor it is bound to.
//
//   .pb: a serialized onnx.TensorProto (fields dims, data_type, raw_data,
//   float_data, int32_data, int64_data, name), decoded from the protobuf
//   wire format directly. Data types FLOAT, FLOAT16, BFLOAT16,
//   FLOAT8E4M3FN, FLOAT8E5M2, INT64, INT32, BOOL, and UINT16 as raw 16-bit
//   float patterns (bf16 or f16, as bound; ONNX 1.12's test data stores
//   bfloat16 so); external data is not supported.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TOOLS_MPTRUN_TENSORFILE_H
#define MPTRT_TOOLS_MPTRUN_TENSORFILE_H

#include "mptrt.h"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace mptrt {
namespace tools {

/// A tensor read from a file.
struct FileTensor {
  std::string typeName;                // as the file spells it, for messages
  std::vector<mptrt_dtype> compatible; // plan dtypes these bytes can be
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes; // little-endian elements, C order
  std::string name;           // TensorProto name ("" for .npy)

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
};

/// The longest .npy header accepted (numpy writes a few hundred bytes).
inline constexpr uint64_t kMaxNpyHeaderBytes = uint64_t{1} << 20;

/// Parses the header of a .npy file of `fileSize` bytes from its first
/// `prefixSize` bytes: fills `out` but for its bytes and sets `*dataOffset`
/// to where the data start. Checks that the data the header declares are
/// exactly the rest of the file, so nothing is allocated for a file that
/// lies. When `prefix` is too short to hold the header, fails with
/// `*needed` set to the bytes it needs (0 for every other failure).
bool parseNpyHeader(const uint8_t *prefix, size_t prefixSize, uint64_t fileSize, FileTensor *out,
                    uint64_t *dataOffset, uint64_t *needed, std::string *error);

/// Parses a .npy file's bytes. False with a message on any malformation.
/// Takes `file` by value: the data are moved, not copied, into `out->bytes`.
bool parseNpy(std::vector<uint8_t> file, FileTensor *out, std::string *error);

/// Parses a serialized onnx.TensorProto.
bool parseTensorProto(const std::vector<uint8_t> &file, FileTensor *out, std::string *error);

/// Splits a NAME=FILE command-line binding; false unless both are non-empty.
bool splitBinding(const std::string &text, std::pair<std::string, std::string> *out);

/// Checks a tensor's type and shape before its data are read (a
/// TensorFileCheck may refuse a file whose header does not fit the plan);
/// false with a message.
using TensorFileCheck = std::function<bool(const FileTensor &header, std::string *error)>;

/// Reads `path`, choosing the format by its first bytes (the .npy magic) and
/// otherwise by the extension .pb; the message names the path. A .npy file
/// is read header first: its declared data must be the rest of the file and
/// pass `check`, if given, before anything is allocated for them; the data
/// are then read at exactly their size. A .pb file is read whole (bounded
/// by the machine's memory) and checked after parsing.
bool readTensorFile(const std::string &path, FileTensor *out, std::string *error,
                    const TensorFileCheck &check = {});

/// Encodes a tensor of `dtype` as a version 1.0 .npy file (bf16 as '<V2',
/// fp8 as '|V1', i1 as '|b1').
std::vector<uint8_t> encodeNpy(mptrt_dtype dtype, const std::vector<int64_t> &shape,
                               const void *data, size_t bytes);

/// The .npy descr written for `dtype` ('<f4', '<V2', ...).
const char *npyDescr(mptrt_dtype dtype);

} // namespace tools
} // namespace mptrt

#endif // MPTRT_TOOLS_MPTRUN_TENSORFILE_H
