#include <metal_stdlib>
using namespace metal;
static inline ushort tg_f2bf(float f) {
  uint b = as_type<uint>(f);
  if ((b & 0x7fffffffu) > 0x7f800000u) return ushort((b >> 16) | 0x40u);
  return ushort((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}
static inline float tg_bf2f(uint b) { return as_type<float>(b << 16); }
kernel void tg_kernel_E_67(device float* b0 [[buffer(0)]], device ushort* b1 [[buffer(1)]], device ushort* b2 [[buffer(2)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  int v3 = ((int)tg_local.x);
  int v5 = ((int)tg_local.x);
  float v6 = tg_bf2f(((uint)(b1[v5])));
  int v8 = ((int)tg_local.x);
  float v9 = tg_bf2f(((uint)(b2[v8])));
  float v10 = tg_bf2f(tg_f2bf((v6 * v9)));
  float v11 = tg_bf2f(tg_f2bf((v10 + v6)));
  float v12 = (v11 != v11 ? v11 : (v11 > v9 ? v11 : v9));
  float v13 = v12;
  b0[v3] = v13;
}
