#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_E_13_13(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  int v3 = ((int)((((uint)(((int)tg_group.x))) * ((uint)(13)))));
  int v7 = ((int)((((uint)(((int)tg_group.x))) * ((uint)(10)))));
  bool v9 = (0 < ((int)tg_group.x));
  bool v11 = (((int)tg_group.x) < 11);
  bool v12 = (v9 && v11);
  for (int v16 = 0; v16 < 13; v16++) {
    int v17 = ((int)((((uint)(v3)) + ((uint)(v16)))));
    int v18 = v17;
    int v19 = ((int)((((uint)(v7)) + ((uint)(v16)))));
    int v20 = ((int)((((uint)(v19)) + ((uint)((-13))))));
    int v21 = v20;
    bool v22 = (2 < v16);
    bool v23 = (v12 && v22);
    float v24 = 0.0f;
    if (v23) v24 = b1[v21];
    float v25 = (v24 + 1.0f);
    b0[v18] = v25;
  }
}
