#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_grid_3d(device int* b0 [[buffer(0)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  int v6 = ((int)((((uint)(((int)tg_group.z))) * ((uint)(5)))));
  int v7 = ((int)((((uint)(v6)) + ((uint)(((int)tg_group.y))))));
  int v8 = ((int)((((uint)(v7)) * ((uint)(3)))));
  int v9 = ((int)((((uint)(v8)) + ((uint)(((int)tg_group.x))))));
  int v11 = ((int)((((uint)(((int)tg_group.z))) * ((uint)(100)))));
  int v13 = ((int)((((uint)(((int)tg_group.y))) * ((uint)(10)))));
  int v14 = ((int)((((uint)(((int)tg_group.x))) + ((uint)(v13)))));
  int v15 = ((int)((((uint)(v14)) + ((uint)(v11)))));
  int v16 = v9;
  b0[v16] = v15;
}
