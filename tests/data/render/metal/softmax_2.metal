#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_E_16_50(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], device float* b2 [[buffer(2)]], device float* b3 [[buffer(3)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  int v4 = ((int)((((uint)(((int)tg_group.x))) * ((uint)(50)))));
  int v8 = ((int)tg_group.x);
  float v9 = b2[v8];
  int v12 = ((int)tg_group.x);
  float v13 = b3[v12];
  for (int v14 = 0; v14 < 50; v14++) {
    int v15 = ((int)((((uint)(v4)) + ((uint)(v14)))));
    int v16 = v15;
    int v17 = v15;
    float v18 = b1[v17];
    float v19 = (v18 - v9);
    float v20 = (v19 * 1.44269502f);
    float v21 = exp2(v20);
    float v22 = (v21 / v13);
    b0[v16] = v22;
  }
}
