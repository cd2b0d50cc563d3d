# A stand-in for tools/bench/peer_torch.py, run by /bin/sh (tests/tools/bench_peer_runs.cmake): it
# counts its processes in $FAKE_PEER_COUNT_DIR/peer_torch and answers each with other figures, so
# `tg bench core` and `tg bench ops --beam` must start it --peer-runs times and report the spread:
# matmul 1024 40 / 20 / 30 ms (max exactly 2x min: no warning), conv 30 / 90 / 45 ms (over 2x).
count="$FAKE_PEER_COUNT_DIR/peer_torch"
n=$(( $(cat "$count" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$count"
case $n in
  1) mm=40 conv=30 ;;
  2) mm=20 conv=90 ;;
  *) mm=30 conv=45 ;;
esac
echo "{\"torch_version\": \"fake-torch\", \"threads\": 2, \"mkldnn\": \"True\", \"malloc\": \"kept\", \"matmul1024_ms\": $mm, \"matmul2048_ms\": 400, \"elementwise_ms\": 100, \"sum_ms\": 50, \"conv_ms\": $conv, \"dispatch_us\": 5, \"dispatch_out_us\": 4, \"cold_ms\": 900, \"cold_wall_ms\": 1000}"
