#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_E_257(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], device float* b2 [[buffer(2)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  int v3 = ((int)tg_group.x);
  int v6 = ((int)tg_group.x);
  float v7 = b1[v6];
  int v9 = ((int)tg_group.x);
  float v10 = b2[v9];
  float v11 = (v7 * v10);
  float v12 = (v11 + v7);
  bool v13 = (0.0f < v12);
  float v14 = (v13 ? v12 : 0.0f);
  b0[v3] = v14;
}
