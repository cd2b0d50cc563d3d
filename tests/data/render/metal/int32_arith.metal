#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_E_200(device int* b0 [[buffer(0)]], device int* b1 [[buffer(1)]], device int* b2 [[buffer(2)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  int v3 = ((int)tg_local.x);
  int v5 = ((int)tg_local.x);
  int v6 = b1[v5];
  int v8 = ((int)tg_local.x);
  int v9 = b2[v8];
  int v10 = (v6 / v9);
  int v11 = (v6 % v9);
  int v12 = ((int)((((uint)(v10)) + ((uint)(v11)))));
  int v13 = (v6 ^ v9);
  int v14 = ((int)((((uint)(v12)) + ((uint)(v13)))));
  int v16 = ((int)((((uint)(v6)) << ((uint)((2 & 31))))));
  int v17 = ((int)((((uint)(v14)) + ((uint)(v16)))));
  int v19 = (v9 >> (1 & 31));
  int v20 = ((int)((((uint)(v17)) + ((uint)(v19)))));
  int v21 = ((int)((((uint)(v6)) * ((uint)(v9)))));
  int v23 = ((int)((((uint)(v21)) * ((uint)((-1))))));
  int v24 = ((int)((((uint)(v20)) + ((uint)(v23)))));
  b0[v3] = v24;
}
