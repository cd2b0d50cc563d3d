#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_r_64_64(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  float v19;
  float v20;
  float v21;
  float v22;
  int v4 = ((int)((((uint)(((int)tg_local.x))) * ((uint)(4)))));
  int v5 = v4;
  int v11 = ((int)((((uint)(v4)) + ((uint)(1)))));
  int v12 = v11;
  int v14 = ((int)((((uint)(v4)) + ((uint)(2)))));
  int v15 = v14;
  int v17 = ((int)((((uint)(v4)) + ((uint)(3)))));
  v19 = 0.0f;
  v20 = 0.0f;
  v21 = 0.0f;
  v22 = 0.0f;
  for (int v23 = 0; v23 < 64; v23++) {
    int v24 = v23;
    float v25 = b1[v24];
    bool v26 = (v4 < v23);
    bool v27 = (v26 != true);
    float v28 = (v27 ? 1.0f : 0.0f);
    bool v29 = (v11 < v23);
    bool v30 = (v29 != true);
    float v31 = (v30 ? 1.0f : 0.0f);
    bool v32 = (v14 < v23);
    bool v33 = (v32 != true);
    float v34 = (v33 ? 1.0f : 0.0f);
    bool v35 = (v17 < v23);
    bool v36 = (v35 != true);
    float v37 = (v36 ? 1.0f : 0.0f);
    float v38 = (v25 * v28 + v19);
    v19 = v38;
    float v40 = (v25 * v31 + v20);
    v20 = v40;
    float v42 = (v25 * v34 + v21);
    v21 = v42;
    float v44 = (v25 * v37 + v22);
    v22 = v44;
  }
  b0[v5] = v19;
  b0[v12] = v20;
  b0[v15] = v21;
  int v50 = v17;
  b0[v50] = v22;
}
