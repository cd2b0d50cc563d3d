#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_r_5_31(device int* b0 [[buffer(0)]], device int* b1 [[buffer(1)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  int v8;
  int v3 = ((int)tg_local.x);
  int v6 = ((int)((((uint)(((int)tg_local.x))) * ((uint)(31)))));
  v8 = 0;
  for (int v9 = 0; v9 < 31; v9++) {
    int v10 = ((int)((((uint)(v6)) + ((uint)(v9)))));
    int v11 = v10;
    int v12 = b1[v11];
    int v13 = ((int)((((uint)(v8)) + ((uint)(v12)))));
    v8 = v13;
  }
  b0[v3] = v8;
}
