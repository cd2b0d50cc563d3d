#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_E_67(device float* b0 [[buffer(0)]], device uchar* b1 [[buffer(1)]], device uchar* b2 [[buffer(2)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  int v3 = ((int)tg_local.x);
  int v5 = ((int)tg_local.x);
  bool v6 = (b1[v5] != ((uchar)(0)));
  int v8 = ((int)tg_local.x);
  bool v9 = (b2[v8] != ((uchar)(0)));
  bool v10 = (v6 && v9);
  bool v11 = (v6 != v9);
  bool v12 = (v10 || v11);
  float v13 = (v12 ? 1.0f : 0.0f);
  b0[v3] = v13;
}
