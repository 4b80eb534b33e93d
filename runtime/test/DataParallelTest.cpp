//===- DataParallelTest.cpp - the communicator, slices, all_reduce --------===//
//
// The pieces of data-parallel training (docs/distributed.md) that one
// process can check: the launcher's variables, each rank's block of the
// global batch, and the all_reduce kernel in a world of one rank. Run under
// `mpirun -np 2` (the ctest mptrt-data-parallel-mpi-test, registered when
// the runtime has MPI), the AllReduceMpi tests check the kernel's mean over
// two ranks in f32, bf16 and f16; alone they are skipped.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "mptrt/Communicator.h"
#include "mptrt/train/Batches.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>

using namespace mptrt;
using namespace mptrt::test;

namespace {

const char *const kLauncherVars[] = {"OMPI_COMM_WORLD_RANK",
                                     "OMPI_COMM_WORLD_SIZE",
                                     "OMPI_COMM_WORLD_LOCAL_RANK",
                                     "PMI_RANK",
                                     "PMI_SIZE",
                                     "MPI_LOCALRANKID",
                                     "SLURM_PROCID",
                                     "SLURM_NTASKS",
                                     "SLURM_LOCALID",
                                     "RANK",
                                     "WORLD_SIZE",
                                     "LOCAL_RANK"};

/// Clears the launcher's variables for one test, and restores them after.
class LauncherEnv : public ::testing::Test {
protected:
  void SetUp() override {
    for (const char *name : kLauncherVars) {
      const char *v = std::getenv(name);
      saved.emplace_back(name, v ? std::optional<std::string>(v) : std::nullopt);
      unsetenv(name);
    }
  }
  void TearDown() override {
    for (auto &[name, value] : saved)
      value ? setenv(name, value->c_str(), 1) : unsetenv(name);
  }
  std::vector<std::pair<const char *, std::optional<std::string>>> saved;
};

// Tests that without a launcher's variables the process is a world of one.
TEST_F(LauncherEnv, NoLauncherIsOneProcess) {
  WorldInfo w;
  std::string error;
  ASSERT_TRUE(worldFromEnvironment(&w, &error)) << error;
  EXPECT_EQ(w.rank, 0);
  EXPECT_EQ(w.size, 1);
  EXPECT_EQ(w.source, "");
  EXPECT_FALSE(w.mpiLauncher);
}

// Tests that mpirun's variables come first, with the local rank, and that
// torchrun's are read when they are the only ones.
TEST_F(LauncherEnv, ReadsMpirunBeforeTorchrun) {
  setenv("RANK", "3", 1);
  setenv("WORLD_SIZE", "8", 1);
  setenv("LOCAL_RANK", "1", 1);
  WorldInfo w;
  std::string error;
  ASSERT_TRUE(worldFromEnvironment(&w, &error)) << error;
  EXPECT_EQ(w.rank, 3);
  EXPECT_EQ(w.size, 8);
  EXPECT_EQ(w.localRank, 1);
  EXPECT_FALSE(w.mpiLauncher);
  EXPECT_EQ(w.source, "RANK/WORLD_SIZE (torchrun)");

  setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  ASSERT_TRUE(worldFromEnvironment(&w, &error)) << error;
  EXPECT_EQ(w.rank, 1);
  EXPECT_EQ(w.size, 2);
  EXPECT_TRUE(w.mpiLauncher);
  EXPECT_EQ(w.source, "OMPI_COMM_WORLD_RANK/SIZE (mpirun)");
}

// Tests that srun's variables are read.
TEST_F(LauncherEnv, ReadsSlurm) {
  setenv("SLURM_PROCID", "5", 1);
  setenv("SLURM_NTASKS", "6", 1);
  setenv("SLURM_LOCALID", "2", 1);
  WorldInfo w;
  std::string error;
  ASSERT_TRUE(worldFromEnvironment(&w, &error)) << error;
  EXPECT_EQ(w.rank, 5);
  EXPECT_EQ(w.size, 6);
  EXPECT_EQ(w.localRank, 2);
  EXPECT_TRUE(w.mpiLauncher);
}

// Tests that a rank outside the world and a value that is not a number are
// refused, naming the variable.
TEST_F(LauncherEnv, RefusesMalformedValues) {
  WorldInfo w;
  std::string error;
  setenv("RANK", "2", 1);
  setenv("WORLD_SIZE", "2", 1);
  EXPECT_FALSE(worldFromEnvironment(&w, &error));
  EXPECT_EQ(error, "the launcher's RANK=2 is not a rank of WORLD_SIZE=2");
  setenv("RANK", "one", 1);
  EXPECT_FALSE(worldFromEnvironment(&w, &error));
  EXPECT_EQ(error, "the launcher's RANK='one' is not a whole number from 0 to 16777216");
}

/// Rows 0, 1, ..., n - 1 of one f32 column each.
train::Array rows(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = static_cast<float>(i);
  return train::Array::of(MPTRT_F32, {n, 1}, v.data(), v.size() * 4, "rows.npy");
}

float firstRow(const train::BatchedInput &in, int64_t b) {
  float f;
  std::memcpy(&f, in.batch(b), 4);
  return f;
}

// Tests each rank's block of the global batches: 2 ranks, B = 2, 9 rows
// make 2 global batches of 4 rows (the last row in none); rank 0 trains on
// rows 0-1 and 4-5, rank 1 on rows 2-3 and 6-7.
TEST(DataSlice, EachRankTakesItsBlockOfTheGlobalBatch) {
  TensorInfo info{MPTRT_F32, {2, 1}};
  std::string error;
  for (int rank : {0, 1}) {
    train::BatchedInput in;
    ASSERT_TRUE(train::cutBatches("x", rows(9), info, &in, &error, {rank, 2})) << error;
    EXPECT_EQ(in.batches, 2);
    EXPECT_EQ(in.unusedRows, 1);
    EXPECT_EQ(firstRow(in, 0), 2.0f * rank);
    EXPECT_EQ(firstRow(in, 1), 4.0f + 2.0f * rank);
  }
  // One process: batches of 2 rows one after the other.
  train::BatchedInput one;
  ASSERT_TRUE(train::cutBatches("x", rows(9), info, &one, &error)) << error;
  EXPECT_EQ(one.batches, 4);
  EXPECT_EQ(firstRow(one, 1), 2.0f);
}

// Tests that fewer rows than one global batch are refused, also an array
// of exactly one per-rank batch, and that a 0-d input is every rank's.
TEST(DataSlice, TooFewRowsAndScalars) {
  TensorInfo info{MPTRT_F32, {2, 1}};
  std::string error;
  train::BatchedInput in;
  EXPECT_FALSE(train::cutBatches("x", rows(3), info, &in, &error, {0, 2}));
  EXPECT_NE(error.find("fewer rows than one global batch of 2 ranks x 2 rows = 4"),
            std::string::npos)
      << error;
  EXPECT_FALSE(train::cutBatches("x", rows(2), info, &in, &error, {1, 2}));

  const float s = 7;
  TensorInfo scalar{MPTRT_F32, {}};
  ASSERT_TRUE(train::cutBatches("s", train::Array::of(MPTRT_F32, {}, &s, 4, "s.npy"), scalar, &in,
                                &error, {1, 4}))
      << error;
  EXPECT_EQ(in.batches, 1);
  EXPECT_EQ(firstRow(in, 0), 7.0f);
}

/// Runs a one-kernel plan, failing the test if it does not run.
std::vector<HostTensor> run(const std::string &kind, const std::vector<HostTensor> &operands,
                            const std::vector<HostTensor> &results,
                            std::vector<Attribute> attrs = {}) {
  KernelRun r = runKernel(kind, operands, results, std::move(attrs));
  EXPECT_TRUE(r.ok) << kind << ": " << r.error;
  return r.ok ? r.outputs : std::vector<HostTensor>();
}

/// The world this process is in, or null when the launcher's world cannot
/// be served.
Communicator *world() {
  std::string error;
  return processCommunicator(&error);
}

// Tests all_reduce in a world of one rank: each result is its operand, bit
// for bit, in every float type.
TEST(AllReduce, OneRankCopiesItsOperands) {
  Communicator *comm = world();
  ASSERT_NE(comm, nullptr);
  if (comm->size() != 1)
    GTEST_SKIP() << "under a launcher of " << comm->size() << " ranks";
  std::mt19937 rng(26);
  std::vector<HostTensor> in = {randomTensor(DType::F32, {3, 5}, rng),
                                randomTensor(DType::BF16, {7}, rng),
                                randomTensor(DType::F16, {2, 2}, rng)};
  std::vector<HostTensor> out = run("all_reduce", in, in);
  ASSERT_EQ(out.size(), 3u);
  for (size_t i = 0; i < in.size(); ++i)
    EXPECT_EQ(out[i].bytes, in[i].bytes) << "operand " << i;
}

// Tests that a result whose type is not its operand's is refused at load.
TEST(AllReduce, ResultTypeMustBeTheOperands) {
  HostTensor a(DType::F32, {4}), b(DType::BF16, {4});
  KernelRun r = runKernel("all_reduce", {a}, {b});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("must have its operand's type 4xf32"), std::string::npos) << r.error;
  r = runKernel("all_reduce", {a, a}, {a});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("one result per operand"), std::string::npos) << r.error;
}

