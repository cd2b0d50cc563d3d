#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_empty_grid(device float* b0 [[buffer(0)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  int v3 = ((int)tg_group.x);
  b0[v3] = 42.0f;
}
