//===- TensorConversion.cpp - ONNX element types and TensorProto data -----===//
#include "NodeImporter.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <optional>

using namespace mlir;

namespace mpt::onnx_import {

Type convertElementType(int32_t onnxType, MLIRContext *ctx) {
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
    return Float32Type::get(ctx);
  case onnx::TensorProto::FLOAT16:
    return Float16Type::get(ctx);
  case onnx::TensorProto::BFLOAT16:
    return BFloat16Type::get(ctx);
  case 17:
    return Float8E4M3FNType::get(ctx); // FLOAT8E4M3FN (onnx >= 1.14)
  case 19:
    return Float8E5M2Type::get(ctx); // FLOAT8E5M2
  case onnx::TensorProto::INT64:
    return IntegerType::get(ctx, 64);
  case onnx::TensorProto::INT32:
    return IntegerType::get(ctx, 32);
  case onnx::TensorProto::BOOL:
    return IntegerType::get(ctx, 1);
  default:
    return nullptr;
  }
}

StringRef elementTypeName(int32_t onnxType) {
  static const char *names[] = {
      "UNDEFINED",      "FLOAT",        "UINT8",          "INT8",
      "UINT16",         "INT16",        "INT32",          "INT64",
      "STRING",         "BOOL",         "FLOAT16",        "DOUBLE",
      "UINT32",         "UINT64",       "COMPLEX64",      "COMPLEX128",
      "BFLOAT16",       "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
      "FLOAT8E5M2FNUZ", "UINT4",        "INT4",           "FLOAT4E2M1"};
  if (onnxType >= 0 && onnxType < static_cast<int32_t>(std::size(names)))
    return names[onnxType];
  return "unknown";
}

std::string checkShape(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  bool overflow = false;
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (d < 0)
      return "dimension " + std::to_string(i) + " is negative (" +
             std::to_string(d) + ")";
    overflow |= llvm::MulOverflow(count, d, count);
  }
  if (!overflow)
    return "";
  std::string dims;
  for (int64_t d : shape)
    dims += (dims.empty() ? "" : "x") + std::to_string(d);
  return "the element count of " + dims + " overflows int64";
}

/// The model file that a diagnostic location names, or "".
static StringRef modelFileOf(Location loc) {
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    return file.getFilename().getValue();
  return "";
}

/// Whether the resolved path `file` lies strictly inside the resolved
/// folder `dir`.
static bool isInside(StringRef file, StringRef dir) {
  if (!file.consume_front(dir))
    return false;
  if (llvm::sys::path::is_separator(dir.back()))
    return !file.empty();
  return file.size() > 1 && llvm::sys::path::is_separator(file.front());
}

/// What a file that is not a regular file is, for diagnostics.
static StringRef describeFileType(llvm::sys::fs::file_type type) {
  using llvm::sys::fs::file_type;
  switch (type) {
  case file_type::directory_file:
    return "a directory";
  case file_type::fifo_file:
    return "a FIFO";
  case file_type::character_file:
    return "a character device";
  case file_type::block_file:
    return "a block device";
  case file_type::socket_file:
    return "a socket";
  default:
    return "not a plain file";
  }
}

