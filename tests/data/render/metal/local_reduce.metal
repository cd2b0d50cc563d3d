#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_local_reduce(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  threadgroup float l2[16];
  float v17;
  int v6 = ((int)((((uint)(((int)tg_group.x))) * ((uint)(16)))));
  int v7 = ((int)((((uint)(v6)) + ((uint)(((int)tg_local.x))))));
  int v8 = v7;
  float v9 = b1[v8];
  int v10 = ((int)tg_local.x);
  l2[v10] = v9;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  bool v14 = (((int)tg_local.x) == 0);
  if (v14) {
    v17 = 0.0f;
    for (int v20 = 0; v20 < 16; v20++) {
      int v21 = v20;
      float v22 = l2[v21];
      float v23 = (v17 + v22);
      v17 = v23;
    }
    int v26 = ((int)tg_group.x);
    b0[v26] = v17;
  }
}
