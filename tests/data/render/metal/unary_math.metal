#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_E_333(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], device float* b2 [[buffer(2)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  int v4 = ((int)((((uint)(((int)tg_group.x))) * ((uint)(111)))));
  int v6 = ((int)((((uint)(v4)) + ((uint)(((int)tg_local.x))))));
  int v7 = v6;
  int v9 = v6;
  float v10 = b1[v9];
  float v11 = exp2(v10);
  float v12 = sin(v10);
  float v13 = (v11 + v12);
  int v15 = v6;
  float v16 = b2[v15];
  bool v18 = (v16 < 0.0f);
  float v19 = (-v16);
  float v20 = (v18 ? v19 : v16);
  float v21 = sqrt(v20);
  float v22 = (v13 + v21);
  float v24 = (v20 + 1.0f);
  float v25 = log2(v24);
  float v26 = (v22 + v25);
  float v28 = (v20 + 0.5f);
  float v29 = (1.0f / v28);
  float v30 = (v26 + v29);
  b0[v7] = v30;
}
