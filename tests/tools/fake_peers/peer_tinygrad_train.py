# A stand-in for tools/bench/peer_tinygrad_train.py, run by fake_tinygrad_python (tests/tools/CMakeLists.txt,
# tg_cli_bench_train_tinygrad_*), called as `--bs N --steps S --device D`: it reports batch N, or
# $FAKE_BS when set (`tg bench train` must then refuse the figure).
echo "{\"step_ms\": 4.0, \"peak_rss_mb\": 7.0, \"bs\": ${FAKE_BS:-$2}, \"device\": \"$6\"}"
