#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_r_32_100(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  float v8;
  int v3 = ((int)tg_local.x);
  v8 = (-INFINITY);
  for (int v9 = 0; v9 < 100; v9++) {
    int v10 = ((int)((((uint)(v9)) * ((uint)(32)))));
    int v11 = ((int)((((uint)(v10)) + ((uint)(((int)tg_local.x))))));
    int v12 = v11;
    float v13 = b1[v12];
    float v14 = (v8 != v8 ? v8 : (v8 > v13 ? v8 : v13));
    v8 = v14;
  }
  b0[v3] = v8;
}
