#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_E_333(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], device float* b2 [[buffer(2)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  for (int v8 = 0; v8 < 333; v8++) {
    int v9 = v8;
    int v10 = v8;
    float v11 = b1[v10];
    float v12 = exp2(v11);
    float v13 = sin(v11);
    float v14 = (v12 + v13);
    int v15 = v8;
    float v16 = b2[v15];
    bool v17 = (v16 < 0.0f);
    float v18 = (-v16);
    float v19 = (v17 ? v18 : v16);
    float v20 = sqrt(v19);
    float v21 = (v14 + v20);
    float v22 = (v19 + 1.0f);
    float v23 = log2(v22);
    float v24 = (v21 + v23);
    float v25 = (v19 + 0.5f);
    float v26 = (1.0f / v25);
    float v27 = (v24 + v26);
    b0[v9] = v27;
  }
}