/// Maps the bytes of an externally stored tensor: only its slice of the
/// file, which may be far larger than memory.
///
/// A model is not trusted (a downloaded archive may hold symlinks), so the
/// file must be a regular file that, with every symlink resolved, lies
/// inside the model's folder `baseDir` (CVE-2024-27318 in ONNX), and
/// `offset` and `length` must be decimal numbers naming bytes of the file.
/// Every error names the initializer, the model and the resolved path.
static FailureOr<std::unique_ptr<llvm::MemoryBuffer>>
readExternal(const onnx::TensorProto &tensor, StringRef baseDir, Location loc) {
  namespace fs = llvm::sys::fs;
  std::string what = "initializer '" + tensor.name() + "'";
  if (StringRef model = modelFileOf(loc); !model.empty())
    what += " of model '" + model.str() + "'";
  auto fail = [&]() { return emitError(loc); };
  auto cannotRead = [&](StringRef file, std::error_code ec) {
    fail() << "cannot read external data file '" << file << "' for " << what
           << ": " << ec.message();
    return failure();
  };

  std::string location;
  std::optional<std::string> offsetText, lengthText;
  llvm::StringSet<> seen;
  for (const auto &entry : tensor.external_data()) {
    StringRef key = entry.key();
    if (key != "location" && key != "offset" && key != "length")
      continue; // "checksum" and keys of later ONNX versions
    if (!seen.insert(key).second)
      return fail() << what << ": external data key '" << key
                    << "' is given twice",
             failure();
    if (key == "location")
      location = entry.value();
    else
      (key == "offset" ? offsetText : lengthText) = entry.value();
  }
  if (location.empty())
    return fail() << what << " is stored externally but names no file",
           failure();
  // As ONNX's checker requires, the location is a relative path that does
  // not climb out of the model's directory.
  if (llvm::sys::path::is_absolute(location) ||
      location.find('\0') != std::string::npos ||
      llvm::is_contained(llvm::make_range(llvm::sys::path::begin(location),
                                          llvm::sys::path::end(location)),
                         ".."))
    return fail() << what << " names external data file '" << location
                  << "' outside the model's directory",
           failure();
  // Symlinks may still lead out of it: compare the real paths.
  SmallString<256> realDir, realFile;
  if (std::error_code ec =
          fs::real_path(baseDir.empty() ? StringRef(".") : baseDir, realDir))
    return fail() << "cannot resolve the model's folder '" << baseDir
                  << "' for " << what << ": " << ec.message(),
           failure();
  SmallString<256> path(baseDir);
  llvm::sys::path::append(path, location);
  if (std::error_code ec = fs::real_path(path, realFile))
    return cannotRead(path, ec);
  auto resolvesTo = [&]() {
    auto diag = fail();
    diag << what << ": external data file '" << location << "' resolves to '"
         << realFile << "', which is ";
    return diag;
  };
  if (!isInside(realFile, realDir))
    return resolvesTo() << "outside the model's folder '" << realDir << "'",
           failure();
  // A FIFO or a device must not be opened: reading one may never end.
  fs::file_status status;
  if (std::error_code ec = fs::status(realFile, status))
    return cannotRead(realFile, ec);
  if (status.type() != fs::file_type::regular_file)
    return resolvesTo() << describeFileType(status.type())
                        << ", not a regular file",
           failure();

  auto parse = [&](const std::optional<std::string> &text, StringRef key,
                   uint64_t &value) {
    if (!text)
      return true;
    if (!StringRef(*text).getAsInteger(10, value))
      return true;
    fail() << what << ": external data " << key << " '" << *text << "' for '"
           << realFile << "' is not a non-negative integer";
    return false;
  };
  uint64_t offset = 0, length = 0;
  if (!parse(offsetText, "offset", offset) ||
      !parse(lengthText, "length", length))
    return failure();

  // Open what was checked, and check again what was opened: the folder may
  // change in between.
  int fd = -1;
  SmallString<256> openedPath;
  if (std::error_code ec =
          fs::openFileForRead(realFile, fd, fs::OF_None, &openedPath))
    return cannotRead(realFile, ec);
  llvm::scope_exit closeFile(
      [&] { llvm::sys::Process::SafelyCloseFileDescriptor(fd); });
  fs::file_status opened;
  if (std::error_code ec = fs::status(fd, opened))
    return cannotRead(realFile, ec);
  if (!fs::equivalent(status, opened) ||
      opened.type() != fs::file_type::regular_file ||
      !isInside(openedPath, realDir))
    return fail() << what << ": external data file '" << realFile
                  << "' changed while it was opened",
           failure();
  const uint64_t size = opened.getSize();
  if (!lengthText)
    length = offset <= size ? size - offset : 0;
  if (offset > size || length > size - offset)
    return fail() << "external data for " << what << " lies outside '"
                  << realFile << "' (offset " << offset << ", length " << length
                  << ", file size " << size << ")",
           failure();
  auto buffer = llvm::MemoryBuffer::getOpenFileSlice(
      fs::convertFDToNativeFile(fd), realFile, length,
      static_cast<int64_t>(offset));
  if (!buffer)
    return cannotRead(realFile, buffer.getError());
  return std::move(*buffer);
}

FailureOr<std::shared_ptr<const TensorBytes>>
takeTensorBytes(onnx::TensorProto &tensor, StringRef baseDir, Location loc) {
  auto bytes = std::make_shared<TensorBytes>();
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    auto mapped = readExternal(tensor, baseDir, loc);
    if (failed(mapped))
      return failure();
    bytes->mapped = std::move(*mapped);
  } else if (tensor.has_raw_data()) {
    bytes->moved = std::move(*tensor.mutable_raw_data());
    tensor.clear_raw_data();
  } else {
    return std::shared_ptr<const TensorBytes>();
  }
  return std::shared_ptr<const TensorBytes>(std::move(bytes));
}

