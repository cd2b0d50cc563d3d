# A stand-in for tools/bench/peer_torch_gpu.py, run by /bin/sh (tests/tools/CMakeLists.txt,
# tg_cli_bench_gpu_peer_dir): `tg bench gpu` must find it through $TG_BENCH_PEER_DIR.
echo "the real peer prints its progress first"
echo '{"torch_version": "fake-peer", "device": "a test double", "tiny_ms": 0.5, "tiny_shape": "16"}'
