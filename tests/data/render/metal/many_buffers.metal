#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_E_100(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], device float* b2 [[buffer(2)]], device float* b3 [[buffer(3)]], device float* b4 [[buffer(4)]], device float* b5 [[buffer(5)]], device float* b6 [[buffer(6)]], device float* b7 [[buffer(7)]], device float* b8 [[buffer(8)]], device float* b9 [[buffer(9)]], device float* b10 [[buffer(10)]], device float* b11 [[buffer(11)]], device float* b12 [[buffer(12)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  for (int v25 = 0; v25 < 100; v25++) {
    int v26 = v25;
    int v27 = v25;
    float v28 = b1[v27];
    int v29 = v25;
    float v30 = b2[v29];
    float v31 = (v28 + v30);
    int v32 = v25;
    float v33 = b3[v32];
    float v34 = (v33 * 2.0f);
    float v35 = (v31 + v34);
    int v36 = v25;
    float v37 = b4[v36];
    float v38 = (v37 * 3.0f);
    float v39 = (v35 + v38);
    int v40 = v25;
    float v41 = b5[v40];
    float v42 = (v41 * 4.0f);
    float v43 = (v39 + v42);
    int v44 = v25;
    float v45 = b6[v44];
    float v46 = (v45 * 5.0f);
    float v47 = (v43 + v46);
    int v48 = v25;
    float v49 = b7[v48];
    float v50 = (v49 * 6.0f);
    float v51 = (v47 + v50);
    int v52 = v25;
    float v53 = b8[v52];
    float v54 = (v53 * 7.0f);
    float v55 = (v51 + v54);
    int v56 = v25;
    float v57 = b9[v56];
    float v58 = (v57 * 8.0f);
    float v59 = (v55 + v58);
    int v60 = v25;
    float v61 = b10[v60];
    float v62 = (v61 * 9.0f);
    float v63 = (v59 + v62);
    int v64 = v25;
    float v65 = b11[v64];
    float v66 = (v65 * 10.0f);
    float v67 = (v63 + v66);
    int v68 = v25;
    float v69 = b12[v68];
    float v70 = (v69 * 11.0f);
    float v71 = (v67 + v70);
    b0[v26] = v71;
  }
}
