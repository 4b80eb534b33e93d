//===- ImporterTest.cpp - importer building blocks ------------------------===//
#include "mpt/Import/ONNX/Importer.h"
#include "../../lib/Import/ONNX/NodeImporter.h"
#include "mpt/Dialect/MPT/IR/MPTDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <fstream>
#include <functional>

#include <sys/resource.h>
#include <unistd.h>

using namespace mlir;
using namespace mpt;

namespace {

struct Capture {
  explicit Capture(MLIRContext &ctx)
      : handler(&ctx, [this](Diagnostic &d) {
          text += d.str() + "\n";
          return success();
        }) {}
  std::string text;
  ScopedDiagnosticHandler handler;
};

TEST(InputShapeBinding, Parses) {
  OnnxImportOptions options;
  EXPECT_EQ(parseInputShapeBinding("x=8,16", options), "");
  EXPECT_EQ(options.inputShapes["x"], (SmallVector<int64_t>{8, 16}));
  EXPECT_NE(parseInputShapeBinding("x", options), "");
  EXPECT_NE(parseInputShapeBinding("x=8,a", options), "");
  EXPECT_NE(parseInputShapeBinding("x=-1", options), "");
}

TEST(ElementTypes, SupportedSet) {
  MLIRContext ctx;
  EXPECT_TRUE(
      onnx_import::convertElementType(onnx::TensorProto::FLOAT, &ctx).isF32());
  EXPECT_TRUE(onnx_import::convertElementType(onnx::TensorProto::BFLOAT16, &ctx)
                  .isBF16());
  EXPECT_TRUE(isa<Float8E4M3FNType>(onnx_import::convertElementType(17, &ctx)));
  EXPECT_TRUE(isa<Float8E5M2Type>(onnx_import::convertElementType(19, &ctx)));
  EXPECT_FALSE(
      onnx_import::convertElementType(onnx::TensorProto::DOUBLE, &ctx));
  EXPECT_EQ(onnx_import::elementTypeName(onnx::TensorProto::UINT8), "UINT8");
}

TEST(ConvertTensor, RawTypedAndExternal) {
  MLIRContext ctx;
  Capture capture(ctx);
  Location loc = UnknownLoc::get(&ctx);
  bool unsupported = false;

  onnx::TensorProto typed;
  typed.set_data_type(onnx::TensorProto::FLOAT);
  typed.add_dims(2);
  typed.add_float_data(1.5f);
  typed.add_float_data(-2.0f);
  auto a = onnx_import::convertTensor(typed, ".", loc, unsupported);
  ASSERT_TRUE(succeeded(a));
  EXPECT_EQ(a->getValues<float>()[1], -2.0f);

  onnx::TensorProto half; // FLOAT16 bit patterns travel in int32_data
  half.set_data_type(onnx::TensorProto::FLOAT16);
  half.add_dims(1);
  half.add_int32_data(0x3C00); // 1.0
  auto h = onnx_import::convertTensor(half, ".", loc, unsupported);
  ASSERT_TRUE(succeeded(h));
  EXPECT_EQ(h->getValues<APFloat>()[0].convertToDouble(), 1.0);

  onnx::TensorProto wrongCount = typed;
  wrongCount.add_dims(3);
  EXPECT_TRUE(
      failed(onnx_import::convertTensor(wrongCount, ".", loc, unsupported)));
  EXPECT_NE(capture.text.find("needs 6"), std::string::npos);

  // External data: 3 int64 values at offset 8 of a file.
  SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("mpt-ext", dir));
  {
    std::ofstream f(std::string(dir) + "/weights.bin", std::ios::binary);
    int64_t values[4] = {99, 4, 5, 6};
    f.write(reinterpret_cast<const char *>(values), sizeof(values));
  }
  onnx::TensorProto ext;
  ext.set_name("w");
  ext.set_data_type(onnx::TensorProto::INT64);
  ext.add_dims(3);
  ext.set_data_location(onnx::TensorProto::EXTERNAL);
  auto *e = ext.add_external_data();
  e->set_key("location");
  e->set_value("weights.bin");
  e = ext.add_external_data();
  e->set_key("offset");
  e->set_value("8");
  auto x = onnx_import::convertTensor(ext, dir, loc, unsupported);
  ASSERT_TRUE(succeeded(x));
  EXPECT_EQ(SmallVector<int64_t>(x->getValues<int64_t>()),
            (SmallVector<int64_t>{4, 5, 6}));

  // A slice past the end of the file is refused before anything is mapped.
  {
    onnx::TensorProto past = ext;
    past.mutable_external_data(1)->set_value("16");
    auto *length = past.add_external_data();
    length->set_key("length");
    length->set_value("24");
    EXPECT_TRUE(
        failed(onnx_import::convertTensor(past, dir, loc, unsupported)));
    EXPECT_NE(
        capture.text.find("external data for initializer 'w' lies outside"),
        std::string::npos)
        << capture.text;
    EXPECT_NE(capture.text.find("(offset 16, length 24, file size 32)"),
              std::string::npos)
        << capture.text;
  }

