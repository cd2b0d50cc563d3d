// refused: render.metal: kernel 'render_control_scalars' instruction 2 (DEFINE_GLOBAL float64): Metal has no float64
