// 3x3 stride-1 convolutions through Winograd's minimal filtering F(4x4, 3x3) (Lavin and Gray,
// "Fast Algorithms for Convolutional Neural Networks", 2015): each 4x4 block of outputs is
// A^T [(G g G^T) . (B^T d B)] A over the 6x6 input tile d that covers it, so the sum over input
// channels runs as 36 independent matrix products of (cout x cin) by (cin x tiles): 36 products
// per 16 outputs and channel pair instead of 144. Built from tensor ops (a window view, products
// with the constant matrices, a batched matmul), so every device runs it and autograd sees plain
// ops.
#pragma once

#include "kernel/tensor/tensor.hpp"

namespace tg {

// Whether conv2d(x, w) with these arguments takes the Winograd path: a float32 input and weight, a
// 3x3 kernel, stride 1, dilation 1, one group, at least 16 input and output channels and at least
// 16 output tiles over the batch (narrower products do not pay for the transforms, and fewer tiles
// read a transformed weight 4x the weight's size for little work); then WINO=1 always, WINO=0
// never, and by default when the weight does not require a gradient (NOOPT=1 aside) on a device
// that runs work groups as CPU tasks, or on a GPU-style device with at least 128 input channels.
bool winograd_applies(const Tensor& x, const Tensor& w, int64_t stride, int64_t padding, int64_t dilation,
                      int64_t groups);

// The transformed weight U = G g G^T of w (cout, cin, 3, 3), stored as (6, 6, cin, cout).
Tensor winograd_weight(const Tensor& w);

// conv2d(x, w, padding) of x (N, cin, H, W) from u = winograd_weight(w): (N, cout, oh, ow).
Tensor winograd_conv2d(const Tensor& x, const Tensor& u, int64_t padding);

} // namespace tg