  ext.mutable_external_data(0)->set_value("missing.bin");
  EXPECT_TRUE(failed(onnx_import::convertTensor(ext, dir, loc, unsupported)));
  EXPECT_NE(capture.text.find("missing.bin"), std::string::npos);

  // Never a file outside the model's directory.
  for (const char *outside :
       {"../weights.bin", "/etc/hostname", "a/../../weights.bin"}) {
    ext.mutable_external_data(0)->set_value(outside);
    EXPECT_TRUE(failed(onnx_import::convertTensor(ext, dir, loc, unsupported)));
    EXPECT_NE(capture.text.find("'" + std::string(outside) +
                                "' outside the model's directory"),
              std::string::npos)
        << capture.text;
  }

  onnx::TensorProto dbl;
  dbl.set_data_type(onnx::TensorProto::DOUBLE);
  unsupported = false;
  EXPECT_TRUE(failed(onnx_import::convertTensor(dbl, ".", loc, unsupported)));
  EXPECT_TRUE(unsupported);
}

TEST(OpTable, PicksTheVersionInForce) {
  const auto &table = onnx_import::OpImporterTable::get();
  const auto *r13 = table.lookup("ReduceMean", 13);
  const auto *r18 = table.lookup("ReduceMean", 18);
  ASSERT_TRUE(r13 && r18);
  EXPECT_EQ(r13->sinceVersion, 1);
  EXPECT_EQ(r18->sinceVersion, 18);
  EXPECT_EQ(r18->constantInputs, 0b10u);
  EXPECT_EQ(table.lookup("Gelu", 17), nullptr);
  EXPECT_NE(table.lookup("Gelu", 20), nullptr);
  EXPECT_FALSE(table.knows("NonZero"));
}

TEST(ImportBuffer, StatusSeparatesUnsupportedFromBroken) {
  MLIRContext ctx;
  Capture capture(ctx);
  const char *ok = R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] X) => (float[3,2] Y) { Y = Transpose(X) })";
  auto r = importOnnxBuffer(ok, true, "ok.onnxtext", ".", ctx);
  EXPECT_EQ(r.status, OnnxImportStatus::Imported);
  ASSERT_TRUE(r.module);

  const char *unsupported = R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[3,3] X) => (float[3,3] Y) { A = Det(X)  Y = NonZero(A) })";
  r = importOnnxBuffer(unsupported, true, "u.onnxtext", ".", ctx);
  EXPECT_EQ(r.status, OnnxImportStatus::Unsupported);
  EXPECT_NE(capture.text.find("unsupported op Det"), std::string::npos);
  EXPECT_NE(capture.text.find("unsupported op NonZero"), std::string::npos);

  r = importOnnxBuffer(std::string("\x0a\xff\xff", 3), false, "bad.onnx", ".",
                       ctx);
  EXPECT_EQ(r.status, OnnxImportStatus::Failed);
  EXPECT_NE(capture.text.find("truncated or corrupt"), std::string::npos);
}

/// An empty opset-17 model with graph "g".
onnx::ModelProto emptyModel() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto *opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  m.mutable_graph()->set_name("g");
  return m;
}

/// Declares a float tensor `name` of the given dims.
void floatTensorInfo(onnx::ValueInfoProto *v, const char *name,
                     std::initializer_list<int64_t> dims) {
  v->set_name(name);
  auto *t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims)
    t->mutable_shape()->add_dim()->set_dim_value(d);
}

/// A binary model: y = Add(x, w) + s-shaped Reshape, where x is a float
/// [2, 3] graph input, w a float [2, 3] parameter initializer and s an
/// int64 [2] constant initializer, both stored as raw_data.
onnx::ModelProto addModel() {
  onnx::ModelProto m = emptyModel();
  auto *g = m.mutable_graph();
  floatTensorInfo(g->add_input(), "x", {2, 3});
  floatTensorInfo(g->add_output(), "y", {2, 3});
  auto *w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(2);
  w->add_dims(3);
  w->set_raw_data(std::string(24, '\0'));
  auto *s = g->add_initializer();
  s->set_name("s");
  s->set_data_type(onnx::TensorProto::INT64);
  s->add_dims(2);
  const int64_t shape[2] = {3, 2};
  s->set_raw_data(
      std::string(reinterpret_cast<const char *>(shape), sizeof(shape)));
  auto *add = g->add_node();
  add->set_op_type("Add");
  add->set_name("add");
  add->add_input("x");
  add->add_input("w");
  add->add_output("sum");
  auto *reshape = g->add_node();
  reshape->set_op_type("Reshape");
  reshape->set_name("reshape");
  reshape->add_input("sum");
  reshape->add_input("s");
  reshape->add_output("t");
  auto *back = g->add_node();
  back->set_op_type("Reshape");
  back->set_name("back");
  back->add_input("t");
  back->add_input("s2");
  back->add_output("y");
  auto *s2 = g->add_initializer();
  *s2 = *s;
  s2->set_name("s2");
  const int64_t original[2] = {2, 3};
  s2->set_raw_data(
      std::string(reinterpret_cast<const char *>(original), sizeof(original)));
  return m;
}

