#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_r_5_31(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  float v9;
  int v3 = ((int)tg_local.x);
  int v6 = ((int)((((uint)(((int)tg_local.x))) * ((uint)(31)))));
  v9 = 0.0f;
  for (int v10 = 0; v10 < 31; v10++) {
    int v11 = ((int)((((uint)(v6)) + ((uint)(v10)))));
    int v12 = v11;
    float v13 = b1[v12];
    float v14 = (v9 + v13);
    v9 = v14;
  }
  b0[v3] = v9;
}
