#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_E_67(device float* b0 [[buffer(0)]], device uchar* b1 [[buffer(1)]], device uchar* b2 [[buffer(2)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  for (int v5 = 0; v5 < 67; v5++) {
    int v6 = v5;
    int v7 = v5;
    bool v8 = (b1[v7] != ((uchar)(0)));
    int v9 = v5;
    bool v10 = (b2[v9] != ((uchar)(0)));
    bool v11 = (v8 && v10);
    bool v12 = (v8 != v10);
    bool v13 = (v11 || v12);
    float v14 = (v13 ? 1.0f : 0.0f);
    b0[v6] = v14;
  }
}