/// Imports `bytes` from a file named `name` in a fresh directory; returns
/// the status, with every diagnostic as "LOCATION: MESSAGE" in `text`.
OnnxImportStatus importFile(const std::string &bytes, const std::string &name,
                            std::string *path, std::string *text) {
  SmallString<128> dir;
  EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("mpt-bad-onnx", dir));
  *path = std::string(dir) + "/" + name;
  std::ofstream(*path, std::ios::binary) << bytes;
  MLIRContext ctx;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    llvm::raw_string_ostream os(*text);
    d.getLocation().print(os);
    os << ": " << d.str() << "\n";
    return success();
  });
  OnnxImportStatus status = importOnnxFile(*path, ctx).status;
  llvm::sys::fs::remove_directories(dir);
  return status;
}

// Tests binary models with broken tensors and shapes: each fails with one
// error that names the file and the tensor or input, and nothing crashes.
TEST(ImportBuffer, BadTensorsAndShapesInBinaryModels) {
  {
    std::string path, text;
    EXPECT_EQ(
        importFile(addModel().SerializeAsString(), "good.onnx", &path, &text),
        OnnxImportStatus::Imported)
        << text;
  }
  struct Case {
    const char *what;
    std::function<void(onnx::GraphProto &)> damage;
    std::string message;
  };
  const Case cases[] = {
      {"parameter raw_data too short",
       [](onnx::GraphProto &g) {
         g.mutable_initializer(0)->set_raw_data(std::string(20, 0));
       },
       "tensor 'w' has 20 bytes of raw_data but its shape 'tensor<2x3xf32>' "
       "needs 6 x 4 bytes"},
      {"constant raw_data too long",
       [](onnx::GraphProto &g) {
         g.mutable_initializer(1)->mutable_raw_data()->append(8, 0);
       },
       "tensor 's' has 24 bytes of raw_data but its shape 'tensor<2xi64>' "
       "needs 2 x 8 bytes"},
      {"parameter dims overflowing int64",
       [](onnx::GraphProto &g) {
         auto *w = g.mutable_initializer(0);
         w->set_dims(0, int64_t(1) << 40);
         w->set_dims(1, int64_t(1) << 40);
       },
       "parameter 'w' has a bad shape: the element count of "
       "1099511627776x1099511627776 overflows int64"},
      {"constant dims overflowing int64",
       [](onnx::GraphProto &g) {
         auto *s = g.mutable_initializer(1);
         s->set_dims(0, int64_t(1) << 62);
         s->add_dims(4);
       },
       "tensor 's' has a bad shape: the element count of "
       "4611686018427387904x4 overflows int64"},
      {"constant whose dims fit but whose bytes do not",
       [](onnx::GraphProto &g) {
         g.mutable_initializer(1)->set_dims(0, int64_t(1) << 61);
       },
       "tensor 's' has 16 bytes of raw_data but its shape "
       "'tensor<2305843009213693952xi64>' "
       "needs 2305843009213693952 x 8 bytes"},
      {"negative initializer dim",
       [](onnx::GraphProto &g) { g.mutable_initializer(1)->set_dims(0, -2); },
       "tensor 's' has a bad shape: dimension 0 is negative (-2)"},
      {"negative input dim",
       [](onnx::GraphProto &g) {
         g.mutable_input(0)
             ->mutable_type()
             ->mutable_tensor_type()
             ->mutable_shape()
             ->mutable_dim(1)
             ->set_dim_value(-3);
       },
       "dimension 1 of graph input 'x' is negative (-3)"},
      {"input dims overflowing int64",
       [](onnx::GraphProto &g) {
         auto *shape = g.mutable_input(0)
                           ->mutable_type()
                           ->mutable_tensor_type()
                           ->mutable_shape();
         shape->mutable_dim(0)->set_dim_value(int64_t(1) << 62);
         shape->mutable_dim(1)->set_dim_value(int64_t(1) << 62);
       },
       "graph input 'x' has a bad shape: the element count of "
       "4611686018427387904x4611686018427387904 overflows int64"},
      {"cycle",
       [](onnx::GraphProto &g) { g.mutable_node(0)->set_input(0, "t"); },
       "the graph has a cycle: Add node 'add' uses 't' from Reshape node "
       "'reshape', which "
       "uses 'sum' from Add node 'add'"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.what);
    onnx::ModelProto m = addModel();
    c.damage(*m.mutable_graph());
    std::string path, text;
    EXPECT_NE(importFile(m.SerializeAsString(), "bad.onnx", &path, &text),
              OnnxImportStatus::Imported);
    EXPECT_NE(text.find(path), std::string::npos) << text;
    EXPECT_NE(text.find(c.message), std::string::npos) << text;
  }
}

