#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_E_67(device float* b0 [[buffer(0)]], device uchar* b1 [[buffer(1)]], device uchar* b2 [[buffer(2)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  for (int v5 = 0; v5 < 67; v5++) {
    int v6 = v5;
    int v7 = v5;
    uchar v8 = b1[v7];
    int v9 = v5;
    uchar v10 = b2[v9];
    uchar v11 = ((uchar)((((uint)(v8)) * ((uint)(v10)))));
    uchar v12 = ((uchar)((((uint)(v11)) + ((uint)(v8)))));
    uchar v13 = (v12 > v10 ? v12 : v10);
    float v14 = ((float)(v13));
    b0[v6] = v14;
  }
}
