#include <metal_stdlib>
using namespace metal;
static inline ushort tg_f2bf(float f) {
  uint b = as_type<uint>(f);
  if ((b & 0x7fffffffu) > 0x7f800000u) return ushort((b >> 16) | 0x40u);
  return ushort((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}
static inline float tg_bf2f(uint b) { return as_type<float>(b << 16); }
kernel void tg_kernel_r_5_31(device ushort* b0 [[buffer(0)]], device ushort* b1 [[buffer(1)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  float v9;
  int v3 = ((int)tg_local.x);
  int v6 = ((int)((((uint)(((int)tg_local.x))) * ((uint)(31)))));
  v9 = 0.0f;
  for (int v10 = 0; v10 < 31; v10++) {
    int v11 = ((int)((((uint)(v6)) + ((uint)(v10)))));
    int v12 = v11;
    float v13 = tg_bf2f(((uint)(b1[v12])));
    float v14 = v13;
    float v15 = (v9 + v14);
    v9 = v15;
  }
  float v18 = tg_bf2f(tg_f2bf(v9));
  b0[v3] = tg_f2bf(v18);
}
