#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_r_33_9_17(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], device float* b2 [[buffer(2)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  float v22;
  int v4 = ((int)((((uint)(((int)tg_group.x))) * ((uint)(99)))));
  int v8 = ((int)((((uint)(((int)tg_local.y))) * ((uint)(9)))));
  int v9 = ((int)((((uint)(v4)) + ((uint)(v8)))));
  int v11 = ((int)((((uint)(v9)) + ((uint)(((int)tg_local.x))))));
  int v12 = v11;
  int v15 = ((int)((((uint)(((int)tg_group.x))) * ((uint)(187)))));
  int v17 = ((int)((((uint)(((int)tg_local.y))) * ((uint)(17)))));
  int v18 = ((int)((((uint)(v15)) + ((uint)(v17)))));
  v22 = 0.0f;
  for (int v23 = 0; v23 < 17; v23++) {
    int v24 = ((int)((((uint)(v18)) + ((uint)(v23)))));
    int v25 = v24;
    float v26 = b1[v25];
    int v27 = ((int)((((uint)(v23)) * ((uint)(9)))));
    int v28 = ((int)((((uint)(((int)tg_local.x))) + ((uint)(v27)))));
    int v29 = v28;
    float v30 = b2[v29];
    float v31 = (v26 * v30 + v22);
    v22 = v31;
  }
  b0[v12] = v22;
}