/// world_size = n.
std::vector<Attribute> worldSize(int64_t n) { return {Attribute::makeInt("world_size", n)}; }

// Tests ZeRO-1's kernels in a world of one rank: a tensor's one shard holds
// its elements, so each result holds its operand's bytes.
TEST(Sharding, OneRankCopies) {
  Communicator *comm = world();
  ASSERT_NE(comm, nullptr);
  if (comm->size() != 1)
    GTEST_SKIP() << "under a launcher of " << comm->size() << " ranks";
  std::mt19937 rng(26);
  std::vector<HostTensor> whole = {randomTensor(DType::F32, {3, 5}, rng),
                                   randomTensor(DType::BF16, {7}, rng)};
  std::vector<HostTensor> shards = {HostTensor(DType::F32, {15}), HostTensor(DType::BF16, {7})};
  std::vector<HostTensor> scattered = run("reduce_scatter", whole, shards, worldSize(1));
  std::vector<HostTensor> gathered = run("all_gather", scattered, whole, worldSize(1));
  std::vector<HostTensor> shard = run("shard", {whole[0]}, {shards[0]}, worldSize(1));
  ASSERT_EQ(scattered.size(), 2u);
  ASSERT_EQ(gathered.size(), 2u);
  ASSERT_EQ(shard.size(), 1u);
  for (size_t i = 0; i < whole.size(); ++i) {
    EXPECT_EQ(scattered[i].bytes, whole[i].bytes) << "operand " << i;
    EXPECT_EQ(gathered[i].bytes, whole[i].bytes) << "operand " << i;
  }
  EXPECT_EQ(shard[0].bytes, whole[0].bytes);
}