FailureOr<DenseElementsAttr> convertTensor(const onnx::TensorProto &tensor,
                                           StringRef baseDir, Location loc,
                                           bool &unsupported,
                                           bool allowFloat64) {
  MLIRContext *ctx = loc.getContext();
  Type element = convertElementType(tensor.data_type(), ctx);
  if (!element && allowFloat64 &&
      tensor.data_type() == onnx::TensorProto::DOUBLE)
    element = Float64Type::get(ctx);
  if (!element) {
    unsupported = true;
    return emitError(loc) << "tensor '" << tensor.name()
                          << "' has element type "
                          << elementTypeName(tensor.data_type())
                          << ", which MPT does not support",
           failure();
  }
  SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  if (std::string bad = checkShape(shape); !bad.empty())
    return emitError(loc) << "tensor '" << tensor.name()
                          << "' has a bad shape: " << bad,
           failure();
  const int64_t count = ShapedType::getNumElements(shape);
  auto type = RankedTensorType::get(shape, element);
  unsigned bits = element.isInteger(1) ? 8 : element.getIntOrFloatBitWidth();
  size_t bytes = bits / 8;

  std::unique_ptr<llvm::MemoryBuffer> external;
  std::optional<StringRef> raw;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    auto data = readExternal(tensor, baseDir, loc);
    if (failed(data))
      return failure();
    external = std::move(*data);
    raw = external->getBuffer();
  } else if (tensor.has_raw_data()) {
    raw = StringRef(tensor.raw_data());
  }

  auto badSize = [&](size_t got) {
    return emitError(loc) << "tensor '" << tensor.name() << "' holds " << got
                          << " values but its shape " << type << " needs "
                          << count,
           failure();
  };

  if (raw) {
    // count * bytes may not fit in 64 bits (count only fits in int64).
    const uint64_t elements = static_cast<uint64_t>(count);
    if (elements > UINT64_MAX / std::max<size_t>(bytes, 1) ||
        raw->size() != elements * bytes)
      return emitError(loc)
                 << "tensor '" << tensor.name() << "' has " << raw->size()
                 << " bytes of " << (external ? "external data" : "raw_data")
                 << " but its shape " << type << " needs " << count << " x "
                 << bytes << " bytes",
             failure();
    if (element.isInteger(1)) {
      SmallVector<bool> values;
      for (char c : *raw)
        values.push_back(c != 0);
      return DenseElementsAttr::get(type, values);
    }
    if (count == 0)
      return DenseElementsAttr::get(type, ArrayRef<Attribute>{});
    // A one-element buffer would be read as a splat, which is right.
    return DenseElementsAttr::getFromRawBuffer(
        type, ArrayRef<char>(raw->data(), raw->size()));
  }

  // Typed fields.
  if (element.isF32()) {
    if (tensor.float_data_size() != count)
      return badSize(tensor.float_data_size());
    return DenseElementsAttr::get(
        type, ArrayRef<float>(tensor.float_data().data(), count));
  }
  if (element.isF64()) {
    if (tensor.double_data_size() != count)
      return badSize(tensor.double_data_size());
    return DenseElementsAttr::get(
        type, ArrayRef<double>(tensor.double_data().data(), count));
  }
  if (element.isInteger(64)) {
    if (tensor.int64_data_size() != count)
      return badSize(tensor.int64_data_size());
    return DenseElementsAttr::get(
        type, ArrayRef<int64_t>(tensor.int64_data().data(), count));
  }
  // int32_data carries int32, bool, and the bit patterns of 16/8-bit floats.
  if (tensor.int32_data_size() != count)
    return badSize(tensor.int32_data_size());
  if (element.isInteger(32))
    return DenseElementsAttr::get(
        type, ArrayRef<int32_t>(tensor.int32_data().data(), count));
  if (element.isInteger(1)) {
    SmallVector<bool> values(tensor.int32_data().begin(),
                             tensor.int32_data().end());
    return DenseElementsAttr::get(type, values);
  }
  SmallVector<APFloat> values;
  auto &semantics = cast<FloatType>(element).getFloatSemantics();
  for (int32_t v : tensor.int32_data())
    values.emplace_back(semantics, APInt(bits, static_cast<uint64_t>(v) &
                                                   ((1ull << bits) - 1)));
  return DenseElementsAttr::get(type, values);
}

SmallVector<float> narrowToF32(DenseElementsAttr value, int64_t *rounded) {
  SmallVector<float> out;
  out.reserve(value.getNumElements());
  for (APFloat v : value.getValues<APFloat>()) {
    bool lost = false;
    v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
    if (rounded && lost)
      ++*rounded;
    out.push_back(v.convertToFloat());
  }
  return out;
}

} // namespace mpt::onnx_import
