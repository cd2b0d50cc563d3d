#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_E_67(device float* b0 [[buffer(0)]], device int* b1 [[buffer(1)]], device int* b2 [[buffer(2)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  for (int v5 = 0; v5 < 67; v5++) {
    int v6 = v5;
    int v7 = v5;
    int v8 = b1[v7];
    int v9 = v5;
    int v10 = b2[v9];
    int v11 = ((int)((((uint)(v8)) * ((uint)(v10)))));
    int v12 = ((int)((((uint)(v11)) + ((uint)(v8)))));
    int v13 = (v12 > v10 ? v12 : v10);
    float v14 = ((float)(v13));
    b0[v6] = v14;
  }
}
