// refused: render.metal: kernel 'E_67' instruction 3 (DEFINE_GLOBAL float64): Metal has no float64
