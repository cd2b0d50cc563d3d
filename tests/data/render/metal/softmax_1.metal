#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_r_16_1_50(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], device float* b2 [[buffer(2)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  float v13;
  int v3 = ((int)tg_local.x);
  int v6 = ((int)((((uint)(((int)tg_local.x))) * ((uint)(50)))));
  int v9 = ((int)tg_local.x);
  float v10 = b2[v9];
  v13 = 0.0f;
  for (int v14 = 0; v14 < 50; v14++) {
    int v15 = ((int)((((uint)(v6)) + ((uint)(v14)))));
    int v16 = v15;
    float v17 = b1[v16];
    float v18 = (v17 - v10);
    float v19 = (v18 * 1.44269502f);
    float v20 = exp2(v19);
    float v21 = (v13 + v20);
    v13 = v21;
  }
  b0[v3] = v13;
}
