#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_E_1000(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], device float* b2 [[buffer(2)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  int v4 = ((int)((((uint)(((int)tg_group.x))) * ((uint)(250)))));
  int v6 = ((int)((((uint)(v4)) + ((uint)(((int)tg_local.x))))));
  int v7 = v6;
  int v9 = v6;
  float v10 = b1[v9];
  int v12 = v6;
  float v13 = b2[v12];
  float v14 = (v10 + v13);
  b0[v7] = v14;
}
