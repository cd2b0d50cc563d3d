#include <metal_stdlib>
using namespace metal;
kernel void tg_kernel_r_2_4_10_10_27(device float* b0 [[buffer(0)]], device float* b1 [[buffer(1)]], device float* b2 [[buffer(2)]], device float* b3 [[buffer(3)]], uint3 tg_group [[threadgroup_position_in_grid]], uint3 tg_local [[thread_position_in_threadgroup]]) {
  float v35;
  int v4 = (((int)tg_group.x) / 2);
  int v6 = ((int)((((uint)(v4)) * ((uint)(400)))));
  int v7 = (((int)tg_group.x) % 2);
  int v9 = ((int)((((uint)(v7)) * ((uint)(200)))));
  int v12 = ((int)((((uint)(((int)tg_local.z))) * ((uint)(100)))));
  int v13 = ((int)((((uint)(v9)) + ((uint)(v12)))));
  int v14 = ((int)((((uint)(v6)) + ((uint)(v13)))));
  int v17 = ((int)((((uint)(((int)tg_local.y))) * ((uint)(10)))));
  int v18 = ((int)((((uint)(v14)) + ((uint)(v17)))));
  int v20 = ((int)((((uint)(v18)) + ((uint)(((int)tg_local.x))))));
  int v21 = v20;
  int v24 = ((int)((((uint)(v4)) * ((uint)(300)))));
  int v31 = ((int)((((uint)(v7)) * ((uint)(2)))));
  int v32 = ((int)((((uint)(v31)) + ((uint)(((int)tg_local.z))))));
  v35 = 0.0f;
  for (int v36 = 0; v36 < 3; v36++) {
    int v37 = ((int)((((uint)(v36)) * ((uint)(100)))));
    int v38 = ((int)((((uint)(v24)) + ((uint)(v37)))));
    int v39 = ((int)((((uint)(v38)) + ((uint)(v17)))));
    int v40 = ((int)((((uint)(v36)) * ((uint)(36)))));
    int v41 = ((int)((((uint)(v32)) + ((uint)(v40)))));
    for (int v42 = 0; v42 < 3; v42++) {
      int v43 = ((int)((((uint)(v42)) * ((uint)(10)))));
      int v44 = ((int)((((uint)(v39)) + ((uint)(v43)))));
      int v45 = ((int)((((uint)(v44)) + ((uint)(((int)tg_local.x))))));
      int v46 = ((int)((((uint)(((int)tg_local.y))) + ((uint)(v42)))));
      bool v47 = (0 < v46);
      bool v48 = (v46 < 11);
      bool v49 = (v47 && v48);
      int v50 = ((int)((((uint)(v42)) * ((uint)(12)))));
      int v51 = ((int)((((uint)(v41)) + ((uint)(v50)))));
      for (int v52 = 0; v52 < 3; v52++) {
        int v53 = ((int)((((uint)(v45)) + ((uint)(v52)))));
        int v54 = ((int)((((uint)(v53)) + ((uint)((-11))))));
        int v55 = v54;
        int v56 = ((int)((((uint)(((int)tg_local.x))) + ((uint)(v52)))));
        bool v57 = (0 < v56);
        bool v58 = (v49 && v57);
        bool v59 = (v56 < 11);
        bool v60 = (v58 && v59);
        float v61 = 0.0f;
        if (v60) v61 = b1[v55];
        int v62 = ((int)((((uint)(v52)) * ((uint)(4)))));
        int v63 = ((int)((((uint)(v51)) + ((uint)(v62)))));
        int v64 = v63;
        float v65 = b2[v64];
        float v66 = (v61 * v65 + v35);
        v35 = v66;
      }
    }
  }
  int v72 = v32;
  float v73 = b3[v72];
  float v74 = (v35 + v73);
  b0[v21] = v74;
}
