#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_E_64_48(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], device float* b2 [[buffer(2)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  int v4 = ((int)((((uint)(((int)tg_group.x))) * ((uint)(48)))));
  int v7 = ((int)tg_group.x);
  float v8 = b1[v7];
  for (int v10 = 0; v10 < 48; v10++) {
    int v11 = ((int)((((uint)(v4)) + ((uint)(v10)))));
    int v12 = v11;
    int v13 = v10;
    float v14 = b2[v13];
    float v15 = (v8 + v14);
    b0[v12] = v15;
  }
}
