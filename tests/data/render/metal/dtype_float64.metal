// refused: render.metal: kernel 'E_67' instruction 4 (DEFINE_GLOBAL float64): Metal has no float64
