#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_E_128(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], device float* b2 [[buffer(2)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  for (int v6 = 0; v6 < 128; v6++) {
    int v7 = v6;
    int v8 = v6;
    float v9 = b1[v8];
    int v10 = v6;
    float v11 = b2[v10];
    bool v12 = (v9 < v11);
    float v13 = (v11 * 2.0f);
    float v14 = (v12 ? v9 : v13);
    b0[v7] = v14;
  }
}
