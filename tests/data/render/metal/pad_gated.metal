#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_E_13_13(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  int v3 = ((int)((((uint)(((int)tg_local.y))) * ((uint)(13)))));
  int v5 = ((int)((((uint)(v3)) + ((uint)(((int)tg_local.x))))));
  int v6 = v5;
  int v9 = ((int)((((uint)(((int)tg_local.y))) * ((uint)(10)))));
  int v10 = ((int)((((uint)(v9)) + ((uint)(((int)tg_local.x))))));
  int v12 = ((int)((((uint)(v10)) + ((uint)((-13))))));
  int v13 = v12;
  bool v15 = (0 < ((int)tg_local.y));
  bool v17 = (((int)tg_local.y) < 11);
  bool v18 = (v15 && v17);
  bool v20 = (2 < ((int)tg_local.x));
  bool v21 = (v18 && v20);
  float v23 = 0.0f;
  if (v21) v23 = b1[v13];
  float v25 = (v23 + 1.0f);
  b0[v6] = v25;
}
