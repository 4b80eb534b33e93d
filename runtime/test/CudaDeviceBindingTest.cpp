//===- CudaDeviceBindingTest.cpp - inputs and outputs in device memory ----===//
//
// mptrt_bind_input_device and mptrt_read_output_device on the CUDA backend:
// an input bound from a cudaMalloc'd buffer and an output read into one
// give the bits of the host calls (the Python package binds PyTorch CUDA
// tensors this way, through DLPack, so they never leave the GPU).
//
// Needs a GPU: skipped, saying why, without one.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "MlpPlan.h"
#include "PlanBuilder.h"
#include "mptrt.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace mptrt {
namespace test {
namespace {

TEST(CudaDeviceBinding, SameBitsAsHostBinding) {
  const std::string why = cudaUnusableReason();
  if (!why.empty())
    GTEST_SKIP() << why;
  Mlp mlp(16, 32, 64, 8, 5);
  const std::vector<uint8_t> bytes = plan::serializePlan(mlp.plan());
  mptrt_model *host = nullptr, *device = nullptr;
  ASSERT_EQ(mptrt_model_load_memory(bytes.data(), bytes.size(), "cuda", &host), MPTRT_OK)
      << mptrt_last_error();
  ASSERT_EQ(mptrt_model_load_memory(bytes.data(), bytes.size(), "cuda", &device), MPTRT_OK)
      << mptrt_last_error();
  const std::vector<float> x = randomFloats(16 * 32, 7);
  const int64_t shape[2] = {16, 32};
  const size_t xBytes = x.size() * 4, yBytes = 16 * 8 * 4;
  void *xDevice = nullptr, *yDevice = nullptr;
  ASSERT_EQ(cudaMalloc(&xDevice, xBytes), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&yDevice, yBytes), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(xDevice, x.data(), xBytes, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemset(yDevice, 0xff, yBytes), cudaSuccess);

  ASSERT_EQ(mptrt_bind_input(host, "x", MPTRT_F32, shape, 2, x.data(), xBytes), MPTRT_OK);
  ASSERT_EQ(mptrt_bind_input_device(device, "x", MPTRT_F32, shape, 2, xDevice, xBytes), MPTRT_OK)
      << mptrt_last_error();
  ASSERT_EQ(mptrt_run(host, "forward"), MPTRT_OK) << mptrt_last_error();
  ASSERT_EQ(mptrt_run(device, "forward"), MPTRT_OK) << mptrt_last_error();
  std::vector<float> y(16 * 8), fromDevice(16 * 8);
  ASSERT_EQ(mptrt_read_output(host, "y", y.data(), yBytes), MPTRT_OK);
  ASSERT_EQ(mptrt_read_output_device(device, "y", yDevice, yBytes), MPTRT_OK) << mptrt_last_error();
  ASSERT_EQ(cudaMemcpy(fromDevice.data(), yDevice, yBytes, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(std::memcmp(y.data(), fromDevice.data(), yBytes), 0);
  cudaFree(xDevice);
  cudaFree(yDevice);
  mptrt_model_free(host);
  mptrt_model_free(device);
}

} // namespace
} // namespace test
} // namespace mptrt
