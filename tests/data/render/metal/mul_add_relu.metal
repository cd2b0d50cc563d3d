#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_E_257(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], device float* b2 [[buffer(2)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  for (int v6 = 0; v6 < 257; v6++) {
    int v7 = v6;
    int v8 = v6;
    float v9 = b1[v8];
    int v10 = v6;
    float v11 = b2[v10];
    float v12 = (v9 * v11);
    float v13 = (v12 + v9);
    bool v14 = (0.0f < v13);
    float v15 = (v14 ? v13 : 0.0f);
    b0[v7] = v15;
  }
}
