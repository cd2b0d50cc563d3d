// refused: render.metal: kernel 'render_bitcasts' instruction 4 (DEFINE_GLOBAL float64): Metal has no float64
