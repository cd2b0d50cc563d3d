# A stand-in for tools/bench/peer_tinygrad_gpu.py, run by fake_tinygrad_python (tests/tools/CMakeLists.txt,
# tg_cli_bench_gpu_tinygrad_*): `tg bench gpu` must show its tiny op as a column with its ratio, or
# no ratio when the shape it reports ($FAKE_TINY_SHAPE) is not ours (16).
echo "the real peer may print its own lines first"
echo "{\"tinygrad_version\": \"fake-tinygrad\", \"device\": \"CUDA\", \"device_name\": \"a test double\", \"allow_tf32\": 0, \"tiny_ms\": 0.25, \"tiny_shape\": \"${FAKE_TINY_SHAPE:-16}\", \"tiny_eager_ms\": 1.0, \"tiny_eager_shape\": \"16\"}"
