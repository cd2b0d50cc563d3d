#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_E_64_48(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], device float* b2 [[buffer(2)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  int v4 = ((int)((((uint)(((int)tg_group.x))) * ((uint)(192)))));
  int v8 = ((int)((((uint)(((int)tg_local.y))) * ((uint)(48)))));
  int v9 = ((int)((((uint)(v4)) + ((uint)(v8)))));
  int v11 = ((int)((((uint)(v9)) + ((uint)(((int)tg_local.x))))));
  int v12 = v11;
  int v14 = ((int)((((uint)(((int)tg_group.x))) * ((uint)(4)))));
  int v15 = ((int)((((uint)(v14)) + ((uint)(((int)tg_local.y))))));
  int v16 = v15;
  float v17 = b1[v16];
  int v19 = ((int)tg_local.x);
  float v20 = b2[v19];
  float v21 = (v17 + v20);
  b0[v12] = v21;
}
