#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_r_1_2_4_4_4(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  float v22;
  int v4 = ((int)((((uint)(((int)tg_local.z))) * ((uint)(16)))));
  int v7 = ((int)((((uint)(((int)tg_local.y))) * ((uint)(4)))));
  int v8 = ((int)((((uint)(v4)) + ((uint)(v7)))));
  int v10 = ((int)((((uint)(v8)) + ((uint)(((int)tg_local.x))))));
  int v11 = v10;
  int v14 = ((int)((((uint)(((int)tg_local.z))) * ((uint)(64)))));
  int v15 = ((int)((((uint)(((int)tg_local.y))) * ((uint)(16)))));
  int v16 = ((int)((((uint)(v14)) + ((uint)(v15)))));
  int v17 = ((int)((((uint)(((int)tg_local.x))) * ((uint)(2)))));
  int v18 = ((int)((((uint)(v16)) + ((uint)(v17)))));
  v22 = (-INFINITY);
  for (int v23 = 0; v23 < 2; v23++) {
    int v24 = ((int)((((uint)(v23)) * ((uint)(8)))));
    int v25 = ((int)((((uint)(v18)) + ((uint)(v24)))));
    for (int v26 = 0; v26 < 2; v26++) {
      int v27 = ((int)((((uint)(v25)) + ((uint)(v26)))));
      int v28 = v27;
      float v29 = b1[v28];
      float v30 = (v22 != v22 ? v22 : (v22 > v29 ? v22 : v29));
      v22 = v30;
    }
  }
  b0[v11] = v22;
}
