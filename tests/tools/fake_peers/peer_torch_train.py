# A stand-in for tools/bench/peer_torch_train.py, run by /bin/sh (tests/tools/CMakeLists.txt,
# tg_cli_bench_train_peer_dir): `tg bench train` must find it through $TG_BENCH_PEER_DIR and
# read the last JSON line.
echo '{"step_ms": 1000, "peak_rss_mb": 1}'
echo '{"step_ms": 2.5, "peak_rss_mb": 42.0, "torch": "fake-peer"}'
