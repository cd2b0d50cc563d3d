// refused: render.metal: kernel 'r_5_31' instruction 0 (DEFINE_GLOBAL float64): Metal has no float64
