#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_E_200(device int* b0 [[buffer(0)]], device int* b1 [[buffer(1)]], device int* b2 [[buffer(2)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  for (int v8 = 0; v8 < 200; v8++) {
    int v9 = v8;
    int v10 = v8;
    int v11 = b1[v10];
    int v12 = v8;
    int v13 = b2[v12];
    int v14 = (v11 / v13);
    int v15 = (v11 % v13);
    int v16 = ((int)((((uint)(v14)) + ((uint)(v15)))));
    int v17 = (v11 ^ v13);
    int v18 = ((int)((((uint)(v16)) + ((uint)(v17)))));
    int v19 = ((int)((((uint)(v11)) << ((uint)((2 & 31))))));
    int v20 = ((int)((((uint)(v18)) + ((uint)(v19)))));
    int v21 = (v13 >> (1 & 31));
    int v22 = ((int)((((uint)(v20)) + ((uint)(v21)))));
    int v23 = ((int)((((uint)(v11)) * ((uint)(v13)))));
    int v24 = ((int)((((uint)(v23)) * ((uint)((-1))))));
    int v25 = ((int)((((uint)(v22)) + ((uint)(v24)))));
    b0[v9] = v25;
  }
}
