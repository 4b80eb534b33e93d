//===- ImporterTest.cpp - importer building blocks ------------------------===//
#include "mpt/Import/ONNX/Importer.h"
#include "../../lib/Import/ONNX/NodeImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <fstream>

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
  EXPECT_TRUE(onnx_import::convertElementType(onnx::TensorProto::FLOAT, &ctx).isF32());
  EXPECT_TRUE(onnx_import::convertElementType(onnx::TensorProto::BFLOAT16, &ctx).isBF16());
  EXPECT_TRUE(isa<Float8E4M3FNType>(onnx_import::convertElementType(17, &ctx)));
  EXPECT_TRUE(isa<Float8E5M2Type>(onnx_import::convertElementType(19, &ctx)));
  EXPECT_FALSE(onnx_import::convertElementType(onnx::TensorProto::DOUBLE, &ctx));
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
  EXPECT_TRUE(failed(onnx_import::convertTensor(wrongCount, ".", loc, unsupported)));
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

  ext.mutable_external_data(0)->set_value("missing.bin");
  EXPECT_TRUE(failed(onnx_import::convertTensor(ext, dir, loc, unsupported)));
  EXPECT_NE(capture.text.find("missing.bin"), std::string::npos);

  // Never a file outside the model's directory.
  for (const char *outside : {"../weights.bin", "/etc/hostname", "a/../../weights.bin"}) {
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
  EXPECT_FALSE(table.knows("LSTM"));
}

TEST(ImportBuffer, StatusSeparatesUnsupportedFromBroken) {
  MLIRContext ctx;
  Capture capture(ctx);
  const char *ok = R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] X) => (float[3,2] Y) { Y = Transpose(X) })";
  auto r = importOnnxBuffer(ok, true, "ok.onnxtext", ".", ctx);
  EXPECT_EQ(r.status, OnnxImportStatus::Imported);
  ASSERT_TRUE(r.module);

  const char *lstm = R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] X) => (float[2,3] Y) { A = Cos(X)  Y = Sin(A) })";
  r = importOnnxBuffer(lstm, true, "u.onnxtext", ".", ctx);
  EXPECT_EQ(r.status, OnnxImportStatus::Unsupported);
  EXPECT_NE(capture.text.find("unsupported op Cos"), std::string::npos);
  EXPECT_NE(capture.text.find("unsupported op Sin"), std::string::npos);

  r = importOnnxBuffer(std::string("\x0a\xff\xff", 3), false, "bad.onnx", ".", ctx);
  EXPECT_EQ(r.status, OnnxImportStatus::Failed);
  EXPECT_NE(capture.text.find("truncated or corrupt"), std::string::npos);
}

} // namespace
