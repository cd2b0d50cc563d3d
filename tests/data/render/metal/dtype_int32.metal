#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_E_67(device float* b0 [[buffer(0)]], device int* b1 [[buffer(1)]], device int* b2 [[buffer(2)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  int v3 = ((int)tg_local.x);
  int v5 = ((int)tg_local.x);
  int v6 = b1[v5];
  int v8 = ((int)tg_local.x);
  int v9 = b2[v8];
  int v10 = ((int)((((uint)(v6)) * ((uint)(v9)))));
  int v11 = ((int)((((uint)(v10)) + ((uint)(v6)))));
  int v12 = (v11 > v9 ? v11 : v9);
  float v13 = ((float)(v12));
  b0[v3] = v13;
}