// Tests that a plan sharded over more ranks than the world has is refused
// at load, saying how to compile it, and that a shard's type is checked.
TEST(Sharding, WorldSizeAndShapesAreChecked) {
  Communicator *comm = world();
  ASSERT_NE(comm, nullptr);
  if (comm->size() != 1)
    GTEST_SKIP() << "under a launcher of " << comm->size() << " ranks";
  HostTensor w(DType::F32, {3, 5}), half(DType::F32, {8});
  KernelRun r = runKernel("shard", {w}, {half}, worldSize(2));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("over 2 ranks (--shard-optimizer-state=2), but this world has 1: "
                         "compile it with --shard-optimizer-state=1"),
            std::string::npos)
      << r.error;
  r = runKernel("reduce_scatter", {w}, {HostTensor(DType::F32, {7})}, worldSize(2));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("must be the shard of 3x5xf32 over 2 ranks, a 1-D tensor of 8 elements"),
            std::string::npos)
      << r.error;
}

// Tests the mean over two ranks (run under mpirun -np 2): rank r's operand
// element i is (r + 1) * v_i, so the mean is 1.5 * v_i, rounded once into
// the operand's type from the f32 sum; every rank gets the same bytes.
TEST(AllReduceMpi, MeanOverTwoRanks) {
  Communicator *comm = world();
  ASSERT_NE(comm, nullptr);
  if (comm->size() != 2)
    GTEST_SKIP() << "needs mpirun -np 2 (world of " << comm->size() << ")";
  const int r = comm->rank();
  std::mt19937 rng(7); // the same v on both ranks
  std::vector<HostTensor> in;
  std::vector<HostTensor> v;
  for (DType t : {DType::F32, DType::BF16, DType::F16}) {
    HostTensor base = randomTensor(DType::F32, {33}, rng, -3, 3);
    HostTensor mine(t, {33});
    for (int64_t i = 0; i < 33; ++i)
      mine.set(i, (r + 1) * base.get(i));
    in.push_back(mine);
    v.push_back(base);
  }
  std::vector<HostTensor> out = run("all_reduce", in, in);
  ASSERT_EQ(out.size(), 3u);
  for (size_t k = 0; k < in.size(); ++k)
    for (int64_t i = 0; i < 33; ++i) {
      // Each rank's operand as stored, summed in f32, divided by 2.
      const float a = static_cast<float>(HostTensor(in[k]).get(i)) / (r + 1);
      const float rank0 = static_cast<float>(fromValues(in[k].dtype, {1}, {a}).get(0));
      const float rank1 = static_cast<float>(fromValues(in[k].dtype, {1}, {2.0 * a}).get(0));
      const float mean = (rank0 + rank1) / 2.0f;
      const double expected = fromValues(in[k].dtype, {1}, {mean}).get(0);
      EXPECT_EQ(out[k].get(i), expected) << "operand " << k << " element " << i;
    }
  // The same bytes on both ranks.
  std::vector<uint64_t> sums;
  std::string error;
  uint64_t mine = 0;
  for (const HostTensor &t : out)
    for (uint8_t byte : t.bytes)
      mine = mine * 1099511628211ull + byte;
  ASSERT_TRUE(comm->allGather(mine, &sums, &error)) << error;
  EXPECT_EQ(sums[0], sums[1]);
}

