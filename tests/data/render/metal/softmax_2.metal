#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_E_16_50(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], device float* b2 [[buffer(2)]], device float* b3 [[buffer(3)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  int v4 = ((int)((((uint)(((int)tg_group.x))) * ((uint)(200)))));
  int v7 = ((int)((((uint)(((int)tg_local.y))) * ((uint)(50)))));
  int v8 = ((int)((((uint)(v4)) + ((uint)(v7)))));
  int v10 = ((int)((((uint)(v8)) + ((uint)(((int)tg_local.x))))));
  int v11 = v10;
  int v13 = v10;
  float v14 = b1[v13];
  int v16 = ((int)((((uint)(((int)tg_group.x))) * ((uint)(4)))));
  int v17 = ((int)((((uint)(v16)) + ((uint)(((int)tg_local.y))))));
  int v18 = v17;
  float v19 = b2[v18];
  float v20 = (v14 - v19);
  float v22 = (v20 * 1.44269502f);
  float v23 = exp2(v22);
  int v25 = v17;
  float v26 = b3[v25];
  float v27 = (v23 / v26);
  b0[v11] = v27;
}
