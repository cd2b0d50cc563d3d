#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_r_4096(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  threadgroup float l3[256];
  float v10;
  float v21;
  int v2 = 0;
  int v6 = ((int)tg_local.x);
  v10 = 0.0f;
  for (int v11 = 0; v11 < 16; v11++) {
    int v12 = ((int)((((uint)(v11)) * ((uint)(256)))));
    int v13 = ((int)((((uint)(v12)) + ((uint)(((int)tg_local.x))))));
    int v14 = v13;
    float v15 = b1[v14];
    float v16 = (v10 + v15);
    v10 = v16;
  }
  l3[v6] = v10;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  v21 = 0.0f;
  for (int v22 = 0; v22 < 256; v22++) {
    int v23 = v22;
    float v24 = l3[v23];
    float v25 = (v21 + v24);
    v21 = v25;
  }
  bool v28 = (((int)tg_local.x) == 0);
  if (v28) b0[v2] = v21;
}
