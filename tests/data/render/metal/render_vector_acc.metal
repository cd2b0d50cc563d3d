#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_render_vector_acc(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  float v5_0;
  float v5_1;
  float v5_2;
  float v5_3;
  v5_0 = 0.0f;
  v5_1 = 0.0f;
  v5_2 = 0.0f;
  v5_3 = 0.0f;
  for (int v8 = 0; v8 < 8; v8++) {
    int v10 = ((int)((((uint)(((int)tg_group.x))) * ((uint)(8)))));
    int v11 = ((int)((((uint)(v10)) + ((uint)(v8)))));
    int v13 = ((int)((((uint)(v11)) * ((uint)(4)))));
    int v14 = v13;
    float v15_0 = b1[v14];
    float v15_1 = b1[(v14 + 1)];
    float v15_2 = b1[(v14 + 2)];
    float v15_3 = b1[(v14 + 3)];
    float v18_0 = (v15_0 * 0.5f);
    float v18_1 = (v15_1 * 0.5f);
    float v18_2 = (v15_2 * 0.5f);
    float v18_3 = (v15_3 * 0.5f);
    float v19_0 = (v5_0 + v18_0);
    float v19_1 = (v5_1 + v18_1);
    float v19_2 = (v5_2 + v18_2);
    float v19_3 = (v5_3 + v18_3);
    v5_0 = v19_0;
    v5_1 = v19_1;
    v5_2 = v19_2;
    v5_3 = v19_3;
  }
  float v22 = v5_1;
  float v23 = v5_0;
  float v24 = v5_3;
  float v25 = v5_2;
  int v28 = ((int)((((uint)(((int)tg_group.x))) * ((uint)(4)))));
  int v29 = v28;
  b0[v29] = v22;
  b0[(v29 + 1)] = v23;
  b0[(v29 + 2)] = v24;
  b0[(v29 + 3)] = v25;
}
