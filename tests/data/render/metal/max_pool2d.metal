#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_r_1_2_4_4_4(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  float v25;
  int v4 = (((int)tg_group.x) / 16);
  int v5 = ((int)((((uint)(v4)) * ((uint)(16)))));
  int v7 = (((int)tg_group.x) / 4);
  int v8 = (v7 % 4);
  int v9 = ((int)((((uint)(v8)) * ((uint)(4)))));
  int v10 = ((int)((((uint)(v5)) + ((uint)(v9)))));
  int v11 = (((int)tg_group.x) % 4);
  int v12 = ((int)((((uint)(v10)) + ((uint)(v11)))));
  int v13 = v12;
  int v16 = ((int)((((uint)(v4)) * ((uint)(64)))));
  int v17 = ((int)((((uint)(v8)) * ((uint)(16)))));
  int v18 = ((int)((((uint)(v16)) + ((uint)(v17)))));
  int v20 = ((int)((((uint)(v11)) * ((uint)(2)))));
  int v21 = ((int)((((uint)(v18)) + ((uint)(v20)))));
  v25 = (-INFINITY);
  for (int v26 = 0; v26 < 2; v26++) {
    int v27 = ((int)((((uint)(v26)) * ((uint)(8)))));
    int v28 = ((int)((((uint)(v21)) + ((uint)(v27)))));
    for (int v29 = 0; v29 < 2; v29++) {
      int v30 = ((int)((((uint)(v28)) + ((uint)(v29)))));
      int v31 = v30;
      float v32 = b1[v31];
      float v33 = (v25 != v25 ? v25 : (v25 > v32 ? v25 : v32));
      v25 = v33;
    }
  }
  b0[v13] = v25;
}
