#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_scalars_gated_store(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], constant float& s0 [[buffer(2)]], constant long& s1 [[buffer(3)]], constant int& s2 [[buffer(4)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  float v6 = ((float)(s1));
  int v7 = ((int)tg_group.x);
  float v8 = b1[v7];
  float v9 = (v8 * s0);
  float v10 = (v9 + v6);
  bool v11 = (((int)tg_group.x) < s2);
  int v12 = ((int)tg_group.x);
  if (v11) b0[v12] = v10;
}
