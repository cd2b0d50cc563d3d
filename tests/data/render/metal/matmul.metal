#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_r_64_32_48(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], device float* b2 [[buffer(2)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  float v33;
  float v34;
  float v35;
  float v36;
  int v4 = ((int)((((uint)(((int)tg_group.x))) * ((uint)(1024)))));
  int v8 = ((int)((((uint)(((int)tg_local.y))) * ((uint)(128)))));
  int v9 = ((int)((((uint)(v4)) + ((uint)(v8)))));
  int v12 = ((int)((((uint)(v9)) + ((uint)(((int)tg_local.x))))));
  int v13 = v12;
  int v16 = ((int)((((uint)(((int)tg_group.x))) * ((uint)(1536)))));
  int v18 = ((int)((((uint)(((int)tg_local.y))) * ((uint)(192)))));
  int v19 = ((int)((((uint)(v16)) + ((uint)(v18)))));
  int v23 = ((int)((((uint)(v12)) + ((uint)(32)))));
  int v24 = v23;
  int v26 = ((int)((((uint)(v12)) + ((uint)(64)))));
  int v27 = v26;
  int v29 = ((int)((((uint)(v12)) + ((uint)(96)))));
  int v30 = v29;
  v33 = 0.0f;
  v34 = 0.0f;
  v35 = 0.0f;
  v36 = 0.0f;
  for (int v37 = 0; v37 < 48; v37++) {
    int v38 = ((int)((((uint)(v19)) + ((uint)(v37)))));
    int v39 = v38;
    float v40 = b1[v39];
    int v41 = ((int)((((uint)(v37)) * ((uint)(32)))));
    int v42 = ((int)((((uint)(((int)tg_local.x))) + ((uint)(v41)))));
    int v43 = v42;
    float v44 = b2[v43];
    int v45 = ((int)((((uint)(v38)) + ((uint)(48)))));
    int v46 = v45;
    float v47 = b1[v46];
    int v48 = ((int)((((uint)(v38)) + ((uint)(96)))));
    int v49 = v48;
    float v50 = b1[v49];
    int v51 = ((int)((((uint)(v38)) + ((uint)(144)))));
    int v52 = v51;
    float v53 = b1[v52];
    float v54 = (v40 * v44 + v33);
    v33 = v54;
    float v56 = (v47 * v44 + v34);
    v34 = v56;
    float v58 = (v50 * v44 + v35);
    v35 = v58;
    float v60 = (v53 * v44 + v36);
    v36 = v60;
  }
  b0[v13] = v33;
  b0[v24] = v34;
  b0[v27] = v35;
  b0[v30] = v36;
}