// Tests every truncation of a binary model and a few wrong magic bytes:
// each either imports (protobuf can end at a field boundary) or fails with
// a message naming the file; nothing crashes.
TEST(ImportBuffer, TruncatedAndWrongBytes) {
  const std::string good = addModel().SerializeAsString();
  for (size_t n = 0; n < good.size(); ++n) {
    std::string path, text;
    if (importFile(good.substr(0, n), "cut.onnx", &path, &text) !=
        OnnxImportStatus::Imported) {
      EXPECT_NE(text.find(path), std::string::npos)
          << n << ": " << text; // an error, too
    }
  }
  for (const std::string &junk :
       {std::string("\x89PNG\r\n\x1a\n", 8), std::string("MPTPLAN\0", 8),
        std::string(64, '\xff')}) {
    std::string path, text;
    EXPECT_EQ(importFile(junk, "junk.onnx", &path, &text),
              OnnxImportStatus::Failed);
    EXPECT_NE(text.find(path), std::string::npos) << text;
    EXPECT_NE(text.find("not a valid ONNX model"), std::string::npos) << text;
  }
}

long maxRssKiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// Tests that a parameter whose external data is larger than 2 GiB (which
// no protobuf can hold) imports, and that its bytes are mapped from the
// file, not read into memory: the file is sparse, written only at both
// ends, and the importer's peak RSS grows by far less than its size.
TEST(ImportFile, ExternalDataAbove2GiB) {
  const int64_t count = (int64_t(1) << 29) + 16; // 2 GiB + 64 bytes of f32
  const uint64_t offset = 128;
  SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("mpt-ext-big", dir));
  const std::string dataPath = std::string(dir) + "/big.bin";
  {
    std::ofstream f(dataPath, std::ios::binary);
    const float first = 1.5f, last = -3.25f;
    f.seekp(offset);
    f.write(reinterpret_cast<const char *>(&first), 4);
    f.seekp(offset + 4 * (count - 1));
    f.write(reinterpret_cast<const char *>(&last), 4);
    ASSERT_TRUE(f.good());
  }
  onnx::ModelProto m = emptyModel();
  auto *g = m.mutable_graph();
  floatTensorInfo(g->add_input(), "x", {count});
  floatTensorInfo(g->add_output(), "y", {count});
  auto *w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(count);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [key, value] :
       {std::pair<const char *, std::string>{"location", "big.bin"},
        {"offset", std::to_string(offset)},
        {"length", std::to_string(4 * count)}}) {
    auto *e = w->add_external_data();
    e->set_key(key);
    e->set_value(value);
  }
  auto *add = g->add_node();
  add->set_op_type("Add");
  add->set_name("add");
  add->add_input("x");
  add->add_input("w");
  add->add_output("y");
  const std::string modelPath = std::string(dir) + "/big.onnx";
  {
    std::ofstream f(modelPath, std::ios::binary);
    f << m.SerializeAsString();
  }

  MLIRContext ctx;
  Capture capture(ctx);
  const long before = maxRssKiB();
  OnnxImportResult r = importOnnxFile(modelPath, ctx);
  const long grown = maxRssKiB() - before;
  ASSERT_EQ(r.status, OnnxImportStatus::Imported) << capture.text;
  auto func = *r.module->getOps<func::FuncOp>().begin();
  int param = -1;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (func.getArgAttr(i, kInitialValueAttrName))
      param = static_cast<int>(i);
  ASSERT_GE(param, 0);
  auto blob = dyn_cast<DenseResourceElementsAttr>(
      func.getArgAttr(param, kInitialValueAttrName));
  ASSERT_TRUE(blob);
  ArrayRef<char> data = blob.getData();
  ASSERT_EQ(data.size(), uint64_t(4 * count));
  float first, last;
  std::memcpy(&first, data.data(), 4);
  std::memcpy(&last, data.data() + 4 * (count - 1), 4);
  EXPECT_EQ(first, 1.5f);
  EXPECT_EQ(last, -3.25f);
  EXPECT_LT(grown, 256 * 1024) << "peak RSS grew by " << grown << " KiB";
  r.module = nullptr;
  llvm::sys::fs::remove_directories(dir);
}

} // namespace
