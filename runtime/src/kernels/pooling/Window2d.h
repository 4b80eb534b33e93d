//===- Window2d.h - a 2-D pooling window's positions -------------*- C++ -*-===//
//
// The window of output position (oh, ow) of a 2-D pooling (PoolParams with
// spatialRank 2): input positions (oh * stride - padBegin + kh * dilation,
// ow * stride - padBegin + kw * dilation), visited row-major. Shared by the
// channels-first plane walks (PoolingKernels.cpp) and the channels-last
// kernels (PoolingChannelsLast.cpp), so that both visit the same positions
// in the same order.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_KERNELS_POOLING_WINDOW2D_H
#define MPTRT_SRC_KERNELS_POOLING_WINDOW2D_H

#include "ops/OpParams.h"

#include <cstdint>

namespace mptrt {
namespace rt {
namespace cpu {

class Window2d {
public:
  explicit Window2d(const PoolParams &p)
      : H(p.in[0]), W(p.in[1]), KH(p.kernel[0]), KW(p.kernel[1]), SH(p.strides[0]),
        SW(p.strides[1]), DH(p.dilations[0]), DW(p.dilations[1]), padH(p.padsBegin[0]),
        padW(p.padsBegin[1]), endH(H + p.padsEnd[0]), endW(W + p.padsEnd[1]) {}

  /// f(h * W + w) for each position of (oh, ow)'s window inside the input,
  /// row-major.
  template <typename F> void forInside(int64_t oh, int64_t ow, F f) const {
    const int64_t h0 = oh * SH - padH, w0 = ow * SW - padW;
    for (int64_t kh = 0; kh < KH; ++kh) {
      const int64_t h = h0 + kh * DH;
      if (h < 0 || h >= H)
        continue;
      for (int64_t kw = 0; kw < KW; ++kw) {
        const int64_t w = w0 + kw * DW;
        if (w >= 0 && w < W)
          f(h * W + w);
      }
    }
  }

  /// How many of (oh, ow)'s window positions are inside the input, and how
  /// many inside the explicitly padded extent [-padBegin, in + padEnd).
  void count(int64_t oh, int64_t ow, int64_t *valid, int64_t *padded) const {
    const int64_t h0 = oh * SH - padH, w0 = ow * SW - padW;
    *valid = *padded = 0;
    for (int64_t kh = 0; kh < KH; ++kh) {
      const int64_t h = h0 + kh * DH;
      const bool hIn = h >= 0 && h < H, hPadded = h >= -padH && h < endH;
      for (int64_t kw = 0; kw < KW; ++kw) {
        const int64_t w = w0 + kw * DW;
        *padded += hPadded && w >= -padW && w < endW;
        *valid += hIn && w >= 0 && w < W;
      }
    }
  }

private:
  int64_t H, W, KH, KW, SH, SW, DH, DW, padH, padW, endH, endW;
};

} // namespace cpu
} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_KERNELS_POOLING_WINDOW2D_H
