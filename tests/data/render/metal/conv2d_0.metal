#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_E_3_3_3_4(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  int v4 = (((int)tg_group.x) / 9);
  int v6 = ((int)((((uint)(v4)) * ((uint)(36)))));
  int v8 = (((int)tg_group.x) / 3);
  int v9 = (v8 % 3);
  int v11 = ((int)((((uint)(v9)) * ((uint)(12)))));
  int v12 = ((int)((((uint)(v6)) + ((uint)(v11)))));
  int v13 = (((int)tg_group.x) % 3);
  int v15 = ((int)((((uint)(v13)) * ((uint)(4)))));
  int v16 = ((int)((((uint)(v12)) + ((uint)(v15)))));
  int v19 = ((int)((((uint)(v4)) * ((uint)(9)))));
  int v20 = ((int)((((uint)(v9)) * ((uint)(3)))));
  int v21 = ((int)((((uint)(v19)) + ((uint)(v20)))));
  int v22 = ((int)((((uint)(v21)) + ((uint)(v13)))));
  for (int v23 = 0; v23 < 4; v23++) {
    int v24 = ((int)((((uint)(v16)) + ((uint)(v23)))));
    int v25 = v24;
    int v26 = ((int)((((uint)(v23)) * ((uint)(27)))));
    int v27 = ((int)((((uint)(v22)) + ((uint)(v26)))));
    int v28 = v27;
    float v29 = b1[v28];
    b0[v25] = v29;
  }
}
