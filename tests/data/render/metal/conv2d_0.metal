#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_E_3_3_3_4(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  int v4 = ((int)((((uint)(((int)tg_group.x))) * ((uint)(36)))));
  int v7 = ((int)((((uint)(((int)tg_local.z))) * ((uint)(12)))));
  int v8 = ((int)((((uint)(v4)) + ((uint)(v7)))));
  int v11 = ((int)((((uint)(((int)tg_local.y))) * ((uint)(4)))));
  int v12 = ((int)((((uint)(v8)) + ((uint)(v11)))));
  int v14 = ((int)((((uint)(v12)) + ((uint)(((int)tg_local.x))))));
  int v15 = v14;
  int v18 = ((int)((((uint)(((int)tg_group.x))) * ((uint)(9)))));
  int v19 = ((int)((((uint)(((int)tg_local.z))) * ((uint)(3)))));
  int v20 = ((int)((((uint)(v18)) + ((uint)(v19)))));
  int v21 = ((int)((((uint)(v20)) + ((uint)(((int)tg_local.y))))));
  int v23 = ((int)((((uint)(((int)tg_local.x))) * ((uint)(27)))));
  int v24 = ((int)((((uint)(v21)) + ((uint)(v23)))));
  int v25 = v24;
  float v26 = b1[v25];
  b0[v15] = v26;
}
