//===- dump.cpp - kernel outputs on fixed inputs, for a bit-for-bit diff --===//
//
// Runs the CPU kernels whose code the kernels/ reorganisation moves (every
// unary and unary_grad kind, the binary kinds, lr_schedule,
// update_loss_scale, sgd_update and adamw_update, in f32, bf16, f16 and the
// integer types where they apply) on fixed inputs and writes every output's
// bytes to $OUT. scripts/kernel-bits.sh builds it against two runtimes and
// compares the files: a refactoring that claims to keep results bit for bit
// must leave them identical. Inputs only, no tolerance: any changed bit
// fails.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include <cstdio>
using namespace mptrt;
using namespace mptrt::test;
using Shape = std::vector<int64_t>;
int main() {
  std::vector<double> xs;
  for (int i = -40000; i <= 40000; ++i)
    xs.push_back(i * 0.00025 * 3.3); // [-9.9, 9.9]
  for (double v : {0.0, -0.0, 1e-30, -1e-30, 88.0, -88.0, 100.0, -100.0, 1e-8,
                   0.5, 1.0, -0.5})
    xs.push_back(v);
  const Shape shape = {static_cast<int64_t>(xs.size())};
  FILE *f = std::fopen(getenv("OUT"), "wb");
  auto put = [&](const KernelRun &r, const char *what) {
    if (!r.ok) {
      std::fprintf(stderr, "%s: %s\n", what, r.error.c_str());
      std::exit(1);
    }
    std::fwrite(r.outputs[0].bytes.data(), 1, r.outputs[0].bytes.size(), f);
  };
  using A = Attribute;
  std::vector<std::pair<std::string, std::vector<A>>> fwd = {
      {"sqrt", {}},
      {"exp", {}},
      {"log", {}},
      {"erf", {}},
      {"tanh", {}},
      {"sigmoid", {}},
      {"relu", {}},
      {"neg", {}},
      {"abs", {}},
      {"leaky_relu", {A::makeFloat("alpha", 0.2)}},
      {"gelu", {}},
      {"gelu", {A::makeString("approximate", "tanh")}},
      {"clip", {A::makeFloat("min", -0.5), A::makeFloat("max", 1.25)}},
      {"clip", {}}};
  int n = 0;
  for (DType t : {DType::F32, DType::BF16, DType::F16}) {
    HostTensor x(t, shape), dy(t, shape);
    for (size_t i = 0; i < xs.size(); ++i) {
      x.set(i, xs[i]);
      dy.set(i, 0.37 + 0.001 * (i % 977));
    }
    for (auto &[k, a] : fwd) {
      put(runKernel(k, {x}, {HostTensor(t, shape)}, a), k.c_str());
      ++n;
    }
    std::vector<std::pair<std::string, std::vector<A>>> bwd = {
        {"relu", {}},
        {"leaky_relu", {}},
        {"leaky_relu", {A::makeFloat("alpha", 0.25)}},
        {"gelu", {}},
        {"gelu_tanh", {}},
        {"sigmoid", {}},
        {"tanh", {}},
        {"exp", {}},
        {"log", {}},
        {"sqrt", {}},
        {"erf", {}},
        {"abs", {}},
        {"clip", {A::makeFloat("min", -0.5), A::makeFloat("max", 1.0)}}};
    for (auto &[k, a] : bwd) {
      auto attrs = a;
      attrs.push_back(A::makeString("kind", k));
      put(runKernel("unary_grad", {x, dy}, {HostTensor(t, shape)}, attrs),
          k.c_str());
      ++n;
    }
  }
  for (DType t : {DType::I32, DType::I64}) {
    HostTensor x(t, shape);
    for (size_t i = 0; i < xs.size(); ++i)
      x.set(i, std::floor(xs[i] * 1000));
    for (const char *k : {"relu", "neg", "abs"}) {
      put(runKernel(k, {x}, {HostTensor(t, shape)}), k);
      ++n;
    }
    put(runKernel("clip", {x}, {HostTensor(t, shape)},
                  {A::makeFloat("min", -2.5), A::makeFloat("max", 3.7)}),
        "clipi");
    ++n;
  }
  // Binary, f32 and i64, with broadcasting of a row.
  {
    const int64_t N = 4001;
    HostTensor a(DType::F32, {N}), b(DType::F32, {N}), ai(DType::I64, {N}),
        bi(DType::I64, {N});
    for (int64_t i = 0; i < N; ++i) {
      double x = (i - 2000) * 0.0037, y = ((i * 7919) % 4001 - 2000) * 0.0023;
      if (i % 97 == 0)
        y = NAN;
      a.set(i, x);
      b.set(i, y);
      ai.set(i, (i * 104729) % 2001 - 1000);
      bi.set(i, (i * 7) % 23 - 11);
    }
    for (const char *k : {"add", "sub", "mul", "div", "pow", "max", "min"}) {
      put(runKernel(k, {a, b}, {HostTensor(DType::F32, {N})}), k);
      ++n;
      put(runKernel(k, {ai, bi}, {HostTensor(DType::I64, {N})}), k);
      ++n;
    }
    for (const char *k : {"equal", "less", "greater"}) {
      put(runKernel(k, {a, b}, {HostTensor(DType::I1, {N})}), k);
      ++n;
      put(runKernel(k, {ai, bi}, {HostTensor(DType::I1, {N})}), k);
      ++n;
    }
  }
  // lr_schedule at many steps, update_loss_scale in many states.
  for (int64_t s = 0; s < 3000; s += 7) {
    HostTensor st(DType::I64, {});
    st.set(0, s);
    put(runKernel("lr_schedule", {st}, {HostTensor(DType::F32, {})},
                  {A::makeString("schedule", "warmup_cosine"),
                   A::makeFloat("lr", 3e-4), A::makeInt("warmup_steps", 100),
                   A::makeInt("total_steps", 2000),
                   A::makeFloat("min_lr", 1e-5)}),
        "lr");
    ++n;
  }
  for (int t = 0; t < 40; ++t) {
    HostTensor sc(DType::F32, {}), tr(DType::I64, {}), fin(DType::I1, {});
    sc.set(0, t == 39 ? 3e38 : 65536.0 / (1 + t));
    tr.set(0, t % 5 == 0 ? 1999 : t);
    fin.set(0, t % 3 != 0);
    KernelRun r =
        runKernel("update_loss_scale", {sc, tr, fin},
                  {HostTensor(DType::F32, {}), HostTensor(DType::I64, {})});
    put(r, "uls");
    std::fwrite(r.outputs[1].bytes.data(), 1, 8, f);
    ++n;
  }
  // sgd_update and adamw_update over a range of states.
  {
    const int64_t N = 5003;
    HostTensor w(DType::F32, {N}), g(DType::F32, {N}), gb(DType::BF16, {N}),
        m(DType::F32, {N}), v(DType::F32, {N}), wb(DType::BF16, {N});
    for (int64_t i = 0; i < N; ++i) {
      w.set(i, std::sin(i * 0.37) * 0.2);
      g.set(i, std::cos(i * 0.11) * 1e-2 * (1 + i % 7));
      gb.set(i, std::cos(i * 0.13) * 1e-1);
      m.set(i, std::sin(i * 0.05) * 1e-3);
      v.set(i, 1e-6 * (1 + (i % 13)));
      wb.set(i, std::sin(i * 0.21));
    }
    auto s0 = [](DType t, double x) {
      HostTensor h(t, {});
      h.set(0, x);
      return h;
    };
    for (int64_t step : {0, 1, 7, 1000})
      for (int variant = 0; variant < 4; ++variant) {
        std::vector<A> at = {
            A::makeFloat("weight_decay", variant & 1 ? 0.01 : 0.0)};
        std::vector<HostTensor> ops = {w, variant & 2 ? gb : g};
        std::vector<HostTensor> res = {HostTensor(DType::F32, {N})};
        if (variant >= 2) {
          at.push_back(A::makeFloat("momentum", 0.9));
          at.push_back(A::makeFloat("dampening", variant == 3 ? 0.0 : 0.1));
          at.push_back(A::makeInt("nesterov", variant == 3));
          ops.push_back(m);
          res.push_back(HostTensor(DType::F32, {N}));
        }
        ops.push_back(s0(DType::I64, step));
        ops.push_back(s0(DType::F32, 0.05));
        ops.push_back(s0(DType::I1, 1));
        KernelRun r = runKernel("sgd_update", ops, res, at);
        put(r, "sgd");
        if (variant >= 2)
          std::fwrite(r.outputs[1].bytes.data(), 1, r.outputs[1].bytes.size(),
                      f);
        ++n;
        for (int master = 0; master < 3; ++master) {
          std::vector<A> aa = {
              A::makeFloat("weight_decay", variant & 1 ? 0.1 : 0.0),
              A::makeFloat("beta1", variant & 2 ? 0.9 : 0.2)};
          std::vector<HostTensor> ao = {master ? wb : w,
                                        g,
                                        m,
                                        v,
                                        s0(DType::I64, step),
                                        s0(DType::F32, 3e-3),
                                        s0(DType::I1, 1)};
          if (master == 2) {
            aa.push_back(A::makeInt("stochastic_rounding", 1));
            aa.push_back(A::makeInt("stream", 5));
            ao.push_back(s0(DType::I64, 1234));
          }
          KernelRun ra = runKernel(
              "adamw_update", ao,
              {HostTensor(master ? DType::BF16 : DType::F32, {N}),
               HostTensor(DType::F32, {N}), HostTensor(DType::F32, {N})},
              aa);
          put(ra, "adamw");
          for (int o = 1; o < 3; ++o)
            std::fwrite(ra.outputs[o].bytes.data(), 1,
                        ra.outputs[o].bytes.size(), f);
          ++n;
        }
      }
  }
  std::fclose(f);
  std::printf("%d kernels, %zu elements each\n", n, xs.size());
}