// Tests ZeRO-1's kernels over two ranks (run under mpirun -np 2): rank r's
// operand element i is (r + 1) * v_i. reduce_scatter gives rank r the
// elements [r S, r S + S) of the mean 1.5 * v (zero past the end: 11
// elements make shards of 6); shard gives it those of its own operand;
// all_gather of every rank's shard rebuilds the whole tensor; all_finite
// and global_norm with over_ranks cover both ranks' operands.
TEST(ShardingMpi, OverTwoRanks) {
  Communicator *comm = world();
  ASSERT_NE(comm, nullptr);
  if (comm->size() != 2)
    GTEST_SKIP() << "needs mpirun -np 2 (world of " << comm->size() << ")";
  const int r = comm->rank();
  std::mt19937 rng(7); // the same v on both ranks
  HostTensor v = randomTensor(DType::F32, {11}, rng, -3, 3);
  HostTensor mine(DType::F32, {11});
  for (int64_t i = 0; i < 11; ++i)
    mine.set(i, (r + 1) * v.get(i));
  const int64_t S = 6;
  std::vector<HostTensor> scattered =
      run("reduce_scatter", {mine}, {HostTensor(DType::F32, {S})}, worldSize(2));
  std::vector<HostTensor> shard = run("shard", {mine}, {HostTensor(DType::F32, {S})}, worldSize(2));
  ASSERT_EQ(scattered.size(), 1u);
  ASSERT_EQ(shard.size(), 1u);
  for (int64_t k = 0; k < S; ++k) {
    const int64_t i = r * S + k;
    const float a = i < 11 ? static_cast<float>(v.get(i)) : 0.0f;
    EXPECT_EQ(scattered[0].get(k), (a + 2.0f * a) / 2.0f) << "rank " << r << " element " << k;
    EXPECT_EQ(shard[0].get(k), i < 11 ? mine.get(i) : 0.0) << "rank " << r << " element " << k;
  }
  // Each rank's shard of (r + 1) * v, gathered: rank 0's elements of v,
  // then rank 1's elements of 2 v.
  std::vector<HostTensor> gathered =
      run("all_gather", shard, {HostTensor(DType::F32, {11})}, worldSize(2));
  ASSERT_EQ(gathered.size(), 1u);
  for (int64_t i = 0; i < 11; ++i)
    EXPECT_EQ(gathered[0].get(i), (i < S ? 1 : 2) * v.get(i)) << "element " << i;

  // A non-finite element on rank 1 only: both ranks see it.
  HostTensor flagged = shard[0];
  if (r == 1)
    flagged.set(2, std::numeric_limits<double>::infinity());
  std::vector<Attribute> overRanks = {Attribute::makeInt("over_ranks", 1)};
  std::vector<HostTensor> finite =
      run("all_finite", {flagged}, {HostTensor(DType::I1, {})}, overRanks);
  ASSERT_EQ(finite.size(), 1u);
  EXPECT_EQ(finite[0].get(0), 0.0) << "rank " << r;
  std::vector<HostTensor> norm =
      run("global_norm", {shard[0]}, {HostTensor(DType::F32, {})}, overRanks);
  ASSERT_EQ(norm.size(), 1u);
  double sum = 0;
  for (int64_t i = 0; i < 11; ++i)
    sum += (i < S ? 1 : 4) * v.get(i) * v.get(i);
  // The f64 sums of squares, added in another order: within f32 rounding.
  EXPECT_NEAR(norm[0].get(0), std::sqrt(sum), 1e-6 * std::sqrt(sum));
}

} // namespace
