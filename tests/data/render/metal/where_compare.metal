#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_E_128(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], device float* b2 [[buffer(2)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  int v3 = ((int)tg_local.x);
  int v5 = ((int)tg_local.x);
  float v6 = b1[v5];
  int v8 = ((int)tg_local.x);
  float v9 = b2[v8];
  bool v10 = (v6 < v9);
  float v12 = (v9 * 2.0f);
  float v13 = (v10 ? v6 : v12);
  b0[v3] = v13;
}
