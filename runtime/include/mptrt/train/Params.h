//===- Params.h - initial parameters from .safetensors and .npz ---*- C++ -*-===//
//
// `mpt-train --params FILE` (docs/mpt-train.md, "Initial parameters"): a
// file of named tensors, written by PyTorch or NumPy, gives a training plan
// its starting weights, so that a plan compiled without weight bytes (its
// initializers zeroed before export) and PyTorch start from the same values.
//
// Two formats, chosen by the file's first bytes:
//
//   .safetensors: a u64 little-endian header length N, N bytes of JSON
//   ({"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [b, e]},
//   ..., "__metadata__": {...}}), then the data buffer. Read strictly: every
//   tensor's bytes are exactly its shape's, the tensors tile the buffer with
//   no hole or overlap, a name appears once. Dtypes F64, F32, F16, BF16,
//   F8_E4M3, F8_E5M2, I64, I32, BOOL.
//
//   .npz (numpy.savez): a zip archive of NAME.npy entries, stored (not
//   compressed: numpy.savez_compressed's deflated entries are refused), with
//   Zip64 records as numpy writes them; each entry's CRC-32 is checked and
//   its .npy read by mpt-run's reader (TensorFile.h: <f4 <f2 <i8 <i4 |b1,
//   <V2 for bf16 or f16 bits, |V1 for fp8 bits).
//
// Binding (loadParams): each tensor must name a parameter of the entry
// point, and each model parameter (every parameter that is not training
// state: optimizer moments, loss scale, step counters, FP8 scales; see
// isTrainingState) must have a tensor, unless it is set another way
// (mpt-train's --param). Shapes must be equal. The element type must be the
// parameter's, or a float type converted exactly or rounded to nearest, ties
// to even (f64, f32, f16 and bf16 sources to an f32, f16 or bf16
// parameter); integer and boolean parameters take only their own type.
//
// Like the rest of the runtime it reports failure by return value and a
// message naming the file and the tensor, never by exception.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TRAIN_PARAMS_H
#define MPTRT_TRAIN_PARAMS_H

#include "mptrt.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace mptrt {
namespace train {

class Trainer;

/// The float type of a file's tensor, when it has a definite one (raw
/// 16-bit patterns of an .npz are bf16 or f16 as bound: None).
enum class ParamsFloat { None, F64, F32, F16, BF16 };

/// One tensor of a parameters file.
struct ParamsTensor {
  std::string name;
  std::string typeName;           // as the file spells it: F32, '<f4'
  std::vector<mptrt_dtype> exact; // plan dtypes these bytes are, unconverted
  ParamsFloat floating = ParamsFloat::None;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes; // little-endian elements, C order
};

/// The tensors of a parameters file, in the file's order.
struct ParamsFile {
  std::string path; // for messages
  std::vector<ParamsTensor> tensors;
};

/// Parses a .safetensors file's bytes; the messages name `path`.
bool parseSafetensors(const std::vector<uint8_t> &bytes, const std::string &path, ParamsFile *out,
                      std::string *error);
/// Parses an .npz (zip) file's bytes; the messages name `path`.
bool parseNpz(const std::vector<uint8_t> &bytes, const std::string &path, ParamsFile *out,
              std::string *error);
/// Reads `path` (a regular file) as .npz when it starts with a zip header,
/// else as .safetensors.
bool readParamsFile(const std::string &path, ParamsFile *out, std::string *error);

/// The bytes of `tensor` as plan dtype `to`: a copy when `to` is in
/// tensor.exact, else the float conversion above. False with the reason.
bool convertParamsTensor(const ParamsTensor &tensor, mptrt_dtype to, std::vector<uint8_t> *out,
                         std::string *why);

/// Whether parameter `name` is training state the compiler adds
/// (TrainStepAbi.h), which a parameters file may set but need not.
bool isTrainingState(const std::string &name);

/// Binds every tensor of `file` to the trainer's parameter of that name.
/// `setElsewhere`: parameters given another way, which the file need not
/// hold and whose tensors, if it does, are left out. False with a message
/// for an extra, missing, mis-shaped or mistyped tensor (nothing is bound
/// then).
bool loadParams(Trainer &trainer, const ParamsFile &file,
                const std::vector<std::string> &setElsewhere, std::string *error);

} // namespace train
} // namespace mptrt

#endif // MPTRT_TRAIN_PARAMS_H
